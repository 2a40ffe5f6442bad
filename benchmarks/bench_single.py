"""The exact single-query optimum at the paper's scale: Fig. 6's cases, one query of N = 4,500 alone.

For each of the 13 synthetic queries (``data/intermittent/tpch13-synthetic.yaml``) and each
deadline factor f of Fig. 6 (D = we + f·Cost(N)): the CPU seconds of ``exact`` (the exact grid
built and the DP run, one core), its cost and batches, and Algorithm 1's cost beside it. Then
the median and largest time over the cases, and how often and by how much Algorithm 1 loses.

``--method pareto`` times the Pareto reference instead (``exact(..., method="pareto")``, which
refuses N > 2,000 unless told otherwise): each case in a child process stopped after
``--timeout`` wall seconds (on a shared machine, less CPU time than that) and reported as stopped.

Usage::

    python benchmarks/bench_single.py [--method suffix|pareto] [--queries Q1 Q3] [--factors 1 .1]
        [--timeout 600] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from staleness_lab.experiments.intermittent.sweeps import FIG6_FACTORS, paper_queries  # noqa: E402
from staleness_lab.intermittent import Query, QuerySet  # noqa: E402
from staleness_lab.intermittent.numbers import exact as exact_number  # noqa: E402
from staleness_lab.intermittent.single import METHODS, algorithm1, exact  # noqa: E402


def case(name: str, f: float, method: str) -> dict[str, Any]:
    """One Fig. 6 case: the exact DP's CPU seconds, cost and batches, and Algorithm 1's cost."""
    base = paper_queries()
    q = base.query(name)
    deadline = q.we + exact_number(f, "f") * q.min_cost
    qs = QuerySet(queries=(Query(q.name, q.arrivals, deadline, q.cost, q.agg_cost),), time_unit=base.time_unit)
    began = time.process_time()
    best = exact(qs, method=method, max_tuples=q.n)
    seconds = time.process_time() - began
    heuristic = algorithm1(qs)
    ok = heuristic.status == "ok"
    return {"query": name, "f": f, "method": method, "seconds": seconds, "status": best.status,
            "cost": float(best.total_cost) if best.status == "ok" else None,
            "batches": sum(1 for s in best.steps if s.kind == "batch"),
            "alg1_status": heuristic.status, "alg1_cost": float(heuristic.total_cost) if ok else None}


def in_child(name: str, f: float, method: str, timeout: float) -> dict[str, Any]:
    """:func:`case` in a child process, stopped after ``timeout`` wall seconds (status ``"timeout"``)."""
    command = [sys.executable, __file__, "--one", f"{name}:{f}", "--method", method]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"query": name, "f": f, "method": method, "seconds": timeout, "status": "timeout"}
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", choices=METHODS, default="suffix")
    parser.add_argument("--queries", nargs="+", default=list(paper_queries().names))
    parser.add_argument("--factors", nargs="+", type=float, default=list(FIG6_FACTORS))
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per case of --method pareto")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # QUERY:F, run in this process, JSON out
    parser.add_argument("--out", help="write the rows as JSON here")
    args = parser.parse_args(argv)
    if args.one:
        name, f = args.one.split(":")
        print(json.dumps(case(name, float(f), args.method)))
        return 0
    rows = []
    for name in args.queries:
        for f in args.factors:
            row = case(name, f, args.method) if args.method == "suffix" else in_child(name, f, args.method, args.timeout)
            rows.append(row)
            print(f"{name:4} f={f:<4g} {row['seconds']:8.3f} s  {row['status']:10} cost {row.get('cost')}  "
                  f"batches {row.get('batches')}  Algorithm 1: {row.get('alg1_status')} {row.get('alg1_cost')}", flush=True)
    times = [r["seconds"] for r in rows]
    print(f"\n{len(rows)} cases, {args.method}: median {statistics.median(times):.3f} s, max {max(times):.3f} s CPU"
          + (f" ({sum(r['status'] == 'timeout' for r in rows)} stopped at {args.timeout:g} s)"
             if args.method != "suffix" else ""))
    both = [r for r in rows if r.get("cost") is not None and r.get("alg1_cost") is not None]
    lost = [r["alg1_cost"] / r["cost"] for r in both if r["alg1_cost"] > r["cost"] * (1 + 1e-12)]
    false = sum(1 for r in rows if r["status"] == "ok" and r.get("alg1_status") == "no-plan")
    if both:
        print(f"Algorithm 1 costlier in {len(lost)} of {len(both)} cases"
              + (f" (loss ratio median {statistics.median(lost):.4f}, max {max(lost):.4f})" if lost else "")
              + f"; no plan where the optimum has one: {false}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
