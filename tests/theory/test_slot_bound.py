"""The slot bound (:mod:`staleness_lab.theory.leontyev.slot`): exactly p_k below Def. 13's A(V_k) on a
base table; no gedf-np run exceeds it wherever its preconditions hold (Hypothesis over random
workloads and seeds); an adversarial hill-climbing search of file arrivals, timestamps and costs
finds no trace above it, while the same search does break a bound one period tighter; and
``budget --bound slot`` certifies with it, for gedf-np only."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from cli_fork import run_cli
from leontyev_strategies import leontyev_workloads
from staleness_lab.experiments.leontyev.adversary import search
from staleness_lab.model import Table, Workload
from staleness_lab.theory.leontyev import TaskSet, staleness_bounds
from staleness_lab.theory.leontyev.budget import GUARANTEED, UNKNOWN, certify
from staleness_lab.theory.leontyev.slot import slot_staleness_bounds
from staleness_lab.theory.records import within


def far_targets(w: Workload) -> Workload:
    return w.with_overrides(tables=tuple(dataclasses.replace(t, target_lag=10.0**6) for t in w.tables))


def test_e5_system_gains_one_period():
    ts = TaskSet.from_columns(1, [1, 1], [3, 3], phi=[1, 1])
    assert slot_staleness_bounds(ts) == (7, 7)
    assert staleness_bounds(ts, "gedf-np") == (10, 10)


def test_a_view_gains_what_its_source_gains():
    ts = TaskSet.from_columns(2, [1, 2, 1], [4, 6, 6], phi=[4, 2, 0], J=[1, 0, 0], sources=[(), (), (0, 1)])
    a, s = staleness_bounds(ts, "gedf-np"), slot_staleness_bounds(ts)
    assert [a[k] - s[k] for k in range(3)] == [4, 6, max(a[0], a[1]) - max(s[0], s[1])]


@settings(max_examples=60, deadline=None)
@given(leontyev_workloads(replayed=True), st.lists(st.integers(0, 10**6), min_size=2, max_size=2))
def test_no_gedf_np_run_lags_beyond_a_guaranteed_slot_bound(w: Workload, seeds: list[int]):
    """Guaranteed exactly where the preconditions hold; jittered periodic feeds without an outage
    are always on their slots; on three seeds no guaranteed table lags beyond its slot bound."""
    w = far_targets(w)
    slot = certify(w, "gedf-np", "slot")
    plain = {t.table: t for t in certify(w, "gedf-np").tables}
    guaranteed = {t.table: float(t.bound) for t in slot.tables if t.verdict == GUARANTEED}
    for t in slot.tables:
        table = w.table(t.table)
        assert (t.verdict == GUARANTEED) is (not t.unmet), (t.table, t.unmet)
        if table.is_base:
            assert t.bound == plain[t.table].bound - Fraction(table.period or table.nominal_period)  # type: ignore[operator]
            if not table.outages and table.arrivals is None:
                assert t.verdict == GUARANTEED, (t.table, t.unmet)
        assert t.bound <= plain[t.table].bound
    for seed in [w.seed, *seeds]:
        observed = sl.budget(w.with_overrides(seed=seed), bound="slot").observed
        for name, bound in guaranteed.items():
            assert within(observed[name], bound), (seed, name, observed[name], bound)


@pytest.mark.parametrize(("seed", "tracks", "tables"), [(s, 1 + s % 3, 2 + s % 3) for s in range(10)])
def test_the_adversarial_search_finds_no_trace_above_the_slot_bound(seed: int, tracks: int, tables: int):
    result = search(seed, tracks, tables, steps=40)
    assert not result.breakers and result.best.ratio <= 1.0, result.best
    assert result.best.ratio >= result.start_ratio and result.accepted > 0


def one_period_tighter(ts: TaskSet) -> tuple[Fraction, ...]:
    return tuple(b - (t.p if t.is_base else 0) for b, t in zip(slot_staleness_bounds(ts), ts.tasks))  # type: ignore[operator]


def test_the_same_search_breaks_a_bound_one_period_tighter():
    """The search has teeth: against the slot bound minus p_k it finds a trace above the bound."""
    assert search(2, 1, 3, steps=30, bound=one_period_tighter).breakers


def test_a_file_off_its_slot_leaves_the_slot_bound_unknown():
    """Def. 2 holds (a well-behaved file in every window of p + J) but the last file lands 2 before
    its slot 15 with J = 0: the slot lemma's premise fails, so the verdict is unknown."""
    files = [[3, 3], [6, 6], [9, 9], [12, 12], [13, 13]]
    w = Workload(tables=(Table("a", alpha=1, beta=0, arrivals=files, nominal_period=3, target_lag=100),), horizon=13)
    [t] = certify(w, "gedf-np", "slot").tables
    assert t.verdict == UNKNOWN and t.unmet == ["files-on-slot"]
    [plain] = certify(w, "gedf-np").tables
    assert "files-on-slot" not in [p.name for p in plain.preconditions]


TABLES = [{"name": "a", "period": 10, "alpha": 1, "beta": 0.1, "priority": 1, "target_lag": 30},
          {"name": "v", "sources": ["a"], "alpha": 1, "beta": 0, "priority": 1, "target_lag": 50}]


def workload_file(tmp_path: Path) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump({"tracks": 1, "horizon": 300, "seed": 1, "tables": TABLES}))
    return path


def test_budget_bound_slot_on_the_command_line(tmp_path: Path):
    path = workload_file(tmp_path)
    plain = json.loads(run_cli(["budget", path, "--json"]).stdout)
    proc = run_cli(["budget", path, "--json", "--bound", "slot"])
    assert proc.returncode == 0 and proc.stderr == ""
    slot = json.loads(proc.stdout)
    assert (plain["bound_kind"], slot["bound_kind"]) == ("leontyev", "slot")
    assert [t["verdict"] for t in plain["tables"]] == ["not guaranteed", "not guaranteed"]
    assert [t["verdict"] for t in slot["tables"]] == [GUARANTEED, GUARANTEED]
    for p, s in zip(plain["tables"], slot["tables"]):
        assert s["observed_worst"] <= s["bound"] == pytest.approx(p["bound"] - 10)
    assert "files-on-slot" in [p["name"] for p in slot["tables"][0]["preconditions"]]
    assert slot["min_tracks"] == 1 and plain["min_tracks"] is None


@pytest.mark.parametrize(("args", "where"), [(["--bound", "cva"], "--bound"),
                                             (["--bound", "slot", "--policy", "aus"], "--bound")])
def test_bad_bound_is_one_line_and_status_2(tmp_path: Path, args: list[str], where: str):
    proc = run_cli(["budget", workload_file(tmp_path), *args])
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and where in proc.stderr, proc.stderr
