"""AUS's reweighting rules (i)-(vii) one at a time (digest Sec. 2.5, A8-A10), each on a small
hand-built workload in which exactly that rule fires at a known instant t_c.

Every workload is replayed files ``(arrival, timestamp)``, ``beta = 0`` (a job costs exactly
``alpha``, whatever it loads) and given budgets e_k, recovery periods p^[r] and thresholds
Delta F, so eq. 6 is plain arithmetic. A budget below ``alpha`` is on purpose: eq. 6 reads
budgets, the engine runs actual costs (it never cuts a job at e_k), so a long job can block a
track or still be executing at t_c without breaking Def. 9. Expected values are derived in the
comments from the rule texts, not read off a run. A "blocker" B is a table whose single long
job holds the only track from 0.5 on, so that another table's job stays pending (rules ii-iv
with a pending job, A8); its threshold is never reached.
"""

from __future__ import annotations

import math

from staleness_lab.model import Table, Workload
from staleness_lab.policies.registry import get_policy
from staleness_lab.sim.engine import run
from tests.policies.test_aus import jobs_of


def table(name: str, files, p: float, p_r: float, threshold: float, cost: float = 1.0) -> Table:
    """A base table replaying ``files`` with nominal period p, e_k = 1, p^[r] and Delta F."""
    return Table(name, alpha=cost, beta=0, arrivals=files, nominal_period=p, budget=1, recovery_period=p_r,
                 recovery_threshold=threshold)


def blocker(busy_until: float) -> Table:
    """One file at 0.5, one job on [0.5, busy_until]; u = 1/20, increment 0, never eligible."""
    return table("B", [(0.5, 0.5)], p=20, p_r=20, threshold=100, cost=busy_until - 0.5)


def aus(*tables: Table, horizon: float, tracks: int = 1):
    return run(Workload(tables=tables, tracks=tracks, horizon=horizon), get_policy("aus"), "aus")


def modes_of(trace) -> list[tuple]:
    modes = trace.frames["modes"]
    return [tuple(r) for r in modes[["time", "table", "mode_from", "mode_to", "rule"]].itertuples(index=False)]


def test_rule_i_first_release_at_the_switch():
    """Rule (i): no job of T_k ever released -> r_{k,1} = t_c.

    V: p = 3, p^[r] = 1.5, Delta F = 2; its first file (5, 5) lands at 5. Before 5 V is fresh
    (TE = F = 0), so nothing was released. At 5: TE - F = 5 > 2, eq. 6: u + (e/p^[r] - u) =
    1/3 + 1/3 <= 1 -> admitted at t_c = 5 (the admission precedes the release step of the
    instant, Sec. 2.2). (i): r_1 = t_c = 5; eq. 3 with recovery in force from 5: d_1 = 5 + 1.5
    = 6.5 (eq. 4 alone would give d = 5 + 3 = 8). The job runs [5, 6], loads (0, 5]: fresh ->
    RN at max(f, d) = max(6, 6.5) = 6.5 (Sec. 2.3)."""
    trace = aus(table("V", [(5, 5)], p=3, p_r=1.5, threshold=2), horizon=8)
    assert jobs_of(trace, "V") == [(5, 6.5, 5, 6)]
    assert modes_of(trace) == [(5, "V", "N", "R", "NR/i"), (6.5, "V", "R", "N", "RN")]


