"""``budget(workload, tracks=None, policy="gedf-np")``: certified lag budgets beside one run.

The certificate is theory (:mod:`staleness_lab.theory.leontyev.budget`: bounds, preconditions,
verdicts, ``min_tracks``, ``blame``, all exact); this module adds what only a run can show, the
``observed_worst`` lag of each table in one simulation under the same scheduler at the
workload's own horizon and seed (both stated), as a sanity check beside the bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd

from staleness_lab.api import as_workload, simulate
from staleness_lab.errors import Infeasible
from staleness_lab.model import Workload
from staleness_lab.sim.trace import Trace
from staleness_lab.theory.lagsplit import worst_lags
from staleness_lab.theory.leontyev.budget import LEONTYEV, Certificate, certify, check_policy
from staleness_lab.theory.leontyev.checks import observe

#: The frame's columns (one row per table with a target).
COLUMNS = ["table", "target", "bound", "verdict", "excess", "unmet", "observed_worst", "preconditions"]


def _number(value: Fraction | None) -> float | None:
    return None if value is None else float(value)


@dataclass(eq=False)
class BudgetResult:
    """A workload's lag budget: ``certificate`` (exact), ``frame`` (tidy, one row per table with a
    target), ``min_tracks``, ``blame``, ``policy``, ``tracks``; ``observed`` per table from the run
    ``trace`` at ``horizon`` and ``seed`` (None with ``observed_reason`` when the scheduler
    refuses the workload)."""

    workload: Workload
    certificate: Certificate
    trace: Trace | None
    observed: dict[str, float]
    observed_reason: str | None

    @property
    def policy(self) -> str:
        return self.certificate.policy

    @property
    def tracks(self) -> int:
        return self.certificate.tracks

    @property
    def min_tracks(self) -> int | None:
        return self.certificate.min_tracks

    @property
    def blame(self) -> list[str] | None:
        found = self.certificate.blame
        return None if found is None else list(found)

    @property
    def horizon(self) -> float:
        return self.workload.horizon

    @property
    def seed(self) -> int:
        return self.workload.seed

    def rows(self) -> list[dict[str, Any]]:
        """One JSON-ready object per table with a target (the ``--json`` ``tables`` list)."""
        return [{
            "table": t.table, "target": float(t.target), "bound": _number(t.bound),
            "preconditions": [p.to_dict() for p in t.preconditions], "verdict": t.verdict,
            "excess": _number(t.excess), "unmet": t.unmet, "observed_worst": self.observed.get(t.table),
        } for t in self.certificate.tables]

    @property
    def frame(self) -> pd.DataFrame:
        """One row per table with a target: the columns of :data:`COLUMNS` (``unmet`` and
        ``preconditions`` as text: the unmet names, and every precondition ``name: met|unmet``)."""
        rows = [{**row, "unmet": ", ".join(row["unmet"]),
                 "preconditions": "; ".join(f"{p['name']}: {'met' if p['met'] else 'unmet'}" for p in row["preconditions"])}
                for row in self.rows()]
        return pd.DataFrame(rows, columns=COLUMNS)

    def to_json(self, version: str) -> dict[str, Any]:
        """The ``budget --json`` object: ``tables``, ``min_tracks``, ``blame``, ``policy``, ``tracks``
        and what they rest on (reasons, the run's horizon and seed)."""
        c = self.certificate
        return {"status": "ok", "tables": self.rows(), "min_tracks": c.min_tracks,
                "min_tracks_reason": c.min_tracks_reason, "blame": self.blame, "blame_method": c.blame_method,
                "policy": c.policy, "tracks": c.tracks, "bound_kind": c.bound_kind, "horizon": self.horizon, "seed": self.seed,
                "observed_reason": self.observed_reason, "version": version}


def budget(workload: Workload | str | Path | dict[str, Any], tracks: int | None = None,
           policy: str = "gedf-np", bound: str = LEONTYEV) -> BudgetResult:
    """The certified lag budget of ``workload`` on ``tracks`` (default: its own) under ``policy``
    (``gedf-np`` or ``aus``) with ``bound`` (``leontyev``, Def. 13's A(V_k), or ``slot``, the
    tighter gedf-np bound of :mod:`staleness_lab.theory.leontyev.slot`), with each table's
    observed worst lag in one run under the same scheduler (the workload's horizon and seed). Bad
    input (InputError, exit 2): another policy or bound, the slot bound under aus, tracks < 1, no
    table with a target."""
    policy = check_policy(policy)
    w = as_workload(workload)
    if tracks is not None:
        w = w.with_overrides(tracks=tracks)
    certificate = certify(w, policy, bound)
    try:
        trace = simulate(w, policy).trace
    except Infeasible as refused:
        return BudgetResult(w, certificate, None, {}, f"{policy} refuses the workload: {refused.reason}")
    names = [t.name for t in w.tables]
    observed = {names[k]: until - since for k, (since, until) in enumerate(worst_lags(observe(trace)))}
    return BudgetResult(w, certificate, trace, observed, None)
