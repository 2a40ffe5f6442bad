"""Chandrasekaran & Sudarshan in hybrid mode: part 1's schemes decide with the cost models
measured on Spark, and Spark executes every batch (digest §6).

Part 1 decides and Spark executes (:mod:`staleness_lab.spark.intermittent`): each batch's
measured wall time becomes its duration in virtual time. The fits come from
:mod:`staleness_lab.experiments.intermittent.spark`'s calibration rows. Experiments:

* ``intermittent-spark-fig6``: one query alone with ``D = we + f·Cost(N)`` under its measured
  cost model, planned by Algorithm 1 and executed on Spark (:func:`execute`); deadlines met with
  the measured durations.
* ``intermittent-spark-multi``: the profile's queries on one executor, deadlines from A5 at ρ
  (one window for all), each online policy dispatched with Spark measuring every batch, and the
  CP-SAT plan executed; planned against measured misses and cost.

**Time scaling** (digest §6): the window is W with ``Σ Cost(N) / W ≈ 0.14`` (the paper's
640 s over 4500 s), so its P files arrive every ``W / P`` virtual seconds, and C_max keeps the
paper's ratio to a query's cost: 30 s against a mean Cost(N) of 640/13 s [R: the digest says
"keep Cmax/Cost ratios"; against Σ Cost(N) instead, a profile running 3 of the 13 queries would
get a C_max 13/3 times too small]. At small scale factors a batch costs Spark's fixed overhead
whatever its size (R ≈ 0), so even one file can cost more than C_max (MinBatch is then flagged,
A3) and no scheme can meet a deadline closer to the window's end than ``Cost(1)``: the rows
record the cost model's own (planned) misses and the necessary condition, and the verdicts
separate what this scale cannot decide from what differs.

**Time grid.** The fitted coefficients are rounded up to :data:`TIME_UNIT` (a cost is never
understated), which keeps them exact multiples of CP-SAT's grid (its linear fast path,
:mod:`staleness_lab.optimize.batch_plan`). The grid is 10 µs because R is a few milliseconds
per file at SF 1: on a 0.01 s grid CQ1's R = 0.00177 s/file became 0.01, and its modelled
Cost(900) 9.09 s against the fit's 1.68 s. At 10 µs the rounding adds at most ``u·(1 + N)`` to
Cost(N) (digest correction 2: never R per tuple rounded coarsely).

**Planning margin** (``margin``; not in the paper, whose plans meet deadlines exactly under
exact costs). Algorithm 1 ends the merge exactly at D, so on a real engine a plan misses
whenever a batch runs longer than its model: at SF 1 the zero-slack plans (``margin="none"``,
the paper's algorithm as written) missed in 55 of 68 executions although the fits were right on
average (measured over modelled cost: median 0.965). The other margins plan each query on its
cost model scaled by ``1 + m`` (:func:`fit_margin`), with the window, C_max and the deadlines of
the unscaled fits: the problem is the same, only the planner's view of the costs changes.

* ``"median"``: m = the fit's largest under-prediction of its calibration medians. At SF 1 the
  plans then cost 56-93 % of their model, yet 13 of 64 were late by 4-261 ms: the last batch
  and the merge, after the window's end, ran over even the scaled model.
* ``"slowest"``: m = the fit's largest under-prediction of any calibration run (each point's
  slowest repeat), the observed worst-case execution time that real-time schedulability
  analysis plans with.

**Repetitions** (digest, third-round correction 2). Measured lateness is a distribution: one run
per plan with a 1 ms overrun counted as a miss made verdicts change between renders. Each row is
one ``repetition`` of its plan (the plan is the same in every repetition; an online scheme decides
again on each run's durations), warm, and :func:`repeated` orders a grid's repetitions afresh in
every round, so a slow spell of the machine falls on different plans. A row carries its
``lateness`` (the latest query's completion minus its deadline) and ``late_beyond_tolerance``,
the queries that finish more than :func:`tolerance` after their deadline.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import tempfile
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab.experiments.intermittent.spark import (ALL_QUERIES, DATA_PARAMS, MAX_RUNS, QUERY_PARAM,
                                                          SparkProfile, tpch_data)
from staleness_lab.intermittent import FixedRate, Query, QuerySet
from staleness_lab.intermittent.costs import parse_agg_cost, parse_cost
from staleness_lab.intermittent.deadlines import c7, with_deadlines
from staleness_lab.intermittent.dispatch import POLICIES
from staleness_lab.intermittent.dispatch import dispatch as model_dispatch
from staleness_lab.intermittent.minbatch import find_min_batch
from staleness_lab.intermittent.plan import BatchPlan
from staleness_lab.intermittent.single import algorithm1
from staleness_lab.model.workload import MAX_SEED
from staleness_lab.sweeps.registry import Param, check_choice, experiment

#: The paper's load: Σ Cost(N) ≈ 640 s over a 4500 s window (digest §5, Fig. 7's derivation).
LOAD = Fraction(640, 4500)
#: C_max over the mean Cost(N): the paper's 30 s against 640 s over 13 queries.
C_MAX_SHARE = Fraction(30 * 13, 640)
#: The grid on which the scaled window and the fitted costs are written (CP-SAT's time unit):
#: 10 µs, fine against a per-file R of a few milliseconds (module docstring).
TIME_UNIT = Fraction(1, 100_000)
HYBRID_SCHEMES = (*POLICIES, "optimal")
#: How a hybrid row's planner sees the costs (module docstring): the fits, or the fits scaled to
#: cover calibration's medians, or its slowest runs.
MARGINS = ("none", "median", "slowest")
MARGIN_PARAM = Param("margin", str, "none", "the planner's costs: none (the fits), median or slowest (scaled by "
                     "the fit's largest under-prediction of calibration's medians or slowest runs)", choices=MARGINS)
#: CP-SAT's deterministic limit per phase (the profiles use 1-10).
MAX_DETERMINISTIC_TIME = 600.0
#: A query counts as late only when it finishes more than max(LATE_SHARE·D, LATE_FLOOR) seconds
#: after its deadline D (digest, third-round correction 2: "late only beyond 1 % of D or 10 ms,
#: whichever is larger"); D in virtual seconds from time 0, the window opening at 1 s.
LATE_SHARE = 0.01
LATE_FLOOR = 0.010
REPETITION_PARAM = Param("repetition", int, 0, "which repetition of the plan (rows differing only here run the "
                         "same plan again, warm)", ge=0, le=MAX_RUNS)


# -- measured query sets ---------------------------------------------------------------------------


def read_fits(costmodels: str | Path, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """``{query: {"cost": ..., "agg_cost": ...}}`` from ``costmodels/<query>.json`` (calibration's output)."""
    folder = Path(costmodels)
    fits = {}
    for name in names:
        path = folder / f"{name}.json"
        try:
            fit = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise InputError("costmodels", f"{path}: no readable fit ({err})") from None
        if not isinstance(fit, dict) or "cost" not in fit:
            raise InputError(f"costmodels/{path.name}", "must hold a mapping with 'cost' (and optional 'agg_cost')")
        fits[name] = fit_entry(fit)
    return fits


def fit_entry(fit: Mapping[str, Any]) -> dict[str, Any]:
    """What the planners read of a fit's document (one of :func:`read_fits`' values): its
    ``cost``, its ``agg_cost`` (``{"kind": "none"}`` when it has none) and, when it has them,
    calibration's ``measurements``."""
    entry = {"cost": fit["cost"], "agg_cost": fit.get("agg_cost", {"kind": "none"})}
    if "measurements" in fit:
        entry["measurements"] = fit["measurements"]
    return entry


def fit_margin(name: str, fit: Mapping[str, Any], margin: str) -> Fraction:
    """The largest relative under-prediction of a fit on its own calibration,
    ``max(0, max_x t(x)/Cost(x) - 1, max_n t(n)/AggCost(n) - 1)`` over the batch sizes and
    partial counts calibration timed (its ``measurements``), t the median for ``"median"`` and
    the slowest repeat for ``"slowest"`` (a point's ``slowest``, or the largest of its
    ``samples`` as ``tpch calibrate`` writes them)."""
    check_choice(margin, MARGINS[1:], "margin")
    field = f"costmodels/{name}.json"
    measured = fit.get("measurements")
    if not isinstance(measured, Mapping):
        raise InputError(field, f"margin {margin!r} needs calibration's measurements (a hand-written model has none)")
    cost = parse_cost(fit["cost"], f"{field}.cost")
    agg = parse_agg_cost(fit["agg_cost"], f"{field}.agg_cost")

    def seconds(point: Mapping[str, Any]) -> Fraction:
        value = point["seconds"] if margin == "median" else point.get("slowest") or max(point["samples"])
        return _as_written(value)

    ratios = [Fraction(0)]
    try:
        ratios += [seconds(p) / cost(int(p["files"])) - 1 for p in measured.get("batches", [])]
        ratios += [seconds(p) / agg(int(p["partials"])) - 1 for p in measured.get("aggregation", [])]
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as err:
        raise InputError(f"{field}.measurements", f"must list files/partials with their seconds, slowest or samples, "
                                                  f"and positive modelled seconds ({err!r})") from None
    return max(ratios)


def fits_digest(fits: Mapping[str, Any]) -> str:
    """SHA-256 (16 hex digits) of the fits: a cached hybrid row is reused only with the same fits."""
    text = json.dumps(fits, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _as_written(value: Any) -> Fraction:
    """A fitted or measured number read as written (its shortest decimal), exactly."""
    return Fraction(repr(float(value)))


def _on_grid(value: float | Fraction) -> Fraction:
    """A fitted number (:func:`_as_written` unless already exact), rounded up to the time grid (a
    cost is never understated)."""
    exact = value if isinstance(value, Fraction) else _as_written(value)
    return Fraction(math.ceil(exact / TIME_UNIT)) * TIME_UNIT


def measured_queryset(fits: Mapping[str, Mapping[str, Any]], parts: int, *, delta_rsf: float = 0.5) -> QuerySet:
    """The queries of ``fits`` over one window of ``parts`` files, scaled as the module docstring
    says: file k arrives at ``1 + (k - 1)·W/P`` with ``Σ Cost(N) / W ≈`` :data:`LOAD`, C_max =
    :data:`C_MAX_SHARE` · mean Cost(N); coefficients rounded up to the :data:`TIME_UNIT` grid.
    Deadlines are placeholders (``we + 1``): the experiments set them."""
    costs = {name: _grid_costs(name, fit) for name, fit in fits.items()}
    total = sum((cost(parts) for cost, _ in costs.values()), Fraction(0))
    interval = max(TIME_UNIT, _on_grid(float(total / LOAD / parts)))
    arrivals = FixedRate(ws=Fraction(1), rate=1 / interval, n=parts)
    queries = tuple(Query(name, arrivals, arrivals.we + 1, cost, agg) for name, (cost, agg) in costs.items())
    c_max = max(TIME_UNIT, _on_grid(float(C_MAX_SHARE * total / len(costs))))
    return QuerySet(queries=queries, delta_rsf=Fraction(delta_rsf), c_max=c_max, time_unit=TIME_UNIT)


def planning_queryset(qs: QuerySet, fits: Mapping[str, Mapping[str, Any]], margin: str) -> QuerySet:
    """``qs`` as the planner sees it under ``margin`` (:data:`MARGINS`): itself for ``"none"``;
    otherwise each query's cost and aggregation models scaled by ``1 +`` :func:`fit_margin`
    (then on the grid), arrivals, deadlines and C_max unchanged."""
    check_choice(margin, MARGINS, "margin")
    if margin == "none":
        return qs
    queries = []
    for q in qs.queries:
        cost, agg = _grid_costs(q.name, fits[q.name], 1 + fit_margin(q.name, fits[q.name], margin))
        queries.append(Query(q.name, q.arrivals, q.deadline, cost, agg))
    return qs.with_overrides(queries=tuple(queries))


def _grid_costs(name: str, fit: Mapping[str, Any], factor: Fraction = Fraction(1)) -> tuple[Any, Any]:
    """A fit's cost and aggregation models times ``factor``, on the grid."""
    return (parse_cost(_gridded(fit["cost"], factor), f"costmodels/{name}.cost"),
            parse_agg_cost(_gridded(fit["agg_cost"], factor), f"costmodels/{name}.agg_cost"))


def _gridded(model: Mapping[str, Any], factor: Fraction = Fraction(1)) -> dict[str, Any]:
    """A cost model's coefficients times ``factor``, rounded up to the grid (kinds and the
    points' sizes kept)."""
    def cost(value: Any) -> Fraction:
        return _on_grid(_as_written(value) * factor)

    out: dict[str, Any] = {}
    for key, value in model.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = cost(value)
        elif key == "points":
            out[key] = [[p[0], cost(p[1])] for p in value]
        elif key == "values":
            out[key] = [cost(v) for v in value]
        else:
            out[key] = value
    return out


# -- hybrid rows -------------------------------------------------------------------------------------


def tolerance(deadline: float) -> float:
    """How late past ``deadline`` a measured completion may be before it counts as a miss:
    ``max(1 % of D, 10 ms)`` (:data:`LATE_SHARE`, :data:`LATE_FLOOR`)."""
    return max(LATE_SHARE * float(deadline), LATE_FLOOR)


def repeated(rows: Sequence[Mapping[str, Any]], repetitions: int, seed: int = 0) -> list[dict[str, Any]]:
    """``rows`` (one per plan) ``repetitions`` times, round after round, each round in a fresh
    seeded order and each row with its ``repetition`` number (module docstring)."""
    out: list[dict[str, Any]] = []
    for k in range(repetitions):
        order = list(range(len(rows)))
        random.Random(f"{seed}-{k}").shuffle(order)
        out += [{**rows[i], "repetition": k} for i in order]
    return out


def _executed_row(qs: QuerySet, planned: BatchPlan, run: Any, data: Any) -> dict[str, Any]:
    """Planned (cost model) against measured (Spark) misses, cost and completion, and whether
    every query's result equals its one-shot reference."""
    from staleness_lab.spark.intermittent import compare_results

    realized = run.plan
    wrong = [name for name, result in run.results.items()
             if compare_results(name, result, data.reference_result(name)) is not None]
    min_total = float(sum((q.min_cost for q in qs.queries), Fraction(0)))
    done = realized.queries
    lateness = done["completion"] - done["deadline"]
    return {
        "status": planned.status,
        "batches": int((realized.batches["kind"] == "batch").sum()),
        "planned_misses": planned.misses,
        "misses": realized.misses,
        "planned_cost": float(planned.total_cost),
        "measured_cost": float(realized.total_cost),
        "normalized_cost": float(realized.total_cost) / min_total,
        "planned_completion": float(planned.queries["completion"].max()),
        "completion": float(realized.queries["completion"].max()),
        "last_deadline": float(max(q.deadline for q in qs.queries)),
        "late": ",".join(realized.queries.loc[realized.queries["late"].fillna(False).astype(bool), "query"]),
        "lateness": float(lateness.max()),
        "late_beyond_tolerance": int((lateness > done["deadline"].map(tolerance)).sum()),
        "violations": len(run.violations),
        "wrong_results": ",".join(wrong),
    }


def _scratch() -> tempfile.TemporaryDirectory:
    """A scratch run directory under the data root (shared by a cluster's workers on one host)."""
    from staleness_lab.paths import data_root

    parent = data_root() / "data" / "runs"
    parent.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix="hybrid-", dir=parent)


#: The (data directory, query) pairs already warmed up in this process (:func:`_warm_up`).
_warmed: set[tuple[Path, str]] = set()
#: Whole-window rounds in a query's warm-up (:func:`_warm_up`).
WARM_UP_RUNS = 2


def _warm_up(names: tuple[str, ...], data: Any, work: Path) -> None:
    """Warm each query up once per process and dataset, unmeasured: a partial and the final merge
    of one partial on part 1, then :data:`WARM_UP_RUNS` rounds of a whole single batch over every
    part and the merge of two half-window partials, written as calibration writes them for n = 2.

    The cost models are fitted to warm runs (2 warm-ups before the measured repeats at every size,
    :mod:`staleness_lab.spark.intermittent.calibrate`), and a continuously running system is
    warm; a query's first runs in a process pay Spark's plan compilation and the JVM's JIT. At SF 1
    in a fresh process (measured): Q1's single batch over 900 parts took 15.5 s, then 5.6, 4.7 and
    4.3 s (4.2 s modelled); after a warm-up on part 1 alone, 7.8, 5.4, 4.8 s; after one whole run,
    5.9, 5.1, 4.6 s. The first hybrid row of a sitting took 9.4 s for the same batch. The merge of
    two large partials warms separately (calibration measures it after 2 warm-ups at n = 2): Q10's,
    over two 450-part partials after the part-1 warm-up, took 0.42, 0.28, 0.25, 0.24 s on
    consecutive fresh pairs (0.27 s calibrated), and a plan ending in it missed D by 0.28 s."""
    from staleness_lab.spark.intermittent.calibrate import write_partials
    from staleness_lab.spark.intermittent.catalogue import CATALOGUE
    from staleness_lab.spark.intermittent.steps import run_final, run_partial, run_whole

    for name in names:
        if (data.directory, name) in _warmed:
            continue
        query, folder = CATALOGUE[name], work / "warm-up" / name
        run_partial(query, data, 1, 1, folder / "partial")
        run_final(query, data, [folder / "partial"], folder / "final")
        for k in range(WARM_UP_RUNS):
            run_whole(query, data, 1, data.n_parts, folder / f"whole-{k}")
            halves, _ = write_partials(query, data, 2, folder / f"halves-{k}")
            run_final(query, data, halves, folder / f"merged-{k}")
        _warmed.add((data.directory, name))


def _unplanned_row(qs: QuerySet, plan: BatchPlan) -> dict[str, Any]:
    nan = math.nan
    return {"status": plan.status, "batches": 0, "planned_misses": nan, "misses": nan, "planned_cost": nan,
            "measured_cost": nan, "normalized_cost": nan, "planned_completion": nan, "completion": nan,
            "last_deadline": float(max(q.deadline for q in qs.queries)), "late": "", "lateness": nan,
            "late_beyond_tolerance": nan, "violations": 0, "wrong_results": ""}


#: The planning margins Fig. 7's verdicts judge (a profile runs its ``multi_margins`` of them:
#: its rows are the costliest): the paper's plan and the worst-case one.
MULTI_MARGINS = ("none", "slowest")


def hybrid_grids(setup: SparkProfile, costmodels: str | Path,
                 digest: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of ``intermittent-spark-fig6`` and ``intermittent-spark-multi`` for the profile
    ``setup``: Fig. 6 under every margin for each query and factor, Fig. 7 under the profile's
    ``multi_margins`` for each scheme and ρ with the profile's queries together, every plan
    ``repetitions`` times (:func:`repeated`)."""
    where = dict(scale=setup.scale, parts=setup.parts, costmodels=str(costmodels), fits=digest)
    fig6 = [dict(query=q, f=f, margin=m, **where) for m in MARGINS for q in setup.queries for f in setup.factors]
    multi = [dict(scheme=s, rho=r, queries=",".join(setup.queries), deterministic_time=setup.deterministic_time,
                  margin=m, **where) for m in setup.multi_margins for s in setup.schemes for r in setup.rhos]
    return repeated(fig6, setup.repetitions), repeated(multi, setup.repetitions)


#: CP-SAT's plans in this process, by planning query set and limit (:func:`_optimal_plan`).
_optimal: dict[tuple[str, float], BatchPlan] = {}


def _optimal_plan(planning: QuerySet, deterministic_time: float) -> BatchPlan:
    """CP-SAT's plan of ``planning`` on one worker, solved once per process for all the plan's
    repetitions (one worker and a deterministic limit make the solve repeatable: the cache only
    saves its time)."""
    from staleness_lab.intermittent.schemes import make_plan

    key = (repr(planning), deterministic_time)
    if key not in _optimal:
        _optimal[key] = make_plan(planning, "optimal", workers=1, deterministic_time=deterministic_time,
                                  max_model_terms=None)  # sized by the profile
    return _optimal[key]


@experiment(
    "intermittent-spark-fig6",
    QUERY_PARAM,
    Param("f", float, 0.5, "deadline factor: D = we + f * Cost(N)", gt=0),
    *DATA_PARAMS,
    Param("costmodels", str, "", "directory of the measured fits (calibration's output)"),
    Param("fits", str, "", "digest of the fits (a cached row is reused only with the same fits)"),
    MARGIN_PARAM,
    REPETITION_PARAM,
)
def hybrid_fig6(query: str, f: float, scale: float, parts: int, costmodels: str, fits: str,
                margin: str, repetition: int) -> pd.DataFrame:
    """Fig. 6 in hybrid mode: Algorithm 1's plan for one query under its measured cost model
    (scaled by the planning ``margin``, module docstring), executed on Spark after a warm-up
    (:func:`_warm_up`); whether the deadline ``we + f·Cost(N)`` of the unscaled model is met with
    the measured durations, in this ``repetition`` of the plan."""
    from staleness_lab.spark.intermittent import execute

    if not f > 0:
        raise InputError("f", f"must be > 0, got {f}")
    check_choice(margin, MARGINS, "margin")
    measured = read_fits(costmodels, (query,))
    base = measured_queryset(measured, parts)
    q = base.query(query)
    deadline = q.we + Fraction(f) * q.min_cost
    qs = base.with_overrides(queries=(Query(q.name, q.arrivals, deadline, q.cost, q.agg_cost),))
    plan = algorithm1(planning_queryset(qs, measured, margin))
    # any plan's last batch starts at we or later and costs Cost(1) at least, plus AggCost(2)
    # when there are two batches or more; one batch costs Cost(N)
    possible = deadline - q.we >= min(q.min_cost, q.cost(1) + q.agg_cost(2))
    if plan.status != "ok":
        row = _unplanned_row(qs, plan)
    else:
        data = tpch_data(scale, parts)
        with _scratch() as work:
            _warm_up((query,), data, Path(work))
            row = _executed_row(qs, plan, execute(plan, data, out=Path(work) / "run"), data)
    return pd.DataFrame([{"scheme": "algorithm1", "deadline": float(deadline), "min_cost": float(q.min_cost),
                          "possible": bool(possible), **row}])


@experiment(
    "intermittent-spark-multi",
    Param("scheme", str, "llf", "llf, edf, sjf, rr (dispatched on Spark) or optimal (CP-SAT, executed)",
          choices=HYBRID_SCHEMES),
    Param("rho", float, 1.0, "A5's deadline factor (one window for all queries)", gt=0),
    Param("queries", str, "CQ2,Q14,Q12", "comma-separated catalogue queries"),
    *DATA_PARAMS,
    Param("delta_rsf", float, 0.5, "MinBatch's relative slack δRSF", ge=0),
    Param("seed", int, 0, "seed of A5's order", ge=0, le=MAX_SEED),
    Param("deterministic_time", float, 2.0, "optimal: CP-SAT's deterministic limit per phase", gt=0,
          le=MAX_DETERMINISTIC_TIME),
    Param("costmodels", str, "", "directory of the measured fits (calibration's output)"),
    Param("fits", str, "", "digest of the fits (a cached row is reused only with the same fits)"),
    MARGIN_PARAM,
    REPETITION_PARAM,
)
def hybrid_multi(scheme: str, rho: float, queries: str, scale: float, parts: int, delta_rsf: float, seed: int,
                 deterministic_time: float, costmodels: str, fits: str, margin: str, repetition: int) -> pd.DataFrame:
    """Figs. 6-7 in hybrid mode: the queries sharing one executor with A5's deadlines at ρ (from
    the unscaled fits); an online policy decides with Spark's measured durations, the CP-SAT plan
    (:func:`_optimal_plan`) is executed as planned, both on the cost models scaled by the planning
    ``margin`` (module docstring) and after a warm-up (:func:`_warm_up`); planned (cost model)
    against measured misses and cost, in this ``repetition`` of the plan."""
    from staleness_lab.spark.intermittent import dispatch, execute

    if not rho > 0:
        raise InputError("rho", f"must be > 0, got {rho}")
    names = tuple(n.strip() for n in queries.split(",") if n.strip())
    unknown = [n for n in names if n not in ALL_QUERIES]
    if not names or unknown or len(set(names)) != len(names):
        raise InputError("queries", f"must list distinct catalogue queries separated by commas "
                                    f"({', '.join(ALL_QUERIES)}), got {queries!r}")
    check_choice(margin, MARGINS, "margin")
    measured = read_fits(costmodels, names)
    qs = with_deadlines(measured_queryset(measured, parts, delta_rsf=delta_rsf), Fraction(rho), seed=seed)
    planning = planning_queryset(qs, measured, margin)
    data = tpch_data(scale, parts)
    if scheme == "optimal":
        plan = _optimal_plan(planning, deterministic_time)
    else:
        plan = model_dispatch(planning, scheme)
    if plan.status != "ok":
        row = _unplanned_row(qs, plan)
    else:
        with _scratch() as work:
            _warm_up(names, data, Path(work))
            out = Path(work) / "run"
            run = execute(plan, data, out=out) if scheme == "optimal" else dispatch(planning, scheme, data, out=out)
            row = _executed_row(qs, plan, run, data)
    solver = (plan.solver or {}).get("status", "")
    flagged = [q.name for q in planning.queries if find_min_batch(q, planning.delta_rsf, planning.c_max).flagged]
    return pd.DataFrame([{"solver_status": solver, "c_max": float(qs.c_max), "minbatch_flagged": ",".join(flagged),
                          "c7_holds": bool(c7(planning).holds), **row}])
