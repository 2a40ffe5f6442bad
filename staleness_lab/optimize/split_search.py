"""A plan for queries sharing one executor, found by annealing over each query's batch
boundaries with every candidate scheduled in the *split form* (this project's primal heuristic
for the batch planner of :mod:`staleness_lab.optimize.batch_plan`, Chandrasekaran & Sudarshan
§3.2 and the digest's §7).

**Why.** On A5 sets of 5 queries (N = 100) at ρ = 0.4 the slot model, hinted with the best
heuristic (2 misses), keeps one miss for 120 s on 2 workers although every query can be on
time; this search finds such a plan in well under a second, and phase 1 is then proven at once
(its bound 0 meets the plan's 0).

**The split form.** On one executor, when every query's last tuple arrives at the same time W
(A5: one window), some optimum (fewest misses, then least cost) runs every non-final batch before
every final one. A non-final batch that starts at or after W can be merged into its query's final
batch: costs are subadditive, so the merged batch is no longer than the two, and every step after
it may shift earlier since all tuples have arrived. A query that is late anyway is cheapest as one
batch at the very end, where it delays nobody. So the non-final batches run in the order of their
releases (the least makespan E of one machine with release times), and the finals, from
``max(E, W)``, in order of deadline (which meets every deadline when any order does).

Here that order is a list-scheduling rule valid for any arrivals: the queries kept on time have
their batches run as early as possible in the order (release, non-final first, then deadline),
each final followed by its aggregation; each query given up runs as one batch after all of them.

**The search** (deterministic: a seeded generator and fixed iteration counts). Stage 1 anneals the
boundaries (add, remove or shift one) to minimise the *overflow*, the sum of the kept queries'
lateness. When it cannot reach 0, the query whose removal leaves the least overflow (after a
shorter anneal without it) is given up, and stage 1 runs again (for the fewest misses; for the
least total tardiness no query is given up, and the overflow is that tardiness). Stage 2, with the kept set on
time, anneals the cost (batch durations and aggregations) with any overflow priced far above it.
Every number is an integer on the planner's grid (durations rounded up), so the plan found is
feasible for the true costs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

#: The most non-final batches a query may have in the search.
MAX_CUTS = 63
#: Annealing moves of stage 1 (per run) and of stage 2.
STAGE1_MOVES = 60_000
STAGE2_MOVES = 60_000
#: Moves of the shorter anneal that prices giving up one query.
DROP_MOVES = 8_000
#: Overflow is priced at this many cost units in stage 2.
OVERFLOW_PRICE = 1000


@dataclass(frozen=True)
class Tables:
    """Every query on the grid, padded to the longest: ``dur[q, x]`` the duration of a batch of
    ``x`` tuples, ``agg[q, n]`` the aggregation over ``n`` partials, ``release[q, c]`` the grid
    time tuple ``c`` has arrived by, ``deadline[q]`` and ``n[q]`` tuples."""

    dur: np.ndarray
    agg: np.ndarray
    release: np.ndarray
    deadline: np.ndarray
    n: np.ndarray


@dataclass(frozen=True)
class Found:
    """The search's answer: each query's non-final boundaries (the last tuple of each non-final
    batch, increasing) and whether it is kept on time, with the plan's misses and grid cost."""

    cuts: list[list[int]]
    kept: list[bool]
    misses: int
    cost: int


@njit(cache=True)
def _evaluate(dur, agg, release, deadline, n, rank, cuts, count, kept):  # pragma: no cover - compiled
    """(misses, overflow, cost) of the list schedule (module docstring) of ``cuts``."""
    nq = n.shape[0]
    items = 0
    for q in range(nq):
        if kept[q]:
            items += count[q] + 1
    key = np.empty(items, np.int64)
    work = np.empty(items, np.int64)
    owner = np.empty(items, np.int64)
    final = np.zeros(items, np.bool_)
    tags = nq + 1
    k = 0
    cost = 0
    misses = 0
    for q in range(nq):
        if not kept[q]:
            cost += dur[q, n[q]]
            continue
        prev = 0
        for j in range(count[q]):
            b = cuts[q, j]
            key[k] = release[q, b] * tags
            work[k] = dur[q, b - prev]
            owner[k] = q
            cost += work[k]
            prev = b
            k += 1
        key[k] = release[q, n[q]] * tags + 1 + rank[q]
        work[k] = dur[q, n[q] - prev] + agg[q, count[q] + 1]
        owner[k] = q
        final[k] = True
        cost += work[k]
        k += 1
    order = np.argsort(key, kind="mergesort")
    t = np.int64(-(1 << 60))
    overflow = 0
    for i in order:
        start = key[i] // tags
        if t < start:
            t = start
        t += work[i]
        if final[i]:
            q = owner[i]
            if t > deadline[q]:
                overflow += t - deadline[q]
                misses += 1
    for q in range(nq):  # each query given up: one batch after all the others, as schedule() runs it
        if not kept[q]:
            if t < release[q, n[q]]:
                t = release[q, n[q]]
            t += dur[q, n[q]]
            if t > deadline[q]:
                misses += 1
    return misses, overflow, cost


