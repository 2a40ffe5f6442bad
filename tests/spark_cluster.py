"""The loopback standalone cluster shared by the cluster tests: one master and one worker
(1 core, 1 GB), started once per test session on 127.0.0.1 and stopped by process group.

SPARK_HOME is the pyspark package directory; the master and the worker run ``bin/spark-class``
(through bash, so lost mode bits in a wheel do not matter) in their own process groups, stopped
in a ``finally``. Tests drive it through CLI subprocesses with :func:`cluster_env`, so the shared
``local[2]`` session of the other Spark tests is never replaced.
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

import pytest

from staleness_lab.spark import java_available

CLI = Path(sys.executable).parent / "staleness-lab"
START_TIMEOUT = 90.0

def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def cluster_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"SPARK_MASTER", "SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS"}}
    env.update(SPARK_HOME=str(_spark_home()), PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    return env


def _start(args: list[str], log: Path) -> subprocess.Popen:
    spark_class = _spark_home() / "bin" / "spark-class"
    with log.open("wb") as out:
        return subprocess.Popen(["bash", str(spark_class), *args], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=cluster_env(), start_new_session=True)


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


@pytest.fixture(scope="session")
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a master with one registered worker (1 core, 1 GB)."""
    if not java_available():
        pytest.skip("Spark needs Java")
    tmp_path = tmp_path_factory.mktemp("cluster")
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
