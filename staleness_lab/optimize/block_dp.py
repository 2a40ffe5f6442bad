"""An exact labelling search for small blocks of the X_w optimum (Bateni digest §5; this
project's addition beside the CP-SAT model of :mod:`staleness_lab.optimize.staleness_optimum`).

The schedules searched are the brute force's (:mod:`staleness_lab.optimize.brute_force`):
batches placed one after another, each left-shifted (it starts when its track, its table's
previous batch and its last update allow) and, with forced batching, starting before its
table's next arrival, each on the track that frees first, and none before the batch placed
before it: once a batch is placed at ``start``, a track that frees earlier counts as free at
``start``. That loses no schedule: take any schedule's batches in order of start (ties: by
table) and place them in that order, each left-shifted on the earliest-free track. By induction,
with every track's free time raised to the current batch's start (earlier times no longer
matter: every later batch starts no earlier), the placed tracks' sorted free times are at most
the schedule's: both put the batch on a track free by its start, the placed one ending no later
(its track, its table and its last update allow it no later). So every batch starts and ends no
later, in order of start, and the minimum is the optimum. The rule keeps the search from placing
the same batches in every order on several tracks (a batch that starts earlier but is placed
later), and the raised free times make more labels comparable.

A partial schedule is a *label* at the state ``pending`` (the next update of every table): its
objective so far (Σ coef · C over the updates placed, integers on the grid), the free times of
the tracks (sorted: tracks are identical) and of each table (a table's time is dropped to 0
when it no longer constrains: no track frees before it, or its next update arrives after it, or
it has none left). Labels are expanded state by state
in order of updates placed (every batch places at least one). A label is dropped when another
at its state is at least as good in all three (objective, every track, every table): whatever
completes the one completes the other no later. On one track, a batch is not placed right after one
that it should have preceded by Smith's rule (:func:`_swap_is_better`): the swapped pair reaches
the same state no later at a lower objective. A label is also dropped when its objective plus a
bound on the rest reaches ``upper``: the larger of the release bound (every pending update j
completes no earlier than ``max(r_j, the earliest track, its table) + its own duration``) and
the mean-busy-time bound (:func:`_busy_time_bound`), both with forced batching's next batch of
each table as one job (:mod:`staleness_lab.optimize.block_bound`). A child that a label at its
state covers is dropped before its bound is computed. The search gives up past ``budget``
labels (children kept by both rules) or the deadline, and then still bounds the optimum: once
every layer before a layer is done, an optimal schedule passes through a label made at that layer
or a later one, or one that covers it, or one cut at ``upper``; so the least cost plus bound of
those labels is a lower bound (labels dropped since only lower it), and the search keeps the
largest such bound over the layers it started, and the one when it gave up.

:func:`dive` is a beam search over the same labels (each layer keeps the labels of least cost
plus bound): a heuristic that finds a near-optimal schedule fast, to give the exact search a
lower ``upper``, and that is itself exact when no layer had more labels than its beam.

The search runs compiled (:mod:`staleness_lab.optimize.block_labels`, with the bound of
:mod:`staleness_lab.optimize.block_bound`) unless a number could pass int64; the loop here, with
:func:`_rest`, is the reference it equals. On a 48-update block of Bateni's X2 instances (load
.8, one track) 20,000 labels took 0.3 s compiled against 4.2 s here with the compiled bound, and
15-21 s with the bound in Python; proving that block takes about a million labels (6 s compiled,
with another job on the machine).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

import numpy as np


class _Label(NamedTuple):
    cost: int
    weight: int  # Σ coef of the last batch
    tracks: tuple[int, ...]
    tables: tuple[int, ...]
    parent: _Label | None
    batch: tuple[int, int, int, int, int] | None  # (table, first, last, start, end)
    lower: float = 0.0  # cost plus the bound on the rest


class _Instance(NamedTuple):
    """What both searches take of a block: the durations computed once (by key and as an array
    ``[table, first, last]``), each update's own release-bound term, and the compiled bound's
    arrays (None past int64)."""

    n: list[int]
    table: dict[tuple[int, int, int], int]
    durations: np.ndarray
    own: list[list[int]]
    arrays: tuple[np.ndarray, ...] | None


def _instance(arrivals: Sequence[Sequence[int]], dur: Callable[[int, int, int], int], coef: Sequence[Sequence[int]],
              pieces: Sequence[Sequence[int]]) -> _Instance:
    n = [len(row) for row in arrivals]
    table = {(i, a, b): dur(i, a, b) for i in range(len(n)) for a in range(n[i]) for b in range(a, n[i])}
    own = [[coef[i][j] * table[(i, j, j)] for j in range(n[i])] for i in range(len(n))]
    # numba comes with the search, not with the package: it maps ~180 MB (sim/compiled.py)
    from staleness_lab.optimize.block_bound import INT_LIMIT, instance_arrays

    arrays = instance_arrays(arrivals, coef, pieces, own, n)
    fits = arrays is not None and all(abs(value) <= INT_LIMIT for value in table.values())
    width = max(n, default=0)
    durations = np.zeros((len(n), width, width), dtype=np.int64)
    if fits:
        for (i, a, b), value in table.items():
            durations[i, a, b] = value
    return _Instance(n, table, durations, own, arrays if fits else None)


def dive(arrivals: Sequence[Sequence[int]], dur: Callable[[int, int, int], int], coef: Sequence[Sequence[int]],
         pieces: Sequence[Sequence[int]], tracks: int, forced: bool, upper: int, beam: int, budget: int,
         deadline: float) -> tuple[list[tuple[int, int, int, int, int]] | None, bool]:
    """A beam search over :func:`search`'s labels, to find a good schedule fast: each layer
    keeps the ``beam`` labels of least cost plus bound. The batches of the best schedule it
    reached below ``upper`` (``[]``: none), and whether that is proven minimal (no layer had more
    than ``beam`` labels, so the search was exact); ``(None, False)`` when it made ``budget``
    labels, ran past ``deadline`` or a number could pass int64 (it runs compiled only)."""
    from staleness_lab.optimize.block_labels import BEAM_CUT, FOUND

    block = _instance(arrivals, dur, coef, pieces)
    found = "overflow" if block.arrays is None else _compiled_search(block, coef, tracks, forced, upper, budget,
                                                                     deadline, beam)
    if found == "overflow" or found[0] not in (FOUND, BEAM_CUT):
        return None, False
    return found[1], found[0] == FOUND


class Searched(NamedTuple):
    """:func:`search`'s answer: the ``batches`` ``(table, first, last, start, end)`` of a
    schedule with objective Σ coef·C below ``upper``, minimal among them (``[]``: none is below
    ``upper``, so a schedule of objective ``upper`` is optimal; None: the search gave up), and
    ``lower``, an integer no schedule's objective is below (the batches' objective, ``upper``
    when none, and when the search gave up the largest bound of its open labels at the start of
    a layer or when it stopped, at least the root's: module docstring)."""

    batches: list[tuple[int, int, int, int, int]] | None
    lower: int


