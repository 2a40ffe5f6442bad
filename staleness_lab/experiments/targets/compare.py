"""The target-lag scheduler beside the papers' schedulers on the same workloads and seeds.

Each policy runs the same workload with the same seed, so all meet the same random costs (common
random numbers) and differ only where their decisions do. Per table: the freshness-target metrics
of :mod:`staleness_lab.sim.targets` (misses as episodes above the target, excess, worst lag) and
the priority-weighted staleness area of Golab et al.'s objective.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.api import as_workload, simulate
from staleness_lab.errors import Infeasible
from staleness_lab.model import Workload

#: The policies compared by default: the industry's rule, Golab et al.'s prioritized EDF and Max
#: Benefit, Leontyev et al.'s GEDF-NP and AUS.
COMPARED = ("target-lag", "edf-p", "max-benefit", "gedf-np", "aus")

COLUMNS = ["policy", "seed", "table", "target_lag", "misses", "excess", "time_above", "worst_lag",
           "weighted_staleness", "infeasible"]


def compare_targets(workload: Workload | str | Path | dict[str, Any], seeds: Iterable[int] = (0,),
                    policies: Sequence[str] = COMPARED, **overrides: Any) -> pd.DataFrame:
    """One row per (policy, seed, table with a target), :data:`COLUMNS`: ``misses`` (episodes
    above the target), ``excess`` (integral of staleness above it), ``time_above``, ``worst_lag``,
    ``weighted_staleness`` (priority x staleness area over the window) and ``infeasible`` (the
    reason a policy cannot run the workload, its metrics then NaN; else None). ``overrides``
    replace global workload keys as in :func:`~staleness_lab.api.simulate`."""
    base = as_workload(workload).with_overrides(**overrides)
    targeted = [t.name for t, target in zip(base.tables, base.target_lags) if target is not None]
    frames = []
    for seed in seeds:
        w = base.with_overrides(seed=seed)
        for policy in policies:
            frames.append(_one_run(w, policy, targeted))
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def _one_run(w: Workload, policy: str, targeted: list[str]) -> pd.DataFrame:
    """The rows of one policy on one seeded workload (NaN metrics and the reason when infeasible)."""
    try:
        result = simulate(w, policy)
    except Infeasible as refused:
        targets = [t for t in w.target_lags if t is not None]
        nan = [np.nan] * len(targeted)
        return pd.DataFrame({"policy": policy, "seed": w.seed, "table": targeted, "target_lag": targets,
                             "misses": pd.array([pd.NA] * len(targeted), dtype="Int64"), "excess": nan,
                             "time_above": nan, "worst_lag": nan, "weighted_staleness": nan,
                             "infeasible": refused.reason})
    frame = result.target_metrics.merge(result.tables[["table", "weighted_staleness_area"]], on="table")
    return pd.DataFrame({"policy": policy, "seed": w.seed, "table": frame["table"].astype(str),
                         "target_lag": frame["target_lag"], "misses": frame["misses"].astype("Int64"),
                         "excess": frame["excess"], "time_above": frame["time_above"], "worst_lag": frame["worst_lag"],
                         "weighted_staleness": frame["weighted_staleness_area"], "infeasible": None})


def comparison_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per policy (in the frame's order), over its tables and averaged over seeds: ``misses`` and
    ``excess`` summed over tables, ``worst_lag`` the largest, ``worst_over_target`` the largest
    worst lag / target, ``weighted_staleness`` summed over the targeted tables; ``seeds`` counted."""
    per_run = frame.assign(over=frame["worst_lag"] / frame["target_lag"]).groupby(
        ["policy", "seed"], sort=False).agg(misses=("misses", "sum"), excess=("excess", "sum"),
                                            worst_lag=("worst_lag", "max"), worst_over_target=("over", "max"),
                                            weighted_staleness=("weighted_staleness", "sum"))
    out = per_run.groupby("policy", sort=False).agg(
        misses=("misses", "mean"), excess=("excess", "mean"), worst_lag=("worst_lag", "mean"),
        worst_over_target=("worst_over_target", "mean"), weighted_staleness=("weighted_staleness", "mean"),
        seeds=("misses", "size"))
    return out.reset_index()
