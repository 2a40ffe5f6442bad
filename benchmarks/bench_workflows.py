"""Olston's scheduler in the run loop: time per scheduler call and whole runs.

For each evaluation workflow (search-preprocessing, feedback-prioritization, crawl-selection)
and each ``join-cascade(k)`` asked for with ``--cascade``, each scenario and scheduler asked for,
one run in sizes mode at ``--horizon`` hours and seed ``--seed``: scheduler calls, the median
and 95th percentile of one call's CPU time, the median and largest number of materialized
blocks a call sees, the total scheduler time, the run's wall time, and the lag and cost the run
reports. A run stops at ``--max-scheduler-s`` of scheduler time (status ``timeout``), as
``workflow run`` does at 600 s.

Usage::

    python benchmarks/bench_workflows.py [--horizon 336] [--seed 1] [--scenarios async-incr ...]
        [--schedulers dp ...] [--workflows search-preprocessing ...] [--cascade 2 3 ... 8]
        [--max-scheduler-s 120] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from staleness_lab.workflows.cascade import join_cascade  # noqa: E402
from staleness_lab.workflows.context import SCENARIOS  # noqa: E402
from staleness_lab.workflows.load import load_workflow  # noqa: E402
from staleness_lab.workflows.model import Workflow  # noqa: E402
from staleness_lab.workflows.sim import SCHEDULERS, RunConfig, run  # noqa: E402

WORKFLOWS = ("search-preprocessing", "feedback-prioritization", "crawl-selection")


def measure(workflow: Workflow, scenario: str, scheduler: str, horizon: float, seed: int, budget: float) -> dict[str, Any]:
    started = time.perf_counter()
    result = run(workflow, RunConfig(scheduler=scheduler, scenario=scenario, horizon=horizon, seed=seed,
                                     max_scheduler_s=budget))
    wall = time.perf_counter() - started
    frame = result.frames["scheduler_calls"]
    calls = frame["seconds"]
    s = result.summary
    return {
        "workflow": workflow.name, "scenario": scenario, "scheduler": scheduler, "horizon_h": horizon, "seed": seed,
        "status": s["status"], "calls": int(len(calls)),
        "call_median_ms": float(calls.median() * 1e3) if len(calls) else None,
        "call_p95_ms": float(calls.quantile(0.95) * 1e3) if len(calls) else None,
        "blocks_median": float(frame["blocks"].median()) if len(calls) else None,
        "blocks_max": int(frame["blocks"].max()) if len(calls) else None,
        "scheduler_s": s["scheduler_s"], "wall_s": wall, "lag_cpu_h": s["lag_cpu_h"], "cost_cpu_h": s["cost_cpu_h"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=float, default=336.0, help="hours (default 336: two weeks)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workflows", nargs="*", default=list(WORKFLOWS), choices=WORKFLOWS)
    parser.add_argument("--cascade", nargs="*", type=int, default=[], metavar="K",
                        help="also run join-cascade(k) for each K (the scheduler's scaling workload)")
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    parser.add_argument("--schedulers", nargs="+", default=["dp"], choices=SCHEDULERS)
    parser.add_argument("--max-scheduler-s", type=float, default=120.0)
    parser.add_argument("--out", type=Path, help="also write the rows as JSON")
    args = parser.parse_args()
    workflows = [load_workflow(ROOT / "data" / "workflows" / f"{w}.yaml") for w in args.workflows]
    workflows += [join_cascade(k) for k in args.cascade]
    cases = [(w, sc, sch) for w in workflows for sc in args.scenarios for sch in args.schedulers]
    rows = [measure(w, sc, sch, args.horizon, args.seed, args.max_scheduler_s) for w, sc, sch in tqdm(cases, desc="runs")]
    header = f"{'workflow':24} {'scenario':12} {'sched':6} {'status':7} {'calls':>6} {'med ms':>8} {'p95 ms':>8} " \
             f"{'blocks':>7} {'sched s':>8} {'wall s':>7} {'lag CPU-h':>10} {'cost CPU-h':>11}"
    print(header)
    for r in rows:
        def num(x: Any, spec: str) -> str:
            return "-" if x is None else format(x, spec)
        print(f"{r['workflow']:24} {r['scenario']:12} {r['scheduler']:6} {r['status']:7} {r['calls']:>6} "
              f"{num(r['call_median_ms'], '8.2f')} {num(r['call_p95_ms'], '8.2f')} {num(r['blocks_max'], '7d')} "
              f"{r['scheduler_s']:8.2f} "
              f"{r['wall_s']:7.2f} {num(r['lag_cpu_h'], '10.4g')} {num(r['cost_cpu_h'], '11.4g')}")
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
