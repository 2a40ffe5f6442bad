"""The engine's semantics, one rule per test, on small hand-checked workloads.

Rules (the engine's module docstring and the foundation issue): a job loads everything available
when it starts (a derived table up to its trailing edge), runs non-preemptively and sets F at
completion; at most one job per table; a release is the instant unclaimed data went from none to
some; EDF deadline = release + period (derived: the largest ancestor period); ties break by file
position; every event of an instant is applied before the policy is consulted; events at
t <= horizon are processed and a job still running at the horizon does not count.
"""

from __future__ import annotations

import numpy as np
import pytest

import staleness_lab as sl
from staleness_lab.policies import BoundPolicy

EXACT = dict(rel=0, abs=1e-9)
BASELINES = ["fifo", "random", "edf", "edf-p", "max-benefit"]


def jobs_of(result, table: str):
    frame = result.jobs
    return frame[frame["table"] == table].reset_index(drop=True)


def row(result, table: str):
    frame = result.tables
    return frame[frame["table"] == table].iloc[0]


def freshness_at(result, table: str, t: float) -> float:
    """F(t), right-continuous (an update landing at t counts)."""
    steps = result.freshness[result.freshness["table"] == table]
    k = np.searchsorted(steps["time"].to_numpy(), t, side="right") - 1
    return float(steps["freshness"].to_numpy()[k])


def periodic(name: str, period: float, alpha: float = 1, beta: float = 0, priority: float = 1, **extra) -> dict:
    return {"name": name, "period": period, "alpha": alpha, "beta": beta, "priority": priority, **extra}


def replayed(name: str, arrivals, alpha: float = 1, beta: float = 0, priority: float = 1, **extra) -> dict:
    return {"name": name, "arrivals": arrivals, "alpha": alpha, "beta": beta, "priority": priority, **extra}


def derived(name: str, sources, alpha: float = 1, beta: float = 0, priority: float = 1, **extra) -> dict:
    return {"name": name, "sources": sources, "alpha": alpha, "beta": beta, "priority": priority, **extra}


def order_at(result, t: float) -> list[str]:
    """Tables of the jobs released at ``t``, in start order."""
    jobs = result.jobs[result.jobs["release"] == t].sort_values(["start", "track"])
    return jobs["table"].tolist()


# ---------------------------------------------------------------------------------------------
# Simultaneous events and tie-breaking
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "policy, expected",
    [
        # fifo: all released at 10 -> tie -> file order
        ("fifo", ["a", "b", "c"]),
        # edf: deadlines 10 + 10 for all -> tie -> file order
        ("edf", ["a", "b", "c"]),
        # edf-p: priority 3 first, then a and b tie on deadline -> file order
        ("edf-p", ["c", "a", "b"]),
        # max-benefit: p * 10 / 1: c (30) first, then a and b tie (10) -> file order
        ("max-benefit", ["c", "a", "b"]),
    ],
)
def test_simultaneous_arrivals_order_by_key_then_file_position(policy, expected):
    # Three tables with period 10 arrive together at 10 on one track; each job costs 1, so they
    # run [10, 11], [11, 12], [12, 13] in the policy's order.
    w = {"tracks": 1, "horizon": 15, "tables": [periodic("a", 10), periodic("b", 10), periodic("c", 10, priority=3)]}
    r = sl.simulate(w, policy)
    jobs = r.jobs.sort_values("start")
    assert jobs["table"].tolist() == expected
    assert jobs["start"].tolist() == [10.0, 11.0, 12.0]
    assert jobs["release"].tolist() == [10.0, 10.0, 10.0]


def test_simultaneous_arrivals_edf_beats_file_order():
    # a (period 20) is listed first; b (period 10) arrives at 10 (job [10, 11]) and again at 20,
    # together with a. Deadlines at 20: a 20 + 20 = 40, b 20 + 10 = 30 -> b runs first.
    # FIFO sees a tie (both released at 20) and keeps the file order.
    w = {"tracks": 1, "horizon": 25, "tables": [periodic("a", 20), periodic("b", 10)]}
    assert order_at(sl.simulate(w, "edf"), 20.0) == ["b", "a"]
    assert order_at(sl.simulate(w, "fifo"), 20.0) == ["a", "b"]


def test_all_events_of_an_instant_are_applied_before_dispatch():
    # x runs [0, 10] (its data arrives at 0 with F(0) = -1: cost 10 + 0). z's data arrives at 1,
    # it waits. At 10, x completes AND y's data arrives. Max Benefit: z's benefit 1*1/1 = 1,
    # y's 5*10/1 = 50. If the engine dispatched at x's completion before applying y's arrival,
    # z would start at 10; since the instant is applied first, y starts at 10 and z at 11.
    w = {
        "tracks": 1,
        "horizon": 20,
        "tables": [
            replayed("x", [[0, 0]], alpha=10, initial_freshness=-1),
            replayed("z", [[1, 1]]),
            replayed("y", [[10, 10]], priority=5),
        ],
    }
    r = sl.simulate(w, "max-benefit")
    starts = {t: jobs_of(r, t)["start"].tolist() for t in ("x", "y", "z")}
    assert starts == {"x": [0.0], "y": [10.0], "z": [11.0]}


