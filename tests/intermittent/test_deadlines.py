"""The A5 deadline generator (digest §2 A5, §9 check 6) and the C7 necessary condition (digest §3
C7, correction 3, §9 check 8)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from staleness_lab.errors import InputError
from staleness_lab.intermittent import LinearCost, Query, QuerySet, fixed_rate, load_queryset
from staleness_lab.intermittent.deadlines import C7Result, a5_deadlines, c7, last_work, with_deadlines

E5 = "data/intermittent/e5.yaml"
ABC = [0, 1, 2]


@pytest.mark.parametrize(
    ("rho", "expected"),
    [
        (1, [F(132), F(143), F(177)]),
        (F(2, 5), [F(594, 5), F(616, 5), F(684, 5)]),      # 118.8 / 123.2 / 136.8
        (F(1, 5), [F(572, 5), F(583, 5), F(617, 5)]),      # 114.4 / 116.6 / 123.4
    ],
)
def test_e5_deadlines_in_the_order_a_b_c(rho, expected) -> None:
    qs = load_queryset(E5)
    assert a5_deadlines(qs.queries, rho, qs.c_max, order=ABC) == expected
    # a float rho is read as written: 0.4 is 2/5
    assert a5_deadlines(qs.queries, float(rho), qs.c_max, order=ABC) == expected
    assert [q.deadline for q in with_deadlines(qs, rho, order=ABC).queries] == expected


def test_with_deadlines_copies_and_reproduces_the_sample_file() -> None:
    qs = load_queryset(E5)
    again = with_deadlines(qs, F(2, 5), order=ABC)
    assert again == qs                     # e5.yaml holds the ρ = 0.4 deadlines
    changed = with_deadlines(qs, 1, order=ABC)
    assert changed is not qs and qs.query("A").deadline == F(594, 5)
    assert changed.c_max == qs.c_max and changed.executors == qs.executors


def test_deadlines_come_back_in_query_order_whatever_the_generation_order() -> None:
    qs = load_queryset(E5)
    # order C, A, B: C = 100 + 34 + 10 = 144, A = 144 + 22 = 166, B = 166 + 11 = 177
    assert a5_deadlines(qs.queries, 1, 10, order=[2, 0, 1]) == [F(166), F(177), F(144)]


def test_the_seeded_permutation_is_reproducible_and_the_first_query_gets_c_max() -> None:
    qs = load_queryset(E5)
    one = a5_deadlines(qs.queries, 1, 10, seed=7)
    assert one == a5_deadlines(qs.queries, 1, 10, seed=7)
    # whichever query comes first gets we + Cost(N) + C_max; the chain ends at 100 + 67 + 10
    assert max(one) == 177
    assert any(d == 100 + q.min_cost + 10 for d, q in zip(one, qs.queries))
    seen = {tuple(a5_deadlines(qs.queries, 1, 10, seed=s)) for s in range(20)}
    assert len(seen) > 1


def test_a_window_ending_after_the_previous_deadline_starts_a_new_chain() -> None:
    cost = LinearCost(S=F(1), R=F(1, 10))                       # Cost(10) = 2
    early, late = fixed_rate(10, ws=1), fixed_rate(10, ws=50)   # we = 10 and 59
    queries = [Query("e", early, 100, cost), Query("l", late, 100, cost)]
    assert a5_deadlines(queries, 1, 5, order=[0, 1]) == [F(17), F(66)]   # 59 > 17: 59 + 2 + 5
    # the other order: l first (66), then e's window ends before 66: 66 + 2
    assert a5_deadlines(queries, 1, 5, order=[1, 0]) == [F(68), F(66)]


def test_bad_inputs_name_their_field() -> None:
    qs = load_queryset(E5)
    with pytest.raises(InputError, match="order"):
        a5_deadlines(qs.queries, 1, 10, order=[0, 0, 1])
    with pytest.raises(InputError, match="rho"):
        a5_deadlines(qs.queries, -1, 10)
    no_cmax = qs.with_overrides(c_max=None)
    with pytest.raises(InputError, match=r"queries\[0\]\.deadline"):
        with_deadlines(no_cmax, 0, order=ABC)     # D = we is not after the window end


@pytest.mark.parametrize(("rho", "holds", "available"), [(1, True, F(77)), (F(2, 5), True, F(184, 5)),
                                                         (F(1, 5), False, F(117, 5))])
def test_c7_flags_e5_at_rho_0_2_only(rho, holds, available) -> None:
    qs = with_deadlines(load_queryset(E5), rho, order=ABC)
    result = c7(qs)
    # last work: A Cost(20) + AggCost(5) = 6 + 3; B 3.5 + 2.5; C 10 + 3: 28 against max D - we
    assert result == C7Result(holds=holds, last_work=F(28), available=available, detail=result.detail)
    assert "28" in result.detail and ("<=" in result.detail) == holds


def test_c7_with_given_minbatch_sizes() -> None:
    qs = with_deadlines(load_queryset(E5), F(2, 5), order=ABC)
    # one batch each: the last work is the whole Cost(N), 67 > 36.8
    result = c7(qs, {"A": 100, "B": 100, "C": 100})
    assert not result.holds and result.last_work == 67
    # a last batch smaller than MinBatch: 100 = 3 x 30 + 10
    assert last_work(qs.query("A"), 30) == qs.query("A").cost(10) + qs.query("A").agg_cost(4)


def test_c7_reading_for_different_window_ends_and_executors() -> None:
    a = Query("a", fixed_rate(10, ws=1), 25, LinearCost(S=F(1), R=F(1, 10)))   # we = 10, Cost(10) = 2
    b = Query("b", fixed_rate(10, ws=11), 30, LinearCost(S=F(1), R=F(1)))      # we = 20, Cost(10) = 11
    sizes = {"a": 10, "b": 10}                                                 # one batch each
    qs = QuerySet((a, b))
    # group {a, b} from T = 10: 13 <= 30 - 10 holds; group {b} from T = 20: 11 > 30 - 20 fails
    result = c7(qs, sizes)
    assert not result.holds and (result.last_work, result.available) == (F(11), F(10))
    assert "b 11" in result.detail and "a " not in result.detail
    # two executors double the time available: {b} 11 <= 20 (margin 9) is still the tightest
    result = c7(qs.with_overrides(executors=2), sizes)
    assert result.holds and (result.last_work, result.available) == (F(11), F(20))
