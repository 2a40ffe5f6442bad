"""The batch planner's bounds hold for the true (off-grid) costs, and its time limit holds.

On random small instances whose durations, arrivals and deadlines lie off the planner's 0.1 s grid
(some on an exact finer grid the bound can use, some with denominators too fine for one, so every
duration is rounded down): the returned bounds lie at or below the true optimum (a brute force over
every split and every order on one executor), which lies at or below the plan's true objective;
"optimal" is claimed only for the true optimum; no heuristic's true misses fall below the misses
bound. On the synthetic 13-query set at 0.1D, the SJF plan with two misses is kept (the grid made
its copy three), and a tiny time limit returns within it with a true bound. Each query's cheapest
split of every prefix (``least_splits``, compiled) is the least over every composition, and the
decomposition's head tables (``HeadLayers``) the least splits into exactly k batches.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import replace
from fractions import Fraction as F

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from staleness_lab.intermittent import AggCost, FixedRate, LinearCost, Query, QuerySet, check_plan
from staleness_lab.intermittent.dispatch import POLICIES, dispatch
from staleness_lab.intermittent.plan import at_model_costs
from staleness_lab.optimize import optimal_plan
from staleness_lab.optimize.decomposition import HeadLayers, QueryGrid, least_splits
from staleness_lab.optimize.true_bounds import MAX_BOUND_UNITS, bound_unit, exact_unit, floor_bounds, true_key

from tests.intermittent.test_single import compositions

#: A denominator fine enough that no exact bound grid fits (every duration is rounded down).
FINE = 1_000_000_007


def brute_force(qs: QuerySet) -> tuple[int, F]:
    """The least (misses, cost) over every plan on one executor: every split of each query, every
    order of the batches (a query's in tuple order, the final aggregation right after its last
    batch), each step as early as its tuples and the executor allow."""
    best: tuple[int, F] | None = None
    for splits in itertools.product(*(compositions(q.n) for q in qs.queries)):
        cost = sum((sum((q.cost(x) for x in sizes), F(0)) + (q.agg_cost(len(sizes)) if len(sizes) > 1 else 0)
                    for q, sizes in zip(qs.queries, splits)), F(0))
        tokens = [k for k, sizes in enumerate(splits) for _ in sizes]
        for order in set(itertools.permutations(tokens)):
            free, done, used, misses = F(0), [0] * len(splits), [0] * len(splits), 0
            for k in order:
                q, x = qs.queries[k], splits[k][used[k]]
                done[k] += x
                used[k] += 1
                free = max(free, q.arrivals.input_time(done[k])) + q.cost(x)
                if used[k] == len(splits[k]):
                    free += q.agg_cost(len(splits[k])) if len(splits[k]) > 1 else 0
                    misses += free > q.deadline
            if best is None or (misses, cost) < best:
                best = (misses, cost)
    assert best is not None
    return best


@st.composite
def off_grid_sets(draw: st.DrawFn, executors: int = 1, dens: tuple[int, ...] = (7, 30, FINE, FINE)) -> QuerySet:
    """1-3 queries (more than ``executors``) of 1-3 tuples (at most 6 in all), costs, arrivals,
    aggregations and deadlines in 1/den with den off the 0.1 grid (an exact grid fits) or
    :data:`FINE` (none does)."""
    den = draw(st.sampled_from(dens))
    count = draw(st.integers(executors + 1 if executors > 1 else 1, 3))
    queries = []
    for k in range(count):
        n = draw(st.integers(1, 3 if count < 3 else 2))

        def value(lo: int, hi: int) -> F:
            return F(draw(st.integers(lo * den, hi * den)), den)

        arrivals = FixedRate(ws=value(0, 2), rate=F(1), n=n)
        cost = LinearCost(S=value(0, 2), R=value(0, 2) + F(1, den))
        agg = AggCost(a0=value(0, 1), a1=value(0, 1)) if n > 1 else AggCost()
        deadline = arrivals.we + value(1, 4 * count)
        queries.append(Query(f"q{k}", arrivals, deadline, cost, agg))
    return QuerySet(queries=tuple(queries), executors=executors, time_unit=F(1, 10))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qs=off_grid_sets(), method=st.sampled_from(["decomposition", "monolithic"]))
def test_the_bounds_hold_for_the_true_costs(qs: QuerySet, method: str) -> None:
    plan = optimal_plan(qs, method=method, workers=1, deterministic_time=2.0, max_terms=None)
    assert plan.status == "ok" and check_plan(qs, plan) == []
    first, cost = [p for p in plan.solver["phases"] if p["round"] == plan.solver["round"]]
    misses, price = brute_force(qs)
    value = true_key(plan, "misses")
    assert first["objective"] == value[0] and cost["objective"] == pytest.approx(float(value[1]))
    assert first["bound"] <= misses <= value[0]
    assert cost["bound"] <= float(price) + 1e-9
    assert (misses, price) <= (value[0], value[1])
    if plan.solver["status"] == "optimal":
        assert (value[0], value[1]) == (misses, price)
    for policy in POLICIES:
        assert dispatch(qs, policy).misses >= first["bound"], policy


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(qs=off_grid_sets(executors=2, dens=(7, 30)))
def test_on_two_executors_the_bounds_hold_against_the_optimum_on_an_exact_grid(qs: QuerySet) -> None:
    """Queries sharing two executors: the true optimum is the slot model's, proven on the data's
    exact grid (every number a multiple of its unit, so nothing is rounded)."""
    unit = exact_unit(qs)
    assume(unit is not None)
    reference = optimal_plan(replace(qs, time_unit=unit), workers=1, deterministic_time=5.0, max_terms=None,
                             method="monolithic")
    assume(reference.solver["status"] == "optimal")
    misses, price = true_key(reference, "misses")[:2]
    plan = optimal_plan(qs, method="decomposition", workers=1, deterministic_time=2.0, max_terms=None)
    assert plan.status == "ok" and check_plan(qs, plan) == []
    first, cost = plan.solver["phases"][-2:]
    value = true_key(plan, "misses")
    assert first["bound"] <= misses <= first["objective"] == value[0]
    assert cost["bound"] <= float(price) + 1e-9 and (misses, price) <= value[:2]
    if plan.solver["status"] == "optimal":
        assert value[:2] == (misses, price)


def test_the_bound_grid_is_exact_when_it_fits_and_rounds_down_otherwise() -> None:
    def one(den: int) -> QuerySet:
        arrivals = FixedRate(ws=F(1), rate=F(1), n=3)
        return QuerySet(queries=(Query("q", arrivals, F(9), LinearCost(S=F(1, den), R=F(1, 3)), AggCost()),),
                        time_unit=F(1, 10))

    assert exact_unit(one(7)) == F(1, 21) and bound_unit(one(7), False) == (F(1, 21), True)
    assert exact_unit(one(FINE)) is None and bound_unit(one(FINE), False, max_units=2 * 10**4) == (F(1, 10**3), False)
    assert bound_unit(one(FINE), False, max_units=100) == (F(1, 10), False)
    assert bound_unit(one(10), True) == (F(1, 10), True)
    assert exact_unit(one(7), max_units=10) is None and MAX_BOUND_UNITS >= 10**6


def _synthetic(rho: float) -> tuple[QuerySet, dict]:
    from staleness_lab.experiments.intermittent.sweeps import fig78_heuristics, multi_instance

    qs = multi_instance(rho, "same", "FR", 0.5, 0, "")
    return qs, fig78_heuristics(qs)


def test_on_the_synthetic_set_the_hint_is_kept_and_a_tiny_limit_holds_with_a_true_bound() -> None:
    """0.1D: SJF misses two queries at the true costs (its copy on the 0.1 s grid misses three);
    with 0.5 s per phase (1 s in all) the planner returns within the limit (10x margin plus the
    hint's pricing), keeps a plan no worse than SJF's, and bounds the misses at or below every
    heuristic's."""
    qs, heuristics = _synthetic(0.1)
    hint = min(heuristics.values(), key=lambda p: (p.misses, p.total_cost))
    began = time.perf_counter()
    plan = optimal_plan(qs, hint=hint, time_limit=0.5, workers=2, method="decomposition", max_terms=None)
    seconds = time.perf_counter() - began
    assert seconds < 10 * (2 * 0.5) + 10, seconds
    assert plan.status == "ok" and check_plan(qs, plan) == []
    first, cost = plan.solver["phases"][-2:]
    assert first["objective"] == at_model_costs(plan).misses <= hint.misses == 2
    assert first["bound"] <= min(p.misses for p in heuristics.values())
    assert cost["bound"] <= cost["objective"] and 0 <= cost["gap"] <= 1
    assert plan.solver["status"] == "feasible" and plan.solver["bound_exact"] is False


@pytest.mark.parametrize("method", ["decomposition", "monolithic"])
def test_a_miss_rounded_down_is_still_proven(method: str) -> None:
    """Two one-tuple queries on one executor, each lasting just over 2 s (off every grid that
    fits), both due 3.5 s after their tuple: one is late in every plan, and the bound grid
    (durations rounded down to 2 s) still proves it."""
    arrivals = FixedRate(ws=F(1), rate=F(1), n=1)
    cost = LinearCost(S=F(2), R=F(1, FINE))
    qs = QuerySet(queries=tuple(Query(name, arrivals, F(9, 2), cost, AggCost()) for name in ("a", "b")),
                  time_unit=F(1, 10))
    plan = optimal_plan(qs, method=method, workers=1, deterministic_time=2.0, max_terms=None)
    first, cost_phase = plan.solver["phases"][-2:]
    assert brute_force(qs) == (1, 2 * cost(1)) and plan.solver["bound_exact"] is False
    assert first["bound"] == first["objective"] == 1 and first["status"] == "optimal"
    assert cost_phase["bound"] <= float(2 * cost(1)) <= cost_phase["objective"]
    assert plan.solver["status"] == "feasible"   # the cost bound is 4 s on the rounded-down grid, not 4 + 2/FINE


# --- the late-together bound (Moore-Hodgson over the tails) ---------------------------------------


def _single(name: str, release: int, dur: int, deadline: int) -> QueryGrid:
    return QueryGrid(name=name, n=1, dur=[0, dur], agg=[0, 0], release=[0, release], deadline=deadline)


def test_queries_each_on_time_alone_are_late_together_on_too_few_executors() -> None:
    # three one-tuple queries released at 10, 10 units each, due at 25: each fits alone (20 <= 25),
    # on one executor only one of them ends by 25; the fluid relaxation on two executors proves none late
    grids = [_single(f"q{k}", 10, 10, 25) for k in range(3)]
    assert floor_bounds(grids, "misses", 1) == 2
    assert floor_bounds(grids, "misses", 2) == 0
    # a query late even alone counts once, and is left out of the others' relaxation
    assert floor_bounds([*grids, _single("late", 10, 20, 25)], "misses", 1) == 3
    # released at 0 and 5, each fits alone; from time 0 both tails must end by 15 on one executor
    assert floor_bounds([_single("a", 0, 10, 12), _single("b", 5, 10, 15)], "misses", 1) == 1
    assert floor_bounds(grids, "tardiness", 1) == 0  # the tardiness floor is each query alone's


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qs=off_grid_sets(dens=(7, 30)))
def test_the_floor_bounds_lie_below_the_brute_force_misses(qs: QuerySet) -> None:
    from staleness_lab.optimize.batch_plan import _bound_grid, _off_grid

    bounds = _bound_grid(qs, "misses", _off_grid(qs))
    assert bounds.value1 <= brute_force(qs)[0]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10**12), min_size=1, max_size=11))
