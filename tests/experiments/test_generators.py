"""The seeded workload generators (Golab et al., Sec. 5 and Table 2)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.errors import InputError
from staleness_lab.experiments.golab.generators import (
    chains,
    heterogeneous_tables,
    identical_tables,
    merging_limit,
    offered_utilization,
    scale_to_utilization,
    two_classes,
    work_rate_multiplier,
)
from staleness_lab.model import Slowdown


@given(n=st.integers(1, 40), period=st.floats(0.5, 1e4), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_identical_tables_phases_lie_in_one_period(n: int, period: float, seed: int) -> None:
    w = identical_tables(n, period=period, seed=seed)
    assert len(w.tables) == n
    assert all(t.period == period and 0 <= t.phase < period for t in w.tables)


@given(n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_heterogeneous_periods_and_phases(n: int, seed: int) -> None:
    w = heterogeneous_tables(n, period_range=(10.0, 1000.0), seed=seed)
    for t in w.tables:
        assert 10.0 <= t.period <= 1000.0
        assert 0 <= t.phase < t.period
        assert t.priority in (1.0, 2.0, 3.0)


def test_generators_are_seeded() -> None:
    assert heterogeneous_tables(8, seed=3) == heterogeneous_tables(8, seed=3)
    assert heterogeneous_tables(8, seed=3) != heterogeneous_tables(8, seed=4)
    assert identical_tables(5, seed=1) == identical_tables(5, seed=1)


def test_spread_phases_are_even() -> None:
    w = identical_tables(4, period=100.0, spread_phases=True)
    assert [t.phase for t in w.tables] == [0.0, 25.0, 50.0, 75.0]


def test_identical_tables_cycle_priorities_and_pass_options() -> None:
    w = identical_tables(5, priorities=(1.0, 3.0), tracks=2, horizon=50.0, seed=7, variability=0.2, warmup=5.0)
    assert [t.priority for t in w.tables] == [1.0, 3.0, 1.0, 3.0, 1.0]
    assert (w.tracks, w.horizon, w.seed, w.variability, w.warmup) == (2, 50.0, 7, 0.2, 5.0)
    with pytest.raises(InputError) as info:
        identical_tables(2, colour="red")
    assert info.value.field == "colour"


@pytest.mark.parametrize("target", [0.1, 0.5, 0.9, 1.0, 1.2, 3.7])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scale_to_utilization_hits_the_target(target: float, seed: int) -> None:
    base = heterogeneous_tables(12, seed=seed, tracks=2)
    scaled = scale_to_utilization(base, target)
    assert offered_utilization(scaled) == pytest.approx(target, rel=1e-12, abs=0)
    # One common factor on alpha and beta; everything else unchanged.
    factors = {round(s.alpha / b.alpha, 12) for s, b in zip(scaled.tables, base.tables)}
    factors |= {round(s.beta / b.beta, 12) for s, b in zip(scaled.tables, base.tables)}
    assert len(factors) == 1
    assert [(t.period, t.phase, t.priority) for t in scaled.tables] == [(t.period, t.phase, t.priority) for t in base.tables]


def test_scale_to_utilization_counts_the_slowdown() -> None:
    base = identical_tables(6, slowdown={"factor": 3.0, "normal": 10.0, "slow": 10.0})
    scaled = scale_to_utilization(base, 0.8)
    assert offered_utilization(scaled) == pytest.approx(0.8, rel=1e-12)
    nominal = sum(scaled.utilization()) / scaled.tracks
    assert nominal * 1.5 == pytest.approx(0.8, rel=1e-12)  # work-rate multiplier 20 / (10 + 10/3) = 1.5


def test_scale_to_utilization_rejects_a_non_positive_target() -> None:
    with pytest.raises(InputError, match="^utilization: "):
        scale_to_utilization(identical_tables(2), 0.0)


def test_offered_utilization_by_hand() -> None:
    # 4 tables, period 100, E(100) = 1 + 0.1*100 = 11: 4 * 0.11 / 2 tracks = 0.22
    assert offered_utilization(identical_tables(4, tracks=2)) == pytest.approx(0.22)


def test_two_classes_structure() -> None:
    w = two_classes(3, {"period": 50.0, "priority": 4.0}, {"beta": 0.5}, tracks=2, seed=5)
    a = [t for t in w.tables if t.name.startswith("a")]
    b = [t for t in w.tables if t.name.startswith("b")]
    assert [t.name for t in w.tables] == ["a0000", "a0001", "a0002", "b0000", "b0001", "b0002"]
    assert all((t.period, t.priority, t.alpha, t.beta) == (50.0, 4.0, 1.0, 0.1) and 0 <= t.phase < 50 for t in a)
    assert all((t.period, t.priority, t.alpha, t.beta) == (100.0, 1.0, 1.0, 0.5) and 0 <= t.phase < 100 for t in b)
    with pytest.raises(InputError) as info:
        two_classes(1, {"speed": 1.0}, {})
    assert info.value.field == "class_a.speed"


def test_chains_structure() -> None:
    w = chains(3, 4, priorities=((1.0, 2.0), (5.0,)), period=20.0, seed=2)
    assert len(w.tables) == 12
    for c in range(3):
        base = w.table(f"c{c:04d}l0")
        assert base.is_base and base.period == 20.0 and 0 <= base.phase < 20.0
        assert base.priority == (1.0, 2.0)[c % 2]
        for level in range(1, 4):
            view = w.table(f"c{c:04d}l{level}")
            assert view.sources == (f"c{c:04d}l{level - 1}",)
            assert view.priority == 5.0  # levels beyond the list reuse the last one
    with pytest.raises(InputError, match="^depth: "):
        chains(2, 0)


def test_work_rate_multiplier() -> None:
    assert work_rate_multiplier(None) == 1.0
    assert work_rate_multiplier(Slowdown(factor=4.0, normal=0.0, slow=5.0)) == 4.0
    assert work_rate_multiplier(Slowdown(factor=4.0, normal=5.0, slow=0.0)) == 1.0
    # 30 normal units do 30 units of work, 10 slow ones at S = 3 do 10/3: 40 / (100/3) = 1.2
    # (the time average of the multiplier would be 1.5)
    assert work_rate_multiplier(Slowdown(factor=3.0, normal=30.0, slow=10.0)) == pytest.approx(1.2)


def test_merging_limit() -> None:
    table2 = identical_tables(30, period=100.0, alpha=1.0, beta=0.1, tracks=4)
    assert merging_limit(table2) == pytest.approx(1.1)
    assert merging_limit(scale_to_utilization(table2, 0.7)) == pytest.approx(1.1)  # invariant under scaling
    slowed = identical_tables(30, period=100.0, alpha=1.0, beta=0.1, slowdown={"factor": 3.0, "normal": 10.0, "slow": 30.0})
    assert merging_limit(slowed) == pytest.approx(1.1)  # the slowdown scales both sides
    assert merging_limit(identical_tables(3, alpha=2.0, beta=0.0)) == math.inf  # fixed costs: merging always catches up


@pytest.mark.parametrize(("fraction", "grows"), [(0.9, False), (1.15, True)])
def test_staleness_grows_without_bound_only_above_the_merging_limit(fraction: float, grows: bool) -> None:
    """Exact staleness of the first and second half of a run: steady below the limit, growing
    above it (no slowdown, no cost noise, so the only question is the long-run work rate)."""
    from staleness_lab.api import simulate
    from staleness_lab.experiments.golab.sweeps import half_staleness

    w = identical_tables(30, period=100.0, alpha=1.0, beta=0.1, tracks=4, horizon=200_000.0, seed=1)
    w = scale_to_utilization(w, fraction * merging_limit(w))
    first, second = half_staleness(simulate(w, "max-benefit").trace)
    assert (second / first > 1.5) is grows, (first, second)
