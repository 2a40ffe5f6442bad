"""The Python engine's run of a placement rule (:mod:`staleness_lab.sim.placement`) against the
policy's ``place`` function, the reference: the same trace bit for bit on every partitioner
variant, over drawn workloads (tracks up to 6, so packings fit) and long fixed runs."""

from __future__ import annotations

import dataclasses
import heapq

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from staleness_lab.errors import Infeasible, InputError
from staleness_lab.model import Workload, parse_workload
from staleness_lab.policies import get_policy
from staleness_lab.policies.base import PlacementRule
from staleness_lab.sim.costs import policy_stream
from staleness_lab.sim.engine import _Run, run
from staleness_lab.sim.placement import RuleDispatch
from staleness_lab.sim.trace import Trace

from engine_workloads import fingerprint, table2, workloads

PARTITIONERS = [
    ("edf-partitioned", {}), ("edf-partitioned", {"aggressive": True, "basic": "edf"}),
    ("edf-partitioned", {"basic": "edf-p", "inheritance": "sum"}),
    ("proportional", {}), ("proportional", {"aggressive": True, "basic": "edf", "k": 2.0}),
    ("proportional", {"tracks_mode": "basic", "clustering": "cost", "basic": "edf-p", "inheritance": "max"}),
    ("proportional", {"k": 10.0, "tracks_mode": "basic"}),
]


def by_place(workload: Workload, name: str, options: dict) -> Trace:
    """The run with the rule stripped: the engine calls ``place`` at every decision."""
    bound = get_policy(name, **options).bind(workload, policy_stream(workload.seed))
    assert bound.place_rule is not None and bound.place is not None
    return _Run(workload, dataclasses.replace(bound, compiled=None, place_rule=None)).execute(name)


def both(workload: Workload, name: str, options: dict) -> tuple[Trace, Trace] | None:
    try:
        by_rule = run(workload, get_policy(name, **options), name, engine="python")
    except (InputError, Infeasible):  # a packing that needs more tracks, a feed without a period
        return None
    return by_place(workload, name, options), by_rule


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(), tracks=st.integers(1, 6), policy=st.sampled_from(PARTITIONERS))
def test_rule_reproduces_place(w: Workload, tracks: int, policy: tuple[str, dict]) -> None:
    pair = both(dataclasses.replace(w, tracks=tracks), *policy)
    event("ran" if pair is not None else "refused (packing or period)")
    if pair is not None:
        assert fingerprint(pair[1]) == fingerprint(pair[0])


@pytest.mark.parametrize("name, options", PARTITIONERS)
def test_rule_on_a_long_table2_run(name: str, options: dict) -> None:
    w = parse_workload({**table2(30, 30_000.0, noisy=True, slowdown=True), "tracks": 6})
    reference, by_rule = both(w, name, options)
    assert reference.n_jobs > 3_000  # a long run: many decisions of every kind
    assert fingerprint(by_rule) == fingerprint(reference)


def test_a_skipped_decision_drops_stale_entries_once_they_pile_up() -> None:
    # two tables homed on track 0 (busy); track 1 idle and nobody's candidate
    rule = PlacementRule(candidates=((0,), (0,)), borrowed=((False,), (False,)), claims=((0,), (0,)), aggressive=False)
    dispatch = RuleDispatch(rule, n_tracks=2)
    version = [30, 7]
    ready = [(-float(k), 0, k) for k in range(1, 31)] + [(-0.5, 1, 7)]  # table 0 re-keyed 30 times
    heapq.heapify(ready)
    free = [1]
    assert dispatch.decide(ready, free, version) == []
    assert ready == [(-30.0, 0, 30), (-0.5, 1, 7)] and free == [1]
