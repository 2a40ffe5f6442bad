"""``SchedulerDuel``: one workload and seed under two schedulers, side by side.

Both runs draw the same random costs (common random numbers, :func:`staleness_lab.api.duel`),
so every difference in the per-table weighted staleness is the schedulers'.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import ipywidgets as W

from staleness_lab import viz
from staleness_lab.api import duel
from staleness_lab.model import Workload
from staleness_lab.widgets.base import STYLE, Explorer, View
from staleness_lab.widgets.schedule import policy_choice
from staleness_lab.widgets.workload import run_controls, values_of, warehouse


class SchedulerDuel(Explorer):
    """Two schedulers on one warehouse.

    ``.controls``: ``left``, ``right`` (policies), ``tracks``, ``horizon``, ``seed``;
    ``.summary``: ``{"left": ..., "right": ..., "difference": [...]}``, the two runs'
    :meth:`~staleness_lab.api.SimulationResult.summary` and :attr:`~staleness_lab.api.Duel.difference`
    as records; ``.figures``: ``left`` and ``right`` (Gantt charts) and ``difference``; ``main``
    (the control a handout precomputes): ``tracks`` by default.
    """

    def __init__(self, workload: Workload | str | Path | dict[str, Any], *, left: str = "edf",
                 right: str = "max-benefit", horizon: float | None = None, tracks: int | None = None,
                 main: str = "tracks") -> None:
        self.workload = warehouse(workload)
        w = self.workload
        controls = {"left": policy_choice(left, "left"), "right": policy_choice(right, "right"),
                    **run_controls(w, horizon, tracks),
                    "seed": W.BoundedIntText(value=w.seed, min=0, max=2**31 - 1, description="seed", style=STYLE,
                                             continuous_update=False, layout=W.Layout(width="200px"))}
        super().__init__(controls, [["left", "right"], ["difference"]], main)

    def compute(self) -> View:
        v = values_of(self.controls)
        match = duel(self.workload, v["left"], v["right"], tracks=v["tracks"], horizon=v["horizon"], seed=v["seed"])
        summary = {"left": match.left.summary(), "right": match.right.summary(),
                   "difference": match.difference.to_dict(orient="records")}
        figures = {"left": viz.gantt(match.left.trace), "right": viz.gantt(match.right.trace),
                   "difference": viz.duel_difference(match.difference, v["left"], v["right"])}
        notes = (f"<p><b>total weighted staleness</b>: {html.escape(v['left'])} {match.left.total_weighted_staleness:.6g}, "
                 f"{html.escape(v['right'])} {match.right.total_weighted_staleness:.6g}</p>")
        return View(summary, figures, notes)
