"""The labelling search's bound on what a label's pending updates add, compiled
(:mod:`staleness_lab.optimize.block_dp` holds the search and the same bound in Python, the
reference this one equals; measured on a 48-update block of Bateni's X2 instances at load .8 on
one track, the bound took 92 % of the search's time in Python).

Two bounds, as in :func:`staleness_lab.optimize.block_dp._rest`: the *release bound* (every
pending update ``j`` completes no earlier than its ready time, ``max(r_j, the earliest track,
its table)``, plus its own duration), an exact integer, and the *mean-busy-time bound* (Goemans
1996: preemptive Smith's rule on one machine of speed ``tracks`` from the ready times, ``Σ coef_j
(M_j + q_j/2)``), whose float operations are Python's in Python's order, slightly lowered against
rounding. Numbers are int64: :func:`bounds` reports when the release bound would not fit, and the
caller then uses the Python reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

#: Beyond this the release bound's int64 sum could overflow (the caller falls back to Python).
INT_LIMIT = 4.0e18


def instance_arrays(arrivals: Sequence[Sequence[int]], coef: Sequence[Sequence[int]],
                    pieces: Sequence[Sequence[int]], own: Sequence[Sequence[int]], rank: Sequence[Sequence[int]],
                    n: Sequence[int]) -> tuple[np.ndarray, ...] | None:
    """The search's instance as :func:`bounds` takes it (2-D int64 arrays ``[table, update]``,
    then the update counts), or None when a number is beyond int64's range (the caller then uses
    the Python reference)."""
    width = max(n, default=0)
    out = []
    for rows in (arrivals, coef, pieces, own, rank):
        if any(abs(v) > INT_LIMIT for row in rows for v in row):
            return None
        grid = np.zeros((len(n), width), dtype=np.int64)
        for i, row in enumerate(rows):
            grid[i, :len(row)] = row
        out.append(grid)
    return (*out, np.array(n, dtype=np.int64))


@njit(cache=True)
def _sift_down(heap: np.ndarray, key: np.ndarray, size: int) -> None:
    """Restore the min-heap ``heap[:size]`` (of indices, ordered by ``key``) after its root changed."""
    at = 0
    while True:
        child = 2 * at + 1
        if child >= size:
            return
        if child + 1 < size and key[heap[child + 1]] < key[heap[child]]:
            child += 1
        if key[heap[child]] >= key[heap[at]]:
            return
        heap[at], heap[child] = heap[child], heap[at]
        at = child


@njit(cache=True)
def _sift_up(heap: np.ndarray, key: np.ndarray, at: int) -> None:
    """Restore the min-heap after ``heap[at]`` was appended."""
    while at > 0:
        parent = (at - 1) // 2
        if key[heap[parent]] <= key[heap[at]]:
            return
        heap[at], heap[parent] = heap[parent], heap[at]
        at = parent


@njit(cache=True)
def bounds(r: np.ndarray, coef: np.ndarray, pieces: np.ndarray, own: np.ndarray, rank: np.ndarray,
           n: np.ndarray, pending: np.ndarray, track_free: int, table_free: np.ndarray,
           tracks: int, cutoff: float) -> tuple[int, float, bool]:
    """``(release bound, mean-busy-time bound, fits)`` of the updates ``pending[i]..n[i]-1`` of
    every table ``i`` (2-D arrays indexed ``[table, update]``); ``fits`` is False when the release
    bound may exceed int64 (both numbers are then meaningless). A search only asks whether the
    larger bound reaches ``cutoff``: once the release bound reaches it the busy-time bound is not
    computed (0.0), and once the busy-time bound's sum of non-negative terms reaches it the sum
    stops there; pass ``math.inf`` for both numbers in full."""
    tables = n.shape[0]
    m = 0
    for i in range(tables):
        m += n[i] - pending[i]
    ready = np.empty(m, np.int64)
    key = np.empty(m, np.int64)  # Smith's rank
    piece = np.empty(m, np.int64)
    weight = np.empty(m, np.int64)
    release = 0
    approx = 0.0
    k = 0
    for i in range(tables):
        floor = max(track_free, table_free[i])
        for j in range(pending[i], n[i]):
            at = max(r[i, j], floor)
            approx += abs(float(coef[i, j]) * float(at)) + abs(float(own[i, j]))
            release += coef[i, j] * at + own[i, j]
            ready[k] = at
            key[k] = rank[i, j]
            piece[k] = pieces[i, j]
            weight[k] = coef[i, j]
            k += 1
    if approx > INT_LIMIT:
        return 0, 0.0, False
    if release >= cutoff:
        return release, 0.0, True
    order = np.argsort(ready, kind="mergesort")
    left = np.zeros(m)
    busy = np.zeros(m)  # ∫ t · rate dt
    heap = np.empty(m, np.int64)  # the waiting pieces, Smith's order first (ranks are distinct)
    size = 0
    now = 0.0
    nxt = 0
    total = 0.0
    stop = cutoff / (1 - 1e-9)
    while nxt < m or size > 0:
        if size == 0:
            now = max(now, float(ready[order[nxt]]))
        while nxt < m and ready[order[nxt]] <= now:
            q = order[nxt]
            left[q] = float(piece[q])
            heap[size] = q
            _sift_up(heap, key, size)
            size += 1
            nxt += 1
        best = heap[0]
        finish = now + left[best] / tracks
        ends = nxt == m or finish <= ready[order[nxt]]  # by the end, as in Python: left alone may not reach 0
        until = finish if ends else float(ready[order[nxt]])
        busy[best] += tracks * (until * until - now * now) / 2
        left[best] = 0.0 if ends else left[best] - tracks * (until - now)
        now = until
        if not left[best] > 1e-9:
            size -= 1
            heap[0] = heap[size]
            _sift_down(heap, key, size)
            total += weight[best] * ((busy[best] / piece[best] if piece[best] else now) + piece[best] / 2)
            if total >= stop:
                break
    return release, total * (1 - 1e-9), True


def compile_bounds() -> None:
    """Compile :func:`bounds` (or load it from its cache) on a one-update instance, so no search
    pays the compilation inside its time limit (the Python reference search calls it from Python;
    :func:`staleness_lab.optimize.block_labels.compile_search` warms both)."""
    one = np.ones((1, 1), dtype=np.int64)
    bounds(one, one, one, one, np.zeros((1, 1), dtype=np.int64), np.ones(1, dtype=np.int64),
           np.zeros(1, dtype=np.int64), 0, np.zeros(1, dtype=np.int64), 1, math.inf)
