"""Check 7 (digest §7): with heuristics (a)-(e) off, Algorithm 1's cost is never below the
cheapest valid set of invocations found by brute force, and equals it when that set uses no
produced block twice (a tree: Dijkstra over hyperedges is exact there).

Instances: the E8 join (digests x click scores -> output) with random arrivals, row counts,
head, inconsistency bound and instant; at most 6 blocks per channel and 12 candidate
invocations, every subset tried, each invocation costed once."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from staleness_lab.workflows.blocks import BASE, DELTA, Block, Invocation
from staleness_lab.workflows.candidates import BlockGen, OpView, Pool
from staleness_lab.workflows.context import Options, PlanContext, channel_kinds
from staleness_lab.workflows.costs import Rates
from staleness_lab.workflows.planner import OutputSpec, monotonic, plan
from staleness_lab.workflows.provenance import prov

LAYOUTS = {"digests": (("digests", 0),), "scores": (("scores", 0),), "output": (("digests", 0), ("scores", 0))}
OFF = Options(prune_old=False, chains=False, propagate=False, overkill=False, longterm=False)


@dataclass(frozen=True)
class Bounds:
    staleness: tuple[float | None, ...]
    inconsistency: float | None


@st.composite
def instances(draw):  # type: ignore[no-untyped-def]
    crawl = sorted(draw(st.sets(st.integers(1, 30), min_size=2, max_size=3)))
    clicks = sorted(draw(st.sets(st.integers(0, 30), min_size=1, max_size=2)))
    now = max(crawl[-1], clicks[-1]) + 0.01
    t_inc = draw(st.sampled_from([0.0, 5.0, 24.0, 1000.0]))
    stale = draw(st.sampled_from([0.0, 3.0, 100.0]))
    ctx = PlanContext(
        layouts=LAYOUTS,
        bounds={"output": Bounds((stale, None), t_inc), "scores": Bounds((draw(st.sampled_from([5.0, 100.0])),), None)},
        arrivals={"digests": crawl, "scores": clicks}, now=now,
        heads={"output": prov(crawl[0], clicks[0])},
        kinds=channel_kinds({"output": None}, ["digests", "scores"], "async-incr"),
        keyed={"digests": False, "scores": True, "output": False},
    )
    rows = st.integers(0, 5)
    live = [Block("digests", BASE, prov(crawl[0]), rows=draw(rows)), Block("output", BASE, prov(crawl[0], clicks[0]), rows=draw(rows))]
    live += [Block("digests", DELTA, prov(b), prov(a), rows=draw(rows)) for a, b in zip(crawl, crawl[1:])]
    live += [Block("scores", BASE, prov(c), rows=draw(rows)) for c in clicks]
    for a, b in zip(clicks, clicks[1:]):
        n = draw(rows)
        live.append(Block("scores", DELTA, prov(b), prov(a), rows=n, deletes=draw(st.integers(0, n))))
    sigma = draw(st.sampled_from([0.5, 1.0, 2.0]))
    join = OpView("join", "join", ("digests", "scores"), ("output",), sigma, Rates(alpha=draw(st.sampled_from([0.0, 1.0]))), (True, True))
    return ctx, BlockGen(ctx, [join], weak={}), live


def closure(ctx: PlanContext, gen: BlockGen, live: list[Block]) -> list[Invocation]:
    """Every invocation reachable from the live blocks whose outputs pass their checks."""
    pool, seen, queue, invocations = Pool(), set(live), list(live), []
    for b in queue:
        pool.add(b)
        for out, inv in gen(b, pool):
            if ctx.candidate_ok(out):
                if inv not in invocations:
                    invocations.append(inv)
                if out not in seen:
                    seen.add(out)
                    queue.append(out)
    return invocations


def brute_force(ctx: PlanContext, live: list[Block], invocations: list[Invocation], spec: OutputSpec):
    """The cheapest valid subset: every invocation fires from live or produced blocks (no
    cycles), and a produced block repairs the output. Returns (cost, subset) or None."""
    index: dict[Block, int] = {}
    for b in [*live, *(o for inv in invocations for o in inv.outputs)]:
        index.setdefault(b, len(index))
    need = [sum(1 << index[b] for b in inv.inputs) for inv in invocations]
    make = [sum(1 << index[b] for b in inv.outputs) for inv in invocations]
    good = sum(1 << i for b, i in index.items()
               if b not in live and b.channel == "output" and b.kind in spec.accepts
               and monotonic(spec.head, b) and ctx.candidate_ok(b))
    start = sum(1 << index[b] for b in live)
    best = None
    for mask in range(1, 1 << len(invocations)):
        chosen = [k for k in range(len(invocations)) if mask >> k & 1]
        have, fired, progress = start, set(), True
        while progress:
            progress = False
            for k in chosen:
                if k not in fired and need[k] & have == need[k]:
                    have |= make[k]
                    fired.add(k)
                    progress = True
        if len(fired) < len(chosen) or not have & good:
            continue
        cost = sum(invocations[k].cost for k in chosen)
        if best is None or cost < best[0]:
            best = (cost, [invocations[k] for k in chosen])
    return best


def tree(subset: list[Invocation], live: list[Block]) -> bool:
    """No produced block is read twice."""
    reads = [b for inv in subset for b in inv.inputs if b not in live]
    return len(reads) == len(set(reads))


@settings(max_examples=100, deadline=None)
@given(instances())
def test_algorithm1_matches_brute_force(instance) -> None:
    ctx, gen, live = instance
    invocations = closure(ctx, gen, live)
    assume(len(invocations) <= 12)
    spec = OutputSpec(frozenset({BASE, DELTA}), ctx.heads["output"])
    result = plan(ctx, gen, {b: frozenset() for b in live}, {"output": spec}, ["output"], OFF)
    found = brute_force(ctx, live, invocations, spec)
    event("infeasible" if found is None else "tree" if tree(found[1], live) else "shared")
    if found is None:
        assert result.infeasible == ("output",)
        return
    assert result.infeasible == ()
    assert result.cost >= found[0] - 1e-9
    if tree(found[1], live):
        assert result.cost == found[0]
