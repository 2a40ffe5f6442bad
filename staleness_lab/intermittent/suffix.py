"""The exact single-query optimum one batch count at a time: a backward DP over suffixes.

Digest correction 1's exact reference, made fast enough for the paper's N = 4,500 (Fig. 6). The
problem is :func:`~staleness_lab.intermittent.single.exact`'s: the least ``Σ Cost(x_i) +
AggCost(n)`` over every split of the N tuples into n ordered batches on one executor, each
starting at ``max(previous end, InputTime(its last tuple))``, the final aggregation after the
last batch, completion ``<= D``; ties to the fewest batches, then the earliest completion. Every
number is an integer on one exact grid (the caller's ``value * scale``), so nothing is rounded.

**One batch count.** Let batch i end with tuple ``p_i`` and let ``σ_i`` be the duration of batch
i and every batch after it. The executor never idles after the latest release ``InputTime(p_i)``
that holds a batch back, and the first batch starts at its release, so the batches end at
``M = max_i (InputTime(p_i) + σ_i)``. With n fixed the plan meets D exactly when every
``InputTime(p_i) + σ_i <= D' = D - AggCost(n)``, and it costs ``σ_1 + AggCost(n)``. Backward
over the k batches left after tuple p, each state keeps the least pair ``(σ, M)``
(lexicographic) over the suffixes that meet D'. Putting a batch of duration c, ending with tuple
p', in front of a suffix gives ``(c + σ, max(InputTime(p') + c + σ, M))``: the first part grows
with σ, the second never falls with either, and whether the new batch meets D' depends on σ
alone. So the least pair of each state extends to the least pair of the next, and the DP is
exact. A layer is O(N^2) (numpy over p' per p); the plan of n batches needs n - 2 such layers
(the last batch's layer and the first's, at p = 0 alone, are O(N)).

**Over the batch counts** n = 1, 2, ...: the search stops when the last batch cannot end in time
(``InputTime(N) + Cost(1) + AggCost(n) > D``, and so for every larger n: AggCost never falls
from n = 2 on) or when no plan of n or more batches can cost less than the best found
(:func:`_floor`); a later count never wins a tie in cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: "No suffix meets D'": above every sum on the grid.
_INF = 1 << 62


def optimum_sizes(time: Sequence[int], cost: Sequence[int], agg: Sequence[int], deadline: int, *,
                  wide: bool = False) -> list[int] | None:
    """The batch sizes of the optimum (module docstring), or None when no plan meets D.

    ``time[p]`` is InputTime(p) and ``cost[x]`` is Cost(x) for p, x = 1..N (index 0 unused, and
    ``cost[0] = 0``), ``agg[j]`` AggCost(j) for j = 0..N, all on one integer grid, non-decreasing;
    ``wide``: the grid's numbers may not fit 64-bit sums, so the arrays hold Python integers."""
    n_tuples = len(cost) - 1
    dtype = object if wide else np.int64
    times, costs = np.array(time, dtype=dtype), np.array(cost, dtype=dtype)
    best: tuple[int, int, int] | None = None        # (total cost, batches, completion)
    sizes: list[int] | None = None
    if time[n_tuples] + cost[n_tuples] <= deadline:
        best, sizes = (cost[n_tuples], 1, time[n_tuples] + cost[n_tuples]), [n_tuples]
    floor = _floor(cost)
    for n in range(2, n_tuples + 1):
        if time[n_tuples] + cost[1] + agg[n] > deadline:
            break
        if best is not None and floor(n) + agg[n] >= best[0]:
            break
        found = _cheapest(times, costs, n, deadline - agg[n])
        if found is not None:
            key = (found[0] + agg[n], n, found[1] + agg[n])
            if best is None or key < best:
                best, sizes = key, found[2]
    return sizes


def _cheapest(times: np.ndarray, costs: np.ndarray, n: int, limit: int) -> tuple[int, int, list[int]] | None:
    """The least ``(σ, M)`` of ``n`` batches over all N tuples with every ``InputTime(p_i) + σ_i <=
    limit`` (module docstring), and its sizes; None when no split does."""
    n_tuples = len(costs) - 1
    last = times[n_tuples]
    # one batch left after p (p = n - 1 .. N - 1): it holds tuples p + 1..N
    done = np.arange(n - 1, n_tuples)
    sigma = np.full(n_tuples + 1, _INF, dtype=costs.dtype)
    span = np.full(n_tuples + 1, _INF, dtype=costs.dtype)
    tail = costs[n_tuples - done]
    fits = last + tail <= limit
    sigma[done] = np.where(fits, tail, _INF)
    span[done] = np.where(fits, last + tail, _INF)
    nexts: list[np.ndarray] = [np.full(n_tuples + 1, n_tuples)]
    for k in range(2, n + 1):                       # k batches left after p
        top = n_tuples - k + 1                      # the first of them ends with p' <= top
        rows = range(0, 1) if k == n else range(n - k, top)
        new_sigma = np.full(n_tuples + 1, _INF, dtype=costs.dtype)
        new_span = np.full(n_tuples + 1, _INF, dtype=costs.dtype)
        nxt = np.zeros(n_tuples + 1, dtype=np.int64)
        for p in rows:
            total = costs[1:top - p + 1] + sigma[p + 1:top + 1]       # σ of the suffix from p, p' = p+1..top
            ends = times[p + 1:top + 1] + total
            total = np.where(ends <= limit, total, _INF)              # an unmet suffix has σ = _INF: never fits
            least = total.min()
            if least >= _INF:
                continue
            ties = np.flatnonzero(total == least)
            spans = np.maximum(ends[ties], span[p + 1 + ties])
            pick = int(np.argmin(spans))
            new_sigma[p], new_span[p], nxt[p] = least, spans[pick], p + 1 + int(ties[pick])
        sigma, span = new_sigma, new_span
        nexts.append(nxt)
    if sigma[0] >= _INF:
        return None
    return int(sigma[0]), int(span[0]), walk_sizes(nexts, n)


def walk_sizes(nexts: Sequence[np.ndarray], n: int) -> list[int]:
    """The batch sizes of a backward suffix DP's plan of ``n`` batches from tuple 0:
    ``nexts[k - 1][p]`` is the tuple that ends the first of the ``k`` batches left after tuple p."""
    sizes, p = [], 0
    for k in range(n, 0, -1):
        q = int(nexts[k - 1][p])
        sizes.append(q - p)
        p = q
    return sizes


def _floor(cost: Sequence[int]) -> Callable[[int], int]:
    """``floor(n)``: no split into n or more batches costs less, time ignored. For any λ,
    ``Σ Cost(x_i) >= λ·N + n·min_x (Cost(x) - λ·x)`` (Lagrange); with λ the chord slope
    ``(Cost(N) - Cost(1)) / (N - 1)`` that is ``Cost(N) + (n - 1)(Cost(1) - λ)`` for a concave
    cost. It grows with n only when the minimum is >= 0, so the floor is its larger with the
    plain ``n·Cost(1)`` (every batch costs at least Cost(1)) then, else the plain one alone.
    Integers throughout: the bound is scaled by N - 1 and rounded up."""
    n_tuples = len(cost) - 1
    if n_tuples < 2:
        return lambda n: n * cost[1]
    rise, run = cost[n_tuples] - cost[1], n_tuples - 1
    least = min(run * cost[x] - rise * x for x in range(1, n_tuples + 1))

    def floor(n: int) -> int:
        plain = n * cost[1]
        if least < 0:
            return plain
        return max(plain, -((-(rise * n_tuples + n * least)) // run))

    return floor
