"""Part 1's plans executed on Spark (``staleness_lab.spark.intermittent.runner``).

One TPC-H generation (SF 0.01, 8 parts) for the module, in the shared local[2] session. Every
executed plan passes part 1's invariants with measured durations, its results equal the
catalogue's reference, and a missing part or data directory fails before any Spark job, in one
line naming the file, batch and query, leaving no run directory.
"""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from staleness_lab.errors import InputError
from staleness_lab.intermittent import parse_queryset, tpch
from staleness_lab.intermittent.plan import BatchPlan, aggregate, batch
from staleness_lab.spark.intermittent import TpchData, compare_results
from staleness_lab.spark.intermittent.runner import RUN_COLUMNS, dispatch, execute, parse_scheme

PARTS = 8


@pytest.fixture(scope="module")
def data(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> TpchData:
    directory, _ = tpch.generate(0.01, PARTS, tmp_path_factory.mktemp("tpch") / "sf-runner")
    return TpchData(directory)


def query_set(*names: str, deadline: float = 40.0, c_max: float = 1.0) -> Any:
    """``names`` over the 8 parts (1 file/s from ws = 1), a cost model making MinBatch 3 files."""
    return parse_queryset({
        "executors": 1, "delta_rsf": 0.5, "c_max": c_max,
        "queries": [{"name": n, "arrivals": {"ws": 1, "rate": 1, "N": PARTS}, "deadline": deadline,
                     "cost": {"kind": "linear", "S": 0.4, "R": 0.2}, "agg_cost": {"kind": "linear", "a0": 0.2, "a1": 0.1}}
                    for n in names],
    })


def assert_results_equal_reference(run: Any, data: TpchData) -> None:
    for name, got in run.results.items():
        difference = compare_results(name, got, data.reference_result(name))
        assert difference is None, f"{name}: {difference}"


def two_batches_of_q6() -> tuple[Any, BatchPlan]:
    """Q6 planned as parts 1-4 and 5-8 and their merge."""
    qs = query_set("Q6")
    return qs, BatchPlan(qs, "hand", (batch("Q6", 0, Fraction(4), Fraction(5), 1, 4),
                                      batch("Q6", 0, Fraction(8), Fraction(9), 5, 8),
                                      aggregate("Q6", 0, Fraction(9), Fraction(10), 2)))


def no_leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(".")]


def test_an_online_scheme_runs_on_spark_with_measured_durations(data: TpchData, tmp_path: Path) -> None:
    qs = query_set("CQ2", "Q14", "Q4")
    out = tmp_path / "llf"
    run = dispatch(qs, "llf", data, out=out)
    assert run.violations == []
    assert run.plan.scheme == "llf" and run.plan.minbatch == {"CQ2": 3, "Q14": 3, "Q4": 3}
    frame = run.batches
    assert set(RUN_COLUMNS) <= set(frame.columns)
    assert (frame["measured_seconds"] > 0).all()
    assert frame["measured_seconds"].tolist() == frame["cost"].tolist()
    assert frame["planned_start"].isna().all()
    batches = frame[frame["kind"] == "batch"]
    assert batches["modeled_cost"].tolist() == [0.4 + 0.2 * s for s in batches["size"]]
    for name in ("CQ2", "Q14", "Q4"):
        mine = frame[frame["query"] == name]
        n = int((mine["kind"] == "batch").sum())
        assert n == 3 and mine["size"][mine["kind"] == "batch"].sum() == PARTS
        assert sorted(p.name for p in (out / "partials" / name).iterdir()) == [f"{b}.parquet" for b in range(1, n + 1)]
        assert (out / "results" / f"{name}.parquet").is_dir()
    assert_results_equal_reference(run, data)
    assert (out / "batches.parquet").is_file() and (out / "queries.parquet").is_file()
    assert no_leftovers(tmp_path) == []


