"""Olston, "Scheduling of Asynchronous Incremental Workflows": Tables 5 and 6, check 12 and the
heuristics' ablation, each a grid of one registered experiment (``olston-run``: one run of
:func:`staleness_lab.workflows.sim.run` in sizes mode, one row).

Setup (digest §5, §7): the three evaluation workflows ``data/workflows/<name>.yaml`` (SP, FP, CS)
with their generated inputs, one cost set for every operator, an elastic pool of 1,000
machines, noise ``max(0.1, 1 + Z)``. The paper gives no rates, sizes or costs (digest A4): the
reproduction matches orderings and ratios, not absolute values.

Grids (:data:`SWEEPS`, :func:`grid` per profile ``quick`` / ``standard`` / ``full``,
:data:`~staleness_lab.sweeps.named.PROFILES`):

* ``table5``: every workflow under the four scenarios, DP, 1 day / 2 weeks / 10 weeks;
* ``table6``: Async/Incr, DP, GREEDY and RANDOM, 3 h / 12 h / 12 h; a baseline whose search
  blows up (the paper's finding, §7) stops at the profile's scheduler budget as ``timeout``;
* ``check12``: CS over 10 weeks (8 days quick) with heuristic (e) on and off;
* ``ablation``: DP on each workflow with one heuristic (a)-(e) off at a time, and all on;
* ``scaling``: DP on ``join-cascade(k)``, k = 2..8 (``olston-cascade``, one row per run): scheduler
  CPU per call and per invocation against k and the blocks a call sees, for 6 h / 2 days / 1 week.

Check 7's brute force is not a grid: :func:`staleness_lab.workflows.brute_force.compare` runs
:data:`BRUTE_FORCE_INSTANCES` random instances of the profile in a few seconds.

Rows carry ``workflow_sha256`` as a parameter (:func:`grid` fills it; a row whose file no longer
has that digest fails naming it), so the per-row cache, keyed on code and parameters, never
serves a row of an edited workflow file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab.model.workload import MAX_SEED
from staleness_lab.sweeps.named import NamedSweep, check_profile
from staleness_lab.sweeps.registry import Param, check_choice, experiment
from staleness_lab.workflows.cascade import MAX_K, join_cascade
from staleness_lab.workflows.context import SCENARIOS, Options
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.sim import MAX_SCHEDULER_S, SCHEDULERS, RunConfig, run
from staleness_lab.workflows.sources import CRAWL_INITIAL, ISSUE_RATES, URLS, USERS

#: The evaluation workflows (file stems under ``data/workflows/``) and their short names.
WORKFLOWS = {"search-preprocessing": "SP", "feedback-prioritization": "FP", "crawl-selection": "CS"}
#: The heuristics an ablation row may turn off (:class:`~staleness_lab.workflows.context.Options`).
HEURISTICS = tuple(Options.__dataclass_fields__)
#: Hours in a week: check 12 counts refreshes after the first one.
WEEK_H = 168.0


def load(name: str) -> Workflow:
    """An evaluation workflow by its file stem."""
    from staleness_lab.notebook_params import repo_file
    from staleness_lab.workflows.load import load_workflow

    check_choice(name, WORKFLOWS, "workflow")
    return load_workflow(repo_file(f"data/workflows/{name}.yaml"))


#: Per generator: the size parameters :func:`reduced` scales with ``rows`` and their defaults
#: (sp-clicks draws its pages from the crawl's, so it follows the crawl's sizes).
_SIZE_PARAMS = {
    "sp-crawl": {"initial": CRAWL_INITIAL},
    "sp-clicks": {"users": USERS, "crawl_rows": ISSUE_RATES["sp-crawl"][1], "crawl_initial": CRAWL_INITIAL},
    "fp-log": {},
    "cs-fetches": {"urls": URLS},
}


def reduced(workflow: Workflow, share: float) -> Workflow:
    """``workflow`` with every generated input's sizes (rows per arrival, initial pages, users,
    URLs) scaled by ``share`` (at least 1 each): the issue's "reduced sizes" of quick Spark
    runs, same rates, same graph."""
    from staleness_lab.workflows.load import workflow_from_dict

    if not 0 < share <= 1:
        raise InputError("share", f"must be in (0, 1], got {share!r}")
    data = workflow.to_dict()
    for channel in data["channels"].values():
        spec = channel.get("input")
        if not spec or "generator" not in spec:
            continue
        params = dict(spec.get("params", {}))
        for name, default in _SIZE_PARAMS.get(spec["generator"], {}).items():
            params[name] = max(1, round(params.get(name, default) * share))
        spec["rows"] = max(1, round(spec["rows"] * share))
        spec["params"] = params
    return workflow_from_dict(data, base_dir=workflow.base_dir)


def options_without(off: str) -> Options:
    """The heuristics with those named in the comma list ``off`` turned off."""
    names = [n.strip() for n in off.split(",") if n.strip()]
    for n in names:
        check_choice(n, HEURISTICS, "off")
    return replace(Options(), **{n: False for n in names})


@experiment(
    "olston-run",
    Param("workflow", str, "search-preprocessing", "evaluation workflow (data/workflows/<name>.yaml)",
          choices=tuple(WORKFLOWS)),
    Param("scenario", str, "async-incr", "async-incr, sync-incr, async-batch or sync-batch", choices=SCENARIOS),
    Param("scheduler", str, "dp", "dp (Algorithm 1), greedy or random", choices=SCHEDULERS),
    Param("hours", float, 24.0, "horizon in hours", gt=0, le=24 * 7 * 52),
    Param("seed", int, 1, "seed of the inputs, the noise and RANDOM", ge=0, le=MAX_SEED),
    Param("off", str, "", "heuristics turned off, comma-separated (prune_old, chains, propagate, overkill, longterm)"),
    Param("max_scheduler_s", float, MAX_SCHEDULER_S, "scheduler-time budget; past it the run ends 'timeout'",
          gt=0, le=MAX_SCHEDULER_S),
    Param("workflow_sha256", str, "", "the workflow file's SHA-256 the row is for (grids fill it; empty: the file as it is)"),
)
def run_row(workflow: str, scenario: str, scheduler: str, hours: float, seed: int, off: str,
            max_scheduler_s: float, workflow_sha256: str) -> pd.DataFrame:
    """One run of an evaluation workflow (sizes mode): lag, cost, scheduler time per call, and
    every operator's invocations in all and after the first week (check 12)."""
    wf = load(workflow)
    if workflow_sha256 and workflow_sha256 != wf.sha256():
        raise InputError("workflow_sha256", f"is {workflow_sha256[:12]}..., but {workflow}.yaml is {wf.sha256()[:12]}...")
    config = RunConfig(scheduler=scheduler, scenario=scenario, seed=seed, horizon=hours,
                       options=options_without(off), max_scheduler_s=max_scheduler_s)
    result = run(wf, config)
    s = result.summary
    calls = result.frames["scheduler_calls"]["seconds"] * 1000.0
    inv = result.frames["invocations"]
    episodes = result.frames["episodes"]
    staleness = episodes.loc[episodes["bound"].str.startswith("staleness"), "lag_cpu_h"]
    return pd.DataFrame([{
        "status": s["status"],
        "lag_cpu_h": s["lag_cpu_h"] if s["lag_cpu_h"] is not None else float("nan"),
        "lag_max_cpu_h": float(staleness.max()) if len(staleness) else float("nan"),
        "episodes": int(len(episodes)), "unrepaired": s["unrepaired"],
        "cost_cpu_h": s["cost_cpu_h"], "bootstrap_cpu_h": s["bootstrap_cpu_h"],
        "scheduler_s": s["scheduler_s"], "plans": s["plans"], "invocations": s["invocations"],
        "infeasible": s["infeasible"], "aborted": s["aborted"],
        "call_ms_median": float(calls.median()) if len(calls) else float("nan"),
        "call_ms_p95": float(calls.quantile(0.95)) if len(calls) else float("nan"),
        "operator_runs": json.dumps(inv.groupby("operator").size().astype(int).to_dict(), sort_keys=True),
        "operator_runs_after_1w": json.dumps(
            inv[inv["start"] >= WEEK_H].groupby("operator").size().astype(int).to_dict(), sort_keys=True),
    }])