def test_policy_consulted_at_time_zero():
    # data available at time 0 (arrival [0, 0] above F(0) = -3) starts a job at 0
    w = {"tracks": 1, "horizon": 10, "tables": [replayed("a", [[0, 0]], initial_freshness=-3, alpha=2)]}
    jobs = sl.simulate(w, "fifo").jobs
    assert jobs[["release", "start", "finish", "data_from", "data_to"]].values.tolist() == [[0.0, 0.0, 2.0, -3.0, 0.0]]


# ---------------------------------------------------------------------------------------------
# Release of data arriving during a running job
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", BASELINES)
def test_release_of_data_arriving_during_a_job_is_its_arrival(policy):
    # Period 10, E = 15: job 1 loads 0..10 over [10, 25]. Data arriving at 20 is released at 20
    # and waits; job 2 starts at 25, loads 10..20 and runs [25, 40]. The data arriving at 30 is
    # released at 30 (job 2 claimed up to 20); at 40 the arrival at 40 is applied first, so job 3
    # loads 20..40 over [40, 55]. Then: data at 50 released at 50, job 4 loads 40..50 over
    # [55, 70]; data at 60 released at 60, job 5 loads 50..70 over [70, 85]; data at 80 released
    # at 80, job 6 loads 70..80 over [85, 100] (it lands at the horizon and counts).
    w = {"tracks": 1, "horizon": 100, "tables": [periodic("a", 10, alpha=15)]}
    jobs = jobs_of(sl.simulate(w, policy), "a")
    assert jobs["release"].tolist() == [10.0, 20.0, 30.0, 50.0, 60.0, 80.0]
    assert jobs["start"].tolist() == [10.0, 25.0, 40.0, 55.0, 70.0, 85.0]
    assert jobs["data_from"].tolist() == [0.0, 10.0, 20.0, 40.0, 50.0, 70.0]
    assert jobs["data_to"].tolist() == [10.0, 20.0, 40.0, 50.0, 70.0, 80.0]


def test_fifo_orders_by_release_of_data_that_arrived_during_a_job():
    # a (period 10, E = 15) is released at 20 while its job 1 runs [10, 25]; b's data arrives at
    # 22 (released at 22). At 25 both are ready: FIFO takes a (release 20 < 22), and b runs at
    # 40 (a's next release is 30 > 22). Were a's release taken at its job's completion (25), b
    # would go first at 25. EDF (b's nominal period 100): at 25 deadlines 20 + 10 = 30 < 122,
    # at 40 a's deadline 30 + 10 = 40 < 122 again: b waits.
    w = {
        "tracks": 1,
        "horizon": 60,
        "tables": [replayed("b", [[22, 22]], nominal_period=100), periodic("a", 10, alpha=15)],
    }
    for policy in ("fifo", "edf"):
        r = sl.simulate(w, policy)
        a = jobs_of(r, "a")
        assert a["release"].tolist()[:3] == [10.0, 20.0, 30.0]
        assert a["start"].tolist()[:2] == [10.0, 25.0]
    b = jobs_of(sl.simulate(w, "fifo"), "b")
    assert b[["release", "start"]].values.tolist() == [[22.0, 40.0]]
    assert jobs_of(sl.simulate(w, "edf"), "a")["start"].tolist()[2] == 40.0


# ---------------------------------------------------------------------------------------------
# Derived tables and trailing edges
# ---------------------------------------------------------------------------------------------


def test_view_over_two_bases_loads_the_trailing_edge():
    # a: period 10, E = 1 -> F_a = 10k at 10k + 1. b: period 25, E = 1 -> F_b = 25k at 25k + 1.
    # v = view over a and b, E = 1, three tracks (no contention).
    #   11: edge min(10, 0) = 0 -> nothing; 21: min(20, 0) = 0.
    #   26: b completes, edge min(20, 25) = 20 -> v released at 26, loads 0..20 over [26, 27]
    #   31: a completes, edge min(30, 25) = 25 -> released at 31, loads 20..25
    #   41: edge min(40, 25) = 25 -> nothing
    #   51: a and b both complete (applied in table order), edge min(50, 50) = 50 -> loads 25..50
    w = {
        "tracks": 3,
        "horizon": 60,
        "tables": [periodic("a", 10), periodic("b", 25), derived("v", ["a", "b"])],
    }
    r = sl.simulate(w, "fifo")
    v = jobs_of(r, "v")
    assert v[["release", "start", "finish", "data_from", "data_to"]].values.tolist() == [
        [26.0, 26.0, 27.0, 0.0, 20.0],
        [31.0, 31.0, 32.0, 20.0, 25.0],
        [51.0, 51.0, 52.0, 25.0, 50.0],
    ]
    # generally: data_to = min of the sources' freshness at the start (right-continuous)
    for job in v.itertuples():
        edge = min(freshness_at(r, "a", job.start), freshness_at(r, "b", job.start))
        assert job.data_to == edge
    # and each release is the completion instant of a source job that raised the edge
    source_finishes = set(r.jobs[r.jobs["table"].isin(["a", "b"])]["finish"])
    assert set(v["release"]) <= source_finishes


