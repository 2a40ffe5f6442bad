"""``BoundExplorer``: Leontyev et al.'s closed-form bounds over what a run shows.

AUS or GEDF-NP on a task set with one outage of length lambda on a feed: the run is checked by
:func:`staleness_lab.api.check` (the bounds Y_i, Theta_k, A(V_k) and x_k come from ``theory/``
through its records): A(V_k) over each table's staleness curve with each recovery's t_0 + x_k,
Theta_k over the jobs' response times (:func:`staleness_lab.viz.staleness_with_bounds`,
:func:`staleness_lab.viz.response_with_bounds`: a bound whose preconditions are unmet is drawn
apart, with the precondition's name and reason) and every record listed with its verdict (Y_i
among them).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from staleness_lab import __version__, viz
from staleness_lab.api import check
from staleness_lab.model import Workload
from staleness_lab.theory.leontyev.checks import T4
from staleness_lab.theory.records import CheckRecord
from staleness_lab.widgets.base import Explorer, View, choice, slider
from staleness_lab.widgets.workload import NO_OUTAGE, run_controls, values_of, warehouse

#: The schedulers the bounds are stated for (Leontyev et al.).
SCHEDULERS = ("aus", "gedf-np")
#: AUS's recovery-period rules (its ``recovery_rule`` option): Rule A, Rule B.
RULES = (("Rule A (single)", "single"), ("Rule B (all)", "all"))
#: The claims listed under the figures, in this order.
CLAIMS = ("staleness", "response-time", "tardiness", "recovery-time", "capacity")


def verdict(record: CheckRecord) -> str:
    """``holds``, ``VIOLATED``, or ``not decided: <precondition>: <why>`` for the first unmet one."""
    if record.preconditions_met:
        return "holds" if record.holds else "VIOLATED"
    unmet = next(p for p in record.preconditions if not p.met)
    return f"not decided: {unmet.name}: {unmet.why}"


def record_rows(records: list[CheckRecord]) -> str:
    """The records as an escaped HTML table: claim, theorem, table, bound, observed, verdict."""
    rows = []
    for claim in CLAIMS:
        for r in (r for r in records if r.claim == claim):
            cells = (r.claim, r.theorem, r.table or "", "" if r.bound is None else f"{r.bound:.4g}",
                     "" if r.observed is None else f"{r.observed:.4g}", verdict(r))
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("claim", "theorem", "table", "bound", "observed", "verdict"))
    return f'<table style="font-size:90%"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


class BoundExplorer(Explorer):
    """A task set under AUS or GEDF-NP with one outage on a feed, bounds drawn over the run.

    ``.controls``: ``policy``, ``tracks``, ``horizon``, ``outage_feed`` (none: the workload's
    own outages), ``outage_start``, ``outage_length`` (lambda; 0: no outage on that feed) and
    ``recovery_rule`` (AUS); ``.summary`` is :meth:`~staleness_lab.api.CheckReport.to_json` of
    the check shown; ``.figures``: ``staleness`` (the curves with A(V_k) and each recovery's
    t_0 + x_k), ``response`` (each job's f - r with Theta_k) and ``gantt`` (the schedule with
    AUS's recovery modes shaded); ``main`` (the control a handout precomputes): ``outage_length``
    by default.
    """

    def __init__(self, workload: Workload | str | Path | dict[str, Any], *, policy: str = "aus",
                 horizon: float | None = None, tracks: int | None = None, outage_feed: str | None = None,
                 main: str = "outage_length") -> None:
        self.workload = warehouse(workload)
        w = self.workload
        span = float(horizon or w.horizon)
        feeds = [t.name for t in w.tables if t.sources is None]
        controls = {"policy": choice(SCHEDULERS, policy, "scheduler"), **run_controls(w, horizon, tracks),
                    "outage_feed": choice([("none", NO_OUTAGE), *((f, f) for f in feeds)], outage_feed or NO_OUTAGE,
                                          "outage on"),
                    "outage_start": slider(0.3 * span, 0.0, span, "outage start"),
                    "outage_length": slider(0.15 * span, 0.0, 0.5 * span, "outage length λ"),
                    "recovery_rule": choice(RULES, "single", "AUS recovery periods")}
        super().__init__(controls, [["staleness"], ["response"], ["gantt"]], main)

    def arguments(self) -> tuple[dict[str, Any], str, dict[str, Any], dict[str, Any]]:
        """(workload mapping, policy, options, overrides): what :meth:`compute` hands
        :func:`~staleness_lab.api.check`, so a test can make the same call."""
        v = values_of(self.controls)
        doc = self.workload.to_dict()
        if v["outage_feed"] != NO_OUTAGE:
            table = doc["tables"][self.workload.index[v["outage_feed"]]]
            start, length = v["outage_start"], v["outage_length"]
            if length > 0:
                table["outages"] = [[start, start + length]]
            else:
                table.pop("outages", None)
        options = {"recovery_rule": v["recovery_rule"]} if v["policy"] == "aus" else {}
        return doc, v["policy"], options, {"tracks": v["tracks"], "horizon": v["horizon"]}

    def compute(self) -> View:
        doc, policy, options, overrides = self.arguments()
        report = check(doc, policy, options=options, **overrides)
        figures = {"staleness": viz.staleness_with_bounds(report.trace, report.records),
                   "response": viz.response_with_bounds(report.trace, report.records),
                   "gantt": viz.gantt_with_modes(report.trace)}
        recoveries = sum(1 for r in report.records if r.theorem == T4)
        counts = report.summary()
        notes = (f"<p><b>{counts['held']}</b> bounds hold, <b>{counts['failed']}</b> fail, "
                 f"<b>{counts['undecided']}</b> not decided (a precondition unmet); "
                 f"{recoveries} recoveries checked against Theorem 4's x_k.</p>{record_rows(report.records)}")
        return View(report.to_json(policy, __version__), figures, notes)
