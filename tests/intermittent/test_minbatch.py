"""FindMinBatchSize (digest §2 A3, §3 C5, §9 check 5): E5's sizes, the C_max cap and its flag,
the paper-scale splits, and the fast scan against the full k = 1..N scan."""

from __future__ import annotations

import time
from fractions import Fraction as F

from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.intermittent import AggCost, LinearCost, PiecewiseCost, Query, fixed_rate, load_queryset
from staleness_lab.intermittent.costs import NO_AGG, est
from staleness_lab.intermittent.minbatch import MinBatch, find_min_batch, split_total

E5 = "data/intermittent/e5.yaml"


def _query(n: int, cost, agg=NO_AGG) -> Query:
    arrivals = fixed_rate(n)
    return Query("q", arrivals, arrivals.we + 1, cost, agg)


def test_e5_minbatch_sizes_totals_and_the_c_max_flag() -> None:
    qs = load_queryset(E5)
    found = {q.name: find_min_batch(q, qs.delta_rsf, qs.c_max) for q in qs.queries}
    assert found["A"] == MinBatch(size=20, batches=5, total=F(33), flagged=False)   # 33 = 1.5 x 22
    assert found["B"] == MinBatch(size=25, batches=4, total=F(33, 2), flagged=False)  # 16.5 = 1.5 x 11
    # C: δRSF picks 25 (Tot 48.5 <= 51) but Cost(25) = 11.5 > C_max = 10: capped at 20, Tot 53 > 51
    assert found["C"] == MinBatch(size=20, batches=5, total=F(53), flagged=True)


def test_without_c_max_c_keeps_the_delta_choice() -> None:
    qs = load_queryset(E5)
    c = qs.query("C")
    assert find_min_batch(c, qs.delta_rsf, None) == MinBatch(size=25, batches=4, total=F(97, 2), flagged=False)
    assert find_min_batch(c, qs.delta_rsf, 100) == MinBatch(size=25, batches=4, total=F(97, 2), flagged=False)


def test_one_tuple_above_c_max_gives_size_one_and_a_flag() -> None:
    query = _query(10, LinearCost(S=F(5), R=F(1)))     # Cost(1) = 6 > C_max = 3
    found = find_min_batch(query, F(1, 2), 3)
    assert found.size == 1 and found.batches == 10 and found.flagged
    assert found.total == 10 * F(6)


def test_zero_slack_keeps_one_batch() -> None:
    query = _query(100, LinearCost(S=F(2), R=F(1, 5)), AggCost(a0=F(1, 2), a1=F(1, 2)))
    assert find_min_batch(query, 0, None) == MinBatch(size=100, batches=1, total=F(22), flagged=False)


def test_paper_scale_equal_splits_180_and_1125_fast() -> None:
    # Fig. 7 reports MinBatch from 180 (= 4500/25) to 1125 (= 4500/4) at δRSF = 50 %. Linear costs
    # without aggregation: Tot = n·S + R·N <= 1.5·(S + R·N) iff n <= 1.5 + R·N/(2S).
    started = time.perf_counter()
    q6 = _query(4500, LinearCost(S=F(9, 2), R=F(47, 1000)))   # R·N/S = 47: n <= 25
    cq3 = _query(4500, LinearCost(S=F(9), R=F(1, 100)))       # R·N/S = 5: n <= 4
    assert find_min_batch(q6, F(1, 2), 30) == MinBatch(size=180, batches=25, total=F(324), flagged=False)
    assert q6.min_cost * F(3, 2) == 324  # the split meets the slack exactly
    assert find_min_batch(cq3, F(1, 2), 30).size == 1125
    assert time.perf_counter() - started < 1.0


def _full_scan(query: Query, delta: F, c_max: F | None) -> tuple[int, bool]:
    """A3 literally: k = 1..N, x_k = ceil(N/k), the largest k whose Tot fits; then the cap."""
    bound = (1 + delta) * query.min_cost
    best = query.n
    for k in range(1, query.n + 1):
        x = -(-query.n // k)
        if split_total(query, x)[1] <= bound:
            best = x
    if c_max is not None and query.cost(best) > c_max:
        return max(1, est(query.cost, c_max, query.n)), True
    return best, False


costs = st.one_of(  # S >= 0.1: a batch always costs something (Cost(1) > 0)
    st.builds(LinearCost, S=st.fractions(F(1, 10), 5, max_denominator=10), R=st.fractions(0, 2, max_denominator=20)),
    st.builds(lambda s, a, b: PiecewiseCost(S=s, points=((F(0), F(0)), (F(10), a), (F(50), a + b))),
              st.fractions(F(1, 10), 5, max_denominator=10), st.fractions(0, 5, max_denominator=10),
              st.fractions(0, 5, max_denominator=10)),
)
aggs = st.one_of(st.just(NO_AGG), st.builds(AggCost, a0=st.fractions(0, 3, max_denominator=4),
                                             a1=st.fractions(0, 1, max_denominator=4)))


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 150), cost=costs, agg=aggs, delta=st.sampled_from([F(0), F(1, 4), F(1, 2), F(1)]),
       c_max=st.one_of(st.none(), st.fractions(F(1, 2), 20, max_denominator=4)))
def test_the_fast_scan_equals_the_full_scan_and_c5_holds(n, cost, agg, delta, c_max) -> None:
    query = _query(n, cost, agg)
    found = find_min_batch(query, delta, c_max)
    assert (found.size, found.flagged) == _full_scan(query, delta, c_max)
    assert (found.batches, found.total) == split_total(query, found.size)
    assert 1 <= found.size <= n
    if not found.flagged:
        # C5: an uncapped MinBatch keeps equal splits within the slack, and each batch within C_max
        assert found.total <= (1 + delta) * query.min_cost
        assert c_max is None or query.cost(found.size) <= c_max
    elif query.cost(1) <= c_max:
        assert query.cost(found.size) <= c_max