def test_view_of_a_view_follows_the_chain():
    # a (period 10, E = 1) -> m -> v, each E = 1, enough tracks: m loads 0..10 over [11, 12],
    # v loads 0..10 over [12, 13]; then one level down per completion.
    w = {
        "tracks": 3,
        "horizon": 30,
        "tables": [periodic("a", 10), derived("m", ["a"]), derived("v", ["m"])],
    }
    r = sl.simulate(w, "edf")
    assert jobs_of(r, "m")[["start", "data_to"]].values.tolist() == [[11.0, 10.0], [21.0, 20.0]]
    assert jobs_of(r, "v")[["start", "data_to"]].values.tolist() == [[12.0, 10.0], [22.0, 20.0]]


def test_view_released_at_time_zero_when_sources_are_fresher():
    # v starts at -10 while its source holds data to 0: the edge 0 > -10 releases v at 0.
    w = {
        "tracks": 1,
        "horizon": 5,
        "tables": [periodic("a", 100), derived("v", ["a"], alpha=2, initial_freshness=-10)],
    }
    v = jobs_of(sl.simulate(w, "fifo"), "v")
    assert v[["release", "start", "finish", "data_from", "data_to"]].values.tolist() == [[0.0, 0.0, 2.0, -10.0, 0.0]]


def test_edf_deadline_of_a_view_uses_the_largest_ancestor_period():
    # One track. a: period 40, b: period 20 (both E = 1); v = view over a and b; x: a replayed
    # feed with nominal_period 30, data arriving at 42, listed after v.
    #   20: b runs [20, 21]. 40: a and b arrive; deadlines a 80, b 60 -> b [40, 41], a [41, 42].
    #   41: b completes, edge min(F_a = 0, 40) = 0 -> v not released.
    #   42: a completes, edge 40 -> v released at 42; x's data arrives at 42 (released at 42).
    #   Deadlines: v 42 + max(40, 20) = 82, x 42 + 30 = 72 -> x runs first ([42, 43]), v at 43.
    #   (With the smallest ancestor period, v's deadline would be 62 and v would run first; with
    #   a tie, file order would also put v first.)
    w = {
        "tracks": 1,
        "horizon": 50,
        "tables": [
            periodic("a", 40),
            periodic("b", 20),
            derived("v", ["a", "b"]),
            replayed("x", [[42, 42]], nominal_period=30),
        ],
    }
    assert sl.parse_workload(w).periods == (40.0, 20.0, 40.0, 30.0)
    r = sl.simulate(w, "edf")
    assert jobs_of(r, "v")[["release", "start"]].values.tolist() == [[42.0, 43.0]]
    assert jobs_of(r, "x")[["release", "start"]].values.tolist() == [[42.0, 42.0]]
    # with x's nominal period 50 (deadline 92 > 82) v goes first
    w["tables"][3]["nominal_period"] = 50
    r = sl.simulate(w, "edf")
    assert jobs_of(r, "v")["start"].tolist() == [42.0]
    assert jobs_of(r, "x")["start"].tolist() == [43.0]


def test_view_period_includes_transitive_ancestors():
    # v's direct sources are m (a view over a, period 40) and b (period 20): its period is the
    # largest over all ancestors, 40.
    w = sl.parse_workload(
        {
            "tracks": 1,
            "horizon": 10,
            "tables": [periodic("a", 40), periodic("b", 20), derived("m", ["a"]), derived("v", ["m", "b"])],
        }
    )
    assert w.periods == (40.0, 20.0, 40.0, 40.0)


# ---------------------------------------------------------------------------------------------
# Replayed feeds with late data
# ---------------------------------------------------------------------------------------------


