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

from staleness_lab.api import simulate
from staleness_lab.errors import Infeasible
from staleness_lab.experiments.golab import sweeps as golab
from staleness_lab.experiments.golab.generators import (
    chains,
    identical_tables,
    merging_limit,
    offered_utilization,
    scale_to_utilization,
)
from staleness_lab.experiments.quickstart import baseline_utilization
from staleness_lab.model import Table, Workload
from staleness_lab.sim import ideal as ideal_module
from staleness_lab.sim import relative_lateness
from staleness_lab.sim.ideal import IdealSummary, ideal_run, ideal_summary

from engine_workloads import workloads

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

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
