"""The Spark grid runner against the local one, on the shared local[2] session.

The tests call ``run_grid(..., master="local[2]")``, which returns the shared session (they do
not hold on to the fixture's object, so a test that replaced and restored it cannot break them).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from staleness_lab.errors import InputError
from staleness_lab.experiments import get_experiment
from staleness_lab.spark.grid import TASKS_PER_CORE, plan_chunks
from staleness_lab.sweeps.runner import RowTask, SweepError, run_grid, run_sweep

MASTER = "local[2]"
#: The quickstart experiment, looked up where every paper's is registered.
BASELINE = get_experiment("baseline-utilization")
#: 18 rows: more than TASKS_PER_CORE x 2 cores, so some Spark tasks run two rows.
GRID = {
    "policy": ["edf", "max-benefit"],
    "utilization": [0.6, 0.9, 1.1],
    "seed": [0, 1, 2],
    "fixed": {"horizon": 2000.0, "n_tables": 8},
}
N = 18


def test_rows_are_dealt_round_robin_once_there_are_many() -> None:
    tasks = [RowTask(i, {}, str(i), None) for i in range(40)]
    assert [[t.index for t in c] for c in plan_chunks(tasks[:5], 2)] == [[0], [1], [2], [3], [4]]
    chunks = plan_chunks(tasks, 2)
    assert len(chunks) == TASKS_PER_CORE * 2
    assert [t.index for t in chunks[0]] == list(range(0, 40, len(chunks)))
    assert sorted(t.index for c in chunks for t in c) == list(range(40))


def test_spark_and_local_runners_agree_exactly(spark, tmp_path: Path) -> None:
    local = run_grid(BASELINE, GRID, runner="local", cache_dir=None, progress=False)
    on_spark = run_sweep(BASELINE, GRID, runner="spark", master=MASTER, cache_dir=tmp_path, progress=False)
    assert on_spark.computed == N and on_spark.from_cache == 0 and on_spark.master == MASTER
    pd.testing.assert_frame_equal(on_spark.frame, local, check_exact=True)
    # The executors wrote one cache file per row as they finished.
    assert len(list((tmp_path / "baseline-utilization").glob("*.parquet"))) == N
    # Grid order, param columns first, then `row`, then the observations.
    assert list(local.columns[:10]) == [
        "policy", "utilization", "n_tables", "tracks", "period_min", "period_max", "variability", "horizon", "seed", "row",
    ]
    assert local["row"].tolist() == list(range(N))
    assert local["policy"].tolist() == ["edf"] * 9 + ["max-benefit"] * 9
    assert local["seed"].tolist() == [0, 1, 2] * 6
    # A rerun is served from the cache without a Spark job, and is identical.
    again = run_sweep(BASELINE, GRID, runner="spark", master=MASTER, cache_dir=tmp_path, progress=False)
    assert again.computed == 0 and again.from_cache == N
    pd.testing.assert_frame_equal(again.frame, local, check_exact=True)


def test_a_failing_row_on_an_executor_names_its_parameters(spark, tmp_path: Path) -> None:
    rows = [
        {"policy": "edf", "horizon": 1000.0},
        {"policy": "fifo", "horizon": 1000.0},
        {"policy": "no-such-policy", "utilization": 0.7, "horizon": 1000.0},
    ]
    with pytest.raises(SweepError) as info:
        run_grid(BASELINE, rows, runner="spark", master=MASTER, cache_dir=tmp_path, progress=False)
    err = info.value
    assert isinstance(err, InputError) and isinstance(err, RuntimeError)
    assert str(err).startswith("row 2 {policy: 'no-such-policy', utilization: 0.7, ")
    assert "unknown policy 'no-such-policy'" in str(err)
    assert err.index == 2 and err.params["policy"] == "no-such-policy" and err.field == "policy"
    assert "Traceback" in (err.remote_traceback or "")
    # The rows that succeeded in the same job stay cached for the rerun.
    assert len(list((tmp_path / "baseline-utilization").glob("*.parquet"))) == 2