def search(arrivals: Sequence[Sequence[int]], dur: Callable[[int, int, int], int], coef: Sequence[Sequence[int]],
           pieces: Sequence[Sequence[int]], tracks: int, forced: bool, upper: int, budget: int, deadline: float,
           compiled: bool = True) -> Searched:
    """The minimal schedule below ``upper``, or the search's lower bound when it gave up
    (:class:`Searched`, module docstring). The compiled search
    (:mod:`staleness_lab.optimize.block_labels`) runs unless ``compiled`` is False or a number
    could pass int64; this loop is its reference."""
    from staleness_lab.optimize.block_bound import bounds
    from staleness_lab.optimize.block_labels import FOUND

    block = _instance(arrivals, dur, coef, pieces)
    n, table, durations, own, arrays = block
    dur = lambda i, a, b: table[(i, a, b)]  # noqa: E731 - the durations, computed once
    if compiled and arrays is not None:
        found = _compiled_search(block, coef, tracks, forced, upper, budget, deadline)
        if found != "overflow":
            status, batches, open_bound = found
            if status != FOUND:
                return Searched(None, math.ceil(open_bound))
            return Searched(batches, _objective(batches, coef) if batches else upper)

    def rest(done: tuple[int, ...], child: _Label) -> float:
        if arrays is not None:
            release, busy, fits = bounds(*arrays, durations, forced, np.array(done, dtype=np.int64),
                                         np.array(child.tracks, dtype=np.int64), np.array(child.tables, dtype=np.int64),
                                         math.inf)
            if fits:
                return max(release, busy)
        return _rest(arrivals, coef, pieces, own, dur, forced, done, child)

    root = _Label(0, 0, (0,) * tracks, (0,) * len(n), None, None)
    root = root._replace(lower=rest(tuple(0 for _ in n), root))
    layers: list[dict[tuple[int, ...], list[_Label]]] = [{} for _ in range(sum(n) + 1)]
    layers[0][tuple(0 for _ in n)] = [root]
    layer_low = [math.inf] * len(layers)  # each layer's least cost plus bound, over the labels made there
    layer_low[0] = lower = root.lower
    made = 0
    for at, layer in enumerate(layers[:-1]):
        lower = max(lower, min(upper, *layer_low[at:]))  # the open labels' bound (module docstring)
        for pending, labels in layer.items():
            for label in labels:
                for child, done in _children(arrivals, dur, coef, forced, n, pending, label):
                    depth = sum(done)
                    there = layers[depth].setdefault(done, [])
                    if any(_covers(old, child) for old in there):
                        continue
                    child = child._replace(lower=child.cost + rest(done, child))
                    if child.lower >= upper:
                        continue
                    made += 1
                    if made > budget or made % 256 == 0 and time.perf_counter() > deadline:
                        return Searched(None, math.ceil(max(lower, min(upper, *layer_low[at:]))))
                    there[:] = [old for old in there if not _covers(child, old)]
                    there.append(child)
                    layer_low[depth] = min(layer_low[depth], child.lower)
    best = min(layers[-1].get(tuple(n), []), key=lambda label: label.cost, default=None)
    out = []
    while best is not None and best.batch is not None:
        out.append(best.batch)
        best = best.parent
    return Searched(out[::-1], _objective(out, coef) if out else upper)


