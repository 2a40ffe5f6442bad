"""Bateni et al.'s schedulers (staleness_lab.policies.bateni) and GROUPANDRUN's grouping
(staleness_lab.theory.bateni.grouping): the digest's examples E6, E7 and E9 exactly, its Sec. 7
checks 9-10, the eager orders on hand examples, the non-eager baselines and the CLI options."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.cli import main
from staleness_lab.errors import Infeasible, InputError
from staleness_lab.policies import available_policies
from staleness_lab.policies.bateni import declared_lengths
from staleness_lab.theory.bateni.grouping import allocate, parse_groups, stab_groups, track_ranges

EXACT = dict(rel=0, abs=1e-12)
BATENI = ["myopic", "largest-first", "newest-first", "round-robin", "threshold", "polling", "group-and-run"]


def table(name: str, arrivals, beta: float, priority: float = 1, **extra) -> dict:
    """A Bateni table: alpha 0, beta = the paper's alpha_i, replayed releases."""
    return {"name": name, "arrivals": arrivals, "alpha": 0, "beta": beta, "priority": priority, **extra}


def workload(tracks: int, tables: list[dict], horizon: float = 100) -> dict:
    return {"tracks": tracks, "horizon": horizon, "tables": tables}


def trace(result) -> list[tuple[str, float, float]]:
    """(table, start, finish) of every job, in start order (ties: track)."""
    jobs = result.jobs.sort_values(["start", "track"])
    return list(zip(jobs["table"], jobs["start"], jobs["finish"]))


def trace_of(jobs) -> list[tuple[str, float]]:
    """(table, start) of every job, in start order (ties: track)."""
    jobs = jobs.sort_values(["start", "track"])
    return list(zip(jobs["table"], jobs["start"]))


def assert_trace(result, expected) -> None:
    got = trace(result)
    assert [name for name, _, _ in got] == [name for name, _, _ in expected]
    for (_, start, finish), (_, s, f) in zip(got, expected):
        assert start == pytest.approx(float(s), **EXACT)
        assert finish == pytest.approx(float(f), **EXACT)


def test_every_policy_is_registered_with_a_docstring_citing_the_paper():
    policies = available_policies()
    for name in BATENI:
        assert "Bateni et al." in policies[name], name


# ---------------------------------------------------------------------------------------------
# E6: MYOPIC's order (digest Sec. 4, check 9)
# ---------------------------------------------------------------------------------------------

E6 = workload(1, [table("A", [1], 0.5), table("B", [1.5], 0.5), table("C", [1.2], 0.5)], horizon=10)


def test_e6_myopic_runs_a_c_b():
    # MYOPIC: A [1,1.5], then C (released 1.2) before B (released 1.5, visible at 1.5)
    assert_trace(sl.simulate(E6, "myopic"), [("A", 1, 1.5), ("C", 1.5, 2.1), ("B", 2.1, 2.85)])


def test_e6_largest_first_runs_a_b_c():
    assert_trace(sl.simulate(E6, "largest-first"), [("A", 1, 1.5), ("B", 1.5, 2.25), ("C", 2.25, 2.85)])


def test_e6_newest_first_takes_the_latest_release():
    # at 1.5 B (released 1.5) is newer than C (released 1.2)
    assert_trace(sl.simulate(E6, "newest-first"), [("A", 1, 1.5), ("B", 1.5, 2.25), ("C", 2.25, 2.85)])


def test_largest_first_is_rekeyed_when_a_waiting_table_grows():
    # p = 1: A runs [1, 2]; meanwhile B (1 unit at 1.2) and C (0.5 at 1.5, then 1 more at 1.9):
    # at 2, C has 1.9 pending against B's 1.2, so C goes first although its key was smaller
    w = workload(1, [table("A", [1], 1), table("B", [1.2], 1), table("C", [[1.5, 0.5], [1.9, 1.9]], 1)])
    got = trace(sl.simulate(w, "largest-first"))
    assert [name for name, _, _ in got] == ["A", "C", "B"]


