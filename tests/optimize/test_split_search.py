"""The split-form search (:mod:`staleness_lab.optimize.split_search`), the batch planner's plan
for queries sharing one executor.

Its plan passes ``check_plan`` on random sets of every cost kind and arrival profile (windows
that end apart included, where the split is only a list-scheduling rule), for the fewest misses
and for the least tardiness, and the planner started from it is never worse. On the A5 set where the
slot model kept one miss for 120 s, it finds every query on time, so phase 1 is proven at once;
on 8 queries at ρ = 0.2 its misses meet the release-time LP's bound, which then bounds the cost
phase too.
"""

from __future__ import annotations

from fractions import Fraction
from fractions import Fraction as F

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from staleness_lab.experiments.intermittent.sweeps import random_a5_instance
from staleness_lab.intermittent import (
    AggCost, BatchPlan, FixedRate, LinearCost, PiecewiseCost, Query, QuerySet, StepProfile, check_plan,
)
from staleness_lab.intermittent.schemes import best_heuristic
from staleness_lab.optimize import optimal_plan
from staleness_lab.optimize.batch_plan import split_plan, split_tables
from staleness_lab.optimize.split_search import search

from tests.optimize.test_batch_decomposition import query_sets


def _one_executor(qs: QuerySet) -> QuerySet:
    return qs.with_overrides(executors=1)


#: Found in a fresh clone: q0 was given up, yet its one batch at the end met its deadline; the
#: search counted it a miss while the plan had none (given-up queries are now scheduled, not assumed late).
GIVEN_UP_BUT_ON_TIME = QuerySet(
    queries=(Query("q0", StepProfile(times=(F(1),), counts=(2,)), F(8), LinearCost(S=F(0), R=F(1)), AggCost()),
             Query("q1", FixedRate(ws=F(2), rate=F(1), n=1), F(6), LinearCost(S=F(0), R=F(1)), AggCost()),
             Query("q2", StepProfile(times=(F(1),), counts=(1,)), F(5),
                   PiecewiseCost(S=F(1), points=((F(0), F(0)), (F(2), F(4)), (F(3), F(5)))), AggCost())),
    executors=1, delta_rsf=F(1, 2), c_max=F(1), time_unit=F(1))


def _key(plan: BatchPlan, objective: str) -> tuple[Fraction, Fraction]:
    return (Fraction(plan.misses) if objective == "misses" else plan.total_tardiness), plan.total_cost


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query_sets(), st.sampled_from(["misses", "tardiness"]))
@example(GIVEN_UP_BUT_ON_TIME, "misses")
def test_the_split_plan_is_feasible_and_the_planner_from_it_is_never_worse(qs: QuerySet, objective: str) -> None:
    qs = _one_executor(qs)
    found = split_plan(qs, None, objective)
    assert found.status == "ok" and check_plan(qs, found) == []
    assert sorted({s.query for s in found.steps}) == sorted(qs.names)
    # the compiled evaluation the search ranks by is the plan's own: its misses and grid cost
    answer = search(split_tables(qs), give_up=objective == "misses")
    assert answer.misses == found.misses and answer.cost * qs.time_unit == found.total_cost
    if objective == "tardiness":
        assert all(answer.kept)
    hint = best_heuristic(qs)
    better = split_plan(qs, hint, objective)
    assert _key(better, objective) == min(_key(found, objective), _key(hint, objective))
    if len(qs.queries) >= 2:
        plan = optimal_plan(qs, hint=hint, objective=objective, time_limit=5.0, workers=1)
        assert plan.status == "ok" and check_plan(qs, plan) == []
        assert _key(plan, objective) <= _key(better, objective)


def test_five_a5_queries_at_rho_04_are_all_on_time_and_phase_1_is_proven() -> None:
    """Seed 0: the best heuristic misses 2 deadlines and the slot model, hinted with it, stayed
    at 1 miss for 120 s; every query can be on time."""
    qs = random_a5_instance(5, 100, 0.4, 0)
    hint = best_heuristic(qs)
    assert hint.misses == 2
    found = split_plan(qs, hint)
    assert found.misses == 0 and check_plan(qs, found) == []
    plan = optimal_plan(qs, hint=hint, workers=1, deterministic_time=2.0)
    misses = plan.solver["phases"][0]
    assert (misses["phase"], misses["status"], misses["objective"], misses["bound"]) == ("misses", "optimal", 0, 0)
    assert plan.misses == 0 and plan.total_cost <= found.total_cost and plan.solver["start"] == "split search"


def test_the_search_is_deterministic() -> None:
    qs = random_a5_instance(6, 100, 0.2, 1)
    first, second = split_plan(qs, None), split_plan(qs, None)
    assert first.steps == second.steps and first.misses >= 1


def test_eight_a5_queries_at_rho_02_have_their_fewest_misses_proven() -> None:
    """The split search's plan misses 3 deadlines (the best heuristic 5) and the release-time LP
    proves 3 unavoidable, so phase 1 is proven at a size where the slot model alone proved none."""
    qs = random_a5_instance(8, 100, 0.2, 0)
    hint = best_heuristic(qs)
    assert hint.misses == 5
    plan = optimal_plan(qs, hint=hint, workers=1, deterministic_time=0.5)
    misses = [p for p in plan.solver["phases"] if p["phase"] == "misses"][-1]
    assert (misses["status"], misses["objective"], misses["bound"]) == ("optimal", 3, 3)
    assert plan.solver["release_lp"]["bound"] == 3 and plan.misses == 3 and check_plan(qs, plan) == []
    # the cost phase's bound is the LP's least cost at 3 misses, far above the slot model's own
    cost = [p for p in plan.solver["phases"] if p["phase"] == "cost"][-1]
    lp = plan.solver["release_lp_cost"]["bound"] * float(qs.time_unit)
    assert cost["status"] == "feasible" and cost["bound_by"] == "release LP"
    assert cost["bound"] == pytest.approx(lp) and 0.9 * cost["objective"] < cost["bound"] <= cost["objective"]
    assert cost["gap"] == pytest.approx((cost["objective"] - cost["bound"]) / cost["objective"])
