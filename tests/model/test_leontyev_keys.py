"""The workload keys of Leontyev et al.'s AUS model: outages, jitters, budgets, recovery keys,
``cost_noise`` and ``provisioning``; their validation, round trip, compilation into files and
the engine's use of the compiled files."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
import yaml

import staleness_lab as sl
from staleness_lab import InputError, Table, Workload, load_workload, parse_workload
from staleness_lab.model import dump_workload
from staleness_lab.model.feeds import land
from staleness_lab.policies import BoundPolicy
from staleness_lab.sim.drain import drained_run
from staleness_lab.sim.engine import run
from staleness_lab.sim.size import check_run_size, estimate
from example_workloads import BASE, with_entry

CLI = Path(sys.executable).parent / "staleness-lab"
Mutation = Callable[[dict[str, Any]], None]


def edited(mutation: Mutation) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    mutation(data)
    return data


def tab(k: int, **changes: Any) -> Mutation:
    return lambda w: w["tables"][k].update(changes)


def top(**changes: Any) -> Mutation:
    return lambda w: w.update(changes)


def periodic(name: str, period: float, **extra: Any) -> dict[str, Any]:
    return {"name": name, "period": period, "alpha": 1, "beta": 0.1, "priority": 1, **extra}


def replayed(name: str, arrivals: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "arrivals": arrivals, "alpha": 1, "beta": 0.1, "priority": 1, **extra}


def one_table(table: dict[str, Any], horizon: float = 20, **extra: Any) -> Workload:
    return parse_workload({"tracks": 1, "horizon": horizon, "tables": [table], **extra})


# ---------------------------------------------------------------------------------------------
# bad input: InputError naming the field and the table
# ---------------------------------------------------------------------------------------------
BAD = [
    # outages (orders: periodic, period 10; clicks: replayed; summary: derived)
    pytest.param(tab(2, outages=[[1, 2]]), "tables[2].outages", "summary", "base table", id="outages-on-derived"),
    pytest.param(tab(0, outages="often"), "tables[0].outages", "orders", "list", id="outages-not-a-list"),
    pytest.param(tab(0, outages=[[1]]), "tables[0].outages[0]", "orders", "pair", id="outages-not-a-pair"),
    pytest.param(tab(0, outages=[5]), "tables[0].outages[0]", "orders", "pair", id="outages-scalar-entry"),
    pytest.param(tab(0, outages=[[-1, 2]]), "tables[0].outages[0][0]", "orders", ">= 0", id="outages-negative-start"),
    pytest.param(tab(0, outages=[[5, 5]]), "tables[0].outages[0][1]", "orders", "> 5", id="outages-empty-interval"),
    pytest.param(tab(0, outages=[[5, 3]]), "tables[0].outages[0][1]", "orders", "> 5", id="outages-end-before-start"),
    pytest.param(tab(1, outages=[[1, "x"]]), "tables[1].outages[0][1]", "clicks", "number", id="outages-end-string"),
    pytest.param(tab(0, outages=[[1, 5], [4, 8]]), "tables[0].outages[1][0]", "orders", "disjoint", id="outages-overlap"),
    pytest.param(tab(0, outages=[[6, 8], [1, 2]]), "tables[0].outages[1][0]", "orders", "sorted", id="outages-unsorted"),
    # jitters
    pytest.param(tab(1, arrival_jitter=1), "tables[1].arrival_jitter", "clicks", "periodic", id="arrival-jitter-replayed"),
    pytest.param(tab(2, arrival_jitter=1), "tables[2].arrival_jitter", "summary", "periodic", id="arrival-jitter-derived"),
    pytest.param(tab(0, arrival_jitter=-1), "tables[0].arrival_jitter", "orders", ">= 0", id="arrival-jitter-negative"),
    pytest.param(tab(0, arrival_jitter=10.5), "tables[0].arrival_jitter", "orders", "<= the period 10",
                 id="arrival-jitter-above-period"),
    pytest.param(tab(0, arrival_jitter=True), "tables[0].arrival_jitter", "orders", "number", id="arrival-jitter-bool"),
    pytest.param(tab(0, timestamp_jitter=-0.5), "tables[0].timestamp_jitter", "orders", ">= 0", id="timestamp-jitter-negative"),
    pytest.param(tab(1, timestamp_jitter=2), "tables[1].timestamp_jitter", "clicks", "periodic", id="timestamp-jitter-replayed"),
    # budgets and recovery
    pytest.param(tab(0, budget=0), "tables[0].budget", "orders", "> 0", id="budget-zero"),
    pytest.param(tab(2, budget="2"), "tables[2].budget", "summary", "number", id="budget-string"),
    pytest.param(tab(0, recovery_period=0), "tables[0].recovery_period", "orders", "> 0", id="recovery-period-zero"),
    pytest.param(tab(0, budget=3, recovery_period=2), "tables[0].recovery_period", "orders", ">= the budget 3",
                 id="recovery-period-below-budget"),
    pytest.param(tab(0, recovery_period=11), "tables[0].recovery_period", "orders", "<= the period 10",
                 id="recovery-period-above-period"),
    pytest.param(tab(1, recovery_period=9), "tables[1].recovery_period", "clicks", "<= the period 8",
                 id="recovery-period-above-nominal-period"),
    pytest.param(tab(0, recovery_threshold=-1), "tables[0].recovery_threshold", "orders", ">= 0",
                 id="recovery-threshold-negative"),
    # nominal_period: still refused on a periodic table
    pytest.param(tab(0, nominal_period=5), "tables[0].nominal_period", "orders", "arrivals", id="nominal-period-on-periodic"),
    pytest.param(tab(0, outage=[[1, 2]]), "tables[0].outage", "orders", "unknown", id="unknown-table-key"),
    # global keys
    pytest.param(top(cost_noise=0.5), "cost_noise", None, "pair", id="cost-noise-scalar"),
    pytest.param(top(cost_noise=[1, 2, 3]), "cost_noise", None, "pair", id="cost-noise-triple"),
    pytest.param(top(cost_noise=[-0.1, 1]), "cost_noise[0]", None, ">= 0", id="cost-noise-negative-lo"),
    pytest.param(top(cost_noise=[1.2, 0.8]), "cost_noise[1]", None, ">= 1.2", id="cost-noise-hi-below-lo"),
    pytest.param(top(cost_noise=[0, 0]), "cost_noise[1]", None, "> 0", id="cost-noise-all-zero"),
    pytest.param(top(cost_noise=[0.5, 1.5], variability=0.5), "cost_noise", None, "not both with variability",
                 id="cost-noise-and-variability"),
    pytest.param(top(provisioning="best"), "provisioning", None, "worst, average", id="provisioning-unknown"),
    pytest.param(top(provisioning=1), "provisioning", None, "string", id="provisioning-not-a-string"),
]


@pytest.mark.parametrize(("mutation", "field", "table", "fragment"), BAD)
def test_bad_input_names_the_field_and_table(mutation: Mutation, field: str, table: str | None, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        parse_workload(edited(mutation))
    err = info.value
    assert (err.field, err.table) == (field, table)
    text = str(err)
    assert text.startswith(field) and "\n" not in text
    assert fragment in text


@pytest.mark.parametrize(
    ("kwargs", "field", "fragment"),
    [
        pytest.param({"outages": ((3, 1),)}, "outages[0][1]", "> 3", id="outages"),
        pytest.param({"arrival_jitter": 11}, "arrival_jitter", "<= the period", id="arrival-jitter"),
        pytest.param({"budget": -1}, "budget", "> 0", id="budget"),
        pytest.param({"budget": 2, "recovery_period": 1}, "recovery_period", ">= the budget", id="recovery-period"),
    ],
)
def test_table_constructor_validates_the_new_keys(kwargs: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        Table(name="t", alpha=1, beta=0, period=10, **kwargs)
    assert (info.value.field, info.value.table) == (field, "t")
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("mutation", "field"),
    [
        pytest.param(tab(0, outages=[[1, 5], [4, 8]]), "tables[0].outages[1][0]", id="outages"),
        pytest.param(top(cost_noise=[0.5, 1.5], variability=0.5), "cost_noise", id="cost-noise"),
    ],
)
def test_cli_validate_exits_2_with_one_line(tmp_path: Path, mutation: Mutation, field: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(edited(mutation)), encoding="utf-8")
    proc = subprocess.run([str(CLI), "validate", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and field in lines[0], proc.stderr


def test_good_values_at_the_edges_are_accepted() -> None:
    w = parse_workload(edited(lambda d: (
        tab(0, outages=[[0, 5], [5, 7]], arrival_jitter=10, timestamp_jitter=0, budget=2, recovery_period=2,
            recovery_threshold=0)(d),
        tab(1, outages=[], arrival_jitter=0, budget=1, recovery_period=8)(d),
        top(cost_noise=[0, 1], provisioning="average")(d),
    )))
    assert w.tables[0].outages == ((0.0, 5.0), (5.0, 7.0))
    assert w.tables[1].outages is None  # an empty list is no outage
    assert w.cost_noise == (0.0, 1.0) and w.provisioning == "average"


# ---------------------------------------------------------------------------------------------
# nominal_period on a derived table (relaxed rule)
# ---------------------------------------------------------------------------------------------
def test_nominal_period_on_a_derived_table_is_its_period() -> None:
    default = parse_workload(BASE)
    own = parse_workload(edited(tab(2, nominal_period=5)))
    assert default.periods[2] == 10  # the largest base-ancestor period, as before
    assert own.periods == (10, 8, 5)
    assert own.tables[2].to_dict()["nominal_period"] == 5
    assert parse_workload(own.to_dict()) == own


# ---------------------------------------------------------------------------------------------
# round trip and digest
# ---------------------------------------------------------------------------------------------
RICH: dict[str, Any] = {
    "tracks": 2,
    "horizon": 60,
    "seed": 5,
    "cost_noise": [0.8, 1.2],
    "provisioning": "average",
    "tables": [
        periodic("p", 5, phase=1, outages=[[10, 14], [20, 21.5]], arrival_jitter=2, timestamp_jitter=1.5,
                 budget=2, recovery_period=3, recovery_threshold=4),
        replayed("r", [1, 4, 7, 10, 13, 16], outages=[[4, 10]], nominal_period=3, budget=1.5),
        {"name": "v", "sources": ["p", "r"], "alpha": 1, "beta": 0.1, "priority": 1, "nominal_period": 6,
         "budget": 1, "recovery_period": 1, "recovery_threshold": 0},
    ],
}


def test_every_new_key_round_trips_through_yaml(tmp_path: Path) -> None:
    w = parse_workload(RICH)
    data = w.to_dict()
    for key in ("cost_noise", "provisioning"):
        assert key in data
    for key in ("outages", "arrival_jitter", "timestamp_jitter", "budget", "recovery_period", "recovery_threshold"):
        assert key in data["tables"][0]
    path = tmp_path / "w.yaml"
    dump_workload(w, path)
    again = load_workload(path)
    assert again == w
    assert again.to_dict() == data
    assert again.digest() == w.digest()
    from_text = parse_workload(yaml.safe_load(yaml.safe_dump(data)))
    assert from_text.digest() == w.digest()


def test_defaults_are_left_out_of_to_dict() -> None:
    data = parse_workload(edited(lambda d: (tab(0, arrival_jitter=0, timestamp_jitter=0)(d), top(provisioning="worst")(d))))
    assert data.to_dict() == parse_workload(BASE).to_dict()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param(("cost_noise",), [0.9, 1.2], id="cost-noise"),
        pytest.param(("provisioning",), "worst", id="provisioning"),
        pytest.param(("tables", 0, "outages"), [[10, 15]], id="outages"),
        pytest.param(("tables", 0, "arrival_jitter"), 1, id="arrival-jitter"),
        pytest.param(("tables", 0, "timestamp_jitter"), 0, id="timestamp-jitter"),
        pytest.param(("tables", 0, "budget"), 2.5, id="budget"),
        pytest.param(("tables", 0, "recovery_period"), 4, id="recovery-period"),
        pytest.param(("tables", 0, "recovery_threshold"), 1, id="recovery-threshold"),
        pytest.param(("tables", 2, "nominal_period"), 7, id="derived-nominal-period"),
    ],
)
def test_digest_changes_when_a_new_key_changes(path: tuple[Any, ...], value: Any) -> None:
    base = parse_workload(RICH)
    changed = parse_workload(with_entry(RICH, path, value))
    assert changed != base and changed.digest() != base.digest()


def test_overrides_take_the_global_keys() -> None:
    w = parse_workload(BASE).with_overrides(cost_noise=(0.5, 1.5), provisioning="average")
    assert (w.cost_noise, w.provisioning) == ((0.5, 1.5), "average")
    with pytest.raises(InputError, match="not both"):
        w.with_overrides(variability=0.2)


# ---------------------------------------------------------------------------------------------
# compiled files: outages (digest E1) and jitter (Def. 2)
# ---------------------------------------------------------------------------------------------
def test_outage_on_a_replayed_feed_holds_files_back_to_its_end() -> None:
    # the file at 4 and the one at 7 land at 10 (closed at start); the one at 10 is not held
    # (open at end); timestamps unchanged
    w = one_table(replayed("r", [1, 4, 7, 10, 13, 16], outages=[[4, 10]]))
    assert w.files[0] == ((1, 1), (10, 4), (10, 7), (10, 10), (13, 13), (16, 16))


def test_outage_on_a_periodic_feed_compiles_it() -> None:
    w = one_table(periodic("p", 3, phase=1, outages=[[4, 10]]))
    assert w.tables[0].compiled_feed
    assert w.files[0] == ((10, 4), (10, 7), (10, 10), (13, 13), (16, 16), (19, 19))


def test_compiled_periodic_files_landing_after_the_horizon_are_dropped() -> None:
    w = one_table(periodic("p", 3, phase=1, outages=[[14, 30]]))
    assert w.files[0] == ((4, 4), (7, 7), (10, 10), (13, 13))


def test_a_replayed_feed_keeps_every_listed_file() -> None:
    # as before the new keys: the engine processes arrivals up to the horizon, a lookahead may
    # see a later one
    r = one_table(replayed("r", [1, 15, 18], outages=[[15, 25]]), horizon=10)
    assert r.files[0] == ((1, 1), (25, 15), (25, 18))
    plain = one_table(replayed("r", [1, 15, 18]), horizon=10)
    assert plain.files[0] is plain.tables[0].arrivals


def test_land_is_closed_at_start_and_open_at_end() -> None:
    times = np.array([0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 6.0, 7.0])
    landed = land(times, ((1.0, 3.0), (5.0, 7.0)))
    assert landed.tolist() == [0.0, 3.0, 3.0, 3.0, 3.0, 7.0, 7.0, 7.0]


def test_plain_and_unlisted_feeds_have_no_files() -> None:
    w = parse_workload(edited(tab(0, arrival_jitter=0, timestamp_jitter=0)))
    assert w.files[0] is None  # plain periodic: today's path
    assert w.files[1] == w.tables[1].arrivals  # replayed, no outage: as listed
    assert w.files[2] is None  # derived


JITTERED = periodic("p", 4, phase=1, arrival_jitter=3, timestamp_jitter=2.5)


def test_jitter_keeps_files_in_their_windows() -> None:
    w = one_table(JITTERED, horizon=2000, seed=3)
    files = np.array(w.files[0])
    arrivals, stamps = files[:, 0], files[:, 1]
    k = np.arange(1, len(files) + 1)
    nominal = 1 + k * 4.0
    assert len(files) >= 499
    assert np.all(arrivals <= nominal) and np.all(arrivals >= nominal - 3)
    assert np.all(np.diff(arrivals) >= 0) and np.all(np.diff(stamps) >= 0)
    assert np.all(stamps <= arrivals) and np.all(arrivals <= 2000)
    assert np.all(stamps >= arrivals - 2.5 - 4)  # a running max of values within [a - kappa, a]
    assert np.any(stamps < arrivals) and np.any(arrivals < nominal)


def test_timestamps_before_the_running_max_lie_within_kappa() -> None:
    # with kappa below the period minus J, consecutive timestamps never cross: no running max applies
    w = one_table(periodic("p", 10, arrival_jitter=2, timestamp_jitter=3), horizon=5000, seed=1)
    files = np.array(w.files[0])
    lag = files[:, 0] - files[:, 1]
    assert np.all(lag >= 0) and np.all(lag <= 3) and lag.max() > 2.5


def test_jitter_is_deterministic_per_seed_and_name() -> None:
    base = one_table(JITTERED, horizon=200, seed=3).files[0]
    assert one_table(JITTERED, horizon=200, seed=3).files[0] == base
    assert one_table(JITTERED, horizon=200, seed=4).files[0] != base
    assert one_table({**JITTERED, "name": "q"}, horizon=200, seed=3).files[0] != base
    longer = one_table(JITTERED, horizon=400, seed=3).files[0]
    assert longer[: len(base)] == base  # file k's draws do not depend on the horizon


def test_zero_jitter_without_outages_keeps_the_plain_path() -> None:
    w = one_table(periodic("p", 4, arrival_jitter=0, timestamp_jitter=0))
    assert not w.tables[0].compiled_feed and w.files[0] is None


def test_outages_apply_after_jitter() -> None:
    plain = one_table(JITTERED, horizon=200, seed=3).files[0]
    held = one_table({**JITTERED, "outages": [[50, 80]]}, horizon=200, seed=3).files[0]
    expected = [(80.0 if 50 <= a < 80 else a, ts) for a, ts in plain]
    assert list(held) == expected


# ---------------------------------------------------------------------------------------------
# the engine on compiled feeds
# ---------------------------------------------------------------------------------------------
def _as_replayed(w: Workload, k: int) -> Workload:
    """``w`` with table ``k`` written by hand as a replayed feed of its compiled files."""
    table = w.tables[k]
    hand = Table(name=table.name, alpha=table.alpha, beta=table.beta, priority=table.priority,
                 arrivals=w.files[k], nominal_period=table.period, chop=table.chop)
    return w.with_overrides(tables=tuple(hand if j == k else t for j, t in enumerate(w.tables)))


def _jitter_workload(**extra: Any) -> Workload:
    return parse_workload({
        "tracks": 2, "horizon": 300, "seed": 11, "variability": 0.5, "tables": [
            periodic("p", 4, phase=1, arrival_jitter=3, timestamp_jitter=2.5, **extra),
            periodic("q", 7, alpha=2),
            replayed("r", [3, 9, 30, 31, 80], nominal_period=10),
            {"name": "v", "sources": ["p", "q"], "alpha": 1, "beta": 0.2, "priority": 2},
        ],
    })


@pytest.mark.parametrize("policy", ["fifo", "edf", "max-benefit", "max-benefit-lookahead"])
def test_a_compiled_feed_runs_as_its_files_replayed(policy: str) -> None:
    w = _jitter_workload()
    times = [a for a, _ in w.files[0]]
    assert len(set(times)) == len(times)
    compiled = sl.simulate(w, policy)
    hand = sl.simulate(_as_replayed(w, 0), policy)
    pd.testing.assert_frame_equal(compiled.jobs, hand.jobs, check_exact=True)
    assert compiled.trace.staleness_area == hand.trace.staleness_area
    assert compiled.trace.events == hand.trace.events


def test_chopping_cuts_a_compiled_feed_at_its_timestamps() -> None:
    w = _jitter_workload(chop=2).with_overrides(tracks=1)
    compiled = sl.simulate(w, "fifo")
    hand = sl.simulate(_as_replayed(w, 0), "fifo")
    pd.testing.assert_frame_equal(compiled.jobs, hand.jobs, check_exact=True)
    jobs = compiled.jobs[compiled.jobs["table"] == "p"]
    stamps = {ts for _, ts in w.files[0]}
    assert set(jobs["data_to"]) <= stamps
    grid = {1 + 4 * k for k in range(1, 80)}
    assert not set(jobs["data_to"]) <= grid  # not the plain feed's boundaries


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        pytest.param(replayed("r", [1, 4, 7, 10, 13, 16], outages=[[4, 10]], alpha=1, beta=0),
                     [[1, 0, 1], [10, 1, 10], [13, 10, 13], [16, 13, 16]], id="replayed"),
        pytest.param(periodic("r", 3, phase=1, outages=[[2, 10]], alpha=1, beta=0),
                     [[10, 0, 10], [13, 10, 13], [16, 13, 16], [19, 16, 19]], id="periodic"),
    ],
)
def test_files_landing_together_load_in_one_job(table: dict[str, Any], expected: list[list[float]]) -> None:
    # the files at 4 and 7 are held to 10 and land with the file at 10: the job starting at 10
    # loads everything up to 10 at once (golab: a job loads all that is available); rows are
    # (start, data_from, data_to)
    w = one_table(table)
    r = sl.simulate(w, "fifo")
    assert r.jobs[["start", "data_from", "data_to"]].values.tolist() == expected
    assert r.trace.events == len(w.files[0]) + len(r.jobs)


class _NextArrivals:
    """Records ``view.next_arrival(0, now)`` at every decision; places in order."""

    name = "next-arrivals"

    def __init__(self) -> None:
        self.seen: list[tuple[float, Any]] = []

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        def place(order, idle, now, view):
            self.seen.append((now, view.next_arrival(0, now)))
            return list(zip(order, idle))

        return BoundPolicy(key=lambda i, now, release, n: release, place=place)


def test_next_arrival_reads_the_compiled_files() -> None:
    w = one_table(periodic("p", 3, phase=1, outages=[[4, 10]], alpha=1, beta=0))
    policy = _NextArrivals()
    sl.simulate(w, policy)
    assert policy.seen[:2] == [(10.0, (13.0, 13.0)), (13.0, (16.0, 16.0))]
    jittered = _jitter_workload()
    policy = _NextArrivals()
    run(jittered, policy, "next")
    files = jittered.files[0]
    for now, nxt in policy.seen:
        later = [f for f in files if f[0] > now]
        assert nxt == (later[0] if later else None)


def test_size_estimate_counts_compiled_files_without_compiling() -> None:
    w = _jitter_workload()
    size = estimate(w)
    assert "files" not in w.__dict__
    assert size.arrivals[0] >= len(w.files[0])
    huge = one_table(periodic("p", 1, arrival_jitter=0.5), horizon=1e9)
    with pytest.raises(InputError, match="horizon|period"):
        check_run_size(huge)
    assert "files" not in huge.__dict__


def test_a_drained_run_waits_for_files_held_past_the_horizon() -> None:
    w = one_table(replayed("r", [1, 5], outages=[[4, 50]], alpha=1, beta=0), horizon=10)
    result = drained_run(w, sl.get_policy("fifo"), "fifo")
    assert result.drained
    assert result.trace.jobs["data_to"].tolist() == [1.0, 5.0]
    assert result.trace.jobs["start"].tolist() == [1.0, 50.0]


# ---------------------------------------------------------------------------------------------
# cost_noise
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("b", [0.0, 0.3, 1.0])
def test_cost_noise_b_to_1_plus_b_is_variability_b(b: float) -> None:
    w = _jitter_workload().with_overrides(variability=None)
    by_variability = sl.simulate(w.with_overrides(variability=b), "max-benefit")
    by_noise = sl.simulate(w.with_overrides(cost_noise=(b, 1 + b)), "max-benefit")
    pd.testing.assert_frame_equal(by_variability.jobs, by_noise.jobs, check_exact=True)
    assert by_variability.trace.staleness_area == by_noise.trace.staleness_area


def test_cost_noise_bounds_every_cost() -> None:
    w = _jitter_workload().with_overrides(variability=None, cost_noise=(0.8, 1.2))
    jobs = sl.simulate(w, "fifo").jobs
    tables = {t.name: t for t in w.tables}
    nominal = np.array([tables[name].cost(n) for name, n in zip(jobs["table"], jobs["data_to"] - jobs["data_from"])])
    ratio = jobs["cost"].to_numpy() / nominal
    assert len(jobs) > 50
    assert np.all(ratio >= 0.8 - 1e-12) and np.all(ratio <= 1.2 + 1e-12)
    assert ratio.min() < 0.9 and ratio.max() > 1.1
