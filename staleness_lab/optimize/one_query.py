"""The exact optimum of one query on its own executor, on the planner's grid, without CP-SAT.

A query that shares no executor (one query, or no more queries than executors) is planned
exactly by dynamic programming, so :func:`optimal_plan(..., method="decomposition")
<staleness_lab.optimize.batch_plan.optimal_plan>` proves it at once (bound = objective). The key is
the planner's: phase-1 value (late or not, or tardiness), then cost, batches, tardiness.

**On time by D'.** With every batch as early as its last tuple's release and the batch before
allow, a plan of ``n`` batches ends by ``D'`` exactly when, for every batch i (last tuple ``p_i``),
``release[p_i] + σ_i + agg[n] <= D'``, where ``σ_i`` is the duration of batch i and every batch after
it (the executor is never idle after the latest such release). The plan's cost is ``σ_1 + agg[n]``.
So, for fixed n, a DP backward over the batches left is exact with one number per state: the least
``σ`` of the suffix from tuple p on; a smaller σ only loosens every constraint before it
(:func:`cheapest_by`). O(n N^2) in numpy per n.

**The phases.** Misses: when some n meets D, the least (cost, n) over those n (no later n can cost
less once ``least(n) + agg[n]`` passes the best, :class:`~staleness_lab.optimize.decomposition.HeadLayers`);
when no n can (``release[N] + dur[1] + agg[n] > D`` ends the search), the query is late in every
plan and the least (cost, n, completion) is the forward DP's. Tardiness: the least completion over
n (the forward earliest-end DP) fixes ``T``; then the cheapest plan ending by ``D + T``. A search
that would need more than ``max_layers`` DP layers gives up (None): the caller then plans by CP-SAT.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from staleness_lab.intermittent.suffix import walk_sizes
from staleness_lab.optimize.decomposition import _INF, HeadLayers, QueryGrid, subadditive

#: The most DP layers (each O(N^2)) one query's search may build.
MAX_LAYERS = 60


@dataclass(frozen=True)
class Alone:
    """One query's optimum: batch ``sizes`` in order and its key (phase-1 value, cost, batches,
    tardiness), in grid units."""

    sizes: tuple[int, ...]
    key: tuple[int, int, int, int]


def cheapest_by(g: QueryGrid, n: int, end: int) -> tuple[int, tuple[int, ...]] | None:
    """The least ``Σ dur`` of ``n`` batches over all N tuples whose last batch ends by ``end``
    (module docstring), and the sizes; None when none does."""
    size = g.n + 1
    dur = np.array(g.dur, dtype=np.int64)
    room = end - np.array(g.release, dtype=np.int64)     # room[p'] = end - release[p']
    suffix = np.full(size, _INF, dtype=np.int64)
    suffix[g.n] = 0
    args = []
    for k in range(1, n + 1):                             # k batches left, from tuple p + 1
        nxt = np.full(size, _INF, dtype=np.int64)
        arg = np.zeros(size, dtype=np.int64)
        top = g.n - k + 1                                 # the first of them ends at p' <= top
        for p in range(n - k, top):
            value = dur[1:top - p + 1] + suffix[p + 1:top + 1]
            value = np.where(value <= room[p + 1:top + 1], value, _INF)
            best = int(np.argmin(value))
            nxt[p], arg[p] = value[best], p + 1 + best
        suffix = nxt
        args.append(arg)
    if suffix[0] >= _INF:
        return None
    return int(suffix[0]), tuple(walk_sizes(args, n))


def alone(g: QueryGrid, objective: str, *, max_layers: int = MAX_LAYERS,
          stop: Callable[[], bool] | None = None) -> Alone | None:
    """The optimum of one query on its own executor (module docstring), or None past
    ``max_layers`` or once ``stop`` says so (it is asked before each DP layer)."""
    layers = HeadLayers(g.dur, g.release)
    merges = subadditive(g.dur)
    top, deadline, agg, dur = g.last_release, g.deadline, g.agg, g.dur
    backward = [0]

    def spend(count: int) -> bool:
        """Whether the layers built (forward ones and ``count`` more backward) stay in the budget."""
        backward[0] += count
        return backward[0] + layers.built <= max_layers and not (stop is not None and stop())

    if objective == "misses":
        late = 0
    else:
        soonest = _soonest(g, layers, spend)
        if soonest is None:
            return None
        late = max(0, soonest - deadline)
    end = deadline + late
    found: tuple[int, int, tuple[int, ...]] | None = None     # (cost, n, sizes)
    for n in range(1, g.n + 1):
        if n >= 2 and top + dur[1] + agg[n] > end:
            break                                           # nor can any later n end by D'
        if found is not None and _floor(layers, merges, n, g) > found[0]:
            break
        if not spend(n):
            return None
        plan = cheapest_by(g, n, end - agg[n])
        if plan is not None:
            cost = plan[0] + agg[n]
            if found is None or (cost, n) < found[:2]:
                found = (cost, n, plan[1])
    if found is not None:
        phase1 = late if objective == "tardiness" else 0
        return Alone(sizes=found[2], key=(phase1, found[0], found[1], late))
    if objective != "misses":
        return None                                         # D + T is met by construction
    return _late(g, layers, merges, spend)


def _floor(layers: HeadLayers, merges: bool, n: int, g: QueryGrid) -> int:
    """No plan of n or more batches costs less (merging never costs more when ``merges``; ``agg``
    never falls from n = 2 on and ``agg[1] = 0``)."""
    return (layers.least_at(n, g.n) if merges else n * g.dur[1]) + g.agg[n]


def _soonest(g: QueryGrid, layers: HeadLayers, spend: Callable[[int], bool]) -> int | None:
    """The earliest completion of any plan (forward earliest-end DP over n)."""
    best = g.last_release + g.dur[g.n]
    for n in range(2, g.n + 1):
        if g.last_release + g.dur[1] + g.agg[n] >= best:
            return best
        if not spend(0):
            return None
        best = min(best, int(layers.soon(n)[0][g.n]) + g.agg[n])
    return best


def _late(g: QueryGrid, layers: HeadLayers, merges: bool, spend: Callable[[int], bool]) -> Alone | None:
    """Late in every plan: the least (cost, n, completion), forward (cost first, then end)."""
    best: tuple[int, int, int] | None = None
    for n in range(1, g.n + 1):
        if best is not None and _floor(layers, merges, n, g) > best[0]:
            break
        if not spend(0):
            return None
        cost, finish = layers.cheap(n)[0][g.n], layers.cheap(n)[1][g.n]
        key = (int(cost) + g.agg[n], n, int(finish) + g.agg[n])
        if best is None or key < best:
            best = key
    if best is None:
        return None
    sizes = layers.split(best[1], g.n)
    return Alone(sizes=sizes, key=(1, best[0], best[1], best[2] - g.deadline))