def test_rule_ii_with_a_pending_job_is_deferred_to_its_completion():
    """Rule (ii): d_{k,j} <= t_c -> r_{k,j+1} = t_c; with T_{k,j} pending, released at its
    completion (A8). (E4 covers (ii) on a finished job.)

    B holds the track on [0.5, 12]. V: p = 3, p^[r] = 1.5, Delta F = 8, files (1, 1), (10, 10).
    At 1 V releases r_1 = 1, d_1 = 4 (gap 1 <= 8), pending behind B. At 10: gap 10 - 0 = 10 > 8;
    eq. 6: 1/20 + 1/3 + 1/3 <= 1 -> admitted at t_c = 10; T_{V,1} pending with d_1 = 4 <= 10 ->
    (ii): r_2 = t_c = 10. T_{V,1} runs [12, 13] (loads (0, 1]); at 13 V is not fresh (TE = 10),
    so FIXED(10, 13) releases r_2 = 10 (retroactive; eq. 4 alone would give r = d_1 = 4) with
    d_2 = 10 + p^[r] = 11.5. T_{V,2} runs [13, 14], loads (1, 10]: fresh -> RN at
    max(14, 11.5) = 14."""
    v = table("V", [(1, 1), (10, 10)], p=3, p_r=1.5, threshold=8)
    trace = aus(blocker(12), v, horizon=16)
    assert jobs_of(trace, "B") == [(0.5, 20.5, 0.5, 12)]
    assert jobs_of(trace, "V") == [(1, 4, 12, 13), (10, 11.5, 13, 14)]
    assert modes_of(trace) == [(10, "V", "N", "R", "NR/ii"), (14, "V", "R", "N", "RN")]


def test_rule_iii_with_a_finished_job():
    """Rule (iii): t_c < d_{k,j} <= t_c + p^[r] -> r_{k,j+1} = d_{k,j}.

    V: p = 4, p^[r] = 2, Delta F = 2, files (1, 1), (4, 4). T_{V,1}: r = 1, d = 5, runs [1, 2].
    At 4: gap 4 - 1 = 3 > 2; eq. 6: 1/4 + 1/4 <= 1 -> t_c = 4; 4 < d_1 = 5 <= 4 + 2 -> (iii):
    r_2 = d_1 = 5 (rule (ii) would give 4), d_2 = 5 + p^[r] = 7 (eq. 4 alone: 5 + 4 = 9).
    T_{V,2} runs [5, 6], loads (1, 4]: fresh -> RN at max(6, 7) = 7."""
    trace = aus(table("V", [(1, 1), (4, 4)], p=4, p_r=2, threshold=2), horizon=10)
    assert jobs_of(trace, "V") == [(1, 5, 1, 2), (5, 7, 5, 6)]
    assert modes_of(trace) == [(4, "V", "N", "R", "NR/iii"), (7, "V", "R", "N", "RN")]


def test_rule_iii_with_a_pending_job_is_deferred_to_its_completion():
    """Rule (iii) with T_{k,j} pending (A8): r_{k,j+1} = d_{k,j}, released when T_{k,j} completes.

    B holds the track on [0.5, 6]. V as in the finished case (p = 4, p^[r] = 2, Delta F = 2):
    r_1 = 1, d_1 = 5, pending. At 4: gap 4 - 0 = 4 > 2; eq. 6: 1/20 + 1/4 + 1/4 <= 1 -> t_c = 4;
    4 < 5 <= 6 -> (iii): r_2 = d_1 = 5. T_{V,1} runs [6, 7] (loads (0, 1]); at 7 TE = 4 > F = 1,
    so r_2 = 5 (retroactive), d_2 = 5 + 2 = 7. T_{V,2} runs [7, 8], loads (1, 4]: fresh -> RN at
    max(8, 7) = 8."""
    v = table("V", [(1, 1), (4, 4)], p=4, p_r=2, threshold=2)
    trace = aus(blocker(6), v, horizon=10)
    assert jobs_of(trace, "V") == [(1, 5, 6, 7), (5, 7, 7, 8)]
    assert modes_of(trace) == [(4, "V", "N", "R", "NR/iii"), (8, "V", "R", "N", "RN")]


