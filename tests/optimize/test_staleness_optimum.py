"""The exact X_w optimum (Bateni digest §5 "Exact OPT", corrections 7-9; acceptance check 13) and
its brute-force cross-check.

Worked examples: E1 (forced 19, relaxed 18.75), E2 (127.2775 by idling: B [10.5, 10.605], A
[10.605, 12.105]; eager 131.7275). Properties (Hypothesis, exact Fractions): CP-SAT equals brute
force, forced and relaxed; every returned schedule obeys the model; LOW/2 <= OPT <= X of fifo,
max-benefit and random. Also: the trace builder reproduces the engine's own traces, bad input is
refused naming its key, and the ``optimum`` command's JSON and exit codes.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from optimum_strategies import replayed_workloads

import staleness_lab as sl
from staleness_lab.cli import main
from staleness_lab.errors import InputError
from staleness_lab.model import parse_workload
from staleness_lab.optimize import brute_force, optimum
from staleness_lab.optimize.staleness_optimum import MAX_UPDATES, exact_tables
from staleness_lab.sim.schedule_trace import trace_from_schedule
from staleness_lab.theory.bateni.metrics import measures

WORKLOADS = Path(__file__).resolve().parents[2] / "data" / "workloads"
E1 = WORKLOADS / "bateni-e1.yaml"
E2 = WORKLOADS / "bateni-e2.yaml"
JSON_KEYS = {"status", "objective_X", "bound", "gap", "staleness", "batches", "exact", "wall_s", "workload_sha256",
             "version"}
BATCH_KEYS = {"table", "first", "last", "start", "end", "track"}


def _rows(result: Any) -> list[tuple]:
    return [(r.table, r.first, r.last, r.start, r.end, r.track) for r in result.batches.itertuples(index=False)]


def _check_schedule(workload: Any, result: Any, forced: bool) -> None:
    """The schedule obeys the model (module docstring of staleness_optimum), in exact numbers."""
    tables = {t.name: t for t in exact_tables(workload)}
    frame = result.batches
    assert list(frame.columns) == ["table", "first", "last", "start", "end", "track"]
    covered: dict[str, list[int]] = {name: [] for name in tables}
    by_track: dict[int, list[tuple[Fraction, Fraction]]] = {}
    for name, first, last, start, end, track in _rows(result):
        t = tables[name]
        s, e = Fraction(repr(start)), Fraction(repr(end))
        assert e - s == pytest.approx(float(t.duration(first, last)), abs=1e-9)
        assert start >= float(t.arrival[last]) - 1e-12
        if forced and last + 1 < t.n:
            assert start < float(t.arrival[last + 1])
        covered[name] += list(range(first, last + 1))
        by_track.setdefault(track, []).append((s, e))
        assert 0 <= track < workload.tracks
    for name, t in tables.items():
        assert covered[name] == list(range(t.n))  # contiguous batches in update order, each update once
        mine = frame[frame["table"] == name].sort_values("first")
        assert (mine["start"].to_numpy()[1:] >= mine["end"].to_numpy()[:-1] - 1e-9).all()
    for spans in by_track.values():
        spans.sort()
        assert all(a[1] <= b[0] + Fraction(1, 10**9) for a, b in zip(spans, spans[1:]))


# -- worked examples --------------------------------------------------------------------------------


def test_e1_forced_batching_gives_19_and_relaxed_18_75() -> None:
    forced = optimum(E1)
    assert forced.status == "optimal" and forced.exact and forced.objective == 19
    assert forced.objective_X == 19.0 and forced.bound == 19.0 and forced.gap == 0.0
    assert _rows(forced) == [("a", 0, 0, 4.0, 6.0, 0), ("a", 1, 2, 6.0, 6.75, 0)]
    relaxed = optimum(E1, relaxed=True)
    assert relaxed.status == "optimal" and relaxed.objective == Fraction(75, 4) and relaxed.relaxed
    assert [(r[1], r[2]) for r in _rows(relaxed)] == [(0, 0), (1, 1), (2, 2)]


def test_e2_optimum_idles_for_the_short_table() -> None:
    result = optimum(E2)
    assert result.status == "optimal" and result.objective == Fraction("127.2775")
    assert _rows(result) == [("B", 0, 0, 10.5, 10.605, 0), ("A", 0, 0, 10.605, 12.105, 0)]
    eager = measures(sl.simulate(sl.load_workload(E2), "fifo").trace).X_w
    assert eager == pytest.approx(131.7275, abs=1e-9) and result.objective_X < eager


def test_the_optimum_trace_is_measured_like_a_run() -> None:
    result = optimum(E1)  # eager is optimal on E1 (digest E1): the same trace as fifo's
    engine = sl.simulate(sl.load_workload(E1), "fifo").trace
    assert result.trace.policy == "optimum" and result.trace.events == engine.events
    assert result.staleness == pytest.approx(29.125) == pytest.approx(sum(engine.staleness_area))
    assert result.trace.max_staleness == pytest.approx(engine.max_staleness)
    assert measures(result.trace).X_w == pytest.approx(19.0)


def test_the_export_and_its_lazy_import() -> None:
    assert "optimum" in sl.__all__ and sl.optimum is optimum


# -- brute force --------------------------------------------------------------------------------------


def test_brute_force_reproduces_e1_and_e2() -> None:
    w1, w2 = sl.load_workload(E1), sl.load_workload(E2)
    assert brute_force(w1).X == 19 and brute_force(w1, forced=False).X == Fraction(75, 4)
    best = brute_force(w2)
    assert best.X == Fraction("127.2775")
    assert [(b.table, b.start, b.end) for b in best.schedule] == [(1, Fraction("10.5"), Fraction("10.605")),
                                                                  (0, Fraction("10.605"), Fraction("12.105"))]


def test_brute_force_refuses_more_than_seven_updates() -> None:
    w = parse_workload({"tracks": 1, "horizon": 20, "tables": [{"name": "a", "arrivals": list(range(1, 9)), "alpha": 0,
                                                                "beta": 0.1, "priority": 1}]})
    with pytest.raises(InputError, match="8 updates"):
        brute_force(w)


# -- properties ---------------------------------------------------------------------------------------


def small_workloads() -> st.SearchStrategy[dict[str, Any]]:
    """At most 3 tables and 6 updates, p <= 2, releases on a 0.1 grid, beta in a small set."""
    return replayed_workloads(6, 40, alphas=(0, 0, 0, 0.2), betas=(0.1, 0.25, 0.5, 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=small_workloads())
@example(data={"tracks": 1, "horizon": 100, "tables": [  # max-benefit starts t2 an ulp before its update at 1.6
    {"name": "t0", "arrivals": [0.7], "alpha": 0, "beta": 0.5, "priority": 1},
    {"name": "t1", "arrivals": [0.7, 1.1], "alpha": 0.2, "beta": 0.5, "priority": 1},
    {"name": "t2", "arrivals": [1.4, 1.6], "alpha": 0, "beta": 0.1, "priority": 1}]})
def test_cp_sat_equals_brute_force_and_sits_between_low_and_every_policy(data: dict[str, Any]) -> None:
    w = parse_workload(data)
    forced, relaxed = optimum(w), optimum(w, relaxed=True)
    assert forced.status == relaxed.status == "optimal" and forced.exact
    assert forced.objective == brute_force(w).X == optimum(w, method="monolithic").objective
    assert relaxed.objective == brute_force(w, forced=False).X == optimum(w, relaxed=True, method="monolithic").objective
    assert relaxed.objective <= forced.objective
    _check_schedule(w, forced, forced=True)
    _check_schedule(w, relaxed, forced=False)
    assert measures(forced.trace).X_w == pytest.approx(forced.objective_X, rel=1e-12)
    low = measures(sl.simulate(w, "fifo").trace).total("LOW", weighted=True)
    assert low / 2 <= forced.objective_X * (1 + 1e-12)
    for policy in ("fifo", "max-benefit", "random"):
        trace = sl.simulate(w, policy).trace
        x = measures(trace).X_w
        assert relaxed.objective_X <= x * (1 + 1e-12)  # the A9 lower bound holds for every schedule
        if _forced_in_exact_numbers(w, trace):
            assert forced.objective_X <= x * (1 + 1e-12)


def _forced_in_exact_numbers(workload: Any, trace: Any) -> bool:
    """Every job of ``trace`` starts before its table's next update arrives, in exact numbers:
    the schedules the forced optimum ranges over. The engine adds floats, so a decision can
    fall an ulp before an arrival it equals exactly (0.7 + 0.35 + 0.55 = 1.5999999999999999 <
    1.6): it then starts a batch without that update, a schedule forced batching excludes, whose
    X_w can be below the forced optimum (and never below the relaxed one)."""
    tables = {t.name: t for t in exact_tables(workload)}
    for job in trace.jobs.itertuples():
        t = tables[job.table]
        later = [r for r, d in zip(t.arrival, t.data_to) if d > Fraction(repr(job.data_to))]
        if later and Fraction(repr(job.start)) >= later[0] - Fraction(1, 10**9):
            return False
    return True


# -- the grid ----------------------------------------------------------------------------------------


def test_continuous_times_fall_back_to_a_grid_and_say_so() -> None:
    w = parse_workload({"tracks": 1, "horizon": 10, "tables": [
        {"name": "a", "arrivals": [0.1 + 0.2, 1 / 3], "alpha": 0, "beta": 0.5, "priority": 1},
        {"name": "b", "arrivals": [0.7 + 0.1], "alpha": 0, "beta": 1 / 7, "priority": 1}]})
    result = optimum(w)
    assert result.status == "optimal" and not result.exact and "grid" in result.note
    assert result.objective_X == pytest.approx(float(brute_force(w).X), rel=1e-9)


# -- the trace builder ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name, overrides", [("bateni-e2.yaml", {}), ("bateni-e5.yaml", {"horizon": 44.5}),
                                             ("bateni-e7.yaml", {"warmup": 2.5}), ("golab-table2.yaml", {"horizon": 300})])
def test_trace_from_schedule_reproduces_the_engine(name: str, overrides: dict[str, Any]) -> None:
    engine = sl.simulate(WORKLOADS / name, "fifo", **overrides).trace
    rebuilt = trace_from_schedule(engine.workload, engine.jobs_done + engine.in_flight, "fifo")
    assert rebuilt.events == engine.events
    assert sorted(rebuilt.jobs_done) == sorted(engine.jobs_done) and rebuilt.in_flight == engine.in_flight
    assert rebuilt.staleness_area == pytest.approx(engine.staleness_area, rel=1e-9)
    assert rebuilt.max_staleness == pytest.approx(engine.max_staleness, rel=1e-9)


# -- bad input ----------------------------------------------------------------------------------------


BASE: dict[str, Any] = {"tracks": 1, "horizon": 20, "tables": [
    {"name": "a", "arrivals": [1, 2], "alpha": 0, "beta": 0.5, "priority": 1},
    {"name": "b", "arrivals": [1.5], "alpha": 0, "beta": 0.5, "priority": 1}]}


@pytest.mark.parametrize("change, field", [
    ({"tables": [{"name": "a", "period": 2, "alpha": 0, "beta": 0.5, "priority": 1}]}, "tables[0].period"),
    ({"tables": [BASE["tables"][0], {"name": "v", "sources": ["a"], "alpha": 0, "beta": 0.5, "priority": 1}]},
     "tables[1].sources"),
    ({"variability": 0.5}, "variability"),
    ({"slowdown": {"factor": 2, "normal": 1, "slow": 1}}, "slowdown"),
    ({"chop": 2}, "chop"),
    ({"warmup": 1}, "warmup"),
    ({"tables": [{**BASE["tables"][0], "min_separation": 1}]}, "tables[0].min_separation"),
    ({"tables": [{**BASE["tables"][0], "chop": 2, "nominal_period": 1}]}, "tables[0].chop"),
    ({"tables": [{"name": "a", "arrivals": list(range(1, MAX_UPDATES + 2)), "alpha": 0, "beta": 0.001, "priority": 1}]}, "tables"),
])
def test_refuses_what_the_model_does_not_cover(change: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as info:
        optimum({**BASE, **change})
    assert info.value.field == field


def test_refuses_bad_solver_options() -> None:
    with pytest.raises(InputError, match="workers"):
        optimum(E1, workers=0)
    with pytest.raises(InputError, match="time_limit"):
        optimum(E1, time_limit=0)


# -- the command --------------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_optimum_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "optimum", str(E2), "--json", "--time-limit", "5", "--workers", "1")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert set(data) == JSON_KEYS and data["status"] == "optimal" and data["exact"] is True
    assert data["objective_X"] == pytest.approx(127.2775) and data["bound"] == pytest.approx(127.2775)
    assert data["staleness"] == pytest.approx(optimum(E2).staleness) and len(data["workload_sha256"]) == 64
    assert [set(b) for b in data["batches"]] == [BATCH_KEYS] * 2
    assert [(b["table"], b["start"], b["end"]) for b in data["batches"]] == [("B", 10.5, 10.605), ("A", 10.605, 12.105)]
    code, out, _ = run(capsys, "optimum", str(E1), "--json", "--relaxed")
    assert code == 0 and json.loads(out)["objective_X"] == 18.75


def test_optimum_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "optimum", str(E1))
    assert code == 0 and "status optimal" in out and "X_w 19" in out and "track" in out


@pytest.mark.parametrize("data, field", [
    ({"tracks": 1, "horizon": 9, "tables": [{"name": "a", "period": 2, "alpha": 0, "beta": 0.5, "priority": 1}]},
     "tables[0].period"),
    ({"tracks": 1, "horizon": 9, "tables": [{"name": "a", "arrivals": list(range(1, MAX_UPDATES + 2)), "alpha": 0, "beta": 0.001,
                                             "priority": 1}]}, "tables"),
])
def test_optimum_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                 data: dict[str, Any], field: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(data))
    code, out, err = run(capsys, "optimum", str(path), "--json")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and re.search(rf"error: {re.escape(field)}[: ]", err)
    code, _, err = run(capsys, "optimum", str(E1), "--workers", "0")
    assert code == 2 and "--workers" in err and err.count("\n") == 1
