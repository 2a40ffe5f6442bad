"""The unlimited-track run in closed form (:mod:`staleness_lab.sim.ideal`) against the engine's.

A fuzz test over random workloads (periodic feeds with phases, replayed and compiled feeds,
derived views two levels deep listed in any file order, chopping, ``min_separation``, slowdown,
``variability`` or ``cost_noise``, warmup, seeds) asserts that :func:`ideal_summary` equals the
summary of the engine's :func:`ideal_run` exactly, float bits included, on both of its paths
(vectorized where it applies, and the per-table loop forced everywhere), and that it falls back to
the engine exactly when the engine's run has a job of zero duration. The Golab sweep rows built
on it equal the rows built on ``simulate(..., relative=True)``.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from staleness_lab.api import simulate
from staleness_lab.errors import Infeasible
from staleness_lab.experiments import golab
from staleness_lab.experiments.generators import (
    chains,
    identical_tables,
    merging_limit,
    offered_utilization,
    scale_to_utilization,
)
from staleness_lab.experiments.quickstart import baseline_utilization
from staleness_lab.model import Table, Workload, parse_workload
from staleness_lab.sim import ideal as ideal_module
from staleness_lab.sim import relative_lateness
from staleness_lab.sim.ideal import IdealSummary, ideal_run, ideal_summary

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

PERIODS = [3.0, 5.0, 7.5, 10.0, 12.3]
ALPHAS = [0.0, 0.5, 1.0, 3.0, 8.0]
#: 1e-30 with alpha = 0 makes jobs of zero duration (start + cost == start): the fallback.
BETAS = [0.0, 0.05, 0.3, 1.0, 1e-30]


@st.composite
def replayed_arrivals(draw: Any, horizon: float) -> list[list[float]]:
    """Strictly increasing times, data_to at or before its time and non-decreasing."""
    t = draw(st.sampled_from([0.0, 0.0, 2.0, 6.5]))
    out: list[list[float]] = []
    last = -math.inf
    for _ in range(draw(st.integers(1, 25))):
        t += draw(st.sampled_from([0.5, 1.0, 3.0, 4.25, 10.0, horizon / 7]))
        data_to = max(last, t - draw(st.sampled_from([0.0, 0.0, 1.0, 2.5])))
        out.append([round(t, 6), data_to if data_to == last else round(data_to, 6)])
        last = out[-1][1]
    return out


@st.composite
def workloads(draw: Any) -> Workload:
    horizon = draw(st.sampled_from([40.0, 97.5, 150.0, 333.3]))
    tables: list[dict[str, Any]] = []
    has_period: list[bool] = []
    level: list[int] = []

    def common(name: str) -> dict[str, Any]:
        alpha, beta = draw(st.sampled_from(ALPHAS)), draw(st.sampled_from(BETAS))
        if alpha == 0 and beta == 0:
            alpha = 1.0
        t: dict[str, Any] = {"name": name, "alpha": alpha, "beta": beta, "priority": draw(st.sampled_from([1, 2, 0.5]))}
        if draw(st.integers(0, 4)) == 0:
            t["min_separation"] = draw(st.sampled_from([1.0, 4.0, 11.0]))
        return t

    for k in range(draw(st.integers(1, 4))):
        t = common(f"b{k}")
        kind = draw(st.sampled_from(["periodic", "periodic", "replayed", "compiled"]))
        if kind == "replayed":
            t["arrivals"] = draw(replayed_arrivals(horizon))
            if draw(st.booleans()):
                t["nominal_period"] = draw(st.sampled_from(PERIODS))
        else:
            t["period"] = draw(st.sampled_from(PERIODS))
            t["phase"] = draw(st.sampled_from([0.0, 1.5, 4.0])) % t["period"]
            if kind == "compiled":
                if draw(st.booleans()):
                    t["arrival_jitter"] = t["period"] * draw(st.sampled_from([0.3, 1.0]))
                    t["timestamp_jitter"] = draw(st.sampled_from([0.0, 2.0]))
                else:
                    start = draw(st.sampled_from([5.0, 20.0]))
                    t["outages"] = [[start, start + draw(st.sampled_from([7.0, 31.0]))]]
        if kind == "replayed" and draw(st.booleans()):
            t["outages"] = [[3.0, 17.5]]
        t["initial_freshness"] = draw(st.sampled_from([0.0, 0.0, -2.0, -7.5]))
        has_period.append("period" in t or "nominal_period" in t)
        level.append(0)
        tables.append(t)
    for k in range(draw(st.integers(0, 4))):
        t = common(f"d{k}")
        srcs = draw(st.lists(st.sampled_from(range(len(tables))), min_size=1, max_size=2, unique=True))
        if max(level[s] for s in srcs) >= 2:
            srcs = [s for s in srcs if level[s] < 2] or [0]
        t["sources"] = [tables[s]["name"] for s in srcs]
        edge = min(tables[s]["initial_freshness"] for s in srcs)
        t["initial_freshness"] = edge - draw(st.sampled_from([0.0, 0.0, 3.0]))
        has_period.append(all(has_period[s] for s in srcs))
        level.append(1 + max(level[s] for s in srcs))
        tables.append(t)
    for t, periodic in zip(tables, has_period):
        if periodic and draw(st.integers(0, 3)) == 0:
            t["chop"] = draw(st.sampled_from([1.0, 1.5, 3.0]))
    order = draw(st.permutations(range(len(tables))))  # sources may come after their views
    w: dict[str, Any] = {"tracks": draw(st.integers(1, 3)), "horizon": horizon, "seed": draw(st.integers(0, 10**6)),
                         "tables": [tables[k] for k in order]}
    noise = draw(st.sampled_from(["none", "variability", "cost_noise"]))
    if noise == "variability":
        w["variability"] = draw(st.sampled_from([0.0, 0.5, 1.0]))
    elif noise == "cost_noise":
        w["cost_noise"] = draw(st.sampled_from([[0.0, 1.0], [0.5, 2.0]]))
    if draw(st.integers(0, 2)) == 0:
        w["slowdown"] = {"factor": draw(st.sampled_from([0.5, 3.0])),
                         "normal": draw(st.sampled_from([0.0, 10.0, 25.0])),
                         "slow": draw(st.sampled_from([5.0, 20.0]))}
    if draw(st.integers(0, 2)) == 0:
        w["warmup"] = round(horizon * draw(st.sampled_from([0.1, 0.5, 0.9])), 2)
    return parse_workload(w)


def bits(values: np.ndarray) -> bytes:
    return np.asarray(values, dtype=float).tobytes()


def assert_identical(got: IdealSummary, expected: IdealSummary) -> None:
    assert got.events == expected.events
    assert bits(got.staleness_area) == bits(expected.staleness_area)
    assert bits(got.max_staleness) == bits(expected.max_staleness)
    assert got.updates.tolist() == expected.updates.tolist()
    assert bits(got.weighted_staleness_area) == bits(expected.weighted_staleness_area)


@pytest.mark.parametrize("path", ["auto", "loop"])
@settings(max_examples=300, **SETTINGS)
@given(w=workloads())
def test_closed_form_equals_the_engines_ideal_run(path: str, w: Workload) -> None:
    trace = ideal_run(w)
    expected = IdealSummary.from_trace(trace)
    force_loop = mock.patch.object(ideal_module, "_jobs_vector", return_value=None) if path == "loop" else nullcontext()
    with force_loop:
        got = ideal_summary(w)
    zero = any(r[3] + r[6] == r[3] for r in [*trace.jobs_done, *trace.in_flight])
    assert (got.fallback is not None) == zero, got.fallback
    assert_identical(got, expected)
    pd.testing.assert_frame_equal(relative_lateness(trace, got), relative_lateness(trace, trace), check_exact=True)


def test_both_paths_and_the_fallback_are_reached() -> None:
    """One workload per path: a light periodic table (vectorized), a backlogged one with a
    chopped view (the loop) and a job of zero duration (the engine)."""
    light = Workload(tables=(Table("a", alpha=1.0, beta=0.1, period=10.0, phase=3.0),), horizon=500.0, seed=4,
                     variability=0.5)
    heavy = Workload(tables=(Table("a", alpha=3.0, beta=0.1, period=2.0),
                             Table("v", alpha=1.0, beta=0.5, sources=("a",), chop=1.0)), horizon=500.0, seed=4,
                     variability=0.5)
    zero = Workload(tables=(Table("a", alpha=0.0, beta=1e-30, period=5.0),), horizon=50.0)
    for w, vectorized in ((light, True), (heavy, False)):
        with mock.patch.object(ideal_module, "_jobs_loop", wraps=ideal_module._jobs_loop) as loop:
            got = ideal_summary(w)
        assert got.fallback is None and loop.called != vectorized
        assert_identical(got, IdealSummary.from_trace(ideal_run(w)))
    got = ideal_summary(zero)
    assert got.fallback is not None and "zero duration" in got.fallback and got.workload is zero
    assert_identical(got, IdealSummary.from_trace(ideal_run(zero)))


# -- the sweep rows ------------------------------------------------------------------------------


def reference_row(workload: Workload, utilization: float, policy: str,
                  options: dict[str, Any] | None = None) -> pd.DataFrame:
    """``golab.run_point`` as it was before the closed form: the ideal side from
    ``simulate(..., relative=True)``'s engine run."""
    w = scale_to_utilization(workload, utilization)
    try:
        result = simulate(w, policy, options=options, relative=True)
    except Infeasible as err:
        return pd.DataFrame({
            "offered_utilization": [offered_utilization(w)], "merging_limit": [merging_limit(w)],
            "relative_lateness": [math.nan], "status": ["infeasible"], "reason": [err.reason], "events": [0],
            "ideal_events": [0], "jobs": [0], "weighted_staleness": [math.nan], "ideal_weighted_staleness": [math.nan],
            "staleness_first_half": [math.nan], "staleness_second_half": [math.nan]})
    assert result.ideal is not None
    total = result.relative_lateness.iloc[-1]
    first, second = golab.half_staleness(result.trace)
    return pd.DataFrame({
        "offered_utilization": [offered_utilization(w)], "merging_limit": [merging_limit(w)],
        "relative_lateness": [float(total["relative_lateness"])], "status": ["ok"], "reason": [""],
        "events": [int(result.trace.events)], "ideal_events": [int(result.ideal.events)],
        "jobs": [int(result.trace.n_jobs)],
        "weighted_staleness": [float(total["weighted_staleness_area"])],
        "ideal_weighted_staleness": [float(total["ideal_weighted_staleness_area"])],
        "staleness_first_half": [first], "staleness_second_half": [second]})


