"""The exact minimum of X_w by enumeration, in Fractions: the cross-check of the CP-SAT optimum
(digest §5, "Cross-check against brute force"; corrections 7 and 8).

The schedules are those of :mod:`staleness_lab.optimize.staleness_optimum` (same reading of the
workload, :func:`~staleness_lab.optimize.staleness_optimum.exact_tables`): every contiguous
partition of each table's updates into batches, every order of all batches that keeps each
table's batches in update order, and every track for each batch, left-shifted: a batch starts at
the earliest time its track is free, its table's previous batch has finished and its last update
has arrived. With ``forced=True`` a schedule is rejected when a batch starts at or after its
table's next update's arrival (it would have had to take that update, correction 8).

Two reductions make the enumeration a depth-first search without changing its minimum:

* Orders are built batch by batch and kept only while starts are nondecreasing. Every
  left-shifted schedule is reached this way (its batches sorted by start reproduce it: a
  batch's track predecessor and table predecessor start strictly earlier, durations being
  positive), so only repeats of the same schedule are skipped.
* Tracks with the same free time are interchangeable, so only the lowest-numbered of them is
  tried.

X_w is then ``Σ_i w_i Σ_j [L_ij²/2 + L_ij (C_ij − d_ij)]`` (digest §1) for each complete schedule.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

from staleness_lab.model import Workload
from staleness_lab.optimize.staleness_optimum import ExactTable, exact_tables

#: The most updates (all tables together) the enumeration takes.
MAX_UPDATES = 7


class Batch(NamedTuple):
    """One batch of a schedule: table position, updates first..last (0-based), start, end, track."""

    table: int
    first: int
    last: int
    start: Fraction
    end: Fraction
    track: int


class BruteForce(NamedTuple):
    """The minimum ``X`` (X_w, exact) and one ``schedule`` reaching it (batches by start)."""

    X: Fraction  # noqa: N815 - the paper's name
    schedule: list[Batch]


def brute_force(workload: Workload, forced: bool = True) -> BruteForce:
    """The minimum X_w over all schedules of ``workload`` by enumeration (module docstring);
    ``forced=False`` drops forced batching (the relaxed model, digest A9). At most
    :data:`MAX_UPDATES` updates."""
    tables = exact_tables(workload, limit=MAX_UPDATES)
    return _Search(tables, workload.tracks, forced).run()


class _Search:
    def __init__(self, tables: list[ExactTable], tracks: int, forced: bool) -> None:
        self.tables = tables
        self.forced = forced
        self.pending = [0] * len(tables)
        self.table_free = [Fraction(0)] * len(tables)
        self.track_free = [Fraction(0)] * tracks
        self.schedule: list[Batch] = []
        self.best: BruteForce | None = None

    def run(self) -> BruteForce:
        self._extend(Fraction(0))
        assert self.best is not None  # an eager schedule always satisfies forced batching
        return self.best

    def _extend(self, last_start: Fraction) -> None:
        if all(self.pending[i] == t.n for i, t in enumerate(self.tables)):
            self._score()
            return
        tracks = {}
        for k, free in enumerate(self.track_free):
            tracks.setdefault(free, k)
        for i, table in enumerate(self.tables):
            a = self.pending[i]
            for b in range(a, table.n):
                for free, k in tracks.items():
                    start = max(free, self.table_free[i], table.arrival[b])
                    if start < last_start:
                        continue
                    if self.forced and b + 1 < table.n and start >= table.arrival[b + 1]:
                        continue
                    self._push(i, a, b, start, k)

    def _push(self, i: int, a: int, b: int, start: Fraction, track: int) -> None:
        end = start + self.tables[i].duration(a, b)
        saved = (self.table_free[i], self.track_free[track])
        self.pending[i], self.table_free[i], self.track_free[track] = b + 1, end, end
        self.schedule.append(Batch(i, a, b, start, end, track))
        self._extend(start)
        self.schedule.pop()
        self.pending[i] = a
        self.table_free[i], self.track_free[track] = saved

    def _score(self) -> None:
        completion = [[Fraction(0)] * t.n for t in self.tables]
        for batch in self.schedule:
            for j in range(batch.first, batch.last + 1):
                completion[batch.table][j] = batch.end
        x_w = sum((t.weight * t.x_part(completion[i]) for i, t in enumerate(self.tables)), Fraction(0))
        if self.best is None or x_w < self.best.X:
            self.best = BruteForce(X=x_w, schedule=list(self.schedule))