def test_replayed_late_data_sets_freshness_to_data_to():
    # Arrivals at 10 (data to 5) and 20 (data to 18), E = 1, horizon 30:
    #   job 1 loads 0..5 over [10, 11]; job 2 loads 5..18 over [20, 21].
    #   [0, 11]: S 0 -> 11 (60.5); [11, 21]: S = t - 5 from 6 to 16 (110);
    #   [21, 30]: S = t - 18 from 3 to 12 (67.5); total 238; peak S(21-) = 16.
    w = {"tracks": 1, "horizon": 30, "tables": [replayed("a", [[10, 5], [20, 18]])]}
    r = sl.simulate(w, "fifo")
    jobs = jobs_of(r, "a")
    assert jobs[["start", "finish", "data_from", "data_to"]].values.tolist() == [
        [10.0, 11.0, 0.0, 5.0],
        [20.0, 21.0, 5.0, 18.0],
    ]
    f = r.freshness[r.freshness["table"] == "a"]
    assert f[["time", "freshness"]].values.tolist() == [[0.0, 0.0], [11.0, 5.0], [21.0, 18.0]]
    times = np.array([5.0, 11.0, 15.0, 21.0, 30.0])
    assert r.trace.staleness_at("a", times).tolist() == [5.0, 6.0, 10.0, 3.0, 12.0]
    a = row(r, "a")
    assert a["staleness_area"] == pytest.approx(238.0, **EXACT)
    assert a["max_staleness"] == pytest.approx(16.0, **EXACT)


def test_replayed_arrival_without_new_data_releases_nothing():
    # The arrival at 20 repeats data_to = 5: no unclaimed data, no release, no job.
    w = {"tracks": 1, "horizon": 30, "tables": [replayed("a", [[10, 5], [20, 5], [25, 8]])]}
    jobs = jobs_of(sl.simulate(w, "fifo"), "a")
    assert jobs[["release", "data_from", "data_to"]].values.tolist() == [[10.0, 0.0, 5.0], [25.0, 5.0, 8.0]]


# ---------------------------------------------------------------------------------------------
# Chopping (digest 4.8)
# ---------------------------------------------------------------------------------------------


def chop_workload(table: dict, *more: dict) -> dict:
    # The blocker's data (to 0, F(0) = -1) arrives at 0 and its job costs 800 + 0: it holds the
    # only track over [0, 800]. At 800 its completion and the chopped table's 8th arrival
    # (data to 800) are applied before dispatch, so the chopped table starts with F = 0 and data
    # to 800 available at once. The next arrival (900) is past the horizon.
    # (It has a nominal period only so that period-based policies accept it.)
    blocker = replayed("blocker", [[0, 0]], alpha=800, initial_freshness=-1, nominal_period=1000)
    return {"tracks": 1, "horizon": 890, "tables": [blocker, table, *more]}


@pytest.mark.parametrize("policy", ["fifo", "edf", "max-benefit"])
def test_chop_periodic_base_loads_300_300_200(policy):
    # P = 100, c = 3: a job loads at most 300. E(300) = 1 + 0.1 * 300 = 31, E(200) = 21:
    # [800, 831] loads 0..300, [831, 862] 300..600, [862, 883] 600..800. The table keeps its
    # release (100) while chopping leaves data unclaimed.
    r = sl.simulate(chop_workload(periodic("c", 100, alpha=1, beta=0.1, chop=3)), policy)
    jobs = jobs_of(r, "c")
    assert jobs[["start", "data_from", "data_to"]].values.tolist() == [
        [800.0, 0.0, 300.0],
        [831.0, 300.0, 600.0],
        [862.0, 600.0, 800.0],
    ]
    assert jobs["cost"].tolist() == pytest.approx([31.0, 31.0, 21.0], abs=1e-9)
    assert jobs["finish"].tolist() == pytest.approx([831.0, 862.0, 883.0], abs=1e-9)
    assert jobs["release"].tolist() == [100.0, 100.0, 100.0]


def test_chop_workload_default_applies_to_tables_without_their_own():
    w = chop_workload(periodic("c", 100, alpha=1, beta=0.1))
    w["chop"] = 3  # the blocker is chopped too (by 3000: no effect)
    jobs = jobs_of(sl.simulate(w, "fifo"), "c")
    assert jobs["data_to"].tolist() == [300.0, 600.0, 800.0]


def test_chop_replayed_base_stops_at_arrival_boundaries():
    # Batches end at 100, 250, 380, 800 (all arrived by 800); nominal period 100, c = 3:
    #   job 1 from 0: cap 300 -> the last boundary <= 300 is 250       -> loads 0..250
    #   job 2 from 250: cap 550 -> last boundary <= 550 is 380         -> loads 250..380
    #   job 3 from 380: cap 680 -> no boundary in (380, 680]; at least one batch -> 380..800
    # E = 1 + 0.1 n: 26, 14, 43.
    table = replayed(
        "c", [[100, 100], [250, 250], [380, 380], [800, 800]], alpha=1, beta=0.1, nominal_period=100, chop=3
    )
    w = chop_workload(table)
    w["horizon"] = 900
    jobs = jobs_of(sl.simulate(w, "fifo"), "c")
    assert jobs[["start", "data_from", "data_to"]].values.tolist() == [
        [800.0, 0.0, 250.0],
        [826.0, 250.0, 380.0],
        [840.0, 380.0, 800.0],
    ]
    assert jobs["cost"].tolist() == pytest.approx([26.0, 14.0, 43.0], abs=1e-9)


