"""Workload generators for the engine benchmark.

Every function returns a plain ``dict`` ready for ``yaml.safe_dump`` (the
staleness-lab workload schema) or ``json.dump`` (the SimPy reference).
Nothing here imports staleness-lab.
"""

from __future__ import annotations

from typing import Any

import numpy as np

TABLE2_PERIOD = 100.0
TABLE2_BETA = 0.1
TABLE2_UTILIZATION = 0.9
TABLES_PER_4_TRACKS = 30
VARIABILITY = 0.5
SLOWDOWN = {"factor": 3, "normal": 1000, "slow": 1000}


def table2_workload(
    n_tables: int, variability: bool = False, horizon: float = 100_000.0
) -> dict[str, Any]:
    """The Golab et al. Table 2 setting scaled to ``n_tables`` base tables.

    All tables have period 100 with phases spread over the period, beta 0.1
    and priorities 1, 2, 3 in turn. There are 4 tracks per 30 tables and
    alpha is chosen so that the per-track utilization
    ``sum_i E_i(P_i) / P_i / tracks`` is 0.9, with ``E(n) = alpha + beta * n``
    (alpha = 2.0 at every size). ``variability=True`` adds cost variability
    0.5 and a slowdown of factor 3 every other 1000 time units, with alpha
    unchanged, so the offered load is higher.
    """
    tracks = n_tables * 4 // TABLES_PER_4_TRACKS
    alpha = TABLE2_UTILIZATION * TABLE2_PERIOD * tracks / n_tables - TABLE2_BETA * TABLE2_PERIOD
    workload: dict[str, Any] = {"tracks": tracks, "horizon": horizon, "seed": 0}
    if variability:
        workload["variability"] = VARIABILITY
        workload["slowdown"] = dict(SLOWDOWN)
    workload["tables"] = [
        {
            "name": f"t{i}",
            "period": TABLE2_PERIOD,
            "phase": i * TABLE2_PERIOD / n_tables,
            "alpha": round(alpha, 9),
            "beta": TABLE2_BETA,
            "priority": 1 + i % 3,
        }
        for i in range(n_tables)
    ]
    return workload


def uunifast_discard(n: int, total_util: float, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` task utilizations summing to ``total_util`` (UUniFast).

    Draws in which some task has utilization above 1 are discarded and
    redrawn (Davis and Burns' UUniFast-discard), as SimSo does.
    """
    while True:
        utils = np.empty(n)
        remaining = total_util
        for i in range(n - 1):
            following = remaining * rng.random() ** (1.0 / (n - 1 - i))
            utils[i] = remaining - following
            remaining = following
        utils[-1] = remaining
        if utils.max() <= 1.0:
            return utils


def simso_taskset(
    n: int = 100,
    total_util: float = 3.6,
    seed: int = 1,
    tracks: int = 4,
    horizon: float = 100_000.0,
) -> dict[str, Any]:
    """A SimSo-style periodic task set as a staleness-lab workload.

    Periods are log-uniform in [10, 1000], utilizations come from UUniFast
    and sum to ``total_util``; each table has ``alpha = u * P``, ``beta = 0``
    and phase 0, so every job costs ``alpha`` whatever data it carries.
    """
    rng = np.random.default_rng(seed)
    periods = np.exp(rng.uniform(np.log(10.0), np.log(1000.0), size=n))
    utils = uunifast_discard(n, total_util, rng)
    return {
        "tracks": tracks,
        "horizon": horizon,
        "seed": 0,
        "tables": [
            {
                "name": f"task{i}",
                "period": float(period),
                "phase": 0.0,
                "alpha": float(util * period),
                "beta": 0.0,
                "priority": 1,
            }
            for i, (period, util) in enumerate(zip(periods, utils))
        ],
    }


def gedf_tasks(workload: dict[str, Any]) -> dict[str, Any]:
    """Convert a ``beta = 0`` workload into the SimPy reference's task file."""
    if any(table["beta"] != 0 for table in workload["tables"]):
        raise ValueError("the SimPy reference only models beta = 0 (fixed job cost)")
    return {
        "tracks": workload["tracks"],
        "tasks": [
            {"period": t["period"], "cost": t["alpha"], "phase": t["phase"]}
            for t in workload["tables"]
        ],
    }


def expected_event_rate(workload: dict[str, Any]) -> float:
    """Events per time unit when every arrival becomes one completed job.

    Used only to size horizons: two events (arrival and completion) per
    period per table. Backlogged workloads merge arrivals into fewer jobs,
    so they produce somewhat fewer events than this.
    """
    return 2.0 * sum(1.0 / table["period"] for table in workload["tables"])
