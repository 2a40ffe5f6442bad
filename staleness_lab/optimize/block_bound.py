"""The labelling search's bound on what a label's pending updates add, compiled
(:mod:`staleness_lab.optimize.block_dp` holds the search and the same bound in Python, the
reference this one equals; measured on a 48-update block of Bateni's X2 instances at load .8 on
one track, the bound took 92 % of the search's time in Python).

Two bounds, as in :func:`staleness_lab.optimize.block_dp._rest`: the *release bound* (every
pending update ``j`` completes no earlier than its ready time, ``max(r_j, the earliest track,
its table)``, plus its own duration), an exact integer, and the *mean-busy-time bound* (Goemans
1996: preemptive Smith's rule on one machine from the ready times, ``Σ coef_j (M_j + q_j/2)``,
ties in Smith's ratio ``q_j / coef_j`` broken by table, then update),
whose float operations are Python's in Python's order, slightly lowered against rounding. The
machine's speed at time t is the number of tracks free by t (a track still running a placed batch
adds nothing before it frees): no schedule on the tracks processes the pending pieces faster, so
its mean busy times are at least the relaxation's (preemptive Smith's rule is optimal for them
under any speed profile, by the same exchange), and each piece, run at rate 1 on one track, ends
q_j/2 after its own. With every track free from the start this is Goemans' speed-``tracks``
machine; on two tracks whose second frees late (the batch just placed), it is tighter. The speed
is also at most the number of tables with a pending job ready by t: a track processes pieces
only inside a batch, at rate at most 1, a table runs one batch at a time, and a batch of table i
starts no earlier than its first job's ready time, so at any t no more batches run than there
are tables with work ready (the count is the schedule's bound, fixed before it: it never falls,
and a table that finished its work early only runs slower than it allows). On two tracks with
one table ready this halves the speed until a second table's update arrives. Numbers
are int64: :func:`bounds` reports when the release bound would not fit, and the caller then uses
the Python reference.

**Forced batching** (a batch takes every update of its table arrived by its start) makes both
bounds tighter. A table's next batch starts no earlier than ``top = max(the earliest track, its
table, its first pending arrival)``, so it holds every pending update arrived by ``top``: they
complete together, no earlier than ``top`` plus that batch's duration, and their pieces run
one after another on one track. Both bounds take them as one job (its coef and piece the
sums, Smith's ratio the sums'); its piece still runs at rate 1 on one track, so it ends half
its size after its mean busy time, and the updates all complete at or after that end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

#: Beyond this the release bound's int64 sum could overflow (the caller falls back to Python).
INT_LIMIT = 4.0e18


def instance_arrays(arrivals: Sequence[Sequence[int]], coef: Sequence[Sequence[int]],
                    pieces: Sequence[Sequence[int]], own: Sequence[Sequence[int]],
                    n: Sequence[int]) -> tuple[np.ndarray, ...] | None:
    """The search's instance as :func:`bounds` takes it (2-D int64 arrays ``[table, update]``,
    then the update counts), or None when a number is beyond int64's range (the caller then uses
    the Python reference)."""
    width = max(n, default=0)
    out = []
    for rows in (arrivals, coef, pieces, own):
        if any(abs(v) > INT_LIMIT for row in rows for v in row):
            return None
        grid = np.zeros((len(n), width), dtype=np.int64)
        for i, row in enumerate(rows):
            grid[i, :len(row)] = row
        out.append(grid)
    return (*out, np.array(n, dtype=np.int64))


@njit(cache=True)
def _before(key: np.ndarray, x: int, y: int) -> bool:
    """Whether job x comes before job y in Smith's order: the lower ratio, then the earlier job."""
    return key[x] < key[y] or key[x] == key[y] and x < y


@njit(cache=True)
def _sift_down(heap: np.ndarray, key: np.ndarray, size: int) -> None:
    """Restore the min-heap ``heap[:size]`` (of job indices, in :func:`_before`'s order) after its root changed."""
    at = 0
    while True:
        child = 2 * at + 1
        if child >= size:
            return
        if child + 1 < size and _before(key, heap[child + 1], heap[child]):
            child += 1
        if not _before(key, heap[child], heap[at]):
            return
        heap[at], heap[child] = heap[child], heap[at]
        at = child


@njit(cache=True)
def _sift_up(heap: np.ndarray, key: np.ndarray, at: int) -> None:
    """Restore the min-heap after ``heap[at]`` was appended."""
    while at > 0:
        parent = (at - 1) // 2
        if not _before(key, heap[at], heap[parent]):
            return
        heap[at], heap[parent] = heap[parent], heap[at]
        at = parent


