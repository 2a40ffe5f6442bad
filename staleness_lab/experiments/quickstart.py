"""The quickstart sweep: baseline policies against offered utilization on a small warehouse."""

from __future__ import annotations

import pandas as pd

from staleness_lab.api import simulate
from staleness_lab.errors import InputError
from staleness_lab.experiments.golab.generators import heterogeneous_tables, offered_utilization, scale_to_utilization
from staleness_lab.model.workload import MAX_SEED, MAX_TRACKS
from staleness_lab.sim import ideal_summary, relative_lateness
from staleness_lab.sweeps.registry import Param, experiment

#: The largest warehouse and the longest horizon a row may ask for: 1000 tables or 100 times
#: the notebook's full horizon (2 * 10^5) keep one row within minutes of simulation.
MAX_TABLES = 1000
MAX_HORIZON = 2e7


@experiment(
    "baseline-utilization",
    # no choices: the policy registry is open (staleness_lab.policies.register), and an unknown
    # name fails at its row with one line naming policy
    Param("policy", str, "max-benefit", "scheduler name from the policy registry"),
    Param("utilization", float, 0.9, "offered utilization per track, sum_i E_i(P_i)/P_i / tracks", gt=0),
    Param("n_tables", int, 12, "number of base tables", ge=1, le=MAX_TABLES),
    Param("tracks", int, 2, "number of tracks", ge=1, le=MAX_TRACKS),
    Param("period_min", float, 10.0, "shortest period (periods are log-uniform)", gt=0),
    Param("period_max", float, 1000.0, "longest period", gt=0),
    Param("variability", float, 0.5, "cost variability b: actual cost uniform on [bE, (1+b)E]", ge=0),
    Param("horizon", float, 20_000.0, "simulated time", gt=0, le=MAX_HORIZON),
    Param("seed", int, 0, "seed of the workload and of the costs", ge=0, le=MAX_SEED),
)
def baseline_utilization(
    policy: str,
    utilization: float,
    n_tables: int,
    tracks: int,
    period_min: float,
    period_max: float,
    variability: float,
    horizon: float,
    seed: int,
) -> pd.DataFrame:
    """Relative lateness of one policy on a random warehouse scaled to a target utilization.

    The warehouse (log-uniform periods, priorities 1-3, E(n) = alpha + beta*n) is drawn from
    the seed, so every policy at one (utilization, seed) meets the same tables and the same
    random costs; relative lateness is the weighted staleness over that of the same workload
    with unlimited tracks (Golab et al., Sec. 5), that run's numbers in closed form
    (:func:`~staleness_lab.sim.ideal.ideal_summary`).
    """
    if period_min > period_max:
        raise InputError("period_max", f"must be >= period_min = {period_min:g}, got {period_max:g}")
    base = heterogeneous_tables(
        n_tables, period_range=(period_min, period_max), tracks=tracks, horizon=horizon, seed=seed,
        variability=variability if variability > 0 else None,
    )
    workload = scale_to_utilization(base, utilization)
    result = simulate(workload, policy)
    lateness = relative_lateness(result.trace, ideal_summary(workload))
    tables = result.tables
    return pd.DataFrame(
        {
            "offered_utilization": [offered_utilization(workload)],
            "relative_lateness": [float(lateness["relative_lateness"].iloc[-1])],
            "weighted_staleness": [result.total_weighted_staleness],
            "ideal_weighted_staleness": [float(lateness["ideal_weighted_staleness_area"].iloc[-1])],
            "mean_staleness": [float(tables["mean_staleness"].mean())],
            "max_staleness": [float(tables["max_staleness"].max())],
            "events": [result.trace.events],
            "jobs": [result.trace.n_jobs],
        }
    )