def test_rules_ii_and_iii_include_their_upper_boundaries():
    """(ii) holds for d_{k,j} = t_c and (iii) for d_{k,j} = t_c + p^[r] (both "<=" in Sec. 2.5).
    At these boundaries the neighbouring rule would plan the same release ((iii) r = d = t_c;
    (iv) re-dates to d = t_c + p^[r] = the old d), so the mode log's name tells them apart.

    (ii): V p = 3, p^[r] = 1.5, Delta F = 2, files (1, 1), (4, 4). T_{V,1} (1, 4) runs [1, 2];
    at 4: gap 3 > 2 -> t_c = 4 = d_1 -> (ii): r_2 = 4, d_2 = 5.5; [4, 5] leaves V fresh -> RN
    at max(5, 5.5) = 5.5.
    (iii): V p = 4, p^[r] = 2, Delta F = 1.5, files (1, 1), (3, 3). T_{V,1} (1, 5) runs [1, 2];
    at 3: gap 2 > 1.5 -> t_c = 3, d_1 = 5 = 3 + 2 -> (iii): r_2 = 5, d_2 = 7; [5, 6] -> RN at 7."""
    ii = aus(table("V", [(1, 1), (4, 4)], p=3, p_r=1.5, threshold=2), horizon=8)
    assert jobs_of(ii, "V") == [(1, 4, 1, 2), (4, 5.5, 4, 5)]
    assert modes_of(ii) == [(4, "V", "N", "R", "NR/ii"), (5.5, "V", "R", "N", "RN")]
    iii = aus(table("V", [(1, 1), (3, 3)], p=4, p_r=2, threshold=1.5), horizon=8)
    assert jobs_of(iii, "V") == [(1, 5, 1, 2), (5, 7, 5, 6)]
    assert modes_of(iii) == [(3, "V", "N", "R", "NR/iii"), (7, "V", "R", "N", "RN")]


def test_rule_iv_redates_a_pending_job_and_rekeys_it():
    """Rule (iv): d_{k,j} > t_c + p^[r] -> T_{k,j} itself gets r := t_c, d := t_c + p^[r]; a
    pending job is re-keyed for GEDF-NP and the trace keeps its old release in ``redated_from``
    (A12).

    B holds the track on [0.5, 10]. C: p = 4, one file (2, 2): r = 2, d = 6, pending. V: p = 6,
    p^[r] = 2, Delta F = 2, files (1, 1), (3, 3): r_1 = 1, d_1 = 7 (gap 1 <= 2), pending. At 3:
    gap 3 - 0 = 3 > 2; eq. 6: 1/20 + 1/4 + 1/6 + (1/2 - 1/6) = 0.8 <= 1 -> t_c = 3; d_1 = 7 >
    3 + 2 -> (iv): T_{V,1} becomes r = 3, d = 5, redated_from = 1. At 10 GEDF-NP picks V (d = 5)
    before C (d = 6); without the re-dating C (6 < 7) would go first. T_{V,1} runs [10, 11]
    (loads (0, 1], TE = 3: not fresh); eq. 4 with the new d: r_2 = d_1 = 5 (retroactive),
    d_2 = 5 + p^[r] = 7. At 11 C (d = 6) runs [11, 12] before T_{V,2} (d = 7) [12, 13], which
    loads (1, 3]: fresh -> RN at max(13, 7) = 13."""
    c = table("C", [(2, 2)], p=4, p_r=4, threshold=100)
    v = table("V", [(1, 1), (3, 3)], p=6, p_r=2, threshold=2)
    trace = aus(blocker(10), c, v, horizon=14)
    assert jobs_of(trace, "V") == [(3, 5, 10, 11), (5, 7, 12, 13)]
    assert jobs_of(trace, "C") == [(2, 6, 11, 12)]
    redated = trace.jobs.loc[trace.jobs["table"] == "V", "redated_from"].tolist()
    assert redated[0] == 1 and math.isnan(redated[1])
    assert trace.jobs.loc[trace.jobs["table"] != "V", "redated_from"].isna().all()
    assert modes_of(trace) == [(3, "V", "N", "R", "NR/iv"), (13, "V", "R", "N", "RN")]


