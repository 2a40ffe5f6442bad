"""Check 7 (digest §7): Algorithm 1 against the cheapest valid set of invocations found by
enumeration, on small random instances of the E8 join.

An instance (:func:`random_instance`) is digests x click scores -> output with random arrivals
(2-4 crawls, 1-3 click snapshots: at most 6 blocks per channel), row counts, deletions on the
keyed scores, staleness and inconsistency bounds, head and instant. :func:`closure` lists every
invocation reachable from the live blocks whose outputs pass their checks; :func:`cheapest`
tries every subset of it (each invocation costed once, as a plan's cost counts a shared
sub-plan once, digest A6) and keeps the cheapest in which every invocation can fire from live or
produced blocks and a produced block repairs the output.

With heuristics (a)-(e) off, Dijkstra over hyperedges is exact when the cheapest set reads no
produced block twice (:func:`is_tree`) and an upper bound otherwise, so Algorithm 1's cost is
never below the minimum and equals it on trees [P §6.1; digest A6]. :func:`compare` measures
that on many instances, with the long-term rule (e) on beside it (the one heuristic that acts
inside the search; (a)-(c) shape its input and (d) needs the workflow's other outputs), for
report 06 and the tests.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from staleness_lab.workflows.blocks import BASE, DELTA, Block, Invocation
from staleness_lab.workflows.candidates import BlockGen, OpView, Pool, reestimate, relation_rows
from staleness_lab.workflows.context import Options, PlanContext, channel_kinds
from staleness_lab.workflows.costs import Rates
from staleness_lab.workflows.planner import OutputSpec, PlanResult, monotonic, plan
from staleness_lab.workflows.propagate import EffectiveBounds
from staleness_lab.workflows.provenance import prov

LAYOUTS = {"digests": (("digests", 0),), "scores": (("scores", 0),), "output": (("digests", 0), ("scores", 0))}
#: Heuristics (a)-(e) off: the setting in which check 7 holds.
OFF = Options(prune_old=False, chains=False, propagate=False, overkill=False, longterm=False)
#: The most candidate invocations an instance may have (2^16 subsets).
MAX_CANDIDATES = 16


@dataclass(frozen=True)
class Instance:
    """One scheduler call on the E8 join: its checks, block generator, live blocks and output."""

    ctx: PlanContext
    gen: BlockGen
    live: tuple[Block, ...]
    spec: OutputSpec


def random_instance(rng: random.Random) -> Instance:
    """A random instance (module docstring); every draw comes from ``rng``."""
    crawl = sorted(rng.sample(range(1, 31), rng.randint(2, 4)))
    clicks = sorted(rng.sample(range(0, 31), rng.randint(1, 3)))
    now = max(crawl[-1], clicks[-1]) + 0.01
    bounds = {"output": EffectiveBounds((rng.choice([0.0, 3.0, 100.0]), None), rng.choice([0.0, 5.0, 24.0, 1000.0])),
              "scores": EffectiveBounds((rng.choice([5.0, 100.0]),), None)}
    head = prov(crawl[0], clicks[0])
    ctx = PlanContext(layouts=LAYOUTS, bounds=bounds, arrivals={"digests": crawl, "scores": clicks}, now=now,
                      heads={"output": head}, kinds=channel_kinds({"output": None}, ["digests", "scores"], "async-incr"),
                      keyed={"digests": False, "scores": True, "output": False})

    def rows() -> int:
        return rng.randint(0, 5)

    live = [Block("digests", BASE, prov(crawl[0]), rows=rows()), Block("output", BASE, head, rows=rows())]
    live += [Block("digests", DELTA, prov(b), prov(a), rows=rows()) for a, b in zip(crawl, crawl[1:])]
    live += [Block("scores", BASE, prov(c), rows=rows()) for c in clicks]
    for a, b in zip(clicks, clicks[1:]):
        n = rows()
        live.append(Block("scores", DELTA, prov(b), prov(a), rows=n, deletes=rng.randint(0, n)))
    join = OpView("join", "join", ("digests", "scores"), ("output",), rng.choice([0.5, 1.0, 2.0]),
                  Rates(alpha=rng.choice([0.0, 1.0])), (True, True))
    return Instance(ctx, BlockGen(ctx, [join], weak={}, relation_rows=relation_rows(live)), tuple(live),
                    OutputSpec(frozenset({BASE, DELTA}), head))


def closure(instance: Instance) -> list[Invocation]:
    """Every invocation reachable from the live blocks whose outputs pass their checks."""
    pool, seen, queue, invocations = Pool(), set(instance.live), list(instance.live), []
    for b in queue:
        pool.add(b)
        for out, inv in instance.gen(b, pool):
            if instance.ctx.candidate_ok(out):
                if inv not in invocations:
                    invocations.append(inv)
                if out not in seen:
                    seen.add(out)
                    queue.append(out)
    return invocations


def consistent(invocations: list[Invocation]) -> bool:
    """Every block the invocations make has one size estimate, whichever invocation makes it.

    Estimates follow the producer (a chain's delta has the rows of its parts, the same delta by
    ``c^{B delta}`` the difference of its bases' rows), and a consumer's cost follows its
    inputs' estimates. Where they differ, the hypergraph's costs depend on the path taken to a
    block, and Dijkstra keeps only the cheapest path to each block: exactness on trees needs
    consistent estimates."""
    sizes: dict[Block, tuple[float, float]] = {}
    for inv in invocations:
        for out in inv.outputs:
            if sizes.setdefault(out, (out.rows, out.deletes)) != (out.rows, out.deletes):
                return False
    return True


def cheapest(instance: Instance, invocations: list[Invocation]) -> tuple[float, list[Invocation]] | None:
    """The cheapest valid subset of ``invocations`` (module docstring) and its cost, or None.

    Each invocation is costed on the blocks the subset actually makes (re-estimated on its
    inputs as the producers chosen size them, as the run loop does before running one), so a
    subset never mixes one producer's block with another producer's size. Subsets are grown by
    firing one more invocation whose inputs exist and whose outputs do not yet, depth first:
    a subset's cost does not depend on the firing order, so each subset is visited once, and a
    branch stops at the first repairing output block or when its cost reaches the best found
    (costs are non-negative)."""
    live = {b: b for b in instance.live}
    spec, ctx = instance.spec, instance.ctx

    def repairs(b: Block) -> bool:
        return (b not in live and b.channel == "output" and b.kind in spec.accepts
                and monotonic(spec.head, b) and ctx.candidate_ok(b))

    best: list[Any] = [None, None]
    seen: set[frozenset[int]] = set()

    def search(fired: frozenset[int], made: dict[Block, Block], chosen: list[Invocation], cost: float) -> None:
        if best[0] is not None and cost >= best[0]:
            return
        if any(repairs(b) for inv in chosen for b in inv.outputs):
            best[0], best[1] = cost, list(chosen)
            return
        for k, planned in enumerate(invocations):
            if k in fired or not all(b in made for b in planned.inputs) or any(b in made for b in planned.outputs):
                continue
            after = fired | {k}
            if after in seen:
                continue
            seen.add(after)
            inv = reestimate(instance.gen, planned, tuple(made[b] for b in planned.inputs))
            if inv is not None:
                search(after, {**made, **{b: b for b in inv.outputs}}, [*chosen, inv], cost + inv.cost)

    search(frozenset(), live, [], 0.0)
    return None if best[0] is None else (best[0], best[1])


def is_tree(subset: list[Invocation], live: tuple[Block, ...]) -> bool:
    """No produced block is read twice by ``subset``."""
    reads = [b for inv in subset for b in inv.inputs if b not in live]
    return len(reads) == len(set(reads))


def dp(instance: Instance, options: Options = OFF) -> PlanResult:
    """Algorithm 1 on ``instance`` (its :class:`~staleness_lab.workflows.planner.PlanResult`)."""
    return plan(instance.ctx, instance.gen, {b: frozenset() for b in instance.live}, {"output": instance.spec},
                ["output"], options)


def compare(instances: int, seed: int, *, max_candidates: int = MAX_CANDIDATES) -> pd.DataFrame:
    """One row per random instance with at most ``max_candidates`` candidate invocations (others
    are drawn again): the minimum and its shape, Algorithm 1's cost with (a)-(e) off and with
    rule (e) on, and the seconds of each search."""
    rng = random.Random(seed)
    rows = []
    while len(rows) < instances:
        instance = random_instance(rng)
        invocations = closure(instance)
        if len(invocations) > max_candidates:
            continue
        started = time.perf_counter()  # the planner times itself the same way
        found = cheapest(instance, invocations)
        brute_s = time.perf_counter() - started
        off, longterm = dp(instance), dp(instance, replace(OFF, longterm=True))
        rows.append({
            "instance": len(rows), "candidates": len(invocations), "feasible": found is not None,
            "tree": found is not None and is_tree(found[1], instance.live), "consistent": consistent(invocations),
            "minimum": None if found is None else found[0],
            "dp_cost": None if off.infeasible else off.cost, "dp_longterm_cost": None if longterm.infeasible else longterm.cost,
            "brute_s": brute_s, "dp_s": off.seconds,
        })
    return pd.DataFrame(rows)