def test_chop_derived_cuts_at_freshness_plus_c_periods():
    # b (period 100, not chopped) waits behind the blocker and loads 0..800 over [800, 801]
    # (E = 1). v (view over b, period 100, c = 3) is released at 801 and loads 0..300, 300..600,
    # 600..800 with E = 31, 31, 21: starts 801, 832, 863.
    w = chop_workload(periodic("b", 100), derived("v", ["b"], alpha=1, beta=0.1, chop=3))
    jobs = jobs_of(sl.simulate(w, "fifo"), "v")
    assert jobs[["start", "data_from", "data_to"]].values.tolist() == [
        [801.0, 0.0, 300.0],
        [832.0, 300.0, 600.0],
        [863.0, 600.0, 800.0],
    ]


def test_chop_leaves_no_remainder_behind():
    # b has phase 0.5 (arrivals 100.5, ..., 800.5); the blocker runs [0, 800.75], so b loads
    # 0..800.5 over [800.75, 801.75] (E = 1). v (c = 4, period 100: at most 400 per job,
    # E = 1 + 0.01 n) is released at 801.75 and loads 0..400 (E = 5, [801.75, 806.75]),
    # 400..800 (E = 5, [806.75, 811.75]) and the remaining 0.5 (E = 1.005, [811.75, 812.755]),
    # all under that one release.
    w = chop_workload(periodic("b", 100, phase=0.5), derived("v", ["b"], alpha=1, beta=0.01, chop=4))
    w["tables"][0]["alpha"] = 800.75
    jobs = jobs_of(sl.simulate(w, "fifo"), "v")
    assert jobs[["release", "data_from", "data_to"]].values.tolist() == [
        [801.75, 0.0, 400.0],
        [801.75, 400.0, 800.0],
        [801.75, 800.0, 800.5],
    ]
    assert jobs["start"].tolist() == pytest.approx([801.75, 806.75, 811.75], abs=1e-9)


def test_chop_without_a_period_is_refused():
    w = chop_workload(replayed("c", [[800, 800]], chop=3))
    del w["tables"][0]["nominal_period"]
    with pytest.raises(sl.InputError) as err:
        sl.simulate(w, "fifo")
    assert err.value.table == "c"
    assert "nominal_period" in str(err.value)


# ---------------------------------------------------------------------------------------------
# min_separation
# ---------------------------------------------------------------------------------------------


def test_min_separation_delays_releases():
    # Period 10, E = 1, min_separation 15: release k is max(its data's arrival, release k-1 + 15).
    #   10 (loads 0..10); arrival 20 -> deferred to 25 (loads 10..20); arrival 30 -> 40 (the
    #   deferred release and the arrival at 40 share the instant: loads 20..40); arrival 50 ->
    #   55 (40..50); 60 -> 70 (50..70); 80 -> 85 (70..80); 90 -> 100 (80..100).
    w = {"tracks": 1, "horizon": 101, "tables": [periodic("a", 10, min_separation=15)]}
    for policy in ("fifo", "max-benefit"):
        jobs = jobs_of(sl.simulate(w, policy), "a")
        assert jobs["release"].tolist() == [10.0, 25.0, 40.0, 55.0, 70.0, 85.0, 100.0]
        assert jobs["start"].tolist() == jobs["release"].tolist()
        assert jobs["data_to"].tolist() == [10.0, 20.0, 40.0, 50.0, 70.0, 80.0, 100.0]


def test_min_separation_is_measured_between_releases_not_completions():
    # E = 12 > min_separation 5: job 1 runs [10, 22]; the data arriving at 20 is released at 20
    # (10 + 5 <= 20) and starts at 22.
    w = {"tracks": 1, "horizon": 40, "tables": [periodic("a", 10, alpha=12, min_separation=5)]}
    jobs = jobs_of(sl.simulate(w, "fifo"), "a")
    assert jobs["release"].tolist()[:2] == [10.0, 20.0]
    assert jobs["start"].tolist()[:2] == [10.0, 22.0]


# ---------------------------------------------------------------------------------------------
# Variability and common random numbers
# ---------------------------------------------------------------------------------------------


def contended(seed: int = 0, variability: float | None = 0.5) -> dict:
    w = {
        "tracks": 1,
        "horizon": 400,
        "seed": seed,
        "tables": [
            periodic("a", 10, alpha=2, beta=0.1),
            periodic("b", 15, alpha=3, beta=0.05, priority=4),
            replayed("c", [[5 * k + 3, 5 * k + 1] for k in range(70)], alpha=1, beta=0.2, nominal_period=5),
        ],
    }
    if variability is not None:
        w["variability"] = variability
    return w


def multipliers(result, table: str) -> np.ndarray:
    """cost / E(n) per job of a table (the variability draw b + U)."""
    w = result.workload
    t = w.table(table)
    jobs = jobs_of(result, table)
    nominal = t.alpha + t.beta * (jobs["data_to"] - jobs["data_from"])
    return (jobs["cost"] / nominal).to_numpy()


