"""Bateni et al.'s theorems as properties of simulated traces (digest Sec. 7, checks 1, 2, 4, 5, 7)
over random instances of the paper's model, preconditions included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.theory.bateni.bounds import LOAD_LIMIT
from staleness_lab.theory.bateni.eager import is_eager
from staleness_lab.theory.bateni.metrics import measures
from staleness_lab.theory.bateni.updates import table_updates
from staleness_lab.theory.records import equal, within
from tests.theory.strategies import bateni_workloads, quasiperiodic_workloads

EAGER = ["fifo", "myopic", "max-benefit", "random", "largest-first", "newest-first", "round-robin"]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def by_claim(report: sl.CheckReport) -> dict:
    return {r.claim: r for r in report.records}


def assert_trace_invariants(report: sl.CheckReport) -> None:
    """Check 1: no track or table runs overlapping batches; each table's batches are consecutive
    runs in order; each batch holds exactly the unprocessed updates released by its start;
    duration = beta * b; no batch starts before its last update's release."""
    trace = report.trace
    jobs = trace.jobs
    for _, group in jobs.groupby("track"):
        g = group.sort_values("start")
        assert (g["start"].to_numpy()[1:] >= g["finish"].to_numpy()[:-1] - 1e-12).all()
    for u, table in zip(table_updates(trace), trace.workload.tables):
        assert (u.start[1:] >= u.finish[:-1] - 1e-12).all()
        assert (u.data_from[1:] == u.batch_to[:-1]).all() and (u.data_from[:1] == table.initial_freshness).all()
        assert np.allclose(u.cost, table.beta * u.span, rtol=1e-12, atol=0)
        released = np.searchsorted(u.arrival, u.start, side="right") - 1  # last update released by the start
        assert (u.last == released).all(), "a batch must take every update released by its start"
        assert (u.arrival[u.last] <= u.start).all()


@pytest.mark.parametrize("policy", EAGER)
@SETTINGS
@given(data=bateni_workloads())
def test_eager_policies_meet_every_claim(policy: str, data: dict) -> None:
    """Checks 1, 2, 4 and 7: on every drained trace of an eager policy the invariants and the
    identities hold, the run is eager, and penalty <= R* LOW wherever Theorem 3.1 applies."""
    report = sl.check(data, policy)
    assert report.drained and report.X is not None
    assert_trace_invariants(report)
    assert is_eager(report.trace).eager
    records = by_claim(report)
    assert records["staleness-sandwich"].holds is True
    penalty = records["penalty-ratio"]
    x = penalty.terms["x"]
    assert penalty.preconditions_met == (x < LOAD_LIMIT and data["tracks"] <= len(data["tables"]))
    if penalty.preconditions_met:
        assert penalty.holds is True, (penalty.observed, penalty.bound)
    assert report.summary()["failed"] == 0
    for record in report.records:  # no record is decided with a precondition unmet
        if not record.preconditions_met:
            assert record.holds is None


@SETTINGS
@given(data=bateni_workloads(), power=st.integers(-3, 3))
def test_scaling_releases_scales_the_metrics_by_its_square(data: dict, power: int) -> None:
    """Check 5: multiplying every release by s = 2^k multiplies LOW, penalty, X and S* by s^2 and
    leaves stretches and ratios unchanged (powers of two keep the floats exact)."""
    s = 2.0**power
    scaled = {**data, "tables": [{**t, "arrivals": [a * s for a in t["arrivals"]]} for t in data["tables"]]}
    base = measures(sl.check(data, "fifo").trace)
    other = measures(sl.check(scaled, "fifo").trace)
    for name in ("LOW", "penalty", "X", "S_star"):
        assert equal(getattr(other, name), s * s * getattr(base, name)), name
    assert equal(other.max_stretch, base.max_stretch)


@SETTINGS
@given(data=bateni_workloads(max_load=0.35))
def test_sandwich_chain_and_identities_on_any_policy(data: dict) -> None:
    """Check 4 on the raw numbers: LOW/2 <= X <= S* <= penalty/2, X = S^H - tail per table,
    penalty/2 - S* = sum (f_{k-1} - a_{k-1})^2 / 2."""
    trace = sl.check(data, "max-benefit").trace
    m = measures(trace)
    assert within(m.LOW / 2, m.X) and within(m.X, m.S_star) and within(m.S_star, m.penalty / 2)
    for u, row in zip(table_updates(trace), m.tables.itertuples()):
        f_prev = np.concatenate([[0.0], u.finish[:-1]])
        a_prev = u.data_from
        assert equal(row.penalty / 2 - row.S_star, float(np.sum((f_prev - a_prev) ** 2)) / 2)
        assert equal(row.X, row.S_H - row.tail)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=quasiperiodic_workloads())
def test_group_and_run_meets_lemma_4_2_and_theorems_4_3_and_5_1(data: dict) -> None:
    """Checks 11 and 12: on quasiperiodic instances meeting the preconditions, every omega and
    theta <= B/6, stretch <= 1 + (1+7 alpha)/3 <= 2.625 < 3, X_w <= (16/9)(1+alpha)^2 wLOW/2 <= 4.5 wLOW/2."""
    report = sl.check(data, "group-and-run")
    records = report.records
    waits = [r for r in records if r.claim == "wait"]
    assert waits, "one wait record per group"
    by = by_claim(report)
    for claim in ("stretch", "stretch-derived", "weighted-staleness"):
        assert by[claim].preconditions_met, [p for p in by[claim].preconditions if not p.met]
        assert by[claim].holds is True, (claim, by[claim].observed, by[claim].bound)
    assert by["weighted-staleness"].terms["derived_holds"] is True
    for record in waits:
        if record.preconditions_met:
            assert record.holds is True, (record.terms, record.bound)


@SETTINGS
@given(data=bateni_workloads(max_load=0.35), min_delta=st.floats(0.5, 20))
def test_threshold_batching_is_not_eager_when_it_holds_back(data: dict, min_delta: float) -> None:
    """Check 2: the eager checker fails threshold batching whenever it holds a table back while
    a track idles, and never fails an eager policy (above); no claim needing eagerness is
    decided on a non-eager run."""
    report = sl.check(data, "threshold", options={"min_delta": min_delta})
    verdict = is_eager(report.trace)
    penalty = by_claim(report)["penalty-ratio"]
    assert [p.met for p in penalty.preconditions if p.name == "eager"] == [verdict.eager]
    if not verdict.eager:
        assert penalty.holds is None


def test_threshold_fails_the_eager_check_on_a_small_example() -> None:
    data = {"tracks": 1, "horizon": 10, "tables": [{"name": "a", "arrivals": [1, 2, 3], "alpha": 0, "beta": 0.1, "priority": 1}]}
    verdict = is_eager(sl.check(data, "threshold", options={"min_delta": 2.5}).trace)
    assert not verdict.eager and verdict.instant == 1 and verdict.available == ("a",)