def test_rule_iv_on_a_finished_job_moves_the_next_eq4_release():
    """Rule (iv) on a finished T_{k,j}: d_{k,j} := t_c + p^[r] only moves the base of the next
    eq.-4 release (Sec. 2.1, 2.5).

    V: p = 6, p^[r] = 2, Delta F = 1.5, files (1, 1), (3, 3). T_{V,1}: r = 1, d = 7, runs [1, 2].
    At 3: gap 3 - 1 = 2 > 1.5; eq. 6: 1/6 + 1/3 <= 1 -> t_c = 3; d_1 = 7 > 3 + 2 -> (iv):
    d_1 := 5. Eq. 4 at T0 = max(5, f_1 = 2) = 5, V not fresh: r_2 = 5 (eq. 4 with the old
    d_1 would give 7), d_2 = 5 + 2 = 7. T_{V,2} runs [5, 6], loads (1, 3]: fresh -> RN at
    max(6, 7) = 7. The finished job's record keeps its times (r = 1, d = 7)."""
    trace = aus(table("V", [(1, 1), (3, 3)], p=6, p_r=2, threshold=1.5), horizon=10)
    assert jobs_of(trace, "V") == [(1, 7, 1, 2), (5, 7, 5, 6)]
    assert modes_of(trace) == [(3, "V", "N", "R", "NR/iv"), (7, "V", "R", "N", "RN")]


def test_rule_v_executing_job_already_past_its_deadline():
    """Rule (v): T_{k,j} executing at t_c with d_{k,j} <= t_c -> r_{k,j+1} = t_c (at f).

    V: p = 3, p^[r] = 1.5, Delta F = 2, a job costs 5; files (1, 1), (5, 5). T_{V,1}: r = 1,
    d = 4, runs [1, 6]. At 5: gap 5 - 0 = 5 > 2; eq. 6: 1/3 + 1/3 <= 1 -> t_c = 5, T_{V,1}
    executing. At f = 6: d_1 = 4 <= t_c = 5 -> (v): r_2 = t_c = 5 ((vi) would give 4), d_2 =
    5 + 1.5 = 6.5; V not fresh at 6 (TE = 5 > F = 1), so it releases at 6 with r = 5. T_{V,2}
    runs [6, 11], loads (1, 5]: fresh -> RN at max(11, 6.5) = 11."""
    trace = aus(table("V", [(1, 1), (5, 5)], p=3, p_r=1.5, threshold=2, cost=5), horizon=12)
    assert jobs_of(trace, "V") == [(1, 4, 1, 6), (5, 6.5, 6, 11)]
    assert modes_of(trace) == [(5, "V", "N", "R", "NR/v"), (11, "V", "R", "N", "RN")]


def test_rule_vi_executing_job_finishing_late():
    """Rule (vi): T_{k,j} executing at t_c, d_{k,j} > t_c and f_{k,j} >= d_{k,j} ->
    r_{k,j+1} = d_{k,j}.

    V: p = 3, p^[r] = 1.5, Delta F = 1.5, a job costs 4; files (1, 1), (2, 2). T_{V,1}: r = 1,
    d = 4, runs [1, 5]. At 2: gap 2 - 0 = 2 > 1.5; eq. 6: 1/3 + 1/3 <= 1 -> t_c = 2. At f = 5:
    d_1 = 4 > 2 and 5 >= 4 -> (vi): r_2 = d_1 = 4 (retroactive; (v) would give 2), d_2 =
    4 + p(T, 4) = 4 + 1.5 = 5.5. T_{V,2} runs [5, 9], loads (1, 2]: fresh -> RN at
    max(9, 5.5) = 9."""
    trace = aus(table("V", [(1, 1), (2, 2)], p=3, p_r=1.5, threshold=1.5, cost=4), horizon=12)
    assert jobs_of(trace, "V") == [(1, 4, 1, 5), (4, 5.5, 5, 9)]
    assert modes_of(trace) == [(2, "V", "N", "R", "NR/vi"), (9, "V", "R", "N", "RN")]


