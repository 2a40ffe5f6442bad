"""Hand-derived traces: every expected number below is derived in a comment from the model
(Golab et al.; the engine's module docstring) and checked exactly (to 1e-9).

Staleness S(t) = t - F(t) rises with slope 1 and drops when an update lands, so its integral over
a stretch where it rises from s0 to s1 is the trapezoid (s1 - s0) * (s0 + s1) / 2.
"""

from __future__ import annotations

import numpy as np
import pytest

import staleness_lab as sl
from staleness_lab.policies import BoundPolicy

EXACT = dict(rel=0, abs=1e-9)


def freshness_at(result, table: str, t: float, *, left: bool = False) -> float:
    """F(t) from the freshness step function (right-continuous; ``left`` gives F(t-))."""
    steps = result.freshness[result.freshness["table"] == table]
    times = steps["time"].to_numpy()
    values = steps["freshness"].to_numpy()
    k = np.searchsorted(times, t, side="left" if left else "right") - 1
    if k < 0:  # F(0-) is the initial freshness
        k = 0
    return float(values[k])


def staleness_at(result, table: str, t: float, *, left: bool = False) -> float:
    return t - freshness_at(result, table, t, left=left)


def row(result, table: str):
    frame = result.tables
    return frame[frame["table"] == table].iloc[0]


def jobs_of(result, table: str):
    frame = result.jobs
    return frame[frame["table"] == table].reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# 1-2. One periodic table on one track: the sawtooth
# ---------------------------------------------------------------------------------------------


def periodic_one(beta: float, priority: float = 1.0, **top) -> dict:
    return {
        "tracks": 1,
        "horizon": 100,
        **top,
        "tables": [{"name": "a", "period": 10, "phase": 0, "alpha": 1, "beta": beta, "priority": priority}],
    }


@pytest.mark.parametrize("policy", ["fifo", "edf", "edf-p", "max-benefit", "random"])
def test_sawtooth_alpha_only(policy):
    # Arrivals at 10, 20, ..., 100 (k = 1, 2, ...); each job loads the 10 new units and costs
    # E = 1 + 0*10 = 1, so it runs [10k, 10k + 1] and sets F = 10k at 10k + 1.
    #   [0, 10]:   S from 0 to 10                       -> 10 * 10 / 2        =  50
    #   [10, 11]:  S from 10 to 11 (job 1 running)      -> (10 + 11) / 2      =  10.5
    #   [11, 91]:  eight teeth, S from 1 to 11 each     -> 8 * 10 * (1+11)/2  = 480
    #   [91, 100]: S from 1 to 10                       -> 9 * (1 + 10) / 2   =  49.5
    #   total 590; the peak is S(10k+1 -) = 11; 9 updates land (11, 21, ..., 91).
    # The arrival at 100 = horizon is processed and its job starts, but it would finish at 101.
    r = sl.simulate(periodic_one(beta=0.0), policy)
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(590.0, **EXACT)
    assert a["max_staleness"] == pytest.approx(11.0, **EXACT)
    assert a["updates"] == 9
    assert a["mean_staleness"] == pytest.approx(5.9, **EXACT)
    jobs = jobs_of(r, "a")
    assert jobs["start"].tolist() == [10.0 * k for k in range(1, 10)]
    assert jobs["finish"].tolist() == [10.0 * k + 1 for k in range(1, 10)]
    assert jobs["data_from"].tolist() == [10.0 * (k - 1) for k in range(1, 10)]
    assert jobs["data_to"].tolist() == [10.0 * k for k in range(1, 10)]
    assert jobs["release"].tolist() == jobs["start"].tolist()
    # the job started at the horizon is in flight, not completed
    in_flight = r.trace.in_flight
    assert len(in_flight) == 1
    assert in_flight[0][3] == 100.0  # its start
    assert freshness_at(r, "a", 100.0) == 90.0
    assert r.summary()["jobs"] == 9
    # events = arrivals (10, 20, ..., 100) + completions (9)
    assert r.summary()["events"] == 19


