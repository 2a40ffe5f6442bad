"""The target-lag scheduler's documented rules checked on its traces: the report's conformance table.

Each rule of :class:`~staleness_lab.policies.target_lag.TargetLag` (numbered as in its docstring)
gets the documentation's words (quoted there, verbatim; a test keeps the two in step), the test
that pins it on a hand-checked schedule (``tests/policies/test_target_lag.py``) and a check that
reads any trace of the scheduler and counts the events the rule governs and those breaking it:

1. one refresh of a table in flight: a table's refreshes (the one cut by the horizon included)
   never overlap;
2. dependency order, one snapshot: a view's refresh loads exactly its sources' committed data at
   its start (its trailing edge min_s F_s(start)), so upstream refreshes came first and all
   sources are read at one instant;
3. start early enough, not a refresh interval: a base table with a numeric target whose
   refreshes only its own cycle asks for (no dependent has a target) never starts one before it
   is due: lag + E(n) >= T at the start (E(n) the nominal cost of the data it loads; its cycle
   opened at or before the start with less data, so this is necessary, not sufficient);
4. behind target, the first free track: no instant has an idle track while such a base table is
   above its target with data to load and no refresh running;
5. skipped refreshes: no refresh reads data a source has not finished loading (F_s(start) >= the
   data it loads) nor starts while the table's previous refresh runs;
6. downstream: a table without a numeric target refreshes only for a dependent with one: never
   when no table reading it (transitively) has a target (necessary, not sufficient: when it
   refreshes for which cycle is the policy's state, not the trace's).

A check exercised by no event of a trace decides nothing there (``holds`` None).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from staleness_lab.model import Workload
from staleness_lab.model.table import DOWNSTREAM
from staleness_lab.sim.trace import Trace
from staleness_lab.theory.leontyev.checks import Run, observe

#: Relative tolerance on float instants (the engine's sums of costs).
TOL = 1e-9

COLUMNS = ["rule", "title", "quote", "test", "checked", "violations", "holds", "detail"]


@dataclass(frozen=True)
class Rule:
    """One documented rule: its number and title in the policy's docstring, the documentation's
    words as quoted there, the test pinning it, and its trace check (-> checked, violations,
    the first violation described or "")."""

    number: int
    title: str
    quote: str
    test: str
    check: Callable[[Run, pd.DataFrame], tuple[int, int, str]]


def _jobs(trace: Trace) -> pd.DataFrame:
    """Every started refresh (completed and cut by the horizon) with the table's position ``k``;
    an unfinished one ends at the horizon and has ``done`` False."""
    w = trace.workload
    jobs = trace.jobs[["table", "track", "start", "finish", "data_from", "data_to"]].assign(done=True)
    cut = pd.DataFrame([{"table": w.tables[r[0]].name, "track": r[1], "start": r[3], "finish": w.horizon,
                         "data_from": r[4], "data_to": r[5], "done": False} for r in trace.in_flight],
                       columns=[*jobs.columns])
    out = pd.concat([jobs, cut], ignore_index=True) if len(cut) else jobs
    out["table"] = out["table"].astype(str)
    out["k"] = out["table"].map(w.index).astype(int)
    return out.sort_values(["start", "k"], kind="stable").reset_index(drop=True)


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(1.0, abs(a), abs(b))


def _first(bad: list[str]) -> str:
    return bad[0] if bad else ""


def one_in_flight(run: Run, jobs: pd.DataFrame) -> tuple[int, int, str]:
    """Rule 1: consecutive refreshes of a table never overlap."""
    checked, bad = 0, []
    for name, part in jobs.groupby("table", sort=False):
        starts, ends = part["start"].to_numpy(), part["finish"].to_numpy()
        for a, b, s in zip(ends[:-1], ends[1:], starts[1:]):
            checked += 1
            if s < a - TOL * max(1.0, abs(a)):
                bad.append(f"{name}: a refresh started at {s:g} while the one before ran until {a:g}")
    return checked, len(bad), _first(bad)


def _views(run: Run, jobs: pd.DataFrame) -> list[tuple[str, float, float, list[float]]]:
    """(table, start, data loaded, each source's F at the start) of every view refresh."""
    w = run.workload
    out = []
    for row in jobs.itertuples(index=False):
        sources = w.tables[row.k].sources
        if sources:
            out.append((row.table, row.start, row.data_to, [float(run.F[w.index[s]].at(row.start)) for s in sources]))
    return out


def one_snapshot(run: Run, jobs: pd.DataFrame) -> tuple[int, int, str]:
    """Rule 2: a view loads min over its sources of F_s at its start."""
    views = _views(run, jobs)
    bad = [f"{name} at {start:g} loaded up to {data:g}, its sources held {min(fs):g}"
           for name, start, data, fs in views if not _near(data, min(fs))]
    return len(views), len(bad), _first(bad)


def _self_driven(w: Workload) -> list[int]:
    """Base tables with a numeric target that no table reading them (transitively) has a target for."""
    targeted = [t.target_lag is not None and t.target_lag != DOWNSTREAM for t in w.tables]
    below: list[set[int]] = [set() for _ in w.tables]
    for k in reversed(range(len(w.tables))):
        for c in w.children[k]:
            below[k] |= {c} | below[c]
    return [k for k, t in enumerate(w.tables) if t.is_base and targeted[k] and not any(targeted[c] for c in below[k])]


def not_before_due(run: Run, jobs: pd.DataFrame) -> tuple[int, int, str]:
    """Rule 3: a self-driven base table starts a refresh only once lag + E(n) >= T."""
    w = run.workload
    checked, bad = 0, []
    for k in _self_driven(w):
        t = w.tables[k]
        target = float(w.target_lags[k])  # type: ignore[arg-type]
        for row in jobs[jobs["k"] == k].itertuples(index=False):
            checked += 1
            lag = row.start - row.data_from
            reach = lag + t.alpha + t.beta * (row.data_to - row.data_from)
            if reach < target - TOL * max(1.0, target):
                bad.append(f"{t.name} started at {row.start:g} with lag {lag:g} + E(n) = {reach:g} < target {target:g}")
    return checked, len(bad), _first(bad)


def no_idle_track_behind(run: Run, jobs: pd.DataFrame) -> tuple[int, int, str]:
    """Rule 4: no track idles while a self-driven base table is above its target with data to
    load and no refresh of its own running (checked inside every interval between events)."""
    w = run.workload
    tables = _self_driven(w)
    if not tables:
        return 0, 0, ""
    points = [np.array([0.0, w.horizon]), jobs["start"].to_numpy(), jobs["finish"].to_numpy()]
    for k in tables:
        F, te = run.F[k], run.TE[k]
        points += [F.times, te.times, F.values + float(w.target_lags[k])]  # type: ignore[arg-type]
    cuts = np.unique(np.clip(np.concatenate(points), 0.0, w.horizon))
    mids = (cuts[:-1] + cuts[1:]) / 2
    mids = mids[np.diff(cuts) > TOL * max(1.0, w.horizon)]
    starts, ends = jobs["start"].to_numpy(), jobs["finish"].to_numpy()
    busy = ((starts[None, :] <= mids[:, None]) & (mids[:, None] < ends[None, :]))
    idle = busy.sum(axis=1) < w.tracks
    checked, bad = 0, []
    for k in tables:
        F, te = run.F[k], run.TE[k]
        fresh = F.at(mids)
        mine = busy[:, jobs["k"].to_numpy() == k].any(axis=1)
        behind = (mids - fresh > float(w.target_lags[k])) & (te.at(mids) > fresh) & ~mine  # type: ignore[arg-type]
        checked += int(behind.sum())
        wrong = np.flatnonzero(behind & idle)
        if len(wrong):
            bad.append(f"{w.tables[k].name} above its target with a track idle at {mids[wrong[0]]:g}")
    return checked, len(bad), _first(bad)


def skipped_when_unfinished(run: Run, jobs: pd.DataFrame) -> tuple[int, int, str]:
    """Rule 5: no view reads data a source has not committed; no table starts while its previous
    refresh runs (rule 1's check, counted here as the documentation lists it among the skips)."""
    views = _views(run, jobs)
    bad = [f"{name} at {start:g} read up to {data:g} before a source held it ({min(fs):g})"
           for name, start, data, fs in views if data > min(fs) + TOL * max(1.0, abs(data))]
    checked, overlaps, first = one_in_flight(run, jobs)
    return len(views) + checked, len(bad) + overlaps, _first(bad) or first


def on_demand(run: Run, jobs: pd.DataFrame) -> tuple[int, int, str]:
    """Rule 6: a table without a numeric target refreshes only when a table reading it
    (transitively) has one (each such refresh counted)."""
    w = run.workload
    targeted = [t.target_lag is not None and t.target_lag != DOWNSTREAM for t in w.tables]
    checked, bad = 0, []
    for k, t in enumerate(w.tables):
        count = int((jobs["k"] == k).sum())
        if targeted[k] or not count:
            continue
        checked += count
        if not _reaches_target(w, k, targeted):
            bad.append(f"{t.name} refreshed {count} times with no targeted table reading it")
    return checked, len(bad), _first(bad)


def _reaches_target(w: Workload, k: int, targeted: list[bool]) -> bool:
    """Whether some table reading ``k`` (transitively) has a numeric target."""
    seen, todo = set(), list(w.children[k])
    while todo:
        c = todo.pop()
        if targeted[c]:
            return True
        if c not in seen:
            seen.add(c)
            todo.extend(w.children[c])
    return False


#: The rules, their words as the policy's docstring quotes them, and their tests.
RULES = (
    Rule(1, "One refresh of a table in flight",
         "If a refresh is still running when the next one would normally begin, Snowflake waits for it to complete "
         "rather than starting a concurrent refresh of the same table.",
         "test_rule1_a_running_refresh_delays_the_next_never_two_at_once", one_in_flight),
    Rule(2, "Dependency order, one snapshot",
         "every downstream table reads a single, coherent point-in-time view of its inputs",
         "test_rules2_and_5_upstream_first_and_a_view_waits_for_the_upstream_refresh_it_needs", one_snapshot),
    Rule(3, "Start early enough",
         "Snowflake schedules refreshes slightly earlier to allow time for the refresh to complete",
         "test_rule3_a_refresh_starts_when_lag_plus_its_expected_duration_reaches_the_target", not_before_due),
    Rule(4, "Behind target: as soon as a track frees",
         "Data in dynamic tables is refreshed as closely as possible within the target lag.",
         "test_rule4_a_table_behind_its_target_starts_the_instant_a_track_frees", no_idle_track_behind),
    Rule(5, "Skipped refreshes",
         "If a previous refresh for the dynamic table is still running.",
         "test_rules2_and_5_upstream_first_and_a_view_waits_for_the_upstream_refresh_it_needs",
         skipped_when_unfinished),
    Rule(6, "Downstream",
         "the dynamic table should refresh on demand when other dependent dynamic tables refresh",
         "test_rule6_downstream_and_untargeted_tables_refresh_only_when_a_dependent_needs_them", on_demand),
)


def conformance(trace: Trace) -> pd.DataFrame:
    """One row per rule of :data:`RULES` on ``trace`` (:data:`COLUMNS`): events checked,
    violations, ``holds`` (None when nothing exercised the rule) and the first violation."""
    run = observe(trace)
    jobs = _jobs(trace)
    rows = []
    for rule in RULES:
        checked, violations, first = rule.check(run, jobs)
        holds = None if checked == 0 else violations == 0
        detail = first or (f"{checked} events conform" if checked else "not exercised by this trace")
        rows.append({"rule": rule.number, "title": rule.title, "quote": rule.quote, "test": rule.test,
                     "checked": checked, "violations": violations, "holds": holds, "detail": detail})
    return pd.DataFrame(rows, columns=COLUMNS)


def conformance_over(traces: dict[str, Trace]) -> pd.DataFrame:
    """:func:`conformance` of every trace (keyed by a label, e.g. ``workload/seed``), one row per
    (rule, run) with the label in ``run``."""
    return pd.concat([conformance(t).assign(run=label) for label, t in traces.items()], ignore_index=True)


def conformance_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per rule over the runs of :func:`conformance_over`: events checked and violations summed,
    runs exercising it, ``holds`` (every exercising run holds; None if none did) and the first
    violation found."""
    out = []
    for (number, title, quote, test), part in rows.groupby(["rule", "title", "quote", "test"], sort=False):
        decided = part[part["holds"].notna()]
        failing = decided[decided["holds"] == False]  # noqa: E712
        holds = None if decided.empty else failing.empty
        detail = (f"{failing['run'].iloc[0]}: {failing['detail'].iloc[0]}" if len(failing)
                  else f"{int(part['checked'].sum())} events in {len(decided)} of {len(part)} runs conform"
                  if len(decided) else "no run exercised it")
        out.append({"rule": number, "title": title, "quote": quote, "test": test, "checked": int(part["checked"].sum()),
                    "violations": int(part["violations"].sum()), "holds": holds, "detail": detail})
    return pd.DataFrame(out, columns=COLUMNS)
