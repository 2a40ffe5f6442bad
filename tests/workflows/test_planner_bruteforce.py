"""Check 7 (digest §7): with heuristics (a)-(e) off, Algorithm 1's cost is never below the
cheapest valid set of invocations found by enumeration, and equals it when that set reads no
produced block twice (a tree) and every block's size estimate is the same whichever invocation
makes it (:func:`~staleness_lab.workflows.brute_force.consistent`).

Instances: the E8 join with random arrivals (at most 6 blocks per channel), row counts,
deletions, head, bounds and instant; at most 16 candidate invocations."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from staleness_lab.workflows.blocks import BASE, DELTA, Block
from staleness_lab.workflows.brute_force import (
    LAYOUTS,
    MAX_CANDIDATES,
    Instance,
    cheapest,
    closure,
    compare,
    consistent,
    dp,
    is_tree,
    random_instance,
)
from staleness_lab.workflows.candidates import BlockGen, OpView, Pool, reestimate, relation_rows
from staleness_lab.workflows.context import PlanContext, channel_kinds
from staleness_lab.workflows.costs import Rates
from staleness_lab.workflows.provenance import prov


@settings(max_examples=150, deadline=None)
@given(st.randoms(use_true_random=False))
def test_algorithm1_matches_brute_force(rng: random.Random) -> None:
    instance = random_instance(rng)
    invocations = closure(instance)
    assume(len(invocations) <= MAX_CANDIDATES)
    result = dp(instance)
    found = cheapest(instance, invocations)
    exact = found is not None and is_tree(found[1], instance.live) and consistent(invocations)
    event("infeasible" if found is None else "exact" if exact else "upper bound")
    if found is None:
        assert result.infeasible == ("output",)
        return
    assert result.infeasible == ()
    assert result.cost >= found[0] - 1e-9
    if exact:
        assert result.cost == pytest.approx(found[0], rel=1e-12, abs=1e-12)


def test_the_minimum_costs_each_invocation_on_the_blocks_its_subset_makes() -> None:
    """A chain and c^{B delta} make the same delta with different size estimates; the join on
    it costs what the chosen producer's size gives, never the other's (no mixing)."""
    instance = next(i for i in (random_instance(random.Random(seed)) for seed in range(500))
                    if not consistent(closure(i)) and len(closure(i)) <= MAX_CANDIDATES)
    invocations = closure(instance)
    cost, subset = cheapest(instance, invocations)
    made = {b: b for b in instance.live}
    for inv in subset:
        again = reestimate(instance.gen, inv, tuple(made[b] for b in inv.inputs))
        assert again == inv
        made.update({b: b for b in inv.outputs})
    assert cost == sum(inv.cost for inv in subset)
    assert dp(instance).cost >= cost - 1e-9


def test_an_async_right_join_estimate_reads_the_materialized_relation() -> None:
    """The fanout's n(B_R) is the largest materialized base of the right channel: the same
    estimate whatever else the pool holds (search order, or a re-estimate's two inputs)."""
    ctx = PlanContext(layouts=LAYOUTS, bounds={}, arrivals={"digests": [1.0], "scores": [2.0, 5.0]}, now=5.01,
                      heads={"output": prov(1, 2)}, kinds=channel_kinds({"output": None}, ["digests", "scores"], "async-incr"),
                      keyed={"digests": False, "scores": True, "output": False})
    join = OpView("join", "join", ("digests", "scores"), ("output",), 1.0, Rates(), (True, True))
    left = Block("digests", BASE, prov(1), rows=100)
    delta = Block("scores", DELTA, prov(5), prov(2), rows=4)
    big = Block("scores", BASE, prov(5), rows=40)
    gen = BlockGen(ctx, [join], weak={}, relation_rows=relation_rows([left, big, Block("scores", BASE, prov(2), rows=20)]))
    costs = []
    for extra in ([], [big]):
        pool = Pool()
        for b in [left, *extra, delta]:
            pool.add(b)
        costs += [(out.rows, inv.cost) for out, inv in gen(delta, pool) if inv.variant == "async-right"]
    assert costs[0] == costs[1]
    assert costs[0][0] == pytest.approx(100 / 40 * 4)


def test_compare_reports_every_instance() -> None:
    frame = compare(20, seed=7)
    assert len(frame) == 20 and frame["candidates"].le(MAX_CANDIDATES).all()
    feasible = frame[frame["feasible"]]
    assert (feasible["dp_cost"] >= feasible["minimum"] - 1e-9).all()
    assert set(frame.columns) >= {"consistent", "tree", "minimum", "dp_cost", "dp_longterm_cost", "brute_s", "dp_s"}


def test_instances_stay_within_six_blocks_per_channel() -> None:
    for seed in range(50):
        instance: Instance = random_instance(random.Random(seed))
        per_channel: dict[str, int] = {}
        for b in instance.live:
            per_channel[b.channel] = per_channel.get(b.channel, 0) + 1
        assert max(per_channel.values()) <= 6
        assert {b.kind for b in instance.live} <= {BASE, DELTA}
