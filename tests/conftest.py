"""Shared fixtures. ``chromium``: the headless browser the page tests drive. ``spark``: ONE Spark
session per test process.

Starting a session costs 5-10 s, so every Spark test (they live under ``tests/spark/``) shares
the session-scoped ``spark`` fixture: ``get_spark("local[2]")`` (UI off, 2 shuffle partitions),
stopped at the end of the run. ``make test`` runs two pytest-xdist workers, each a process with
its own session. Code under test that calls ``get_spark()`` gets the same one.
Without Java the Spark tests are skipped.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from staleness_lab.spark import java_available

SPARK_TEST_MASTER = "local[2]"


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
