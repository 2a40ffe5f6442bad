"""The suffix DP (``exact``'s default method): equal to the Pareto reference and to brute force,
never costlier than Algorithm 1, the digest's counterexamples, and the paper's scale."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings

from staleness_lab.errors import InputError
from staleness_lab.experiments.intermittent.sweeps import FIG6_FACTORS, counterexamples, paper_queries
from staleness_lab.intermittent.costs import LinearCost, TableCost
from staleness_lab.intermittent.model import Query, QuerySet
from staleness_lab.intermittent.numbers import exact as exact_number
from staleness_lab.intermittent.single import _Grid, algorithm1, exact
from staleness_lab.intermittent.suffix import _floor, optimum_sizes
from tests.intermittent.test_single import assert_sound, batches, brute_force, completion, compositions, single_queries

F = Fraction


def key(plan) -> tuple[Fraction, int, Fraction] | None:
    return None if plan.status != "ok" else (plan.total_cost, len(batches(plan)), completion(plan))


def as_table(query: Query) -> Query:
    """The same query with its cost as a table, so the general methods plan it (not the linear recursion)."""
    table = TableCost(values=tuple(query.cost(x) for x in range(1, query.n + 1)))
    return Query(name=query.name, arrivals=query.arrivals, deadline=query.deadline, cost=table,
                 agg_cost=query.agg_cost)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(single_queries())
def test_suffix_equals_pareto_and_brute_force_and_beats_algorithm1(query: Query) -> None:
    general = query if not isinstance(query.cost, LinearCost) else as_table(query)
    qs = QuerySet(queries=(general,))
    fast, reference, heuristic = exact(qs), exact(qs, method="pareto"), algorithm1(qs)
    assert_sound(qs, fast)
    assert fast.status == reference.status
    assert key(fast) == key(reference)
    if query.n <= 8:
        assert key(fast) == brute_force(general)
    if heuristic.status == "ok":
        assert fast.status == "ok" and fast.total_cost <= heuristic.total_cost


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(single_queries())
def test_wide_integers_give_the_same_sizes(query: Query) -> None:
    # the Python-integer arrays (a grid too fine for 64-bit sums) run the same DP
    g = _Grid(query)
    assert (optimum_sizes(g.time, g.cost, g.agg, g.deadline, wide=True)
            == optimum_sizes(g.time, g.cost, g.agg, g.deadline))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(single_queries())
def test_floor_bounds_every_split_with_at_least_n_batches(query: Query) -> None:
    assume(query.n <= 9)
    g = _Grid(query)
    floor = _floor(g.cost)
    least: dict[int, int] = {}
    for sizes in compositions(g.n):
        total = sum(g.cost[x] for x in sizes)
        least[len(sizes)] = min(total, least.get(len(sizes), total))
    for k in least:
        assert all(floor(k) <= least[m] for m in least if m >= k)


# -- the digest's counterexamples (correction 1), through the general method ------------------


@pytest.mark.parametrize("title", list(counterexamples()))
def test_counterexamples_suffix_matches_the_digest(title: str) -> None:
    qs = counterexamples()[title]
    query = as_table(qs.queries[0])
    table = QuerySet(queries=(query,), time_unit=qs.time_unit)
    best, heuristic = exact(table), algorithm1(table)
    assert_sound(table, best)
    assert best.status == "ok"
    if query.n == 3:     # N = 3, S = .5, R = .4, D = 4.25: [2, 1] at 2.2 against Algorithm 1's [1, 1, 1] at 2.7
        assert [x for _, _, x in batches(best)] == [2, 1] and best.total_cost == F("2.2")
        assert heuristic.total_cost == F("2.7")
    elif query.n == 2:   # N = 2, S = .5, R = .75, D = 3.5: Algorithm 1 finds no plan, two batches meet D
        assert heuristic.status == "no-plan"
        assert [(s, e) for s, e, _ in batches(best)] == [(1, F("2.25")), (F("2.25"), F("3.5"))]
    else:                # N = 24, S = .8, R = .25, AggCost .5 + .5n, D = 27.468: 3 batches at 10.4
        assert query.n == 24 and heuristic.status == "no-plan"
        assert len(batches(best)) == 3 and best.total_cost == F("10.4")


def test_unknown_method_is_refused() -> None:
    qs = counterexamples()[next(iter(counterexamples()))]
    with pytest.raises(InputError) as err:
        exact(qs, method="beam")
    assert err.value.field == "method" and "suffix, pareto" in err.value.rule


# -- the paper's scale: Fig. 6's queries at N = 4,500 -------------------------------------------


@pytest.mark.parametrize("name", ["Q3", "Q10", "CQ4"])
def test_fig6_paper_scale_is_sound_and_never_costlier_than_algorithm1(name: str) -> None:
    base = paper_queries()
    q = base.query(name)
    for f in FIG6_FACTORS:
        deadline = q.we + exact_number(f, "f") * q.min_cost
        qs = QuerySet(queries=(Query(q.name, q.arrivals, deadline, q.cost, q.agg_cost),), time_unit=base.time_unit)
        best, heuristic = exact(qs), algorithm1(qs)
        assert_sound(qs, best)
        assert best.status == "ok" and heuristic.status == "ok"
        assert best.total_cost <= heuristic.total_cost
        if f == 1.0:
            assert len(batches(best)) == 1 and best.total_cost == q.min_cost