def test_rule_vii_executing_job_finishing_early_uses_f():
    """Rule (vii): T_{k,j} executing at t_c, d_{k,j} > t_c, f_{k,j} < d_{k,j} ->
    r_{k,j+1} = f (1 - p^[r]/p) + r_{k,j} p^[r]/p + p^[r], with f, not t_c (A10).

    V: p = 4, p^[r] = 1, Delta F = 1.5, a job costs 2; files (1, 1), (2, 2). T_{V,1}: r = 1,
    d = 5, runs [1, 3]. At 2: gap 2 > 1.5; eq. 6: 1/4 + (1 - 1/4) = 1 <= 1 -> t_c = 2. At f = 3:
    d = 5 > 2, 3 < 5 -> (vii): r_2 = 3 * 3/4 + 1 * 1/4 + 1 = 3.5 (= f + p^[r] (d - f)/p; with
    t_c: 2.75), d_2 = 3.5 + 1 = 4.5. T_{V,2} runs [3.5, 5.5], loads (1, 2]: fresh -> RN at
    max(5.5, 4.5) = 5.5."""
    trace = aus(table("V", [(1, 1), (2, 2)], p=4, p_r=1, threshold=1.5, cost=2), horizon=8)
    assert jobs_of(trace, "V") == [(1, 5, 1, 3), (3.5, 4.5, 3.5, 5.5)]
    assert modes_of(trace) == [(2, "V", "N", "R", "NR/vii"), (5.5, "V", "R", "N", "RN")]


def test_admitted_while_executing_then_fresh_names_the_rule_and_takes_rn():
    """A task admitted while its job executes whose table that job leaves fresh: the switch falls
    under rule (vii) by its times, but RN takes precedence on completion (Sec. 2.1 step 2, A9),
    so r* is not used; the mode log names (vii) (it used to show a bare ``NR``).

    A, V: p = 3, p^[r] = 1.5, Delta F = 8 (increment 1/3 each, m = 1), files (1, 1), (10, 10),
    (13, 13). T_{A,1} (1, 4) runs [1, 2], T_{V,1} (1, 4) [2, 3]. At 10 both gaps are 9 > 8 with
    equal increments; A wins on index (2/3 + 1/3 = 1), V is refused (4/3 > 1). A: (ii) r = 10,
    d = 11.5; V by eq. 4 r = 10, d = 13. A runs [10, 11] and is fresh -> RN at max(11, 11.5) =
    11.5. V runs [11, 12]; at 11.5, with A back in N, V (still eligible: TE - F = 10 - 1) is
    admitted while executing: t_c = 11.5, d = 13 > t_c, f = 12 < d -> (vii) by its times
    (r* = 12 + 1.5 * 1/3 = 12.5). But T_{V,2} loads (1, 10]: fresh at 12 -> RN at max(12, 13)
    = 13 and the next release is the first non-fresh instant >= 13: the file at 13, r = 13,
    d = 13 + 3 = 16 (normal at 13), not 12.5. At 13 A (same r, d; index first) runs [13, 14],
    V [14, 15]."""
    files = [(1, 1), (10, 10), (13, 13)]
    a, v = (table(name, files, p=3, p_r=1.5, threshold=8) for name in ("A", "V"))
    trace = aus(a, v, horizon=16)
    assert jobs_of(trace, "A") == [(1, 4, 1, 2), (10, 11.5, 10, 11), (13, 16, 13, 14)]
    assert jobs_of(trace, "V") == [(1, 4, 2, 3), (10, 13, 11, 12), (13, 16, 14, 15)]
    assert modes_of(trace) == [(10, "A", "N", "R", "NR/ii"), (11.5, "A", "R", "N", "RN"),
                               (11.5, "V", "N", "R", "NR/vii"), (13, "V", "R", "N", "RN")]