@njit(cache=True)
def workspace(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scratch arrays :func:`bounds_into` works in for an instance of update counts ``n``
    (a job per pending update at most, with its table; a merge pointer per table, and whether
    a job of it is ready): a search allocates them once, not once per label."""
    m = max(np.sum(n), n.shape[0], 1)
    return np.empty((9, m), np.int64), np.empty((3, m), np.float64)


@njit(cache=True)
def bounds(r: np.ndarray, coef: np.ndarray, pieces: np.ndarray, own: np.ndarray, n: np.ndarray, dur: np.ndarray,
           forced: bool, pending: np.ndarray, track_free: np.ndarray, table_free: np.ndarray,
           cutoff: float) -> tuple[int, float, bool]:
    """``(release bound, mean-busy-time bound, fits)`` of the updates ``pending[i]..n[i]-1`` of
    every table ``i`` (2-D arrays indexed ``[table, update]``; ``dur[i, a, b]`` the duration of a
    batch of updates a..b; ``forced``: forced batching, module docstring) when the tracks free
    at ``track_free`` (sorted) and the tables at ``table_free``; ``fits`` is False when the
    release bound may exceed int64 (both numbers are then meaningless). A search only asks
    whether the larger bound reaches ``cutoff``: once the release bound reaches it the busy-time
    bound is not computed (0.0), and once the busy-time bound's sum of non-negative terms
    reaches it the sum stops there; pass ``math.inf`` for both numbers in full."""
    ints, floats = workspace(n)
    return bounds_into(r, coef, pieces, own, n, dur, forced, pending, track_free, table_free, cutoff, ints, floats)


@njit(cache=True)
def bounds_into(r: np.ndarray, coef: np.ndarray, pieces: np.ndarray, own: np.ndarray, n: np.ndarray,
                dur: np.ndarray, forced: bool, pending: np.ndarray, track_free: np.ndarray, table_free: np.ndarray,
                cutoff: float, ints: np.ndarray, floats: np.ndarray) -> tuple[int, float, bool]:
    """:func:`bounds` in the scratch arrays of :func:`workspace` (their contents are overwritten)."""
    tables = n.shape[0]
    ready, piece, weight, heap, order = ints[0], ints[1], ints[2], ints[3], ints[4]
    head, ends = ints[5], ints[6]  # per table: its next job to merge, its jobs' end
    table, seen = ints[7], ints[8]  # per job its table; per table whether a job of it is ready
    key, left, busy = floats[0], floats[1], floats[2]  # Smith's ratio, work left, ∫ t · rate dt
    release = 0
    approx = 0.0
    k = 0
    for i in range(tables):
        head[i] = k  # table i's jobs are k.. (in order of ready time)
        floor = max(track_free[0], table_free[i])
        first = pending[i]
        j = first
        if forced and first < n[i]:  # the updates the next batch holds, as one job
            top = max(floor, r[i, first])
            w, q = 0, 0
            while j < n[i] and r[i, j] <= top:
                w += coef[i, j]
                q += pieces[i, j]
                j += 1
            approx += abs(float(w) * float(top + dur[i, first, j - 1]))
            release += w * (top + dur[i, first, j - 1])
            ready[k], piece[k], weight[k], table[k] = top, q, w, i
            key[k] = q / w if w else math.inf
            k += 1
        while j < n[i]:
            at = max(r[i, j], floor)
            approx += abs(float(coef[i, j]) * float(at)) + abs(float(own[i, j]))
            release += coef[i, j] * at + own[i, j]
            ready[k], piece[k], weight[k], table[k] = at, pieces[i, j], coef[i, j], i
            key[k] = pieces[i, j] / coef[i, j] if coef[i, j] else math.inf
            k += 1
            j += 1
        ends[i] = k
    m = k
    if approx > INT_LIMIT:
        return 0, 0.0, False
    if release >= cutoff:
        return release, 0.0, True
    # every table's jobs by ready time (a table's ready times never fall): merged, ties to the
    # lower table, which is the stable sort by ready time of the jobs in table order
    for slot in range(m):
        pick, at = -1, 0
        for i in range(tables):
            if head[i] < ends[i] and (pick < 0 or ready[head[i]] < at):
                pick, at = i, ready[head[i]]
        order[slot] = head[pick]
        head[pick] += 1
    size = 0
    now = 0.0
    nxt = 0
    total = 0.0
    stop = cutoff / (1 - 1e-9)
    tracks = track_free.shape[0]
    free = 0  # the tracks free by now
    present = 0  # the tables with a job ready by now
    seen[:tables] = 0
    while nxt < m or size > 0:
        if size == 0:
            now = max(now, float(ready[order[nxt]]))
        while nxt < m and ready[order[nxt]] <= now:
            q = order[nxt]
            left[q] = float(piece[q])
            busy[q] = 0.0
            heap[size] = q
            _sift_up(heap, key, size)
            if not seen[table[q]]:
                seen[table[q]] = 1
                present += 1
            size += 1
            nxt += 1
        while free < tracks and track_free[free] <= now:
            free += 1
        speed = min(free, present)
        event = math.inf  # the next arrival or the next track to free
        if nxt < m:
            event = float(ready[order[nxt]])
        if free < tracks:
            event = min(event, float(track_free[free]))
        best = heap[0]
        finish = now + left[best] / speed
        ends = finish <= event  # by the end, as in Python: left alone may not reach 0
        until = finish if ends else event
        busy[best] += speed * (until * until - now * now) / 2
        left[best] = 0.0 if ends else left[best] - speed * (until - now)
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
    bounds(one, one, one, one, np.ones(1, dtype=np.int64), np.ones((1, 1, 1), dtype=np.int64), True,
           np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), math.inf)
