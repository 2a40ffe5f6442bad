"""Workload validation through the Python API.

Every rule violation raises :class:`staleness_lab.InputError` whose ``field`` is the dotted
path to the offending value and whose ``table`` names the table at fault (None otherwise).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from typing import Any, Callable

import pytest

import staleness_lab
from staleness_lab import InputError, Slowdown, Table, Workload, parse_workload
from example_workloads import BASE, EXAMPLE

Mutation = Callable[[dict[str, Any]], None]


def edited(base: dict[str, Any], mutation: Mutation) -> dict[str, Any]:
    data = copy.deepcopy(base)
    mutation(data)
    return data


def top(**changes: Any) -> Mutation:
    return lambda w: w.update(changes)


def drop_top(key: str) -> Mutation:
    return lambda w: w.pop(key)


def tab(k: int, **changes: Any) -> Mutation:
    return lambda w: w["tables"][k].update(changes)


def drop(k: int, *keys: str) -> Mutation:
    def apply(w: dict[str, Any]) -> None:
        for key in keys:
            del w["tables"][k][key]

    return apply


def set_tables(*items: Any) -> Mutation:
    return lambda w: w.update(tables=list(items))


def chain(*mutations: Mutation) -> Mutation:
    def apply(w: dict[str, Any]) -> None:
        for m in mutations:
            m(w)

    return apply


ORDERS = {"name": "orders", "period": 10, "alpha": 1, "beta": 0.1, "priority": 1}


def view(name: str, *sources: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "sources": list(sources), "alpha": 1, "beta": 0.1, "priority": 1, **extra}


def case(id: str, mutation: Mutation, field: str, table: str | None, *rule: str, prefix: bool = False) -> Any:
    """``field`` is the exact dotted path, or (``prefix=True``) how it starts."""
    return pytest.param(mutation, field, table, rule, prefix, id=id)


INF = math.inf
NAN = math.nan

PARSE_CASES = [
    # the top level
    case("missing-tracks", drop_top("tracks"), "tracks", None, "missing"),
    case("missing-horizon", drop_top("horizon"), "horizon", None, "missing"),
    case("missing-tables", drop_top("tables"), "tables", None, "missing"),
    case("unknown-top-level-field", top(colour="red"), "colour", None, "unknown", "colour"),
    case("tracks-true", top(tracks=True), "tracks", None, "integer"),
    case("tracks-string", top(tracks="2"), "tracks", None, "integer"),
    case("tracks-float", top(tracks=2.0), "tracks", None, "integer"),
    case("tracks-nan", top(tracks=NAN), "tracks", None, "integer"),
    case("tracks-zero", top(tracks=0), "tracks", None, ">= 1"),
    case("tracks-negative", top(tracks=-1), "tracks", None, ">= 1"),
    case("horizon-list", top(horizon=[1]), "horizon", None, "number"),
    case("horizon-string", top(horizon="100"), "horizon", None, "number"),
    case("horizon-bool", top(horizon=True), "horizon", None, "number"),
    case("horizon-nan", top(horizon=NAN), "horizon", None, "finite"),
    case("horizon-inf", top(horizon=INF), "horizon", None, "finite"),
    case("horizon-minus-inf", top(horizon=-INF), "horizon", None, "finite"),
    case("horizon-zero", top(horizon=0), "horizon", None, "> 0"),
    case("horizon-negative", top(horizon=-5), "horizon", None, "> 0"),
    case("seed-negative", top(seed=-1), "seed", None, ">= 0"),
    case("seed-float", top(seed=1.5), "seed", None, "integer"),
    case("seed-string", top(seed="0"), "seed", None, "integer"),
    case("warmup-equal-to-horizon", top(warmup=100), "warmup", None, "< 100"),
    case("warmup-beyond-horizon", top(warmup=1000), "warmup", None, "< 100"),
    case("warmup-negative", top(warmup=-1), "warmup", None, ">= 0"),
    case("warmup-nan", top(warmup=NAN), "warmup", None, "finite"),
    case("variability-negative", top(variability=-0.1), "variability", None, ">= 0"),
    case("variability-inf", top(variability=INF), "variability", None, "finite"),
    case("chop-global-below-one", top(chop=0.5), "chop", None, ">= 1"),
    case("chop-global-zero", top(chop=0), "chop", None, ">= 1"),
    # slowdown
    case("slowdown-not-a-mapping", top(slowdown=3), "slowdown", None, "mapping"),
    case("slowdown-unknown-field", top(slowdown={"factor": 2, "normal": 1, "slow": 1, "colour": 1}), "slowdown.colour", None, "unknown"),
    case("slowdown-missing-factor", top(slowdown={"normal": 1, "slow": 1}), "slowdown.factor", None, "missing"),
    case("slowdown-factor-zero", top(slowdown={"factor": 0, "normal": 1, "slow": 1}), "slowdown.factor", None, "> 0"),
    case("slowdown-factor-negative", top(slowdown={"factor": -1, "normal": 1, "slow": 1}), "slowdown.factor", None, "> 0"),
    case("slowdown-factor-nan", top(slowdown={"factor": NAN, "normal": 1, "slow": 1}), "slowdown.factor", None, "finite"),
    case("slowdown-normal-negative", top(slowdown={"factor": 2, "normal": -1, "slow": 1}), "slowdown.normal", None, ">= 0"),
    case("slowdown-slow-negative", top(slowdown={"factor": 2, "normal": 1, "slow": -1}), "slowdown.slow", None, ">= 0"),
    case("slowdown-both-zero", top(slowdown={"factor": 2, "normal": 0, "slow": 0}), "slowdown", None, "both", prefix=True),
    # the tables list
    case("tables-not-a-list", top(tables={"name": "orders"}), "tables", None, "list"),
    case("tables-string", top(tables="orders"), "tables", None, "list"),
    case("tables-none", top(tables=None), "tables", None, "list"),
    case("tables-empty", top(tables=[]), "tables", None, "empty"),
    case("table-not-a-mapping", set_tables(ORDERS, 5), "tables[1]", None, "mapping"),
    case("table-missing-name", drop(0, "name"), "tables[0].name", None, "missing"),
    case("table-name-not-a-string", tab(0, name=5), "tables[0].name", None, "string"),
    case("table-name-empty", tab(0, name=""), "tables[0].name", None, "string"),
    case("table-missing-alpha", drop(0, "alpha"), "tables[0].alpha", "orders", "missing"),
    case("table-missing-beta", drop(1, "beta"), "tables[1].beta", "clicks", "missing"),
    case("table-missing-priority", drop(2, "priority"), "tables[2].priority", "summary", "missing"),
    case("table-unknown-field", tab(1, colour="red"), "tables[1].colour", "clicks", "unknown", "colour"),
    case("duplicate-names", tab(2, name="orders"), "tables[2].name", "orders", "duplicate"),
    # exactly one of period / arrivals / sources
    case("kind-none", drop(0, "period"), "tables[0].period", "orders", "exactly one", prefix=True),
    case("kind-period-and-arrivals", tab(0, arrivals=[[1, 1]]), "tables[0].", "orders", "more than one", prefix=True),
    case("kind-period-and-sources", tab(0, sources=["clicks"]), "tables[0].", "orders", "more than one", prefix=True),
    case("kind-arrivals-and-sources", tab(1, sources=["orders"]), "tables[1].", "clicks", "more than one", prefix=True),
    # per-table values
    case("period-string", tab(0, period="10"), "tables[0].period", "orders", "number"),
    case("period-zero", tab(0, period=0), "tables[0].period", "orders", "> 0"),
    case("period-negative", tab(0, period=-1), "tables[0].period", "orders", "> 0"),
    case("period-nan", tab(0, period=NAN), "tables[0].period", "orders", "finite"),
    case("period-inf", tab(0, period=INF), "tables[0].period", "orders", "finite"),
    case("phase-negative", tab(0, phase=-1), "tables[0].phase", "orders", ">= 0"),
    case("phase-on-replayed", tab(1, phase=2), "tables[1].phase", "clicks", "period"),
    case("phase-on-derived", tab(2, phase=2), "tables[2].phase", "summary", "period"),
    case("alpha-negative", tab(0, alpha=-1), "tables[0].alpha", "orders", ">= 0"),
    case("alpha-minus-inf", tab(0, alpha=-INF), "tables[0].alpha", "orders", "finite"),
    case("beta-negative", tab(1, beta=-0.1), "tables[1].beta", "clicks", ">= 0"),
    case("beta-nan", tab(1, beta=NAN), "tables[1].beta", "clicks", "finite"),
    case("alpha-and-beta-zero", tab(2, alpha=0, beta=0), "tables[2].alpha", "summary", "both"),
    case("priority-zero", tab(0, priority=0), "tables[0].priority", "orders", "> 0"),
    case("priority-negative", tab(0, priority=-3), "tables[0].priority", "orders", "> 0"),
    case("priority-none", tab(0, priority=None), "tables[0].priority", "orders", "number"),
    case("chop-table-below-one", tab(0, chop=0.9), "tables[0].chop", "orders", ">= 1"),
    case("min-separation-negative", tab(1, min_separation=-1), "tables[1].min_separation", "clicks", ">= 0"),
    case("initial-freshness-positive", tab(0, initial_freshness=0.5), "tables[0].initial_freshness", "orders", "<= 0"),
    case(
        "initial-freshness-derived-ahead",
        chain(tab(0, initial_freshness=-10), tab(1, initial_freshness=-4), tab(2, initial_freshness=-5)),
        "tables[2].initial_freshness",
        "summary",
        "-10",
    ),
    case("nominal-period-zero", tab(1, nominal_period=0), "tables[1].nominal_period", "clicks", "> 0"),
    case("nominal-period-negative", tab(1, nominal_period=-1), "tables[1].nominal_period", "clicks", "> 0"),
    case("nominal-period-on-periodic", tab(0, nominal_period=5), "tables[0].nominal_period", "orders", "arrivals"),
    # arrivals
    case("arrivals-not-a-list", tab(1, arrivals="often"), "tables[1].arrivals", "clicks", "list"),
    case("arrivals-empty", tab(1, arrivals=[]), "tables[1].arrivals", "clicks", "empty"),
    case("arrivals-decreasing-times", tab(1, arrivals=[[5, 5], [4, 4]]), "tables[1].arrivals", "clicks", "increase", prefix=True),
    case("arrivals-repeated-time", tab(1, arrivals=[[5, 5], [5, 5]]), "tables[1].arrivals", "clicks", "increase", prefix=True),
    case("arrivals-data-to-after-time", tab(1, arrivals=[[5, 5.5]]), "tables[1].arrivals", "clicks", "<= 5", prefix=True),
    case("arrivals-decreasing-data-to", tab(1, arrivals=[[5, 5], [9, 3]]), "tables[1].arrivals", "clicks", "decrease", prefix=True),
    case("arrivals-negative-time", tab(1, arrivals=[[-1, -1]]), "tables[1].arrivals", "clicks", ">= 0", prefix=True),
    case("arrivals-nan-time", tab(1, arrivals=[[NAN, 0]]), "tables[1].arrivals", "clicks", "finite", prefix=True),
    case("arrivals-short-pair", tab(1, arrivals=[[5, 5], [6]]), "tables[1].arrivals[1]", "clicks", "pair"),
    case("arrivals-long-pair", tab(1, arrivals=[[5, 5, 5]]), "tables[1].arrivals[0]", "clicks", "pair"),
    case("arrivals-neither-time-nor-pair", tab(1, arrivals=["soon", 6]), "tables[1].arrivals[0]", "clicks", "pair"),
    case("arrivals-number-decreasing", tab(1, arrivals=[5, [4, 4]]), "tables[1].arrivals[1]", "clicks", "increase"),
    case("arrivals-number-negative", tab(1, arrivals=[-1]), "tables[1].arrivals[0]", "clicks", ">= 0"),
    case("arrivals-number-bool", tab(1, arrivals=[True]), "tables[1].arrivals[0]", "clicks", "pair"),
    case("length-range-not-a-pair", tab(1, length_range=[1]), "tables[1].length_range", "clicks", "pair"),
    case("length-range-zero", tab(1, length_range=[0, 1]), "tables[1].length_range[0]", "clicks", "> 0"),
    case("length-range-reversed", tab(1, length_range=[2, 1]), "tables[1].length_range[1]", "clicks", ">= 2"),
    case("length-range-on-derived", tab(2, length_range=[1, 2]), "tables[2].length_range", "summary", "base table"),
    case("arrivals-bool-time", tab(1, arrivals=[[True, 0]]), "tables[1].arrivals", "clicks", "number", prefix=True),
    # sources and the view DAG
    case("sources-not-a-list", tab(2, sources="orders"), "tables[2].sources", "summary", "list"),
    case("sources-empty", tab(2, sources=[]), "tables[2].sources", "summary", "empty"),
    case("source-not-a-string", tab(2, sources=["orders", 3]), "tables[2].sources", "summary", "string", prefix=True),
    case("source-twice", tab(2, sources=["orders", "orders"]), "tables[2].sources", "summary", "more than once"),
    case("unknown-source", tab(2, sources=["orders", "nowhere"]), "tables[2].sources[1]", "summary", "unknown", "nowhere"),
]


def _check(err: InputError, field: str, table: str | None, rule: tuple[str, ...], prefix: bool) -> None:
    if prefix:
        assert err.field.startswith(field), (err.field, field)
    else:
        assert err.field == field
    assert err.table == table
    text = str(err)
    assert "\n" not in text
    assert text.startswith(err.field)
    if table is not None:
        assert repr(table) in text or table in text
    for fragment in rule:
        assert fragment.lower() in (err.rule.lower() + " " + text.lower()), (fragment, text)


@pytest.mark.parametrize(("mutation", "field", "table", "rule", "prefix"), PARSE_CASES)
def test_parse_workload_names_field_and_table(mutation: Mutation, field: str, table: str | None, rule: tuple[str, ...], prefix: bool) -> None:
    data = edited(BASE, mutation)
    with pytest.raises(InputError) as info:
        parse_workload(data)
    _check(info.value, field, table, rule, prefix)


@pytest.mark.parametrize("data", [[1, 2], 42, "tracks: 2", None], ids=["list", "int", "string", "none"])
def test_parse_workload_requires_a_mapping(data: Any) -> None:
    with pytest.raises(InputError) as info:
        parse_workload(data)
    assert "mapping" in info.value.rule


def test_input_error_is_a_value_error() -> None:
    assert issubclass(InputError, ValueError)
    assert staleness_lab.InputError is InputError
    err = InputError("tables[1].period", "must be > 0, got -1", table="b")
    assert (err.field, err.rule, err.table) == ("tables[1].period", "must be > 0, got -1", "b")
    assert str(err).startswith("tables[1].period")
    assert "'b'" in str(err) and "must be > 0" in str(err)


# -- cycles ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tables", "on_cycle"),
    [
        pytest.param([ORDERS, view("p", "orders", "q"), view("q", "p")], ["p", "q"], id="two-cycle"),
        pytest.param([ORDERS, view("p", "r"), view("q", "p"), view("r", "orders", "q")], ["p", "q", "r"], id="three-cycle"),
        pytest.param([ORDERS, view("v", "v")], ["v"], id="self-loop"),
        pytest.param([view("x", "y"), view("y", "x"), ORDERS, view("ok", "orders")], ["x", "y"], id="cycle-before-base"),
    ],
)
def test_cycles_are_named(tables: list[dict[str, Any]], on_cycle: list[str]) -> None:
    data = {"tracks": 1, "horizon": 10, "tables": tables}
    with pytest.raises(InputError) as info:
        parse_workload(data)
    err = info.value
    assert "cycle" in err.rule
    assert err.field.startswith("tables[") and err.field.endswith("sources")
    assert err.table in on_cycle
    # every table on the cycle is named, and none that is not on it
    names = {t["name"] for t in tables}
    words = set(re.findall(r"[A-Za-z_]\w*", err.rule))
    assert set(on_cycle) <= words
    assert not (names - set(on_cycle)) & words
    assert "ok" not in words and "orders" not in words


def test_cycle_through_workload_constructor() -> None:
    a = Table(name="a", alpha=1, beta=0, sources=("b",))
    b = Table(name="b", alpha=1, beta=0, sources=("a",))
    with pytest.raises(InputError) as info:
        Workload(tables=(a, b))
    assert "cycle" in info.value.rule
    assert "a" in info.value.rule and "b" in info.value.rule
    assert info.value.table in {"a", "b"}


# -- Table and Workload built directly -------------------------------------------------------
def T(**kw: Any) -> Table:
    args = {"name": "orders", "alpha": 1, "beta": 0.1, "period": 10}
    args.update(kw)
    return Table(**args)


@pytest.mark.parametrize(
    ("kwargs", "field", "fragment"),
    [
        pytest.param({"period": 0}, "period", "> 0", id="period-zero"),
        pytest.param({"period": -1}, "period", "> 0", id="period-negative"),
        pytest.param({"period": "10"}, "period", "number", id="period-string"),
        pytest.param({"period": NAN}, "period", "finite", id="period-nan"),
        pytest.param({"phase": -0.5}, "phase", ">= 0", id="phase-negative"),
        pytest.param({"alpha": -1}, "alpha", ">= 0", id="alpha-negative"),
        pytest.param({"beta": -1}, "beta", ">= 0", id="beta-negative"),
        pytest.param({"alpha": 0, "beta": 0}, "alpha", "both", id="alpha-beta-zero"),
        pytest.param({"priority": 0}, "priority", "> 0", id="priority-zero"),
        pytest.param({"priority": INF}, "priority", "finite", id="priority-inf"),
        pytest.param({"chop": 0}, "chop", ">= 1", id="chop-zero"),
        pytest.param({"min_separation": -2}, "min_separation", ">= 0", id="min-separation-negative"),
        pytest.param({"initial_freshness": 3}, "initial_freshness", "<= 0", id="initial-freshness-positive"),
        pytest.param({"period": None}, "period", "exactly one", id="no-kind"),
        pytest.param({"sources": ("x",)}, "sources", "more than one", id="period-and-sources"),
        pytest.param({"arrivals": ((1, 1),)}, "arrivals", "more than one", id="period-and-arrivals"),
        pytest.param({"nominal_period": 4}, "nominal_period", "arrivals", id="nominal-period-on-periodic"),
        pytest.param({"period": None, "arrivals": ((5, 5), (3, 3))}, "arrivals", "increase", id="arrivals-decreasing"),
        pytest.param({"period": None, "arrivals": ((5, 6),)}, "arrivals", "<= 5", id="arrivals-data-to-after-time"),
        pytest.param({"period": None, "arrivals": ((5, 5), (8, 2))}, "arrivals", "decrease", id="arrivals-data-to-decreasing"),
        pytest.param({"period": None, "arrivals": ((5,),)}, "arrivals", "pair", id="arrivals-malformed"),
        pytest.param({"period": None, "arrivals": ((5, 5),), "nominal_period": 0}, "nominal_period", "> 0", id="nominal-period-zero"),
        pytest.param({"period": None, "sources": ("a", "a")}, "sources", "more than once", id="sources-twice"),
        pytest.param({"period": None, "sources": ("a",), "phase": 1}, "phase", "period", id="phase-on-derived"),
    ],
)
def test_table_constructor_validates(kwargs: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        T(**kwargs)
    assert field in info.value.field
    assert info.value.table == "orders"
    assert fragment in str(info.value)


@pytest.mark.parametrize("name", ["", None, 3], ids=["empty", "none", "int"])
def test_table_needs_a_name(name: Any) -> None:
    with pytest.raises(InputError) as info:
        T(name=name)
    assert info.value.field == "name"


def _tables() -> tuple[Table, ...]:
    return (T(), Table(name="view", alpha=1, beta=0.1, sources=("orders",)))


@pytest.mark.parametrize(
    ("kwargs", "field", "fragment"),
    [
        pytest.param({"tracks": 0}, "tracks", ">= 1", id="tracks-zero"),
        pytest.param({"tracks": True}, "tracks", "integer", id="tracks-bool"),
        pytest.param({"tracks": "2"}, "tracks", "integer", id="tracks-string"),
        pytest.param({"horizon": 0}, "horizon", "> 0", id="horizon-zero"),
        pytest.param({"horizon": NAN}, "horizon", "finite", id="horizon-nan"),
        pytest.param({"seed": -1}, "seed", ">= 0", id="seed-negative"),
        pytest.param({"seed": True}, "seed", "integer", id="seed-bool"),
        pytest.param({"warmup": 100}, "warmup", "< 100", id="warmup-equal-horizon"),
        pytest.param({"warmup": -1}, "warmup", ">= 0", id="warmup-negative"),
        pytest.param({"variability": -1}, "variability", ">= 0", id="variability-negative"),
        pytest.param({"chop": 0.5}, "chop", ">= 1", id="chop-below-one"),
        pytest.param({"tables": ()}, "tables", "empty", id="tables-empty"),
        pytest.param({"tables": (1,)}, "tables[0]", "Table", id="tables-not-tables"),
        pytest.param({"slowdown": {"factor": 2, "normal": 1, "slow": 1}}, "slowdown", "Slowdown", id="slowdown-a-dict"),
    ],
)
def test_workload_constructor_validates(kwargs: dict[str, Any], field: str, fragment: str) -> None:
    args: dict[str, Any] = {"tables": _tables(), "tracks": 2, "horizon": 100}
    args.update(kwargs)
    with pytest.raises(InputError) as info:
        Workload(**args)
    assert info.value.field == field
    assert fragment in str(info.value)


def test_workload_constructor_rejects_duplicates_and_unknown_sources() -> None:
    with pytest.raises(InputError) as info:
        Workload(tables=(T(), T(period=5)))
    assert (info.value.field, info.value.table) == ("tables[1].name", "orders")
    assert "duplicate" in info.value.rule
    with pytest.raises(InputError) as info:
        Workload(tables=(T(), Table(name="view", alpha=1, beta=0, sources=("orders", "ghost"))))
    assert (info.value.field, info.value.table) == ("tables[1].sources[1]", "view")
    assert "ghost" in info.value.rule


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        pytest.param({"factor": 0, "normal": 1, "slow": 1}, "slowdown.factor", id="factor-zero"),
        pytest.param({"factor": -1, "normal": 1, "slow": 1}, "slowdown.factor", id="factor-negative"),
        pytest.param({"factor": 2, "normal": -1, "slow": 1}, "slowdown.normal", id="normal-negative"),
        pytest.param({"factor": 2, "normal": 1, "slow": -1}, "slowdown.slow", id="slow-negative"),
        pytest.param({"factor": INF, "normal": 1, "slow": 1}, "slowdown.factor", id="factor-inf"),
    ],
)
def test_slowdown_constructor_validates(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as info:
        Slowdown(**kwargs)
    assert info.value.field == field


# -- valid workloads -------------------------------------------------------------------------
def test_the_issue_example_is_accepted_as_written() -> None:
    w = parse_workload(copy.deepcopy(EXAMPLE))
    assert (w.tracks, w.horizon, w.seed) == (2, 100, 0)
    assert isinstance(w.tracks, int) and isinstance(w.seed, int)
    a, v = w.tables
    assert (a.name, a.period, a.phase, a.alpha, a.beta, a.priority) == ("a", 10, 0, 1, 0.1, 1)
    assert a.kind == "periodic" and a.is_base
    assert (v.name, v.sources, v.alpha, v.beta, v.priority) == ("v", ("a",), 1, 0.1, 1)
    assert v.kind == "derived" and not v.is_base
    assert v.period is None and v.arrivals is None
    assert w.periods == (10, 10)
    assert w.utilization() == pytest.approx([0.2, 0.2])
    assert a.cost(10) == pytest.approx(2.0)


def test_parse_workload_does_not_modify_its_input() -> None:
    data = copy.deepcopy(BASE)
    parse_workload(data)
    assert data == BASE


def test_defaults() -> None:
    w = parse_workload({"tracks": 1, "horizon": 5, "tables": [{"name": "t", "period": 1, "alpha": 0, "beta": 1, "priority": 1}]})
    assert w.seed == 0 and w.warmup == 0
    assert w.variability is None and w.slowdown is None and w.chop is None
    t = w.tables[0]
    assert (t.phase, t.initial_freshness, t.min_separation, t.chop) == (0, 0, 0, None)


VALID_CASES = [
    pytest.param(top(), id="base"),
    pytest.param(drop_top("seed"), id="seed-absent"),
    pytest.param(top(seed=123456789), id="seed-large"),
    pytest.param(top(tracks=1), id="one-track"),
    pytest.param(top(horizon=0.5), id="tiny-horizon"),
    pytest.param(top(warmup=0), id="warmup-zero"),
    pytest.param(top(warmup=99.9), id="warmup-just-below-horizon"),
    pytest.param(top(variability=0), id="variability-zero"),
    pytest.param(top(variability=2.5), id="variability-large"),
    pytest.param(top(chop=1), id="chop-one"),
    pytest.param(top(slowdown={"factor": 3, "normal": 10, "slow": 5}), id="slowdown"),
    pytest.param(top(slowdown={"factor": 0.5, "normal": 0, "slow": 5}), id="slowdown-always-slow"),
    pytest.param(top(slowdown={"factor": 2, "normal": 5, "slow": 0}), id="slowdown-never-slow"),
    pytest.param(top(slowdown=None), id="slowdown-null"),
    pytest.param(tab(0, alpha=0), id="alpha-zero"),
    pytest.param(tab(0, beta=0), id="beta-zero"),
    pytest.param(tab(0, phase=3.5), id="phase"),
    pytest.param(tab(0, priority=0.01), id="small-priority"),
    pytest.param(tab(0, chop=1), id="table-chop-one"),
    pytest.param(tab(0, min_separation=0), id="min-separation-zero"),
    pytest.param(tab(0, min_separation=4), id="min-separation"),
    pytest.param(tab(0, initial_freshness=0), id="initial-freshness-zero"),
    pytest.param(tab(2, initial_freshness=-3), id="initial-freshness-negative"),
    pytest.param(chain(tab(0, initial_freshness=-3), tab(2, initial_freshness=-3)), id="derived-at-trailing-edge"),
    pytest.param(chain(tab(0, initial_freshness=-3), tab(2, initial_freshness=-7)), id="derived-behind-sources"),
    pytest.param(tab(1, arrivals=[[0, 0]]), id="arrival-at-zero"),
    pytest.param(tab(1, arrivals=[[5, 5], [6, 5], [7, 7]]), id="arrivals-data-to-repeats"),
    pytest.param(tab(1, arrivals=[[5, -10], [6, -2]]), id="arrivals-lagging-data"),
    pytest.param(drop(1, "nominal_period"), id="replayed-without-nominal-period"),
    pytest.param(lambda w: w["tables"].append(view("deep", "summary", "orders")), id="deeper-dag"),
    pytest.param(lambda w: w["tables"].insert(0, view("first", "summary")), id="view-before-its-sources"),
]


@pytest.mark.parametrize("mutation", VALID_CASES)
def test_valid_workloads_are_accepted(mutation: Mutation) -> None:
    data = edited(BASE, mutation)
    w = parse_workload(data)
    assert [t.name for t in w.tables] == [t["name"] for t in data["tables"]]
    assert w.tracks == data["tracks"] and w.horizon == data["horizon"]
    assert w.seed == data.get("seed", 0)
    for table, raw in zip(w.tables, data["tables"]):
        for key, value in raw.items():
            got = getattr(table, key)
            if key == "arrivals":
                assert [list(p) for p in got] == value
            elif key == "sources":
                assert list(got) == value
            else:
                assert got == value, (table.name, key)


def test_values_are_normalised() -> None:
    w = parse_workload(BASE)
    orders, clicks, _ = w.tables
    assert isinstance(w.horizon, float)
    assert isinstance(orders.period, float) and isinstance(orders.alpha, float)
    assert clicks.arrivals == ((5.0, 5.0), (12.0, 10.0), (20.0, 18.0))
    assert isinstance(clicks.arrivals, tuple) and all(isinstance(p, tuple) for p in clicks.arrivals)
    assert w.tables[2].sources == ("orders", "clicks")


def test_workloads_and_tables_are_immutable() -> None:
    w = parse_workload(BASE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.tracks = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.tables[0].period = 5  # type: ignore[misc]
    assert isinstance(w.tables, tuple)


def test_direct_construction_matches_parsing() -> None:
    tables = (
        Table(name="a", period=10, phase=0, alpha=1, beta=0.1, priority=1),
        Table(name="v", sources=["a"], alpha=1, beta=0.1, priority=1),
    )
    w = Workload(tables=tables, tracks=2, horizon=100, seed=0)
    assert w == parse_workload(EXAMPLE)
    assert w.digest() == parse_workload(EXAMPLE).digest()


# -- periods and utilization -----------------------------------------------------------------
def test_periods_of_each_kind() -> None:
    data = {
        "tracks": 2,
        "horizon": 100,
        "tables": [
            {"name": "fast", "period": 10, "alpha": 1, "beta": 0.1, "priority": 1},
            {"name": "slow", "period": 25, "alpha": 1, "beta": 0.1, "priority": 1},
            {"name": "feed", "arrivals": [[3, 3], [9, 8]], "nominal_period": 6, "alpha": 1, "beta": 0.1, "priority": 1},
            {"name": "raw", "arrivals": [[3, 3], [9, 8]], "alpha": 1, "beta": 0.1, "priority": 1},
            view("both", "fast", "slow"),
            view("over_view", "both"),  # ancestors fast and slow through a view
            view("fast_feed", "fast", "feed"),
            view("with_raw", "fast", "raw"),
            view("deep_raw", "with_raw"),
        ],
    }
    w = parse_workload(data)
    assert w.periods == (10, 25, 6, None, 25, 25, 10, None, None)
    util = w.utilization()
    assert util[0] == pytest.approx((1 + 0.1 * 10) / 10)
    assert util[1] == pytest.approx((1 + 0.1 * 25) / 25)
    assert util[2] == pytest.approx((1 + 0.1 * 6) / 6)
    assert util[3] is None and util[7] is None and util[8] is None
    assert util[4] == pytest.approx((1 + 0.1 * 25) / 25)


def test_a_policy_needing_periods_names_the_table_without_one() -> None:
    w = parse_workload(edited(BASE, drop(1, "nominal_period")))
    with pytest.raises(InputError) as info:
        w.require_periods("edf")
    assert (info.value.field, info.value.table) == ("tables[1].nominal_period", "clicks")
    with pytest.raises(InputError) as info:
        staleness_lab.simulate(w, "edf")
    assert info.value.table == "clicks"


def test_unknown_policy_through_the_api() -> None:
    with pytest.raises(InputError) as info:
        staleness_lab.simulate(parse_workload(EXAMPLE), "nope")
    assert "policy" in info.value.field
    assert "nope" in str(info.value)


# -- with_overrides --------------------------------------------------------------------------
def test_with_overrides_returns_a_new_validated_workload() -> None:
    w = parse_workload(BASE)
    w2 = w.with_overrides(tracks=4, horizon=50, seed=9)
    assert (w2.tracks, w2.horizon, w2.seed) == (4, 50, 9)
    assert (w.tracks, w.horizon, w.seed) == (2, 100, 0)
    assert w2.tables == w.tables
    assert w.with_overrides() == w
    with pytest.raises(InputError, match="^tracks: "):
        w.with_overrides(tracks=None)  # a required key cannot be cleared


def test_with_overrides_clears_optional_keys() -> None:
    w = parse_workload({**BASE, "variability": 0.5, "chop": 3, "slowdown": {"factor": 3, "normal": 10, "slow": 5}})
    cleared = w.with_overrides(variability=None, chop=None, slowdown=None)
    assert (cleared.variability, cleared.chop, cleared.slowdown) == (None, None, None)
    assert cleared.tables == w.tables and cleared.tracks == w.tracks


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        pytest.param({"tracks": 0}, "tracks", id="tracks-zero"),
        pytest.param({"tracks": True}, "tracks", id="tracks-bool"),
        pytest.param({"horizon": 0}, "horizon", id="horizon-zero"),
        pytest.param({"horizon": -1}, "horizon", id="horizon-negative"),
        pytest.param({"horizon": NAN}, "horizon", id="horizon-nan"),
        pytest.param({"seed": -1}, "seed", id="seed-negative"),
        pytest.param({"warmup": 100}, "warmup", id="warmup-at-horizon"),
        pytest.param({"variability": -1}, "variability", id="variability-negative"),
        pytest.param({"chop": 0}, "chop", id="chop-zero"),
        pytest.param({"name": "x"}, "name", id="not-overridable"),
    ],
)
def test_with_overrides_revalidates(overrides: dict[str, Any], field: str) -> None:
    w = parse_workload(BASE)
    with pytest.raises(InputError) as info:
        w.with_overrides(**overrides)
    assert info.value.field == field


def test_with_overrides_checks_warmup_against_the_new_horizon() -> None:
    w = parse_workload({**BASE, "warmup": 50})
    assert w.with_overrides(horizon=60).warmup == 50
    with pytest.raises(InputError) as info:
        w.with_overrides(horizon=40)
    assert info.value.field == "warmup"
    assert "< 40" in info.value.rule


# -- one line per error ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "data",
    [
        pytest.param({**EXAMPLE, "col\nour": 1}, id="unknown-top-level-key"),
        pytest.param(
            {**EXAMPLE, "tables": [{**EXAMPLE["tables"][0], "col\nour": 1}, EXAMPLE["tables"][1]]},
            id="unknown-table-key",
        ),
        pytest.param({**EXAMPLE, "tables": [EXAMPLE["tables"][0], view("x\ny", "x\ny")]}, id="cycle-name"),
        pytest.param({**EXAMPLE, "tables": [EXAMPLE["tables"][0], view("x\ny", "a", "gh\nost")]}, id="unknown-source"),
        pytest.param({**EXAMPLE, "tables": [EXAMPLE["tables"][0], view("x\ny", "a", phase=-1)]}, id="table-name"),
    ],
)
def test_an_error_message_is_one_line_even_for_odd_names(data: dict[str, Any]) -> None:
    """The CLI prints ``str(err)`` as its one line on stderr: names must not break it."""
    with pytest.raises(InputError) as info:
        parse_workload(data)
    assert "\n" not in str(info.value), str(info.value)