def _objective(batches: list[tuple[int, int, int, int, int]], coef: Sequence[Sequence[int]]) -> int:
    """Σ coef · C over the updates of ``batches``."""
    return sum(end * sum(coef[i][a:b + 1]) for i, a, b, _, end in batches)


def _compiled_search(block: _Instance, coef: Sequence[Sequence[int]], tracks: int, forced: bool, upper: int,
                     budget: int, deadline: float, beam: int = 0
                     ) -> tuple[int, list[tuple[int, int, int, int, int]], float] | str:
    """:func:`staleness_lab.optimize.block_labels.search`'s status, batches and lower bound, or ``"overflow"``
    when a cost could pass int64 (every end is at most the last arrival plus, per update, the
    longest batch holding it; a cost is at most Σ coef times that)."""
    from staleness_lab.optimize.block_bound import INT_LIMIT
    from staleness_lab.optimize.block_labels import OVERFLOW, search as compiled, state_radices

    n, arrays, dur = block.n, block.arrays, block.durations
    # per update j, the longest batch a..b holding it: max over a <= j of (max over b >= j of dur[i, a, b])
    holding = np.maximum.accumulate(np.maximum.accumulate(dur[:, :, ::-1], axis=2)[:, :, ::-1], axis=1)
    longest = sum(int(holding[i, j, j]) for i, count in enumerate(n) for j in range(count))
    last = int(arrays[0].max()) if arrays[0].size else 0
    radices = state_radices(n)
    if radices is None or sum(map(sum, coef)) * (last + longest) > INT_LIMIT or upper > INT_LIMIT or budget > INT_LIMIT:
        return "overflow"
    try:
        status, batches, lower = compiled(*arrays, dur, radices, tracks, forced, upper, budget, deadline, beam)
    except SystemError as error:
        # A signal handler raised inside the search's clock check (Python code, every 256 labels):
        # the search returns at once and CPython reports its exception as this error's cause.
        if error.__cause__ is None:
            raise
        raise error.__cause__ from None
    return "overflow" if status == OVERFLOW else (int(status), [tuple(int(v) for v in row) for row in batches],
                                                   float(lower))


def _children(arrivals: Sequence[Sequence[int]], dur: Callable[[int, int, int], int], coef: Sequence[Sequence[int]],
              forced: bool, n: list[int], pending: tuple[int, ...], label: _Label
              ) -> Iterator[tuple[_Label, tuple[int, ...]]]:
    """Every label one batch further, with its state."""
    for i, a in enumerate(pending):
        if a == n[i]:
            continue
        weight = 0
        for b in range(a, n[i]):
            weight += coef[i][b]
            start = max(label.tracks[0], label.tables[i], arrivals[i][b])  # on the earliest-free track
            if forced and b + 1 < n[i] and start >= arrivals[i][b + 1]:
                continue
            end = start + dur(i, a, b)
            if len(label.tracks) == 1 and _swap_is_better(arrivals, forced, n, label, i, b, weight, start, end):
                continue
            tracks = tuple(sorted((end,) + tuple(max(t, start) for t in label.tracks[1:])))
            done = pending[:i] + (b + 1,) + pending[i + 1:]
            tables = tuple(0 if t <= tracks[0] or done[h] == n[h] or t <= arrivals[h][done[h]] else t
                           for h, t in enumerate(label.tables[:i] + (end,) + label.tables[i + 1:]))
            yield _Label(label.cost + weight * end, weight, tracks, tables, label, (i, a, b, start, end)), done


