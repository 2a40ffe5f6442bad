"""The CP-SAT batch planner (digest §7 and corrections 1-2; checks 4 and 10 as corrected).

Worked examples: E5 (ρ = 0.4: 0 misses, cost 76.0, batches A 2 / B 1 / C 2; ρ = 1: 67.0), E1 (batch
counts with S = 0), E3 (totals 22 / 25.5 / 28 / 28; f = 0.2 is "unknown" under a small K and a proven
miss only with K = N). Properties: CP-SAT equals the exact DP on random single queries on the grid;
it never does worse than any dispatcher (misses, then cost) on small multi-query sets; m = 2 never
misses more than m = 1; deterministic mode reproduces; a hint bounds a FEASIBLE result.
"""

from __future__ import annotations

import time
from dataclasses import replace
from fractions import Fraction as F

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from staleness_lab.intermittent import (
    AggCost, BatchPlan, FixedRate, LinearCost, Query, QuerySet, StepProfile, TableCost, check_plan, load_queryset,
)
from staleness_lab.intermittent.deadlines import with_deadlines
from staleness_lab.intermittent.dispatch import POLICIES, dispatch
from staleness_lab.intermittent.single import exact
from staleness_lab.optimize import optimal_plan
from staleness_lab.optimize.batch_plan import split_plan

E5 = "data/intermittent/e5.yaml"
PHASE_KEYS = {"phase", "status", "objective", "bound", "gap", "seconds", "workers", "time_limit"}
SOLVER_KEYS = {"phases", "K", "K_bound", "time_unit", "on_grid", "status", "deadlines"}


def _counts(plan: BatchPlan) -> dict[str, int]:
    return dict(zip(plan.queries["query"], plan.queries["n_batches"]))


def _sound(qs: QuerySet, plan: BatchPlan) -> None:
    """Every returned plan passes check_plan and carries the full solver report."""
    assert plan.scheme == "optimal"
    assert check_plan(qs, plan) == []
    report = plan.solver
    assert report is not None and SOLVER_KEYS <= set(report)
    assert set(report["K"]) == set(qs.names)
    assert report["time_unit"] == float(qs.time_unit)
    assert report["phases"] and all(PHASE_KEYS <= set(p) for p in report["phases"])
    assert {p["phase"] for p in report["phases"]} <= {"misses", "tardiness", "cost"}
    for p in report["phases"]:
        if p["objective"] is not None:
            assert p["gap"] == pytest.approx((p["objective"] - p["bound"]) / max(1.0, abs(p["objective"])))
    if plan.status == "ok":
        assert report["status"] in ("optimal", "feasible")


def _single(n: int, deadline: F, cost, *, ws: F = F(1), rate: F = F(1), agg: AggCost = AggCost(),
            unit: F = F(1, 10), arrivals=None, delta: F = F(1, 2)) -> QuerySet:
    arrivals = arrivals or FixedRate(ws=ws, rate=rate, n=n)
    return QuerySet(queries=(Query("q", arrivals, deadline, cost, agg),), time_unit=unit, delta_rsf=delta)


def _with(qs: QuerySet, deadlines) -> QuerySet:
    return qs.with_overrides(queries=tuple(replace(q, deadline=F(d)) for q, d in zip(qs.queries, deadlines)))


# -- E5 (digest §4, check 10) ------------------------------------------------------------------


def test_e5_at_rho_04_is_proven_optimal_with_cost_76_in_under_10_s() -> None:
    qs = load_queryset(E5)
    began = time.perf_counter()
    plan = optimal_plan(qs, time_limit=10.0, workers=2, method="monolithic")
    assert time.perf_counter() - began < 10.0
    _sound(qs, plan)
    assert plan.status == "ok" and plan.solver["status"] == "optimal"
    assert plan.solver["phases"][0]["status"] == "optimal"
    assert plan.misses == 0 and plan.solver["deadlines"] == "met"
    assert plan.total_cost == F(76)
    assert _counts(plan) == {"A": 2, "B": 1, "C": 2}
    assert plan.solver["on_grid"] is True and plan.solver["K_bound"] is False
    # never costlier than the heuristics (102.5 for every MinBatch policy)
    for policy in POLICIES:
        assert plan.total_cost <= dispatch(qs, policy).total_cost


def test_e5_at_rho_1_costs_67_one_batch_each() -> None:
    qs = _with(load_queryset(E5), (132, 143, 177))
    plan = optimal_plan(qs, method="monolithic")
    _sound(qs, plan)
    assert plan.solver["status"] == "optimal" and plan.misses == 0
    assert plan.total_cost == F(67)
    assert _counts(plan) == {"A": 1, "B": 1, "C": 1}
    assert not any(plan.batches["kind"] == "aggregate")


