"""Lemma 4.2's quantities for one group of GROUPANDRUN (digest Sec. 3): update waits omega_j and
tight intervals theta_k.

* omega_j: the start of the batch applying update j minus its arrival r_j.
* A *tight interval* is a maximal closed interval during which all p' tracks of the group are
  busy; theta_k is its length. Found by a busy-count sweep over the group's batches, every
  start and finish of one instant applied together, so back-to-back batches on a track keep an
  interval going.
* B is the group's largest declared Lmax, the smallest B for which the group is
  B-quasiperiodic (correction 6: the tightest valid check). The lemma bounds both by B/6.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from staleness_lab.theory.bateni.updates import TableUpdates


@dataclass(frozen=True)
class GroupWaits:
    """The largest wait (with the update that waited: table, arrival) and the longest tight
    interval ``(start, end)`` of one group; ``None`` where there is none."""

    max_wait: float
    wait_table: str | None
    wait_arrival: float | None
    max_tight: float
    tight_window: tuple[float, float] | None


def update_waits(u: TableUpdates) -> np.ndarray:
    """omega_j for each applied update of one table (start of its batch minus its arrival)."""
    done = u.applied
    return u.start[u.batch[done]] - u.arrival[done]


def tight_intervals(start: np.ndarray, finish: np.ndarray, tracks: int) -> list[tuple[float, float]]:
    """Maximal intervals where at least ``tracks`` of the given jobs run at once."""
    times = np.concatenate([start, finish])
    step = np.concatenate([np.ones(len(start), dtype=np.int64), -np.ones(len(finish), dtype=np.int64)])
    instants, where = np.unique(times, return_inverse=True)
    delta = np.bincount(where, weights=step, minlength=len(instants)).astype(np.int64)
    level = np.cumsum(delta)  # jobs running just after each instant
    out: list[tuple[float, float]] = []
    opened: float | None = None
    for t, busy in zip(instants, level):
        if busy >= tracks and opened is None:
            opened = float(t)
        elif busy < tracks and opened is not None:
            out.append((opened, float(t)))
            opened = None
    return out


def group_waits(group: list[TableUpdates], tracks: int) -> GroupWaits:
    """omega and theta over one group's tables, run on ``tracks`` tracks."""
    max_wait, wait_table, wait_arrival = 0.0, None, None
    for u in group:
        waits = update_waits(u)
        if len(waits) and waits.max() >= max_wait:
            j = int(np.argmax(waits))
            max_wait, wait_table = float(waits[j]), u.name
            wait_arrival = float(u.arrival[u.applied][j])
    start = np.concatenate([u.start for u in group]) if group else np.empty(0)
    finish = np.concatenate([u.finish for u in group]) if group else np.empty(0)
    intervals = tight_intervals(start, finish, tracks)
    if not intervals:
        return GroupWaits(max_wait, wait_table, wait_arrival, 0.0, None)
    longest = max(intervals, key=lambda span: span[1] - span[0])
    return GroupWaits(max_wait, wait_table, wait_arrival, longest[1] - longest[0], longest)
