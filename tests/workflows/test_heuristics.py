"""Heuristics (a), (b), (d), the frontier (digest §3, E7 and correction 4) and the dominance
test of rule (e)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.workflows.blocks import BASE, DELTA, Block
from staleness_lab.workflows.heuristics import compulsory_chains, frontier_sets, minimum, old_rule, overkill_rule
from staleness_lab.workflows.planner import HiVector, _below, _his, _keep_maximal
from staleness_lab.workflows.provenance import precedes, prov

CRAWL = [15, 32, 59, 65, 86]


def digests(*extra: Block) -> list[Block]:
    deltas = [Block("digests", DELTA, prov(b), prov(a), rows=1) for a, b in zip(CRAWL, CRAWL[1:])]
    return [Block("digests", BASE, prov(15)), *extra, *deltas]


def chained(blocks, frontier):  # type: ignore[no-untyped-def]
    return sorted((b.frm[0], b.to[0]) for b in compulsory_chains(blocks, frontier) if b.frm is not None)


def test_e7_chains() -> None:
    f32 = frozenset({32.0})
    b15, b32, b59, b65, b86 = (frozenset({float(t)}) for t in (15, 32, 59, 65, 86))
    assert chained(digests(), {}) == [(b15, b86)]
    assert chained(digests(), {"digests": {(65.0,)}}) == [(b15, b65), (b65, b86)]
    assert chained(digests(Block("digests", BASE, prov(32))), {"digests": {(65.0,)}}) == [(b15, f32), (f32, b65), (b65, b86)]
    del b59


def test_a_chain_costs_nothing_and_keeps_its_parts_in_its_plan() -> None:
    live = compulsory_chains(digests(), {})
    (whole,) = [b for b in live if b.frm is not None]
    assert whole.rows == 4
    assert len(live[whole]) == 3 and all(inv.cost == 0 for inv in live[whole])


def test_frontier_projects_upstream_and_takes_the_minimum() -> None:
    last = {"output": prov(65, 49)}
    projections = [("output", "digests", [(0, 0)]), ("output", "scores", [(1, 0)]), ("other", "scores", [(0, 0)])]
    points = frontier_sets(last, projections, {"digests": 1, "scores": 1, "output": 2})
    assert points == {"output": {(65.0, 49.0)}, "digests": {(65.0,)}, "scores": {(49.0,)}}
    assert minimum(points) == {"output": (65.0, 49.0), "digests": (65.0,), "scores": (49.0,)}
    two = frontier_sets({"o1": prov(59), "o2": prov(32)}, [("o1", "x", [(0, 0)]), ("o2", "x", [(0, 0)])],
                        {"x": 1, "o1": 1, "o2": 1})
    assert two["x"] == {(59.0,), (32.0,)} and minimum(two)["x"] == (32.0,)
    empty = frontier_sets({"u": (frozenset(), frozenset({3.0}))}, [], {"u": 2})
    assert minimum(empty)["u"] == (math.inf, 3.0)


def test_chains_break_at_every_point_of_a_frontier_set() -> None:
    """FeedbackPrioritization's shape: the log feeds a fast path (at 59) and a slow one (at 32);
    its deltas chain from 32 and from 59, never across either point."""
    b15, b32, b59, b65, b86 = (frozenset({float(t)}) for t in (15, 32, 59, 65, 86))
    assert chained(digests(), {"digests": {(32.0,), (59.0,)}}) == [(b15, b32), (b32, b59), (b59, b86)]


def test_chains_merge_across_a_branch() -> None:
    """A baseline made d(15>59) beside d(15>32), d(32>59): two deltas end at 59 and (b) still
    merges there, keeping one chain per start point (the made block, not its parts' chain)."""
    b15, b86 = frozenset({15.0}), frozenset({86.0})
    made = Block("digests", DELTA, prov(59), prov(15), rows=2)
    live = compulsory_chains(digests(made), {})
    assert chained(digests(made), {}) == [(b15, b86)]
    (whole,) = [b for b in live if b.frm is not None]
    assert _parts(live[whole]) == {made, *digests()[3:]}
    branched = digests(made, Block("digests", DELTA, prov(65), prov(32), rows=2))
    assert set(chained(branched, {"digests": {(32.0,)}})) == {(b15, frozenset({32.0})), (b15, b86), (frozenset({32.0}), b86)}


@settings(max_examples=150, deadline=None)
@given(spans=st.sets(st.tuples(st.integers(0, 7), st.integers(1, 8)).filter(lambda s: s[0] < s[1]), min_size=1, max_size=14),
       bases=st.sets(st.integers(0, 8), max_size=3), frontier=st.sets(st.integers(0, 8), max_size=2))
def test_chains_end_at_points_that_do_not_merge(spans, bases, frontier) -> None:
    """Any set of deltas (branching or not): every live delta is its parts exactly abutting,
    one per (start, end), starting and ending where no merge may happen."""
    blocks = [Block("c", BASE, prov(b)) for b in sorted(bases)]
    blocks += [Block("c", DELTA, prov(b), prov(a), rows=1) for a, b in sorted(spans)]
    live = compulsory_chains(blocks, {"c": {(float(f),) for f in frontier}})
    ends, starts = {b for _, b in spans}, {a for a, _ in spans}

    def merges(p: int) -> bool:
        return p in ends and p in starts and p not in bases and p not in frontier

    pairs = [(min(b.frm[0]), min(b.to[0])) for b in live if b.frm is not None]
    assert len(pairs) == len(set(pairs))
    for b, plan in live.items():
        if b.frm is None:
            continue
        a, z = min(b.frm[0]), min(b.to[0])
        assert not merges(z) and (not merges(a) or (a, z) in spans and not plan)
        assert sum(x.rows for x in _parts(plan)) == b.rows if plan else (a, z) in spans


def _parts(plan) -> set[Block]:  # type: ignore[no-untyped-def]
    """The materialized deltas a chain's plan reads."""
    made = {o for inv in plan for o in inv.outputs}
    return {x for inv in plan for x in inv.inputs if x not in made}


def test_prune_old_drops_blocks_before_the_latest_base_at_the_frontier() -> None:
    blocks = digests(Block("digests", BASE, prov(59)), Block("digests", BASE, prov(86)))
    old = old_rule(blocks, {"digests": (65.0,)})
    kept = [b for b in blocks if not old(b)]
    assert Block("digests", BASE, prov(15)) not in kept
    assert Block("digests", DELTA, prov(32), prov(15)) not in kept  # its target precedes B(59)
    assert Block("digests", DELTA, prov(59), prov(32)) in kept  # target equal, not before (strict)
    assert Block("digests", DELTA, prov(65), prov(59)) in kept
    assert Block("digests", BASE, prov(86)) in kept  # after the frontier: not an anchor
    assert not any(old_rule(blocks, {})(b) for b in blocks)


def test_overkill_prunes_what_an_actual_block_already_satisfies() -> None:
    actual = [Block("mid", BASE, prov(59)), Block("out", BASE, prov(10))]
    pruned = overkill_rule(actual, lambda channel, p: True, outputs=["out"])
    assert pruned(Block("mid", BASE, prov(65)))
    assert not pruned(Block("mid", DELTA, prov(65), prov(59)))  # another type
    assert not pruned(Block("mid", BASE, prov(40)))
    assert not pruned(Block("out", BASE, prov(65)))
    stale = overkill_rule(actual, lambda channel, p: False, outputs=[])
    assert not stale(Block("mid", BASE, prov(65)))


@settings(max_examples=300, deadline=None)
@given(
    targets=st.lists(st.lists(st.sampled_from([frozenset(), frozenset({1.0}), frozenset({2.0, 0.5}), frozenset({3.0})]),
                              min_size=2, max_size=2).map(tuple), max_size=12),
    probe=st.lists(st.sampled_from([frozenset(), frozenset({1.0}), frozenset({2.0}), frozenset({3.0})]),
                   min_size=2, max_size=2).map(tuple),
    empty_incomparable=st.booleans(),
)
def test_rule_e_on_the_maximal_targets_decides_as_on_all(targets, probe, empty_incomparable) -> None:
    """Rule (e) keeps only the maximal hi-vectors of the generated targets; a target precedes
    one of all the targets exactly when it precedes one of those, under either reading of an
    empty element (incomparable but with an empty one, or ``hi = -inf``: :func:`precedes`)."""
    front: list[HiVector] = []
    for t in targets:
        _keep_maximal(front, _his(t, empty_incomparable))

    def below(a, b) -> bool:  # type: ignore[no-untyped-def]
        same_empty = all(bool(x) == bool(y) for x, y in zip(a, b))
        return precedes(a, b) and (same_empty or not empty_incomparable)

    assert any(below(probe, t) for t in targets) == any(_below(_his(probe, empty_incomparable), m) for m in front)
