"""``staleness-lab plan``: every scheme on E5 (digest §4), the exact --json keys (strict JSON),
the text output, the overrides, --out (both Parquet files with provenance, all or nothing), and
exit codes (results of any status exit 0). In-process through ``cli.main``; two real runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

import staleness_lab
from staleness_lab.errors import InputError
from intermittent.cli_run import run
from staleness_lab.intermittent import check_plan, load_queryset
from staleness_lab.intermittent import planfiles
from staleness_lab.intermittent.plan import STATUSES
from staleness_lab.intermittent.planfiles import queryset_sha256, write_plan
from staleness_lab.intermittent.schemes import SCHEMES, best_heuristic, make_plan
from staleness_lab.provenance import read_provenance

DATA = Path(__file__).resolve().parents[2] / "data" / "intermittent"
E5 = DATA / "e5.yaml"
CLI = Path(sys.executable).parent / "staleness-lab"
JSON_KEYS = {"status", "scheme", "reason", "batches", "queries", "misses", "total_cost", "solver", "version"}
BATCH_KEYS = {"query", "batch", "executor", "start", "end", "first", "last", "size", "cost", "kind"}
QUERY_KEYS = {"query", "n_batches", "completion", "deadline", "late", "tardiness", "cost", "normalized_cost", "minbatch"}


def strict_loads(text: str) -> dict[str, Any]:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"non-strict JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def plan_json(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> dict[str, Any]:
    rc, out, err = run(["plan", str(path), *extra, "--json"], capsys)
    assert rc == 0, err
    assert len(out.splitlines()) == 1
    return strict_loads(out)


def write_yaml(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def single_a(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """E5's query A alone (deadline 118.8): a set Algorithm 1 and the exact DP can plan."""
    data = yaml.safe_load(E5.read_text(encoding="utf-8"))
    data["queries"] = data["queries"][:1]
    return write_yaml(tmp_path_factory.mktemp("single") / "a.yaml", data)


def _late(result: dict[str, Any]) -> set[str]:
    return {row["query"] for row in result["queries"] if row["late"]}


# --------------------------------------------------------------------------------------------
# every scheme
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("scheme", "late"), [("llf", set()), ("edf", set()), ("sjf", set()), ("rr", {"A"})])
def test_dispatch_schemes_on_e5(scheme: str, late: set[str], capsys: pytest.CaptureFixture[str]) -> None:
    """E5 at ρ = 0.4 (digest §4): EDF, LLF, SJF meet every deadline, RR misses A; 14 batches, 102.5."""
    result = plan_json(capsys, E5, "--scheme", scheme)
    assert set(result) == JSON_KEYS
    assert result["status"] == "ok" and result["scheme"] == scheme and result["solver"] is None
    assert result["version"] == staleness_lab.__version__
    assert _late(result) == late and result["misses"] == len(late)
    assert sum(1 for row in result["batches"] if row["kind"] == "batch") == 14
    assert result["total_cost"] == pytest.approx(102.5)
    assert all(set(row) == BATCH_KEYS for row in result["batches"])
    assert [row["query"] for row in result["queries"]] == ["A", "B", "C"]
    assert all(set(row) == QUERY_KEYS for row in result["queries"])
    assert {row["query"]: row["minbatch"] for row in result["queries"]} == {"A": 20, "B": 25, "C": 20}
    assert "C" in result["reason"]  # C's MinBatch is capped by c_max (digest E5)


def test_no_minbatch_baseline_on_e5(capsys: pytest.CaptureFixture[str]) -> None:
    """Digest E5: the No-MinBatch EDF runs 43 batches and misses all three deadlines at ρ = 0.4."""
    result = plan_json(capsys, E5, "--scheme", "edf", "--no-minbatch")
    assert result["scheme"] == "edf-nominbatch" and result["misses"] == 3
    assert sum(1 for row in result["batches"] if row["kind"] == "batch") == 43
    assert all(row["minbatch"] is None for row in result["queries"])


def test_optimal_on_e5(capsys: pytest.CaptureFixture[str]) -> None:
    result = plan_json(capsys, E5, "--scheme", "optimal", "--time-limit", "5", "--workers", "2")
    assert set(result) == JSON_KEYS and result["scheme"] == "optimal"
    assert result["status"] in STATUSES
    solver = result["solver"]
    assert isinstance(solver, dict) and {"status", "phases", "K", "deadlines", "hint"} <= set(solver)
    assert solver["hint"] == {"scheme": "llf", "misses": 0, "total_cost": 102.5}  # the best heuristic
    if result["status"] == "ok":  # seeded with the hint, it is never worse than it
        assert result["misses"] == 0 and result["total_cost"] <= 102.5 + 1e-9
        if solver["status"] == "optimal":
            assert result["total_cost"] == pytest.approx(76.0)  # digest §4 E5: the CP-SAT optimum


