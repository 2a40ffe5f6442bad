"""Why a lag was missed: each table's worst lag episode of a run split into parts that sum exactly.

A table's lag (staleness) S(V_k, t) = t - F(V_k, t) grows between loads, so its supremum over
[0, horizon] is approached just before some load raises F, or at the horizon (the same points
:meth:`.leontyev.checks.Step.sup_gap` scans). The worst episode runs from the freshness f_0 held
then to that instant t*, and its lag t* - f_0 telescopes over four breakpoints:

* ``inherited`` = a - f_0, with a the first instant the table could load data past f_0 (its
  trailing edge TE(V_k) rises above f_0: a base table's next file lands, a derived table's sources
  all get past f_0): the age the data already had when it reached the table;
* ``behind_refreshes`` = ready - a: new data waiting for a refresh to be released and ready: the
  table's own previous refresh still running (jobs of a table run in order, one at a time) or
  the release rule holding it back;
* ``waiting_for_track`` = start - ready: the refresh ready, every track busy with others;
* ``own_refresh`` = t* - start: the refresh itself running.

Each breakpoint is clamped between the one before and t* (an episode cut by the horizon has no
refresh, or one not started), so every part is >= 0. The parts are exact Fractions of the
trace's float times, so they sum to Fraction(t*) - Fraction(f_0) exactly, whatever the floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from staleness_lab.sim.trace import Trace
from staleness_lab.theory.leontyev.checks import Run, observe

#: The parts of a lag, in the order they happen.
PARTS = ("inherited", "behind_refreshes", "waiting_for_track", "own_refresh")


@dataclass(frozen=True)
class Episode:
    """Table ``table``'s worst lag episode: freshness ``since`` held until ``until`` (a load or
    the horizon), the lag ``until - since``, and its parts (exact, in :data:`PARTS` order)."""

    table: str
    since: float
    until: float
    parts: tuple[Fraction, ...]

    @property
    def lag(self) -> Fraction:
        return Fraction(self.until) - Fraction(self.since)


def worst_lags(run: Run) -> list[tuple[float, float]]:
    """Per table (file order), (f_0, t*): the freshness held and the instant where its lag is
    largest over [0, horizon] (the earliest on ties)."""
    out = []
    for F in run.F:
        at = np.r_[F.times[1:], run.horizon]
        i = int(np.argmax(at - F.values))
        out.append((float(F.values[i]), float(at[i])))
    return out


def episodes(trace: Trace) -> list[Episode]:
    """Every table's worst lag episode split into :data:`PARTS` (module docstring)."""
    run = observe(trace)
    return [split(run, k, since, until) for k, (since, until) in enumerate(worst_lags(run))]


def split(run: Run, k: int, since: float, until: float) -> Episode:
    """Table ``k``'s lag from freshness ``since`` to the instant ``until``, split into parts."""
    te = run.TE[k]
    rises = np.flatnonzero(te.values > since)
    available = float(te.times[rises[0]]) if len(rises) else until
    jobs = run.jobs
    mine = np.flatnonzero(jobs.table == k)
    closing = mine[jobs.finished[mine] & (jobs.end[mine] == until)]
    pending = mine[~jobs.finished[mine]]
    job = int(closing[0]) if len(closing) else (int(pending[np.argmin(jobs.release[pending])]) if len(pending) else None)
    release = start = until
    if job is not None:
        start = until if np.isnan(jobs.start[job]) else float(jobs.start[job])
        before = mine[jobs.finished[mine] & (jobs.end[mine] <= min(start, until)) & (mine != job)]
        release = max(float(jobs.release[job]), float(jobs.end[before].max()) if len(before) else 0.0)
    points = [since]
    for point in (available, release, start):
        points.append(min(max(point, points[-1]), until))
    points.append(until)
    exact = [Fraction(p) for p in points]
    return Episode(run.names[k], since, until, tuple(b - a for a, b in zip(exact, exact[1:])))
