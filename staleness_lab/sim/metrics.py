"""Exact metrics from traces, as tidy DataFrames.

Staleness S_i(t) = t - F_i(t) is piecewise linear with slope 1 between updates, so its integral
over ``[warmup, horizon]`` is a sum of trapezoids, accumulated by the engine in closed form
(Golab et al., Sec. 2.3: the objective is sum_i p_i * integral S_i). ``max_staleness`` is the
supremum over the window: the sawtooth's peak just before an update lands, or S at the horizon.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from staleness_lab.sim.trace import RECORD_FIELDS, Trace

if TYPE_CHECKING:
    from staleness_lab.sim.ideal import IdealSummary

TABLE_METRIC_COLUMNS = [
    "table", "priority", "staleness_area", "weighted_staleness_area", "mean_staleness",
    "max_staleness", "updates",
]


def table_metrics(trace: Trace) -> pd.DataFrame:
    """Per table: priority, staleness area, priority-weighted area, mean and max staleness
    over the window, and the number of updates landing in it."""
    w = trace.workload
    window = w.horizon - w.warmup
    landed = trace.job_tables if w.warmup == 0 else trace.job_tables[trace.job_finish >= w.warmup]
    updates = np.bincount(landed, minlength=len(w.tables))
    area = np.asarray(trace.staleness_area, dtype=float)
    priority = np.array([t.priority for t in w.tables], dtype=float)
    return pd.DataFrame(
        {
            "table": pd.Series([t.name for t in w.tables], dtype="string"),
            "priority": priority,
            "staleness_area": area,
            "weighted_staleness_area": priority * area,
            "mean_staleness": area / window,
            "max_staleness": np.asarray(trace.max_staleness, dtype=float),
            "updates": updates.astype(np.int64),
        }
    )


def total_weighted_staleness(trace: Trace) -> float:
    """sum_i p_i * integral_{warmup}^{horizon} S_i(t) dt (Golab et al., Sec. 2.3)."""
    return float(sum(t.priority * a for t, a in zip(trace.workload.tables, trace.staleness_area)))


def track_utilization(trace: Trace) -> pd.DataFrame:
    """Per track, the fraction of ``[warmup, horizon]`` it spent running jobs (jobs still
    running at the horizon count up to it)."""
    w = trace.workload
    cols = trace.columns
    running = np.array(trace.in_flight, dtype=float).reshape(-1, len(RECORD_FIELDS))
    start = np.concatenate([cols["start"], running[:, 3]])
    finish = np.concatenate([cols["finish"], running[:, 3] + running[:, 6]])  # planned finish
    track = np.concatenate([cols["track"], running[:, 1].astype(np.int64)])
    span = np.clip(finish, w.warmup, w.horizon) - np.clip(start, w.warmup, w.horizon)
    busy = np.bincount(track, weights=span, minlength=w.tracks)
    return pd.DataFrame({"track": np.arange(w.tracks), "busy": busy, "utilization": busy / (w.horizon - w.warmup)})


def relative_lateness(trace: Trace, ideal: Trace | IdealSummary) -> pd.DataFrame:
    """Weighted staleness of a run divided by that of the same workload with no contention
    (Golab et al., Sec. 5: "relative lateness"), per table and in total (row ``table='*'``).

    ``ideal`` is the unlimited-track run's trace (:func:`~staleness_lab.sim.ideal.ideal_run`)
    or its closed-form :class:`~staleness_lab.sim.ideal.IdealSummary`; both give the same
    frame, bit for bit."""
    run_m = table_metrics(trace)
    if isinstance(ideal, Trace):
        ideal_w = table_metrics(ideal)["weighted_staleness_area"].to_numpy()
    else:
        ideal_w = ideal.weighted_staleness_area
    out = pd.DataFrame(
        {
            "table": run_m["table"],
            "weighted_staleness_area": run_m["weighted_staleness_area"],
            "ideal_weighted_staleness_area": ideal_w,
        }
    )
    total = pd.DataFrame(
        {
            "table": pd.Series(["*"], dtype="string"),
            "weighted_staleness_area": [out["weighted_staleness_area"].sum()],
            "ideal_weighted_staleness_area": [out["ideal_weighted_staleness_area"].sum()],
        }
    )
    out = pd.concat([out, total], ignore_index=True)
    out["relative_lateness"] = out["weighted_staleness_area"] / out["ideal_weighted_staleness_area"]
    return out