def test_optimal_tardiness_objective(capsys: pytest.CaptureFixture[str]) -> None:
    result = plan_json(capsys, E5, "--scheme", "optimal", "--objective", "tardiness", "--time-limit", "3")
    assert result["status"] in STATUSES and result["solver"]["objective"] == "tardiness"


def test_single_query_schemes(single_a: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = {s: plan_json(capsys, single_a, "--scheme", s) for s in ("algorithm1", "exact")}
    for scheme, result in results.items():
        assert set(result) == JSON_KEYS and result["status"] == "ok" and result["scheme"] == scheme
        assert result["misses"] == 0 and result["solver"] is None
    assert results["exact"]["total_cost"] <= results["algorithm1"]["total_cost"] + 1e-9


@pytest.mark.parametrize("scheme", ["algorithm1", "exact"])
def test_single_query_schemes_refuse_a_set(scheme: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(["plan", str(E5), "--scheme", scheme], capsys)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1 and "queries" in err


def test_every_scheme_is_covered() -> None:
    assert set(SCHEMES) == {"algorithm1", "exact", "llf", "edf", "sjf", "rr", "optimal"}


def test_no_plan_and_infeasible_exit_0_with_strict_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One query that cannot finish in time: Algorithm 1 finds no plan, the exact DP proves it."""
    hopeless = write_yaml(tmp_path / "hopeless.yaml", {"queries": [{
        "name": "late", "arrivals": {"ws": 1, "rate": 1, "N": 10}, "deadline": 10.5,
        "cost": {"kind": "linear", "S": 5, "R": 1}}]})
    no_plan = plan_json(capsys, hopeless, "--scheme", "algorithm1")
    assert no_plan["status"] == "no-plan" and no_plan["batches"] == [] and no_plan["misses"] is None
    assert no_plan["total_cost"] is None
    assert no_plan["reason"] and no_plan["queries"][0]["completion"] is None  # NaN shown as null
    infeasible = plan_json(capsys, hopeless, "--scheme", "exact")
    assert infeasible["status"] == "infeasible" and infeasible["batches"] == []
    late = plan_json(capsys, hopeless, "--scheme", "edf")  # the dispatcher always plans: late
    assert late["status"] == "ok" and late["misses"] == 1 and late["queries"][0]["late"] is True
    rc, out, _ = run(["plan", str(hopeless), "--scheme", "algorithm1"], capsys)
    assert rc == 0 and "no-plan" in out and "(no batches)" in out


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(["plan", str(E5), "--scheme", "edf"], capsys)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("scheme edf  status ok")
    header = next(line for line in lines if line.split()[:2] == ["query", "batch"])
    assert header.split() == ["query", "batch", "executor", "start", "end", "first", "last", "size", "cost", "kind"]
    assert lines[-1] == "misses 0  total cost 102.5"
    assert sum(1 for line in lines if line.rstrip().endswith(" batch")) == 14


# --------------------------------------------------------------------------------------------
# overrides
# --------------------------------------------------------------------------------------------
def test_overrides_change_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    two = plan_json(capsys, E5, "--scheme", "edf", "--executors", "2")
    assert {row["executor"] for row in two["batches"]} == {0, 1}
    relaxed = plan_json(capsys, E5, "--scheme", "edf", "--cmax", "100")
    assert relaxed["reason"] is None  # C's MinBatch (25) no longer capped
    assert {row["query"]: row["minbatch"] for row in relaxed["queries"]} == {"A": 20, "B": 25, "C": 25}
    wider = plan_json(capsys, E5, "--scheme", "edf", "--delta-rsf", "1", "--cmax", "100")
    assert {row["query"]: row["minbatch"] for row in wider["queries"]} == {"A": 12, "B": 15, "C": 13}


# --------------------------------------------------------------------------------------------
# --out
# --------------------------------------------------------------------------------------------
def test_out_writes_both_files_with_provenance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "deep" / "plan"
    rc, stdout, err = run(["plan", str(E5), "--scheme", "sjf", "--executors", "2", "--out", str(out)], capsys)
    assert rc == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["batches.parquet", "queries.parquet"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["plan"]  # no temporary directory left
    expected = make_plan(load_queryset(E5).with_overrides(executors=2), "sjf")
    batches = pd.read_parquet(out / "batches.parquet")
    queries = pd.read_parquet(out / "queries.parquet")
    pd.testing.assert_frame_equal(batches, expected.batches, check_dtype=False)
    pd.testing.assert_frame_equal(queries, expected.queries, check_dtype=False)
    for name in ("batches", "queries"):
        meta = read_provenance(out / f"{name}.parquet")
        assert meta is not None and meta["table"] == name
        assert meta["version"] == staleness_lab.__version__ and "git_commit" in meta
        assert meta["scheme"] == "sjf" and meta["status"] == "ok"
        assert meta["queryset_sha256"] == queryset_sha256(expected.queryset)
        assert meta["queryset_sha256"] != queryset_sha256(load_queryset(E5))  # the override counts
        assert meta["options"]["executors"] == 2 and meta["options"]["minbatch"] is True
        assert meta["options"]["scheme"] == "sjf"
    assert "misses" in stdout  # --out does not silence the summary


def test_out_replaces_an_earlier_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan"
    out.mkdir()  # an empty directory is fine
    assert run(["plan", str(E5), "--scheme", "edf", "--out", str(out)], capsys)[0] == 0
    assert run(["plan", str(E5), "--scheme", "rr", "--out", str(out)], capsys)[0] == 0
    assert read_provenance(out / "queries.parquet")["scheme"] == "rr"
    assert bool(pd.read_parquet(out / "queries.parquet").set_index("query").loc["A", "late"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan"]


@pytest.mark.parametrize("kind", ["file", "foreign-files"])
def test_out_refuses_unsuitable_targets(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "target"
    if kind == "file":
        out.write_text("keep me", encoding="utf-8")
    else:
        out.mkdir()
        (out / "notes.txt").write_text("keep me", encoding="utf-8")
    rc, stdout, err = run(["plan", str(E5), "--scheme", "edf", "--out", str(out)], capsys)
    assert rc == 2 and stdout == "" and len(err.splitlines()) == 1 and "--out" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]
    kept = out if kind == "file" else out / "notes.txt"
    assert kept.read_text(encoding="utf-8") == "keep me"
    if kind == "foreign-files":
        assert [p.name for p in out.iterdir()] == ["notes.txt"]


def _failing_second_write(monkeypatch: pytest.MonkeyPatch) -> None:
    real = planfiles.write_parquet_atomic
    calls = {"n": 0}

    def flaky(frame: pd.DataFrame, path: Path, meta: Any) -> Path:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full (simulated)")
        return real(frame, path, meta)

    monkeypatch.setattr(planfiles, "write_parquet_atomic", flaky)


def test_a_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = make_plan(load_queryset(E5), "edf")
    _failing_second_write(monkeypatch)
    out = tmp_path / "plan"
    with pytest.raises(InputError, match=r"--out: .*cannot be written \(disk full \(simulated\)\)"):
        write_plan(plan, out, version="test")
    assert list(tmp_path.iterdir()) == []  # neither DIR nor a temporary directory


def test_a_failed_rewrite_keeps_the_old_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "plan"
    write_plan(make_plan(load_queryset(E5), "edf"), out, version="test", options={"scheme": "edf"})
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _failing_second_write(monkeypatch)
    with pytest.raises(InputError, match="simulated"):
        write_plan(make_plan(load_queryset(E5), "rr"), out, version="test")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["plan"]


def test_written_files_are_complete_parquet(tmp_path: Path) -> None:
    paths = write_plan(make_plan(load_queryset(E5), "llf"), tmp_path / "p", version="test",
                       options={"time_limit": float("inf")})
    assert [p.name for p in paths] == ["batches.parquet", "queries.parquet"]
    for path in paths:
        assert pq.read_metadata(path).num_rows > 0
    assert read_provenance(paths[0])["options"] == {"time_limit": None}  # strict JSON inside too


# --------------------------------------------------------------------------------------------
# the library behind the command
# --------------------------------------------------------------------------------------------
def test_best_heuristic(single_a: Path) -> None:
    e5 = load_queryset(E5)
    best = best_heuristic(e5)
    assert best.scheme == "llf" and best.misses == 0 and best.total_cost == 102.5  # ties: llf first
    assert check_plan(e5, best) == []
    assert best_heuristic(e5, minbatch=False).scheme.endswith("-nominbatch")
    alone = load_queryset(single_a)
    chosen = best_heuristic(alone)
    assert chosen.total_cost == min(make_plan(alone, s).total_cost for s in ("llf", "edf", "sjf", "rr", "algorithm1", "exact"))


def test_real_process_json_and_bad_input(tmp_path: Path) -> None:
    proc = subprocess.run([str(CLI), "plan", str(E5), "--scheme", "edf", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert set(strict_loads(proc.stdout)) == JSON_KEYS
    bad = write_yaml(tmp_path / "bad.yaml", {"executors": 0, "queries": [{
        "name": "q", "arrivals": {"ws": 1, "rate": 1, "N": 5}, "deadline": 9, "cost": {"kind": "linear", "S": 1, "R": 1}}]})
    proc = subprocess.run([str(CLI), "plan", str(bad), "--scheme", "edf", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "executors" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()
