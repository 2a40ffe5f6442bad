"""Events per second of the target-lag scheduler against EDF-P on a 100-table view DAG with targets.

target-lag is a placement policy (it re-estimates every table's refresh chain at each decision and
asks for timers), so it runs on the engine's Python loop; EDF-P is an order and runs on the
compiled core by default. Both are timed in process at two horizons, and

    events/s = (events(H2) - events(H1)) / (time(H2) - time(H1))

cancels loading and binding; the median of ``--repeats`` pairs is reported, with EDF-P also on the
Python loop (``engine="python"``) so the two loops' costs stay apart.

Usage::

    python benchmarks/bench_target_lag.py [--tables 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

import staleness_lab as sl


def target_dag(n_tables: int, seed: int = 0) -> dict[str, Any]:
    """``n_tables`` tables, 40 % periodic feeds (periods 30-120) and 60 % views over one or two
    earlier tables; a numeric target on every view and every third feed (1.5-3x the feed's period
    or the views' roots'), the rest refreshed on demand; one track per 8 tables, cost noise 0.8-1.2."""
    rng = np.random.default_rng(seed)
    n_base = max(1, int(n_tables * 0.4))
    tables: list[dict[str, Any]] = []
    for k in range(n_tables):
        t: dict[str, Any] = {"name": f"t{k}", "priority": int(rng.integers(1, 4)), "beta": 0.05}
        if k < n_base:
            t.update(period=float(rng.choice([30, 60, 90, 120])), phase=float(rng.uniform(0, 30)),
                     alpha=float(rng.uniform(1, 3)))
            if k % 3 == 0:
                t["target_lag"] = 3 * t["period"]
        else:
            sources = sorted({int(rng.integers(0, k)) for _ in range(int(rng.integers(1, 3)))})
            t.update(sources=[f"t{s}" for s in sources], alpha=float(rng.uniform(1, 4)),
                     target_lag=float(rng.choice([300, 450, 600])))
        tables.append(t)
    return {"tracks": max(1, n_tables // 8), "horizon": 20_000, "seed": seed, "cost_noise": [0.8, 1.2],
            "tables": tables}


def rate(workload: dict[str, Any], policy: str, engine: str, horizons: tuple[float, float], repeats: int) -> float:
    """Median events/s over ``repeats`` pairs of runs at the two horizons."""
    sl.simulate(workload, policy, engine=engine, horizon=horizons[0])  # warm
    rates = []
    for _ in range(repeats):
        timed = []
        for h in horizons:
            start = time.perf_counter()
            result = sl.simulate(workload, policy, engine=engine, horizon=h)
            timed.append((result.trace.events, time.perf_counter() - start))
        (e1, t1), (e2, t2) = timed
        rates.append((e2 - e1) / (t2 - t1))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    workload = target_dag(args.tables)
    horizons = (5_000.0, 20_000.0)
    for policy, engine in (("target-lag", "python"), ("edf-p", "python"), ("edf-p", "auto")):
        events = sl.simulate(workload, policy, engine=engine, horizon=horizons[1]).trace.events
        print(f"{policy:11s} {engine:7s} {args.tables} tables: {rate(workload, policy, engine, horizons, args.repeats):12,.0f} "
              f"events/s ({events:,} events at horizon {horizons[1]:g})")


if __name__ == "__main__":
    main()
