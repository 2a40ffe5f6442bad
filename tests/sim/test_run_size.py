"""The run-size guard (sim/size.py), silent horizons, the track cap and magnitude limits."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.errors import InputError
from staleness_lab.model import Table, Workload, parse_workload
from staleness_lab.sim.size import MAX_EVENTS, check_run_size, default_max_events, estimate


def _workload(**changes: object) -> Workload:
    tables = [
        Table(name="a", period=10.0, phase=0.5, alpha=1.0, beta=0.1),
        Table(name="b", period=25.0, alpha=2.0, beta=0.05, priority=2.0),
        Table(name="v", sources=("a", "b"), alpha=0.5, beta=0.02),
    ]
    return dataclasses.replace(Workload(tables=tuple(tables), tracks=2, horizon=1000.0), **changes)


@settings(max_examples=60, deadline=None)
@given(
    periods=st.lists(st.floats(0.5, 50.0), min_size=1, max_size=4),
    phases=st.lists(st.floats(0.0, 30.0), min_size=4, max_size=4),
    horizon=st.floats(10.0, 500.0),
    tracks=st.integers(1, 3),
    derived=st.booleans(),
    policy=st.sampled_from(["fifo", "edf", "max-benefit"]),
)
def test_estimate_counts_arrivals_exactly_and_bounds_jobs(periods, phases, horizon, tracks, derived, policy):
    tables = [Table(name=f"t{k}", period=p, phase=phases[k], alpha=0.2, beta=0.05) for k, p in enumerate(periods)]
    if derived:
        tables.append(Table(name="view", sources=tuple(t.name for t in tables), alpha=0.1, beta=0.01))
    workload = Workload(tables=tuple(tables), tracks=tracks, horizon=horizon)
    size = estimate(workload)
    trace = sl.simulate(workload, policy).trace
    jobs = trace.jobs
    for k, table in enumerate(workload.tables):
        if table.period is not None:
            expected = sum(1 for i in range(1, 100_000) if table.phase + i * table.period <= horizon)
            assert size.arrivals[k] == expected
        assert (jobs["table"] == table.name).sum() <= size.jobs[k]
    assert trace.events <= size.events


def test_default_limit_is_stated_and_memory_bounded():
    assert 10**6 <= default_max_events() <= MAX_EVENTS


def test_huge_horizon_is_refused_naming_horizon():
    with pytest.raises(InputError) as err:
        sl.simulate(_workload(horizon=1e12), "fifo")
    assert str(err.value).startswith("horizon: 1e+12 gives about")
    assert "--max-events" in str(err.value)


def test_tiny_period_is_refused_naming_that_period():
    w = _workload()
    tables = (dataclasses.replace(w.tables[0], period=1e-9), *w.tables[1:])
    with pytest.raises(InputError) as err:
        sl.simulate(dataclasses.replace(w, tables=tables), "fifo")
    assert str(err.value).startswith("tables[0].period (table 'a'): 1e-09 over horizon 1000 gives about")


def test_max_events_raises_or_lowers_the_limit():
    w = _workload()
    events = estimate(w).events
    with pytest.raises(InputError, match="above the limit of 10 "):
        sl.simulate(w, "fifo", max_events=10)
    assert sl.simulate(w, "fifo", max_events=int(events)).trace.events > 0
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="^max_events: must be an integer >= 1"):
            check_run_size(w, bad)


def test_check_applies_the_guard_too():
    with pytest.raises(InputError, match="^horizon: "):
        sl.check(_workload(horizon=1e12), "fifo")


def test_a_horizon_without_arrivals_does_not_spin():
    """Phase far past a huge horizon, with a slowdown cycle of 2e-6: no event at all, and the
    arrival windows jump instead of stepping through 10^11 empty ones."""
    data = {"tracks": 1, "horizon": 1e12, "slowdown": {"factor": 2, "normal": 1e-6, "slow": 1e-6},
            "tables": [{"name": "a", "period": 10, "phase": 1e13, "alpha": 1, "beta": 0.1, "priority": 1}]}
    result = sl.simulate(parse_workload(data), "fifo")
    assert result.trace.events == 0
    assert result.total_weighted_staleness == pytest.approx(0.5e24)


def test_sparse_feeds_give_the_same_arrivals_as_before_the_jump():
    """Windows with no arrival are skipped; every arrival still comes, in order."""
    data = {"tracks": 1, "horizon": 1e9, "tables": [
        {"name": "a", "period": 1e8, "phase": 3e8, "alpha": 1, "beta": 0.0, "priority": 1},
        {"name": "b", "arrivals": [[5.0, 5.0], [7e8, 6e8]], "nominal_period": 1e8, "alpha": 1, "beta": 0, "priority": 1},
    ]}
    jobs = sl.simulate(parse_workload(data), "fifo").jobs
    assert list(jobs["start"]) == [5.0, 4e8, 5e8, 6e8, 7e8, 7e8 + 1, 8e8, 9e8]  # the one at 1e9 is in flight


@pytest.mark.parametrize("policy", ["fifo", "edf", "max-benefit", "random"])
def test_tracks_past_the_tables_change_nothing_for_order_policies(policy):
    w = _workload(variability=0.5)
    few, many = sl.simulate(w, policy, tracks=3), sl.simulate(w, policy, tracks=5000)
    assert few.jobs.equals(many.jobs)
    assert few.total_weighted_staleness == many.total_weighted_staleness


def test_placement_policies_still_see_every_track():
    result = sl.simulate(_workload(), "edf-partitioned", tracks=40)
    assert result.jobs["track"].max() < 40
    assert len(result.utilization) == 40


@pytest.mark.parametrize("tracks", [10_001, 2**63, 10**400])
def test_huge_track_counts_are_refused(tracks):
    with pytest.raises(InputError, match="^tracks: must be <= 10,000"):
        _workload(tracks=tracks)


def test_numbers_beyond_float_range_are_refused_naming_the_field():
    with pytest.raises(InputError, match=r"^horizon: integer with 40\d digits is beyond the float range"):
        _workload(horizon=10**400)
    with pytest.raises(InputError, match=r"^period \(table 'x'\): integer with"):
        Table(name="x", period=-(10**5000), alpha=1, beta=0)


def test_weights_and_costs_that_overflow_the_totals_are_refused():
    w = _workload()
    with pytest.raises(InputError, match=r"^tables\[0\]\.priority \(table 'a'\): 1e\+308 makes the weighted"):
        dataclasses.replace(w, tables=(dataclasses.replace(w.tables[0], priority=1e308), *w.tables[1:]))
    with pytest.raises(InputError, match=r"^tables\[1\]\.beta \(table 'b'\): 1e\+299 makes one update's cost"):
        dataclasses.replace(w, tables=(w.tables[0], dataclasses.replace(w.tables[1], beta=1e299), w.tables[2]))
    with pytest.raises(InputError, match="^horizon: 1e\\+160 makes staleness areas overflow"):
        _workload(horizon=1e160)
    assert _workload(horizon=1e100).horizon == 1e100  # large but finite totals are fine


def test_a_name_that_is_not_unicode_is_refused():
    with pytest.raises(InputError, match=r"^name: must be valid Unicode text, got '\\ud800'"):
        Table(name="\ud800", period=1, alpha=1, beta=0)