# ---------------------------------------------------------------------------------------------
# E7: GROUPANDRUN (digest Sec. 4, check 10)
# ---------------------------------------------------------------------------------------------

B24 = 1 / 24
E7_ARRIVALS = {"T0": [1, 2, 3], "T1": [1.01, 1.99, 2.995], "T2": [8, 17]}
# declared (Lmin, Lmax) from the releases: T0 lengths 1, 1, 1; T1 1.01, .98, 1.005; T2 8, 9
E7_RANGES = {"T0": [1, 1], "T1": [0.98, 1.01], "T2": [8, 9]}
F = Fraction
E7_TRACE = [
    ("T0", 1, F(25, 24)), ("T1", F(25, 24), F(867, 800)), ("T1", F(199, 100), F(2437, 1200)),
    ("T0", F(2437, 1200), F(829, 400)), ("T1", F(599, 200), F(4859, 1600)), ("T0", F(4859, 1600), F(14777, 4800)),
    ("T2", 8, F(25, 3)), ("T2", 17, F(139, 8)),
]


def e7(weights=(1, 2, 0.5), ranges: bool = True) -> dict:
    tables = []
    for (name, arrivals), w in zip(E7_ARRIVALS.items(), weights):
        extra = {"length_range": E7_RANGES[name]} if ranges else {}
        tables.append(table(name, arrivals, B24, priority=w, **extra))
    return workload(3, tables, horizon=30)


def test_e7_grouping_and_allocation():
    lengths = [tuple(E7_RANGES[n]) for n in E7_ARRIVALS]
    groups = stab_groups(lengths)
    assert groups == [[0, 1], [2]]  # B in [1.01, 1.96] and [9, 16]
    alloc = allocate([len(g) for g in groups], 3)
    assert alloc == [1, 1]  # [ceil(2/3), ceil(1/3)]: one track idles
    assert track_ranges(alloc) == [range(0, 1), range(1, 2)]


@pytest.mark.parametrize("ranges", [True, False], ids=["length_range", "listed lengths"])
def test_e7_trace_exactly(ranges):
    result = sl.simulate(e7(ranges=ranges), "group-and-run")
    assert_trace(result, E7_TRACE)
    jobs = result.jobs
    assert set(jobs.loc[jobs["table"].isin(["T0", "T1"]), "track"]) == {0}
    assert set(jobs.loc[jobs["table"] == "T2", "track"]) == {1}
    assert 2 not in set(jobs["track"])  # the leftover track idles


def test_e7_weights_do_not_change_the_trace_and_given_groups_agree():
    reference = trace(sl.simulate(e7(), "group-and-run"))
    assert trace(sl.simulate(e7(weights=(1, 1, 1)), "group-and-run")) == reference
    given_ = sl.simulate(e7(), "group-and-run", options={"groups": "T0, T1; T2"})
    assert trace(given_) == reference


def test_use_leftover_lets_the_idle_track_take_any_group():
    # non-paper: T1's release at 1.01 no longer waits for T0 on track 0; it takes track 2
    result = sl.simulate(e7(), "group-and-run", options={"use_leftover": True})
    jobs = result.jobs.sort_values("start").reset_index(drop=True)
    assert (jobs.loc[1, "table"], jobs.loc[1, "start"], jobs.loc[1, "track"]) == ("T1", 1.01, 2)


def test_groups_option_places_each_group_on_its_own_tracks():
    # four tables, groups {a,b} and {c,d}, p = 4 -> allocation [1, 1]: a and b share track 0
    w = workload(4, [table(n, [1], 0.5) for n in "abcd"])
    result = sl.simulate(w, "group-and-run", options={"groups": "a,c;b,d"})
    tracks = dict(zip(result.jobs["table"], result.jobs["track"]))
    assert tracks == {"a": 0, "c": 0, "b": 1, "d": 1}
    starts = dict(zip(result.jobs["table"], result.jobs["start"]))
    assert starts == {"a": 1, "c": 1.5, "b": 1, "d": 1.5}


# ---------------------------------------------------------------------------------------------
# E9 grouping, allocation and the groups option (check 10)
# ---------------------------------------------------------------------------------------------