@pytest.mark.parametrize("b", [0.0, 0.5, 2.0])
def test_variability_costs_within_b_and_1_plus_b_times_e(b):
    r = sl.simulate(contended(variability=b), "max-benefit", tracks=3)
    for table in ("a", "b", "c"):
        m = multipliers(r, table)
        assert len(m) > 5
        assert np.all(m >= b - 1e-12)
        assert np.all(m <= 1 + b + 1e-12)
    # not a constant multiplier
    assert np.ptp(multipliers(r, "a")) > 0.1


def test_variability_common_random_numbers_across_policies():
    # Job k of a table meets the same draw under every policy on one seed.
    runs = {p: sl.simulate(contended(seed=7), p) for p in ("fifo", "edf", "max-benefit", "random")}
    for table in ("a", "b", "c"):
        seqs = [multipliers(r, table) for r in runs.values()]
        k = min(len(s) for s in seqs)
        assert k > 5
        for s in seqs[1:]:
            np.testing.assert_allclose(s[:k], seqs[0][:k], rtol=1e-12)
    # the schedules themselves differ (otherwise the check would be vacuous)
    assert not runs["fifo"].jobs["start"].equals(runs["max-benefit"].jobs["start"])


def test_variability_depends_on_seed():
    one = multipliers(sl.simulate(contended(seed=1), "fifo"), "a")
    two = multipliers(sl.simulate(contended(seed=2), "fifo"), "a")
    k = min(len(one), len(two))
    assert not np.allclose(one[:k], two[:k])
    again = multipliers(sl.simulate(contended(seed=1), "fifo"), "a")
    np.testing.assert_array_equal(one, again)


def test_seed_override_changes_costs():
    base = multipliers(sl.simulate(contended(seed=1), "fifo"), "b")
    over = multipliers(sl.simulate(contended(seed=1), "fifo", seed=3), "b")
    ref = multipliers(sl.simulate(contended(seed=3), "fifo"), "b")
    np.testing.assert_array_equal(over, ref)
    k = min(len(base), len(over))
    assert not np.allclose(base[:k], over[:k])


# ---------------------------------------------------------------------------------------------
# Slowdown
# ---------------------------------------------------------------------------------------------


def test_slowdown_factor_applies_to_jobs_starting_in_a_slow_period():
    # Cycle normal 10 + slow 10, starting normal: slow iff t mod 20 >= 10. Period 5, E = 1, one
    # track: jobs start at 5 (normal, cost 1), 10 (slow: cost 3, runs [10, 13]), 15 (slow, 3),
    # 20 (normal, 1), 25 (normal, 1), 30 (slow, 3), 35 (slow, 3).
    w = {
        "tracks": 1,
        "horizon": 40,
        "slowdown": {"factor": 3, "normal": 10, "slow": 10},
        "tables": [periodic("a", 5)],
    }
    jobs = jobs_of(sl.simulate(w, "fifo"), "a")
    assert jobs["start"].tolist() == [5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0]
    assert jobs["cost"].tolist() == [1.0, 3.0, 3.0, 1.0, 1.0, 3.0, 3.0]


def test_slowdown_normal_zero_is_always_slow():
    w = {
        "tracks": 1,
        "horizon": 40,
        "slowdown": {"factor": 2.5, "normal": 0, "slow": 10},
        "tables": [periodic("a", 5, beta=0.2)],
    }
    jobs = jobs_of(sl.simulate(w, "fifo"), "a")
    # E(5) = 1 + 0.2 * 5 = 2, always times 2.5 = 5: one job per period, each starting at its
    # arrival; the one started at 35 lands at the horizon 40.
    assert jobs["start"].tolist() == [5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0]
    assert jobs["cost"].tolist() == pytest.approx([5.0] * 7, abs=1e-12)


def test_slowdown_and_variability_multiply():
    w = contended(seed=4, variability=0.5)
    w["slowdown"] = {"factor": 3, "normal": 0, "slow": 1}
    slow = multipliers(sl.simulate(w, "fifo"), "a")
    del w["slowdown"]
    plain = multipliers(sl.simulate(w, "fifo"), "a")
    # the draw sequences are common; the first job starts at the same instant in both runs
    assert slow[0] == pytest.approx(3 * plain[0], rel=1e-12)
    assert np.all(slow >= 1.5 - 1e-12) and np.all(slow <= 4.5 + 1e-12)


# ---------------------------------------------------------------------------------------------
# Horizon rule
# ---------------------------------------------------------------------------------------------


def test_job_finishing_exactly_at_the_horizon_counts():
    # Period 10, E = 5: jobs [10, 15] and [20, 25]; horizon 25.
    #   [0, 15]: S 0 -> 15 (112.5); [15, 25]: S 5 -> 15 (100): 212.5; peak 15; 2 updates;
    #   F(25) = 20.
    w = {"tracks": 1, "horizon": 25, "tables": [periodic("a", 10, alpha=5)]}
    r = sl.simulate(w, "fifo")
    a = row(r, "a")
    assert a["updates"] == 2
    assert a["staleness_area"] == pytest.approx(212.5, **EXACT)
    assert a["max_staleness"] == pytest.approx(15.0, **EXACT)
    assert freshness_at(r, "a", 25.0) == 20.0
    assert r.trace.in_flight == []


