"""Per-table freshness-target metrics from a trace, exact on the piecewise-linear staleness.

Staleness S_i(t) = t - F_i(t) is the trace's own (a derived table's F_i is the trailing edge it
loaded, so S_i counts from the roots of the DAG: the end-to-end lag a ``target_lag`` bounds,
:mod:`staleness_lab.model.targets`). F_i is a right-continuous step function, so over the window
``[warmup, horizon]`` S_i is a chain of segments [a, b) on which it rises with slope 1 from
a - F to b - F. On each segment, with T the table's resolved target:

* time above target: the part where t - F > T, of length max(0, b - max(a, F + T));
* excess, the integral of max(0, S - T): the triangle-topped trapezoid
  ((b - F - T)^2 - (u - F - T)^2) / 2 with u = max(a, F + T), when b > u;
* worst lag: the segment's supremum b - F (S just before the update lands, or at the horizon);
* miss episodes: maximal intervals with S > T. Staleness only rises between updates, so an
  episode starts inside a segment (or at the window's start) and ends at an update that brings S
  to T or below; a segment that already starts above T continues the previous one.

Sitting exactly at the target meets it (above means strictly above).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from staleness_lab.sim.trace import Trace

TARGET_METRIC_COLUMNS = ["table", "target_lag", "time_above", "fraction_above", "excess", "worst_lag", "misses"]


def segment_metrics(starts: np.ndarray, ends: np.ndarray, fresh: np.ndarray, target: float) -> tuple[float, float, float, int]:
    """(time above, excess integral, worst lag, miss episodes) of one table's staleness over
    consecutive segments [starts[k], ends[k]) on which F = fresh[k] (see the module docstring)."""
    onset = np.maximum(starts, fresh + target)  # where S crosses T within the segment, if it does
    above = ends > onset
    time_above = float(np.sum(np.where(above, ends - onset, 0.0)))
    rise_end, rise_start = ends - fresh - target, onset - fresh - target
    excess = float(np.sum(np.where(above, (rise_end * rise_end - rise_start * rise_start) * 0.5, 0.0)))
    worst = float(np.max(ends - fresh)) if len(ends) else float("nan")
    starts_above = starts - fresh > target
    ended_above = ends - fresh > target
    continues = np.concatenate([[False], starts_above[1:] & ended_above[:-1]])  # carried over an update
    misses = int(np.count_nonzero(above & ~continues))
    return time_above, excess, worst, misses


def target_metrics(trace: Trace) -> pd.DataFrame:
    """One row per table with a freshness target (``Workload.target_lags``, ``downstream``
    resolved), in file order: ``table``, ``target_lag``, ``time_above`` (time with staleness
    above the target in ``[warmup, horizon]``), ``fraction_above`` (its share of the window),
    ``excess`` (integral of max(0, S - target)), ``worst_lag`` (sup S over the window) and
    ``misses`` (maximal intervals above the target). Empty (same columns) when no table has one."""
    w = trace.workload
    window = w.horizon - w.warmup
    steps = trace.freshness
    times = steps["time"].to_numpy()
    fresh = steps["freshness"].to_numpy()
    rows = []
    offset = 0
    counts = steps.groupby("table", sort=False).size()
    for k, table in enumerate(w.tables):
        size = int(counts.get(table.name, 0))
        t_k, f_k = times[offset:offset + size], fresh[offset:offset + size]
        offset += size
        target = w.target_lags[k]
        if target is None:
            continue
        rows.append({"table": table.name, "target_lag": float(target),
                     **dict(zip(TARGET_METRIC_COLUMNS[2:], _table_row(t_k, f_k, target, w.warmup, w.horizon, window)))})
    frame = pd.DataFrame(rows, columns=TARGET_METRIC_COLUMNS)
    frame["table"] = frame["table"].astype("string")
    frame["misses"] = frame["misses"].astype(np.int64)
    return frame


def _table_row(times: np.ndarray, fresh: np.ndarray, target: float, warmup: float, horizon: float,
               window: float) -> tuple[float, float, float, float, int]:
    """One table's metrics from its freshness steps (time order, the first at 0)."""
    inside = (times > warmup) & (times < horizon)
    starts = np.concatenate([[warmup], times[inside]])
    ends = np.concatenate([times[inside], [horizon]])
    first = np.searchsorted(times, warmup, side="right") - 1  # F at warmup (right-continuous)
    seg_fresh = np.concatenate([[fresh[max(first, 0)]], fresh[inside]])
    time_above, excess, worst, misses = segment_metrics(starts, ends, seg_fresh, target)
    return time_above, time_above / window, excess, worst, misses
