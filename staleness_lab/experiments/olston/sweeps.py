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
HEURISTICS = ("prune_old", "chains", "propagate", "overkill", "longterm")
#: The readings a verdict is computed under (digest, third-round corrections), as the options
#: each sets: ``paper`` is the paper-faithful one (every default); each other restores one of
#: our earlier decisions. ``from the start`` is Table 6's window from all-fresh channels: its
#: rows have no warm-up (:data:`TABLE6_WARMUP_H`), the options are the paper's.
READINGS: dict[str, dict[str, bool]] = {
    "paper": {},
    "empty as oldest": {"empty_incomparable": False},  # correction 1
    "re-invoke until fresh": {"reinvoke_until_fresh": True},  # correction 2
    "from the start": {},  # correction 3
    "readable across channels": {"readable_across_channels": True},  # correction 5
}
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


def calibrated(workflow: Workflow, alpha: float = 0.0, rate_scale: float = 1.0, clicks_every: float = 0.0) -> Workflow:
    """``workflow`` at another calibration of the numbers the paper does not print (sec. 6 A4,
    correction 4): the per-invocation cost ``alpha`` in CPU-h (0: the file's), every generated
    input's rows per arrival times ``rate_scale`` (the log, crawl and fetch rates), and the
    clicks' period in hours (0: the file's; SearchPreprocessing only, rows per arrival kept)."""
    from staleness_lab.workflows.load import workflow_from_dict

    if alpha == 0.0 and rate_scale == 1.0 and clicks_every == 0.0:
        return workflow
    data = workflow.to_dict()
    if alpha:
        data["cost"] = {**data["cost"], "alpha": alpha}
    if clicks_every:
        if "clicks" not in data["channels"]:
            raise InputError("clicks_every", f"{workflow.name} has no clicks channel (SearchPreprocessing has)")
        data["channels"]["clicks"]["input"]["every"] = clicks_every
    for channel in data["channels"].values():
        spec = channel.get("input")
        if spec and "generator" in spec:
            spec["rows"] = max(1, round(spec["rows"] * rate_scale))
    return workflow_from_dict(data, base_dir=workflow.base_dir)


def options_without(off: str, reading: str | None = None) -> Options:
    """The options of ``reading`` (:data:`READINGS`; None: every default) with the heuristics
    named in the comma list ``off`` turned off."""
    names = [n.strip() for n in off.split(",") if n.strip()]
    for n in names:
        check_choice(n, HEURISTICS, "off")
    if reading is not None:
        check_choice(reading, READINGS, "reading")
    given = {} if reading is None else READINGS[reading]
    return replace(Options(), **given, **{n: False for n in names})