def test_job_finishing_after_the_horizon_does_not_count():
    # Same with horizon 24: the job started at 20 would finish at 25 > 24.
    #   [0, 15]: 112.5; [15, 24]: S 5 -> 14 (85.5): 198; peak max(15, 14) = 15; 1 update;
    #   F stays 10.
    w = {"tracks": 1, "horizon": 24, "tables": [periodic("a", 10, alpha=5)]}
    r = sl.simulate(w, "fifo")
    a = row(r, "a")
    assert a["updates"] == 1
    assert a["staleness_area"] == pytest.approx(198.0, **EXACT)
    assert a["max_staleness"] == pytest.approx(15.0, **EXACT)
    assert freshness_at(r, "a", 24.0) == 10.0
    assert r.freshness["time"].max() == 15.0
    assert len(r.jobs) == 1
    assert len(r.trace.in_flight) == 1
    assert r.summary()["jobs"] == 1


def test_arrival_at_the_horizon_is_processed():
    # The arrival at 30 = horizon starts a job (in flight), which keeps the track busy for 0.
    w = {"tracks": 1, "horizon": 30, "tables": [periodic("a", 10, alpha=5)]}
    r = sl.simulate(w, "fifo")
    assert [rec[3] for rec in r.trace.in_flight] == [30.0]
    assert len(r.jobs) == 2


def test_view_does_not_see_an_unfinished_source_update():
    # a's second job ([20, 25]) does not finish by the horizon 24: v (view over a) gets only
    # the first edge (10), loaded over [15, 16].
    w = {"tracks": 2, "horizon": 24, "tables": [periodic("a", 10, alpha=5), derived("v", ["a"])]}
    v = jobs_of(sl.simulate(w, "fifo"), "v")
    assert v[["start", "data_to"]].values.tolist() == [[15.0, 10.0]]


# ---------------------------------------------------------------------------------------------
# Period-based policies need periods
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["edf", "edf-p"])
def test_period_policy_refuses_replayed_table_without_nominal_period(policy):
    w = {"tracks": 1, "horizon": 10, "tables": [periodic("a", 5), replayed("feed", [[1, 1]])]}
    with pytest.raises(sl.InputError) as err:
        sl.simulate(w, policy)
    assert err.value.table == "feed"
    assert "nominal_period" in str(err.value)
    assert "feed" in str(err.value)
    # policies that need no period accept the same workload
    for other in ("fifo", "random", "max-benefit"):
        assert len(sl.simulate(w, other).jobs) == 2  # feed at 1, a at 5 (a at 10 is in flight)
    # and with a nominal period (also for a view over the feed) the policy runs
    w["tables"][1]["nominal_period"] = 4
    w["tables"].append(derived("v", ["feed"]))
    assert len(sl.simulate(w, policy, tracks=2).jobs) == 3  # plus v at 2


@pytest.mark.parametrize("policy", ["edf", "edf-p"])
def test_period_policy_refuses_view_over_replayed_table_without_nominal_period(policy):
    w = {
        "tracks": 1,
        "horizon": 10,
        "tables": [replayed("feed", [[1, 1]], nominal_period=3), replayed("raw", [[2, 2]]), derived("v", ["feed", "raw"])],
    }
    with pytest.raises(sl.InputError) as err:
        sl.simulate(w, policy)
    # the first table without a period is the replayed feed itself
    assert err.value.table == "raw"
    assert "nominal_period" in str(err.value)


# ---------------------------------------------------------------------------------------------
# Relative lateness and utilization
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", BASELINES)
def test_relative_lateness_contended_at_least_one(policy):
    r = sl.simulate(contended(seed=3), policy, relative=True)
    rl = r.relative_lateness
    total = rl[rl["table"] == "*"].iloc[0]
    assert total["relative_lateness"] >= 1 - 1e-9
    assert total["relative_lateness"] > 1.01  # genuinely contended
    assert r.summary()["relative_lateness"] == pytest.approx(total["relative_lateness"], rel=1e-12)


@pytest.mark.parametrize("policy", BASELINES)
def test_relative_lateness_is_one_without_contention(policy):
    w = contended(seed=3)
    r = sl.simulate(w, policy, relative=True, tracks=3)
    rl = r.relative_lateness
    assert rl["relative_lateness"].tolist() == pytest.approx([1.0] * 4, rel=1e-12)
    # and with more tracks than tables
    r = sl.simulate(w, policy, relative=True, tracks=5)
    assert r.relative_lateness["relative_lateness"].tolist() == pytest.approx([1.0] * 4, rel=1e-12)


