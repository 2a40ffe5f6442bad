"""Redraw latency of the teaching explorers (:mod:`staleness_lab.widgets`), measured from Python.

Each explorer is built on its teaching data at a 1,000-time-unit horizon (the batch planner on
``data/intermittent/e5.yaml``, whose windows end at 100 s) and driven as a student drives it: a
control is set to a new value, which simulates or plans again, draws every figure and hands the
page its plotly JSON. One redraw is the wall time of one ``control.value = x`` (what a slider
release costs the kernel; the browser's own drawing is not in it). Each case cycles its control
through the values listed in :data:`CASES`, after one warm-up pass, ``--redraws`` times, and the
script prints the median and 95th percentile per case against the targets (median < 250 ms,
p95 < 600 ms). A redraw that ends refused (a reason shown) counts as a failure of the harness.

Usage::

    python benchmarks/bench_widgets.py [--redraws 40] [--out bench-widgets.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from staleness_lab.widgets import (BatchPlanExplorer, BoundExplorer, ScheduleExplorer,  # noqa: E402
                                   SchedulerDuel)

DEMO = ROOT / "data" / "workloads" / "demo.yaml"
AUS = ROOT / "data" / "workloads" / "teaching-aus.yaml"
E5 = ROOT / "data" / "intermittent" / "e5.yaml"
HORIZON = 1000
#: Targets per redraw (seconds).
MEDIAN_TARGET, P95_TARGET = 0.250, 0.600

def own_executors() -> BatchPlanExplorer:
    """E5's optimum with an executor per query: the exact DP plans it (no CP-SAT search)."""
    explorer = BatchPlanExplorer(E5, scheme="optimal")
    explorer.controls["executors"].value = 3
    return explorer


#: (case, explorer factory, control, values cycled through). The CP-SAT cases: E5's three
#: queries sharing one executor (the solver within the explorer's budget, never proven there)
#: and with an executor each (the decomposition's exact DP, proven).
CASES: list[tuple[str, Callable[[], Any], str, list[Any]]] = [
    ("ScheduleExplorer: tracks", lambda: ScheduleExplorer(DEMO, horizon=HORIZON), "tracks", [1, 2, 3, 4]),
    ("ScheduleExplorer: policy", lambda: ScheduleExplorer(DEMO, horizon=HORIZON), "policy",
     ["fifo", "edf", "edf-p", "max-benefit", "proportional", "prp"]),
    ("ScheduleExplorer: period", lambda: ScheduleExplorer(DEMO, horizon=HORIZON), "orders.period", [6.0, 10.0, 20.0]),
    ("SchedulerDuel: right policy", lambda: SchedulerDuel(DEMO, horizon=HORIZON), "right",
     ["edf-p", "max-benefit", "proportional", "prp"]),
    ("BoundExplorer: outage length", lambda: BoundExplorer(AUS, horizon=HORIZON, outage_feed="orders"),
     "outage_length", [50.0, 150.0, 300.0]),
    ("BoundExplorer: policy", lambda: BoundExplorer(AUS, horizon=HORIZON), "policy", ["gedf-np", "aus"]),
    ("BatchPlanExplorer: rho (EDF)", lambda: BatchPlanExplorer(E5), "rho", [0.2, 0.4, 0.8]),
    ("BatchPlanExplorer: rho (CP-SAT, one executor)", lambda: BatchPlanExplorer(E5, scheme="optimal"), "rho",
     [0.2, 0.25, 0.4, 0.8, 1.2]),
    ("BatchPlanExplorer: rho (CP-SAT, an executor each)", own_executors, "rho", [0.2, 0.4, 0.8, 1.2]),
]


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, linear between order statistics."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def measure(make: Callable[[], Any], control: str, values: list[Any], redraws: int) -> list[float]:
    """Wall times of ``redraws`` redraws, each a change of ``control`` to the next value."""
    explorer = make()
    widget = explorer.controls[control]
    cycle = [v for v in values if v != widget.value] + [widget.value]
    for value in cycle:  # warm-up: first-use imports and caches
        widget.value = value
    times = []
    for k in range(redraws):
        value = cycle[k % len(cycle)]
        start = time.perf_counter()
        widget.value = value
        times.append(time.perf_counter() - start)
        if explorer.reason is not None:
            raise SystemExit(f"{control} = {value!r} was refused: {explorer.reason}")
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redraws", type=int, default=40, help="timed redraws per case (default 40)")
    parser.add_argument("--out", type=Path, help="write every timing as JSON")
    args = parser.parse_args(argv)
    if args.redraws < 2:
        parser.error("--redraws must be at least 2")
    rows = []
    print(f"{'case':<50} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}  target")
    for name, make, control, values in CASES:
        times = measure(make, control, values, args.redraws)
        median, p95 = statistics.median(times), percentile(times, 0.95)
        ok = median < MEDIAN_TARGET and p95 < P95_TARGET
        rows.append({"case": name, "redraws": len(times), "median_s": median, "p95_s": p95, "max_s": max(times), "pass": ok, "times_s": times})
        print(f"{name:<50} {median * 1e3:>10.1f} {p95 * 1e3:>8.1f} {max(times) * 1e3:>8.1f}  {'PASS' if ok else 'MISS'}")
    print(f"targets: median < {MEDIAN_TARGET * 1e3:.0f} ms, p95 < {P95_TARGET * 1e3:.0f} ms per redraw "
          f"({args.redraws} redraws per case, horizon {HORIZON})")
    if args.out:
        args.out.write_text(json.dumps({"horizon": HORIZON, "redraws": args.redraws, "cases": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