def test_long_sawtooth_over_many_arrival_chunks():
    # Period 1, E = 0.5, horizon 40000 (40000 arrivals, more than one chunk of the feed):
    #   [0, 1]: S 0 -> 1 (0.5); [1, 1.5]: S 1 -> 1.5 (0.625); teeth [k + .5, k + 1.5] for
    #   k = 1..T-2, S 0.5 -> 1.5 (1 each: T - 2); [T - .5, T]: S 0.5 -> 1 (0.375).
    #   Total T - 0.5; peak 1.5; T - 1 updates (the job started at T is in flight);
    #   events = T arrivals + (T - 1) completions.
    T = 40000
    w = {"tracks": 1, "horizon": T, "tables": [{"name": "a", "period": 1, "alpha": 0.5, "beta": 0, "priority": 1}]}
    r = sl.simulate(w, "fifo")
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(T - 0.5, rel=1e-12)
    assert a["max_staleness"] == pytest.approx(1.5, abs=1e-9)
    assert a["updates"] == T - 1
    assert r.summary()["events"] == 2 * T - 1
    jobs = r.jobs
    assert jobs["start"].to_numpy().tolist() == [float(k) for k in range(1, T)]


def test_sawtooth_alpha_and_beta_weighted():
    # E(10) = 1 + 0.1 * 10 = 2: job k runs [10k, 10k + 2] and sets F = 10k at 10k + 2.
    #   [0, 10]:   S 0 -> 10                        -> 50
    #   [10, 12]:  S 10 -> 12                       -> 2 * 22 / 2        =  22
    #   [12, 92]:  eight teeth, S from 2 to 12      -> 8 * 10 * 14 / 2   = 560
    #   [92, 100]: S 2 -> 10                        -> 8 * 12 / 2        =  48
    #   total 680, peak 12, 9 updates (12, 22, ..., 92); mean = 680 / 100.
    # With priority 2 the weighted area doubles: 1360.
    r = sl.simulate(periodic_one(beta=0.1, priority=2.0), "edf")
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(680.0, **EXACT)
    assert a["max_staleness"] == pytest.approx(12.0, **EXACT)
    assert a["updates"] == 9
    assert a["mean_staleness"] == pytest.approx(680.0 / 100.0, **EXACT)
    assert a["priority"] == 2.0
    assert a["weighted_staleness_area"] == pytest.approx(1360.0, **EXACT)
    assert r.total_weighted_staleness == pytest.approx(1360.0, **EXACT)
    assert r.summary()["total_weighted_staleness"] == pytest.approx(1360.0, **EXACT)
    assert jobs_of(r, "a")["cost"].tolist() == pytest.approx([2.0] * 9, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# 3. Golab Sec. 3.1 worked example (Max Benefit, Fig. 3): 80 vs 85
# ---------------------------------------------------------------------------------------------


def sec31(first: str = "j1") -> dict:
    # Both tables hold data to 0 at time 0 (arrival [0, 0]); F(0) = -10 and -5, so
    # S_1(0) = 10, S_2(0) = 5, and the jobs load dF = 10 and 5: E(10) = 1 + 0.2*10 = 3,
    # E(5) = 1 + 0.2*5 = 2. Horizon 5 = E1 + E2, and a job finishing at the horizon counts.
    j1 = {"name": "j1", "arrivals": [[0, 0]], "initial_freshness": -10, "alpha": 1, "beta": 0.2, "priority": 1}
    j2 = {"name": "j2", "arrivals": [[0, 0]], "initial_freshness": -5, "alpha": 1, "beta": 0.2, "priority": 1}
    tables = [j1, j2] if first == "j1" else [j2, j1]
    return {"tracks": 1, "horizon": 5, "tables": tables}


def test_sec31_max_benefit_runs_j1_first_total_80():
    # MB_1 = 10/3 > MB_2 = 5/2 -> J1 runs [0, 3], J2 runs [3, 5].
    #   table 1: S 10 -> 13 on [0, 3] (34.5), drops to 3 - 0 = 3, 3 -> 5 on [3, 5] (8) -> 42.5
    #   table 2: S 5 -> 10 on [0, 5] (37.5); its update lands at the horizon           -> 37.5
    #   total 80. Whatever the file order, Max Benefit picks J1.
    for first in ("j1", "j2"):
        r = sl.simulate(sec31(first), "max-benefit")
        assert r.total_weighted_staleness == pytest.approx(80.0, **EXACT)
        assert row(r, "j1")["staleness_area"] == pytest.approx(42.5, **EXACT)
        assert row(r, "j2")["staleness_area"] == pytest.approx(37.5, **EXACT)
        jobs = r.jobs.sort_values("start")
        assert jobs["table"].tolist() == ["j1", "j2"]
        assert jobs["start"].tolist() == [0.0, 3.0]
        assert jobs["finish"].tolist() == pytest.approx([3.0, 5.0], abs=1e-12)
        assert jobs["cost"].tolist() == pytest.approx([3.0, 2.0], abs=1e-12)


def test_sec31_fifo_with_j2_listed_first_total_85():
    # Both are released at 0, FIFO ties -> file order -> J2 runs [0, 2], J1 runs [2, 5].
    #   table 1: S 10 -> 15 on [0, 5] (the update lands at the horizon)   -> 62.5
    #   table 2: S 5 -> 7 on [0, 2] (12), drops to 2, 2 -> 5 on [2, 5] (10.5) -> 22.5
    #   total 85
    r = sl.simulate(sec31("j2"), "fifo")
    assert r.total_weighted_staleness == pytest.approx(85.0, **EXACT)
    assert row(r, "j1")["staleness_area"] == pytest.approx(62.5, **EXACT)
    assert row(r, "j2")["staleness_area"] == pytest.approx(22.5, **EXACT)
    assert r.jobs.sort_values("start")["table"].tolist() == ["j2", "j1"]
    # and FIFO with J1 listed first gives the Max Benefit schedule
    assert sl.simulate(sec31("j1"), "fifo").total_weighted_staleness == pytest.approx(80.0, **EXACT)


class LastInFileFirst:
    """A custom order: the table listed last in the file runs first."""

    name = "last-in-file-first"

    def bind(self, workload, rng):
        return BoundPolicy(key=lambda i, now, release, n: -i)


def test_sec31_custom_order_object_runs_j2_first_total_85():
    # J1 is listed first, so this order runs J2 first: same numbers as the FIFO case above.
    r = sl.simulate(sec31("j1"), LastInFileFirst())
    assert r.trace.policy == "last-in-file-first"
    assert r.total_weighted_staleness == pytest.approx(85.0, **EXACT)
    assert row(r, "j1")["staleness_area"] == pytest.approx(62.5, **EXACT)
    assert row(r, "j2")["staleness_area"] == pytest.approx(22.5, **EXACT)


def test_sec31_smith_rule_difference():
    # Fact 3.5: orders differ only through sum p * dF * C: J1 first 10*3 + 5*5 = 55, J2 first
    # 5*2 + 10*5 = 60; the difference 5 is exactly 85 - 80.
    a = sl.simulate(sec31("j1"), "max-benefit").total_weighted_staleness
    b = sl.simulate(sec31("j1"), LastInFileFirst()).total_weighted_staleness
    assert b - a == pytest.approx(60 - 55, **EXACT)


# ---------------------------------------------------------------------------------------------
# 4. Fig. 2 staleness trace
# ---------------------------------------------------------------------------------------------


def fig2(**extra) -> dict:
    # alpha 0, beta 1/3: E(3) = 1, E(6) = 2. F(0) = 0.
    return {"name": "t", "arrivals": [[4, 3], [7, 7], [9, 9]], "alpha": 0, "beta": 1 / 3, "priority": 1, **extra}


def check_fig2_curve(r, table: str = "t") -> None:
    # Job 1 loads 0..3 over [4, 5]; the merged job loads 3..9 over [9, 11].
    #   S(5-) = 5 - 0 = 5, S(5) = 5 - 3 = 2, S(9) = 9 - 3 = 6, S(11-) = 11 - 3 = 8,
    #   S(11) = 11 - 9 = 2.
    #   area: [0, 5] S 0 -> 5 (12.5) + [5, 11] S 2 -> 8 (6 * 10 / 2 = 30) = 42.5
    assert staleness_at(r, table, 5.0, left=True) == pytest.approx(5.0, **EXACT)
    assert staleness_at(r, table, 5.0) == pytest.approx(2.0, **EXACT)
    assert staleness_at(r, table, 9.0) == pytest.approx(6.0, **EXACT)
    assert staleness_at(r, table, 11.0, left=True) == pytest.approx(8.0, **EXACT)
    assert staleness_at(r, table, 11.0) == pytest.approx(2.0, **EXACT)
    # the trace's own S(t) (right-continuous) agrees
    got = r.trace.staleness_at(table, np.array([0.0, 4.0, 5.0, 9.0, 11.0]))
    assert got.tolist() == pytest.approx([0.0, 4.0, 2.0, 6.0, 2.0], abs=1e-9)
    m = row(r, table)
    assert m["staleness_area"] == pytest.approx(42.5, **EXACT)
    # the peak is S(11-) = 8 (the last update lands at the horizon)
    assert m["max_staleness"] == pytest.approx(8.0, **EXACT)
    assert m["updates"] == 2
    jobs = jobs_of(r, table)
    assert jobs["start"].tolist() == [4.0, 9.0]
    assert jobs["finish"].tolist() == pytest.approx([5.0, 11.0], abs=1e-12)
    assert jobs["data_from"].tolist() == [0.0, 3.0]
    assert jobs["data_to"].tolist() == [3.0, 9.0]
    assert jobs["cost"].tolist() == pytest.approx([1.0, 2.0], abs=1e-12)


def test_fig2_with_min_separation():
    # min_separation 5: the release of the data arriving at 7 is deferred to 4 + 5 = 9; the
    # arrival at 9 is applied in the same instant, so the merged job loads 3..9.
    # At 7 the freshness delta is 7 - 3 = 4 (data to 7 available, F = 3).
    r = sl.simulate({"tracks": 1, "horizon": 11, "tables": [fig2(min_separation=5)]}, "fifo")
    check_fig2_curve(r)
    assert jobs_of(r, "t")["release"].tolist() == [4.0, 9.0]
    assert 7.0 - freshness_at(r, "t", 7.0) == pytest.approx(4.0, **EXACT)


@pytest.mark.parametrize("policy", ["fifo", "max-benefit", "random"])
@pytest.mark.parametrize("blocker_first", [False, True])
def test_fig2_with_blocker(policy, blocker_first):
    # The blocker's data arrives at 5 (when job 1 completes, so the track is free), its job costs
    # 4 + 0 = 4 and occupies the only track over [5, 9]. The data arriving at 7 is released at 7
    # and waits; at 9 the blocker completes, the arrival at 9 is applied, then one merged job
    # loads 3..9 over [9, 11]: the same curve, released at 7.
    blocker = {"name": "blocker", "arrivals": [[5, 5]], "alpha": 4, "beta": 0, "priority": 1}
    tables = [blocker, fig2()] if blocker_first else [fig2(), blocker]
    r = sl.simulate({"tracks": 1, "horizon": 11, "tables": tables}, policy)
    check_fig2_curve(r)
    assert jobs_of(r, "t")["release"].tolist() == [4.0, 7.0]
    b = jobs_of(r, "blocker")
    assert b[["start", "finish"]].values.tolist() == [[5.0, 9.0]]


def test_fig2_one_batch_variant():
    # One batch arriving at 9 with data 3..9 replaces batches 2 and 3: same curve, no blocker.
    t = fig2()
    t["arrivals"] = [[4, 3], [9, 9]]
    r = sl.simulate({"tracks": 1, "horizon": 11, "tables": [t]}, "fifo")
    check_fig2_curve(r)
    assert jobs_of(r, "t")["release"].tolist() == [4.0, 9.0]


# ---------------------------------------------------------------------------------------------
# 5. Warmup: metrics over [warmup, horizon]
# ---------------------------------------------------------------------------------------------


def test_warmup_window():
    # The sawtooth of test 1 measured over [15, 100]:
    #   [15, 21]: F = 10, S from 5 to 11        -> 6 * 16 / 2       =  48
    #   [21, 91]: seven teeth S 1 -> 11         -> 7 * 60           = 420
    #   [91, 100]: S 1 -> 10                    ->                     49.5
    #   total 517.5; mean over the 85-long window 517.5 / 85; peak 11 (S(21-));
    #   updates landing in the window: 21, 31, ..., 91 -> 8.
    r = sl.simulate(periodic_one(beta=0.0, warmup=15), "fifo")
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(517.5, **EXACT)
    assert a["mean_staleness"] == pytest.approx(517.5 / 85.0, **EXACT)
    assert a["max_staleness"] == pytest.approx(11.0, **EXACT)
    assert a["updates"] == 8
    # the simulation itself is unchanged: all 9 jobs are in the jobs frame
    assert len(r.jobs) == 9
    assert r.summary()["warmup"] == 15.0


def test_warmup_inside_a_job():
    # Warmup 10.5 falls inside job 1 ([10, 11]):
    #   [10.5, 11]: S 10.5 -> 11 -> 0.5 * 21.5 / 2 = 5.375; then 480 + 49.5 as in test 1.
    #   total 534.875; peak S(11-) = 11; 9 updates (11 >= 10.5).
    r = sl.simulate(periodic_one(beta=0.0, warmup=10.5), "fifo")
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(534.875, **EXACT)
    assert a["max_staleness"] == pytest.approx(11.0, **EXACT)
    assert a["updates"] == 9


def test_warmup_at_an_update_instant():
    # Warmup 11 = the instant update 1 lands: the window starts at S(11) = 1, so the peak
    # S(11-) = 11 is outside [11, 100] and only later peaks (also 11) count; the area is
    # 480 + 49.5 = 529.5 and the update landing at 11 counts (finish >= warmup).
    r = sl.simulate(periodic_one(beta=0.0, warmup=11), "fifo")
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(529.5, **EXACT)
    assert a["max_staleness"] == pytest.approx(11.0, **EXACT)
    assert a["updates"] == 9


def test_warmup_peak_only_inside_window():
    # alpha 1, beta 0.1 sawtooth (test 2) with warmup 95: the window [95, 100] sees S rise from
    # 95 - 90 = 5 to 10 (F = 90 since 92); area 5 * 15 / 2 = 37.5; peak 10 (S at the horizon),
    # not the earlier peaks of 12; no update lands in the window.
    r = sl.simulate(periodic_one(beta=0.1, warmup=95), "fifo")
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(37.5, **EXACT)
    assert a["max_staleness"] == pytest.approx(10.0, **EXACT)
    assert a["updates"] == 0


def test_warmup_excludes_the_peak_of_an_update_landing_at_warmup():
    # F(0) = -20, period 10, alpha 1, beta 0.1: job 1 loads -20..10 (E = 1 + 3 = 4) over
    # [10, 14], so S(14-) = 34; later jobs load 10 units (E = 2): [20, 22], ..., [90, 92].
    # Window [14, 100] starts right after the drop: S(14) = 4.
    #   [14, 22]: S 4 -> 12 (8 * 16 / 2 = 64); [22, 92]: seven teeth S 2 -> 12 (7 * 70 = 490);
    #   [92, 100]: S 2 -> 10 (48). Total 602; the supremum over [14, 100] is 12 (34 is the left
    #   limit at 14, outside the window); 9 updates land in it (14 included).
    w = periodic_one(beta=0.1, warmup=14)
    w["tables"][0]["initial_freshness"] = -20
    r = sl.simulate(w, "fifo")
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(602.0, **EXACT)
    assert a["max_staleness"] == pytest.approx(12.0, **EXACT)
    assert a["updates"] == 9
    # without warmup the peak is 34 and the area adds [0, 14]: S 20 -> 34 (14 * 54 / 2 = 378)
    r = sl.simulate(w, "fifo", warmup=0)
    assert row(r, "a")["max_staleness"] == pytest.approx(34.0, **EXACT)
    assert row(r, "a")["staleness_area"] == pytest.approx(980.0, **EXACT)
