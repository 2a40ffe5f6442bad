"""Olston §6.2's heuristics (a), (b) and (d) on the live blocks of one scheduler call (digest §3
"Heuristics" [P; details R]); (c) is :mod:`staleness_lab.workflows.propagate`, (e) lives in the
search (:mod:`staleness_lab.workflows.planner`).

* **Frontier** (digest correction 4): ``f(O)`` is the target of the last block emitted on output
  O, projected recursively upstream onto each channel's elements. Several paths give a frontier
  set (:func:`frontier_sets`): (a) uses its element-wise minimum of ``hi`` [D]
  (:func:`minimum`), and (b) breaks chains at every point of the set (digest §3 (b): "T_i is
  in the frontier set"; the minimum alone broke them at the slowest path's point only). A
  channel read by two paths at different points (FeedbackPrioritization's log: its news side
  moves every 5 minutes, its non-news side once a day) must keep the deltas that start at each,
  or the faster path finds only chains from the slower one's point and rebuilds in batch. Here
  a frontier is one ``hi`` per element, ``+inf`` where no path says anything.
* **(a) Old blocks**: ``p(C)`` = the latest live base on C with target at or before ``f(C)``;
  live blocks whose target precedes it are ignored (any base at or before the frontier whose
  target a block precedes is used, so incomparable candidates never prune each other's past).
* **(b) Compulsory chains**: abutting live deltas of one kind merge, never across an interior
  point ``T_i`` where ``B(T_i)`` is live or ``T_i`` is a frontier point (E7); where deltas
  branch every path merges, one chain per start point; the chain's zero-cost invocations
  become its plan.
* **(d) Overkill**: a potential block is pruned when its channel holds an actual block of the
  same type, with a target that precedes it, meeting the channel's (propagated) bounds.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from staleness_lab.workflows.blocks import Block, Invocation
from staleness_lab.workflows.provenance import Provenance, hi_element, precedes

Frontier = tuple[float, ...]
#: (consumer channel, feeder channel, [(consumer element, feeder element), ...])
Projection = tuple[str, str, Sequence[tuple[int, int]]]


def frontier_sets(
    last_targets: Mapping[str, Provenance], projections: Sequence[Projection], widths: Mapping[str, int]
) -> dict[str, frozenset[Frontier]]:
    """Every channel's frontier set: one point per path from an output's last target, projected
    through ``projections`` listed consumers before feeders (reverse topological order)."""
    found: dict[str, set[Frontier]] = {name: {point(target)} for name, target in last_targets.items()}
    for consumer, feeder, pairs in projections:
        if consumer not in found:
            continue
        mine = found.setdefault(feeder, set())
        for at in found[consumer]:
            projected = [math.inf] * widths[feeder]
            for j, e in pairs:
                projected[e] = min(projected[e], at[j])
            if any(x < math.inf for x in projected):
                mine.add(tuple(projected))
    return {name: frozenset(points) for name, points in found.items() if any(x < math.inf for p in points for x in p)}


def point(p: Provenance) -> Frontier:
    """A provenance as a frontier point: ``hi`` per element, ``+inf`` where it is empty."""
    return tuple(hi_element(e) if e else math.inf for e in p)


def minimum(points: Mapping[str, frozenset[Frontier]]) -> dict[str, Frontier]:
    """Every channel's frontier for (a): the element-wise minimum of its frontier set."""
    return {name: tuple(map(min, zip(*p))) for name, p in points.items()}


def _at_or_before(p: Provenance, f: Frontier) -> bool:
    return all(hi_element(e) <= x for e, x in zip(p, f, strict=True))


def _is_frontier(p: Provenance, points: Collection[Frontier]) -> bool:
    """Whether ``p`` is a point of the frontier set, compared as :func:`point` makes the points
    (an empty element is ``+inf`` on both sides; read as ``hi = -inf`` it never matched, so chains
    merged across a frontier point whose provenance has an empty element)."""
    return point(p) in points


def old_rule(live: Iterable[Block], frontier: Mapping[str, Frontier]) -> Callable[[Block], bool]:
    """Heuristic (a) as a predicate: a block is old when its target precedes a live base (of
    ``live``) at or before the frontier of its channel. It applies to blocks not yet made too:
    a baseline must not make again what the store retired."""
    anchors: dict[str, list[Provenance]] = {}
    for b in live:
        f = frontier.get(b.channel)
        if b.is_base and f is not None and _at_or_before(b.to, f):
            anchors.setdefault(b.channel, []).append(b.to)

    def old(b: Block) -> bool:
        return any(precedes(b.to, a) for a in anchors.get(b.channel, ()))

    return old