def test_e5_with_minbatch_sizes_costs_the_heuristics_and_rho_02_misses_provably() -> None:
    """fixed_sizes = MinBatch (20/25/20): the cost is fixed at Σ Tot = 102.5, the heuristics' cost;
    at ρ = 0.2 C7 says no MinBatch plan meets every deadline, and CP-SAT proves a miss."""
    qs = load_queryset(E5)
    sizes = {"A": 20, "B": 25, "C": 20}
    plan = optimal_plan(qs, fixed_sizes=sizes, method="monolithic")
    _sound(qs, plan)
    assert plan.misses == 0 and plan.total_cost == F(205, 2) and plan.minbatch == sizes
    assert _counts(plan) == {"A": 5, "B": 4, "C": 5}
    assert plan.solver["K"] == {"A": 5, "B": 4, "C": 5} and plan.solver["K_bound"] is False
    tight = with_deadlines(qs, F(1, 5), order=[0, 1, 2])
    plan = optimal_plan(tight, fixed_sizes=sizes, method="monolithic")
    _sound(tight, plan)
    assert plan.misses >= 1
    if plan.solver["phases"][0]["status"] == "optimal":
        assert plan.solver["deadlines"] == "infeasible"
    for policy in POLICIES:
        assert plan.misses <= dispatch(tight, policy).misses


def test_e5_on_two_executors_is_sound_and_misses_no_more() -> None:
    qs = with_deadlines(load_queryset(E5), F(1, 5), order=[0, 1, 2])
    one = optimal_plan(qs, deterministic_time=0.05, method="monolithic")
    two_qs = qs.with_overrides(executors=2)
    two = optimal_plan(two_qs, hint=one, time_limit=5.0, method="monolithic")
    _sound(two_qs, two)
    assert set(two.batches["executor"]) <= {0, 1}
    assert two.misses <= one.misses
    assert two.misses == 0 and two.solver["status"] == "optimal"


# -- E1 and E3 (digest §4) ----------------------------------------------------------------------


@pytest.mark.parametrize(("deadline", "batches"), [(16, 1), (15, 1), (12, 2), (11, 3)])
def test_e1_fewest_batches_at_cost_5(deadline: int, batches: int) -> None:
    qs = _single(10, F(deadline), LinearCost(S=F(0), R=F(1, 2)), unit=F(1, 2))
    plan = optimal_plan(qs, method="monolithic")
    _sound(qs, plan)
    assert plan.solver["status"] == "optimal" and plan.misses == 0
    assert plan.total_cost == F(5)
    assert _counts(plan) == {"q": batches}


def _e3(f: str) -> QuerySet:
    return _single(100, 100 + F(f) * 22, LinearCost(S=F(2), R=F(1, 5)), agg=AggCost(a0=F(1, 2), a1=F(1, 2)))


@pytest.mark.parametrize(("f", "total", "batches"), [("1", 22, 1), ("0.5", F(51, 2), 2), ("0.3", 28, 3), ("0.25", 28, 3)])
def test_e3_totals(f: str, total, batches: int) -> None:
    qs = _e3(f)
    plan = optimal_plan(qs, method="monolithic")
    _sound(qs, plan)
    assert plan.solver["status"] == "optimal" and plan.misses == 0
    assert plan.total_cost == F(total)
    assert _counts(plan) == {"q": batches}
    assert plan.total_cost == exact(qs).total_cost


def test_e3_at_f_02_is_unknown_under_a_small_k_and_proven_only_with_k_equal_n() -> None:
    qs = _e3("0.2")
    capped = optimal_plan(qs, max_slots=5, method="monolithic")
    _sound(qs, capped)
    assert capped.status == "ok" and capped.misses == 1
    assert capped.solver["K"] == {"q": 5} and capped.solver["K_bound"] is True
    assert capped.solver["deadlines"] == "unknown" and capped.solver["status"] == "feasible"
    full = optimal_plan(qs, time_limit=20.0, method="monolithic")
    _sound(qs, full)
    assert full.misses == 1
    if full.solver["phases"][-2]["status"] == "optimal" and full.solver["K"] == {"q": 100}:
        assert full.solver["deadlines"] == "infeasible"
    else:
        assert full.solver["deadlines"] == "unknown"
    assert exact(qs).status == "infeasible"


# -- infeasible: a proof only with K = N on the grid --------------------------------------------


