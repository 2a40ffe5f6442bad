"""Is a trace eager? (Bateni et al., Sec. 2; the digest's reading A1 and acceptance check 2.)

The paper's "never idle while an update is pending" cannot hold under the table lock (one
batch per table at a time), so eager means: after each instant's dispatch, every track is busy
or no table is *available* (has data beyond what is loaded or being loaded, and no job in
flight). The state only changes at arrivals, starts and finishes, so checking every arrival and
finish instant up to the horizon decides it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from staleness_lab.sim.trace import RECORD_FIELDS, Trace
from staleness_lab.theory.bateni.updates import feed_updates


@dataclass(frozen=True)
class EagerVerdict:
    """``eager`` and, when not, the first failing ``instant`` with the idle track count and the
    available tables there."""

    eager: bool
    instant: float | None = None
    idle_tracks: int = 0
    available: tuple[str, ...] = ()

    @property
    def why(self) -> str:
        if self.eager:
            return "after every instant's dispatch all tracks are busy or no table is available"
        return (f"at t={self.instant:g} {self.idle_tracks} track(s) idle while "
                f"{', '.join(self.available)} {'is' if len(self.available) == 1 else 'are'} available")


def is_eager(trace: Trace) -> EagerVerdict:
    """Whether ``trace`` is eager (see the module docstring), else the first failing instant."""
    w = trace.workload
    n = len(w.tables)
    running = np.array(trace.in_flight, dtype=float).reshape(-1, len(RECORD_FIELDS))
    cols = trace.columns
    table = np.concatenate([cols["table"], running[:, 0].astype(np.int64)])
    start = np.concatenate([cols["start"], running[:, 3]])
    finish = np.concatenate([cols["finish"], running[:, 3] + running[:, 6]])
    data_to = np.concatenate([cols["data_to"], running[:, 5]])
    done = cols["finish"]

    arrivals = [feed_updates(w, k) if w.tables[k].is_base else (np.empty(0), np.empty(0)) for k in range(n)]
    instants = np.unique(np.concatenate([[0.0], done, *(a for a, _ in arrivals)]))
    instants = instants[instants <= w.horizon]

    starts_sorted = np.sort(start)
    finishes_sorted = np.sort(finish)
    busy = np.searchsorted(starts_sorted, instants, side="right") - np.searchsorted(finishes_sorted, instants, side="right")

    fresh = np.empty((n, len(instants)))  # F_i just after each instant (completions landed)
    claimed = np.empty((n, len(instants)))  # data loaded or being loaded just after dispatch
    locked = np.zeros((n, len(instants)), dtype=bool)
    for k, spec in enumerate(w.tables):
        mine = np.flatnonzero(table == k)
        mine = mine[np.argsort(start[mine], kind="stable")]
        f0 = spec.initial_freshness
        ends = np.concatenate([[f0], data_to[mine]])
        by_finish = np.searchsorted(finish[mine], instants, side="right")
        fresh[k] = ends[by_finish]
        by_start = np.searchsorted(start[mine], instants, side="right")
        claimed[k] = ends[by_start]
        locked[k] = by_start > by_finish
    available_data = np.empty((n, len(instants)))
    for k in range(n):
        spec = w.tables[k]
        if spec.is_base:
            times, ends = arrivals[k]
            idx = np.searchsorted(times, instants, side="right")
            available_data[k] = np.concatenate([[spec.initial_freshness], ends])[idx]
        else:
            sources = [w.index[s] for s in spec.sources or ()]
            edge = np.min(fresh[sources], axis=0)
            available_data[k] = np.maximum(edge, spec.initial_freshness)
    available = (available_data > claimed) & ~locked
    failing = (busy < w.tracks) & available.any(axis=0)
    if not failing.any():
        return EagerVerdict(eager=True)
    at = int(np.argmax(failing))
    names = tuple(w.tables[k].name for k in np.flatnonzero(available[:, at]))
    return EagerVerdict(eager=False, instant=float(instants[at]), idle_tracks=int(w.tracks - busy[at]), available=names)
