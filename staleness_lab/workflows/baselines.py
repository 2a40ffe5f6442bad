"""Olston §7's baselines, GREEDY and RANDOM (digest §3 "Baselines" [P; D marked]).

Both see the same candidates: every block one invocation away from the live blocks (after
heuristics (a) and (b)), never materialized before (the store retires old blocks and lists
chains instead of their parts: made again, they would be retired again, and GREEDY would make
them forever) nor old under (a), passing its channel's (propagated) checks;
on an output channel only an accepted type monotonic with respect to the head (digest
correction 1) counts. A split's invocation is one candidate.

* GREEDY runs the cheapest candidate as a one-operator plan (ties: generation order [D]);
* RANDOM a zero-cost one (a chain) if there is any, else one uniformly at random, from its
  own seeded stream (ties among zero-cost ones uniformly too [D]).

The loop re-invokes either while an output bound is still violated [D]. A step's plan is its
invocation plus the zero-cost chains of heuristic (b) that make its inputs.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence

import numpy as np

from staleness_lab.workflows.blocks import Block, Invocation
from staleness_lab.workflows.candidates import Pool
from staleness_lab.workflows.planner import PlanResult, topological_order, monotonic
from staleness_lab.workflows.provenance import Provenance
from staleness_lab.workflows.schedule import Prepared, Scheduler


def candidates(scheduler: Scheduler, ready: Prepared, heads: Mapping[str, Provenance],
               retired: Collection[Block] = ()) -> list[tuple[Block, frozenset[Invocation]]]:
    """Every one-operator step from the live blocks (module docstring), in generation order:
    (the block it makes that qualified it, its plan). ``retired``: blocks made earlier that the
    store no longer lists (old under (a), or parts of a chain)."""
    ctx, live = ready.ctx, ready.live
    known = set(ready.actual) | set(live)
    pool = Pool()
    seen: set[Invocation] = set()
    steps: list[tuple[Block, frozenset[Invocation]]] = []
    for b in live:
        pool.add(b)
        for out, inv in ready.gen(b, pool):
            if inv in seen or out in known or out in retired or ready.old(out) or not ctx.candidate_ok(out):
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
        return PlanResult((), 0.0, {}, tuple(violated), 0, time.perf_counter() - started)
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
    return PlanResult(invocations, costs[pick], chosen, (), len(steps), time.perf_counter() - started)
