"""``ScheduleExplorer``: one warehouse under one scheduler, every knob a control.

Tracks, scheduler, horizon, per table period/alpha/beta/priority, update chopping and one outage
on a feed; each change simulates again (:func:`staleness_lab.api.simulate`) and redraws the Gantt
chart, the staleness curves and the per-table totals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from staleness_lab import viz
from staleness_lab.api import simulate
from staleness_lab.model import Workload
from staleness_lab.policies import available_policies
from staleness_lab.widgets.base import Explorer, View, choice
from staleness_lab.widgets.workload import (CHOPS, edited, outage_controls, run_controls, table_controls, values_of,
                                            warehouse)


def policy_choice(value: str, description: str = "scheduler") -> Any:
    """Every registered update scheduler (each runs on any warehouse workload; one that cannot
    run a given combination, a partitioner short of tracks, AUS with u_k > 1, says why)."""
    return choice(list(available_policies()), value, description)


def totals(result: Any) -> str:
    """The per-table totals of a run as an escaped HTML table, under its total weighted staleness."""
    table = viz.styled(result.tables, precision=4, hide_index=True).to_html()
    return (f"<p><b>total weighted staleness</b> {result.total_weighted_staleness:.6g} · "
            f"{result.trace.n_jobs} jobs · {result.trace.events} events</p>{table}")


class ScheduleExplorer(Explorer):
    """One warehouse (2-8 tables, base and derived) under one scheduler.

    ``.controls``: ``tracks``, ``policy``, ``horizon``, ``chop``, ``outage_feed``, ``outage`` and
    ``<table>.period`` / ``.alpha`` / ``.beta`` / ``.priority``; ``.summary`` is
    :meth:`~staleness_lab.api.SimulationResult.summary` of the run shown; ``.figures``:
    ``gantt`` and ``staleness``; ``main`` (the control a handout precomputes): the first feed's
    period by default.
    """

    def __init__(self, workload: Workload | str | Path | dict[str, Any], *, policy: str = "max-benefit",
                 horizon: float | None = None, tracks: int | None = None, main: str | None = None) -> None:
        self.workload = warehouse(workload)
        w = self.workload
        chops = list(CHOPS) if (w.chop or 0.0) in dict(CHOPS).values() else [*CHOPS, (f"{w.chop:g} periods", w.chop)]
        controls = {**run_controls(w, horizon, tracks), "policy": policy_choice(policy),
                    "chop": choice(chops, w.chop or 0.0, "chopping"),
                    **outage_controls(w, float(horizon or w.horizon)), **table_controls(w)}
        periods = [name for name in controls if name.endswith(".period")]
        super().__init__(controls, [["gantt"], ["staleness"]], main or (periods[0] if periods else "tracks"))

    def compute(self) -> View:
        values = values_of(self.controls)
        result = simulate(edited(self.workload, values), values["policy"], tracks=values["tracks"],
                          horizon=values["horizon"])
        figures = {"gantt": viz.gantt(result.trace), "staleness": viz.staleness_curves(result.trace)}
        return View(result.summary(), figures, totals(result))
