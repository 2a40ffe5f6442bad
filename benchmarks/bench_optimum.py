"""The exact X_w optimum's goal measurement (digest §5 "Exact OPT", experiment X1's setting).

Instances: t tables with n updates each on p tracks at load x = alpha·t/p (digest §1), every
table's per-unit cost equal (schema ``alpha: 0, beta: x·p/t``, correction 1), priority 1, and
Poisson arrivals: each table's n arrival times are the order statistics of n uniform draws on
``(0, n]`` (a rate-1 Poisson process conditioned on n arrivals in the horizon n), on a 0.01 grid,
redrawn until distinct and positive; data ends at each arrival. The repository has no X1
generator yet, so this is the one used here; seeds make every instance reproducible.

The goal: at each size, at least 9 of 10 seeded instances proven optimal within 10 s with one
worker. For every instance the script prints the status, the solve wall time, X_w (optimum),
its bound and gap, and myopic's X_w; then per size the median and largest wall time and the
number proven optimal.

Usage::

    python benchmarks/bench_optimum.py [--seeds 10] [--time-limit 10] [--workers 1] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from staleness_lab import simulate  # noqa: E402
from staleness_lab.model import Table, Workload  # noqa: E402
from staleness_lab.optimize.staleness_optimum import optimum  # noqa: E402
from staleness_lab.theory.bateni.metrics import measures  # noqa: E402

#: (tables, updates per table, tracks, load x) of the goal.
SIZES = ((4, 8, 2, 0.8), (8, 10, 4, 0.5))
GOAL = 9


def poisson_workload(tables: int, updates: int, tracks: int, x: float, seed: int) -> Workload:
    """The instance of one seed (module docstring)."""
    rng = np.random.default_rng([seed, tables, updates, tracks, int(round(100 * x))])
    beta = round(x * tracks / tables, 6)
    made = []
    for k in range(tables):
        while True:
            times = np.round(np.sort(rng.uniform(0.0, updates, size=updates)), 2)
            if times[0] > 0 and np.all(np.diff(times) > 0):
                break
        made.append(Table(name=f"t{k}", arrivals=tuple((float(v), float(v)) for v in times), alpha=0.0, beta=beta))
    return Workload(tables=tuple(made), tracks=tracks, horizon=float(updates) * 4, seed=seed)


def measure(size: tuple[int, int, int, float], seed: int, time_limit: float, workers: int) -> dict[str, Any]:
    tables, updates, tracks, x = size
    w = poisson_workload(tables, updates, tracks, x, seed)
    result = optimum(w, time_limit=time_limit, workers=workers)
    myopic = measures(simulate(w, "myopic", horizon=10 * updates).trace).X_w
    return {"tables": tables, "updates": updates, "tracks": tracks, "x": x, "seed": seed, "status": result.status,
            "wall_s": result.wall_s, "X": result.objective_X, "bound": result.bound, "gap": result.gap,
            "myopic_X": myopic, "exact": result.exact}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write every row as JSON")
    args = parser.parse_args(argv)
    rows = []
    print(f"{'size':<22} {'seed':>4} {'status':<9} {'wall_s':>7} {'X_opt':>10} {'bound':>10} {'gap':>8} {'X_myopic':>10}")
    for size in SIZES:
        for seed in range(args.seeds):
            row = measure(size, seed, args.time_limit, args.workers)
            rows.append(row)
            label = f"{size[0]}x{size[1]} p={size[2]} x={size[3]}"
            x_opt = "-" if row["X"] is None else f"{row['X']:.4f}"
            bound = "-" if row["bound"] is None else f"{row['bound']:.4f}"
            gap = "-" if row["gap"] is None else f"{row['gap']:.2e}"
            print(f"{label:<22} {seed:>4} {row['status']:<9} {row['wall_s']:>7.2f} {x_opt:>10} {bound:>10} {gap:>8} "
                  f"{row['myopic_X']:>10.4f}", flush=True)
    print()
    print(f"{'size':<22} {'proven':>7} {'median_s':>9} {'max_s':>7} {'goal':>5}")
    for size in SIZES:
        mine = [r for r in rows if (r["tables"], r["updates"], r["tracks"], r["x"]) == size]
        proven = sum(r["status"] == "optimal" for r in mine)
        times = [r["wall_s"] for r in mine]
        label = f"{size[0]}x{size[1]} p={size[2]} x={size[3]}"
        verdict = "PASS" if proven >= GOAL * len(mine) / 10 else "MISS"
        print(f"{label:<22} {proven:>3}/{len(mine):<3} {statistics.median(times):>9.2f} {max(times):>7.2f} {verdict:>5}")
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