def test_e9_grouping():
    ranges = [(1, 1.5), (0.8, 1.2), (0.9, 1.7), (50, 90), (60, 100)]
    assert stab_groups(ranges) == [[0, 1], [2], [3, 4]]  # B = 1.6, 1.8, 100: g = 3, the minimum


def test_e9_grouping_from_a_workload():
    ranges = {"T1": [1, 1.5], "T2": [0.8, 1.2], "T3": [0.9, 1.7], "T4": [50, 90], "T5": [60, 100]}
    # one release each, all at 200 (the declared ranges, not the releases, decide the groups)
    w = workload(6, [table(n, [200], 0.001, length_range=r) for n, r in ranges.items()], horizon=300)
    result = sl.simulate(w, "group-and-run")  # g = 3, allocation ceil(3*|T_k|/5) = [2, 1, 2]
    tracks = dict(zip(result.jobs["table"], result.jobs["track"]))
    assert tracks == {"T1": 0, "T2": 1, "T3": 2, "T4": 3, "T5": 4}


def test_allocation():
    assert allocate([4, 2], 4) == [2, 1]  # digest E7: t = 6, p = 4
    assert sum(allocate([4, 2], 4)) <= 4
    assert allocate([1, 1, 1], 4) == [1, 1, 1]
    assert allocate([5], 3) == [2]
    for sizes, p in [([1, 1], 2), ([3, 1, 1], 3), ([2], 1)]:
        with pytest.raises(Infeasible, match="p > g"):
            allocate(sizes, p)


@given(st.lists(st.integers(1, 20), min_size=1, max_size=8), st.integers(1, 40))
def test_allocation_property(sizes, p):
    if p <= len(sizes):
        with pytest.raises(Infeasible):
            allocate(sizes, p)
        return
    alloc = allocate(sizes, p)
    assert sum(alloc) <= p and all(a >= 1 for a in alloc)
    t = sum(sizes)
    for a, s in zip(alloc, sizes):
        assert a - 1 < Fraction((p - len(sizes)) * s, t) <= a


