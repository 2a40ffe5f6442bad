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
from staleness_lab.sim import (
    Trace,
    ideal_run,
    relative_lateness,
    run,
    table_metrics,
    target_metrics,
    total_weighted_staleness,
    track_utilization,
)


@dataclass(eq=False)
class SimulationResult:
    """A run's trace with its metrics as tidy DataFrames.

    ``tables``: per-table metrics; ``jobs``: completed jobs; ``utilization``: per track;
    ``target_metrics``: per table with a freshness target, its misses (:mod:`staleness_lab.sim.targets`);
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
    def target_metrics(self) -> pd.DataFrame:
        return target_metrics(self.trace)

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
        if any(t is not None for t in w.target_lags):
            out["targets"] = [
                {"table": row.table, "target_lag": row.target_lag, "time_above": row.time_above,
                 "fraction_above": row.fraction_above, "excess": row.excess, "worst_lag": row.worst_lag,
                 "misses": int(row.misses)}
                for row in self.target_metrics.itertuples(index=False)
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
    max_events: int | None = None,
    engine: str = "auto",
    **overrides: Any,
) -> SimulationResult:
    """Simulate a workload under a policy (a registry name with ``options``, or an object).

    ``overrides`` replace global workload keys (``tracks=8``, ``horizon=1e5``, ``seed=3``);
    ``relative=True`` also runs the same workload with unlimited tracks (one per table, so
    every job starts when released) to compute relative lateness (Golab et al., Sec. 5), and
    keeps its trace (:func:`~staleness_lab.sim.ideal.ideal_run`; a sweep needing only its
    totals takes :func:`~staleness_lab.sim.ideal.ideal_summary`, the same numbers in closed form).
    ``max_events`` raises the run-size guard's limit (:mod:`staleness_lab.sim.size`: about 10^8
    events by default); a bigger run is refused with an :class:`InputError` before it starts.
    ``engine`` picks the loop (:data:`~staleness_lab.sim.engine.ENGINES`: ``auto``, ``python``,
    ``compiled``); the trace is the same bit for bit whichever runs it.
    Raises :class:`~staleness_lab.errors.Infeasible` when the policy cannot run the workload.
    """
    w = as_workload(workload).with_overrides(**overrides)
    chosen = get_policy(policy, **(options or {}))
    name = policy if isinstance(policy, str) else getattr(chosen, "name", type(chosen).__name__)
    trace = run(w, chosen, name, max_events=max_events, engine=engine)
    ideal = None
    if relative:
        ideal = ideal_run(w, max_events=max_events)
    return SimulationResult(trace=trace, ideal=ideal)


@dataclass(eq=False)
class Duel:
    """One workload under two policies (``sl.duel``): the same seed, so both runs meet the same
    random costs (common random numbers) and differ only where the schedulers do."""

    left: SimulationResult
    right: SimulationResult

    @cached_property
    def difference(self) -> pd.DataFrame:
        """Per table: ``table``, ``priority``, the priority-weighted staleness area under each
        policy (``left``, ``right``) and ``difference`` = right - left (negative: the right
        policy kept the table fresher)."""
        a, b = self.left.tables, self.right.tables
        return pd.DataFrame({
            "table": a["table"], "priority": a["priority"], "left": a["weighted_staleness_area"],
            "right": b["weighted_staleness_area"],
            "difference": b["weighted_staleness_area"] - a["weighted_staleness_area"],
        })


def duel(
    workload: Workload | str | Path | dict[str, Any],
    left: str,
    right: str,
    **overrides: Any,
) -> Duel:
    """Simulate ``workload`` (with ``overrides``, as :func:`simulate`) under the registered
    policies ``left`` and ``right``. Raises :class:`~staleness_lab.errors.Infeasible` when either
    cannot run the workload."""
    w = as_workload(workload).with_overrides(**overrides)
    return Duel(left=simulate(w, left), right=simulate(w, right))


def warm() -> None:
    """Compile (or load from its cache) the engine's compiled core (:mod:`staleness_lab.sim.compiled`)
    by simulating a tiny workload under FIFO, Random and Proportional (an order, an order drawing
    from the policy's stream, a placement rule), and the X_w optimum's labelling search
    (:mod:`staleness_lab.optimize.block_labels`), the batch planner's split-form search
    (:mod:`staleness_lab.optimize.split_search`) and its columns' tables
    (:mod:`staleness_lab.optimize.decomposition`). ``make setup`` calls it, so no run pays the
    compilation unseen; it sits here, above the engine, because it names built-in policies."""
    from staleness_lab.optimize import decomposition, split_search
    from staleness_lab.optimize.block_labels import compile_search

    compile_search()
    split_search.compile_search()
    decomposition.compile_tables()
    for policy in ("fifo", "random", "proportional"):
        simulate({"tracks": 1, "horizon": 10, "variability": 0.5, "slowdown": {"factor": 2, "normal": 1, "slow": 1},
                  "tables": [{"name": "a", "period": 1, "chop": 2, "alpha": 0.1, "beta": 0.5, "priority": 1},
                             {"name": "v", "sources": ["a"], "alpha": 0.1, "beta": 0.1, "priority": 1}]}, policy)


@dataclass(eq=False)
class CheckReport:
    """The theorems of every paper checked on one run (``sl.check``; ``staleness-lab check``).

    ``trace`` is the policy's run, drained when the feeds are finite (``drained``; the horizon
    raised as :mod:`staleness_lab.sim.drain` says); ``records`` the claims of every suite;
    ``X`` Bateni et al.'s weighted X_w of the run, None with ``X_reason`` unless every table is a
    replayed base table and every listed update was applied.
    """

    workload: Workload
    trace: Trace
    records: list[Any]
    drained: bool
    X: float | None  # noqa: N815 - the paper's name
    X_reason: str | None  # noqa: N815

    @property
    def frame(self) -> pd.DataFrame:
        """One row per record: claim, theorem, table, observed, bound, ratio, holds,
        preconditions_met, unmet (names), diagnostic."""
        rows = [{
            "claim": r.claim, "theorem": r.theorem, "table": r.table, "observed": r.observed, "bound": r.bound,
            "ratio": r.ratio, "holds": r.holds, "preconditions_met": r.preconditions_met,
            "unmet": ", ".join(p.name for p in r.preconditions if not p.met), "diagnostic": r.diagnostic,
        } for r in self.records]
        return pd.DataFrame(rows, columns=["claim", "theorem", "table", "observed", "bound", "ratio", "holds",
                                           "preconditions_met", "unmet", "diagnostic"])

    def summary(self) -> dict[str, Any]:
        """Counts of records that hold, fail and are undecided (a precondition unmet); failing
        diagnostics (proof steps with a known gap) are counted apart."""
        decided = [r for r in self.records if r.holds is not None]
        failed = [r for r in decided if not r.holds and not r.diagnostic]
        return {
            "records": len(self.records),
            "held": sum(1 for r in decided if r.holds),
            "failed": len(failed),
            "undecided": len(self.records) - len(decided),
            "diagnostics_failed": sum(1 for r in decided if not r.holds and r.diagnostic),
            "failed_claims": sorted({r.claim for r in failed}),
            "drained": self.drained,
        }

    def to_json(self, policy: str, version: str) -> dict[str, Any]:
        """The ``check --json`` object."""
        w = self.workload
        out: dict[str, Any] = {
            "status": "ok", "policy": policy, "horizon": self.trace.workload.horizon, "seed": w.seed,
            "tracks": w.tracks, "workload_sha256": w.digest(), "version": version, "summary": self.summary(),
            "X": self.X,
        }
        if self.X is None:
            out["X_reason"] = self.X_reason
        out["checks"] = [r.to_dict() for r in self.records]
        return out


def check(
    workload: Workload | str | Path | dict[str, Any],
    policy: str | Policy = "fifo",
    *,
    options: dict[str, Any] | None = None,
    max_events: int | None = None,
    **overrides: Any,
) -> CheckReport:
    """Run ``policy`` on ``workload`` (drained where the feeds are finite) and check every
    paper's claims on the trace (:mod:`staleness_lab.theory.suites`). ``max_events`` as in
    :func:`simulate`. Raises
    :class:`~staleness_lab.errors.Infeasible` when the policy cannot run the workload."""
    from staleness_lab.sim.drain import drained_run
    from staleness_lab.theory.bateni.metrics import measures
    from staleness_lab.theory.suites import CheckContext, run_suites

    w = as_workload(workload).with_overrides(**overrides)
    chosen = get_policy(policy, **(options or {}))
    name = policy if isinstance(policy, str) else getattr(chosen, "name", type(chosen).__name__)
    drained = drained_run(w, chosen, name, max_events=max_events)
    context = CheckContext(workload=w, trace=drained.trace, policy=name, options=dict(getattr(chosen, "options", {})),
                           drained=drained.drained, drain_reason=drained.reason)
    x_value, x_reason = None, drained.reason
    derived = next((t.name for t in w.tables if not t.is_base), None)
    if derived is not None:
        x_reason = f"table {derived!r} is derived: X is defined on replayed base tables"
    elif drained.drained:
        x_value = measures(drained.trace).X_w
    return CheckReport(workload=w, trace=drained.trace, records=run_suites(context), drained=drained.drained,
                       X=x_value, X_reason=x_reason)
