"""The same sweep through ``staleness-lab sweep --master spark://...`` on a real standalone
Spark cluster (one master, one worker on the loopback interface: ``conftest.standalone_cluster``).
The sweep runs in a CLI subprocess; its Parquet must equal the local runner's DataFrame exactly.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from staleness_lab.experiments import get_experiment
from staleness_lab.provenance import read_provenance
from staleness_lab.spark import java_available
from staleness_lab.sweeps.runner import run_grid
from spark_cluster import CLI, cluster_env

GRID = {"policy": ["edf", "fifo"], "utilization": [0.7, 1.2], "fixed": {"horizon": 2000.0, "n_tables": 8}}

pytestmark = pytest.mark.skipif(not java_available(), reason="Spark needs Java")


def test_cli_sweep_on_a_standalone_cluster_equals_the_local_runner(standalone_cluster: str, tmp_path: Path) -> None:
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(yaml.safe_dump(GRID), encoding="utf-8")
    out = tmp_path / "results.parquet"
    proc = subprocess.run(
        [str(CLI), "sweep", "baseline-utilization", "--grid", str(grid_file), "--master", standalone_cluster,
         "--out", str(out), "--cache", str(tmp_path / "cache")],
        capture_output=True, text=True, env=cluster_env(), cwd=tmp_path, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"master {standalone_cluster}" in proc.stdout
    assert "4 computed, 0 from cache" in proc.stdout
    local = run_grid(get_experiment("baseline-utilization"), GRID, runner="local", cache_dir=None, progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(out), local, check_exact=True)
    meta = read_provenance(out)
    assert meta is not None and meta["master"] == standalone_cluster and meta["runner"] == "spark"
    assert meta["pyspark"]
    # The executor on the worker wrote the per-row cache files (same filesystem here).
    assert len(list((tmp_path / "cache" / "baseline-utilization").glob("*.parquet"))) == 4