def test_infeasible_is_proven_only_for_exact_slot_counts_on_the_grid() -> None:
    # C capped at 20-tuple batches costs 53 > (1 + 0.5)·34 = 51: no plan (slot count exact)
    qs = load_queryset(E5)
    plan = optimal_plan(qs, fixed_sizes={"C": 20}, cost_cap=True, method="monolithic")
    _sound(qs, plan)
    assert plan.status == "infeasible" and plan.steps == ()
    # off the grid: Cost(N) = 5.05 rounds up to 5.1 > the cap 5.05 (δ = 0): unknown, not infeasible
    off = _single(10, F(20), LinearCost(S=F(1, 20), R=F(1, 2)), delta=F(0))
    plan = optimal_plan(off, cost_cap=True, method="monolithic")
    _sound(off, plan)
    assert plan.status == "unknown" and plan.solver["on_grid"] is False
    # the cap holds at E5's optimum (76 meets every (1 + δ)·Cost(N))
    plan = optimal_plan(qs, cost_cap=True, method="monolithic")
    assert plan.solver["status"] == "optimal" and plan.total_cost == F(76)


# -- reproducibility and hints ---------------------------------------------------------------


def _strip(report: dict) -> dict:
    out = dict(report)
    out["phases"] = [{k: v for k, v in p.items() if k not in ("seconds", "time_limit")} for p in report["phases"]]
    if "start_columns" in out:   # the release LP's and the choice's wall-clock seconds
        columns = {k: v for k, v in out["start_columns"].items() if k != "seconds"}
        out["start_columns"] = {**columns, "choice": {k: v for k, v in columns["choice"].items() if k != "seconds"}}
    return out


def test_deterministic_time_gives_identical_plans() -> None:
    qs = with_deadlines(load_queryset(E5), F(1, 5), order=[0, 1, 2])
    first = optimal_plan(qs, deterministic_time=0.05, method="monolithic")
    second = optimal_plan(qs, deterministic_time=0.05, method="monolithic")
    _sound(qs, first)
    assert first.steps == second.steps
    assert _strip(first.solver) == _strip(second.solver)
    assert all(p["deterministic_time"] == 0.05 for p in first.solver["phases"])


@pytest.mark.parametrize("rho", ["0.2", "0.4"])
def test_a_feasible_result_is_never_worse_than_its_hint(rho: str) -> None:
    qs = with_deadlines(load_queryset(E5), F(rho), order=[0, 1, 2])
    heuristics = [dispatch(qs, policy) for policy in POLICIES]
    best = min(heuristics, key=lambda p: (p.misses, p.total_cost))
    plan = optimal_plan(qs, hint=best, deterministic_time=0.01, method="monolithic")
    _sound(qs, plan)
    assert (plan.misses, plan.total_cost) <= (best.misses, best.total_cost)
    start = split_plan(qs, best)   # one executor: the model starts from the better of it and the hint
    assert plan.solver["phases"][0]["K"] == {q: n + 3 for q, n in _counts(start).items()}  # the first round's


def test_tardiness_objective_never_worse_than_its_hint() -> None:
    qs = with_deadlines(load_queryset(E5), F(1, 5), order=[0, 1, 2])
    edf = dispatch(qs, "edf")  # 1 miss, tardiness 4.6
    plan = optimal_plan(qs, objective="tardiness", hint=edf, deterministic_time=0.1, method="monolithic")
    _sound(qs, plan)
    assert [p["phase"] for p in plan.solver["phases"]][:2] == ["tardiness", "cost"]
    assert plan.total_tardiness <= edf.total_tardiness
    assert plan.solver["deadlines"] in ("met", "unknown")


# -- properties ------------------------------------------------------------------------------


@st.composite
def single_queries(draw) -> QuerySet:
    """One query with every time and cost on the grid of ``unit`` (0.5 or 1), N <= 8."""
    unit = draw(st.sampled_from([F(1, 2), F(1)]))
    n = draw(st.integers(1, 8))
    ws = unit * draw(st.integers(0, 4))
    if draw(st.booleans()):
        arrivals = FixedRate(ws=ws, rate=1 / (unit * draw(st.integers(1, 2))), n=n)
    else:
        steps = draw(st.integers(1, n))
        counts = sorted(draw(st.sets(st.integers(1, n - 1), min_size=steps - 1, max_size=steps - 1))) + [n] if n > 1 else [1]
        gaps = draw(st.lists(st.integers(1, 3), min_size=len(counts), max_size=len(counts)))
        times, t = [], ws
        for k, gap in enumerate(gaps):
            t = t + (0 if k == 0 else unit * gap)
            times.append(t)
        arrivals = StepProfile(times=tuple(times), counts=tuple(counts))
    if draw(st.booleans()):
        s, r = draw(st.integers(0, 4)), draw(st.integers(0, 3))
        if s + r == 0:
            r = 1
        cost = LinearCost(S=unit * s, R=unit * r)
    else:
        steps = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        values, v = [], unit * draw(st.integers(1, 3))
        for step in steps:
            v += unit * step if values else 0
            values.append(v)
        cost = TableCost(values=tuple(values))
    agg = draw(st.sampled_from(["none", "linear"]))
    agg_cost = AggCost() if agg == "none" else AggCost(a0=unit * draw(st.integers(0, 2)), a1=unit * draw(st.integers(0, 2)))
    deadline = arrivals.we + unit * draw(st.integers(1, 3 * n + 6))
    return QuerySet(queries=(Query("q", arrivals, deadline, cost, agg_cost),), time_unit=unit)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(single_queries())
