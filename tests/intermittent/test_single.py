"""Single-query planning: the paper's Algorithm 1 and the exact reference (digest §2 A1/A2, §4
E1-E4, correction 1), all in exact Fractions."""

from __future__ import annotations

import itertools
import time
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from staleness_lab.errors import InputError
from staleness_lab.intermittent.arrivals import FixedRate, StepProfile
from staleness_lab.intermittent.costs import AggCost, LinearCost, PiecewiseCost, TableCost
from staleness_lab.intermittent.model import Query, QuerySet
from staleness_lab.intermittent.plan import AGGREGATE, BATCH, BatchPlan, check_plan
from staleness_lab.intermittent.single import algorithm1, exact

F = Fraction
E3_AGG = AggCost(a0=F(1, 2), a1=F(1, 2))


def d(text: str | int) -> Fraction:
    return Fraction(str(text))


def make(n: int, deadline, S, R, *, agg: AggCost = AggCost(), ws=1, rate=1, cost=None, arrivals=None) -> QuerySet:
    query = Query(
        name="q", arrivals=arrivals or FixedRate(ws=d(ws), rate=d(rate), n=n), deadline=d(deadline),
        cost=cost or LinearCost(S=d(S), R=d(R)), agg_cost=agg,
    )
    return QuerySet(queries=(query,))


def batches(plan: BatchPlan) -> list[tuple[Fraction, Fraction, int]]:
    return [(s.start, s.end, s.size) for s in plan.steps if s.kind == BATCH]


def aggregations(plan: BatchPlan) -> list[tuple[Fraction, Fraction, int]]:
    return [(s.start, s.end, s.size) for s in plan.steps if s.kind == AGGREGATE]


def completion(plan: BatchPlan) -> Fraction:
    return max(s.end for s in plan.steps)


def rows(*triples) -> list[tuple[Fraction, Fraction, int]]:
    return [(d(s), d(e), x) for s, e, x in triples]


def assert_sound(qs: QuerySet, plan: BatchPlan) -> None:
    """An ok plan passes check_plan and meets the deadline; any other has no steps."""
    assert check_plan(qs, plan) == []
    if plan.status == "ok":
        assert completion(plan) <= qs.queries[0].deadline
        assert plan.minbatch == {}
        assert {s.executor for s in plan.steps} == {0}
    else:
        assert plan.steps == () and plan.reason


# -- E1: the paper's four cases (N = 10, ws = 1, λ = 1, S = 0, R = 0.5, no AggCost) ----------

E1 = {
    16: rows((11, 16, 10)),
    15: rows((10, 15, 10)),
    12: rows((7, 10, 6), (10, 12, 4)),
    11: rows((6, 8, 4), (8, 10, 4), (10, 11, 2)),
}


@pytest.mark.parametrize("deadline", sorted(E1, reverse=True))
def test_e1_algorithm1_reproduces_every_batch(deadline: int) -> None:
    qs = make(10, deadline, 0, "0.5")
    plan = algorithm1(qs)
    assert plan.status == "ok" and plan.scheme == "algorithm1"
    assert batches(plan) == E1[deadline]
    assert_sound(qs, plan)
    n = len(E1[deadline])
    # no AggCost: a zero-length aggregation right after the last batch when n >= 2, none for 1
    assert aggregations(plan) == ([] if n == 1 else [(E1[deadline][-1][1], E1[deadline][-1][1], n)])
    assert plan.total_cost == 5


@pytest.mark.parametrize("deadline", sorted(E1, reverse=True))
def test_e1_exact_same_batch_count_and_cost(deadline: int) -> None:
    qs = make(10, deadline, 0, "0.5")
    plan = exact(qs)
    assert plan.status == "ok" and plan.scheme == "exact"
    assert_sound(qs, plan)
    assert len(batches(plan)) == len(E1[deadline])  # sizes are not unique (digest E1)
    assert plan.total_cost == 5


# -- E2: Fig. 1's cost model --------------------------------------------------------------


def test_e2_cost_model() -> None:
    cost = LinearCost(S=F(5), R=F(3))
    assert cost(10) == 35
    assert cost(5) + cost(5) == 40
    query = make(10, 100, 5, 3).queries[0]
    assert query.total_cost([10]) == 35 and query.total_cost([5, 5]) == 40  # AggCost none


# -- E3: the aggregation loop (N = 100, S = 2, R = 0.2, AggCost = 0.5 + 0.5n, D = 100 + 22f) --

