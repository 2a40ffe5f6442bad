"""The intermittent query-set model: every bad-input rule (through ``parse_queryset`` and through
``staleness-lab plan``: exit 2, one line naming the field, nothing under --out), round trips,
YAML/JSON parity, the arrival basics, and the synthetic 13-query set against the paper's numbers
(digest §5); a piecewise cost's table of values equals its calls."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import yaml

from intermittent.cli_run import run
from staleness_lab.errors import InputError
from staleness_lab.intermittent import (
    FixedRate, QuerySet, StepProfile, load_queryset, parse_queryset,
)
from staleness_lab.intermittent.costs import PiecewiseCost
from staleness_lab.intermittent.deadlines import c7, with_deadlines
from staleness_lab.intermittent.minbatch import find_min_batch
from staleness_lab.intermittent.schemes import make_plan
from staleness_lab.intermittent.single import algorithm1

DATA = Path(__file__).resolve().parents[2] / "data" / "intermittent"
E5 = DATA / "e5.yaml"
SYNTHETIC = DATA / "tpch13-synthetic.yaml"
BASE: dict[str, Any] = yaml.safe_load(E5.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------
Mutation = Callable[[dict[str, Any]], None]


def top(**changes: Any) -> Mutation:
    return lambda d: d.update(changes)


def query(k: int, **changes: Any) -> Mutation:
    return lambda d: d["queries"][k].update(changes)


def profile_query(deadline: float) -> Mutation:
    return query(0, arrivals={"profile": [[1, 10], [2.5, 60], [4, 100]]}, deadline=deadline)


@dataclass
class Bad:
    id: str
    mutate: Mutation
    field: str
    rule: list[str] = field(default_factory=list)

    def param(self) -> Any:
        return pytest.param(self, id=self.id)


BAD = [
    # unknown keys, at every level
    Bad("unknown-top-key", top(extra=1), "extra", ["unknown"]),
    Bad("unknown-query-key", query(1, colour="red"), "queries[1].colour", ["unknown"]),
    Bad("unknown-arrivals-key", query(0, arrivals={"ws": 1, "rate": 1, "N": 100, "lambda": 2}),
        "queries[0].arrivals.lambda", ["unknown"]),
    Bad("unknown-cost-key", query(0, cost={"kind": "linear", "S": 2, "R": 0.2, "T": 1}), "queries[0].cost.T", ["unknown"]),
    Bad("unknown-cost-kind", query(0, cost={"kind": "cubic", "S": 2}), "queries[0].cost.kind", ["one of"]),
    Bad("missing-deadline", lambda d: d["queries"][2].pop("deadline"), "queries[2].deadline", ["missing"]),
    # N >= 1, an integer
    Bad("N-zero", query(0, arrivals={"ws": 1, "rate": 1, "N": 0}), "queries[0].arrivals.N", [">= 1"]),
    Bad("N-negative", query(0, arrivals={"ws": 1, "rate": 1, "N": -5}), "queries[0].arrivals.N", [">= 1"]),
    Bad("N-fractional", query(0, arrivals={"ws": 1, "rate": 1, "N": 10.5}), "queries[0].arrivals.N", ["integer"]),
    # rate > 0
    Bad("rate-zero", query(2, arrivals={"ws": 1, "rate": 0, "N": 100}), "queries[2].arrivals.rate", ["> 0"]),
    Bad("rate-negative", query(2, arrivals={"ws": 1, "rate": -1, "N": 100}), "queries[2].arrivals.rate", ["> 0"]),
    Bad("nominal-rate-zero", query(0, arrivals={"profile": [[1, 10], [4, 100]], "nominal_rate": 0}),
        "queries[0].arrivals.nominal_rate", ["> 0"]),
    # deadline after the window end (we = 100 for e5; a profile's we is its last time)
    Bad("deadline-at-window-end", query(1, deadline=100), "queries[1].deadline", ["window end"]),
    Bad("deadline-before-window-end", query(1, deadline=50), "queries[1].deadline", ["window end"]),
    Bad("deadline-before-profile-end", profile_query(3.5), "queries[0].deadline", ["window end"]),
    Bad("deadline-at-profile-end", profile_query(4), "queries[0].deadline", ["window end"]),
    # negative coefficients
    Bad("negative-S", query(0, cost={"kind": "linear", "S": -2, "R": 0.2}), "queries[0].cost.S", [">= 0"]),
    Bad("free-batches", query(1, cost={"kind": "linear", "S": 0, "R": 0}), "queries[1].cost", ["Cost(1) must be > 0"]),
    Bad("free-first-table-entry", query(0, cost={"kind": "table", "values": [0] + [1] * 99}), "queries[0].cost",
        ["Cost(1) must be > 0"]),
    Bad("negative-R", query(0, cost={"kind": "linear", "S": 2, "R": -0.2}), "queries[0].cost.R", [">= 0"]),
    Bad("negative-piecewise-S", query(0, cost={"kind": "piecewise", "S": -1, "points": [[0, 0], [100, 4]]}),
        "queries[0].cost.S", [">= 0"]),
    Bad("negative-a0", query(0, agg_cost={"kind": "linear", "a0": -0.5, "a1": 0.5}), "queries[0].agg_cost.a0", [">= 0"]),
    Bad("negative-a1", query(0, agg_cost={"kind": "linear", "a0": 0.5, "a1": -0.5}), "queries[0].agg_cost.a1", [">= 0"]),
    Bad("negative-table-value", query(0, cost={"kind": "table", "values": [-1] + [1] * 99}),
        "queries[0].cost.values[0]", [">= 0"]),
    # decreasing costs and profiles
    Bad("decreasing-table-cost", query(0, cost={"kind": "table", "values": [1] * 50 + [0.5] * 50}),
        "queries[0].cost.values[50]", ["non-decreasing"]),
    Bad("decreasing-piecewise-cost", query(0, cost={"kind": "piecewise", "S": 1, "points": [[0, 0], [50, 5], [100, 4]]}),
        "queries[0].cost.points[2]", ["non-decreasing"]),
    Bad("decreasing-agg-table", query(0, agg_cost={"kind": "table", "values": [1, 2, 1.5]}),
        "queries[0].agg_cost.values[2]", ["non-decreasing"]),
    Bad("piecewise-x-not-increasing", query(0, cost={"kind": "piecewise", "S": 1, "points": [[0, 0], [50, 5], [50, 6]]}),
        "queries[0].cost.points[2][0]", ["increasing"]),
    Bad("decreasing-profile-count", query(0, arrivals={"profile": [[1, 10], [2, 5], [3, 100]]}),
        "queries[0].arrivals.profile[1][1]", ["increasing"]),
    Bad("decreasing-profile-time", query(0, arrivals={"profile": [[1, 10], [0.5, 50], [3, 100]]}),
        "queries[0].arrivals.profile[1][0]", ["increasing"]),
    # curves that do not start or end where they should: a profile must end at the N given beside
    # it, a cost table must reach N, a piecewise curve must start at [0, 0]
    Bad("profile-not-ending-at-N", query(0, arrivals={"profile": [[1, 10], [2, 90]], "N": 100}),
        "queries[0].arrivals.profile", ["must end at N = 100, ends at 90"]),
    Bad("profile-N-not-a-count", query(0, arrivals={"profile": [[1, 10], [2, 90]], "N": 0}),
        "queries[0].arrivals.N", [">= 1"]),
    Bad("cost-table-ends-before-N", query(0, cost={"kind": "table", "values": [1, 2, 3]}),
        "queries[0].cost.values", ["N = 100"]),
    Bad("piecewise-not-from-origin", query(0, cost={"kind": "piecewise", "S": 1, "points": [[1, 0], [100, 4]]}),
        "queries[0].cost.points[0]", ["[0, 0]"]),
    # names and set-level options
    Bad("duplicate-name", query(1, name="A"), "queries[1].name", ["duplicate"]),
    Bad("empty-name", query(1, name=""), "queries[1].name", ["is empty"]),
    Bad("path-like-name", query(1, name="../x"), "queries[1].name", ["path component"]),
    Bad("no-queries", top(queries=[]), "queries", ["non-empty"]),
    Bad("executors-zero", top(executors=0), "executors", [">= 1"]),
    Bad("executors-fractional", top(executors=1.5), "executors", ["integer"]),
    Bad("delta-rsf-negative", top(delta_rsf=-0.1), "delta_rsf", [">= 0"]),
    Bad("c-max-zero", top(c_max=0), "c_max", ["> 0"]),
    Bad("time-unit-zero", top(time_unit=0), "time_unit", ["> 0"]),
    Bad("number-as-text", query(0, deadline="soon"), "queries[0].deadline", ["number"]),
]


def _mutated(case: Bad) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    case.mutate(data)
    return data


@pytest.mark.parametrize("case", [c.param() for c in BAD])
def test_parse_queryset_names_the_field(case: Bad) -> None:
    with pytest.raises(InputError) as caught:
        parse_queryset(_mutated(case))
    assert caught.value.field == case.field
    message = str(caught.value)
    assert "\n" not in message and message.startswith(case.field)
    for fragment in case.rule:
        assert fragment in message


@pytest.mark.parametrize("case", [c.param() for c in BAD])
def test_cli_rejects_bad_input_with_one_line(case: Bad, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "queries.yaml"
    path.write_text(yaml.safe_dump(_mutated(case), sort_keys=False), encoding="utf-8")
    out = tmp_path / "out"
    rc, stdout, stderr = run(["plan", str(path), "--scheme", "edf", "--out", str(out)], capsys)
    assert rc == 2
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 1 and case.field in lines[0] and "Traceback" not in stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["queries.yaml"]  # no temporary directory either


OPTION_CASES = [
    pytest.param(["--executors", "0"], "--executors", id="executors-zero"),
    pytest.param(["--executors", "-3"], "--executors", id="executors-negative"),
    pytest.param(["--executors", "two"], "--executors", id="executors-not-int"),
    pytest.param(["--delta-rsf", "-1"], "--delta-rsf", id="delta-rsf-negative"),
    pytest.param(["--delta-rsf", "lots"], "--delta-rsf", id="delta-rsf-not-number"),
    pytest.param(["--delta-rsf", "nan"], "--delta-rsf", id="delta-rsf-nan"),
    pytest.param(["--cmax", "0"], "--cmax", id="cmax-zero"),
    pytest.param(["--cmax", "-5"], "--cmax", id="cmax-negative"),
    pytest.param(["--cmax", "inf"], "--cmax", id="cmax-inf"),
    pytest.param(["--time-limit", "0"], "--time-limit", id="time-limit-zero"),
    pytest.param(["--time-limit", "nan"], "--time-limit", id="time-limit-nan"),
    pytest.param(["--time-limit", "soon"], "--time-limit", id="time-limit-not-number"),
    pytest.param(["--workers", "0"], "--workers", id="workers-zero"),
    pytest.param(["--workers", "1.5"], "--workers", id="workers-not-int"),
    pytest.param(["--objective", "speed"], "--objective", id="objective-unknown"),
    pytest.param(["--scheme", "fifo"], "--scheme", id="scheme-unknown"),
]


@pytest.mark.parametrize(("extra", "name"), OPTION_CASES)
def test_cli_rejects_bad_options_with_one_line(extra: list[str], name: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    scheme = [] if "--scheme" in extra else ["--scheme", "optimal"]
    rc, stdout, stderr = run(["plan", str(E5), *scheme, *extra, "--out", str(out)], capsys)
    assert rc == 2 and stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 1 and name in lines[0] and "Traceback" not in stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_requires_a_scheme_and_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, stderr = run(["plan", str(E5)], capsys)
    assert rc == 2 and len(stderr.splitlines()) == 1 and "--scheme" in stderr
    missing = tmp_path / "nope.yaml"
    rc, _, stderr = run(["plan", str(missing), "--scheme", "edf"], capsys)
    assert rc == 2 and len(stderr.splitlines()) == 1 and "nope.yaml" in stderr


def test_overrides_are_validated_like_the_file() -> None:
    qs = load_queryset(E5)
    for key, value, name in (("executors", 0, "executors"), ("delta_rsf", -1, "delta_rsf"), ("c_max", 0, "c_max")):
        with pytest.raises(InputError) as caught:
            qs.with_overrides(**{key: value})
        assert caught.value.field == name
    assert qs.with_overrides(executors=3, delta_rsf="1", c_max="12.5").c_max == F(25, 2)
    with pytest.raises(InputError) as caught:
        make_plan(qs, "fifo")
    assert caught.value.field == "--scheme"


# --------------------------------------------------------------------------------------------
# good files
# --------------------------------------------------------------------------------------------
VARIETY: dict[str, Any] = {
    "executors": 2, "delta_rsf": 1, "time_unit": 0.01,
    "queries": [
        {"name": "steps", "arrivals": {"profile": [[1, 3], [2.5, 5], [4, 9]], "nominal_rate": 2}, "deadline": 20,
         "cost": {"kind": "table", "values": [1, 1.5, 2, 2.5, 3, 3, 3.25, 3.5, 4]},
         "agg_cost": {"kind": "table", "values": [0.5, 0.75, 1]}},
        {"name": "plain", "arrivals": {"ws": 0, "rate": 0.5, "N": 7}, "deadline": 30.25,
         "cost": {"kind": "piecewise", "S": 0.4, "points": [[0, 0], [3, 1.5], [7, 2.1]]}},
        {"name": "cheap", "arrivals": {"profile": [[2, 4]]}, "deadline": 3, "cost": {"kind": "linear", "S": 0, "R": 0.01},
         "agg_cost": {"kind": "none"}},
    ],
}


@pytest.mark.parametrize("source", ["e5", "synthetic", "variety"])
def test_good_sets_round_trip_through_to_dict(source: str) -> None:
    qs = {"e5": lambda: load_queryset(E5), "synthetic": lambda: load_queryset(SYNTHETIC),
          "variety": lambda: parse_queryset(copy.deepcopy(VARIETY))}[source]()
    again = parse_queryset(qs.to_dict())
    assert again == qs
    assert again.to_dict() == qs.to_dict()
    assert json.loads(json.dumps(qs.to_dict(), allow_nan=False)) == qs.to_dict()  # plain JSON


def test_variety_parses_into_the_right_models() -> None:
    qs = parse_queryset(copy.deepcopy(VARIETY))
    steps, plain, cheap = qs.queries
    assert isinstance(steps.arrivals, StepProfile) and steps.arrivals.nominal_rate == 2 and steps.n == 9
    assert isinstance(plain.arrivals, FixedRate) and plain.we == 12 and plain.min_cost == F(5, 2)
    assert isinstance(plain.cost, PiecewiseCost) and plain.cost(1) == F(9, 10)
    assert steps.agg_cost(2) == F(1, 2) and steps.agg_cost(5) == F(5, 4)  # the last step repeated
    assert cheap.n == 4 and cheap.min_cost == F(1, 25) and cheap.agg_cost(7) == 0
    assert qs.c_max is None and qs.executors == 2 and qs.time_unit == F(1, 100)


def test_yaml_and_json_load_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    as_json = tmp_path / "e5.json"
    as_json.write_text(json.dumps(BASE), encoding="utf-8")
    assert load_queryset(as_json) == load_queryset(E5)
    variety_yaml, variety_json = tmp_path / "v.yml", tmp_path / "v.json"
    variety_yaml.write_text(yaml.safe_dump(VARIETY), encoding="utf-8")
    variety_json.write_text(json.dumps(VARIETY), encoding="utf-8")
    assert load_queryset(variety_yaml) == load_queryset(variety_json)
    outputs = []
    for path in (E5, as_json):
        rc, stdout, _ = run(["plan", str(path), "--scheme", "edf", "--json"], capsys)
        assert rc == 0
        outputs.append(json.loads(stdout))
    assert outputs[0] == outputs[1]


def test_numbers_are_exact_as_written() -> None:
    qs = load_queryset(E5)
    assert qs.query("A").deadline == F(594, 5)  # 118.8 exactly, not the nearest binary float
    assert qs.query("C").cost(25) == F(23, 2)


# --------------------------------------------------------------------------------------------
# arrivals
# --------------------------------------------------------------------------------------------
def test_fixed_rate_arrivals() -> None:
    a = FixedRate(ws=F(1), rate=F(1), n=10)  # the paper's example: tuple k at time k
    assert [a.available(F(t)) for t in (0, F(99, 100), 1, F(3, 2), 2, 10, 100)] == [0, 0, 1, 1, 2, 10, 10]
    assert [a.input_time(k) for k in (1, 5, 10)] == [1, 5, 10] and a.we == 10
    assert a.next_arrival(F(1)) == 2 and a.next_arrival(F(5, 2)) == 3 and a.next_arrival(F(10)) is None
    fast = FixedRate(ws=F(0), rate=F(2), n=5)  # two tuples per second from 0
    assert fast.input_time(3) == 1 and fast.we == 2 and fast.available(F(3, 2)) == 4
    for k in range(1, 6):
        assert fast.available(fast.input_time(k)) == k
        assert fast.available(fast.input_time(k) - F(1, 1000)) == k - 1


def test_step_profile_arrivals() -> None:
    p = StepProfile(times=(F(1), F(5, 2), F(4)), counts=(3, 5, 9))
    assert (p.n, p.ws, p.we) == (9, 1, 4)
    assert [p.available(F(t)) for t in (F(1, 2), 1, F(12, 5), F(5, 2), 4, 10)] == [0, 3, 3, 5, 9, 9]
    assert [p.input_time(k) for k in (1, 3, 4, 5, 6, 9)] == [1, 1, F(5, 2), F(5, 2), 4, 4]
    assert p.next_arrival(F(1)) == F(5, 2) and p.next_arrival(F(0)) == 1 and p.next_arrival(F(4)) is None
    assert p.nominal_time(1) == 1 and p.nominal_time(9) == 4  # the profile's own average rate
    rated = StepProfile(times=p.times, counts=p.counts, nominal_rate=F(2))
    assert rated.nominal_time(9) == 5  # ws + 8/2
    for k in range(1, 10):
        assert p.available(p.input_time(k)) >= k


# --------------------------------------------------------------------------------------------
# the synthetic 13-query set (digest §5)
# --------------------------------------------------------------------------------------------
NAMES = ["Q1", "Q3", "Q4", "Q6", "Q9", "Q10", "Q12", "Q14", "Q19", "CQ1", "CQ2", "CQ3", "CQ4"]


@pytest.fixture(scope="module")
def synthetic() -> QuerySet:
    return load_queryset(SYNTHETIC)


def test_synthetic_set_is_labelled_and_shaped_as_the_paper(synthetic: QuerySet) -> None:
    header = SYNTHETIC.read_text(encoding="utf-8").split("\nexecutors:")[0]
    assert "SYNTHETIC" in header
    assert [q.name for q in synthetic.queries] == NAMES
    assert (synthetic.executors, synthetic.delta_rsf, synthetic.c_max, synthetic.time_unit) == (1, F(1, 2), 30, F(1, 10))
    for q in synthetic.queries:
        assert q.arrivals == FixedRate(ws=F(1), rate=F(1), n=4500) and q.we == 4500
        points = q.cost.points
        slopes = [(c1 - c0) / (x1 - x0) for (x0, c0), (x1, c1) in zip(points, points[1:])]
        assert all(a >= b for a, b in zip(slopes, slopes[1:])), f"{q.name}: not concave"


def test_synthetic_minbatch_matches_fig7(synthetic: QuerySet) -> None:
    found = {q.name: find_min_batch(q, synthetic.delta_rsf, synthetic.c_max) for q in synthetic.queries}
    assert (found["Q6"].size, found["Q6"].batches) == (180, 25)
    assert (found["CQ1"].size, found["CQ1"].batches) == (180, 25)
    assert (found["CQ3"].size, found["CQ3"].batches) == (1125, 4)
    assert (found["CQ4"].size, found["CQ4"].batches) == (1125, 4)
    assert not any(m.flagged for m in found.values())  # no MinBatch capped by c_max = 30
    assert all(180 <= m.size <= 1125 for m in found.values())  # "from 180 ... to 1125"
    for q in synthetic.queries:  # normalized cost about 1.5 (Fig. 7)
        assert F(7, 5) - F(1, 100) <= found[q.name].total / q.min_cost <= F(3, 2)


def test_synthetic_costs_match_the_papers_numbers(synthetic: QuerySet) -> None:
    total = sum(q.min_cost for q in synthetic.queries)
    assert abs(float(total) - 640) <= 0.02 * 640
    single = {q.name: q.min_cost for q in synthetic.queries}
    assert [single[n] for n in ("CQ1", "CQ2", "CQ3", "CQ4")] == [F("17.86"), F("18.85"), 32, F("32.5")]  # Table 2
    by_cost = sorted(synthetic.queries, key=lambda q: q.cost(100), reverse=True)
    assert {q.name for q in by_cost[:3]} == {"Q3", "Q9", "Q10"}  # costliest at small sizes (Fig. 3)
    for x in range(1, 500):
        cheapest_heavy = min(synthetic.query(n).cost(x) for n in ("Q3", "Q9", "Q10"))
        assert all(q.cost(x) < cheapest_heavy for q in synthetic.queries if q.name not in ("Q3", "Q9", "Q10")), x

    def sixty(name: str) -> F:  # Fig. 4: 60 batches of 75 files, normalized by one batch
        q = synthetic.query(name)
        return (60 * q.cost(75) + q.agg_cost(60)) / q.min_cost

    assert abs(float(sixty("Q10")) - 6) <= 0.1
    assert abs(float(sixty("CQ2") / sixty("CQ1")) - 2.7) <= 0.05
    agg60 = {q.name: q.agg_cost(60) for q in synthetic.queries}
    assert agg60["CQ3"] == 3 and agg60["CQ4"] == 7
    assert sorted(agg60, key=agg60.get)[-2:] == ["CQ3", "CQ4"]


def test_synthetic_fig6_batch_counts(synthetic: QuerySet) -> None:
    """Algorithm 1, one query at D = we + f·Cost(N): every deadline met, 2 batches for f < 1,
    except 3 for Q3, Q9 and Q10 at 0.1D (Fig. 6)."""
    for q in synthetic.queries:
        for f in (F(4, 5), F(3, 5), F(2, 5), F(1, 5), F(1, 10)):
            alone = QuerySet(queries=(q.__class__(q.name, q.arrivals, q.we + f * q.min_cost, q.cost, q.agg_cost),))
            plan = algorithm1(alone)
            assert plan.status == "ok" and plan.misses == 0, (q.name, f)
            expected = 3 if f == F(1, 10) and q.name in ("Q3", "Q9", "Q10") else 2
            assert int(plan.queries["n_batches"].iloc[0]) == expected, (q.name, f)


def test_synthetic_c7_at_point_one_d(synthetic: QuerySet) -> None:
    """Fig. 7 at 0.1D, one window: max D = 4500 + 64 + 30 = 4594, and the last batches need about
    105 s > 94 s, so no MinBatch plan meets every deadline; at 0.2D they fit."""
    tight = c7(with_deadlines(synthetic, F(1, 10), seed=0))
    assert not tight.holds and tight.available == 94
    assert 100 <= float(tight.last_work) <= 110
    assert c7(with_deadlines(synthetic, F(1, 5), seed=0)).holds


@settings(max_examples=80, deadline=None)
@given(S=st.fractions(0, 5, max_denominator=1000),
       steps=st.lists(st.tuples(st.integers(1, 40), st.fractions(0, 20, max_denominator=997)), min_size=1, max_size=5),
       n=st.integers(0, 200))
def test_a_piecewise_costs_values_equal_its_calls(S: F, steps: list[tuple[int, F]], n: int) -> None:
    """``PiecewiseCost.values`` (the planner's tables at N = 4,500) is each call's exact Fraction,
    beyond the last point too."""
    points, x, c = [(F(0), F(0))], F(0), F(0)
    for dx, dc in steps:
        x, c = x + dx, c + dc
        points.append((x, c))
    cost = PiecewiseCost(S=S, points=tuple(points))
    assert cost.values(n) == (F(0),) + tuple(cost(x) for x in range(1, n + 1))
