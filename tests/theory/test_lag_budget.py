"""Certified lag budgets (``sl.budget``, :mod:`staleness_lab.theory.leontyev.budget`): wherever a
target is ``guaranteed`` no run of the workload under the scheduler the bound assumes, on any seed,
lags beyond the bound; ``min_tracks`` is the smallest track count that guarantees every target;
``blame`` is a smallest set of targets whose relaxing leaves the rest guaranteed; Theorem 1's slack
as the budget evaluates it equals the bounds module's."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.model import Table, Workload
from staleness_lab.theory.leontyev.bounds import tardiness_terms
from staleness_lab.theory.leontyev.budget import (GUARANTEED, base_task_set, bounds_at_slack, certify,
                                                  resolved_targets, slack_curve, task_set_at)
from staleness_lab.theory.records import within
from leontyev_strategies import leontyev_workloads


def with_targets(w: Workload, targets: list[float | str | None]) -> Workload:
    tables = tuple(dataclasses.replace(t, target_lag=g) for t, g in zip(w.tables, targets))
    return w.with_overrides(tables=tables)


@settings(max_examples=30, deadline=None)
@given(leontyev_workloads(replayed=True), st.sampled_from(["gedf-np", "aus"]), st.lists(st.integers(0, 10**6),
                                                                                      min_size=2, max_size=2))
def test_no_run_lags_beyond_a_guaranteed_bound(w: Workload, policy: str, seeds: list[int]):
    """Every table targets a lag no bound reaches, so each is guaranteed exactly where the bound's
    preconditions hold (tables with an outage, or over one, are not); on two more seeds than the
    workload's, every guaranteed table's worst lag stays within its bound."""
    w = with_targets(w, [10.0**6] * len(w.tables))
    result = sl.budget(w, policy=policy)
    guaranteed = {t.table: t.bound for t in result.certificate.tables if t.verdict == GUARANTEED}
    for t in result.certificate.tables:
        assert (t.verdict == GUARANTEED) is (not t.unmet), (t.table, t.unmet)
        if w.table(t.table).is_base and not w.table(t.table).outages and w.table(t.table).arrivals is None:
            assert t.verdict == GUARANTEED, (t.table, [p.to_dict() for p in t.preconditions])
    for seed in [w.seed, *seeds]:
        observed = sl.budget(w.with_overrides(seed=seed), policy=policy).observed
        for name, bound in guaranteed.items():
            assert within(observed[name], float(bound)), (seed, name, observed[name], float(bound))


@settings(max_examples=40, deadline=None)
@given(leontyev_workloads(outages=False, thresholds=False), st.sampled_from(["gedf-np", "aus"]))
def test_the_budget_slack_is_theorem_1s(w: Workload, policy: str):
    base = base_task_set(w, policy)
    assert base is not None
    slack = slack_curve(w, base, policy)
    for m in range(max(1, -(-base.U_sum.numerator // base.U_sum.denominator)), base.n + 4):
        assert slack(m) == tardiness_terms(task_set_at(w, base, policy, m), policy).slack


@settings(max_examples=40, deadline=None)
@given(leontyev_workloads(outages=False, thresholds=False), st.sampled_from(["gedf-np", "aus"]),
       st.lists(st.floats(1.0, 3.0), min_size=7, max_size=7))
def test_min_tracks_is_the_smallest(w: Workload, policy: str, scale: list[float]):
    """Targets a random factor above each table's bound on unlimited tracks: ``min_tracks`` is
    guaranteed and no smaller count is (checked one by one from 1)."""
    base = base_task_set(w, policy)
    limit = bounds_at_slack(base, Fraction(0))
    w = with_targets(w, [float(a) * f + 1e-6 for a, f in zip(limit, scale)])
    fewest = certify(w, policy).min_tracks
    assume(fewest is not None and fewest <= 200)
    assert all(t.verdict == GUARANTEED for t in certify(w.with_overrides(tracks=fewest), policy).tables)
    for m in range(1, fewest):
        assert any(t.verdict != GUARANTEED for t in certify(w.with_overrides(tracks=m), policy).tables), m


def test_min_tracks_is_none_when_a_target_is_below_the_unlimited_bound():
    w = Workload(tables=(Table("a", alpha=1, beta=0, period=10, target_lag=25),
                         Table("b", alpha=1, beta=0, period=10, target_lag=100)), tracks=1, horizon=50)
    c = certify(w)
    assert c.min_tracks is None and "unlimited tracks" in c.min_tracks_reason and "'a'" in c.min_tracks_reason
    assert [t.verdict for t in c.tables] == ["not guaranteed", GUARANTEED] and c.blame == ("a",)


def test_min_tracks_is_none_when_a_feed_is_unhealthy():
    w = Workload(tables=(Table("a", alpha=1, beta=0, period=10, target_lag=500, outages=((20, 60),)),), horizon=100)
    c = certify(w)
    assert c.min_tracks is None and "feed-healthy" in c.min_tracks_reason
    assert c.tables[0].verdict == "unknown" and c.tables[0].unmet == ["feed-healthy"]


@st.composite
def dag_targets(draw):
    """A strategy workload with two derived tables over it (a view with a ``downstream`` target and
    a view over that) and targets drawn around each table's bound."""
    w = draw(leontyev_workloads(outages=False, thresholds=False))
    w = w.with_overrides(tables=tuple(t for t in w.tables if t.is_base))
    names = [t.name for t in w.tables]
    first = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
    extra = (Table("V", alpha=0.01, beta=0.0, sources=tuple(first)), Table("W", alpha=0.01, beta=0.0, sources=("V",)))
    w = w.with_overrides(tables=(*w.tables, *extra))
    bounds = certify(with_targets(w, [10.0**6] * len(w.tables))).tables
    targets: list[float | str | None] = [draw(st.sampled_from([None, float(t.bound) * draw(st.floats(0.5, 1.5))]))
                                         for t in bounds]
    targets[-2] = draw(st.sampled_from([DOWNSTREAM_TARGET, float(bounds[-2].bound) * draw(st.floats(0.5, 1.5))]))
    targets[-1] = float(bounds[-1].bound) * draw(st.floats(0.5, 1.5))
    return with_targets(w, targets)


DOWNSTREAM_TARGET = "downstream"


def all_guaranteed(w: Workload, relaxed: frozenset[int]) -> bool:
    """Every target left after relaxing is guaranteed, judged by certifying the workload with the
    re-resolved targets written as numbers."""
    targets = resolved_targets(w, relaxed)
    if all(t is None for t in targets):
        return True
    return all(t.verdict == GUARANTEED for t in certify(with_targets(w, [None if t is None else float(t)
                                                                         for t in targets])).tables)


@settings(max_examples=40, deadline=None)
@given(dag_targets())
def test_blame_is_a_smallest_set(w: Workload):
    c = certify(w)
    if c.blame is None:
        assert all(t.verdict == GUARANTEED for t in c.tables)
        return
    blamed = frozenset(w.index[name] for name in c.blame)
    assert all_guaranteed(w, blamed)
    declared = [k for k, t in enumerate(w.tables) if t.target_lag is not None]
    for smaller in itertools.combinations(declared, len(blamed) - 1):
        assert not all_guaranteed(w, frozenset(smaller)), smaller