def compulsory_chains(
    live: Iterable[Block], frontier: Mapping[str, Iterable[Frontier]]
) -> dict[Block, frozenset[Invocation]]:
    """Heuristic (b): the live blocks after merging abutting same-kind deltas, each with the
    plan that makes it (empty for a materialized block, the chain invocations for a chain);
    ``frontier``: each channel's frontier set (:func:`frontier_sets`).

    A point ``T`` merges when deltas end and start there, ``B(T)`` is not live and ``T`` is not
    a frontier point; every delta then ends at a point that does not merge, as one chain per
    start point (the first found: a materialized delta over the same span, with its empty plan,
    before a chain of its parts). Where deltas branch (two made over overlapping spans, as a
    baseline's chains are) every path merges, so the live deltas per channel stay at most one
    per (start, end) pair of non-merging points and do not grow with each arrival [D]."""
    blocks = list(live)
    bases = {(b.channel, b.to) for b in blocks if b.is_base}
    groups: dict[tuple[str, str], list[Block]] = {}
    for b in blocks:
        if b.frm is not None:
            groups.setdefault((b.channel, b.kind), []).append(b)
    # first delta of each chain -> the chains it starts, in the order they were completed
    starting: dict[Block, list[tuple[Block, frozenset[Invocation]]]] = {}
    for (channel, _), deltas in groups.items():
        ends = {b.to for b in deltas}
        points = frontier.get(channel, ())

        def merges(p: Provenance) -> bool:
            return p in ends and (channel, p) not in bases and not _is_frontier(p, points)

        out: dict[Provenance, list[Block]] = {}
        for b in deltas:
            out.setdefault(b.frm, []).append(b)  # type: ignore[arg-type]
        # chains reaching each point, one per start point: (chain, its plan, its first delta)
        reach: dict[Provenance, dict[Provenance, tuple[Block, frozenset[Invocation], Block]]] = {}
        for p in _point_order(deltas):
            arriving = reach.pop(p, {})
            if merges(p) and p in out:
                for d in out[p]:
                    ahead = reach.setdefault(d.to, {})
                    for start, (c, plan, first) in arriving.items():
                        if start not in ahead:
                            joined, inv = chain(c, d)
                            ahead[start] = (joined, plan | {inv}, first)
                continue
            for c, plan, first in arriving.values():
                starting.setdefault(first, []).append((c, plan))
            for d in out.get(p, ()):
                reach.setdefault(d.to, {}).setdefault(p, (d, frozenset(), d))
    result: dict[Block, frozenset[Invocation]] = {}
    for b in blocks:
        if b.frm is None:
            result[b] = frozenset()
        for c, plan in starting.get(b, ()):
            result.setdefault(c, plan)
    return result


def _point_order(deltas: Sequence[Block]) -> list[Provenance]:
    """The points of ``deltas`` (their ``frm`` and ``to``) in a topological order of the
    deltas' spans, ties in order of first appearance (Kahn's algorithm)."""
    succ: dict[Provenance, list[Provenance]] = {}
    indegree: dict[Provenance, int] = {}
    for b in deltas:
        assert b.frm is not None
        succ.setdefault(b.frm, []).append(b.to)
        succ.setdefault(b.to, [])
        indegree.setdefault(b.frm, 0)
        indegree[b.to] = indegree.get(b.to, 0) + 1
    ready = deque(p for p in succ if indegree[p] == 0)
    order: list[Provenance] = []
    while ready:
        p = ready.popleft()
        order.append(p)
        for q in succ[p]:
            indegree[q] -= 1
            if indegree[q] == 0:
                ready.append(q)
    return order


def chain(first: Block, second: Block) -> tuple[Block, Invocation]:
    """Exactly abutting same-kind deltas as one (footnote 12 [P]: cost 0; sizes add)."""
    assert first.frm is not None
    out = Block(first.channel, first.kind, second.to, first.frm,
                rows=first.rows + second.rows, deletes=first.deletes + second.deletes)
    return out, Invocation(f"{first.channel}.chain", "chain", (first, second), (out,), 0.0)


def overkill_rule(actual: Iterable[Block], passes: Callable[[str, Provenance], bool], outputs: Iterable[str]):  # type: ignore[no-untyped-def]
    """Heuristic (d) as a predicate on potential blocks (never on outputs: a violated output
    has no actual block meeting its bounds)."""
    meeting: dict[tuple[str, str], list[Provenance]] = {}
    skip = set(outputs)
    for b in actual:
        if b.channel not in skip and passes(b.channel, b.to):
            meeting.setdefault((b.channel, b.kind), []).append(b.to)

    def pruned(b: Block) -> bool:
        return any(precedes(a, b.to) for a in meeting.get((b.channel, b.kind), ()))

    return pruned
