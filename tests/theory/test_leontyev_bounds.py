"""Leontyev et al.'s closed forms (digest specs/leontyev-aus.md): the worked examples E1, E2, E4's
eq.-6 arithmetic, E5 and E6 (acceptance check 3), and properties the formulas guarantee (derived in
the comments; Y is *not* monotone in m or in every e_k, see test_y_is_not_monotone_everywhere)."""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from staleness_lab.errors import InputError
from staleness_lab.theory.leontyev.bounds import (ADMIT_TOL, admissible, arbitrate, eq6_lhs,
                                                  preconditions, recovery_thresholds, recovery_time,
                                                  recovery_time_bound, response_time_bounds,
                                                  rule_a_recovery_periods, rule_b_recovery_periods, staleness_bounds,
                                                  tardiness_bounds, tardiness_terms, total_share)
from staleness_lab.theory.leontyev.table import bounds_table
from staleness_lab.theory.leontyev.tasks import (Task, TaskSet, backlog, default_budget, max_update_length,
                                                 trailing_edge_base, trailing_edge_derived, update_length_base,
                                                 update_length_derived)

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCHEDULERS = ["gedf-np", "aus"]


def rel(a, b, tol=1e-9) -> bool:
    return abs(float(a) - float(b)) <= tol * max(1.0, abs(float(b)))


# -- worked examples -------------------------------------------------------------------------------

# E1: D_2 arr = ts = 1 + 3(j-1); D_1 the same except files 2-4 land together at 10 (correction 1, A7).
D2 = [(1 + 3 * j, 1 + 3 * j) for j in range(8)]
D1 = [(1, 1), (10, 4), (10, 7), (10, 10)] + [(1 + 3 * j, 1 + 3 * j) for j in range(4, 8)]


def test_e1_trailing_edge_and_backlog() -> None:
    assert trailing_edge_base(D1, 1) == trailing_edge_base(D2, 1) == 1  # arrivals at t count
    assert trailing_edge_base(D1, Fr(99, 100)) == 0
    assert trailing_edge_base(D1, 9) == 1 and trailing_edge_base(D1, 10) == 10
    # nothing loaded after t = 2 (F(V_1) = ts of file 1 = 1): files 2-4 are pending, oldest first
    assert backlog(D1, 1, 10) == [(10, 4), (10, 7), (10, 10)]
    assert backlog(D1, 1, 9) == []
    assert update_length_base(backlog(D1, 1, 10), 1) == 3  # one file per job (Def. 8)


@pytest.mark.parametrize("p4, f_after", [(3, 8), (2, 7)])
def test_e2_derived_trailing_edge_and_cap(p4: int, f_after: int) -> None:
    te = trailing_edge_derived([8, 9])  # F(V_2, 12) = 8, F(V_3, 12) = 9
    assert te == 8
    assert 5 + update_length_derived(te, 5, p4) == f_after  # F(V_4, 14); correction 7 for p_4 = 2


def e4_system() -> TaskSet:
    """E4/E5: m = 1, T_1 and T_2 with e = 1, p = 3, p^[r] = 1.5, Delta F = 8, phi = 1."""
    return TaskSet.from_columns(1, e=[1, 1], p=[3, 3], p_r=[1.5, 1.5], delta_f=[8, 8], phi=[1, 1])


def test_e4_eq6_admission_arithmetic() -> None:
    ts = e4_system()
    assert ts.p_r == (Fr(3, 2), Fr(3, 2)) and ts.u == (Fr(1, 3), Fr(1, 3))
    # t = 10: both eligible; one fits (2/3 + 1/3 = 1), both would give 4/3; T_1 wins the tie (correction 4)
    assert total_share(ts, [0]) == 1 and total_share(ts, [0, 1]) == Fr(4, 3)
    assert admissible(ts, [0]) and admissible(ts, [1]) and not admissible(ts, [0, 1])
    assert arbitrate(ts, recovery=[], eligible=[0, 1]) == (0,)
    assert arbitrate(ts, recovery=[], eligible=[1, 0]) == (0,)
    assert arbitrate(ts, recovery=[0], eligible=[1]) == ()  # T_2 refused at 11, 13, 16
    # t = 17.5: T_1 leaves (RN), T_2 enters: 1/3 + 2/3 - 1/3 + 1/3 = 1
    assert eq6_lhs(ts, recovery_before=[0], leaving=[0], entering=[1]) == 1
    assert arbitrate(ts, recovery=[], eligible=[1]) == (1,)  # after the R->N switch is applied
    assert rule_a_recovery_periods(ts) == (Fr(3, 2), Fr(3, 2))  # eq. 7 (min) reproduces p^[r] = 1.5
    assert recovery_thresholds(ts) == (8, 8)


