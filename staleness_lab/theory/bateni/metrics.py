"""Bateni et al.'s batching metrics of a trace (digest Sec. 1): LOW, penalty, X, S*, S^H, stretch.

With update j of table i of length L_ij, data end d_ij and completion C_ij (:mod:`.updates`):

* ``LOW = sum_ij L_ij^2``; every schedule has X >= LOW/2 (staleness at tau is at least tau minus
  the latest data end).
* ``penalty = sum_k flow_k^2`` over batches, flow_k = finish - data_from.
* ``X = sum_ij [L_ij^2/2 + L_ij (C_ij - d_ij)]``, horizon- and tail-free (the canonical
  objective); ``X = S^H - sum_i (H - d_i,last)^2/2 + sum_i d_i0^2/2`` for every H at or after
  the last finish.
* ``S* = sum_i int_0^{F_i} S_i`` with F_i the table's last finish; ``S^H = sum_i int_0^H S_i``.
* update stretch ``(C_ij - d_i,j-1) / L_ij`` (not Golab et al.'s job stretch of ``Trace.jobs``).

Every sum runs over the updates applied by the horizon (in a drained run: all of them), so
the sandwich ``LOW/2 <= X <= S* <= penalty/2`` (Sec. 2.2) holds on any trace with F(0) = 0.
Weighted forms multiply each table's terms by its ``priority`` w_i (``X_w``, ``wLOW``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from staleness_lab.sim.trace import Trace
from staleness_lab.theory.bateni.updates import TableUpdates, table_updates


def staleness_integral(u: TableUpdates, until: float) -> float:
    """``int_0^until (tau - F_i(tau)) dtau`` from the table's freshness steps (its batches'
    finishes), F_i = ``initial`` before the first one."""
    times = np.concatenate([[0.0], np.minimum(u.finish, until), [until]])
    values = np.concatenate([[u.initial], u.batch_to])
    return until * until / 2 - float(np.sum(values * np.diff(times)))


def table_measures(u: TableUpdates, horizon: float) -> dict[str, float]:
    """One table's unweighted LOW, X, penalty, S*, S^H (H = ``horizon``) and max stretch."""
    done = u.applied
    length, completion, data_to = u.length[done], u.completion[done], u.data_to[done]
    data_from = data_to - length
    last_finish = float(u.finish[-1]) if len(u.finish) else 0.0
    last_data = float(data_to[-1]) if len(data_to) else u.initial
    stretch = (completion - data_from) / length
    return {
        "updates": int(len(u.length)),
        "applied": int(done.sum()),
        "batches": int(len(u.start)),
        "LOW": float(np.sum(length**2)),
        "X": float(np.sum(length**2 / 2 + length * (completion - data_to))),
        "penalty": float(np.sum(u.flow**2)),
        "S_star": staleness_integral(u, last_finish),
        "S_H": staleness_integral(u, horizon),
        "tail": (horizon - last_data) ** 2 / 2 - u.initial**2 / 2,
        "max_stretch": float(stretch.max()) if len(stretch) else float("nan"),
    }


@dataclass(frozen=True)
class Measures:
    """A trace's batching metrics: ``tables`` (one row per base table, unweighted, with its
    weight) and the totals, unweighted and priority-weighted."""

    tables: pd.DataFrame
    horizon: float

    def total(self, column: str, weighted: bool = False) -> float:
        """Sum of ``column`` over tables, each times its weight when ``weighted``."""
        values = self.tables[column].to_numpy(dtype=float)
        if weighted:
            values = values * self.tables["weight"].to_numpy(dtype=float)
        return float(values.sum())

    @property
    def LOW(self) -> float:  # noqa: N802 - the paper's name
        return self.total("LOW")

    @property
    def X(self) -> float:  # noqa: N802
        return self.total("X")

    @property
    def X_w(self) -> float:  # noqa: N802
        return self.total("X", weighted=True)

    @property
    def penalty(self) -> float:
        return self.total("penalty")

    @property
    def S_star(self) -> float:  # noqa: N802
        return self.total("S_star")

    @property
    def max_stretch(self) -> float:
        return float(self.tables["max_stretch"].max())

    @property
    def all_applied(self) -> bool:
        return bool((self.tables["applied"] == self.tables["updates"]).all())


def measures(trace: Trace, updates: list[TableUpdates] | None = None) -> Measures:
    """The batching metrics of every base table of ``trace`` (S^H at the trace's horizon)."""
    horizon = trace.workload.horizon
    rows = []
    for u in updates if updates is not None else table_updates(trace):
        rows.append({"table": u.name, "weight": u.weight, **table_measures(u, horizon)})
    return Measures(tables=pd.DataFrame(rows), horizon=horizon)


def update_stretches(u: TableUpdates) -> np.ndarray:
    """Each applied update's stretch (C_ij - d_i,j-1) / L_ij (digest Sec. 1; NaN if unapplied)."""
    return (u.completion - (u.data_to - u.length)) / u.length
