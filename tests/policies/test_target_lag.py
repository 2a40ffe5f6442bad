"""The target-lag scheduler's documented rules, each on its own small workload with a
hand-checked schedule, and its two invariants as Hypothesis properties
(:mod:`staleness_lab.policies.target_lag`; rule numbers as in its docstring)."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.errors import InputError
from tests.cli_fork import run_cli


def table(**keys) -> dict:
    return {"priority": 1, "beta": 0, **keys}


def schedule(result) -> list[tuple]:
    """(table, track, start, finish, data_to) per completed job, in finish order."""
    return [(j.table, j.track, j.start, j.finish, j.data_to) for j in result.jobs.itertuples()]


def test_rule1_a_running_refresh_delays_the_next_never_two_at_once():
    # a: period 10, cost 15 > period, target 16, two tracks. Due at 10 (lag 10 + D 15 >= 16): [10,25)
    # loads 10. The files of 20 and 30 land while it runs; the next refresh waits for it (25, loads
    # 20), then [40,55) loads 40, then 55 starts one that the horizon cuts. Track 1 is never used.
    w = {"tracks": 2, "horizon": 60, "tables": [table(name="a", period=10, alpha=15, target_lag=16)]}
    result = sl.simulate(w, "target-lag")
    assert schedule(result) == [("a", 0, 10, 25, 10), ("a", 0, 25, 40, 20), ("a", 0, 40, 55, 40)]
    assert [(r[0], r[3]) for r in result.trace.in_flight] == [(0, 55)]


def test_rule3_a_refresh_starts_when_lag_plus_its_expected_duration_reaches_the_target():
    # a: period 10, E(n) = 1 + 0.1 n, target 25, one track. At 10: lag 10, D = E(10) = 2, due at
    # 0 + 25 - 2 = 23 (a timer). At 20 the file of 20 lands: D = E(20) = 3, due at 22: it starts at 22
    # (lag 22 + 3 = 25), lands at 25 with lag exactly 25. Then F = 20 and the same every 20: starts at
    # 42, 62, 82; at the horizon 100 the next one is due at 80 + 25 - 3 = 102, so none is running.
    # EDF-P instead refreshes at every file (10, 20, ...): target-lag runs 4 refreshes, not 9.
    w = {"tracks": 1, "horizon": 100, "tables": [table(name="a", period=10, alpha=1, beta=0.1, target_lag=25)]}
    result = sl.simulate(w, "target-lag")
    assert schedule(result) == [("a", 0, 22, 25, 20), ("a", 0, 42, 45, 40), ("a", 0, 62, 65, 60), ("a", 0, 82, 85, 80)]
    assert result.trace.in_flight == []
    row = result.target_metrics.iloc[0]
    assert (row["worst_lag"], row["time_above"], row["misses"]) == (25, 0, 0)
    assert sl.simulate(w, "edf-p").trace.n_jobs == 9


def test_rules2_and_5_upstream_first_and_a_view_waits_for_the_upstream_refresh_it_needs():
    # a (no target) feeds w (target 12) and v (target 22); three tracks. At 10 w is due (lag 10 +
    # D = 1 + 1 >= 12): its cycle needs a's 10, so a runs [10,11), then w [11,12). v, released at 11
    # with a's snapshot 10, is due at 20 (lag 20 + D = 2 + 1 >= 22) when the file of 20 lands: its cycle
    # needs a's 20. v is ready and two tracks are free, yet v is skipped while a's refresh [20,21)
    # has not finished (rule 5); at 21 v and w both read a's new snapshot, v first (earliest due:
    # 0 + 22 - 2 = 20 < w's 10 + 12 - 1 = 21).
    w = {"tracks": 3, "horizon": 25, "tables": [
        table(name="a", period=10, alpha=1), table(name="w", sources=["a"], alpha=1, target_lag=12),
        table(name="v", sources=["a"], alpha=2, target_lag=22)]}
    result = sl.simulate(w, "target-lag")
    assert schedule(result) == [("a", 0, 10, 11, 10), ("w", 0, 11, 12, 10), ("a", 0, 20, 21, 20),
                                ("w", 1, 21, 22, 20), ("v", 0, 21, 23, 20)]


def test_rule4_a_table_behind_its_target_starts_the_instant_a_track_frees():
    # One track. b1 (period 100, cost 30, target 200) is due at 170 (lag 170 + 30 >= 200) and holds
    # the track until 200. b2 (period 10, cost 1, target 12) falls due at 171 and is behind its
    # target from 172: it starts at 200, the instant the track frees, loading the file of 200.
    w = {"tracks": 1, "horizon": 205, "tables": [table(name="b1", period=100, alpha=30, target_lag=200),
                                                 table(name="b2", period=10, alpha=1, target_lag=12)]}
    assert schedule(sl.simulate(w, "target-lag"))[-3:] == [("b2", 0, 161, 162, 160), ("b1", 0, 170, 200, 100),
                                                           ("b2", 0, 200, 201, 200)]


def first_workload() -> dict:
    """Three tables due together at 10 on one track (period 10, beta 0): w (cost 5, target 14; due
    0 + 14 - 5 = 9, lag/target 10/14), y (F(0) = -8, cost 1, target 18; due -8 + 18 - 1 = 9, lag/target
    18/18) and z (cost 1, target 10.5; due 9.5, lag/target 10/10.5)."""
    return {"tracks": 1, "horizon": 19, "tables": [
        table(name="w", period=10, alpha=5, target_lag=14),
        table(name="y", period=10, alpha=1, target_lag=18, initial_freshness=-8),
        table(name="z", period=10, alpha=1, target_lag=10.5)]}


def test_the_open_choice_which_due_table_goes_first_is_the_option_first():
    orders = {first: [j[0] for j in schedule(sl.simulate(first_workload(), "target-lag", options={"first": first}))]
              for first in ("earliest-due", "most-behind", "tightest-target")}
    assert orders == {"earliest-due": ["w", "y", "z"],  # due 9, 9 (file order), 9.5
                      "most-behind": ["y", "z", "w"],  # lag/target 1, 0.952, 0.714
                      "tightest-target": ["z", "w", "y"]}  # 10.5, 14, 18
    assert [j[2] for j in schedule(sl.simulate(first_workload(), "target-lag"))] == [10, 15, 16]


def test_rule6_downstream_and_untargeted_tables_refresh_only_when_a_dependent_needs_them():
    # a (downstream -> v's 12) and b (no target) feed v; c (no target) feeds nothing with a target.
    # v is due at 10 (lag 10 + D = 1 + 1 >= 12): a and b refresh for it, then v; c never refreshes.
    w = {"tracks": 2, "horizon": 15, "tables": [
        table(name="a", period=10, alpha=1, target_lag="downstream"), table(name="b", period=10, alpha=1),
        table(name="c", period=10, alpha=1), table(name="v", sources=["a", "b"], alpha=1, target_lag=12)]}
    result = sl.simulate(w, "target-lag")
    assert schedule(result) == [("a", 0, 10, 11, 10), ("b", 1, 10, 11, 10), ("v", 0, 11, 12, 10)]
    assert result.target_metrics["table"].tolist() == ["a", "v"]  # b and c have no target to miss
    # a downstream table with no dependent of its own schedule: it waits for v's cycles, not its own
    alone = {**w, "horizon": 9.5}
    assert sl.simulate(alone, "target-lag").trace.n_jobs == 0


def test_a_workload_with_no_target_is_refused_in_one_line(tmp_path):
    w = {"tracks": 1, "horizon": 20, "tables": [table(name="a", period=10, alpha=1)]}
    try:
        sl.simulate(w, "target-lag")
    except InputError as err:
        assert err.field == "tables[*].target_lag"
    else:
        raise AssertionError("a workload without targets ran under target-lag")
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(w), encoding="utf-8")
    proc = run_cli(["simulate", path, "--policy", "target-lag"])
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "tables[*].target_lag" in proc.stderr and "at least one table a target_lag" in proc.stderr


def test_the_option_is_checked():
    w = first_workload()
    try:
        sl.simulate(w, "target-lag", options={"first": "random"})
    except InputError as err:
        assert err.field == "option first" and "earliest-due" in str(err)
    else:
        raise AssertionError("an unknown first= ran")


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def target_dags(draw):
    """3-7 tables: periodic base tables and views over earlier ones, random costs, a numeric target
    (above the table's minimum refresh) on some, ``downstream`` on others where a dependent may give
    it one; cost noise; 1-3 tracks."""
    n = draw(st.integers(3, 7))
    tables = []
    for k in range(n):
        t = table(name=f"t{k}", alpha=draw(st.sampled_from([0.5, 1, 2, 4])), beta=draw(st.sampled_from([0, 0.05, 0.2])))
        if k >= 1 and draw(st.booleans()):
            t["sources"] = draw(st.lists(st.sampled_from([f"t{j}" for j in range(k)]), min_size=1, max_size=2, unique=True))
            floor = t["alpha"]
        else:
            t["period"] = draw(st.sampled_from([5, 8, 10, 20]))
            floor = t["alpha"] + t["beta"] * t["period"]
        if draw(st.booleans()) or k == n - 1:
            t["target_lag"] = floor + draw(st.sampled_from([2, 5, 10, 30, 60]))
        tables.append(t)
    return {"tracks": draw(st.integers(1, 3)), "horizon": 300, "seed": draw(st.integers(0, 5)),
            "cost_noise": [0.5, 1.5], "tables": tables}


@PROPERTY
@given(target_dags())
def test_property_never_two_refreshes_of_a_table_at_once(w):
    result = sl.simulate(w, "target-lag")
    jobs = result.jobs
    for name, group in jobs.groupby("table"):
        starts, finishes = group["start"].to_numpy(), group["finish"].to_numpy()
        assert (starts[1:] >= finishes[:-1]).all(), name
    for record in result.trace.in_flight:  # a refresh running at the horizon started after the last one ended
        done = jobs[jobs["table"] == w["tables"][record[0]]["name"]]
        assert done.empty or record[3] >= done["finish"].max()


@PROPERTY
@given(st.integers(1, 3), st.sampled_from([5, 10, 20]), st.lists(st.sampled_from([0.5, 1, 3]), min_size=3, max_size=3),
       st.sampled_from([None, "downstream"]), st.sampled_from([4, 10, 40]), st.integers(0, 5))
def test_property_a_chain_refreshes_in_dependency_order(tracks, period, alphas, upstream_target, slack, seed):
    # a -> b -> c with a target on c only (a and b untargeted or downstream): every cycle refreshes
    # a, then b, then c, each reading the snapshot its source just committed, never overlapping.
    w = {"tracks": tracks, "horizon": 400, "seed": seed, "cost_noise": [0.5, 1.5], "tables": [
        table(name="a", period=period, alpha=alphas[0], target_lag=upstream_target),
        table(name="b", sources=["a"], alpha=alphas[1], target_lag=upstream_target),
        table(name="c", sources=["b"], alpha=alphas[2], target_lag=alphas[2] + slack)]}
    jobs = sl.simulate(w, "target-lag").jobs.sort_values("start", kind="stable")
    names = jobs["table"].tolist()
    assert names == (["a", "b", "c"] * len(names))[:len(names)]
    starts, finishes, data = jobs["start"].to_numpy(), jobs["finish"].to_numpy(), jobs["data_to"].to_numpy()
    assert (starts[1:] >= finishes[:-1]).all()
    for k in range(1, len(names)):
        if names[k] != "a":
            assert data[k] == data[k - 1]  # the view loads exactly its source's new snapshot