def test_an_offline_plan_starts_each_batch_no_earlier_than_planned(data: TpchData, tmp_path: Path) -> None:
    qs = query_set("Q1", "CQ1")
    t = Fraction
    planned = BatchPlan(qs, "hand", (
        batch("Q1", 0, t(3), t(4), 1, 3), batch("Q1", 0, t(8), t(9), 4, 8), aggregate("Q1", 0, t(9), t(10), 2),
        batch("CQ1", 0, t(10), t(11), 1, 8),   # one batch: the whole query, no partial
    ))
    run = execute(planned, data, out=tmp_path / "hand")
    assert run.violations == []
    frame = run.batches.sort_values(["start"]).reset_index(drop=True)
    data_batches = frame[frame["kind"] == "batch"]
    assert (data_batches["start"] >= data_batches["planned_start"]).all()
    assert sorted(zip(frame["query"], frame["planned_start"])) == [("CQ1", 10.0), ("Q1", 3.0), ("Q1", 8.0), ("Q1", 9.0)]
    # steps follow one another on the one executor: a batch starts at max(planned, previous end),
    # the merge right after Q1's last batch (the step before it)
    for prev, step in zip(frame.itertuples(), frame.iloc[1:].itertuples()):
        assert step.start == (max(step.planned_start, prev.end) if step.kind == "batch" else prev.end)
    assert not (tmp_path / "hand" / "partials" / "CQ1").exists()
    assert len(list((tmp_path / "hand" / "partials" / "Q1").iterdir())) == 2
    assert_results_equal_reference(run, data)


def test_a_merge_starts_when_its_last_batch_ends_or_its_executor_frees(data: TpchData, tmp_path: Path) -> None:
    """Both merges are planned at 30 s, long after their batches (planned 4 and 8 s, measured well
    under a second each): Q6's starts at its last batch's end on a free executor; Q14's executor
    runs CQ1's whole batch (planned before the merge) first, so Q14's merge starts when that ends."""
    qs = parse_queryset({
        "executors": 2, "delta_rsf": 0.5, "c_max": 1.0,
        "queries": [{"name": n, "arrivals": {"ws": 1, "rate": 1, "N": PARTS}, "deadline": 40,
                     "cost": {"kind": "linear", "S": 0.4, "R": 0.2}, "agg_cost": {"kind": "linear", "a0": 0.2, "a1": 0.1}}
                    for n in ("Q6", "Q14", "CQ1")],
    })
    t = Fraction
    planned = BatchPlan(qs, "hand", (
        batch("Q6", 0, t(4), t(5), 1, 4), batch("Q6", 0, t(8), t(9), 5, 8), aggregate("Q6", 0, t(30), t(31), 2),
        batch("Q14", 1, t(4), t(5), 1, 4), batch("Q14", 1, t(8), t(9), 5, 8),
        batch("CQ1", 1, t(9), t(12), 1, 8), aggregate("Q14", 1, t(30), t(31), 2),
    ))
    run = execute(planned, data, out=tmp_path / "merge")
    assert run.violations == []
    steps = run.batches.set_index(["query", "batch"])
    q6_last, q6_merge = steps.loc[("Q6", 2)], steps.loc[("Q6", 3)]
    assert q6_merge["kind"] == "aggregate" and q6_merge["planned_start"] == 30.0
    assert q6_merge["start"] == q6_last["end"] < 30
    q14_last, q14_merge, cq1 = steps.loc[("Q14", 2)], steps.loc[("Q14", 3)], steps.loc[("CQ1", 1)]
    assert cq1["start"] == max(9.0, q14_last["end"])
    assert q14_merge["start"] == cq1["end"] > q14_last["end"]
    assert q14_merge["start"] < 30
    assert_results_equal_reference(run, data)


def test_a_planned_schedule_from_part_1_runs_unchanged(data: TpchData, tmp_path: Path) -> None:
    from staleness_lab.intermittent.schemes import make_plan

    qs = query_set("CQ3", deadline=9.5, c_max=2.0)
    plan = make_plan(qs, "exact")
    assert plan.status == "ok" and len(plan.steps_of("CQ3")) >= 2
    run = execute(plan, data, out=tmp_path / "exact")
    assert run.violations == []
    assert run.plan.scheme == "exact"
    assert_results_equal_reference(run, data)