E3 = {
    "1": (rows((100, 122, 100)), [], 22),
    "0.5": (rows(("85.4", 100, 63), (100, "109.4", 37)), rows(("109.4", "110.9", 2)), d("25.5")),
    "0.3": (rows(("78.6", 87, 32), (87, 100, 55), (100, "104.6", 13)), rows(("104.6", "106.6", 3)), 28),
    "0.25": (rows(("77.4", 93, 68), (93, 100, 25), (100, "103.4", 7)), rows(("103.4", "105.4", 3)), 28),
}


def e3(f: str) -> QuerySet:
    return make(100, 100 + d(f) * 22, 2, "0.2", agg=E3_AGG)


@pytest.mark.parametrize("f", list(E3))
def test_e3_algorithm1_rows(f: str) -> None:
    expected_batches, expected_agg, total = E3[f]
    qs = e3(f)
    plan = algorithm1(qs)
    assert plan.status == "ok"
    assert batches(plan) == expected_batches
    assert aggregations(plan) == expected_agg
    assert plan.total_cost == total
    assert_sound(qs, plan)
    if f == "1":  # eq. (3): one batch as late as possible, D - Cost(N)
        assert plan.steps[0].start == qs.queries[0].deadline - qs.queries[0].min_cost


@pytest.mark.parametrize("f", list(E3))
def test_e3_exact_same_batch_count_and_total(f: str) -> None:
    expected_batches, _, total = E3[f]
    qs = e3(f)
    plan = exact(qs)
    assert plan.status == "ok"
    assert len(batches(plan)) == len(expected_batches)
    assert plan.total_cost == total
    assert_sound(qs, plan)


def test_e3_f02_algorithm1_no_plan_quickly_exact_infeasible() -> None:
    qs = e3("0.2")
    began = time.perf_counter()
    plan = algorithm1(qs)
    assert time.perf_counter() - began < 1
    assert plan.status == "no-plan"  # never "infeasible": its failure proves nothing
    assert_sound(qs, plan)
    proof = exact(qs)
    assert proof.status == "infeasible"
    assert_sound(qs, proof)


# -- E4: paper-scale shape (N = 4500, S = 2, R = 0.1, E3's AggCost, D = we + f·Cost(N)) --------

E4 = {
    "0.5": [("4270.5", "4500", 2275), ("4500", "4724.5", 2225)],
    "0.1": [("4089.7", "4500", 4083), ("4500", "4543.7", 417)],
}


def e4(f: str) -> QuerySet:
    return make(4500, 4500 + d(f) * 452, 2, "0.1", agg=E3_AGG)


@pytest.mark.parametrize("f", list(E4))
def test_e4_algorithm1_two_batches(f: str) -> None:
    qs = e4(f)
    plan = algorithm1(qs)
    assert plan.status == "ok"
    got = batches(plan)
    assert [x for _, _, x in got] == [x for _, _, x in E4[f]]
    for (start, end, _), (s, e, _) in zip(got, E4[f]):  # printed rounded to 0.1
        assert abs(start - d(s)) <= F(1, 20) and abs(end - d(e)) <= F(1, 20)
    assert aggregations(plan) == [(got[-1][1], got[-1][1] + F(3, 2), 2)]
    assert_sound(qs, plan)


def test_e4_exact_within_the_default_limit_and_the_pareto_limit_enforced() -> None:
    qs = e4("0.1")
    plan = exact(qs)  # N = 4500: linear cost, the scalar recursion, fast
    assert plan.status == "ok" and len(batches(plan)) == 2 and plan.total_cost == d("455.5")
    assert_sound(qs, plan)
    with pytest.raises(InputError) as err:
        exact(qs, method="pareto")
    assert err.value.field == "queries[0].arrivals.N"
    assert "2000" in err.value.rule and "4500" in err.value.rule and "pareto" in err.value.rule
    assert exact(qs, method="pareto", max_tuples=4500).total_cost == d("455.5")


# -- correction 1: Algorithm 1 is neither optimal nor a feasibility test ---------------------


def test_counterexample_three_singletons_vs_two_batches() -> None:
    qs = make(3, "4.25", "0.5", "0.4")
    heuristic, best = algorithm1(qs), exact(qs)
    assert [x for _, _, x in batches(heuristic)] == [1, 1, 1] and heuristic.total_cost == d("2.7")
    assert [x for _, _, x in batches(best)] == [2, 1] and best.total_cost == d("2.2")
    assert_sound(qs, heuristic)
    assert_sound(qs, best)


def test_counterexample_algorithm1_fails_on_a_feasible_query() -> None:
    qs = make(2, "3.5", "0.5", "0.75")
    assert algorithm1(qs).status == "no-plan"
    best = exact(qs)
    assert best.status == "ok"
    assert batches(best) == rows((1, "2.25", 1), ("2.25", "3.5", 1))
    assert_sound(qs, best)