@experiment(
    "olston-run",
    Param("workflow", str, "search-preprocessing", "evaluation workflow (data/workflows/<name>.yaml)",
          choices=tuple(WORKFLOWS)),
    Param("scenario", str, "async-incr", "async-incr, sync-incr, async-batch or sync-batch", choices=SCENARIOS),
    Param("scheduler", str, "dp", "dp (Algorithm 1), greedy or random", choices=SCHEDULERS),
    Param("hours", float, 24.0, "horizon in hours (after the warm-up)", gt=0, le=24 * 7 * 52),
    Param("seed", int, 1, "seed of the inputs, the noise and RANDOM", ge=0, le=MAX_SEED),
    Param("off", str, "", "heuristics turned off, comma-separated (prune_old, chains, propagate, overkill, longterm)"),
    Param("max_scheduler_s", float, MAX_SCHEDULER_S, "scheduler-time budget; past it the run ends 'timeout'",
          gt=0, le=MAX_SCHEDULER_S),
    Param("workflow_sha256", str, "", "the workflow file's SHA-256 the row is for (grids fill it; empty: the file as it is)"),
    Param("reading", str, "paper", "the reading the run is made under (paper, or one of ours: READINGS)",
          choices=tuple(READINGS)),
    Param("warmup", float, 0.0, "hours run before the measured window of `hours` (not counted)", ge=0,
          le=24 * 7 * 52),
    Param("alpha", float, 0.0, "cost per invocation, CPU-h (0: the workflow file's)", ge=0, le=100),
    Param("rate_scale", float, 1.0, "generated inputs' rows per arrival times this", gt=0, le=100),
    Param("clicks_every", float, 0.0, "hours between click arrivals, SearchPreprocessing (0: the file's)", ge=0, le=168),
)
def run_row(workflow: str, scenario: str, scheduler: str, hours: float, seed: int, off: str,
            max_scheduler_s: float, workflow_sha256: str, reading: str, warmup: float, alpha: float,
            rate_scale: float, clicks_every: float) -> pd.DataFrame:
    """One run of an evaluation workflow (sizes mode) for ``warmup + hours`` hours, measured on
    the window after the warm-up, ``(warmup, warmup + hours]``: lag (the staleness episodes that end in the window, each from
    the instant its bound broke), cost, invocations, each operator's invocations and scheduler
    calls in the window, each operator's invocations after the first week (check 12), and how many of the
    workflow's own bounds broke during the warm-up (``bounds_broken_before`` of ``bounds``).
    ``alpha``, ``rate_scale`` and ``clicks_every`` calibrate it (:func:`calibrated`)."""
    wf = load(workflow)
    if workflow_sha256 and workflow_sha256 != wf.sha256():
        raise InputError("workflow_sha256", f"is {workflow_sha256[:12]}..., but {workflow}.yaml is {wf.sha256()[:12]}...")
    config = RunConfig(scheduler=scheduler, scenario=scenario, seed=seed, horizon=warmup + hours,
                       options=options_without(off, reading), max_scheduler_s=max_scheduler_s)
    result = run(calibrated(wf, alpha, rate_scale, clicks_every), config)
    s = result.summary
    frames = result.frames
    calls = frames["scheduler_calls"][frames["scheduler_calls"]["time"] > warmup]
    every = frames["invocations"]
    inv = every[every["start"] > warmup]
    episodes = frames["episodes"][frames["episodes"]["end"] > warmup]
    staleness = episodes.loc[episodes["bound"].str.startswith("staleness"), "lag_cpu_h"]
    ms = calls["seconds"] * 1000.0
    return pd.DataFrame([{
        "status": s["status"],
        "lag_cpu_h": float(staleness.median()) if len(staleness) else float("nan"),
        "lag_max_cpu_h": float(staleness.max()) if len(staleness) else float("nan"),
        "episodes": int(len(episodes)), "unrepaired": int((~episodes["repaired"].astype(bool)).sum()),
        "cost_cpu_h": float(inv["cost_cpu_h"].sum()), "bootstrap_cpu_h": s["bootstrap_cpu_h"],
        "scheduler_s": float(calls["seconds"].sum()), "plans": int(len(calls)), "invocations": int(len(inv)),
        "infeasible": int(calls["infeasible"].str.split().str.len().sum()), "aborted": int(calls["aborted"].sum()),
        "call_ms_median": float(ms.median()) if len(ms) else float("nan"),
        "call_ms_p95": float(ms.quantile(0.95)) if len(ms) else float("nan"),
        "operator_runs": json.dumps(inv.groupby("operator").size().astype(int).to_dict(), sort_keys=True),
        "operator_runs_after_1w": json.dumps(
            every[every["start"] >= WEEK_H].groupby("operator").size().astype(int).to_dict(), sort_keys=True),
        "bounds": len(s["lag"]),
        "bounds_broken_before": int(frames["episodes"].loc[frames["episodes"]["start"] < warmup, "bound"].nunique()),
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


#: Which schedulers a reading changes (Table 6): its rows are run for those only, the others'
#: are the paper reading's (:func:`reading_frame`).
READING_SCHEDULERS = {"empty as oldest": ("dp",), "re-invoke until fresh": ("greedy", "random"),
                      "from the start": SCHEDULERS}


def reading_frame(frame: pd.DataFrame, reading: str, column: str = "scheduler") -> pd.DataFrame:
    """A table's rows under ``reading``: its own rows, and the paper reading's of the columns
    it does not change (each present once)."""
    mine = frame[frame["reading"] == reading]
    paper = frame[(frame["reading"] == "paper") & ~frame[column].isin(mine[column].unique())]
    return pd.concat([mine, paper], ignore_index=True) if reading != "paper" else mine


def _table5_rows(profile: str) -> list[dict[str, Any]]:
    """Every workflow and scenario under the paper's reading; Async/Incr also with an empty
    element read as the oldest (correction 1: only asynchronous unions make empty elements)."""
    hours = {"quick": 24.0, "standard": 336.0, "full": 1680.0}[profile]
    seeds = _seeds({"quick": 1, "standard": 3, "full": 5}[profile])
    rows = [{"workflow": w, "scenario": sc, "scheduler": "dp", "hours": hours, "seed": seed, "reading": "paper"}
            for seed in seeds for w in WORKFLOWS for sc in SCENARIOS]
    return rows + [{"workflow": w, "scenario": "async-incr", "scheduler": "dp", "hours": hours, "seed": seed,
                    "reading": "empty as oldest"} for seed in seeds for w in WORKFLOWS]


#: The scheduler budget per profile of Table 6 and the ablation: a blown-up run stops there
#: (``timeout``). At the standard profile the runs that end took 2 s at most (the slowest mean:
#: GREEDY on FeedbackPrioritization from the start, 144 calls of 12 ms), and the twelve that blew
#: up spent the whole budget each (15 s then, three minutes of the render).
TABLE6_BUDGET_S = {"quick": 5.0, "standard": 5.0, "full": 600.0}
#: Table 6's warm-up (hours) before its window per profile (correction 3's "hours 48-60"; the
#: quick profile's is shorter to stay quick); rows report how many bounds broke in it.
TABLE6_WARMUP_H = {"quick": 12.0, "standard": 48.0, "full": 48.0}


def _table6_rows(profile: str) -> list[dict[str, Any]]:
    """Every workflow and scheduler after the warm-up (the paper reading), and each other reading
    for the schedulers it changes (:data:`READING_SCHEDULERS`)."""
    hours = {"quick": 3.0, "standard": 12.0, "full": 12.0}[profile]
    seeds = _seeds({"quick": 1, "standard": 3, "full": 10}[profile])
    warmup = TABLE6_WARMUP_H[profile]
    readings = {"paper": SCHEDULERS, **READING_SCHEDULERS}
    if profile == "quick":  # the old repair loop runs into the budget on CS: standard and full show it
        del readings["re-invoke until fresh"]
    return [{"workflow": w, "scenario": "async-incr", "scheduler": s, "hours": hours, "seed": seed,
             "max_scheduler_s": TABLE6_BUDGET_S[profile], "reading": reading,
             "warmup": 0.0 if reading == "from the start" else warmup}
            for reading, schedulers in readings.items() for seed in seeds for w in WORKFLOWS for s in schedulers]


#: Check 12's scheduler budget per profile: without rule (e) or readability one call on CS
#: settled 246,489 blocks in 652 s, so the paper reading's run without (e) stops at it.
CHECK12_BUDGET_S = {"quick": 2.0, "standard": 15.0, "full": 600.0}


def _check12_rows(profile: str) -> list[dict[str, Any]]:
    """CrawlSelection with rule (e) on and off, without readability across channels (the paper
    checks generated blocks only) and with it (correction 5)."""
    hours = {"quick": 192.0, "standard": 1680.0, "full": 1680.0}[profile]
    seeds = _seeds({"quick": 1, "standard": 1, "full": 3}[profile])
    return [{"workflow": "crawl-selection", "scenario": "async-incr", "scheduler": "dp", "hours": hours,
             "seed": seed, "off": off, "reading": reading, "max_scheduler_s": CHECK12_BUDGET_S[profile]}
            for reading in ("paper", "readable across channels") for seed in seeds for off in ("", "longterm")]


#: The sensitivity map's grid per profile (correction 4): per workflow, the two unprinted numbers
#: varied (``olston-run`` parameters) and their values; each point runs the scenarios listed.
#: The file's calibration (alpha 0.01 CPU-h, hourly clicks, scale 1) is a point of each grid:
#: chosen [D], not evidence.
SENSITIVITY: dict[str, dict[str, Any]] = {
    "quick": {"hours": 24.0, "scenarios": ("async-incr", "sync-incr"),
              "axes": {"search-preprocessing": {"clicks_every": (0.25, 1.0), "alpha": (1e-5, 0.01)},
                       "feedback-prioritization": {"rate_scale": (0.1, 1.0), "alpha": (1e-5, 0.01)}}},
    "standard": {"hours": 48.0, "scenarios": SCENARIOS,
                 "axes": {"search-preprocessing": {"clicks_every": (0.25, 1.0, 4.0), "alpha": (1e-5, 1e-3, 0.01)},
                          "feedback-prioritization": {"rate_scale": (0.1, 1.0, 10.0), "alpha": (1e-5, 1e-3, 0.01)},
                          "crawl-selection": {"rate_scale": (0.25, 1.0, 4.0), "alpha": (1e-5, 1e-3, 0.01)}}},
    "full": {"hours": 168.0, "scenarios": SCENARIOS,
             "axes": {"search-preprocessing": {"clicks_every": (0.25, 0.5, 1.0, 4.0), "alpha": (1e-5, 1e-4, 1e-3, 0.01)},
                      "feedback-prioritization": {"rate_scale": (0.1, 0.3, 1.0, 10.0), "alpha": (1e-5, 1e-4, 1e-3, 0.01)},
                      "crawl-selection": {"rate_scale": (0.25, 1.0, 4.0, 16.0), "alpha": (1e-5, 1e-4, 1e-3, 0.01)}}},
}


def _sensitivity_rows(profile: str) -> list[dict[str, Any]]:
    spec = SENSITIVITY[profile]
    rows = []
    for w, axes in spec["axes"].items():
        (x, xs), (y, ys) = axes.items()
        rows += [{"workflow": w, "scenario": sc, "scheduler": "dp", "hours": spec["hours"], "seed": 1, x: a, y: b}
                 for a in xs for b in ys for sc in spec["scenarios"]]
    return rows


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
        NamedSweep("table6", "olston-run", "Table 6: DP against GREEDY and RANDOM, Async/Incr, 12 hours after a warm-up",
                   "DP < GREEDY < RANDOM on lag and cost everywhere; GREEDY is the slowest scheduler.",
                   _digested(_table6_rows)),
        NamedSweep("check12", "olston-run", "Check 12: heuristic (e) on CrawlSelection over 10 weeks",
                   "With (e), at most 12 indegree refreshes; without it, a refresh on most top-unfetched runs after "
                   "week 1.", _digested(_check12_rows)),
        NamedSweep("ablation", "olston-run", "The heuristics (a)-(e), one off at a time",
                   "Not a claim of the paper: each heuristic's effect on cost and scheduler time.",
                   _digested(_ablation_rows)),
        NamedSweep("sensitivity", "olston-run", "Sensitivity of Table 5 and check 10 to the unprinted numbers",
                   "Where Table 5's orders and check 10's ratios hold over a grid of click period, log and fetch "
                   "rates and cost per invocation (correction 4).", _digested(_sensitivity_rows)),
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