def _swap_is_better(arrivals: Sequence[Sequence[int]], forced: bool, n: list[int], label: _Label, i: int, last: int,
                    weight: int, start: int, end: int) -> bool:
    """On one track: whether the new batch Y (table i, updates up to ``last``, ``weight``, run
    ``start``..``end``) right after the label's last batch X should have run first (Smith's rule
    between adjacent batches): Y and its table were ready by X's start, X started Y's duration
    later still meets forced batching, and weight_Y·dur_X > weight_X·dur_Y (ties: the lower
    table first). Y then X reaches the same state no later at a lower cost, and the search
    reaches it: Y after X is dropped. (On several tracks the swapped pair, each on the
    earliest-free track, need not share one, so the rule is not used there.)"""
    if label.batch is None:
        return False
    x, _, x_last, x_start, x_end = label.batch
    if x == i or arrivals[i][last] > x_start or label.tables[i] > x_start:
        return False
    if forced and x_last + 1 < n[x] and x_start + (end - start) >= arrivals[x][x_last + 1]:
        return False
    gain, loss = weight * (x_end - x_start), label.weight * (end - start)
    return gain > loss or gain == loss and i < x


def _rest(arrivals: Sequence[Sequence[int]], coef: Sequence[Sequence[int]], pieces: Sequence[Sequence[int]],
          own: Sequence[Sequence[int]], dur: Callable[[int, int, int], int], forced: bool, pending: tuple[int, ...],
          label: _Label) -> float:
    """A lower bound on what the pending updates add (module docstring, and
    :mod:`~.block_bound` for what forced batching adds): the larger of the release bound and the
    mean-busy-time bound."""
    release = 0
    jobs = []  # (ready, piece, coef, table)
    for i, first in enumerate(pending):
        floor = max(label.tracks[0], label.tables[i])
        j = first
        if forced and first < len(arrivals[i]):  # the updates the next batch holds, as one job
            top = max(floor, arrivals[i][first])
            while j < len(arrivals[i]) and arrivals[i][j] <= top:
                j += 1
            weight, piece = sum(coef[i][first:j]), sum(pieces[i][first:j])
            release += weight * (top + dur(i, first, j - 1))
            jobs.append((top, piece, weight, i))
        for j in range(j, len(arrivals[i])):
            ready = max(arrivals[i][j], floor)
            release += coef[i][j] * ready + own[i][j]
            jobs.append((ready, pieces[i][j], coef[i][j], i))
    return max(release, _busy_time_bound(jobs, label.tracks))


def _busy_time_bound(jobs: list[tuple[int, int, int, int]], tracks: tuple[int, ...]) -> float:
    """Σ coef_j (M_j + q_j/2) over ``jobs`` ``(ready, q_j, coef_j, table)``, with M_j the mean
    busy time of job j under preemptive Smith's rule (ratio q_j / coef_j, ties by place in
    ``jobs``) on one machine from the ready times, whose speed at time t is the number of
    ``tracks`` (sorted free times) free by t, or of the tables with a job ready by t if fewer
    (Goemans 1996, with a speed profile: no schedule on the tracks has a smaller Σ coef M, and a
    piece run at rate 1 ends q_j/2 after its mean busy time; :mod:`~.block_bound`); slightly
    lowered against float rounding."""
    arrivals = sorted(range(len(jobs)), key=lambda k: jobs[k][0])
    waiting: list[tuple[float, int, float, float]] = []  # (ratio, job, work left, ∫ t · rate dt so far)
    now, k, total, free = 0.0, 0, 0.0, 0
    present: set[int] = set()
    while k < len(jobs) or waiting:
        if not waiting:
            now = max(now, jobs[arrivals[k]][0])
        while k < len(jobs) and jobs[arrivals[k]][0] <= now:
            _, piece, weight, table = jobs[arrivals[k]]
            present.add(table)
            heapq.heappush(waiting, (piece / weight if weight else math.inf, arrivals[k], float(piece), 0.0))
            k += 1
        while free < len(tracks) and tracks[free] <= now:
            free += 1
        speed = min(free, len(present))
        event = min(jobs[arrivals[k]][0] if k < len(jobs) else math.inf, tracks[free] if free < len(tracks) else math.inf)
        ratio, job, left, busy = heapq.heappop(waiting)
        finish = now + left / speed
        ends = finish <= event         # decided by the end, not by what is left:
        until = finish if ends else event  # far from 0, now + left/speed may not move
        busy += speed * (until * until - now * now) / 2
        left = 0.0 if ends else left - speed * (until - now)
        now = until
        if left > 1e-9:
            heapq.heappush(waiting, (ratio, job, left, busy))
        else:
            _, q, weight, _ = jobs[job]
            total += weight * ((busy / q if q else now) + q / 2)
    return total * (1 - 1e-9)


def _covers(x: _Label, y: _Label) -> bool:
    """Whether label x is at least as good as label y in cost, every track and every table."""
    return (x.cost <= y.cost and all(p <= q for p, q in zip(x.tracks, y.tracks))
            and all(p <= q for p, q in zip(x.tables, y.tables)))
