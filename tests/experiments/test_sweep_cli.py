"""``staleness-lab sweep`` as a real process: listing, bad input, the result file, resuming.

These runs use the local runner (or fail before any runner starts); the same command on a
Spark cluster is tested in ``tests/spark/test_cluster.py``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from staleness_lab.experiments import list_experiments
import staleness_lab
from staleness_lab.provenance import PROVENANCE_KEY
from staleness_lab.sweeps.runner import run_grid

CLI = Path(sys.executable).parent / "staleness-lab"
SMALL = {"policy": ["edf", "fifo"], "utilization": [0.5, 1.1], "seed": [0, 2], "fixed": {"horizon": 1500.0, "n_tables": 6}}
#: Rows of about 0.3 s each: long enough to kill the sweep between two of them.
SLOW = {"policy": ["edf", "fifo"], "seed": [0, 1, 2, 3], "fixed": {"horizon": 250_000.0}}


def sweep(*args: str | Path, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_MASTER"}
    return subprocess.run([str(CLI), "sweep", *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


def write_grid(path: Path, grid: dict | str) -> Path:
    path.write_text(grid if isinstance(grid, str) else yaml.safe_dump(grid, sort_keys=False), encoding="utf-8")
    return path


def summary_counts(stdout: str) -> tuple[int, int]:
    match = re.search(r"(\d+) computed, (\d+) from cache", stdout)
    assert match, stdout
    return int(match.group(1)), int(match.group(2))


def test_list_names_every_experiment_with_its_parameters() -> None:
    proc = sweep("--list")
    assert proc.returncode == 0, proc.stderr
    for exp in list_experiments():
        assert re.search(rf"^{re.escape(exp.name)}: ", proc.stdout, re.M)
        for p in exp.params:
            assert re.search(rf"^\s+{re.escape(p.name)}\s+{p.type.__name__}\s+default {re.escape(repr(p.default))}\s", proc.stdout, re.M)
            assert p.doc in proc.stdout


# --------------------------------------------------------------------------------------------
# bad input: exit 2, one line on stderr naming the key, nothing run, nothing written
# --------------------------------------------------------------------------------------------


@dataclass
class Bad:
    id: str
    grid: str | None  # grid file text; None: no --grid
    field: str  # must appear in the error line
    args: list[str] = field(default_factory=list)
    experiment: str | None = "baseline-utilization"


BAD = [
    Bad("unknown-key", "policy: [edf]\nbogus: [1, 2]\n", "grid.bogus"),
    Bad("unknown-fixed-key", "policy: [edf]\nfixed:\n  warp: 9\n", "grid.fixed.warp"),
    Bad("wrong-type", "n_tables: [4, 1.5]\n", "grid.n_tables"),
    Bad("bool-for-int", "seed: [true]\n", "grid.seed"),
    Bad("empty-values", "policy: []\n", "grid.policy"),
    Bad("fixed-not-mapping", "fixed: [1, 2]\n", "grid.fixed"),
    Bad("grid-and-fixed", "policy: [edf]\nfixed:\n  policy: fifo\n", "grid.policy"),
    Bad("rows-not-mappings", "- policy\n- seed\n", "rows[0]"),  # a list is explicit rows, each a mapping
    Bad("scalar-file", "42\n", "--grid"),
    Bad("empty-file", "", "--grid"),
    Bad("unparseable", "policy: [edf\nseed: 1\n", "--grid"),
    Bad("missing-file", None, "--grid", args=["--grid", "no-such-grid.yaml"]),
    Bad("unknown-experiment", None, "experiment", experiment="no-such-experiment"),
    Bad("missing-experiment", None, "experiment", experiment=None),
    Bad("master-with-local-runner", None, "--master", args=["--runner", "local", "--master", "local[2]"]),
    Bad("out-is-a-directory", None, "--out", args=["--out", "."]),
    Bad("unknown-policy-row", "policy: [edf, no-such-policy]\nfixed:\n  horizon: 500\n", "row 1 {policy: 'no-such-policy'",
        args=["--runner", "local"]),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in BAD])
def test_bad_input_is_one_line_and_exit_2(case: Bad, tmp_path: Path) -> None:
    args: list[str | Path] = [] if case.experiment is None else [case.experiment]
    if case.grid is not None:
        args += ["--grid", write_grid(tmp_path / "grid.yaml", case.grid)]
    if "--out" not in case.args:
        args += ["--out", tmp_path / "out" / "r.parquet"]
    args += ["--cache", tmp_path / "cache", *case.args]
    proc = sweep(*args, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr  # one line, so no traceback and no Spark start-up either
    assert lines[0].startswith("staleness-lab: error: ")
    assert case.field in lines[0]
    assert proc.stdout == ""
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------------------------
# the result file
# --------------------------------------------------------------------------------------------


def test_result_parquet_round_trips_with_provenance(tmp_path: Path) -> None:
    grid = write_grid(tmp_path / "grid.yaml", SMALL)
    out = tmp_path / "results" / "small.parquet"
    proc = sweep("baseline-utilization", "--grid", grid, "--runner", "local", "--out", out, "--cache", tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    assert summary_counts(proc.stdout) == (8, 0)
    assert f"wrote {out} " in proc.stdout
    expected = run_grid("baseline-utilization", SMALL, cache_dir=None, progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(out), expected, check_exact=True)
    assert sorted(p.name for p in out.parent.iterdir()) == ["small.parquet"]  # no temp file left

    meta = json.loads(pq.read_schema(out).metadata[PROVENANCE_KEY.encode()])
    assert meta["version"] == staleness_lab.__version__
    assert "git_commit" in meta and (meta["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", meta["git_commit"]))
    assert meta["experiment"] == "baseline-utilization"
    assert meta["grid"] == SMALL
    assert meta["seeds"] == [0, 2]
    assert meta["runner"] == "local" and meta["rows"] == 8


def test_default_out_is_data_results_named_after_the_experiment() -> None:
    from staleness_lab.paths import data_root
    from staleness_lab.sweeps.sweep import default_results_path

    assert default_results_path("baseline-utilization") == data_root() / "data" / "results" / "baseline-utilization.parquet"


# --------------------------------------------------------------------------------------------
# killed part way, then resumed
# --------------------------------------------------------------------------------------------


def test_a_killed_sweep_resumes_with_only_the_missing_rows(tmp_path: Path) -> None:
    grid = write_grid(tmp_path / "grid.yaml", SLOW)
    out = tmp_path / "results" / "slow.parquet"
    cache = tmp_path / "cache"
    rows_dir = cache / "baseline-utilization"
    args = ["baseline-utilization", "--grid", grid, "--runner", "local", "--out", out, "--cache", cache]
    proc = subprocess.Popen([str(CLI), "sweep", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(rows_dir.glob("*.parquet"))) >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()
    kept = len(list(rows_dir.glob("*.parquet")))
    assert 2 <= kept < 8
    # No result file that looks complete (at most a hidden temporary name).
    assert not out.exists()
    leftovers = [p.name for p in out.parent.iterdir() if not p.name.startswith(".")] if out.parent.exists() else []
    assert leftovers == []

    resumed = sweep(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert summary_counts(resumed.stdout) == (8 - kept, kept)
    assert len(list(rows_dir.glob("*.parquet"))) == 8

    whole_out = tmp_path / "whole.parquet"
    whole = sweep("baseline-utilization", "--grid", grid, "--runner", "local", "--out", whole_out,
                  "--cache", tmp_path / "other-cache", "--no-cache")
    assert whole.returncode == 0, whole.stderr
    assert summary_counts(whole.stdout) == (8, 0)
    pd.testing.assert_frame_equal(pd.read_parquet(out), pd.read_parquet(whole_out), check_exact=True)
