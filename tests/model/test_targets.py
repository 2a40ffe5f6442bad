"""Freshness targets (``target_lag``): the key's rules, ``downstream`` resolved through the view
DAG, and one-line refusals through the real CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from staleness_lab import InputError, parse_workload
from staleness_lab.model.io import dump_workload, load_workload
from staleness_lab.model.targets import minimum_refresh


def workload(*tables: dict[str, Any]) -> dict[str, Any]:
    return {"tracks": 2, "horizon": 100, "tables": list(tables)}


def base(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "period": 5, "alpha": 1, "beta": 0.1, "priority": 1, **extra}


def view(name: str, sources: list[str], **extra: Any) -> dict[str, Any]:
    return {"name": name, "sources": sources, "alpha": 0.5, "beta": 0.05, "priority": 1, **extra}


def test_downstream_takes_the_tightest_dependent_through_downstream_views() -> None:
    w = parse_workload(workload(
        base("a", target_lag="downstream"), base("b", target_lag=40),
        view("v", ["a", "b"], target_lag="downstream"), view("w", ["v"], target_lag=30), view("x", ["v"], target_lag=20),
        view("y", ["a"]),
    ))
    assert w.target_lags == (20.0, 40.0, 20.0, 30.0, 20.0, None)


def test_targets_round_trip_through_a_file(tmp_path: Path) -> None:
    w = parse_workload(workload(base("a", target_lag="downstream"), view("v", ["a"], target_lag=12.5)))
    dump_workload(w, tmp_path / "w.yaml")
    again = load_workload(tmp_path / "w.yaml")
    assert again == w and again.target_lags == (12.5, 12.5)
    assert again.tables[0].target_lag == "downstream"


def test_minimum_refresh_is_one_refresh_of_the_shortest_update() -> None:
    w = parse_workload(workload(base("a"), {"name": "r", "arrivals": [2, 3, 7], "alpha": 1, "beta": 1, "priority": 1},
                                view("v", ["a", "r"])))
    assert [minimum_refresh(t) for t in w.tables] == [1.5, 2.0, 0.5]


@pytest.mark.parametrize(("tables", "field", "rule"), [
    ([base("a", target_lag=0)], "tables[0].target_lag", "must be > 0"),
    ([base("a", target_lag=-3)], "tables[0].target_lag", "must be > 0"),
    ([base("a", target_lag="soon")], "tables[0].target_lag", "must be a number > 0 or 'downstream'"),
    ([base("a", target_lag=True)], "tables[0].target_lag", "must be a number"),
    ([base("a", target_lag="downstream")], "tables[0].target_lag", "no table that reads it"),
    ([base("a", target_lag="downstream"), view("v", ["a"])], "tables[0].target_lag", "no table that reads it"),
    ([base("a", target_lag="downstream"), view("v", ["a"], target_lag="downstream")], "tables[1].target_lag",
     "no table that reads it"),
    ([base("a", target_lag=1.2)], "tables[0].target_lag", "below the table's minimum refresh time 1.5"),
    ([base("a", target_lag="downstream"), view("v", ["a"], target_lag=1)], "tables[0].target_lag",
     "resolved from its dependents 1 is below"),
])
def test_bad_targets_name_the_table_and_the_rule(tables: list[dict[str, Any]], field: str, rule: str) -> None:
    with pytest.raises(InputError) as err:
        parse_workload(workload(*tables))
    assert err.value.field == field and rule in err.value.rule


def test_the_cli_refuses_a_bad_target_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(workload(base("a", target_lag="downstream"), view("v", ["a"]))), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "staleness_lab", "validate", str(path)], capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "tables[0].target_lag (table 'a')" in run.stderr


@st.composite
def target_dags(draw: st.DrawFn) -> tuple[dict[str, Any], list[list[int]]]:
    """A random view DAG (each derived table reads some earlier tables) with random targets:
    numbers, ``downstream`` or none. Returns the workload and each table's direct readers."""
    n = draw(st.integers(2, 9))
    tables: list[dict[str, Any]] = []
    readers: list[list[int]] = [[] for _ in range(n)]
    for k in range(n):
        target = draw(st.one_of(st.none(), st.just("downstream"), st.integers(2, 200)))
        extra = {} if target is None else {"target_lag": target}
        if k == 0 or draw(st.booleans()):
            tables.append(base(f"t{k}", **extra))
        else:
            srcs = sorted(set(draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=3))))
            for s in srcs:
                readers[s].append(k)
            tables.append(view(f"t{k}", [f"t{s}" for s in srcs], **extra))
    return workload(*tables), readers


@settings(max_examples=200, deadline=None)
@given(target_dags())
def test_downstream_is_the_minimum_over_numeric_targets_reached_through_downstream_tables(
        case: tuple[dict[str, Any], list[list[int]]]) -> None:
    data, readers = case
    own = [t.get("target_lag") for t in data["tables"]]

    def expected(k: int) -> float | None:
        if own[k] != "downstream":
            return None if own[k] is None else float(own[k])
        reached = [expected(r) for r in readers[k]]
        reached = [r for r in reached if r is not None]
        return min(reached) if reached else None

    want = [expected(k) for k in range(len(own))]
    unresolved = [k for k, t in enumerate(own) if t == "downstream" and want[k] is None]
    if unresolved:
        with pytest.raises(InputError) as err:
            parse_workload(data)
        assert err.value.field.endswith("target_lag")
        return
    assert parse_workload(data).target_lags == tuple(want)