def test_e5_bound_arithmetic() -> None:
    ts = e4_system()
    assert ts.W("aus") == (Fr(2, 3), Fr(2, 3))
    assert tardiness_bounds(ts, "aus") == (1, 1)  # 1 + (1 - 1)/(1 - 0)
    assert response_time_bounds(ts, "aus") == (4, 4)
    assert staleness_bounds(ts, "aus") == (10, 10)  # 4 + 3 + max(1, 3)
    assert recovery_time_bound(ts, 0, 9) == 20  # (4*3 + 12*1.5)/1.5
    # m = 2, e = (2, 3, 5), p^[r] = (5, 6, 10) (p is free: W uses p^[r] under AUS)
    ts2 = TaskSet.from_columns(2, e=[2, 3, 5], p=[10, 12, 20], p_r=[5, 6, 10])
    assert ts2.W("aus") == (Fr(2, 5), Fr(1, 2), Fr(1, 2))
    terms = tardiness_terms(ts2, "aus")
    assert (terms.sum_e, terms.e_min, terms.sum_w) == (8, 2, Fr(1, 2))
    assert tardiness_bounds(ts2, "aus") == (6, 7, 9)
    # m = 4, two tasks: every task is in E and X
    ts3 = TaskSet.from_columns(4, e=[2, 3], p=[8, 12], p_r=[4, 6])
    assert tardiness_terms(ts3, "aus").E == (1, 0) and tardiness_terms(ts3, "aus").X == (0, 1)
    assert tardiness_bounds(ts3, "aus") == (3, 4)


