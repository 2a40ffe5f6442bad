"""Shared fixtures. ``chromium``: the headless browser the page tests drive. ``spark``: ONE Spark
session per test process.

Starting a session costs 5-10 s, so every Spark test (they live under ``tests/spark/``) shares
the session-scoped ``spark`` fixture: ``get_spark("local[2]")`` (UI off, 2 shuffle partitions),
stopped at the end of the run. ``make test`` runs two pytest-xdist workers, each a process with
its own session. Code under test that calls ``get_spark()`` gets the same one.
Without Java the Spark tests are skipped.

Work units for pytest-xdist (``make test`` runs ``--dist loadgroup --no-loadscope-reorder``): a
file's tests form one unit, so a module fixture is built once, except a test marked
``heavy(seconds)``, which is a unit of its own. Heavy units are handed out first, longest first,
then the files in collection order: the long notebook runs start on both workers at once instead
of queueing on one worker behind the rest of their file while the other worker idles at the end.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import re

import pytest

from staleness_lab.spark import java_available

SPARK_TEST_MASTER = "local[2]"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "heavy(seconds): a long test run as a pytest-xdist work unit of its own, "
                                       "started before the others (seconds: its time on a quiet 2-core machine)")


def _heavy_seconds(item: pytest.Item) -> float | None:
    mark = item.get_closest_marker("heavy")
    return None if mark is None else float(mark.args[0])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the items into work units and put the heavy units first (module docstring)."""
    for item in items:
        heavy = _heavy_seconds(item) is not None
        unit = re.sub(r"[^\w.-]", "_", item.nodeid if heavy else item.nodeid.split("::")[0])
        item.add_marker(pytest.mark.xdist_group(unit))
    items.sort(key=lambda item: -(_heavy_seconds(item) or 0.0))


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