def test_counterexample_aggregation_loop_fails_three_batches_exist() -> None:
    qs = make(24, "27.468", "0.8", "0.25", agg=E3_AGG)
    assert algorithm1(qs).status == "no-plan"
    best = exact(qs)
    assert best.status == "ok"
    assert len(batches(best)) == 3 and best.total_cost == d("10.4")
    assert_sound(qs, best)


# -- other cost models and arrivals ------------------------------------------------------------


def test_concave_cost_exact_beats_algorithm1() -> None:
    # C1 does not extend to concave costs: Algorithm 1's largest-last batches are not cheapest
    cost = PiecewiseCost(S=F(2), points=((F(0), F(0)), (F(100), F(30)), (F(500), F(70))))
    qs = make(500, 500 + cost(500) / 2, 0, 0, cost=cost, agg=E3_AGG)
    heuristic, best = algorithm1(qs), exact(qs)
    assert heuristic.status == best.status == "ok"
    assert best.total_cost == d("85.5") < heuristic.total_cost == d("95.5")
    assert_sound(qs, heuristic)
    assert_sound(qs, best)


def test_step_profile_arrivals() -> None:
    # InputTime from the table: tuples 1-2 at 1, 3-5 at 3, 6 at 4, 7-9 at 7 (we = 7)
    arrivals = StepProfile(times=(F(1), F(3), F(4), F(7)), counts=(2, 5, 6, 9))

    def qs(deadline: int) -> QuerySet:
        return make(9, deadline, "0.5", 1, arrivals=arrivals, agg=AggCost(a0=F(1, 2), a1=F(1, 4)))

    heuristic, best = algorithm1(qs(14)), exact(qs(14))
    assert batches(heuristic) == rows(("1.5", 3, 1), (3, "6.5", 3), (7, "12.5", 5))  # k: 2 -> 3
    assert aggregations(heuristic) == rows(("12.5", "13.75", 3)) and heuristic.total_cost == d("11.75")
    assert batches(best) == rows((3, "8.5", 5), ("8.5", 13, 4)) and best.total_cost == 11
    for plan in (heuristic, best):
        assert_sound(qs(14), plan)
    assert (best.total_cost, 2, completion(best)) == brute_force(qs(14).queries[0])
    # one unit earlier Algorithm 1 finds nothing, yet three batches meet D
    assert algorithm1(qs(13)).status == "no-plan"
    tight = exact(qs(13))
    assert tight.status == "ok" and len(batches(tight)) == 3 and tight.total_cost == d("11.75")
    assert_sound(qs(13), tight)


def test_exact_n100_and_n500_are_fast() -> None:
    began = time.perf_counter()
    for f in ("1", "0.5", "0.3", "0.2"):
        assert exact(e3(f)).status in ("ok", "infeasible")
    assert time.perf_counter() - began < 1
    lin = LinearCost(S=F(2), R=F(1, 5))
    table = TableCost(values=tuple(lin(x) for x in range(1, 501)))
    began = time.perf_counter()
    plan = exact(make(500, 500 + F(1, 2) * lin(500), 0, 0, cost=table, agg=E3_AGG))
    assert time.perf_counter() - began < 30  # about 2.7 s: a hang guard of ten times that, not a benchmark
    assert plan.status == "ok" and plan.total_cost == d("105.5")


# -- input errors ---------------------------------------------------------------------------------


def test_two_queries_are_refused() -> None:
    one = make(3, 10, 1, 1).queries[0]
    two = Query(name="r", arrivals=one.arrivals, deadline=one.deadline, cost=one.cost)
    qs = QuerySet(queries=(one, two))
    for scheme in (algorithm1, exact):
        with pytest.raises(InputError) as err:
            scheme(qs)
        assert err.value.field == "queries" and "plans one query" in err.value.rule


def test_max_tuples_is_enforced() -> None:
    qs = make(30, 100, 1, 1)
    with pytest.raises(InputError) as err:
        exact(qs, max_tuples=20)
    assert err.value.field == "queries[0].arrivals.N" and "20" in err.value.rule
    assert exact(qs, max_tuples=30).status == "ok"


# -- properties --------------------------------------------------------------------------------


def compositions(n: int) -> list[tuple[int, ...]]:
    """Every way to write ``n`` as an ordered sum of positive batch sizes (2^(n-1) of them)."""
    out = []
    for cuts in itertools.product((False, True), repeat=n - 1):
        sizes, run = [], 1
        for cut in cuts:
            if cut:
                sizes.append(run)
                run = 0
            run += 1
        out.append((*sizes, run))
    return out