def e6_system(c: Fr) -> TaskSet:
    """Fig. 9: m = 2, 7 tables with p = 300 and 7 with p = 900, S = 0.01p, R = 0.1, L = p, J = kappa = 0,
    phi <= p, Rule-A recovery periods; c = 1 average-case, 1.2 worst-case provisioning."""
    p = [300] * 7 + [900] * 7
    e = [default_budget(Fr(1, 100) * pk, 0.1, max_update_length(pk), c) for pk in p]
    base = TaskSet.from_columns(2, e=e, p=p, phi=[pk // 2 for pk in p])
    return base.with_recovery_periods(rule_a_recovery_periods(base))


@pytest.mark.parametrize("case", ["average", "worst"])
def test_e6_fig9_parameters(case: str) -> None:
    c = Fr(1) if case == "average" else Fr(6, 5)
    ts = e6_system(c)
    e300, e900 = 33 * c, 99 * c
    assert ts.e[0] == e300 and ts.e[7] == e900
    u_sum = 14 * Fr(11, 100) * c
    assert ts.U_sum == u_sum
    slack_share = 2 - u_sum + Fr(11, 100) * c  # m - U_sum + u_i < 1: Rule A's min picks it
    pr300, pr900 = e300 / slack_share, e900 / slack_share
    assert ts.p_r[0] == pr300 and ts.p_r[7] == pr900
    w = slack_share
    assert set(ts.W("aus")) == {w}
    slack = (2 * e900 - e300) / (2 - w)
    y = tardiness_bounds(ts, "aus")
    theta = response_time_bounds(ts, "aus")
    a = staleness_bounds(ts, "aus")
    assert (y[0], y[7]) == (e300 + slack, e900 + slack)
    assert (theta[0], theta[7]) == (300 + y[0], 900 + y[7])
    assert (a[0], a[7]) == (theta[0] + 600, theta[7] + 1800)  # phi <= p: max(phi, p) = p
    # recovery increment = m - U_sum exactly: exactly one table fits, with no tolerance at all
    assert ts.recovery_share(0) - ts.u[0] == 2 - u_sum
    assert admissible(ts, [0], tol=0) and not admissible(ts, [0, 7])
    assert arbitrate(ts, recovery=[], eligible=[3, 2, 1, 0]) == (0,)
    # printed values to their printed digits (digest E6 table)
    printed = {
        "average": dict(U=1.54, pr=(57.89, 173.68), ratio=5.18, W=0.57, Y=(148.38, 214.38),
                        theta=(448.38, 1114.38), A=(1048.38, 2914.38)),
        "worst": dict(U=1.848, pr=(139.44, 418.31), ratio=2.15, W=0.284, Y=(154.98, 234.18),
                      theta=(454.98, 1134.18), A=(1054.98, 2934.18)),
    }[case]
    assert float(ts.U_sum) == printed["U"] and round(float(w), 3) == printed["W"]
    assert (round(float(pr300), 2), round(float(pr900), 2)) == printed["pr"]
    assert round(300 / float(pr300), 2) == round(900 / float(pr900), 2) == printed["ratio"]
    for key, values in (("Y", y), ("theta", theta), ("A", a)):
        assert (round(float(values[0]), 2), round(float(values[7]), 2)) == printed[key]
    # Theorem 4 with lambda = 5000 for V_1 (correction 2)
    x = recovery_time_bound(ts, 0, 5000)
    assert x == (theta[0] * 300 + 5300 * pr300) / (300 - pr300)
    assert round(float(x), 1) == (1823.0 if case == "average" else 5452.7)
    if case == "average":
        late = recovery_time_bound(ts, 1, 6255)  # a table admitted at 11,255
        assert late == (theta[1] * 300 + (6255 + 300) * pr300) / (300 - pr300)
        assert round(float(late), 1) == 2123.1
        base = TaskSet.from_columns(2, e=ts.e, p=ts.p)
        assert rule_b_recovery_periods(base) == (231,) * 7 + (693,) * 7


def test_e6_bounds_table() -> None:
    ts = e6_system(Fr(1))
    df = bounds_table(ts, "aus", lam=5000)
    assert list(df.columns) == ["task", "name", "kind", "e", "p", "p_r", "u", "W", "Y", "theta", "A", "delta_f",
                                "lam", "x", "scheduler"]
    assert len(df) == 14 and (df["scheduler"] == "aus").all() and df["name"].iloc[0] == "T1"
    row = df.iloc[7]
    assert (row["e"], row["p"], row["u"]) == (99.0, 900.0, 0.11)
    assert rel(row["Y"], 214.38461538461539) and rel(row["A"], 2914.3846153846155)
    assert (df["delta_f"] == df["A"]).all()  # Delta F defaults to A(V_k)
    assert rel(df["x"].iloc[0], 1822.9983277591973)
    plain = bounds_table(ts, "gedf-np")
    assert "x" not in plain.columns and plain["delta_f"].isna().all()
    assert rel(plain["W"].iloc[0], 0.11) and (plain["Y"] < df["Y"]).all()  # W = u < e/p^[r]


# -- a DAG example (acceptance check 3's recursion) ------------------------------------------------

def test_staleness_recursion_over_the_dag() -> None:
    # 1, 2 base; 3 derived from 2 and 1; 0 derived from 3 and 1: listed out of topological order
    tasks = (Task(e=1, p=10, sources=(3, 1)), Task(e=1, p=4, phi=9), Task(e=2, p=6, J=1, kappa=2),
             Task(e=1, p=12, sources=(2, 1)))
    ts = TaskSet(tasks=tasks, m=2)
    theta, a = response_time_bounds(ts, "gedf-np"), staleness_bounds(ts, "gedf-np")
    assert ts.topological_order == (1, 2, 3, 0)
    assert a[1] == theta[1] + 4 + 9 and a[2] == theta[2] + 6 + 9
    assert a[3] == theta[3] + 12 + max(a[1], a[2])
    assert a[0] == theta[0] + 10 + max(a[3], a[1]) == theta[0] + 10 + a[3]
    with pytest.raises(InputError) as err:
        recovery_time_bound(ts, 0, 10)
    assert err.value.field == "tasks[0].sources"


# -- properties ------------------------------------------------------------------------------------

@st.composite
def task_sets(draw, max_n: int = 6, max_m: int = 4, dag: bool = True) -> TaskSet:
    """Exact task sets: e integer, p = e * (1 + q), p^[r] in [e, p], feeds within Def. 2, and a random
    DAG (sources among earlier positions of a random permutation). U_sum may exceed m."""
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(1, max_m))
    perm = draw(st.permutations(range(n)))
    frac = st.fractions(0, 1, max_denominator=8)
    tasks = [None] * n
    for pos, k in enumerate(perm):
        e = Fr(draw(st.integers(1, 20)))
        p = e * (1 + draw(st.fractions(0, 9, max_denominator=6)))
        p_r = e + draw(frac) * (p - e)
        sources: tuple[int, ...] = ()
        if dag and pos and draw(st.booleans()):
            sources = tuple(draw(st.lists(st.sampled_from([perm[i] for i in range(pos)]), min_size=1,
                                          max_size=3, unique=True)))
        tasks[k] = Task(e=e, p=p, p_r=p_r, phi=draw(st.integers(0, 30)), J=draw(frac) * p,
                        kappa=draw(st.integers(0, 5)), sources=sources)
    return TaskSet(tasks=tuple(tasks), m=m)


def feasible(ts: TaskSet) -> TaskSet:
    """The same tasks on enough processors for U_sum <= m."""
    return ts.with_m(max(ts.m, math.ceil(ts.U_sum)))


@SETTINGS
@given(task_sets(), st.sampled_from(SCHEDULERS))
def test_y_shape(ts: TaskSet, scheduler: str) -> None:
    # Y_i - e_i is one common term >= 0 (numerator: the largest e is in E, so sum_E e >= e_min), and
    # at most sum_E e - e_min because the denominator m - (at most m-1 weights <= 1) is >= 1.
    y = tardiness_bounds(ts, scheduler)
    terms = tardiness_terms(ts, scheduler)
    assert all(yi - ei == terms.slack for yi, ei in zip(y, ts.e))
    assert 0 <= terms.slack <= terms.sum_e - terms.e_min
    assert all(yi >= ei > 0 for yi, ei in zip(y, ts.e))
    assert ts.m - terms.sum_w >= 1


@SETTINGS
@given(task_sets(dag=False), st.sampled_from(SCHEDULERS), st.data())
def test_y_non_decreasing_in_a_budget(ts: TaskSet, scheduler: str, data) -> None:
    # Raising e_k raises e_i, sum_E e (a top-m sum) and W_k; e_min moves only if e_k is the unique
    # minimum, and then by at most the raise, which sum_E e matches when every task is in E (n <= m).
    k = data.draw(st.integers(0, ts.n - 1))
    e = ts.e
    unique_min = e.count(min(e)) == 1 and e[k] == min(e)
    if unique_min and ts.n > ts.m:
        return
    room = ts.p_r[k] - e[k]  # keep e_k <= p_k^[r] (Def. 10)
    if room == 0:
        return
    grown = list(e)
    grown[k] += data.draw(st.fractions(0, 1, max_denominator=8)) * room
    before = tardiness_bounds(ts, scheduler)
    after = tardiness_bounds(TaskSet.from_columns(ts.m, e=grown, p=ts.p, p_r=ts.p_r), scheduler)
    assert all(b >= a for a, b in zip(before, after))


@SETTINGS
@given(task_sets(dag=False), st.data())
def test_y_non_decreasing_in_a_weight(ts: TaskSet, data) -> None:
    # A shorter recovery period raises W_k under AUS: the denominator shrinks, the numerator stays.
    k = data.draw(st.integers(0, ts.n - 1))
    p_r = list(ts.p_r)
    p_r[k] = ts.e[k] + data.draw(st.fractions(0, 1, max_denominator=8)) * (p_r[k] - ts.e[k])
    before = tardiness_bounds(ts, "aus")
    after = tardiness_bounds(ts.with_recovery_periods(p_r), "aus")
    assert all(b >= a for a, b in zip(before, after))


@SETTINGS
@given(task_sets(dag=False), st.sampled_from(SCHEDULERS), st.integers(0, 4))
def test_y_non_increasing_in_m_from_n_up(ts: TaskSet, scheduler: str, extra: int) -> None:
    # For m >= n every task is in E (numerator fixed) and m -> m+1 adds 1 - W_(m) >= 0 to the denominator.
    low = ts.with_m(ts.n + extra)
    high = ts.with_m(ts.n + extra + 1)
    assert all(h <= lo for lo, h in zip(tardiness_bounds(low, scheduler), tardiness_bounds(high, scheduler)))


def test_y_is_not_monotone_everywhere() -> None:
    # The pessimistic form has m cost terms: fewer processors can *lower* Y (preconditions hold on both).
    one = TaskSet.from_columns(1, e=[1, 1], p=[4, 4])
    assert tardiness_bounds(one, "gedf-np") == (1, 1)
    assert tardiness_bounds(one.with_m(2), "gedf-np") == (Fr(11, 7), Fr(11, 7))  # 1 + 1/(2 - 1/4)
    # Raising the unique smallest budget raises e_min: Y_2 = e_2 + e_max - e_min drops from 9 to 7.
    assert tardiness_bounds(TaskSet.from_columns(1, e=[1, 5], p=[20, 20]), "gedf-np")[1] == 9
    assert tardiness_bounds(TaskSet.from_columns(1, e=[3, 5], p=[20, 20]), "gedf-np")[1] == 7


@SETTINGS
@given(task_sets(), st.sampled_from(SCHEDULERS))
def test_theta_and_staleness_shape(ts: TaskSet, scheduler: str) -> None:
    # Theta_k = p_k + Y_k >= p_k + e_k; A(base) >= Theta + p + max(phi, p + J + kappa) by definition,
    # so >= Theta + 2p; a derived table's A exceeds each source's by Theta_k + p_k > 0.
    theta = response_time_bounds(ts, scheduler)
    a = staleness_bounds(ts, scheduler)
    for k, t in enumerate(ts.tasks):
        assert theta[k] >= t.p + t.e
        if t.is_base:
            assert a[k] == theta[k] + t.p + max(t.phi, t.p + t.J + t.kappa) >= theta[k] + 2 * t.p
        else:
            assert a[k] == theta[k] + t.p + max(a[s] for s in t.sources)
            assert all(a[k] > a[s] for s in t.sources)


@SETTINGS
@given(task_sets(), st.sampled_from(SCHEDULERS), st.data())
def test_staleness_non_decreasing_in_feed_lag(ts: TaskSet, scheduler: str, data) -> None:
    # Theta does not depend on phi, J, kappa; the base term's max and the DAG's max are monotone.
    k = data.draw(st.integers(0, ts.n - 1))
    t = ts.tasks[k]
    bumped = Task(e=t.e, p=t.p, p_r=t.p_r, phi=t.phi + data.draw(st.integers(0, 50)), J=t.J,
                  kappa=t.kappa + data.draw(st.integers(0, 5)), sources=t.sources)
    other = TaskSet(tasks=ts.tasks[:k] + (bumped,) + ts.tasks[k + 1:], m=ts.m)
    assert all(b >= a for a, b in zip(staleness_bounds(ts, scheduler), staleness_bounds(other, scheduler)))


@SETTINGS
@given(task_sets(), st.fractions(1, 4, max_denominator=7), st.integers(0, 500))
def test_bounds_scale_with_time(ts: TaskSet, c: Fr, lam: int) -> None:
    # Every formula is homogeneous of degree 1 in time (W and u are ratios of times).
    scaled = TaskSet(tasks=tuple(Task(e=c * t.e, p=c * t.p, p_r=c * t.p_r, phi=c * t.phi, J=c * t.J,
                                      kappa=c * t.kappa, sources=t.sources) for t in ts.tasks), m=ts.m)
    for f in (tardiness_bounds, response_time_bounds, staleness_bounds):
        assert f(scaled, "aus") == tuple(c * v for v in f(ts, "aus"))
    for k, t in enumerate(ts.tasks):
        if t.is_base and t.p_r < t.p:
            assert recovery_time_bound(scaled, k, c * lam) == c * recovery_time_bound(ts, k, lam)


@SETTINGS
@given(task_sets(dag=False), st.integers(0, 10_000), st.integers(0, 10_000))
def test_recovery_time_is_the_root_of_the_counting_inequality(ts: TaskSet, lam: int, lam2: int) -> None:
    # (24): (lambda + J + x)/p + 1 > (x - Theta)/p^[r] holds exactly for x < x_k and fails beyond it;
    # x_k is linear in lambda with slope p^[r]/(p - p^[r]) and at least Theta p/(p - p^[r]) >= Theta.
    theta = response_time_bounds(ts, "aus")
    for k, t in enumerate(ts.tasks):
        if not t.p_r < t.p:
            with pytest.raises(InputError) as err:
                recovery_time_bound(ts, k, lam)
            assert err.value.field == f"tasks[{k}].p_r"
            continue
        x = recovery_time_bound(ts, k, lam)
        assert (lam + t.J + x) / t.p + 1 == (x - theta[k]) / t.p_r
        assert x >= theta[k] * t.p / (t.p - t.p_r) >= theta[k]
        assert recovery_time_bound(ts, k, lam2) - x == (lam2 - lam) * t.p_r / (t.p - t.p_r)


@SETTINGS
@given(task_sets(dag=False))
def test_rule_a_is_the_fastest_single_recovery(ts: TaskSet) -> None:
    # e/min(1, m - U + u): p^[r] in [e, p] when U <= m; T_i alone in recovery brings the share to
    # U - u_i + min(1, m - U + u_i) <= m, exactly m unless p^[r] = e (no shorter period is allowed).
    ts = feasible(ts)
    pr = rule_a_recovery_periods(ts)
    rts = ts.with_recovery_periods(pr)
    for i in range(ts.n):
        assert ts.e[i] <= pr[i] <= ts.p[i]
        share = total_share(rts, [i])
        assert share <= ts.m and (share == ts.m or pr[i] == ts.e[i])
        assert eq6_lhs(rts, [], entering=[i]) == share


@SETTINGS
@given(task_sets(dag=False))
def test_rule_b_lets_everyone_recover_at_once(ts: TaskSet) -> None:
    ts = feasible(ts)
    pr = rule_b_recovery_periods(ts)
    assert all(e <= r <= p for e, r, p in zip(ts.e, pr, ts.p))
    assert total_share(ts.with_recovery_periods(pr), range(ts.n)) <= ts.m


@SETTINGS
@given(task_sets(dag=False), st.data())
def test_eq6_and_arbitration(ts: TaskSet, data) -> None:
    idx = st.sets(st.integers(0, ts.n - 1))
    before = data.draw(idx)
    leaving = data.draw(st.sets(st.sampled_from(sorted(before)))) if before else set()
    entering = data.draw(st.sets(st.sampled_from(sorted(set(range(ts.n)) - before)))) if len(before) < ts.n else set()
    after = (before - leaving) | entering
    assert eq6_lhs(ts, before, leaving, entering) == total_share(ts, after)
    assert admissible(ts, after) == (total_share(ts, after) <= ts.m + ADMIT_TOL)
    # greedy admission: the result fits; a refused task fits neither then nor at the end (totals only grow)
    rec = before - leaving
    if not admissible(ts, rec):
        return
    eligible = data.draw(st.sets(st.sampled_from(sorted(set(range(ts.n)) - rec)))) if len(rec) < ts.n else set()
    admitted = arbitrate(ts, rec, eligible)
    assert set(admitted) <= eligible and admissible(ts, rec | set(admitted))
    incs = [ts.recovery_share(k) - ts.u[k] for k in admitted]
    assert incs == sorted(incs)
    for k in eligible - set(admitted):
        assert not admissible(ts, rec | set(admitted) | {k})


@SETTINGS
@given(task_sets())
def test_bounds_table_matches_the_functions(ts: TaskSet) -> None:
    df = bounds_table(ts, "aus", lam=100)
    assert df["Y"].tolist() == [float(v) for v in tardiness_bounds(ts, "aus")]
    assert df["A"].tolist() == [float(v) for v in staleness_bounds(ts, "aus")]
    for k, t in enumerate(ts.tasks):
        if t.is_base and t.p_r < t.p:
            assert df["x"].iloc[k] == float(recovery_time_bound(ts, k, 100))
        else:
            assert math.isnan(df["x"].iloc[k])


# -- bad input -------------------------------------------------------------------------------------

def tasks_with(k: int, **changes) -> tuple[Task, ...]:
    base = [Task(e=1, p=4), Task(e=2, p=6, p_r=3), Task(e=1, p=5, sources=(0, 1))]
    t = base[k]
    base[k] = Task(**{**t.__dict__, **changes})
    return tuple(base)


@pytest.mark.parametrize("k, changes, field", [
    (0, dict(e=0), "tasks[0].e"),
    (1, dict(e=-1), "tasks[1].e"),
    (0, dict(e=5), "tasks[0].e"),  # e > p: u > 1
    (0, dict(p=0), "tasks[0].p"),
    (1, dict(p_r=7), "tasks[1].p_r"),
    (1, dict(p_r=1.5), "tasks[1].p_r"),
    (0, dict(delta_f=-1), "tasks[0].delta_f"),
    (0, dict(phi=-1), "tasks[0].phi"),
    (0, dict(J=5), "tasks[0].J"),
    (0, dict(J=-1), "tasks[0].J"),
    (0, dict(kappa=-0.5), "tasks[0].kappa"),
    (0, dict(e=float("nan")), "tasks[0].e"),
    (0, dict(p=float("inf")), "tasks[0].p"),
    (0, dict(e=True), "tasks[0].e"),
    (1, dict(p="6"), "tasks[1].p"),
    (2, dict(sources=(3,)), "tasks[2].sources"),
    (2, dict(sources=(2,)), "tasks[2].sources"),
    (2, dict(sources=(0, 0)), "tasks[2].sources"),
    (2, dict(sources=(True,)), "tasks[2].sources"),
    (0, dict(sources=(2,)), "tasks[2].sources"),  # cycle 0 -> 2 -> 0: named at the edge that closes it
    (2, dict(name=""), "tasks[2].name"),
])
def test_bad_tasks_name_the_field(k: int, changes: dict, field: str) -> None:
    with pytest.raises(InputError) as err:
        TaskSet(tasks=tasks_with(k, **changes), m=1)
    assert err.value.field == field and str(err.value).startswith(field)


def test_other_bad_input_names_the_field() -> None:
    good = TaskSet(tasks=tasks_with(0), m=1)
    assert good.e[1] == 2 and good.p_r[0] == 4  # p^[r] defaults to p
    assert TaskSet.from_columns(1, e=[0.1], p=[0.3]).e == (Fr(1, 10),)  # floats read as their decimals
    cases = [
        (lambda: TaskSet(tasks=tasks_with(0), m=0), "m"),
        (lambda: TaskSet(tasks=tasks_with(0), m=1.5), "m"),
        (lambda: TaskSet(tasks=(), m=1), "tasks"),
        (lambda: TaskSet.from_columns(1, e=[1, 2], p=[3]), "p"),
        (lambda: tardiness_bounds(good, "edf"), "scheduler"),
        (lambda: rule_a_recovery_periods(TaskSet.from_columns(1, e=[3, 3], p=[4, 4])), "utilization"),
        (lambda: rule_b_recovery_periods(TaskSet.from_columns(1, e=[3, 3], p=[4, 4])), "utilization"),
        (lambda: recovery_time_bound(good, 0, 5), "tasks[0].p_r"),
        (lambda: recovery_time_bound(good, 1, -1), "lambda"),
        (lambda: recovery_time_bound(good, 3, 5), "k"),
        (lambda: recovery_time(4, 3, 3, 9), "p_r"),
        (lambda: bounds_table(good, "aus", lam=-1), "lambda"),
        (lambda: total_share(good, [5]), "recovery"),
        (lambda: eq6_lhs(good, [0], leaving=[1]), "leaving"),
        (lambda: eq6_lhs(good, [0], entering=[0]), "entering"),
        (lambda: arbitrate(good, [0], [0]), "eligible"),
        (lambda: default_budget(-1, 0.1, 300), "alpha"),
        (lambda: default_budget(3, 0.1, 300, c=0), "c"),
        (lambda: update_length_derived(5, 5, 3), "trailing_edge"),
        (lambda: update_length_base([], 1), "backlog"),
    ]
    for call, field in cases:
        with pytest.raises(InputError) as err:
            call()
        assert err.value.field == field, (field, err.value)


def test_preconditions_report_utilization() -> None:
    over = TaskSet.from_columns(1, e=[3, 3], p=[4, 4])
    met = {p.name: p.met for p in preconditions(over)}
    assert met == {"task-utilization": True, "utilization": False}
    assert all(p.met for p in preconditions(over.with_m(2)))
    assert tardiness_bounds(over, "gedf-np") == (3, 3)  # still finite: Theorem 1's premise is the checks' business


def test_bounds_table_of_a_workload_is_its_task_sets() -> None:
    """``bounds_table(workload, policy)`` as the issue writes it: the workload is mapped to its
    task set (budgets provisioned, recovery periods by the rule asked for), then tabled."""
    from staleness_lab.experiments.leontyev.sweeps import fig9_workload
    from staleness_lab.theory.leontyev.workloads import from_workload

    workload = fig9_workload(0, "worst", "synchronous")
    for scheduler, rule in [("aus", "single"), ("aus", "all"), ("gedf-np", "single")]:
        direct = bounds_table(workload, scheduler, lam=5000, recovery_rule=rule)
        mapped = bounds_table(from_workload(workload, scheduler, recovery_rule=rule), scheduler, lam=5000)
        pd.testing.assert_frame_equal(direct, mapped)
    assert not bounds_table(workload, "aus", recovery_rule="all").equals(bounds_table(workload, "aus"))