def test_relative_lateness_needs_relative_run():
    r = sl.simulate(contended(), "fifo")
    with pytest.raises(sl.InputError):
        r.relative_lateness


def test_utilization_per_track():
    # Two tracks, a (period 10, E = 2) and b (period 10, E = 3) both arrive at 10, 20, 30, 40:
    # FIFO puts a (file order) on track 0, b on track 1 each time.
    #   horizon 50: the jobs started at 50 are in flight for 0 -> busy 8 and 12 -> 0.16, 0.24.
    #   horizon 51: they count up to the horizon -> busy 9 and 13 over 51.
    w = {"tracks": 2, "horizon": 50, "tables": [periodic("a", 10, alpha=2), periodic("b", 10, alpha=3)]}
    r = sl.simulate(w, "fifo")
    u = r.utilization
    assert u["track"].tolist() == [0, 1]
    assert u["busy"].tolist() == pytest.approx([8.0, 12.0], abs=1e-12)
    assert u["utilization"].tolist() == pytest.approx([0.16, 0.24], abs=1e-12)
    # equals the sum of the completed job durations per track over the horizon
    jobs = r.jobs
    for track in (0, 1):
        span = (jobs.loc[jobs["track"] == track, "finish"] - jobs.loc[jobs["track"] == track, "start"]).sum()
        assert u.loc[track, "utilization"] == pytest.approx(span / 50, abs=1e-12)
    r = sl.simulate(w, "fifo", horizon=51)
    assert r.utilization["busy"].tolist() == pytest.approx([9.0, 13.0], abs=1e-12)
    assert r.utilization["utilization"].tolist() == pytest.approx([9 / 51, 13 / 51], abs=1e-12)


def test_utilization_with_warmup():
    # Window [15, 50]: track 0 busy [20, 22], [30, 32], [40, 42] = 6; track 1 [20, 23], ... = 9.
    w = {
        "tracks": 2,
        "horizon": 50,
        "warmup": 15,
        "tables": [periodic("a", 10, alpha=2), periodic("b", 10, alpha=3)],
    }
    u = sl.simulate(w, "fifo").utilization
    assert u["busy"].tolist() == pytest.approx([6.0, 9.0], abs=1e-12)
    assert u["utilization"].tolist() == pytest.approx([6 / 35, 9 / 35], abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Timers (EngineView.wake_at)
# ---------------------------------------------------------------------------------------------


class _WakeOnce:
    """Holds table ``a`` back at its first decision and asks for a timer at ``wake``; otherwise
    places the ready tables in order. Records (now, order, c's freshness, c running) per call."""

    name = "wake-once"

    def __init__(self, wake: float) -> None:
        self.wake = wake
        self.calls: list[tuple[float, list[str], float, bool]] = []

    def bind(self, workload, rng):
        names = [t.name for t in workload.tables]
        c = names.index("c")
        held = [False]

        def place(order, idle, now, view):
            self.calls.append((now, [names[i] for i in order], view.freshness(c), view.running(c)))
            if not held[0] and names.index("a") in order:
                held[0] = True
                view.wake_at(self.wake)
                view.wake_at(now)  # not after now: ignored
                view.wake_at(now - 1)  # ignored
                order = [i for i in order if names[i] != "a"]
            return list(zip(order, idle))

        return BoundPolicy(key=lambda i, now, release, n: release, place=place)


def test_a_timer_consults_the_policy_after_every_event_of_its_instant():
    # c runs [0.2, 1.7] on track 0. a arrives at 1 and is held; the policy asks for 1.7. At 1.7
    # c completes, b arrives, and the timer fires: the policy is consulted once, after c's
    # completion and b's arrival, and starts a and b.
    w = {"tracks": 2, "horizon": 5, "tables": [
        replayed("a", [1.0]), replayed("b", [1.7]), replayed("c", [0.2], alpha=1.5),
    ]}
    policy = _WakeOnce(1.7)
    r = sl.simulate(w, policy)
    assert policy.calls == [(0.2, ["c"], 0.0, False), (1.0, ["a"], 0.0, True), (1.7, ["a", "b"], 0.2, False)]
    starts = dict(zip(r.jobs["table"], r.jobs["start"]))
    assert starts == {"c": 0.2, "a": 1.7, "b": 1.7}
    assert r.trace.events == 3 + 3  # arrivals and completions; the timer is not an event


def test_a_timer_alone_consults_the_policy():
    # nothing but the timer happens at 2.5
    w = {"tracks": 1, "horizon": 5, "tables": [replayed("a", [1.0]), replayed("c", [0.2], alpha=0.5)]}
    policy = _WakeOnce(2.5)
    r = sl.simulate(w, policy)
    assert [call[0] for call in policy.calls] == [0.2, 1.0, 2.5]
    assert r.jobs.loc[r.jobs["table"] == "a", "start"].tolist() == [2.5]