def brute_force(query: Query) -> tuple[Fraction, int, Fraction] | None:
    """(cost, batches, completion) of the best plan over every composition of N, or None."""
    best = None
    for sizes in compositions(query.n):
        free, done = None, 0
        for x in sizes:
            done += x
            start = query.arrivals.input_time(done)
            start = start if free is None else max(free, start)
            free = start + query.cost(x)
        end = free + (query.agg_cost(len(sizes)) if len(sizes) >= 2 else 0)
        if end <= query.deadline:
            key = (query.total_cost(sizes), len(sizes), end)
            best = key if best is None or key < best else best
    return best


tenths = st.integers(min_value=0, max_value=20).map(lambda k: F(k, 10))


@st.composite
def single_queries(draw) -> Query:
    n = draw(st.integers(min_value=1, max_value=12))
    ws = F(draw(st.integers(min_value=0, max_value=30)), 10)
    if draw(st.integers(min_value=0, max_value=4)) == 0:  # a variable rate now and then
        steps = draw(st.lists(st.integers(min_value=1, max_value=3), min_size=1, max_size=n))
        times, counts, t, c = [], [], ws, 0
        for k, step in enumerate(steps):
            c = min(n, c + step)
            times.append(t)
            counts.append(c if k + 1 < len(steps) else n)
            t += F(draw(st.integers(min_value=1, max_value=15)), 10)
            if counts[-1] == n:
                break
        counts[-1] = n
        arrivals = StepProfile(times=tuple(times), counts=tuple(counts))
    else:
        arrivals = FixedRate(ws=ws, rate=draw(st.sampled_from([F(1), F(2), F(1, 2)])), n=n)
    kind = draw(st.sampled_from(["linear", "linear", "piecewise", "table"]))
    if kind == "linear":
        S = draw(tenths)
        R = draw(tenths.map(lambda v: v / 2))  # 0..1
        if S + R == 0:
            S = F(1, 10)
        cost = LinearCost(S=S, R=R)
    elif kind == "piecewise":
        x1 = draw(st.integers(min_value=1, max_value=6))
        x2 = x1 + draw(st.integers(min_value=1, max_value=6))
        c1 = draw(tenths)
        c2 = c1 + draw(tenths)
        cost = PiecewiseCost(S=draw(tenths) + F(1, 10), points=((F(0), F(0)), (F(x1), c1), (F(x2), c2)))
    else:
        first = F(draw(st.integers(min_value=1, max_value=20)), 10)
        steps = draw(st.lists(st.integers(min_value=0, max_value=15), min_size=n - 1, max_size=n - 1))
        values = list(itertools.accumulate([first] + [F(s, 10) for s in steps]))
        cost = TableCost(values=tuple(values))
    agg_kind = draw(st.sampled_from(["none", "linear", "linear"]))
    agg = AggCost() if agg_kind == "none" else AggCost(a0=draw(tenths) / 2, a1=draw(tenths) / 2)
    full = cost(n)
    k = draw(st.integers(min_value=1, max_value=max(1, int(20 * full))))
    slack = min(F(k, 10), 2 * full) if full > 0 else F(k, 10)
    return Query(name="q", arrivals=arrivals, deadline=arrivals.we + slack, cost=cost, agg_cost=agg)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(single_queries())
def test_exact_is_optimal_and_never_worse_than_algorithm1(query: Query) -> None:
    qs = QuerySet(queries=(query,))
    heuristic, best = algorithm1(qs), exact(qs)
    assert heuristic.status in ("ok", "no-plan")
    assert best.status in ("ok", "infeasible")
    assert_sound(qs, heuristic)
    assert_sound(qs, best)
    if heuristic.status == "ok":
        assert best.status == "ok" and best.total_cost <= heuristic.total_cost
        if query.we + query.min_cost <= query.deadline:  # eq. (3)
            assert batches(heuristic) == [(query.deadline - query.min_cost, query.deadline, query.n)]
    if best.status == "infeasible":
        assert heuristic.status == "no-plan"
    key = None if best.status != "ok" else (best.total_cost, len(batches(best)), completion(best))
    if query.n <= 8:
        assert key == brute_force(query)
    if isinstance(query.cost, LinearCost):  # the scalar recursion agrees with the Pareto search
        table = TableCost(values=tuple(query.cost(x) for x in range(1, query.n + 1)))
        twin = QuerySet(queries=(Query(name="q", arrivals=query.arrivals, deadline=query.deadline, cost=table,
                                       agg_cost=query.agg_cost),))
        other = exact(twin)
        assert other.status == best.status
        if key is not None:
            assert (other.total_cost, len(batches(other)), completion(other)) == key
