"""Shared fixtures. ``chromium``: the headless browser the page tests drive. ``spark``: ONE Spark
session per test process.

Starting a session costs 5-10 s, so every Spark test (they live under ``tests/spark/``) shares
the session-scoped ``spark`` fixture: ``get_spark("local[2]")`` (UI off, 2 shuffle partitions),
stopped at the end of the run. ``make test`` runs two pytest-xdist workers, each a process with
its own session. Code under test that calls ``get_spark()`` gets the same one.
Without Java the Spark tests are skipped.

The JVMs the tests start (each worker's session, the notebooks' kernels' sessions, the command
line's in subprocesses) compile with C1 alone (``SPARK_SUBMIT_OPTS``, which spark-submit gives the
driver JVM it launches; set here, before any starts, and inherited by every child process). They
live seconds to minutes on small data, where C2's compilations cost more CPU than they save: one
hour of the reduced FeedbackPrioritization on Spark took 24 s of CPU (15.6 s wall) with the
default JIT and 13.5 s (12.6 s wall) with C1 alone, six hours 54 s against 38 s. The reports and
``benchmarks/`` keep the default.

Work units for pytest-xdist (``make test`` runs ``--dist loadfile --no-loadscope-reorder``): a
file's tests stay on one worker, so a module fixture is built once. Files holding a test marked
``heavy(seconds)`` are handed out first, the heaviest first, then the others in collection order:
the long notebook runs (one file for the Spark notebook's, one for the rest) start on both
workers at once instead of one worker running them at the end while the other idles.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from staleness_lab.spark import java_available

SPARK_TEST_MASTER = "local[2]"
#: The test JVMs' JIT: C1 alone (module docstring).
TEST_JVM_OPTION = "-XX:TieredStopAtLevel=1"
if TEST_JVM_OPTION not in os.environ.get("SPARK_SUBMIT_OPTS", ""):
    os.environ["SPARK_SUBMIT_OPTS"] = f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} {TEST_JVM_OPTION}".strip()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "heavy(seconds): a long test; its file is handed to a pytest-xdist worker "
                                       "before the others (seconds: its time on a quiet 2-core machine)")


def _heavy_seconds(item: pytest.Item) -> float:
    mark = item.get_closest_marker("heavy")
    return 0.0 if mark is None else float(mark.args[0])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with heavy tests first, the heaviest first; the rest keep their order (module docstring)."""
    weight: dict[str, float] = {}
    for item in items:
        file = item.nodeid.split("::")[0]
        weight[file] = max(weight.get(file, 0.0), _heavy_seconds(item))
    items.sort(key=lambda item: -weight[item.nodeid.split("::")[0]])


@pytest.fixture(scope="session")
def chromium() -> str:
    """The ``chromium`` on PATH, installed by ``scripts/ensure-chromium.sh`` when missing (the
    tests skip when it cannot be); never a browser download."""
    found = shutil.which("chromium")
    if found is None:
        script = Path(__file__).resolve().parents[1] / "scripts" / "ensure-chromium.sh"
        proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=900)
        found = shutil.which("chromium")
        if found is None:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            pytest.skip(f"chromium is not installed and could not be installed: {lines[0] if lines else 'no output'}")
    return found


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    if not java_available():
        pytest.skip("Spark needs Java (no java on PATH and no JAVA_HOME)")
    from staleness_lab.spark import get_spark, stop_spark

    session = get_spark(SPARK_TEST_MASTER)
    try:
        yield session
    finally:
        stop_spark()