@experiment(
    "olston-cascade",
    Param("k", int, 4, "inputs of join-cascade(k) (k - 1 left-deep joins)", ge=2, le=MAX_K),
    Param("hours", float, 24.0, "horizon in hours", gt=0, le=24 * 7 * 52),
    Param("seed", int, 1, "seed of the inputs and the noise", ge=0, le=MAX_SEED),
    Param("max_scheduler_s", float, MAX_SCHEDULER_S, "scheduler-time budget; past it the run ends 'timeout'",
          gt=0, le=MAX_SCHEDULER_S),
)
def cascade_row(k: int, hours: float, seed: int, max_scheduler_s: float) -> pd.DataFrame:
    """One DP run of ``join-cascade(k)`` (Async/Incr, sizes mode): the scheduler CPU of one call
    (median, 95th percentile, max), per invocation run, and the materialized blocks a call sees."""
    result = run(join_cascade(k), RunConfig(seed=seed, horizon=hours, max_scheduler_s=max_scheduler_s))
    s, calls = result.summary, result.frames["scheduler_calls"]
    ms = calls["seconds"] * 1000.0
    return pd.DataFrame([{
        "status": s["status"], "plans": s["plans"], "invocations": s["invocations"], "scheduler_s": s["scheduler_s"],
        "call_ms_median": float(ms.median()), "call_ms_p95": float(ms.quantile(0.95)), "call_ms_max": float(ms.max()),
        "ms_per_invocation": 1000.0 * s["scheduler_s"] / s["invocations"] if s["invocations"] else float("nan"),
        "blocks_median": float(calls["blocks"].median()), "blocks_max": int(calls["blocks"].max()),
        "optimized_median": float(calls["optimized"].median()),
        "cost_cpu_h": s["cost_cpu_h"], "lag_cpu_h": s["lag_cpu_h"] if s["lag_cpu_h"] is not None else float("nan"),
    }])


