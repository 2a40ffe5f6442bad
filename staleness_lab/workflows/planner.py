"""Algorithm 1 (Olston §6.1): Dijkstra over blocks, with invocations as hyperedges (Knuth 1977).

Digest §3 [P; fixes marked there]::

    PLAN(W, blocks, C, now):
      C* <- propagate(C); live <- compulsory_chains(prune_old(blocks))      # (a)-(c)
      best[b] <- (empty plan, 0) and push b, for every live b
      while Q: pop (b, c); skip if b is done or c is stale (lazy deletion)
         [rule (e): skip a potential b dominated by a generated b' of its channel and type]
         done[b] <- best[b]
         for (b', p', c') in blockGen(b, done): skip b' if done, overkill (d) or dominated (e);
            keep it if cheaper: p' = union of the inputs' plans + the invocation, c' = its cost
      return selectOutputBlocks(done)

Rule (e)'s order is footnote 4's on ``hi`` per element; an empty element (an asynchronous
union's untouched side) compares only with an empty one under ``empty_incomparable`` (digest,
third-round correction 1: a one-sided and a two-sided delta of one channel do not dominate each
other), and as ``hi = -inf`` with it off.

``selectOutputBlocks``: for each output currently violated, among the optimized blocks on it of
an accepted type that are monotonic with respect to its head (digest correction 1: applicable to
the head, and every non-empty element of the target at least as late as the head's) and pass
its checks, the cheapest; ties to the later target (``>=``), then the earlier generated.
None: the output is INFEASIBLE. The plan is the union of the chosen plans in topological order.
A plan's cost counts each invocation once (shared sub-plans), which makes the search exact
without sharing and a heuristic with it (digest A6).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from staleness_lab.workflows.blocks import Block, Invocation
from staleness_lab.workflows.candidates import BlockGen, Pool
from staleness_lab.workflows.context import Options, PlanContext
from staleness_lab.workflows.provenance import Provenance, applicable, apply, hi_element, precedes

SubPlan = frozenset[Invocation]
#: Settled blocks between two looks at the clock against a call's deadline.
_CLOCK_EVERY = 256


class OutOfTime(Exception):
    """A call passed its deadline (``time.process_time``) before its search ended."""


@dataclass(frozen=True)
class PlanResult:
    """One scheduler call's answer: the invocations to run (topological order), their estimated
    cost, the block chosen per repaired output, the outputs no plan repairs, and the block
    generator the call planned with (which re-estimates the plan's costs as it runs)."""

    invocations: tuple[Invocation, ...]
    cost: float
    chosen: Mapping[str, Block]
    infeasible: tuple[str, ...]
    optimized: int  # blocks the search settled
    seconds: float
    gen: BlockGen


@dataclass(frozen=True)
class OutputSpec:
    """An output channel as selection sees it: accepted types and the current head."""

    accepts: frozenset[str]
    head: Provenance


def plan(
    ctx: PlanContext,
    gen: BlockGen,
    live: Mapping[Block, SubPlan],
    outputs: Mapping[str, OutputSpec],
    violated: Iterable[str],
    options: Options,
    overkill: Callable[[Block], bool] | None = None,
    deadline: float = math.inf,
) -> PlanResult:
    """Algorithm 1 from ``live`` blocks (each with the zero-cost plan that makes it: empty for
    a materialized block, its chain invocation for a compulsory chain); :class:`OutOfTime` once
    the process's CPU time passes ``deadline`` (a run's scheduler budget: one call of a search
    that blows up can otherwise take many minutes)."""
    started = time.perf_counter()
    order: dict[Invocation, int] = {}
    best: dict[Block, tuple[SubPlan, float, int]] = {}
    heap: list[tuple[float, int, Block]] = []
    seq = 0
    for b, sub in live.items():
        best[b] = (sub, 0.0, seq)
        for inv in sub:
            order.setdefault(inv, len(order))
        heapq.heappush(heap, (0.0, seq, b))
        seq += 1
    actual = frozenset(live)
    done: dict[Block, tuple[SubPlan, float, int]] = {}
    pool = Pool()
    # Rule (e): per (channel, type), the maximal hi-vectors of the generated potential targets.
    # ``precedes`` reads only hi per element, and a target below one below a maximal one is
    # below the maximal one, so testing the maximal ones decides what testing all would.
    latest: dict[tuple[str, str], list[HiVector]] = {}

    empty_incomparable = options.empty_incomparable

    def dominated(b: Block) -> bool:
        v = _his(b.to, empty_incomparable)
        return any(_below(v, m) for m in latest.get((b.channel, b.kind), ()))

    while heap:
        cost, _, b = heapq.heappop(heap)
        if b in done or cost != best[b][1]:
            continue
        if options.longterm and b not in actual and dominated(b):
            continue
        done[b] = best[b]
        if len(done) % _CLOCK_EVERY == 0 and time.process_time() > deadline:
            raise OutOfTime
        pool.add(b)
        for out, inv in gen(b, pool):
            if out in done or out in actual:
                continue
            if not ctx.candidate_ok(out):
                continue
            if overkill is not None and options.overkill and overkill(out):
                continue
            if options.longterm and dominated(out):
                continue
            sub = frozenset().union(*(done[x][0] for x in inv.inputs)) | {inv}
            new_cost = sum(i.cost for i in sub)
            order.setdefault(inv, len(order))
            if out not in best or new_cost < best[out][1]:
                if out not in best:
                    _keep_maximal(latest.setdefault((out.channel, out.kind), []), _his(out.to, empty_incomparable))
                best[out] = (sub, new_cost, seq)
                heapq.heappush(heap, (new_cost, seq, out))
                seq += 1
    return _select(ctx, done, actual, outputs, violated, options, order, len(done), started, gen)


#: ``hi`` per element, None for an empty element read as incomparable.
HiVector = tuple[float | None, ...]


def _his(p: Provenance, empty_incomparable: bool) -> HiVector:
    """``p``'s ``hi`` per element; an empty element None when it is incomparable, else ``-inf``."""
    return tuple(None if empty_incomparable and not e else hi_element(e) for e in p)


def _below(a: HiVector, b: HiVector) -> bool:
    """``precedes`` on hi-vectors: every element at most, and not equal (footnote 4); an empty
    (None) element is comparable only with an empty one."""
    return a != b and all(x is None and y is None or x is not None and y is not None and x <= y
                          for x, y in zip(a, b, strict=True))


def _keep_maximal(front: list[HiVector], v: HiVector) -> None:
    """Add ``v`` to the maximal hi-vectors ``front`` (in place)."""
    if any(v == m or _below(v, m) for m in front):
        return
    front[:] = [m for m in front if not _below(m, v)] + [v]


def _select(
    ctx: PlanContext,
    done: Mapping[Block, tuple[SubPlan, float, int]],
    actual: frozenset[Block],
    outputs: Mapping[str, OutputSpec],
    violated: Iterable[str],
    options: Options,
    order: Mapping[Invocation, int],
    optimized: int,
    started: float,
    gen: BlockGen,
) -> PlanResult:
    chosen: dict[str, Block] = {}
    infeasible: list[str] = []
    union: set[Invocation] = set()
    for name in violated:
        spec = outputs[name]
        found = [b for b in done if b.channel == name and b not in actual and b.kind in spec.accepts
                 and monotonic(spec.head, b) and ctx.candidate_ok(b)]
        if options.longterm:
            his = {b: _his(b.to, options.empty_incomparable) for b in found}
            found = [b for b in found if not any(o.kind == b.kind and _below(his[b], his[o]) for o in found)]
        if not found:
            infeasible.append(name)
            continue
        pick = min(found, key=lambda b: (done[b][1], _LaterFirst(b.to), done[b][2]))
        chosen[name] = pick
        union |= done[pick][0]
    invocations = topological_order(union, order)
    return PlanResult(invocations, sum(i.cost for i in invocations), chosen, tuple(infeasible),
                      optimized, time.perf_counter() - started, gen)


def monotonic(head: Provenance, b: Block) -> bool:
    """Digest correction 1: the block applies to the head (a base always does) and every
    non-empty element of its target is at least as late as the head's; it must move the head."""
    if b.frm is not None and not applicable(head, b.frm, b.to):
        return False
    if any(e and hi_element(e) < hi_element(h) for e, h in zip(b.to, head, strict=True)):
        return False
    after = b.to if b.frm is None else apply(head, b.frm, b.to)
    return after != head


class _LaterFirst:
    """Sort key putting a later target (``>=``) before an earlier one; incomparable equal."""

    __slots__ = ("p",)

    def __init__(self, p: Provenance) -> None:
        self.p = p

    def __lt__(self, other: "_LaterFirst") -> bool:
        return precedes(other.p, self.p)

    def __eq__(self, other: object) -> bool:  # equal or incomparable: the next key decides
        return isinstance(other, _LaterFirst) and not precedes(self.p, other.p) and not precedes(other.p, self.p)


def topological_order(invocations: set[Invocation], order: Mapping[Invocation, int]) -> tuple[Invocation, ...]:
    """The invocations with every producer before its readers, ties in generation order."""
    made = {b: inv for inv in invocations for b in inv.outputs}
    pending = {inv: {made[b] for b in inv.inputs if b in made} for inv in invocations}
    ready = sorted((inv for inv, deps in pending.items() if not deps), key=order.__getitem__)
    result: list[Invocation] = []
    while ready:
        inv = ready.pop(0)
        result.append(inv)
        for other, deps in pending.items():
            if inv in deps:
                deps.discard(inv)
                if not deps:
                    ready.append(other)
        ready.sort(key=order.__getitem__)
    return tuple(result)