def test_a_missing_part_fails_in_one_line_before_any_work(data: TpchData, tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(data.directory, copy)
    victim = TpchData(copy).path("lineitem", 5)
    victim.unlink()
    broken = TpchData(copy)
    qs, plan = two_batches_of_q6()
    runs = tmp_path / "runs"
    with pytest.raises(InputError) as err:
        execute(plan, broken, out=runs / "r")
    message = str(err.value)
    assert "\n" not in message and str(victim) in message and "batch 2 of query Q6" in message
    with pytest.raises(InputError, match="query Q6"):
        dispatch(qs, "edf", broken, out=runs / "r")
    assert not (runs / "r").exists() and (not runs.exists() or list(runs.iterdir()) == [])
    with pytest.raises(InputError, match="no such directory"):
        dispatch(qs, "edf", tmp_path / "nowhere", out=runs / "r")


def test_unknown_queries_and_schemes_are_refused(data: TpchData, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"queries\[0\].name"):
        dispatch(query_set("A"), "llf", data, out=tmp_path / "x")
    assert parse_scheme("edf-nominbatch-unknown-n") == ("edf", False, True)
    with pytest.raises(InputError, match="scheme"):
        parse_scheme("fifo")
    assert not (tmp_path / "x").exists()


def test_a_step_failing_mid_run_leaves_no_run_directory(data: TpchData, tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(data.directory, copy)
    TpchData(copy).path("lineitem", 8).write_bytes(b"not parquet")  # passes the check, fails in Spark
    qs, plan = two_batches_of_q6()
    runs = tmp_path / "runs"
    with pytest.raises(Exception) as err:
        execute(plan, TpchData(copy), out=runs / "r")
    assert not isinstance(err.value, InputError)  # Spark's own failure, after the first batch ran
    assert list(runs.iterdir()) == []  # the first batch's partial went with the temporary directory


# --- the command line, locally and on the loopback cluster -----------------------------------------

def write_query_set(path: Path, *names: str) -> Path:
    import yaml

    qs = query_set(*names)
    path.write_text(yaml.safe_dump(qs.to_dict()), encoding="utf-8")
    return path


def test_tpch_run_executes_a_plan_and_refuses_a_missing_data_directory(
        data: TpchData, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from staleness_lab.cli import main

    queries = write_query_set(tmp_path / "qs.yaml", "CQ2", "Q6")
    out = tmp_path / "run"
    assert main(["tpch", "run", str(queries), "--scheme", "edf", "--data", str(data.directory), "--out", str(out),
                 "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["scheme"] == "edf" and printed["violations"] == [] and printed["run"] == str(out)
    assert {b["query"] for b in printed["batches"]} == {"CQ2", "Q6"}
    assert all(b["measured_seconds"] > 0 for b in printed["batches"])
    assert sorted(p.name for p in (out / "results").iterdir()) == ["CQ2.parquet", "Q6.parquet"]
    for argv, field in (([str(queries), "--data", str(tmp_path / "nowhere")], "--data"),
                        ([str(queries), "--data", str(data.directory), "--out", str(out)], "--out")):
        assert main(["tpch", "run", *argv, "--scheme", "llf"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"error: {field}:" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qs.yaml", "run"]


def test_one_plan_on_the_loopback_cluster_equals_local(standalone_cluster: str, data: TpchData, tmp_path: Path) -> None:
    import json
    import subprocess

    import pandas as pd
    from spark_cluster import CLI, cluster_env

    queries = write_query_set(tmp_path / "qs.yaml", "Q1", "Q4")
    local = dispatch(query_set("Q1", "Q4"), "llf", data, out=tmp_path / "local")
    proc = subprocess.run([str(CLI), "tpch", "run", str(queries), "--scheme", "llf", "--data", str(data.directory),
                           "--out", str(tmp_path / "cluster"), "--master", standalone_cluster, "--json"],
                          capture_output=True, text=True, env=cluster_env(), cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert json.loads(proc.stdout)["violations"] == []

    for name in ("Q1", "Q4"):
        remote = pd.read_parquet(tmp_path / "cluster" / "results" / f"{name}.parquet")
        assert compare_results(name, remote, local.results[name]) is None