# -- the grids --------------------------------------------------------------------------------------


def _seeds(count: int) -> list[int]:
    return list(range(1, count + 1))


def _table5_rows(profile: str) -> list[dict[str, Any]]:
    hours = {"quick": 24.0, "standard": 336.0, "full": 1680.0}[profile]
    seeds = _seeds({"quick": 1, "standard": 3, "full": 5}[profile])
    return [{"workflow": w, "scenario": sc, "scheduler": "dp", "hours": hours, "seed": seed}
            for seed in seeds for w in WORKFLOWS for sc in SCENARIOS]


#: The scheduler budget per profile of Table 6 and the ablation: a blown-up run stops there (``timeout``).
TABLE6_BUDGET_S = {"quick": 5.0, "standard": 15.0, "full": 600.0}


def _table6_rows(profile: str) -> list[dict[str, Any]]:
    hours = {"quick": 3.0, "standard": 12.0, "full": 12.0}[profile]
    seeds = _seeds({"quick": 1, "standard": 3, "full": 10}[profile])
    return [{"workflow": w, "scenario": "async-incr", "scheduler": s, "hours": hours, "seed": seed,
             "max_scheduler_s": TABLE6_BUDGET_S[profile]}
            for seed in seeds for w in WORKFLOWS for s in SCHEDULERS]


def _check12_rows(profile: str) -> list[dict[str, Any]]:
    hours = {"quick": 192.0, "standard": 1680.0, "full": 1680.0}[profile]
    seeds = _seeds({"quick": 1, "standard": 1, "full": 3}[profile])
    return [{"workflow": "crawl-selection", "scenario": "async-incr", "scheduler": "dp", "hours": hours,
             "seed": seed, "off": off} for seed in seeds for off in ("", "longterm")]


def _ablation_rows(profile: str) -> list[dict[str, Any]]:
    hours = {"quick": 3.0, "standard": 24.0, "full": 168.0}[profile]
    seeds = _seeds({"quick": 1, "standard": 1, "full": 3}[profile])
    budget = TABLE6_BUDGET_S[profile]
    return [{"workflow": w, "scenario": "async-incr", "scheduler": "dp", "hours": hours, "seed": seed,
             "off": off, "max_scheduler_s": budget}
            for seed in seeds for w in WORKFLOWS for off in ("", *HEURISTICS)]


#: The cascade sizes of the scaling grid (the issue: k = 2..8).
CASCADE_K = tuple(range(2, 9))
#: Random instances of check 7's brute force per profile.
BRUTE_FORCE_INSTANCES = {"quick": 60, "standard": 400, "full": 2000}


def _scaling_rows(profile: str) -> list[dict[str, Any]]:
    hours = {"quick": 6.0, "standard": 48.0, "full": 168.0}[profile]
    seeds = _seeds({"quick": 1, "standard": 1, "full": 3}[profile])
    return [{"k": k, "hours": hours, "seed": seed} for seed in seeds for k in CASCADE_K]


def _digested(rows: Callable[[str], list[dict[str, Any]]]) -> Callable[[str], list[dict[str, Any]]]:
    """The rows of an ``olston-run`` table, each with its workflow file's digest (module
    docstring); ``olston-cascade`` rows are built by code, which the cache key covers."""

    def digested(profile: str) -> list[dict[str, Any]]:
        digests = {w: load(w).sha256() for w in WORKFLOWS}
        return [{**row, "workflow_sha256": digests[row["workflow"]]} for row in rows(profile)]

    return digested


