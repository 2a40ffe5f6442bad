"""The exact X_w optimum's proven frontier per load (digest §5 "Exact OPT", experiment X1's setting).

Instances: t tables with n updates each on p tracks at load x = alpha·t/p (digest §1), every
table's per-unit cost equal (schema ``alpha: 0, beta: x·p/t``, correction 1), priority 1, and
Poisson arrivals: each table's n arrival times are the order statistics of n uniform draws on
``(0, n]`` (a rate-1 Poisson process conditioned on n arrivals in the horizon n), on a 0.01 grid,
redrawn until distinct and positive; data ends at each arrival. Seeds make every instance
reproducible.

The frontier of a series (load x, tracks p): the largest t × n of :data:`LADDER` such that it
and every smaller size had at least 9 of 10 seeded instances proven optimal within 10 s on one
worker. Each series climbs the ladder and stops at its first failing size (a size is abandoned
as soon as two of its instances fail). For every instance the script prints the status, the
solve wall time, X_w (optimum), its bound and gap, and myopic's X_w; then per series the
frontier and, per size tried, the proven count and the median and largest wall time.

Usage::

    python benchmarks/bench_optimum.py [--loads .3 .5 .8] [--tracks 1 2] [--seeds 10]
        [--time-limit 10] [--workers 1] [--method blocks|monolithic] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from staleness_lab import simulate  # noqa: E402
from staleness_lab.errors import InputError  # noqa: E402
from staleness_lab.experiments.bateni.sweeps import FRONTIER_LADDER  # noqa: E402
from staleness_lab.model import Table, Workload  # noqa: E402
from staleness_lab.optimize.staleness_optimum import METHODS, optimum  # noqa: E402
from staleness_lab.theory.bateni.metrics import measures  # noqa: E402

#: The sizes (tables, updates per table) each series climbs, smallest first: report 03's ladder,
#: then three sizes beyond it.
LADDER = FRONTIER_LADDER + ((28, 40), (32, 50), (40, 60))
LOADS = (0.3, 0.5, 0.8)
TRACKS = (1, 2)
#: The share of a size's instances that must be proven (9 of 10).
SHARE = 0.9


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


def measure(tables: int, updates: int, tracks: int, x: float, seed: int, time_limit: float,
            workers: int, method: str = "blocks") -> dict[str, Any]:
    """One instance: the optimum's status, wall time, X_w, bound and gap, and myopic's X_w."""
    w = poisson_workload(tables, updates, tracks, x, seed)
    row: dict[str, Any] = {"tables": tables, "updates": updates, "tracks": tracks, "x": x, "seed": seed,
                           "method": method}
    try:
        result = optimum(w, time_limit=time_limit, workers=workers, method=method)
    except InputError as error:  # more updates than the optimum takes
        return {**row, "status": "refused", "wall_s": math.nan, "X": None, "bound": None, "gap": None,
                "myopic_X": math.nan, "exact": None, "why": str(error)}
    myopic = measures(simulate(w, "myopic", horizon=10 * updates).trace).X_w
    return {**row, "status": result.status, "wall_s": result.wall_s, "X": result.objective_X, "bound": result.bound,
            "gap": result.gap, "myopic_X": myopic, "exact": result.exact}


def _show(row: dict[str, Any]) -> None:
    label = f"x={row['x']} p={row['tracks']} {row['tables']}x{row['updates']}"
    x_opt = "-" if row["X"] is None else f"{row['X']:.4f}"
    bound = "-" if row["bound"] is None else f"{row['bound']:.4f}"
    gap = "-" if row["gap"] is None else f"{row['gap']:.2e}"
    print(f"{label:<22} {row['seed']:>4} {row['status']:<9} {row['wall_s']:>7.2f} {x_opt:>12} {bound:>12} {gap:>8} "
          f"{row['myopic_X']:>12.4f}", flush=True)


def climb(x: float, tracks: int, seeds: int, time_limit: float, workers: int,
          method: str = "blocks") -> tuple[dict[str, Any], list[dict]]:
    """One series up the ladder: its frontier summary and every row measured."""
    allowed = seeds - math.ceil(SHARE * seeds - 1e-9)
    rows: list[dict[str, Any]] = []
    largest, tried = None, []
    for tables, updates in LADDER:
        if tracks > tables:
            continue
        mine = []
        for seed in range(seeds):
            row = measure(tables, updates, tracks, x, seed, time_limit, workers, method)
            _show(row)
            mine.append(row)
            if sum(r["status"] != "optimal" for r in mine) > allowed:
                break
        rows += mine
        proven = sum(r["status"] == "optimal" for r in mine)
        walls = [r["wall_s"] for r in mine]
        tried.append(f"{tables}x{updates}: {proven}/{len(mine)} (median {statistics.median(walls):.2f} s, "
                     f"max {max(walls):.2f} s)")
        if len(mine) < seeds or proven < seeds - allowed:
            break
        largest = (tables, updates)
    summary = {"x": x, "tracks": tracks, "method": method, "largest": largest,
               "size": largest[0] * largest[1] if largest else 0,
               "tried": tried}
    return summary, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=float, nargs="+", default=list(LOADS))
    parser.add_argument("--tracks", type=int, nargs="+", default=list(TRACKS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--method", choices=METHODS, default="blocks",
                        help="optimum's method: blocks (default) or the one CP-SAT model it is checked against")
    parser.add_argument("--out", type=Path, help="write every row and the frontier as JSON")
    args = parser.parse_args(argv)
    print(f"{'series, size':<22} {'seed':>4} {'status':<9} {'wall_s':>7} {'X_opt':>12} {'bound':>12} {'gap':>8} "
          f"{'X_myopic':>12}")
    summaries, rows = [], []
    for x in args.loads:
        for tracks in args.tracks:
            summary, mine = climb(x, tracks, args.seeds, args.time_limit, args.workers, args.method)
            summaries.append(summary)
            rows += mine
    print()
    print(f"{'load':>5} {'p':>3} {'method':>10} {'frontier t x n':>15} {'updates':>8}  sizes tried (proven/run)")
    for s in summaries:
        largest = "-" if s["largest"] is None else f"{s['largest'][0]} x {s['largest'][1]}"
        print(f"{s['x']:>5} {s['tracks']:>3} {s['method']:>10} {largest:>15} {s['size']:>8}  "
              f"{'; '.join(s['tried'][-3:])}")
    if args.out is not None:
        args.out.write_text(json.dumps({"frontier": summaries, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