def test_cp_sat_equals_the_exact_dp_on_single_queries(qs: QuerySet) -> None:
    plan = optimal_plan(qs, time_limit=10.0, method="monolithic")
    _sound(qs, plan)
    assert plan.solver["on_grid"] is True
    assert plan.solver["status"] == "optimal"
    reference = exact(qs)
    if reference.status == "ok":
        event("feasible")
        assert plan.misses == 0 and plan.solver["deadlines"] == "met"
        assert plan.total_cost == reference.total_cost
        assert _counts(plan) == _counts(reference)
    else:
        event("infeasible")
        assert reference.status == "infeasible"
        assert plan.misses == 1 and plan.solver["deadlines"] == "infeasible"


@st.composite
def multi_queries(draw) -> QuerySet:
    """2-3 queries, N <= 10, one tuple per second, costs and deadlines on the 0.5 grid."""
    unit = F(1, 2)
    queries = []
    for k in range(draw(st.integers(2, 3))):
        n = draw(st.integers(2, 10))
        arrivals = FixedRate(ws=F(draw(st.integers(0, 4))), rate=F(1), n=n)
        cost = LinearCost(S=unit * draw(st.integers(1, 4)), R=unit * draw(st.integers(0, 2)))
        agg = AggCost(a0=unit * draw(st.integers(0, 2)), a1=unit * draw(st.integers(0, 1)))
        deadline = arrivals.we + unit * draw(st.integers(1, 16))
        queries.append(Query(f"q{k}", arrivals, deadline, cost, agg))
    return QuerySet(queries=tuple(queries), time_unit=unit, c_max=F(draw(st.integers(2, 6))))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(multi_queries())
def test_cp_sat_beats_every_dispatcher_and_two_executors_never_miss_more(qs: QuerySet) -> None:
    heuristics = {policy: dispatch(qs, policy) for policy in POLICIES}
    best = min(heuristics.values(), key=lambda p: (p.misses, p.total_cost))
    plan = optimal_plan(qs, hint=best, time_limit=5.0, method="monolithic")
    _sound(qs, plan)
    # never worse than the hint, proven or not
    assert (plan.misses, plan.total_cost) <= (best.misses, best.total_cost)
    if plan.solver["phases"][0]["status"] == "optimal":
        event("phase 1 optimal")
        for policy, heuristic in heuristics.items():
            assert plan.misses <= heuristic.misses, policy
            if plan.misses == heuristic.misses and plan.solver["phases"][1]["status"] == "optimal":
                assert plan.total_cost <= heuristic.total_cost, policy
    two_qs = qs.with_overrides(executors=2)
    two = optimal_plan(two_qs, hint=plan, time_limit=5.0, method="monolithic")
    _sound(two_qs, two)
    assert two.misses <= plan.misses


def test_an_off_grid_hint_is_snapped_onto_the_grid_and_never_lost() -> None:
    """Algorithm 1's plan of an off-grid query (costs in thousandths on a 0.1 grid) still seeds
    CP-SAT: its starts are rounded up and pushed past the rounded-up steps before them. Algorithm 1
    ends exactly at the deadline, so rounded up onto the grid it is late by a fraction of a unit;
    at the true costs it is on time, so a budget too small to find anything returns the hint
    itself (unproven), never its late snapped copy; with time to search, CP-SAT meets it too."""
    from staleness_lab.intermittent.single import algorithm1

    qs = _single(60, F(66), LinearCost(S=F("1.237"), R=F("0.113")), agg=AggCost(a0=F("0.31"), a1=F("0.07")))
    hint = algorithm1(qs)
    assert hint.status == "ok" and hint.misses == 0 and len(hint.steps) == 3
    rushed = optimal_plan(qs, hint=hint, workers=1, deterministic_time=0.001, method="monolithic")
    assert rushed.status == "ok" and rushed.solver["status"] == "feasible" and rushed.misses == 0
    assert rushed.steps == hint.steps
    assert check_plan(qs, rushed) == [] and rushed.solver["on_grid"] is False
    searched = optimal_plan(qs, hint=hint, workers=1, deterministic_time=2.0, method="monolithic")
    assert searched.status == "ok" and searched.misses == 0 and check_plan(qs, searched) == []
