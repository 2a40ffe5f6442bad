"""The choice among the release LP's columns (``staleness_lab.optimize.pool_master``), the batch
planner's start on one executor.

On random sets of one window (every last tuple at the same time: the rows are then exactly the
split form's list schedule), every cost kind, the choice realized is a valid plan whose kept
queries are all on time at the model's own cost, and it is never worse than the split search's
plan it starts from. On the 13-query set at ρ = 0.4 it costs 656.9 s where the split search's plan
costs 662.4 s.
"""

from __future__ import annotations

import sys
from fractions import Fraction as F
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from staleness_lab.intermittent import AggCost, LinearCost, Query, QuerySet, StepProfile, check_plan
from staleness_lab.optimize.batch_plan import (_BoundGrids, _Budget, _bound_grid, _column_plan, _off_grid, _sizes, realize,
                                               split_plan, split_tables)
from staleness_lab.optimize.pool_master import pool_model
from staleness_lab.optimize.release_lp import release_bound

from tests.optimize.test_batch_decomposition import _cost

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_planner import multi_instance  # noqa: E402


@st.composite
def one_window_sets(draw) -> QuerySet:
    """Two to four queries of N <= 6 on one executor, each last tuple at the same time."""
    last = draw(st.integers(3, 8))
    queries = []
    for k in range(draw(st.integers(2, 4))):
        n = draw(st.integers(1, 6))
        steps = sorted(draw(st.sets(st.integers(1, n - 1), max_size=min(n - 1, last - 1)))) if n > 1 else []
        times = sorted(draw(st.sets(st.integers(1, last - 1), min_size=len(steps), max_size=len(steps))))
        arrivals = StepProfile(times=tuple(F(t) for t in [*times, last]), counts=(*steps, n))
        agg = AggCost(a0=F(draw(st.integers(0, 1))), a1=F(draw(st.integers(0, 1))))
        queries.append(Query(f"q{k}", arrivals, F(last + draw(st.integers(1, 12))), _cost(draw, n), agg))
    return QuerySet(queries=tuple(queries), executors=1, time_unit=F(1), c_max=F(1))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_window_sets())
def test_on_one_window_the_choice_is_the_schedule_it_realizes_and_never_worse_than_its_start(qs: QuerySet) -> None:
    tables = split_tables(qs)
    start = split_plan(qs)
    sizes = [None if q.name in start.late else _sizes(start, q.name) for q in qs.queries]
    bounds = _bound_grid(qs, "misses", [])
    lp = release_bound(bounds.grids, 1, phase="cost", misses=start.misses, floors=bounds.floors,
                       seeds=[[] if s is None else [s] for s in sizes])
    model, read = pool_model(tables, lp.plans, sizes, start.misses)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(model) == cp_model.OPTIMAL
    found = read(solver)
    plan = realize(qs, tables, found)
    assert plan.status == "ok" and check_plan(qs, plan) == []
    # the rows are the schedule's: every query kept is on time, at the model's cost (costs on the grid of 1)
    assert plan.late <= {q.name for q, kept in zip(qs.queries, found.kept) if not kept}
    assert plan.total_cost == found.cost
    # the start is one of the choices (its columns are the LP's seeds, its schedule meets the rows)
    assert (found.misses, found.cost) <= (start.misses, start.total_cost)
    assert (plan.misses, plan.total_cost) <= (start.misses, start.total_cost)


def test_on_the_13_query_set_at_rho_04_the_lps_columns_beat_the_split_search() -> None:
    qs = multi_instance(0.4, "same", "FR", 0.5, 0)
    start = split_plan(qs)
    assert start.misses == 0 and float(start.total_cost) > 662
    plan, record = _column_plan(qs, start, _Budget(time_limit=30.0, workers=1, deterministic=5.0), _BoundGrids(qs),
                                _off_grid(qs), split_tables(qs))
    assert record["converged"] and record["choice"]["status"] == "optimal"
    assert plan.misses == 0 and float(plan.total_cost) < 657 and check_plan(qs, plan) == []
    assert record["bound"] == 653207 and plan.total_cost > F("653.207")   # the LP's bound, on the bound grid of 1 ms


def test_without_columns_a_query_can_only_be_late() -> None:
    """The LP gives no columns when its certificate cannot fit in int64 (``release_bound``'s
    trivial bound): the choice is then every query late, and with fewer misses allowed there is
    none (the planner keeps its start)."""
    qs = QuerySet(
        queries=tuple(Query(f"q{k}", StepProfile(times=(F(1), F(3)), counts=(1, 2)), F(6), LinearCost(S=F(1), R=F(1)),
                            AggCost())
                      for k in range(2)), executors=1, time_unit=F(1), c_max=F(1))
    tables = split_tables(qs)
    solver = cp_model.CpSolver()
    model, read = pool_model(tables, (), [None, None], 2)
    assert solver.solve(model) == cp_model.OPTIMAL and read(solver).kept == [False, False]
    model, _ = pool_model(tables, (), [None, None], 1)
    assert solver.solve(model) == cp_model.INFEASIBLE