@njit(cache=True)
def _anneal(dur, agg, release, deadline, n, rank, cuts, count, kept, moves, price, t0, seed):  # pragma: no cover
    """Anneal ``cuts``/``count`` in place over the kept queries; score = overflow·price + cost
    (``price`` 0: overflow alone, stopping at 0). Leaves the best state found in place and
    returns its (misses, overflow, cost)."""
    np.random.seed(seed)
    nq = n.shape[0]
    pool = np.empty(nq, np.int64)
    m = 0
    for q in range(nq):
        if kept[q] and n[q] >= 2:
            pool[m] = q
            m += 1
    misses, overflow, cost = _evaluate(dur, agg, release, deadline, n, rank, cuts, count, kept)
    best = (overflow, cost, misses)
    best_cuts = cuts.copy()
    best_count = count.copy()
    if m == 0 or (price == 0 and overflow == 0):
        return misses, overflow, cost
    score = overflow * price + cost if price > 0 else overflow
    temp = t0
    floor = max(t0 * 0.01, 1e-9)
    decay = 1.0 - 6.0 / moves
    row = np.empty(cuts.shape[1], np.int64)
    saved = np.empty(cuts.shape[1], np.int64)   # the query's cuts before the move
    for _ in range(moves):
        q = pool[np.random.randint(0, m)]
        c = count[q]
        for j in range(c):
            row[j] = cuts[q, j]
        size = n[q]
        u = np.random.random()
        if u < 0.2 and c < cuts.shape[1] and c < size - 1:
            x = np.random.randint(1, size)
            pos = 0
            while pos < c and row[pos] < x:
                pos += 1
            if pos < c and row[pos] == x:
                continue
            for j in range(c, pos, -1):
                row[j] = row[j - 1]
            row[pos] = x
            c += 1
        elif u < 0.4 and c > 0:
            pos = np.random.randint(0, c)
            for j in range(pos, c - 1):
                row[j] = row[j + 1]
            c -= 1
        elif c > 0:
            pos = np.random.randint(0, c)
            reach = max(5, size // 20)
            step = 1 + int(np.random.random() ** 3 * reach)
            x = row[pos] + (step if np.random.random() < 0.5 else -step)
            lo = row[pos - 1] if pos > 0 else 0
            hi = row[pos + 1] if pos + 1 < c else size
            if x <= lo or x >= hi:
                continue
            row[pos] = x
        else:
            continue
        old_c = count[q]
        saved[:old_c] = cuts[q, :old_c]
        count[q] = c
        for j in range(c):
            cuts[q, j] = row[j]
        nm, no, nc = _evaluate(dur, agg, release, deadline, n, rank, cuts, count, kept)
        new = no * price + nc if price > 0 else no
        if new <= score or np.random.random() < np.exp((score - new) / temp):
            score = new
            if (no, nc) < (best[0], best[1]):
                best = (no, nc, nm)
                best_cuts[:, :] = cuts
                best_count[:] = count
                if price == 0 and no == 0:
                    break
        else:
            count[q] = old_c
            for j in range(old_c):
                cuts[q, j] = saved[j]
        temp = max(floor, temp * decay)
    cuts[:, :] = best_cuts
    count[:] = best_count
    return best[2], best[0], best[1]


def _deadline_rank(deadline: np.ndarray) -> np.ndarray:
    """Each query's place in the order of deadlines (ties by index): its final's tag."""
    rank = np.empty(len(deadline), np.int64)
    rank[np.argsort(deadline, kind="stable")] = np.arange(len(deadline))
    return rank


def search(tables: Tables, seed: int = 0, give_up: bool = True) -> Found:
    """The search of the module docstring over ``tables``; with ``give_up`` False (the planner's
    tardiness objective) no query is given up, and stage 1 minimises the total tardiness."""
    dur, agg, release = tables.dur, tables.agg, tables.release
    deadline, n = tables.deadline.astype(np.int64), tables.n.astype(np.int64)
    nq = len(n)
    rank = _deadline_rank(deadline)
    width = min(MAX_CUTS, max(1, int(n.max()) - 1), agg.shape[1] - 2)
    rng = np.random.default_rng(seed)
    cuts = np.zeros((nq, width), np.int64)
    count = np.zeros(nq, np.int64)
    for q in range(nq):  # two random cuts each to start from
        if n[q] >= 3 and width >= 2:
            cuts[q, :2] = np.sort(rng.choice(np.arange(1, n[q]), 2, replace=False))
            count[q] = 2
    kept = np.ones(nq, np.bool_)
    scale = float(np.mean([dur[q, 1] for q in range(nq)])) or 1.0
    args = (dur, agg, release, deadline, n, rank)
    while True:
        _, overflow, _ = _anneal(*args, cuts, count, kept, STAGE1_MOVES, 0, scale, seed)
        if overflow == 0 or not give_up:
            break
        trials = []
        for q in np.flatnonzero(kept):
            trial_kept, trial_cuts, trial_count = kept.copy(), cuts.copy(), count.copy()
            trial_kept[q], trial_count[q] = False, 0
            _, left, cost = _anneal(*args, trial_cuts, trial_count, trial_kept, DROP_MOVES, 0, scale, seed)
            trials.append((left, cost, int(q)))
        dropped = min(trials)[2]
        kept[dropped], count[dropped] = False, 0
    misses, overflow, cost = _anneal(*args, cuts, count, kept, STAGE2_MOVES, OVERFLOW_PRICE, scale / 4, seed + 1)
    return Found(cuts=[[int(x) for x in cuts[q, :count[q]]] for q in range(nq)], kept=[bool(k) for k in kept],
                 misses=int(misses), cost=int(cost))


def schedule(tables: Tables, found: Found) -> list[tuple[list[tuple[int, int, int]], int, int]]:
    """Each query's batches (start, end, size) on the grid and its final aggregation (start,
    duration), in the list schedule of the module docstring."""
    nq = len(tables.n)
    rank = _deadline_rank(tables.deadline)
    items = []   # (release, tag, query, first, last, work)
    for q in range(nq):
        if not found.kept[q]:
            continue
        bounds = [*found.cuts[q], int(tables.n[q])]
        prev = 0
        for j, b in enumerate(bounds):
            tag = 0 if j + 1 < len(bounds) else 1 + int(rank[q])
            items.append((int(tables.release[q, b]), tag, q, prev, b, int(tables.dur[q, b - prev])))
            prev = b
    items.sort(key=lambda it: (it[0], it[1]))
    batches: list[list[tuple[int, int, int]]] = [[] for _ in range(nq)]
    agg_at = [0] * nq
    t = None
    for release, tag, q, first, last, work in items:
        t = release if t is None else max(t, release)
        batches[q].append((t, t + work, last - first))
        t += work
        if tag:
            agg_at[q] = t
            t += int(tables.agg[q, len(batches[q])])
    for q in range(nq):
        if not found.kept[q]:
            t = int(tables.release[q, tables.n[q]]) if t is None else max(t, int(tables.release[q, tables.n[q]]))
            batches[q].append((t, t + int(tables.dur[q, tables.n[q]]), int(tables.n[q])))
            t += int(tables.dur[q, tables.n[q]])
            agg_at[q] = t
    return [(batches[q], agg_at[q], int(tables.agg[q, len(batches[q])])) for q in range(nq)]


def compile_search() -> None:
    """Compile the search (or load it from its cache) on two one-tuple queries, so no planner
    call pays the compilation (about 10 s) inside its time limit (``make setup`` calls it
    through :func:`staleness_lab.api.warm`)."""
    ones = np.ones((2, 2), np.int64)
    search(Tables(dur=ones, agg=np.zeros((2, 2), np.int64), release=ones, deadline=np.full(2, 3, np.int64),
                  n=np.ones(2, np.int64)))
