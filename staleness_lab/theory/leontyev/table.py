"""Leontyev et al.'s closed forms as one tidy row per task, from a task set or a workload.

Its own module because it reads both :mod:`.bounds` (the results) and :mod:`.workloads` (the
workload-to-task-set mapping, which itself uses :mod:`.bounds`' recovery-period rules).
"""

from __future__ import annotations

import math

import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab.model import Workload
from staleness_lab.theory.leontyev.bounds import (recovery_thresholds, recovery_time, response_time_bounds,
                                                  staleness_bounds, tardiness_bounds)
from staleness_lab.theory.leontyev.tasks import Number, TaskSet, check_scheduler, exact, show
from staleness_lab.theory.leontyev.workloads import from_workload


def bounds_table(source: TaskSet | Workload, scheduler: str, lam: Number | None = None, *,
                 recovery_rule: str = "single") -> pd.DataFrame:
    """The bounds of ``source`` under ``scheduler`` (``aus`` or ``gedf-np``): a task set as
    given, or a workload mapped by :func:`~.workloads.from_workload` (with ``recovery_rule``).

    One row per task: ``task`` (0-based index), ``name`` (given, else the paper's ``T{k+1}``),
    ``kind`` (base/derived), ``e``, ``p``, ``p_r``, ``u``, ``W``, ``Y``, ``theta``, ``A``,
    ``delta_f`` (the effective AUS threshold; NaN under gedf-np, which has no modes), ``x`` (Theorem 4
    at ``lam``; only when ``lam`` is given, NaN where the theorem does not apply: gedf-np, derived
    tables, p^[r] = p) and ``scheduler``. Values are floats of the exact results.
    """
    scheduler = check_scheduler(scheduler)
    ts = source if isinstance(source, TaskSet) else from_workload(source, scheduler, recovery_rule=recovery_rule)
    if lam is not None and exact(lam, "lambda") < 0:
        raise InputError("lambda", f"the outage length must be >= 0, got {show(exact(lam, 'lambda'))}")
    w = ts.W(scheduler)
    y = tardiness_bounds(ts, scheduler)
    theta = response_time_bounds(ts, scheduler)
    a = staleness_bounds(ts, scheduler)
    thresholds = recovery_thresholds(ts) if scheduler == "aus" else None
    rows = []
    for k, t in enumerate(ts.tasks):
        row = {
            "task": k, "name": ts.name_of(k), "kind": "base" if t.is_base else "derived",
            "e": float(t.e), "p": float(t.p), "p_r": float(t.p_r), "u": float(ts.u[k]),  # type: ignore[arg-type]
            "W": float(w[k]), "Y": float(y[k]), "theta": float(theta[k]), "A": float(a[k]),
            "delta_f": math.nan if thresholds is None else float(thresholds[k]),
        }
        if lam is not None:
            applies = scheduler == "aus" and t.is_base and t.p_r < t.p  # type: ignore[operator]
            row["lam"] = float(exact(lam, "lambda"))
            row["x"] = float(recovery_time(theta[k], t.p, t.p_r, lam, t.J)) if applies else math.nan  # type: ignore[arg-type]
        row["scheduler"] = scheduler
        rows.append(row)
    return pd.DataFrame(rows)