def test_p_at_most_g_is_infeasible_not_an_error(tmp_path, capsys):
    # E9 needs 3 groups: p = 3 is infeasible
    ranges = {"T1": [1, 1.5], "T2": [0.8, 1.2], "T3": [0.9, 1.7], "T4": [50, 90], "T5": [60, 100]}
    w = workload(3, [table(n, [r[1]], 0.01, length_range=r) for n, r in ranges.items()])
    with pytest.raises(Infeasible, match="p = 3 and g = 3"):
        sl.simulate(w, "group-and-run")
    path = tmp_path / "e9.json"
    path.write_text(json.dumps(w))
    code = main(["simulate", str(path), "--policy", "group-and-run", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert json.loads(out)["status"] == "infeasible"


NAMES = ["a", "b", "c"]
LENGTHS = [(1.0, 1.5), (0.8, 1.2), (10.0, 12.0)]


def test_parse_groups():
    assert parse_groups("a,b;c", NAMES, LENGTHS) == [[0, 1], [2]]
    assert parse_groups(" c ; b , a ", NAMES, LENGTHS) == [[2], [1, 0]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a,b;d", "unknown table 'd'"),
        ("a,b;c,a", "table 'a' is listed more than once"),
        ("a,b", "every table must be in a group; missing: c"),
        ("a;b,c", "group b,c is not B-quasiperiodic"),
        ("a,b;;c", "an empty table name or group"),
        ("a,b,;c", "an empty table name or group"),
    ],
)
def test_parse_groups_errors_name_the_option(text, message):
    with pytest.raises(InputError, match=r"^option groups: ") as err:
        parse_groups(text, NAMES, LENGTHS)
    assert message in str(err.value)
    assert err.value.field == "option groups"


def test_groups_option_is_validated_at_bind():
    w = workload(3, [table(n, [r[1]], 0.01, length_range=list(r)) for n, r in zip(NAMES, LENGTHS)])
    with pytest.raises(InputError, match=r"^option groups: group a,c is not B-quasiperiodic"):
        sl.simulate(w, "group-and-run", options={"groups": "a,c;b"})


def test_a_table_quasiperiodic_for_no_b_is_refused_naming_its_length_range():
    with pytest.raises(InputError, match=r"^tables\[1\]\.length_range") as err:
        stab_groups([(1, 1), (1, 2.5)])
    assert err.value.table is None
    # from a workload: listed update lengths 1 and 3 give the empty interval [3, 2]
    w = workload(3, [table("a", [1], 0.1), table("b", [1, 4], 0.1)])
    with pytest.raises(InputError, match=r"^tables\[1\]\.length_range \(table 'b'\)"):
        sl.simulate(w, "group-and-run")


def test_group_and_run_on_golab_workloads_groups_periodic_feeds_by_period_and_views_by_ancestors():
    # a (period 2): [2, 4]; b (period 5): [5, 10]; view v over both takes (max Lmin, max Lmax)
    # = (5, 5): [5, 10], so it joins b. Groups {a}, {b, v}: p = 4, allocation ceil(2*1/3) = 1
    # and ceil(2*2/3) = 2, track 3 left over
    w = {"tracks": 4, "horizon": 40, "tables": [
        {"name": "a", "period": 2, "alpha": 0, "beta": 0.1, "priority": 1},
        {"name": "b", "period": 5, "alpha": 0.2, "beta": 0.1, "priority": 1},
        {"name": "v", "sources": ["a", "b"], "alpha": 0.5, "beta": 0.1, "priority": 1},
    ]}
    assert declared_lengths(sl.parse_workload(w)) == [(2, 2), (5, 5), (5, 5)]
    result = sl.simulate(w, "group-and-run")
    tracks = result.jobs.groupby("table")["track"].unique()
    assert set(tracks["a"]) == {0} and set(tracks["b"]) | set(tracks["v"]) <= {1, 2}
    assert 3 not in set(result.jobs["track"])
    with pytest.raises(InputError, match=r"^option groups: group a,v is not B-quasiperiodic"):
        sl.simulate(w, "group-and-run", options={"groups": "a,v;b"})


# ---------------------------------------------------------------------------------------------
# MYOPIC == FIFO, and threshold 0 == MYOPIC (Hypothesis)
# ---------------------------------------------------------------------------------------------


@st.composite
def replayed_workloads(draw, max_tables: int = 5):
    """Bateni workloads: alpha 0, 1-5 tables with 1-6 releases each, tracks 1-3."""
    n = draw(st.integers(1, max_tables))
    tables = []
    for k in range(n):
        times = draw(st.lists(st.floats(0.01, 20, allow_nan=False), min_size=1, max_size=6, unique=True))
        tables.append(table(
            f"t{k}", sorted(times), draw(st.sampled_from([0.01, 0.1, 0.25, 0.5, 1.0])),
            priority=draw(st.sampled_from([0.5, 1, 2])),
        ))
    return workload(draw(st.integers(1, 3)), tables, horizon=60)


def jobs_records(result) -> list[tuple]:
    return list(result.jobs.itertuples(index=False, name=None))


@settings(max_examples=150, deadline=None)
@given(replayed_workloads())
def test_myopic_is_fifo(w):
    reference = jobs_records(sl.simulate(w, "fifo"))
    assert jobs_records(sl.simulate(w, "myopic")) == reference
    assert jobs_records(sl.simulate(w, "threshold", options={"min_delta": 0.0})) == reference


def test_myopic_is_fifo_on_a_golab_workload():
    w = {"tracks": 2, "horizon": 200, "tables": [
        {"name": "a", "period": 3, "alpha": 0.5, "beta": 0.2, "priority": 1},
        {"name": "b", "period": 5, "phase": 1, "alpha": 1, "beta": 0.1, "priority": 2, "min_separation": 6},
        {"name": "v", "sources": ["a", "b"], "alpha": 0.3, "beta": 0.05, "priority": 1, "chop": 1},
    ]}
    assert jobs_records(sl.simulate(w, "myopic")) == jobs_records(sl.simulate(w, "fifo"))


@pytest.mark.parametrize("policy", BATENI)
def test_every_policy_runs_a_golab_workload(policy):
    w = {"tracks": 2, "horizon": 100, "tables": [
        {"name": "a", "period": 3, "alpha": 0.5, "beta": 0.2, "priority": 1},
        {"name": "b", "period": 5, "phase": 1, "alpha": 1, "beta": 0.1, "priority": 2},
        {"name": "v", "sources": ["a", "b"], "alpha": 0.3, "beta": 0.05, "priority": 1},
    ]}
    result = sl.simulate(w, policy)
    assert set(result.jobs["table"]) == {"a", "b", "v"}


# ---------------------------------------------------------------------------------------------
# Round-robin
# ---------------------------------------------------------------------------------------------


def test_round_robin_takes_the_next_position_after_the_last_started():
    # p = 1, beta 1. C runs [1, 2]; at 2 both A (released 1.8) and B (1.5) wait: the next
    # position after C is A (cyclic), although FIFO would take B
    w = workload(1, [table("A", [1.8], 1), table("B", [1.5], 1), table("C", [1], 1)])
    assert_trace(sl.simulate(w, "round-robin"), [("C", 1, 2), ("A", 2, 3.8), ("B", 3.8, 5.3)])
    assert [name for name, _, _ in trace(sl.simulate(w, "fifo"))] == ["C", "B", "A"]


def test_round_robin_wraps_over_several_free_tracks():
    # p = 2, beta 1. At 1: B and C ready, cycle from position 0 -> B on track 0, C on track 1,
    # last started C. At 2 both tracks free, A and D ready (released 1.5): the cycle from D
    # gives D track 0 and A track 1 (FIFO: A first)
    w = workload(2, [table("A", [1.5], 1), table("B", [1], 1), table("C", [1], 1), table("D", [1.5], 1)])
    jobs = sl.simulate(w, "round-robin").jobs
    placed = {(name, start): track for name, start, track in zip(jobs["table"], jobs["start"], jobs["track"])}
    assert placed == {("B", 1): 0, ("C", 1): 1, ("D", 2): 0, ("A", 2): 1}


# ---------------------------------------------------------------------------------------------
# Threshold and polling (non-eager)
# ---------------------------------------------------------------------------------------------


def test_threshold_holds_back_until_min_delta():
    # releases at 1, 2, 3 (1 unit each); min_delta 2.5: one job at 3 loading [0, 3]
    w = workload(1, [table("A", [1, 2, 3, 10], 0.1)], horizon=20)
    jobs = sl.simulate(w, "threshold", options={"min_delta": 2.5}).jobs
    assert list(zip(jobs["start"], jobs["data_from"], jobs["data_to"])) == [(3, 0, 3), (10, 3, 10)]


def test_threshold_starts_the_last_update_even_below_min_delta():
    # after 2 no arrival is left: the 2 units run although min_delta is 5
    w = workload(1, [table("A", [1, 2], 0.1)], horizon=20)
    jobs = sl.simulate(w, "threshold", options={"min_delta": 5.0}).jobs
    assert list(zip(jobs["start"], jobs["data_to"])) == [(2, 2)]


def test_threshold_reconsiders_held_tables_when_a_track_frees():
    # A runs [2.5, 3.5]; B is eligible at 3 but the track is busy until 3.5; it starts then
    w = workload(1, [table("A", [2.5], 0.4), table("B", [1, 2, 3, 9], 0.1)], horizon=20)
    jobs = sl.simulate(w, "threshold", options={"min_delta": 2.5}).jobs
    assert trace_of(jobs) == [("A", 2.5), ("B", 3.5), ("B", 9.0)]


def test_threshold_on_periodic_and_derived_tables():
    # periodic a (period 1, never a last arrival) waits for 2.5 units: starts at 3, 6, 9;
    # view v over a grows by 3 per completion and starts right after a
    w = {"tracks": 2, "horizon": 10, "tables": [
        {"name": "a", "period": 1, "alpha": 0.1, "beta": 0, "priority": 1},
        {"name": "v", "sources": ["a"], "alpha": 0.1, "beta": 0, "priority": 1},
    ]}
    jobs = sl.simulate(w, "threshold", options={"min_delta": 2.5}).jobs
    assert [s for s in jobs.loc[jobs["table"] == "a", "start"]] == [3, 6, 9]
    assert [s for s in jobs.loc[jobs["table"] == "v", "start"]] == pytest.approx([3.1, 6.1, 9.1])
    # a derived table whose base ancestor has no later arrival starts below min_delta
    w = workload(2, [table("a", [1], 0.1), {"name": "v", "sources": ["a"], "alpha": 0, "beta": 0.1, "priority": 1}])
    jobs = sl.simulate(w, "threshold", options={"min_delta": 5.0}).jobs
    assert trace_of(jobs) == [("a", 1.0), ("v", pytest.approx(1.1))]


def test_polling_starts_at_the_next_poll_even_when_nothing_else_happens():
    w = workload(1, [table("A", [0.3], 0.1)], horizon=5)
    jobs = sl.simulate(w, "polling", options={"interval": 1.0}).jobs
    assert list(jobs["start"]) == [1.0]


def test_polling_waits_for_the_next_poll_after_a_completion():
    # both released at 0.3: A runs [1, 1.3]; the track is free at 1.3 but B waits for the poll at 2
    w = workload(1, [table("A", [0.3], 1), table("B", [0.3], 1)], horizon=5)
    assert trace_of(sl.simulate(w, "polling").jobs) == [("A", 1.0), ("B", 2.0)]


@settings(max_examples=60, deadline=None)
@given(replayed_workloads(), st.sampled_from([0.1, 0.25, 0.3, 1.0, 2.5]))
def test_polling_starts_only_at_multiples_of_interval(w, interval):
    from staleness_lab.policies import get_policy
    from staleness_lab.sim.drain import drained_run

    drained = drained_run(sl.parse_workload(w), get_policy("polling", interval=interval), "polling")
    assert drained.drained
    jobs = drained.trace.jobs
    for start in jobs["start"]:
        k = round(start / interval)
        assert abs(start - k * interval) <= 1e-9
    # every update is eventually loaded (the run is drained: the horizon raised until it is)
    loaded = jobs.groupby("table")["data_to"].max()
    for t in w["tables"]:
        assert loaded[t["name"]] == max(t["arrivals"])


# ---------------------------------------------------------------------------------------------
# Options from the CLI
# ---------------------------------------------------------------------------------------------


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def two_tables(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload(3, [table("a", [1, 2], 0.1), table("b", [1.5, 3], 0.1)])))
    return path