#: The tables and checks by name, each a grid of ``olston-run`` (``scaling``: ``olston-cascade``).
SWEEPS: dict[str, NamedSweep] = {
    t.name: t
    for t in [
        NamedSweep("table5", "olston-run", "Table 5: the four scenarios, DP",
                   "Lag and cost order Async/Incr < Sync/Incr < Async/Batch < Sync/Batch on every workflow; "
                   "Async/Incr has the highest scheduler time.", _digested(_table5_rows)),
        NamedSweep("table6", "olston-run", "Table 6: DP against GREEDY and RANDOM, Async/Incr, 12-hour runs",
                   "DP < GREEDY < RANDOM on lag and cost everywhere; GREEDY is the slowest scheduler.",
                   _digested(_table6_rows)),
        NamedSweep("check12", "olston-run", "Check 12: heuristic (e) on CrawlSelection over 10 weeks",
                   "With (e), at most 12 indegree refreshes; without it, a refresh on most top-unfetched runs after "
                   "week 1.", _digested(_check12_rows)),
        NamedSweep("ablation", "olston-run", "The heuristics (a)-(e), one off at a time",
                   "Not a claim of the paper: each heuristic's effect on cost and scheduler time.",
                   _digested(_ablation_rows)),
        NamedSweep("scaling", "olston-cascade", "Scaling: DP on join-cascade(k), k = 2..8",
                   "The issue's target: scheduler CPU per call with median <= 0.1 s and 95th percentile <= 1 s at "
                   "every k.", _scaling_rows),
    ]
}


def grid(name: str, profile: str) -> list[dict[str, Any]]:
    """The explicit parameter rows of a table at a profile (those of ``olston-run`` each with
    its workflow's digest)."""
    check_profile(profile)
    check_choice(name, SWEEPS, "table")
    return SWEEPS[name].grid(profile)  # type: ignore[return-value]


# -- the spark mode ------------------------------------------------------------------------------

#: Per profile: hours of each workflow run on Spark and the share of §8's sizes (the issue's
#: "Spark 2 h per workflow" standard, 24 h full, "1 h at reduced sizes" quick).
SPARK_RUNS = {"quick": (1.0, 0.1), "standard": (2.0, 1.0), "full": (24.0, 1.0)}


def spark_runs(profile: str, *, seed: int = 1, progress: bool = False) -> pd.DataFrame:
    """Each evaluation workflow under Async/Incr DP in the memory mode and in the spark mode
    (Spark on the driver, blocks committed to a temporary store, removed after): one row per
    workflow with the wall time, Spark's share, every Spark invocation's measured seconds
    (median, p95), the bytes on disk, and whether the two runs agree (the same invocation log
    and the same output relations, digest check 14)."""
    import tempfile
    import time
    from pathlib import Path

    from tqdm.auto import tqdm

    from staleness_lab.spark.workflows.executor import spark_rows
    from staleness_lab.workflows.block_store import manifest_paths, run_dirs
    from staleness_lab.workflows.rows import bag_difference

    check_profile(profile)
    hours, share = SPARK_RUNS[profile]
    rows = []
    for name in tqdm(WORKFLOWS, desc="spark runs", disable=not progress):
        wf = reduced(load(name), share) if share < 1 else load(name)
        memory = run(wf, RunConfig(mode="memory", horizon=hours, seed=seed))
        with tempfile.TemporaryDirectory(prefix="olston-store-") as store:
            started = time.perf_counter()
            spark = run(wf, RunConfig(mode="spark", horizon=hours, seed=seed, store=Path(store)), spark_rows)
            wall = time.perf_counter() - started
            manifests = [json.loads(p.read_text()) for run_dir in run_dirs(Path(store)) for p in manifest_paths(run_dir)]
        measured = pd.Series([m["measured_s"] for m in manifests if m["op"] not in ("input",) and not m.get("chain")],
                             dtype=float)
        same_log = memory.frames["invocations"].equals(spark.frames["invocations"])
        differ = [c for c, rel in memory.outputs.items() if bag_difference(rel, spark.outputs[c]) is not None]
        s = spark.summary
        rows.append({
            "workflow": name, "hours": hours, "share": share, "status": s["status"], "invocations": s["invocations"],
            "blocks": len(manifests), "chains": sum(1 for m in manifests if m.get("chain")),
            "wall_s": wall, "spark_s": s["spark_s"], "scheduler_s": s["scheduler_s"],
            "invocation_s_median": float(measured.median()), "invocation_s_p95": float(measured.quantile(0.95)),
            "mb_on_disk": sum(p["bytes"] for m in manifests if not m.get("chain") for p in m["parts"]) / 1e6,
            "same_invocations": same_log, "outputs_differ": ", ".join(differ),
            "agree": bool(same_log and not differ and s["status"] == memory.summary["status"] == "ok"),
        })
    return pd.DataFrame(rows)
