"""The release-time LP bound of the batch planner (``staleness_lab.optimize.release_lp``).

Its pricing finds the cheapest split of a query's tuples (against every split, enumerated); its
bounds lie at or below the proven optimum on random small sets (piecewise and table costs, one and
two executors, fixed and tabulated arrivals) for both phases; on an A5 set of 6 queries at ρ 0.4,
where the relaxed master's phase-1 bound is 0, it proves the one miss every plan found has, and the
planner's decomposition reports a phase it proves as proven (4 queries at ρ 0.2) and bounds by it
a cost phase its master leaves open (5 queries at ρ 0.4).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from staleness_lab.experiments.intermittent.sweeps import random_a5_instance
from staleness_lab.intermittent import QuerySet, check_plan
from staleness_lab.intermittent.schemes import best_heuristic
from staleness_lab.optimize import optimal_plan
from staleness_lab.optimize.batch_plan import _bound_grid
from staleness_lab.optimize.decomposition import QueryGrid
from staleness_lab.optimize.release_lp import _price, agg_minorant, release_bound

from tests.intermittent.test_single import compositions
from tests.optimize.test_batch_decomposition import query_sets


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 9), min_size=n, max_size=n),
    st.lists(st.integers(0, 50), min_size=n + 1, max_size=n + 1),
    st.integers(0, 20), st.integers(0, 6), st.integers(-6, 6), st.integers(-4, 4))))
# a falling minorant (agg = [0, 0, 5, 0, 0] gives 15 - 5n): the best split is worth less than 0
@example(([0, 0, 0, 10], [1] * 5, 1, 0, 15, -5))
def test_the_pricing_finds_the_cheapest_split(case) -> None:
    steps, weight, agg_weight, agg1, alpha, beta = case
    dur = np.array([0] + list(itertools.accumulate(steps)), dtype=np.int64)  # durations never fall
    weight = np.array(weight, dtype=np.int64)
    n = len(dur) - 1

    def value(sizes: list[int]) -> int:
        ends = itertools.accumulate(sizes)
        agg = agg1 if len(sizes) == 1 else alpha + beta * len(sizes)
        return sum(int(dur[s]) * int(weight[e]) for s, e in zip(sizes, ends)) + agg * agg_weight

    best, sizes = _price(dur, weight, agg_weight, agg1, alpha, beta)
    assert best == min(value(list(s)) for s in compositions(n))
    assert sum(sizes) == n and value(list(sizes)) == best


@given(st.lists(st.integers(-4, 4), min_size=1, max_size=9), st.integers(0, 9))
def test_the_aggregation_minorant_lies_below_it_and_meets_it_at_two(steps: list[int], start: int) -> None:
    agg = [0, 0] + list(itertools.accumulate([start] + steps))
    alpha, beta = agg_minorant(agg)
    assert alpha + 2 * beta == agg[2]
    assert all(alpha + beta * n <= agg[n] for n in range(2, len(agg)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query_sets())
def test_both_bounds_lie_at_or_below_the_proven_optimum(qs: QuerySet) -> None:
    plan = optimal_plan(qs, time_limit=20, method="monolithic")
    if plan.solver["status"] != "optimal":
        return   # nothing proven to compare with (rare at these sizes)
    misses, cost = plan.misses, plan.total_cost
    bounds = _bound_grid(qs, "misses", [])
    found = release_bound(bounds.grids, qs.executors, phase="misses")
    assert found.bound <= misses
    at_cost = release_bound(bounds.grids, qs.executors, phase="cost", misses=misses, floors=bounds.floors)
    assert at_cost.bound * bounds.unit <= cost


def test_durations_too_long_for_a_certificate_give_the_trivial_bound_not_an_error() -> None:
    # 10^11 grid units a batch: the Lagrangian's scaled sums would pass int64
    grids = [QueryGrid(name=f"q{k}", n=2, dur=[0, 10**11, 2 * 10**11], agg=[0, 0, 1], release=[0, 0, 1],
                       deadline=10**11) for k in range(2)]
    for phase in ("misses", "cost"):
        found = release_bound(grids, 1, phase=phase, misses=1, floors=[2 * 10**11] * 2)
        assert found.bound == 0 and not found.converged


def test_on_six_a5_queries_it_proves_a_miss_the_time_free_bound_does_not_see() -> None:
    qs = random_a5_instance(6, 100, 0.4, 0)
    bounds = _bound_grid(qs, "misses", [])
    assert bounds.value1 == 0          # the time-free bound sees no miss
    found = release_bound(bounds.grids, qs.executors, phase="misses")
    assert found.converged and found.bound == 1 == math.ceil(found.lp)
    at_cost = release_bound(bounds.grids, qs.executors, phase="cost", misses=1, floors=bounds.floors)
    assert at_cost.converged and at_cost.bound == math.ceil(at_cost.lp) == 1393     # 139.3 s
    assert at_cost.bound > sum(bounds.floors)   # above every query's cheapest split


def test_the_decomposition_reports_the_miss_it_proves() -> None:
    # 4 A5 queries at ρ 0.2: at this deterministic budget the master's phase 1 is not solved, the
    # heuristic misses 2, the plan 1, and the release LP proves 1 (and bounds its cost)
    qs = random_a5_instance(4, 100, 0.2, 0)
    hint = best_heuristic(qs)
    plan = optimal_plan(qs, deterministic_time=0.2, method="decomposition", hint=hint)
    misses, cost = plan.solver["phases"]
    assert (hint.misses, plan.misses) == (2, 1)
    assert misses["status"] == "optimal" and misses["bound"] == 1 and plan.solver["deadlines"] == "infeasible"
    lp = {s["phase"]: s for s in plan.solver["stages"] if s["stage"] == "release LP"}
    assert lp["misses"]["bound"] == 1 and lp["cost"]["bound"] * 0.1 <= cost["bound"] + 1e-9 <= cost["objective"] + 1e-9
    assert not check_plan(qs, plan)


def test_the_decomposition_bounds_the_cost_of_a_plan_on_time_by_the_lp_where_the_master_leaves_it_open() -> None:
    # 5 A5 queries at ρ 0.4: the split search puts every query on time (phase 1 proven at 0), and
    # the master's cost bound stays under the LP's 122.8 s at this budget; the misses are settled,
    # so only the LP's cost phase runs, and it is the one solved for the start's choice of columns
    qs = random_a5_instance(5, 100, 0.4, 0)
    plan = optimal_plan(qs, deterministic_time=0.2, method="decomposition", hint=best_heuristic(qs))
    misses, cost = plan.solver["phases"]
    assert plan.misses == 0 and misses["status"] == "optimal"
    lp = [s for s in plan.solver["stages"] if s["stage"] == "release LP"]
    assert [s["phase"] for s in lp] == ["cost"] and lp[0]["converged"]
    assert lp[0]["bound"] == 1228 and cost["bound"] == 122.8 <= cost["objective"]     # grid units of 0.1 s
    start_lp = plan.solver["start_columns"]
    assert lp[0]["served_again"] and lp[0]["seconds"] == 0.0 and start_lp["bound"] == 1228 and start_lp["seconds"] > 0
    assert not check_plan(qs, plan)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query_sets())
def test_the_slot_model_from_the_lps_misses_agrees_with_the_slot_model_alone(qs: QuerySet) -> None:
    """``auto`` on shared executors starts the slot model from the misses the release LP proves
    (``batch_plan._misses_floor``): where it and the plain slot model (``monolithic``, the
    reference) both prove an optimum, they are the same misses and cost; its plan is valid, its
    bounds lie below its values, and it is never worse than the best heuristic."""
    hint = best_heuristic(qs)
    mine = optimal_plan(qs, hint=hint, time_limit=5.0, workers=1)
    assert mine.status == "ok" and check_plan(qs, mine) == []
    assert (mine.misses, mine.total_cost) <= (hint.misses, hint.total_cost)
    for phase in mine.solver["phases"]:
        assert phase["bound"] is None or phase["bound"] <= phase["objective"] + 1e-9
    floor = mine.solver.get("release_lp")
    if floor is not None:   # it ran: queries share an executor and the hint misses
        assert len(qs.queries) > qs.executors and hint.misses > 0 and floor["bound"] <= mine.misses
    reference = optimal_plan(qs, hint=hint, method="monolithic", time_limit=5.0, workers=1)
    assert "release_lp" not in reference.solver
    if mine.solver["status"] == "optimal" and reference.solver["status"] == "optimal":
        assert (mine.misses, mine.total_cost) == (reference.misses, reference.total_cost)


def test_four_a5_queries_at_rho_02_are_proven_once_the_lp_proves_their_miss() -> None:
    """The slot model alone proves no miss on this set (its phase-1 bound stays 0 for the whole
    limit; the K cap then binds too, since a plan that misses is not certified by its cost); the
    release LP proves the one miss, and the cost phase at it is certified by cost alone."""
    qs = random_a5_instance(4, 100, 0.2, 0)
    hint = best_heuristic(qs)
    alone = optimal_plan(qs, hint=hint, deterministic_time=0.5, method="monolithic")
    assert alone.solver["status"] != "optimal" and alone.solver["phases"][0]["bound"] == 0
    plan = optimal_plan(qs, hint=hint, deterministic_time=0.5)
    misses, cost = plan.solver["phases"][-2:]   # the last round's (a K doubled first is re-solved)
    assert plan.solver["status"] == "optimal" and plan.solver["deadlines"] == "infeasible"
    assert plan.solver["release_lp"]["bound"] == misses["bound"] == misses["objective"] == plan.misses == 1
    assert cost["status"] == "optimal" and not plan.solver["K_bound"]
    assert "proven by the release-time LP" in plan.reason
    assert (plan.misses, plan.total_cost) < (hint.misses, hint.total_cost) and not check_plan(qs, plan)
