"""Chandrasekaran & Sudarshan, "Scheduling of Intermittent Query Processing": Figs. 6-11 in
simulation, Algorithm 1's loss against the exact DP, and every heuristic against the CP-SAT optimum.

Every scheme outputs a :class:`~staleness_lab.intermittent.BatchPlan` priced by the cost models
(:mod:`staleness_lab.intermittent`); rows are tidy and depend only on their parameters, so a
row is the same locally and on Spark (CP-SAT rows use a deterministic time limit, except
Figs. 7-8's optimum, whose wall-clock budget lets the status and gap depend on the machine;
every such row says where its solver stopped).

Setup (digest §5, §6): 13 queries (Q1, Q3, Q4, Q6, Q9, Q10, Q12, Q14, Q19, CQ1-CQ4) on one
executor, priced by one of two **cost sets**, each a ``reading`` of the verdicts
(:func:`cost_sets`):

* **the synthetic set** (``costmodels=""``, reading :data:`SYNTHETIC_READING`),
  ``data/intermittent/tpch13-synthetic.yaml``: the paper's window, N = 4500 files arriving at
  1 file/s from ws = 1, C_max = 30 s, and costs chosen to agree with every number the paper
  gives (MinBatch 180 for Q6 and CQ1, 1125 for CQ3 and CQ4 at δRSF = 50 %; Σ Cost(N) ≈ 640 s;
  Q3, Q9, Q10 the costliest at small sizes). The paper prints no cost curve, so they are ours.
* **measured fits** (``costmodels=DIR``, reading ``measured SF <scale> fits``,
  :func:`fits_reading`): one ``DIR/<query>.json`` per query as ``staleness-lab tpch calibrate``
  writes it (:mod:`staleness_lab.spark.intermittent.calibrate`: eq. (1)'s ``cost``, the
  aggregation's ``agg_cost``, the ``scale`` and ``parts`` measured, ``spark_version``,
  ``measured_on``). The project ships :data:`MEASURED`, SF 1 over 900 parts.

**Scale of the measured fits** (digest §6, §7). A fit is measured per part over the P parts of
its scale factor (x = 1..P; at SF 1, P = 900 parts of about 1,700 orders each), while the paper's
queries read N = 4500 files of a data set of about SF 25. The simulated figures keep the
measured range: **the window holds the P measured parts, N = P**, never more (no batch is
priced beyond the largest batch calibration timed), and the paper's *ratios* set the rest, as
report 05's hybrid runs do (:func:`~staleness_lab.experiments.intermittent.hybrid.measured_queryset`,
the same model of the same fits): part k arrives at ``1 + (k − 1)·W/P`` with the window W chosen
so that ``Σ Cost(N) / W`` is the paper's 640/4500, C_max keeps the paper's 30 s against a mean
Cost(N) of 640/13 s, δRSF is the figure's, the coefficients are rounded up to a 10 µs grid (a
cost is never understated), and the deadlines follow the paper's rules on that window (Fig. 6:
D = we + f·Cost(N); Figs. 7-11: A5 at ρ). The other reading, the paper's N = 4500 with R scaled
by P/4500, would price a paper file as a fifth of a measured part, below the one part timed, and
keep nothing the paper measured but the count. One extrapolation remains and is said where it
happens: AggCost(n) is measured up to 64 partials (at most P), and a plan of more batches per
query (no-MinBatch runs, Fig. 8) prices its merge on the fitted line beyond that range; plan rows
carry ``max_batches`` and the verdicts name the runs (:mod:`~.verdicts`).

Experiments:

* ``intermittent-fig6``: one query alone, ``D = we + f·Cost(N)``; Algorithm 1 (the paper's), the
  exact optimum (the single-query DP on the exact grid, about 0.1 s at N = 4500) or the CP-SAT
  optimum. Cost normalized to the single batch of 1D. The figure's grids run Algorithm 1 and the
  exact optimum beside it (Algorithm 1's loss at the paper's scale); CP-SAT rounds the synthetic
  piecewise costs up to its grid, so its optimum is not comparable there, and
  ``intermittent-optimum`` compares the multi-query schemes with it.
* ``intermittent-multi``: the 13 queries sharing the executor under LLF/EDF/SJF/RR, with or
  without MinBatch, deadlines from A5 at ``rho`` over the same window or random windows (ρ = 1),
  a rate profile (FR, VR1-VR4) and δRSF. Figs. 7, 8, 10, 11 are grids of it (:data:`SWEEPS`).
* ``intermittent-multi-optimum``: Figs. 7 and 8's optimum, one row per instance (ρ, windows,
  seed) of those figures: CP-SAT hinted with the best of their heuristics, within a wall-clock
  ``time_limit`` per instance (:data:`FIG78_TIME_LIMIT`), its plan priced at the cost model's
  durations beside its status, proven bounds and gap. The method is the decomposition
  (:data:`FIG78_METHOD`), chosen by measurement on the 13-query set at 30 s per phase on 2
  workers (``bench_planner.py --set tpch13-synthetic``): it proved ρ = 1 optimal (640.1 on the
  grid) and phase 1 (no miss) at ρ = 0.8-0.2 with a cost gap of about 0.32, where the
  monolithic model found no phase-1 solution within its limit at any ρ (it returned the hint,
  no bound); so the decomposition is never worse on these instances. Since the master's columns
  are repaired into the plan one query at a time, the gap at 60 s per phase is 0.04, 0.13, 0.20
  and 0.25 at ρ = 0.8, 0.6, 0.4 and 0.2 (the bound is still about the sum of the queries' single
  batches, 640-649: the plans improved, not the bound), and ρ = 0.1 misses one deadline, not
  two (unproven). Its column generation is not under the time limit (seconds per instance,
  more on a loaded machine).
* ``intermittent-alg1-loss``: a seeded random single query (linear or concave costs): Algorithm 1
  against the exact DP.
* ``intermittent-optimum``: A5 instances (random linear costs, one window) at ρ: every heuristic
  against the CP-SAT optimum, with its status, bound and gap.

Profiles (:data:`~staleness_lab.sweeps.named.PROFILES`, :func:`grid`): ``quick`` (tests),
``standard`` (``make run``) and ``full``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab.experiments.verdicts import SYNTHETIC_COSTS
from staleness_lab.intermittent import (
    AggCost, FixedRate, LinearCost, PiecewiseCost, Query, QuerySet, check_plan, load_queryset, rate_profile,
)
from staleness_lab.intermittent import PROFILES as PROFILES_OF_RATE
from staleness_lab.intermittent.deadlines import c7, with_deadlines
from staleness_lab.intermittent.dispatch import POLICIES, dispatch
from staleness_lab.intermittent.numbers import exact as exact_number
from staleness_lab.intermittent.plan import METHODS, BatchPlan, at_model_costs
from staleness_lab.intermittent.single import MAX_TUPLES as EXACT_MAX_TUPLES
from staleness_lab.intermittent.single import algorithm1, exact
from staleness_lab.model.workload import MAX_SEED
from staleness_lab.sweeps.named import NamedSweep
from staleness_lab.sweeps.registry import Param, experiment

RATE_PROFILES = PROFILES_OF_RATE
#: Fig. 6's deadline factors f (D = we + f·Cost(N)) and Fig. 7's ρ of the same-window cases.
FIG6_FACTORS = (1.0, 0.8, 0.6, 0.4, 0.2, 0.1)
FIG7_RHOS = (0.8, 0.6, 0.4, 0.2, 0.1)
SYNTHETIC = "data/intermittent/tpch13-synthetic.yaml"
#: The measured fits the project ships (report 04's default ``costmodels``): the 13 queries
#: calibrated on Spark at SF 1 over 900 parts (``staleness-lab tpch calibrate --scale 1 --parts 900``).
MEASURED = "data/intermittent/sf1-p900"
#: The CP-SAT rows' deterministic time limit per phase (solver "deterministic seconds").
DETERMINISTIC_TIME = {"quick": 1.0, "standard": 2.0, "full": 10.0}
#: The 13 queries of the synthetic set, in its order (``paper_queries().names``).
QUERIES = ("Q1", "Q3", "Q4", "Q6", "Q9", "Q10", "Q12", "Q14", "Q19", "CQ1", "CQ2", "CQ3", "CQ4")
FIG6_SCHEMES = ("algorithm1", "exact", "optimal")
#: Figs. 7-8's optimum rows: the planner's method, chosen by measurement on the 13-query set at
#: 30 s per phase (never worse there than the monolithic model: module docstring), and its
#: wall-clock budget per instance (both phases and every round), per profile. The standard
#: profile's 30 s: on the synthetic set at 60 s every instance returned the same plan as at 30 s
#: (cost bounds at most 7.7 higher, gaps within 0.011) and took twice the time (320 s for the
#: seven against 173 s), so the standard render spent half of its optimum rows on nothing.
FIG78_METHOD = "decomposition"
FIG78_TIME_LIMIT = {"quick": 4.0, "standard": 30.0, "full": 120.0}
#: The instances of Figs. 7-8 the quick profile plans (ρ, windows): the tightest deadline, where
#: the paper claims no plan exists (the decomposition's columns alone take seconds per instance).
FIG78_QUICK = ((0.1, "same"),)
#: The seeds of the optimum's instances per profile (a minute or two each past quick).
FIG78_SEEDS = {"quick": [0], "standard": [0], "full": [0, 1, 2]}
WINDOWS = ("same", "random")
COST_KINDS = ("linear", "concave")
#: Parameter bounds: CP-SAT's deterministic limit per phase (the profiles use 1-10), and the
#: A5 instances the optimum is asked about (the full profile's largest is 6 queries x 30 tuples).
MAX_DETERMINISTIC_TIME = 600.0
MAX_OPT_QUERIES = 20
MAX_OPT_TUPLES = 1000
#: The largest wall-clock budget per instance of Figs. 7-8's optimum rows (seconds).
MAX_TIME_LIMIT = 3600.0
#: The digest of the measured fits a row is for (:func:`fits_of`): its cache key changes with them.
FITS_PARAM = Param("fits", str, "", "digest of the measured fits (grids fill it; a cached row is reused only with "
                   "the same fits; empty: the fits as they are)")


# -- the query sets ------------------------------------------------------------------------------


def paper_queries(costmodels: str = "", fits: str = "") -> QuerySet:
    """The 13 queries of the paper's Sec. 7 with the synthetic costs, or the measured fits in the
    directory ``costmodels`` over the window of their measured parts (module docstring, "Scale";
    :func:`~staleness_lab.experiments.intermittent.hybrid.measured_queryset`); deadlines are
    placeholders (experiments set them). ``fits``: the digest the fits must have
    (:func:`fits_of`; a row's, so a cached row is never served for other fits), empty: any."""
    from staleness_lab.experiments.intermittent.hybrid import fits_digest, measured_queryset
    from staleness_lab.notebook_params import repo_file

    base = load_queryset(repo_file(SYNTHETIC))
    if not costmodels:
        return base
    documents = _fit_documents(costmodels)
    parts = int(_provenance(documents)["parts"].iloc[0])  # every fit checked, its file named
    measured = _entries(documents)
    if fits and fits != fits_digest(measured):
        raise InputError("fits", f"is {fits}, but the fits in {costmodels} are {fits_digest(measured)} (re-run the grid)")
    return measured_queryset(measured, parts, delta_rsf=float(base.delta_rsf))


def alone_at_fig6(base: QuerySet, name: str, f: Fraction) -> QuerySet:
    """Query ``name`` of ``base`` alone on one executor with Fig. 6's deadline D = we + f·Cost(N)
    (paper Sec. 7.1: a single query, its deadline a multiple of its single batch's cost)."""
    q = base.query(name)
    return QuerySet(queries=(Query(q.name, q.arrivals, q.we + f * q.min_cost, q.cost, q.agg_cost),),
                    time_unit=base.time_unit)


def fits_of(costmodels: str) -> str:
    """The digest of the measured fits in ``costmodels`` as the experiments read them ("" for the
    synthetic set): the grids put it in every row priced by them."""
    from staleness_lab.experiments.intermittent.hybrid import fits_digest

    return fits_digest(_entries(_fit_documents(costmodels))) if costmodels else ""


def _entries(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the planners read of each fit's document (:func:`~staleness_lab.experiments.
    intermittent.hybrid.fit_entry`), by query."""
    from staleness_lab.experiments.intermittent.hybrid import fit_entry

    return {name: fit_entry(document) for name, document in documents.items()}


def fits_folder(costmodels: str) -> Path:
    """The directory of measured fits ``costmodels`` names: as given, or, relative and not found
    from the working directory, in the checkout (:func:`~staleness_lab.notebook_params.repo_file`:
    a report runs in ``notebooks/``)."""
    from staleness_lab.notebook_params import repo_file

    folder = Path(costmodels)
    if not folder.is_absolute() and not folder.exists():
        try:
            folder = repo_file(costmodels)
        except InputError:
            pass
    if not folder.is_dir():
        raise InputError("costmodels", f"no such directory: {costmodels}")
    return folder


#: What :func:`fits_provenance` reads of a fit's ``measured_on`` (calibration's machine record).
MACHINE_FIELDS = ("date", "cpu", "cores", "memory_gib", "os", "java")


def _fit_document(folder: Path, name: str) -> dict[str, Any]:
    path = folder / f"{name}.json"
    if not path.is_file():
        raise InputError("costmodels", f"has no fit for query {name}: {path.name} missing")
    try:
        fit = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"costmodels/{path.name}", f"cannot parse: {err}") from None
    if not isinstance(fit, dict) or "cost" not in fit or "agg_cost" not in fit:
        raise InputError(f"costmodels/{path.name}", "must hold a mapping with 'cost' and 'agg_cost'")
    for field in ("scale", "parts"):
        value = fit.get(field)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or (
                field == "parts" and value != int(value)):
            raise InputError(f"costmodels/{path.name}.{field}", f"must be a positive {'whole ' * (field == 'parts')}"
                             f"number (where the fit was measured), got {value!r}")
    return fit


def _fit_documents(costmodels: str) -> dict[str, dict[str, Any]]:
    """Each query's fit document in ``costmodels``, read and checked once (:func:`_fit_document`)."""
    folder = fits_folder(costmodels)
    return {name: _fit_document(folder, name) for name in QUERIES}


def fits_provenance(costmodels: str) -> pd.DataFrame:
    """One row per query of the measured fits in ``costmodels``: where they were measured
    (``scale``, ``parts``, ``spark_version``, the ``measured_on`` fields of
    :data:`MACHINE_FIELDS`, empty where a hand-written fit has none), the fit (S, R, its R²;
    a0, a1) and the largest batch (files) and merge (partials) calibration timed (0: no
    measurements). Every fit must be of one scale and one number of parts: they set the window
    (module docstring), else :class:`InputError` naming the field."""
    return _provenance(_fit_documents(costmodels))


def _provenance(documents: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """:func:`fits_provenance` of the fit documents read."""
    rows = []
    for name, fit in documents.items():
        machine = fit.get("measured_on") if isinstance(fit.get("measured_on"), dict) else {}
        linear = (fit.get("fits") or {}).get("linear") or {}
        measured = fit.get("measurements") if isinstance(fit.get("measurements"), dict) else {}
        rows.append({
            "query": name, "scale": float(fit["scale"]), "parts": int(fit["parts"]),
            "spark_version": str(fit.get("spark_version", "")),
            **{field: machine.get(field, "") for field in MACHINE_FIELDS},
            "S": float(fit["cost"].get("S", math.nan)), "R": float(fit["cost"].get("R", math.nan)),
            "r2": linear.get("r2"), "a0": float(fit["agg_cost"].get("a0", math.nan)),
            "a1": float(fit["agg_cost"].get("a1", math.nan)),
            "max_files": max((int(p["files"]) for p in measured.get("batches", [])), default=0),
            "max_partials": max((int(p["partials"]) for p in measured.get("aggregation", [])), default=0),
        })
    frame = pd.DataFrame(rows)
    for field in ("scale", "parts"):
        if frame[field].nunique() > 1:
            found = ", ".join(f"{q} {v:g}" for q, v in zip(frame["query"], frame[field]))
            raise InputError(f"costmodels/*.json.{field}", f"must be one for every query (they set the window), got {found}")
    return frame


def fits_reading(costmodels: str) -> str:
    """The reading of the verdicts computed on the measured fits in ``costmodels``:
    ``measured SF <scale> fits``."""
    return f"measured SF {fits_provenance(costmodels)['scale'].iloc[0]:g} fits"


def merges_measured(costmodels: str) -> int | None:
    """The most partials calibration merged for every query of the fits in ``costmodels`` (the
    measured range of AggCost, module docstring); None for the synthetic set (``""``) or fits
    without measurements."""
    if not costmodels:
        return None
    most = int(fits_provenance(costmodels)["max_partials"].min())
    return most or None


#: The reading of the verdicts computed on the synthetic set (the vocabulary's reason word).
SYNTHETIC_READING = SYNTHETIC_COSTS


def cost_sets(costmodels: str) -> dict[str, str]:
    """The cost sets report 04 runs Figs. 6-11 under, by reading: the synthetic set always
    (``""``), and the measured fits in ``costmodels`` when it names any."""
    return {SYNTHETIC_READING: "", **({fits_reading(costmodels): costmodels} if costmodels else {})}


def multi_instance(rho: float, windows: str, profile: str, delta_rsf: float, seed: int, costmodels: str = "",
                   c_max: float | None = None, *, fits: str = "") -> QuerySet:
    """The 13-query set of Figs. 7-11: windows (``same``: all from ws = 1; ``random``: ws drawn
    uniformly on whole seconds in [1, N/λ], digest A5), deadlines from A5 at ``rho`` (seeded
    order) on the nominal fixed-rate windows, then the arrivals replaced by the rate profile
    (VR3/VR4 files arrive late against those deadlines, as in the paper). ``c_max``: the cost
    set's (30 s on the synthetic set, the paper's ratio on measured fits) unless given; ``fits``:
    as :func:`paper_queries`."""
    base = paper_queries(costmodels, fits)
    c_max = float(base.c_max) if c_max is None else c_max
    rng = np.random.default_rng([seed, 7])
    queries = []
    for q in base.queries:
        arrivals = q.arrivals
        if windows == "random":
            width = int(math.ceil((arrivals.n - 1) / float(arrivals.rate))) + 1
            arrivals = FixedRate(ws=Fraction(int(rng.integers(1, width + 1))), rate=arrivals.rate, n=arrivals.n)
        queries.append(Query(q.name, arrivals, arrivals.we + 1, q.cost, q.agg_cost))
    nominal = base.with_overrides(queries=tuple(queries), delta_rsf=exact_number(delta_rsf, "delta_rsf"),
                                  c_max=exact_number(c_max, "c_max"))
    timed = with_deadlines(nominal, exact_number(rho, "rho"), seed=seed)
    if profile == "FR":
        return timed
    varied = []
    for k, q in enumerate(timed.queries):
        arrivals = rate_profile(profile, q.n, rate=q.arrivals.rate, ws=q.ws, seed=seed * 1000 + k)
        varied.append(Query(q.name, arrivals, max(q.deadline, arrivals.we + Fraction(1, 100)), q.cost, q.agg_cost))
    return timed.with_overrides(queries=tuple(varied))


def plan_row(qs: QuerySet, plan: BatchPlan) -> dict[str, Any]:
    """The observations every plan row carries (``max_batches``: the most batches one query runs,
    the partials its merge reads)."""
    ok = plan.status == "ok"
    queries = plan.queries
    min_total = sum((q.min_cost for q in qs.queries), Fraction(0))
    last_files = most = 0
    if ok:
        batches = plan.batches[plan.batches["kind"] == "batch"]
        last_files = int(batches.groupby("query")["size"].last().sum())
        most = int(batches.groupby("query").size().max()) if len(batches) else 0
    return {
        "status": plan.status,
        "misses": plan.misses if ok else math.nan,
        "late": ",".join(queries.loc[queries["late"].fillna(False).astype(bool), "query"]) if ok else "",
        "batches": int((plan.batches["kind"] == "batch").sum()),
        "total_cost": float(plan.total_cost) if ok else math.nan,
        "normalized_cost": float(plan.total_cost / min_total) if ok else math.nan,
        "total_tardiness": float(plan.total_tardiness) if ok else math.nan,
        "last_batch_files": last_files,
        "max_batches": most,
        "plan_violations": len(check_plan(qs, plan)),
    }


# -- Fig. 6 ---------------------------------------------------------------------------------------


@experiment(
    "intermittent-fig6",
    Param("query", str, "Q1", "one of the 13 queries", choices=QUERIES),
    Param("f", float, 0.5, "deadline factor: D = we + f * Cost(N)", gt=0),
    Param("scheme", str, "algorithm1", "algorithm1 (the paper's), exact (the exact DP, off the grid) or optimal "
          "(CP-SAT, on its grid)", choices=FIG6_SCHEMES),
    Param("costmodels", str, "", "directory of measured fits (empty: the synthetic set)"),
    FITS_PARAM,
    Param("deterministic_time", float, DETERMINISTIC_TIME["standard"], "CP-SAT's deterministic limit per phase",
          gt=0, le=MAX_DETERMINISTIC_TIME),
)
def fig6(query: str, f: float, scheme: str, costmodels: str, deterministic_time: float, fits: str = "") -> pd.DataFrame:
    """Fig. 6: one query alone with D = we + f·Cost(N): batches, cost normalized to the single
    batch of 1D (= Cost(N)), and whether the deadline is met."""
    if not f > 0:
        raise InputError("f", f"must be > 0, got {f}")
    base = paper_queries(costmodels, fits)
    if query not in base.names:
        raise InputError("query", f"must be one of {', '.join(base.names)}, got {query!r}")
    qs = alone_at_fig6(base, query, exact_number(f, "f"))
    deadline, min_cost = qs.queries[0].deadline, base.query(query).min_cost
    if scheme == "algorithm1":
        plan = algorithm1(qs)
    elif scheme == "exact":
        plan = exact(qs)
    else:
        from staleness_lab.optimize.batch_plan import optimal_plan

        hint = algorithm1(qs)
        plan = optimal_plan(qs, hint=hint if hint.status == "ok" else None, workers=1,
                            deterministic_time=deterministic_time, max_terms=None)  # sized by the profile
    return pd.DataFrame([{**plan_row(qs, plan), "deadline": float(deadline), "min_cost": float(min_cost),
                          "solver_status": (plan.solver or {}).get("status", "")}])


# -- Figs. 7, 8, 10, 11 ------------------------------------------------------------------------------


@experiment(
    "intermittent-multi",
    Param("policy", str, "edf", "llf, edf, sjf or rr", choices=POLICIES),
    Param("minbatch", bool, True, "MinBatch sizes (A3); False: every batch takes all arrived (Fig. 8)"),
    Param("rho", float, 1.0, "A5's deadline factor", gt=0),
    Param("windows", str, "same", "same (all from ws = 1) or random (ws uniform in [1, N/λ])", choices=WINDOWS),
    Param("profile", str, "FR", "rate profile: FR, VR1, VR2, VR3 or VR4", choices=RATE_PROFILES),
    Param("delta_rsf", float, 0.5, "MinBatch's relative slack δRSF", ge=0),
    Param("seed", int, 0, "seed of A5's order, the random windows and the VR profiles", ge=0, le=MAX_SEED),
    Param("costmodels", str, "", "directory of measured fits (empty: the synthetic set)"),
    FITS_PARAM,
)
def multi(policy: str, minbatch: bool, rho: float, windows: str, profile: str, delta_rsf: float, seed: int,
          costmodels: str, fits: str = "") -> pd.DataFrame:
    """Figs. 7, 8, 10, 11: the 13 queries on one executor under a policy; misses, batches and
    cost normalized to Σ Cost(N), plus the C7 necessary condition."""
    if not rho > 0:
        raise InputError("rho", f"must be > 0, got {rho}")
    qs = multi_instance(rho, windows, profile, delta_rsf, seed, costmodels, fits=fits)
    plan = dispatch(qs, policy, minbatch=minbatch)
    necessary = c7(qs)
    return pd.DataFrame([{**plan_row(qs, plan), "c7_holds": bool(necessary.holds),
                          "c7_last_work": float(necessary.last_work), "c7_available": float(necessary.available)}])


# -- the optimum of Figs. 7 and 8 -------------------------------------------------------------------


def fig78_heuristics(qs: QuerySet) -> dict[str, BatchPlan]:
    """Every heuristic plan of Figs. 7 and 8 on ``qs``, by the name their tables give it: the
    four policies with MinBatch (Fig. 7) and EDF and LLF without it (Fig. 8)."""
    plans = {policy: dispatch(qs, policy) for policy in POLICIES}
    plans.update({f"{policy} no-MinBatch": dispatch(qs, policy, minbatch=False) for policy in ("edf", "llf")})
    return plans


def _returned_phases(solver: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The phase-1 and cost records of the round whose plan the planner returned ({} if none)."""
    phases = solver.get("phases", [])
    if not phases:
        return {}, {}
    chosen = solver.get("round", phases[-1].get("round"))
    mine = [p for p in phases if p.get("round") == chosen]
    first = next((p for p in mine if p.get("phase") != "cost"), {})
    return first, next((p for p in mine if p.get("phase") == "cost"), {})


def optimum_against(qs: QuerySet, heuristics: dict[str, BatchPlan], time_limit: float, method: str = FIG78_METHOD,
                    workers: int = 1) -> dict[str, Any]:
    """The CP-SAT optimum of ``qs`` hinted with the best of ``heuristics`` (fewest misses, then
    cost), within ``time_limit`` wall-clock seconds for the whole call (half per phase, as
    :func:`~staleness_lab.optimize.batch_plan.optimal_plan` counts it): one row with its status,
    its misses and cost at the cost model's durations (:func:`at_model_costs`: the solver's grid
    rounds each step up; ``grid_cost`` is its own), the proven lower bounds on both, true for
    the cost model's durations (``misses_bound``; ``cost_bound``, NaN when the cost phase ran
    not; ``true_bounds``: the planner said so, :mod:`~staleness_lab.optimize.true_bounds`), the cost
    phase's gap, and whether the plan meets every deadline with every query within
    (1 + δRSF)·Cost(N) (the paper's "feasible solution with δRSF", Fig. 7)."""
    from staleness_lab.optimize.batch_plan import optimal_plan

    hint_name = min(heuristics, key=lambda name: (heuristics[name].misses, heuristics[name].total_cost))
    began = time.perf_counter()
    opt = optimal_plan(qs, hint=heuristics[hint_name], time_limit=time_limit / 2, workers=workers, method=method,
                       max_terms=None)  # sized by the profile
    seconds = time.perf_counter() - began
    solver = opt.solver or {}
    first, cost = _returned_phases(solver)
    priced = at_model_costs(opt)
    row = plan_row(qs, priced)
    ok = opt.status == "ok"
    budget = [float(q.min_cost * (1 + qs.delta_rsf)) for q in qs.queries]
    within = ok and bool((priced.queries["cost"] <= pd.Series(budget) + 1e-9).all())
    return {
        **row, "plan_violations": row["plan_violations"] + len(check_plan(qs, opt)),
        "solved_by": solver.get("method", method), "opt_status": solver.get("status", opt.status),
        "on_grid": bool(solver.get("on_grid", False)), "time_unit": float(qs.time_unit),
        "true_bounds": "bound_unit" in solver,
        "grid_cost": float(opt.total_cost) if ok else math.nan,
        "misses_bound": float(first["bound"]) if first.get("bound") is not None else (0.0 if ok else math.nan),
        "cost_bound": float(cost["bound"]) if cost.get("bound") is not None else math.nan,
        "gap": float(cost["gap"]) if cost.get("gap") is not None else math.nan,
        "deadlines": solver.get("deadlines", "unknown"), "within_delta_rsf": bool(within and row["misses"] == 0),
        "hint": hint_name, "seconds": round(seconds, 3),
    }


@experiment(
    "intermittent-multi-optimum",
    Param("rho", float, 1.0, "A5's deadline factor", gt=0),
    Param("windows", str, "same", "same (all from ws = 1) or random (ws uniform in [1, N/λ])", choices=WINDOWS),
    Param("seed", int, 0, "seed of A5's order and the random windows", ge=0, le=MAX_SEED),
    Param("costmodels", str, "", "directory of measured fits (empty: the synthetic set)"),
    FITS_PARAM,
    Param("time_limit", float, FIG78_TIME_LIMIT["standard"], "CP-SAT's wall-clock budget for the instance (s)",
          gt=0, le=MAX_TIME_LIMIT),
    Param("method", str, FIG78_METHOD, "the planner's method", choices=METHODS),
)
def multi_optimum(rho: float, windows: str, seed: int, costmodels: str, time_limit: float, method: str,
                  fits: str = "") -> pd.DataFrame:
    """Figs. 7 and 8's optimum: the 13 queries of ``intermittent-multi`` (fixed rate, δRSF = 50 %,
    the cost set's C_max) planned by CP-SAT within ``time_limit`` seconds, hinted with the best of the
    figures' heuristics (:func:`optimum_against`). A wall-clock limit: how far the solver gets,
    and so the status and gap, depends on the machine, and each row says where it stopped."""
    if not rho > 0:
        raise InputError("rho", f"must be > 0, got {rho}")
    qs = multi_instance(rho, windows, "FR", 0.5, seed, costmodels, fits=fits)
    return pd.DataFrame([optimum_against(qs, fig78_heuristics(qs), time_limit, method)])


# -- Algorithm 1 against the exact DP ----------------------------------------------------------


def random_single_query(seed: int, n_max: int, cost_kind: str) -> QuerySet:
    """A seeded random single query: N in [2, n_max], ws = 1, λ = 1, S in [0, 2] and R in [0.05, 1.5]
    on a 0.05 grid (or a concave two-segment cost, whose second slope R/3 is off that grid),
    AggCost none or 0.5 + 0.5n, and
    D = we + f·Cost(N) with f in [0.05, 1.2] (the feasibility edge, where Algorithm 1 errs),
    rounded down to the 0.05 grid (the set's ``time_unit``, so CP-SAT's optimum is exact)."""
    rng = np.random.default_rng([seed, 61])

    def grid(lo: float, hi: float) -> Fraction:
        return Fraction(int(rng.integers(round(lo * 20), round(hi * 20) + 1)), 20)

    n = int(rng.integers(2, n_max + 1))
    S, R = grid(0, 2), grid(0.05, 1.5)
    if cost_kind == "linear":
        cost: Any = LinearCost(S=S, R=R)
    else:
        knee = max(1, n // 3)
        cost = PiecewiseCost(S=S, points=((Fraction(0), Fraction(0)), (Fraction(knee), R * knee),
                                          (Fraction(knee + 1), R * knee + R / 3)))
    agg = AggCost(a0=Fraction(1, 2), a1=Fraction(1, 2)) if rng.random() < 0.5 else AggCost()
    arrivals = FixedRate(ws=Fraction(1), rate=Fraction(1), n=n)
    query = Query("q", arrivals, arrivals.we + Fraction(1), cost, agg)
    unit = Fraction(1, 20)
    deadline = math.floor((arrivals.we + grid(0.05, 1.2) * query.min_cost) / unit) * unit  # on the planner's grid
    return QuerySet(queries=(Query("q", arrivals, max(deadline, arrivals.we + unit), cost, agg),), time_unit=unit)


@experiment(
    "intermittent-alg1-loss",
    Param("seed", int, 0, "seed of the instance", ge=0, le=MAX_SEED),
    Param("n_max", int, 30, "largest N", ge=2, le=EXACT_MAX_TUPLES),  # the exact DP's default limit
    Param("cost_kind", str, "linear", "linear (S + R x) or concave (two-segment piecewise)", choices=COST_KINDS),
)
def alg1_loss(seed: int, n_max: int, cost_kind: str) -> pd.DataFrame:
    """Algorithm 1 against the exact DP on one seeded random single query (digest correction 1):
    its status and cost, the optimum's, the excess and whether its no-plan was false."""
    if n_max < 2:
        raise InputError("n_max", f"must be >= 2, got {n_max}")
    qs = random_single_query(seed, n_max, cost_kind)
    heuristic, optimum = algorithm1(qs), exact(qs)
    q = qs.queries[0]
    h_ok, o_ok = heuristic.status == "ok", optimum.status == "ok"
    return pd.DataFrame([{
        "N": q.n, "S": float(getattr(q.cost, "S", math.nan)), "R": float(getattr(q.cost, "R", math.nan)),
        "deadline": float(q.deadline), "slack": float(q.deadline - q.we - q.min_cost),
        "alg1_status": heuristic.status, "exact_status": optimum.status,
        "alg1_cost": float(heuristic.total_cost) if h_ok else math.nan,
        "exact_cost": float(optimum.total_cost) if o_ok else math.nan,
        "alg1_batches": int((heuristic.batches["kind"] == "batch").sum()),
        "exact_batches": int((optimum.batches["kind"] == "batch").sum()),
        "excess": float(heuristic.total_cost - optimum.total_cost) if h_ok and o_ok else math.nan,
        "false_no_plan": bool(not h_ok and o_ok),
        "alg1_violations": len(check_plan(qs, heuristic)), "exact_violations": len(check_plan(qs, optimum)),
    }])


# -- heuristics against the optimum -----------------------------------------------------------------


def random_a5_instance(n_queries: int, n: int, rho: float, seed: int) -> QuerySet:
    """A5 instance (digest §2, §7.4): ``n_queries`` queries of ``n`` tuples at λ = 1 from ws = 1,
    random linear costs (S in [0.5, 4] on a 0.1 grid, R in {0.1, 0.2, 0.3}), AggCost 0.5 + 0.5n,
    C_max = 2·S + the cost of N/4 tuples at the largest R, δRSF = 0.5, deadlines from A5 at rho.
    C_max and the deadlines are rounded down to the 0.1 grid (the set's ``time_unit``), so every
    number sits on the planner's grid and its optimum is the true optimum."""
    rng = np.random.default_rng([seed, 83])
    unit = Fraction(1, 10)
    queries = []
    arrivals = FixedRate(ws=Fraction(1), rate=Fraction(1), n=n)
    for k in range(n_queries):
        S = Fraction(int(rng.integers(5, 41)), 10)
        R = Fraction(int(rng.integers(1, 4)), 10)
        queries.append(Query(f"q{k + 1}", arrivals, arrivals.we + 1, LinearCost(S=S, R=R),
                             AggCost(a0=Fraction(1, 2), a1=Fraction(1, 2))))
    c_max = max(2 * q.cost.S + q.cost.R * Fraction(n, 4) for q in queries)  # type: ignore[attr-defined]
    qs = QuerySet(queries=tuple(queries), c_max=math.floor(c_max / unit) * unit, time_unit=unit)
    timed = with_deadlines(qs, exact_number(rho, "rho"), seed=seed)
    return timed.with_overrides(queries=tuple(
        Query(q.name, q.arrivals, max(math.floor(q.deadline / unit) * unit, q.we + unit), q.cost, q.agg_cost)
        for q in timed.queries))


@experiment(
    "intermittent-optimum",
    Param("n_queries", int, 3, "queries sharing the executor", ge=1, le=MAX_OPT_QUERIES),
    Param("N", int, 20, "tuples per window", ge=1, le=MAX_OPT_TUPLES),
    Param("rho", float, 0.4, "A5's deadline factor", gt=0),
    Param("seed", int, 0, "seed of the instance", ge=0, le=MAX_SEED),
    Param("deterministic_time", float, DETERMINISTIC_TIME["standard"], "CP-SAT's deterministic limit per phase",
          gt=0, le=MAX_DETERMINISTIC_TIME),
)
def optimum(n_queries: int, N: int, rho: float, seed: int, deterministic_time: float) -> pd.DataFrame:
    """Every heuristic (LLF/EDF/SJF/RR with MinBatch) against the CP-SAT optimum on one A5
    instance: a row per heuristic with its misses and cost beside the optimum's status, misses,
    cost, best bound and gap (one worker, deterministic limit: identical locally and on Spark)."""
    from staleness_lab.optimize.batch_plan import optimal_plan

    if n_queries < 1 or N < 1:
        raise InputError("n_queries" if n_queries < 1 else "N", "must be >= 1")
    qs = random_a5_instance(n_queries, N, rho, seed)
    plans = {policy: dispatch(qs, policy) for policy in POLICIES}
    best = min(plans.values(), key=lambda p: (p.misses, p.total_cost))
    opt = optimal_plan(qs, hint=best, workers=1, deterministic_time=deterministic_time,
                       max_terms=None)  # sized by the profile
    solver = opt.solver or {}
    cost_phase = next((p for p in solver.get("phases", [])
                       if p.get("phase") == "cost" and p.get("round") == solver.get("round")), {})
    opt_row = plan_row(qs, opt)
    rows = []
    for policy, plan in plans.items():
        row = plan_row(qs, plan)
        rows.append({
            "scheme": policy, **row,
            "opt_status": solver.get("status", opt.status), "opt_misses": opt_row["misses"],
            "opt_cost": opt_row["total_cost"], "opt_cost_bound": cost_phase.get("bound", math.nan),
            "opt_gap": cost_phase.get("gap", math.nan), "opt_K_bound": bool(solver.get("K_bound", False)),
            "opt_violations": opt_row["plan_violations"], "opt_on_grid": bool(solver.get("on_grid", False)),
            "cost_ratio": row["total_cost"] / opt_row["total_cost"] if opt.status == "ok" else math.nan,
        })
    return pd.DataFrame(rows)


# -- the figures' grids ----------------------------------------------------------------------------


def _seeds(profile: str) -> list[int]:
    return {"quick": [0], "standard": [0, 1, 2], "full": list(range(10))}[profile]


def _fig6_rows(profile: str) -> list[dict[str, Any]]:
    names = ["Q1", "Q3", "CQ4"] if profile == "quick" else list(paper_queries().names)
    return [{"query": q, "f": f, "scheme": scheme} for q in names for f in FIG6_FACTORS
            for scheme in ("algorithm1", "exact")]


def _fig7_rows(profile: str) -> list[dict[str, Any]]:
    rows = []
    for seed in _seeds(profile):
        for policy in POLICIES:
            rows.append({"policy": policy, "rho": 1.0, "windows": "random", "seed": seed})
            rows += [{"policy": policy, "rho": rho, "windows": "same", "seed": seed} for rho in FIG7_RHOS]
    return rows


def _fig8_rows(profile: str) -> list[dict[str, Any]]:
    return [{"policy": policy, "minbatch": minbatch, "rho": rho, "seed": seed}
            for seed in _seeds(profile) for policy in ("edf", "llf") for minbatch in (True, False)
            for rho in (1.0, *FIG7_RHOS)]


def _fig78_optimum_rows(profile: str) -> list[dict[str, Any]]:
    """The instances of Figs. 7 and 8 (Fig. 7's random-window ρ = 1, Fig. 8's same-window ρ = 1,
    and both figures' same-window ρ below), each once, for the seeds of :data:`FIG78_SEEDS`; the
    quick profile plans :data:`FIG78_QUICK`."""
    instances = [(1.0, "random"), (1.0, "same")] + [(rho, "same") for rho in FIG7_RHOS]
    if profile == "quick":
        instances = list(FIG78_QUICK)
    return [{"rho": rho, "windows": windows, "seed": seed, "time_limit": FIG78_TIME_LIMIT[profile],
             "method": FIG78_METHOD} for seed in FIG78_SEEDS[profile] for rho, windows in instances]


def _profile_rows(rho: float, delta_rsf: float) -> Callable[[str], list[dict[str, Any]]]:
    def rows(profile: str) -> list[dict[str, Any]]:
        return [{"policy": policy, "profile": rate, "rho": rho, "delta_rsf": delta_rsf, "seed": seed}
                for seed in _seeds(profile) for policy in POLICIES for rate in RATE_PROFILES]

    return rows


def _loss_rows(profile: str) -> list[dict[str, Any]]:
    count = {"quick": 40, "standard": 600, "full": 6000}[profile]
    return [{"seed": seed, "cost_kind": kind} for kind in ("linear", "concave") for seed in range(count)]


def _optimum_rows(profile: str) -> list[dict[str, Any]]:
    sizes = {"quick": [(2, 10)], "standard": [(2, 20), (3, 20), (4, 20)], "full": [(2, 20), (3, 20), (4, 20), (6, 30)]}
    seeds = {"quick": 2, "standard": 4, "full": 10}[profile]
    return [{"n_queries": k, "N": n, "rho": rho, "seed": seed, "deterministic_time": DETERMINISTIC_TIME[profile]}
            for k, n in sizes[profile] for rho in (1.0, 0.4, 0.2) for seed in range(seeds)]


def _costed(rows: Callable[[str], list[dict[str, Any]]]) -> Callable[..., list[dict[str, Any]]]:
    """The rows of a figure whose experiment prices plans with the paper's cost curves: each row
    names the measured fits in ``costmodels`` when given, and their digest (:func:`fits_of`);
    empty: the synthetic set."""

    def costed(profile: str, costmodels: str = "") -> list[dict[str, Any]]:
        if not costmodels:
            return rows(profile)
        fits = fits_of(costmodels)
        return [{**row, "costmodels": costmodels, "fits": fits} for row in rows(profile)]

    return costed


def _uncosted(rows: Callable[[str], list[dict[str, Any]]]) -> Callable[..., list[dict[str, Any]]]:
    """The rows of a figure on random instances, which carry their own costs: ``costmodels``
    (taken so that every figure runs with the same options) does not change them."""

    def uncosted(profile: str, costmodels: str = "") -> list[dict[str, Any]]:
        return rows(profile)

    return uncosted


#: The figures by name; ``rows`` take ``costmodels`` (:func:`grid`).
SWEEPS: dict[str, NamedSweep] = {
    f.name: f
    for f in [
        NamedSweep("fig6", "intermittent-fig6", "Fig. 6: one query alone, D = we + f·Cost(N), Algorithm 1 and the "
                   "exact optimum", "Every deadline is met; 2 batches for f < 1, except at 0.1D where Q3, Q9 and Q10 "
                   "need 3.",
                   _costed(_fig6_rows), curve="f"),
        NamedSweep("fig7", "intermittent-multi", "Fig. 7: 13 queries, δRSF = 50 %, C_max = 30 s, fixed rate",
                   "EDF and LLF miss only at 0.1D; SJF at 0.2D and 0.1D; RR at 0.4D, 0.2D and 0.1D; normalized cost "
                   "≈ 1.5; 0.1D is infeasible (the last batches need more than max D − we).",
                   _costed(_fig7_rows), curve="policy"),
        NamedSweep("fig8", "intermittent-multi", "Fig. 8: EDF and LLF without MinBatch",
                   "Without MinBatch both fail from 0.4D on and cost 10× (EDF) and 7× (LLF) the MinBatch schedules.",
                   _costed(_fig8_rows), curve="policy"),
        NamedSweep("fig78-optimum", "intermittent-multi-optimum", "Figs. 7 and 8: the CP-SAT optimum of each instance",
                   "The paper's one claim about the optimum: at 0.1D there is no feasible solution with δRSF = 50 % "
                   "(the last batches need about 105 s, the largest deadline leaves 94 s); elsewhere the optimum is "
                   "context for the heuristics' gap.", _costed(_fig78_optimum_rows), curve="rho"),
        NamedSweep("fig10", "intermittent-multi", "Fig. 10: rate profiles at 0.1D, δRSF = 100 %",
                   "EDF and LLF meet every deadline under FR and VR1-4; SJF and RR only under VR1 and VR2; normalized "
                   "cost ≈ 2, a little higher for VR3 and VR4.", _costed(_profile_rows(0.1, 1.0)), curve="profile"),
        NamedSweep("fig11", "intermittent-multi", "Fig. 11: rate profiles at 0.2D, δRSF = 50 %",
                   "EDF and LLF pass everything; SJF passes VR1-4 but fails FR; RR fails VR3 and VR4 (and FR).",
                   _costed(_profile_rows(0.2, 0.5)), curve="profile"),
        NamedSweep("alg1-loss", "intermittent-alg1-loss", "Algorithm 1 against the exact optimum",
                   "The paper claims Algorithm 1 optimal (C1); digest correction 1 refutes it.",
                   _uncosted(_loss_rows), curve="cost_kind"),
        NamedSweep("optimum", "intermittent-optimum", "Heuristics against the CP-SAT optimum",
                   "Not in the paper: the proven optimum judges LLF, EDF, SJF and RR.",
                   _uncosted(_optimum_rows), curve="scheme"),
    ]
}


def grid(name: str, profile: str, costmodels: str = "") -> list[dict[str, Any]]:
    """The explicit parameter rows of a figure at a profile (for ``run_grid``); ``costmodels``
    names measured fits for the figures priced with the paper's cost curves."""
    if name not in SWEEPS:
        raise InputError("figure", f"must be one of {', '.join(SWEEPS)}, got {name!r}")
    return SWEEPS[name].grid(profile, costmodels=costmodels)  # type: ignore[return-value]


def rate_profiles(n: int = 4500, seed: int = 0) -> pd.DataFrame:
    """Fig. 9: the cumulative arrivals of each rate profile, tidy (profile, time, files)."""
    frames = []
    for kind in RATE_PROFILES:
        arrivals = rate_profile(kind, n, rate=1, ws=1, seed=seed)
        ks = np.unique(np.linspace(1, n, 200).round().astype(int))
        frames.append(pd.DataFrame({"profile": kind, "time": [float(arrivals.input_time(int(k))) for k in ks],
                                    "files": ks}))
    return pd.concat(frames, ignore_index=True)


def single_query(n: int, S: Any, R: Any, deadline: Any, agg: AggCost | None = None,
                 time_unit: Fraction = Fraction(1, 10)) -> QuerySet:
    """The digest's single-query examples: query ``q`` of ``n`` tuples at λ = 1 from ws = 1 with
    ``Cost = S + R·x``, the deadline and AggCost given (numbers as written: ``"0.4"`` is 2/5)."""
    arrivals = FixedRate(ws=Fraction(1), rate=Fraction(1), n=n)
    query = Query("q", arrivals, Fraction(deadline), LinearCost(S=Fraction(S), R=Fraction(R)), agg or AggCost())
    return QuerySet(queries=(query,), time_unit=time_unit)


def counterexamples() -> dict[str, QuerySet]:
    """Digest correction 1's three counterexamples to Algorithm 1's optimality (ws = 1, λ = 1)."""

    def single(n: int, S: str, R: str, deadline: str, agg: AggCost | None = None) -> QuerySet:
        return single_query(n, S, R, deadline, agg, time_unit=Fraction(1, 1000))

    return {
        "N = 3, S = 0.5, R = 0.4, D = 4.25": single(3, "0.5", "0.4", "4.25"),
        "N = 2, S = 0.5, R = 0.75, D = 3.5": single(2, "0.5", "0.75", "3.5"),
        "N = 24, S = 0.8, R = 0.25, AggCost 0.5 + 0.5n, D = 27.468": single(
            24, "0.8", "0.25", "27.468", AggCost(a0=Fraction(1, 2), a1=Fraction(1, 2))),
    }


def describe_fits(costmodels: str) -> str:
    """What the measured fits in ``costmodels`` are, in one paragraph of Markdown: where and when
    they were measured (``measured_on``, ``spark_version``), the scale, and the range of S, R
    and the aggregation's line (:func:`fits_provenance`)."""
    about = fits_provenance(costmodels)

    def listed(field: str) -> str:
        values = sorted({str(v) for v in about[field] if str(v)})
        return ", ".join(values) or "not recorded"

    first = about.iloc[0]
    return (f"**The measured fits** (`{costmodels}`, reading *{fits_reading(costmodels)}*): the 13 queries calibrated "
            f"on Spark {listed('spark_version')} at SF {first['scale']:g} over {int(first['parts'])} parts, measured "
            f"on {listed('date')} on {listed('cpu')} ({listed('cores')} cores, {listed('memory_gib')} GiB, "
            f"{listed('os')}, Java {listed('java')}). Cost(x) = S + R·x per part with S from {about['S'].min():.3g} "
            f"to {about['S'].max():.3g} s and R from {about['R'].min() * 1000:.3g} to {about['R'].max() * 1000:.3g} ms "
            f"per part; AggCost(n) = a0 + a1·n measured up to {int(about['max_partials'].min())} partials. "
            "They measure that machine, not the paper's, whose curves are unpublished.")
