"""An exact labelling search for small blocks of the X_w optimum (Bateni digest §5; this
project's addition beside the CP-SAT model of :mod:`staleness_lab.optimize.staleness_optimum`).

The schedules searched are the brute force's (:mod:`staleness_lab.optimize.brute_force`):
batches placed one after another, each left-shifted (it starts when its track, its table's
previous batch and its last update allow) and, with forced batching, starting before its
table's next arrival. Every left-shifted schedule is reached, so the minimum is the optimum.

A partial schedule is a *label* at the state ``pending`` (the next update of every table): its
objective so far (Σ coef · C over the updates placed, integers on the grid), the free times of
the tracks (sorted: tracks are identical) and of each table (a table's time is dropped to 0
when no track frees before it, so it no longer constrains). Labels are expanded state by state
in order of updates placed (every batch places at least one). A label is dropped when another
at its state is at least as good in all three (objective, every track, every table): whatever
completes the one completes the other no later. It is also dropped when its objective plus a
bound on the rest (every pending update j completes no earlier than
``max(r_j, the earliest track, its table) + its own duration``) reaches the best objective
known (the hint's, at the start). The search gives up (returns None) past ``budget`` labels
or the deadline, leaving the block to CP-SAT.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple


class _Label(NamedTuple):
    cost: int
    tracks: tuple[int, ...]
    tables: tuple[int, ...]
    parent: _Label | None
    batch: tuple[int, int, int, int, int] | None  # (table, first, last, start, end)


def search(arrivals: Sequence[Sequence[int]], dur: Callable[[int, int, int], int], coef: Sequence[Sequence[int]],
           pieces: Sequence[Sequence[int]], tracks: int, forced: bool, upper: int, budget: int, deadline: float
           ) -> list[tuple[int, int, int, int, int]] | None:
    """The batches ``(table, first, last, start, end)`` of a schedule with objective Σ coef·C
    below ``upper``, minimal among them; ``[]`` when none is below ``upper`` (a schedule of
    objective ``upper`` is then optimal); None when the search gave up (module docstring)."""
    n = [len(row) for row in arrivals]
    own = [[coef[i][j] * dur(i, j, j) for j in range(n[i])] for i in range(len(n))]
    smith = sorted(((i, j) for i in range(len(n)) for j in range(n[i])),
                   key=lambda u: (pieces[u[0]][u[1]] * max(1, coef[u[0]][u[1]]) ** -1 if coef[u[0]][u[1]] else math.inf))
    layers: list[dict[tuple[int, ...], list[_Label]]] = [{} for _ in range(sum(n) + 1)]
    layers[0][tuple(0 for _ in n)] = [_Label(0, (0,) * tracks, (0,) * len(n), None, None)]
    made = 0
    for layer in layers[:-1]:
        for pending, labels in layer.items():
            for label in labels:
                for child, done in _children(arrivals, dur, coef, forced, n, pending, label):
                    if child.cost + _rest(arrivals, coef, pieces, own, smith, done, child) >= upper:
                        continue
                    made += 1
                    if made > budget or made % 256 == 0 and time.perf_counter() > deadline:
                        return None
                    _insert(layers[sum(done)].setdefault(done, []), child)
    best = min(layers[-1].get(tuple(n), []), key=lambda label: label.cost, default=None)
    out = []
    while best is not None and best.batch is not None:
        out.append(best.batch)
        best = best.parent
    return out[::-1]


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
            for k, free in enumerate(label.tracks):
                if k and free == label.tracks[k - 1]:
                    continue  # identical tracks: the first of equal free times stands for all
                start = max(free, label.tables[i], arrivals[i][b])
                if forced and b + 1 < n[i] and start >= arrivals[i][b + 1]:
                    continue
                end = start + dur(i, a, b)
                tracks = tuple(sorted(label.tracks[:k] + (end,) + label.tracks[k + 1:]))
                tables = tuple(0 if t <= tracks[0] else t for t in label.tables[:i] + (end,) + label.tables[i + 1:])
                yield (_Label(label.cost + weight * end, tracks, tables, label, (i, a, b, start, end)),
                       pending[:i] + (b + 1,) + pending[i + 1:])


def _rest(arrivals: Sequence[Sequence[int]], coef: Sequence[Sequence[int]], pieces: Sequence[Sequence[int]],
          own: Sequence[Sequence[int]], smith: Sequence[tuple[int, int]], pending: tuple[int, ...],
          label: _Label) -> int:
    """A lower bound on what the pending updates add (module docstring): the larger of the
    release bound and the capacity bound."""
    release = 0
    for i, a in enumerate(pending):
        floor = max(label.tracks[0], label.tables[i])
        for j in range(a, len(arrivals[i])):
            release += coef[i][j] * max(arrivals[i][j], floor) + own[i][j]
    work, capacity = 0, 0
    for i, j in smith:
        if j >= pending[i]:
            work += pieces[i][j]
            capacity += coef[i][j] * work
    tracks = len(label.tracks)
    capacity = -(-capacity // tracks) + label.tracks[0] * sum(coef[i][j] for i, j in smith if j >= pending[i])
    return max(release, capacity)


def _insert(labels: list[_Label], new: _Label) -> None:
    """Add ``new`` to a state's labels unless one dominates it; drop those it dominates."""
    def covers(x: _Label, y: _Label) -> bool:
        return (x.cost <= y.cost and all(p <= q for p, q in zip(x.tracks, y.tracks))
                and all(p <= q for p, q in zip(x.tables, y.tables)))

    if any(covers(old, new) for old in labels):
        return
    labels[:] = [old for old in labels if not covers(new, old)]
    labels.append(new)
