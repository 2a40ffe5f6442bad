"""The same sweep through ``staleness-lab sweep --master spark://...`` on a real standalone
Spark cluster (one master, one worker) started by the test on the loopback interface.

SPARK_HOME is the pyspark package directory; the master and the worker run ``bin/spark-class``
(through bash, so lost mode bits in a wheel do not matter) in their own process groups, and are
stopped by process group in a ``finally``. The sweep runs in a CLI subprocess; its Parquet must
equal the local runner's DataFrame exactly.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from staleness_lab.experiments.runner import run_grid
from staleness_lab.provenance import read_provenance
from staleness_lab.spark import java_available

CLI = Path(sys.executable).parent / "staleness-lab"
GRID = {"policy": ["edf", "fifo"], "utilization": [0.7, 1.2], "fixed": {"horizon": 2000.0, "n_tables": 8}}
START_TIMEOUT = 90.0

pytestmark = pytest.mark.skipif(not java_available(), reason="Spark needs Java")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"SPARK_MASTER", "SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS"}}
    env.update(SPARK_HOME=str(_spark_home()), PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    return env


def _start(args: list[str], log: Path) -> subprocess.Popen:
    spark_class = _spark_home() / "bin" / "spark-class"
    with log.open("wb") as out:
        return subprocess.Popen(["bash", str(spark_class), *args], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=_env(), start_new_session=True)


def _wait_for(log: Path, text: str, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    pytest.fail(f"{what} did not start (exit {proc.poll()}):\n{log.read_text(errors='replace')[-4000:]}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)  # the group: bash and the JVM it started
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture
def standalone_cluster(tmp_path: Path) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a master with one registered worker (1 core, 1 GB)."""
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
    procs: list[subprocess.Popen] = []
    try:
        master = _start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                         "--webui-port", str(_free_port())], master_log)
        procs.append(master)
        _wait_for(master_log, "I have been elected leader", master, "the master")
        worker = _start(["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                         "--webui-port", str(_free_port()), "--cores", "1", "--memory", "1g",
                         "--work-dir", str(tmp_path / "work")], worker_log)
        procs.append(worker)
        _wait_for(master_log, "Registering worker 127.0.0.1", worker, "the worker")
        yield url
    finally:
        for proc in reversed(procs):
            _stop(proc)


def test_cli_sweep_on_a_standalone_cluster_equals_the_local_runner(standalone_cluster: str, tmp_path: Path) -> None:
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(yaml.safe_dump(GRID), encoding="utf-8")
    out = tmp_path / "results.parquet"
    proc = subprocess.run(
        [str(CLI), "sweep", "baseline-utilization", "--grid", str(grid_file), "--master", standalone_cluster,
         "--out", str(out), "--cache", str(tmp_path / "cache")],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"master {standalone_cluster}" in proc.stdout
    assert "4 computed, 0 from cache" in proc.stdout
    local = run_grid("baseline-utilization", GRID, runner="local", cache_dir=None, progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(out), local, check_exact=True)
    meta = read_provenance(out)
    assert meta is not None and meta["master"] == standalone_cluster and meta["runner"] == "spark"
    assert meta["pyspark"]
    # The executor on the worker wrote the per-row cache files (same filesystem here).
    assert len(list((tmp_path / "cache" / "baseline-utilization").glob("*.parquet"))) == 4
