"""Random engine workloads for fuzz tests that compare two ways of running one workload (the
closed-form ideal run against the engine's, the compiled core against the Python engine): periodic
feeds with phases, replayed and compiled feeds, derived views two levels deep listed in any file
order, chopping, ``min_separation``, slowdown, ``variability`` or ``cost_noise``, warmup, seeds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

from staleness_lab.model import Workload, parse_workload
from staleness_lab.sim.trace import Trace

PERIODS = [3.0, 5.0, 7.5, 10.0, 12.3]
ALPHAS = [0.0, 0.5, 1.0, 3.0, 8.0]
#: 1e-30 with alpha = 0 makes jobs of zero duration (start + cost == start): the fallback.
BETAS = [0.0, 0.05, 0.3, 1.0, 1e-30]


@st.composite
def replayed_arrivals(draw: Any, horizon: float) -> list[list[float]]:
    """Strictly increasing times, data_to at or before its time and non-decreasing."""
    t = draw(st.sampled_from([0.0, 0.0, 2.0, 6.5]))
    out: list[list[float]] = []
    last = -math.inf
    for _ in range(draw(st.integers(1, 25))):
        t += draw(st.sampled_from([0.5, 1.0, 3.0, 4.25, 10.0, horizon / 7]))
        data_to = max(last, t - draw(st.sampled_from([0.0, 0.0, 1.0, 2.5])))
        out.append([round(t, 6), data_to if data_to == last else round(data_to, 6)])
        last = out[-1][1]
    return out


@st.composite
def workloads(draw: Any) -> Workload:
    horizon = draw(st.sampled_from([40.0, 97.5, 150.0, 333.3]))
    tables: list[dict[str, Any]] = []
    has_period: list[bool] = []
    level: list[int] = []

    def common(name: str) -> dict[str, Any]:
        alpha, beta = draw(st.sampled_from(ALPHAS)), draw(st.sampled_from(BETAS))
        if alpha == 0 and beta == 0:
            alpha = 1.0
        t: dict[str, Any] = {"name": name, "alpha": alpha, "beta": beta, "priority": draw(st.sampled_from([1, 2, 0.5]))}
        if draw(st.integers(0, 4)) == 0:
            t["min_separation"] = draw(st.sampled_from([1.0, 4.0, 11.0]))
        return t

    for k in range(draw(st.integers(1, 4))):
        t = common(f"b{k}")
        kind = draw(st.sampled_from(["periodic", "periodic", "replayed", "compiled"]))
        if kind == "replayed":
            t["arrivals"] = draw(replayed_arrivals(horizon))
            if draw(st.booleans()):
                t["nominal_period"] = draw(st.sampled_from(PERIODS))
        else:
            t["period"] = draw(st.sampled_from(PERIODS))
            t["phase"] = draw(st.sampled_from([0.0, 1.5, 4.0])) % t["period"]
            if kind == "compiled":
                if draw(st.booleans()):
                    t["arrival_jitter"] = t["period"] * draw(st.sampled_from([0.3, 1.0]))
                    t["timestamp_jitter"] = draw(st.sampled_from([0.0, 2.0]))
                else:
                    start = draw(st.sampled_from([5.0, 20.0]))
                    t["outages"] = [[start, start + draw(st.sampled_from([7.0, 31.0]))]]
        if kind == "replayed" and draw(st.booleans()):
            t["outages"] = [[3.0, 17.5]]
        t["initial_freshness"] = draw(st.sampled_from([0.0, 0.0, -2.0, -7.5]))
        has_period.append("period" in t or "nominal_period" in t)
        level.append(0)
        tables.append(t)
    for k in range(draw(st.integers(0, 4))):
        t = common(f"d{k}")
        srcs = draw(st.lists(st.sampled_from(range(len(tables))), min_size=1, max_size=2, unique=True))
        if max(level[s] for s in srcs) >= 2:
            srcs = [s for s in srcs if level[s] < 2] or [0]
        t["sources"] = [tables[s]["name"] for s in srcs]
        edge = min(tables[s]["initial_freshness"] for s in srcs)
        t["initial_freshness"] = edge - draw(st.sampled_from([0.0, 0.0, 3.0]))
        has_period.append(all(has_period[s] for s in srcs))
        level.append(1 + max(level[s] for s in srcs))
        tables.append(t)
    for t, periodic in zip(tables, has_period):
        if periodic and draw(st.integers(0, 3)) == 0:
            t["chop"] = draw(st.sampled_from([1.0, 1.5, 3.0]))
    order = draw(st.permutations(range(len(tables))))  # sources may come after their views
    w: dict[str, Any] = {"tracks": draw(st.integers(1, 3)), "horizon": horizon, "seed": draw(st.integers(0, 10**6)),
                         "tables": [tables[k] for k in order]}
    noise = draw(st.sampled_from(["none", "variability", "cost_noise"]))
    if noise == "variability":
        w["variability"] = draw(st.sampled_from([0.0, 0.5, 1.0]))
    elif noise == "cost_noise":
        w["cost_noise"] = draw(st.sampled_from([[0.0, 1.0], [0.5, 2.0]]))
    if draw(st.integers(0, 2)) == 0:
        w["slowdown"] = {"factor": draw(st.sampled_from([0.5, 3.0])),
                         "normal": draw(st.sampled_from([0.0, 10.0, 25.0])),
                         "slow": draw(st.sampled_from([5.0, 20.0]))}
    if draw(st.integers(0, 2)) == 0:
        w["warmup"] = round(horizon * draw(st.sampled_from([0.1, 0.5, 0.9])), 2)
    return parse_workload(w)


def fingerprint(trace: Trace) -> tuple:
    """Everything a trace records, floats as bits."""
    done = np.array(list(trace.jobs_done), dtype=float).reshape(-1, 7)
    flight = np.array(trace.in_flight, dtype=float).reshape(-1, 7)
    return (trace.events, done.tobytes(), flight.tobytes(), np.array(trace.staleness_area).tobytes(),
            np.array(trace.max_staleness).tobytes(), [tuple(map(type, r)) for r in trace.jobs_done[:1]])


def table2(n: int, horizon: float, noisy: bool, slowdown: bool = False) -> dict:
    """Golab et al.'s Table 2 setting at ``n`` tables (benchmarks/workloads.py), with cost
    variability 0.5 if ``noisy`` and a slowdown of factor 3 half the time if ``slowdown``."""
    alpha = 0.9 * 100 * (n * 4 // 30) / n - 10
    w: dict = {"tracks": n * 4 // 30, "horizon": horizon, "seed": 3,
               "tables": [{"name": f"t{i}", "period": 100, "phase": i * 100 / n, "alpha": round(alpha, 9),
                           "beta": 0.1, "priority": 1 + i % 3} for i in range(n)]}
    if noisy:
        w["variability"] = 0.5
    if slowdown:
        w["slowdown"] = {"factor": 3, "normal": 1000, "slow": 1000}
    return w