def test_least_splits_is_the_cheapest_split_of_every_prefix(durations: list[int]) -> None:
    """The compiled min-plus recursion against every split of c tuples (c = 1..N), durations up to
    10^12 (a paper-scale query's on a fine grid)."""
    dur = [0, *durations]
    least = least_splits(dur)
    assert least[0] == 0 and len(least) == len(dur)
    for c in range(1, len(dur)):
        assert least[c] == min(sum(dur[x] for x in sizes) for sizes in compositions(c))


def _timed(dur: list[int], release: list[int], sizes: tuple[int, ...]) -> tuple[int, int]:
    """(Σ dur, finish) of batches of ``sizes``, each started as early as its last tuple's release
    and the batch before allow."""
    cost, finish, done = 0, None, 0
    for x in sizes:
        done += x
        start = release[done] if finish is None else max(finish, release[done])
        finish, cost = start + dur[x], cost + dur[x]
    return cost, finish


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.integers(0, 6)), min_size=1, max_size=9))
def test_head_layers_are_the_least_splits_into_k_batches(rows: list[tuple[int, int]]) -> None:
    """The decomposition's head tables (compiled layers) against every split of r tuples into
    exactly k batches: ``cheap`` the least (cost, finish), ``soon`` the least (finish, cost), each
    reached by the sizes ``split`` gives back."""
    dur = [0, *(d for d, _ in rows)]
    release = [0, *itertools.accumulate(gap for _, gap in rows)]
    layers = HeadLayers(dur, release)
    n = len(rows)
    for k in range(1, n + 1):
        for r in range(k, n + 1):
            splits = [s for s in compositions(r) if len(s) == k]
            by_cost = min(_timed(dur, release, s) for s in splits)
            by_finish = min(_timed(dur, release, s)[::-1] for s in splits)
            assert (layers.cheap(k)[0][r], layers.cheap(k)[1][r]) == by_cost
            assert (layers.soon(k)[0][r], layers.soon(k)[1][r]) == by_finish
            assert _timed(dur, release, layers.split(k, r)) == by_cost
            assert _timed(dur, release, layers.split(k, r, soonest=True))[::-1] == by_finish
            assert layers._plain(k)[r] == by_cost[0]
