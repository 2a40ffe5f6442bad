"""PRP (Leontyev et al.'s Fig. 9 baseline, digest Sec. 2.7): period clusters on Proportional's
tracks, shortest period first, ties by freshness gain per worst-case cost."""

from __future__ import annotations

import pytest

from staleness_lab.model import Table, Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.policies.prp import Prp, period_clusters
from staleness_lab.policies.proportional import allocate
from staleness_lab.policies.registry import get_policy
from staleness_lab.sim.engine import policy_stream, run


def fig9_tables(phase: float = 0.0) -> tuple[Table, ...]:
    return tuple(Table(f"V{k + 1}", alpha=0.01 * p, beta=0.1, period=p, phase=phase)
                 for k, p in enumerate([300.0] * 7 + [900.0] * 7))


def test_clusters_are_equal_periods_with_the_long_cluster_on_track_0():
    w = Workload(tables=fig9_tables(), tracks=2, horizon=3000.0, cost_noise=(0.8, 1.2))
    groups = period_clusters(w.periods)
    assert groups == [list(range(7)), list(range(7, 14))]
    alloc = allocate(w, groups, mode="all")
    assert alloc.bottom == (1, 0) and alloc.upper == ((), ())  # C1 on track 1, C2 on track 0
    trace = run(w, get_policy("prp"), "prp")
    long_jobs = trace.jobs[trace.jobs["table"].isin([f"V{k}" for k in range(8, 15)])]
    assert set(long_jobs["track"]) == {0}  # long jobs never borrow the short cluster's track
    short = trace.jobs[trace.jobs["table"].isin([f"V{k}" for k in range(1, 8)])]
    assert set(short["track"]) == {0, 1}  # aggressive promotion onto the long cluster's track


def test_key_is_period_then_gain_per_worst_case_cost():
    """Shorter period first; among equal periods the larger L / (hi (S + R L)), hi = 1.2."""
    w = Workload(tables=(Table("A", alpha=2.0, beta=0.1, period=10.0), Table("B", alpha=1.0, beta=0.1, period=10.0),
                         Table("C", alpha=0.1, beta=0.1, period=20.0)), tracks=1, horizon=50.0, cost_noise=(0.8, 1.2))
    bound = Prp().bind(w, policy_stream(0))
    assert isinstance(bound, BoundPolicy) and bound.rekey_on_data and bound.jobs == "golab"
    keys = [bound.key(i, 0.0, 0.0, 10.0) for i in range(3)]
    assert keys[1] < keys[0] < keys[2]
    assert keys[0] == (10.0, pytest.approx(-10.0 / (1.2 * 3.0)))


def test_aggressive_promotion_borrows_more_than_the_careful_variant():
    """Synchronous phases: C2's tables are ready every 900, so the careful variant leaves their
    track to them more often (51 vs 18 short jobs on track 0 over 6,000 time units here)."""
    w = Workload(tables=fig9_tables(), tracks=2, horizon=6000.0, cost_noise=(0.8, 1.2))
    borrowed = {}
    for aggressive in (True, False):
        jobs = run(w, get_policy("prp", aggressive=aggressive), "prp").jobs
        short = jobs[jobs["table"].isin([f"V{k}" for k in range(1, 8)])]
        borrowed[aggressive] = int((short["track"] == 0).sum())
    assert borrowed[True] > borrowed[False] > 0
