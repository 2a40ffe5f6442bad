"""``explain(result_or_trace, table=None)``: why a table's worst lag was what it was, and what-ifs.

The split is theory (:mod:`staleness_lab.theory.lagsplit`: inherited, behind refreshes, waiting
for a track, own refresh; exact parts summing to the lag). This module adds two what-ifs, each
predicted from the split and then re-simulated on the same seed (common random numbers):

* ``one more track``: predicted lag = lag - waiting_for_track (a free track would have started the
  refresh when it was ready); simulated = the table's worst lag with tracks + 1;
* ``relax <table>``: the target of the table whose refreshes held the tracks longest while this
  one waited (the blocker; only tables with a target) doubled. Predicted = lag minus the
  blocker's track time inside that wait, the most it can give back, for a scheduler that reads
  targets; one that does not (every scheduler of the papers) runs the same schedule, which the
  simulation shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.api import SimulationResult, simulate
from staleness_lab.errors import Infeasible, InputError
from staleness_lab.lag_budget import BudgetResult
from staleness_lab.model import Workload
from staleness_lab.model.workload import MAX_TRACKS
from staleness_lab.sim.trace import Trace
from staleness_lab.theory.lagsplit import PARTS, Episode, episodes, worst_lags
from staleness_lab.theory.leontyev.checks import observe


@dataclass(eq=False)
class Explanation:
    """``parts``: one row per (table, part) with ``value`` (float) and ``exact`` (Fraction),
    beside the episode (``since``, ``until``, ``lag``); ``what_if``: one row per (table,
    scenario) with ``observed``, ``predicted`` and ``simulated`` worst lags."""

    episodes: list[Episode]
    parts: pd.DataFrame
    what_if: pd.DataFrame


def _trace_of(source: SimulationResult | BudgetResult | Trace) -> Trace:
    trace = source if isinstance(source, Trace) else getattr(source, "trace", None)
    if not isinstance(trace, Trace):
        raise InputError("result_or_trace", "must be a simulation result, a budget result with a run, or a trace")
    return trace


def _worst(trace: Trace) -> dict[str, float]:
    names = [t.name for t in trace.workload.tables]
    return {names[k]: until - since for k, (since, until) in enumerate(worst_lags(observe(trace)))}


def _rerun(workload: Workload, policy: str) -> tuple[dict[str, float] | None, str]:
    try:
        return _worst(simulate(workload, policy).trace), ""
    except Infeasible as refused:
        return None, f"{policy} refuses it: {refused.reason}"


def blocker(trace: Trace, episode: Episode, k: int) -> tuple[int | None, float]:
    """The table with a target (other than ``k``) whose jobs held the tracks longest during the
    episode's wait for a track, and that track time (None, 0 when nobody with a target ran)."""
    wait = float(episode.parts[2])
    start = episode.until - float(episode.parts[3])
    if wait <= 0:
        return None, 0.0
    jobs = trace.jobs
    busy = np.clip(np.minimum(jobs["finish"], start) - np.maximum(jobs["start"], start - wait), 0, None)
    index = trace.workload.index
    held: dict[int, float] = {}
    for name, time in zip(jobs["table"], busy):
        j = index[name] if isinstance(name, str) else int(name)
        if j != k and time > 0 and trace.workload.target_lags[j] is not None:
            held[j] = held.get(j, 0.0) + float(time)
    if not held:
        return None, 0.0
    j = max(held, key=lambda i: (held[i], -i))
    return j, held[j]


def relaxed(workload: Workload, j: int) -> Workload:
    """``workload`` with table ``j``'s resolved target doubled (a number in place of ``downstream``)."""
    tables = list(workload.tables)
    tables[j] = tables[j].__class__(**{**tables[j].__dict__, "target_lag": 2 * workload.target_lags[j]})
    return workload.with_overrides(tables=tuple(tables))


def explain(result_or_trace: SimulationResult | BudgetResult | Trace, table: str | None = None) -> Explanation:
    """Split each table's worst lag episode of the run (or only ``table``'s) into parts that sum
    exactly to it, and predict then re-simulate the two what-ifs (module docstring)."""
    trace = _trace_of(result_or_trace)
    w, policy = trace.workload, trace.policy
    found = episodes(trace)
    if table is not None:
        if table not in w.index:
            raise InputError("table", f"no table named {table!r} in the workload")
        found = [found[w.index[table]]]
    parts = pd.DataFrame([{"table": e.table, "since": e.since, "until": e.until, "lag": float(e.lag), "part": name,
                           "value": float(value), "exact": value}
                          for e in found for name, value in zip(PARTS, e.parts)])
    more, more_note = (None, "the workload is at the track limit") if w.tracks >= MAX_TRACKS else \
        _rerun(w.with_overrides(tracks=w.tracks + 1), policy)
    rows: list[dict[str, Any]] = []
    cache: dict[int, tuple[dict[str, float] | None, str]] = {}
    for e in found:
        k = w.index[e.table]
        lag = float(e.lag)
        rows.append({"table": e.table, "scenario": f"one more track ({w.tracks + 1})", "observed": lag,
                     "predicted": lag - float(e.parts[2]), "simulated": None if more is None else more[e.table],
                     "note": more_note})
        j, held = blocker(trace, e, k)
        if j is None:
            rows.append({"table": e.table, "scenario": "relax a target", "observed": lag, "predicted": lag,
                         "simulated": None, "note": "no table with a target held the tracks while it waited"})
            continue
        if j not in cache:
            cache[j] = _rerun(relaxed(w, j), policy)
        sims, note = cache[j]
        rows.append({"table": e.table, "scenario": f"relax {w.tables[j].name} (target x2)", "observed": lag,
                     "predicted": lag - held, "simulated": None if sims is None else sims[e.table], "note": note})
    return Explanation(found, parts, pd.DataFrame(rows, columns=["table", "scenario", "observed", "predicted",
                                                                 "simulated", "note"]))
