"""Seeded generators of the synthetic workloads the papers use.

Golab et al., Sec. 5 and Table 2: identical base tables (period 100, alpha 1, beta 0.1), two
classes differing in period, priority or beta, chain hierarchies of depth k, and a target total
utilization reached by scaling alpha and beta by a common factor. Phases are drawn uniformly in
[0, period) from the seed unless spread evenly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from staleness_lab.errors import InputError
from staleness_lab.model import Slowdown, Table, Workload


def _phases(n: int, period: float, rng: np.random.Generator, spread: bool) -> list[float]:
    if spread:
        return [k * period / n for k in range(n)]
    return [float(x) for x in rng.uniform(0.0, period, size=n)]


def identical_tables(
    n: int,
    *,
    period: float = 100.0,
    alpha: float = 1.0,
    beta: float = 0.1,
    priorities: Sequence[float] = (1.0,),
    tracks: int = 4,
    horizon: float = 10_000.0,
    seed: int = 0,
    spread_phases: bool = False,
    **options: Any,
) -> Workload:
    """``n`` base tables with one period and cost model (Golab et al., Table 2 defaults);
    priorities cycle through ``priorities``. ``options``: variability, slowdown, warmup, chop."""
    rng = np.random.default_rng([seed, 1])
    tables = [
        Table(name=f"t{k:04d}", period=period, phase=ph, alpha=alpha, beta=beta, priority=priorities[k % len(priorities)])
        for k, ph in enumerate(_phases(n, period, rng, spread_phases))
    ]
    return Workload(tables=tuple(tables), tracks=tracks, horizon=horizon, seed=seed, **_globals(options))


def heterogeneous_tables(
    n: int,
    *,
    period_range: tuple[float, float] = (10.0, 1000.0),
    alpha: float = 1.0,
    beta: float = 0.1,
    priorities: Sequence[float] = (1.0, 2.0, 3.0),
    tracks: int = 2,
    horizon: float = 10_000.0,
    seed: int = 0,
    **options: Any,
) -> Workload:
    """``n`` base tables with log-uniform periods in ``period_range`` and priorities drawn
    uniformly from ``priorities``, phases uniform in [0, period)."""
    lo, hi = period_range
    if not 0 < lo <= hi:
        raise InputError("period_range", f"must satisfy 0 < low <= high, got {period_range}")
    rng = np.random.default_rng([seed, 2])
    periods = np.exp(rng.uniform(np.log(lo), np.log(hi), size=n))
    prios = rng.choice(np.asarray(priorities, dtype=float), size=n)
    tables = [
        Table(name=f"t{k:04d}", period=float(p), phase=float(rng.uniform(0, p)), alpha=alpha, beta=beta, priority=float(q))
        for k, (p, q) in enumerate(zip(periods, prios))
    ]
    return Workload(tables=tuple(tables), tracks=tracks, horizon=horizon, seed=seed, **_globals(options))


def two_classes(
    n_each: int,
    class_a: dict[str, float],
    class_b: dict[str, float],
    *,
    tracks: int = 4,
    horizon: float = 10_000.0,
    seed: int = 0,
    **options: Any,
) -> Workload:
    """Two classes of ``n_each`` base tables; each class dict may set period, alpha, beta and
    priority (defaults 100, 1, 0.1, 1), as in Golab et al., Figs. 5, 7, 9."""
    rng = np.random.default_rng([seed, 3])
    tables = []
    for label, spec in (("a", class_a), ("b", class_b)):
        unknown = set(spec) - {"period", "alpha", "beta", "priority"}
        if unknown:
            raise InputError(f"class_{label}.{sorted(unknown)[0]}", "unknown class key (period, alpha, beta, priority)")
        period = spec.get("period", 100.0)
        for k, ph in enumerate(_phases(n_each, period, rng, False)):
            tables.append(
                Table(name=f"{label}{k:04d}", period=period, phase=ph, alpha=spec.get("alpha", 1.0),
                      beta=spec.get("beta", 0.1), priority=spec.get("priority", 1.0))
            )
    return Workload(tables=tuple(tables), tracks=tracks, horizon=horizon, seed=seed, **_globals(options))


def chains(
    n_chains: int,
    depth: int,
    *,
    priorities: Sequence[Sequence[float]] = ((1.0,),),
    period: float = 100.0,
    alpha: float = 1.0,
    beta: float = 0.1,
    tracks: int = 4,
    horizon: float = 10_000.0,
    seed: int = 0,
    **options: Any,
) -> Workload:
    """``n_chains`` hierarchies base -> view -> ... of ``depth`` tables (Golab et al., Figs. 8
    and 11). ``priorities[level]`` lists the priorities of that level, cycled over the chains
    (a level beyond the list reuses the last one)."""
    if depth < 1:
        raise InputError("depth", f"must be >= 1, got {depth}")
    rng = np.random.default_rng([seed, 4])
    tables = []
    for c, ph in enumerate(_phases(n_chains, period, rng, False)):
        for level in range(depth):
            level_prios = priorities[min(level, len(priorities) - 1)]
            prio = level_prios[c % len(level_prios)]
            common = dict(name=f"c{c:04d}l{level}", alpha=alpha, beta=beta, priority=prio)
            if level == 0:
                tables.append(Table(period=period, phase=ph, **common))
            else:
                tables.append(Table(sources=(f"c{c:04d}l{level - 1}",), **common))
    return Workload(tables=tuple(tables), tracks=tracks, horizon=horizon, seed=seed, **_globals(options))


def work_rate_multiplier(slowdown: Slowdown | None) -> float:
    """How many times longer the tracks take to get through a given amount of nominal work over
    a whole slowdown cycle (1 without a slowdown): a normal period of length ``n`` does ``n``
    units of work, a slow one of length ``s`` does ``s / S``, so the multiplier is
    ``(n + s) / (n + s / S)``. This, not the time average of the multiplier
    (``1 + (S - 1) s / (n + s)``), is what decides where a track saturates, so it is the ``m``
    of the x-axis. Exact in the limit of jobs short against the periods (a job keeps the
    multiplier of its start)."""
    if slowdown is None:
        return 1.0
    if slowdown.normal == 0:
        return slowdown.factor
    cycle = slowdown.normal + slowdown.slow
    return cycle / (slowdown.normal + slowdown.slow / slowdown.factor)


def offered_utilization(workload: Workload) -> float:
    """U_tot = m * sum_i E_i(P_i)/P_i / N: the offered load per track, with ``m`` the slowdown's
    :func:`work_rate_multiplier` (the x-axis of Golab et al.'s figures, spec Sec. 6 item 4, with
    the mean multiplier read as a rate of work), so ``U_tot = 1`` is where the tracks saturate
    whatever the slowdown. Every table needs a period."""
    workload.require_periods("offered utilization")
    total = sum(u for u in workload.utilization() if u is not None)
    return work_rate_multiplier(workload.slowdown) * total / workload.tracks


def merging_limit(workload: Workload) -> float:
    """The offered utilization (:func:`offered_utilization`) above which the tracks cannot keep up
    even by merging each table's pending data into one job. Merging spreads the start-up cost
    ``alpha_i`` over ever more data, but every table gains one time unit of data per time unit
    and each costs ``beta_i``, so in the long run the tracks must do ``m * sum_i beta_i`` units
    of work per unit of time against a capacity of ``N``. Below the limit an overload is
    transient (Golab et al., Sec. 4.3: "more than the offered 100 percent workload can be
    performed"); above it staleness grows without bound, so relative lateness grows with the
    horizon. It does not change when :func:`scale_to_utilization` scales alpha and beta
    together: ``sum_i (alpha_i / P_i + beta_i) / sum_i beta_i`` (1.1 for Table 2)."""
    workload.require_periods("merging limit")
    rate = sum(t.beta for t in workload.tables)
    if rate == 0:
        return math.inf
    return offered_utilization(workload) * workload.tracks / (work_rate_multiplier(workload.slowdown) * rate)


def scale_to_utilization(workload: Workload, target: float) -> Workload:
    """The workload with every alpha and beta multiplied by one factor so that its offered
    utilization per track (:func:`offered_utilization`) equals ``target``."""
    if not target > 0:
        raise InputError("utilization", f"must be > 0, got {target}")
    factor = target / offered_utilization(workload)
    tables = tuple(replace(t, alpha=t.alpha * factor, beta=t.beta * factor) for t in workload.tables)
    return replace(workload, tables=tables)


def _globals(options: dict[str, Any]) -> dict[str, Any]:
    allowed = {"variability", "slowdown", "warmup", "chop"}
    unknown = set(options) - allowed
    if unknown:
        raise InputError(sorted(unknown)[0], f"is not a workload option ({', '.join(sorted(allowed))})")
    out = {k: v for k, v in options.items() if v is not None}
    if isinstance(out.get("slowdown"), dict):
        out["slowdown"] = Slowdown(**out["slowdown"])
    return out
