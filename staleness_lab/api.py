"""The notebook-sized entry point: ``simulate(workload, policy, **overrides)``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab.model import Workload, load_workload, parse_workload
from staleness_lab.policies import Policy, get_policy
from staleness_lab.sim import Trace, relative_lateness, run, table_metrics, total_weighted_staleness, track_utilization


@dataclass(eq=False)
class SimulationResult:
    """A run's trace with its metrics as tidy DataFrames.

    ``tables``: per-table metrics; ``jobs``: completed jobs; ``utilization``: per track;
    ``relative_lateness``: against the same workload with unlimited tracks (only when
    ``simulate(..., relative=True)``, since it costs a second run).
    """

    trace: Trace
    ideal: Trace | None = None

    @property
    def workload(self) -> Workload:
        return self.trace.workload

    @cached_property
    def tables(self) -> pd.DataFrame:
        return table_metrics(self.trace)

    @property
    def jobs(self) -> pd.DataFrame:
        return self.trace.jobs

    @property
    def freshness(self) -> pd.DataFrame:
        return self.trace.freshness

    @cached_property
    def utilization(self) -> pd.DataFrame:
        return track_utilization(self.trace)

    @cached_property
    def relative_lateness(self) -> pd.DataFrame:
        if self.ideal is None:
            raise InputError("relative", "relative lateness was not computed: call simulate(..., relative=True)")
        return relative_lateness(self.trace, self.ideal)

    @property
    def total_weighted_staleness(self) -> float:
        return total_weighted_staleness(self.trace)

    def summary(self) -> dict[str, Any]:
        """The deterministic run summary (the CLI's ``--json`` object, without the version)."""
        w = self.workload
        out: dict[str, Any] = {
            "policy": self.trace.policy,
            "horizon": w.horizon,
            "warmup": w.warmup,
            "seed": w.seed,
            "tracks": w.tracks,
            "events": self.trace.events,
            "jobs": self.trace.n_jobs,
            "total_weighted_staleness": self.total_weighted_staleness,
        }
        if self.ideal is not None:
            out["relative_lateness"] = float(self.relative_lateness["relative_lateness"].iloc[-1])
        out["tables"] = [
            {
                "table": row.table,
                "priority": row.priority,
                "staleness_area": row.staleness_area,
                "mean_staleness": row.mean_staleness,
                "max_staleness": row.max_staleness,
                "updates": int(row.updates),
            }
            for row in self.tables.itertuples(index=False)
        ]
        return out


def as_workload(workload: Workload | str | Path | dict[str, Any]) -> Workload:
    """A workload from an object, a YAML/JSON path or a mapping."""
    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, (str, Path)):
        return load_workload(workload)
    if isinstance(workload, dict):
        return parse_workload(workload)
    raise InputError("workload", f"must be a Workload, a path or a mapping, got {type(workload).__name__}")


def simulate(
    workload: Workload | str | Path | dict[str, Any],
    policy: str | Policy = "max-benefit",
    *,
    options: dict[str, Any] | None = None,
    relative: bool = False,
    **overrides: Any,
) -> SimulationResult:
    """Simulate a workload under a policy (a registry name with ``options``, or an object).

    ``overrides`` replace global workload keys (``tracks=8``, ``horizon=1e5``, ``seed=3``);
    ``relative=True`` also runs the same workload with unlimited tracks (one per table, so
    every job starts when released) to compute relative lateness (Golab et al., Sec. 5).
    Raises :class:`~staleness_lab.errors.Infeasible` when the policy cannot run the workload.
    """
    w = as_workload(workload).with_overrides(**overrides)
    chosen = get_policy(policy, **(options or {}))
    name = policy if isinstance(policy, str) else getattr(chosen, "name", type(chosen).__name__)
    trace = run(w, chosen, name)
    ideal = None
    if relative:
        ideal = run(w.with_overrides(tracks=max(w.tracks, len(w.tables))), get_policy("fifo"), "ideal")
    return SimulationResult(trace=trace, ideal=ideal)