def test_cli_group_and_run_with_groups(capsys, two_tables):
    code, out, err = cli(capsys, "simulate", two_tables, "--policy", "group-and-run", "--option", "groups=a;b", "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["status"] == "ok" and summary["policy"] == "group-and-run" and summary["jobs"] == 4


@pytest.mark.parametrize(
    ("policy", "option", "message"),
    [
        ("group-and-run", "groups=a;zz", "option groups: unknown table 'zz'"),
        ("group-and-run", "groups=a", "option groups: every table must be in a group; missing: b"),
        ("group-and-run", "use_leftover=perhaps", "--option use_leftover: must be of type bool"),
        ("polling", "interval=0", "--option interval: must be > 0"),
        ("threshold", "min_delta=-1", "--option min_delta: must be >= 0"),
        ("myopic", "k=1", "--option k: policy 'myopic' has no option 'k'"),
    ],
)
def test_cli_bad_option_exits_2_with_one_line(capsys, two_tables, policy, option, message):
    code, out, err = cli(capsys, "simulate", two_tables, "--policy", policy, "--option", option)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("staleness-lab: error: " + message), err


def test_cli_lists_the_options(capsys):
    code, out, _ = cli(capsys, "simulate", "--list-policies")
    assert code == 0
    for expected in [
        "min_delta: float >= 0 = 0.0", "interval: float > 0 = 1.0", "groups: str = ''", "use_leftover: bool = False",
    ]:
        assert expected in out, expected
    assert "non-paper" in out
