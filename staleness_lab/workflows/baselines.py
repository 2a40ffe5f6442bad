"""Olston §7's baselines, GREEDY and RANDOM (digest §3 "Baselines" [P; D marked]).

Both see the same candidates: every block one invocation away from the live blocks (after
heuristics (a) and (b)), never materialized before (the store retires old blocks and lists
chains instead of their parts: made again, they would be retired again, and GREEDY would make
them forever) nor old under (a), passing its channel's (propagated) checks;
on an output channel only an accepted type monotonic with respect to the head (digest
correction 1) counts. A split's invocation is one candidate. A chain counts only from an
anchored point (:func:`anchored` [D]): heuristic (a) drops the deltas that end before a
channel's latest old base and keeps those that start there, and a chain extending one of
those makes nothing a shorter block could not; offered, RANDOM made every such chain on each
arrival (zero cost comes first), one per start point, and its search grew with them.

* GREEDY runs the cheapest candidate as a one-operator plan (ties: generation order [D]);
* RANDOM a zero-cost one (a chain) if there is any, else one uniformly at random, from its
  own seeded stream (ties among zero-cost ones uniformly too [D]).

The loop invokes either on the DP's events, once per event (digest, third-round correction 2;
the option ``reinvoke_until_fresh`` re-invokes it while an output bound is still violated, the
earlier [D], :mod:`.sim`). A step's plan is its invocation plus the zero-cost chains of
heuristic (b) that make its inputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from staleness_lab.workflows.blocks import BASE, Block, Invocation
from staleness_lab.workflows.candidates import Pool
from staleness_lab.workflows.planner import PlanResult, topological_order, monotonic
from staleness_lab.workflows.heuristics import Frontier, point
from staleness_lab.workflows.provenance import Provenance
from staleness_lab.workflows.schedule import Prepared, Scheduler


def anchored(live: Iterable[Block], points: Mapping[str, Iterable[Frontier]]) -> Callable[[Block], bool]:
    """Whether a delta starts at an anchored point of its channel: one where a live base or a
    live delta of its kind ends, or a frontier point (``points``: each channel's frontier set)."""
    ends = {(b.channel, BASE if b.is_base else b.kind, b.to) for b in live}
    frontier = {(name, p) for name, ps in points.items() for p in ps}

    def at(d: Block) -> bool:
        assert d.frm is not None
        return ((d.channel, BASE, d.frm) in ends or (d.channel, d.kind, d.frm) in ends
                or (d.channel, point(d.frm)) in frontier)

    return at


def candidates(scheduler: Scheduler, ready: Prepared, heads: Mapping[str, Provenance],
               retired: Collection[Block] = ()) -> list[tuple[Block, frozenset[Invocation]]]:
    """Every one-operator step from the live blocks (module docstring), in generation order:
    (the block it makes that qualified it, its plan). ``retired``: blocks made earlier that the
    store no longer lists (old under (a), or parts of a chain)."""
    ctx, live = ready.ctx, ready.live
    starts_anchored = anchored(live, ready.frontier)
    known = set(ready.actual) | set(live)
    pool = Pool()
    seen: set[Invocation] = set()
    steps: list[tuple[Block, frozenset[Invocation]]] = []
    for b in live:
        pool.add(b)
        for out, inv in ready.gen(b, pool):
            if inv in seen or out in known or out in retired or ready.old(out) or not ctx.candidate_ok(out):
                continue
            if inv.variant == "chain" and not starts_anchored(inv.inputs[0]):
                continue
            accepts = scheduler.accepts.get(out.channel)
            if accepts is not None and (out.kind not in accepts or not monotonic(heads[out.channel], out)):
                continue
            seen.add(inv)
            steps.append((out, frozenset().union(*(live.get(x, frozenset()) for x in inv.inputs)) | {inv}))
    return steps


def step(
    scheduler: Scheduler,
    kind: str,
    *,
    t: float,
    blocks: Iterable[Block],
    heads: Mapping[str, Provenance],
    last_targets: Mapping[str, Provenance],
    arrivals: Mapping[str, Sequence[float]],
    rng: np.random.Generator | None = None,
    retired: Collection[Block] = (),
) -> PlanResult:
    """One GREEDY (``kind="greedy"``) or RANDOM (``kind="random"``, with ``rng``) step at call
    time ``t`` as a :class:`PlanResult` (``retired`` as in :func:`candidates`); no candidate: every violated output is infeasible."""
    started = time.perf_counter()
    ready = scheduler.prepare(t=t, blocks=blocks, heads=heads, last_targets=last_targets, arrivals=arrivals)
    violated = scheduler.violated(ready.ctx)
    steps = candidates(scheduler, ready, heads, retired)
    if not steps:
        return PlanResult((), 0.0, {}, tuple(violated), 0, time.perf_counter() - started, ready.gen)
    costs = [sum(inv.cost for inv in sub) for _, sub in steps]
    if kind == "greedy":
        pick = min(range(len(steps)), key=costs.__getitem__)
    else:
        assert rng is not None
        free = [k for k, c in enumerate(costs) if c == 0]
        pool = free or list(range(len(steps)))
        pick = pool[int(rng.integers(len(pool)))]
    out, sub = steps[pick]
    chosen = {out.channel: out} if out.channel in scheduler.accepts else {}
    order = {inv: k for k, inv in enumerate(sorted(sub, key=lambda inv: inv.label()))}
    invocations = topological_order(set(sub), order)
    return PlanResult(invocations, costs[pick], chosen, (), len(steps), time.perf_counter() - started, ready.gen)