def fig8_chains(seed: int) -> Workload:
    return chains(golab.N_TABLES, 3, priorities=((0.001,), (1.0,), (1.0, 10.0, 100.0)), period=golab.PERIOD,
                  alpha=golab.ALPHA, beta=golab.BETA, tracks=golab.TRACKS, horizon=3_000.0, seed=seed,
                  variability=golab.VARIABILITY, slowdown=golab.type2_slowdown(3.0))


def fig11_chopped(seed: int) -> Workload:
    return chains(golab.N_TABLES, 2, priorities=((1.0,), (10.0,)), period=golab.PERIOD, alpha=golab.ALPHA,
                  beta=golab.BETA, tracks=golab.TRACKS, horizon=3_000.0, seed=seed, variability=golab.VARIABILITY,
                  slowdown=golab.type2_slowdown(5.0), chop=3.0)


def fig6_tables(seed: int) -> Workload:
    return identical_tables(golab.N_TABLES, period=golab.PERIOD, alpha=golab.ALPHA, beta=golab.BETA, tracks=5,
                            horizon=3_000.0, seed=seed, variability=golab.VARIABILITY)


@pytest.mark.parametrize(("make", "utilization", "policy", "options"), [
    (fig8_chains, 0.9, "max-benefit", {"inheritance": "max"}),
    (fig8_chains, 1.2, "max-benefit", {"inheritance": "none"}),
    (fig11_chopped, 1.1, "max-benefit", {"inheritance": "none"}),
    (fig6_tables, 0.8, "proportional", None),
    (fig6_tables, 1.05, "edf-partitioned", None),  # infeasible: the row is a gap either way
])
def test_sweep_rows_equal_the_engine_ideal_rows(make: Any, utilization: float, policy: str,
                                                options: dict[str, Any] | None) -> None:
    workload = make(seed=1)
    row = golab.run_point(workload, utilization, policy, options)
    pd.testing.assert_frame_equal(row, reference_row(workload, utilization, policy, options), check_exact=True)


def test_quickstart_rows_equal_the_engine_ideal_rows() -> None:
    row = baseline_utilization("edf", 1.1, 8, 2, 5.0, 200.0, 0.5, 2_000.0, 3)
    with mock.patch("staleness_lab.experiments.quickstart.ideal_summary",
                    side_effect=lambda w: IdealSummary.from_trace(ideal_run(w))):
        reference = baseline_utilization("edf", 1.1, 8, 2, 5.0, 200.0, 0.5, 2_000.0, 3)
    pd.testing.assert_frame_equal(row, reference, check_exact=True)
