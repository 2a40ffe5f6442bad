"""The session factory: one shared session, configured for the embedded default."""

from __future__ import annotations

import os
import sys

import pytest

from staleness_lab.spark import active_spark, get_spark
from staleness_lab.spark.session import driver_memory_for, machine_memory_bytes, resolve_master, shuffle_partitions_for


def test_master_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    assert resolve_master() == "local[*]"
    monkeypatch.setenv("SPARK_MASTER", "spark://10.0.0.1:7077")
    assert resolve_master() == "spark://10.0.0.1:7077"
    assert resolve_master("local[3]") == "local[3]"


@pytest.mark.parametrize(("master", "expected"), [("local[2]", 2), ("local[8]", 8), ("local[*]", 4), ("local", 4), ("spark://h:7077", 4), ("local[3,2]", 3)])
def test_few_shuffle_partitions(master: str, expected: int) -> None:
    assert shuffle_partitions_for(master) == expected


@pytest.mark.parametrize(("total_gib", "expected"), [(24, "6144m"), (2, "1024m"), (0.5, "1024m"), (256, "16384m"), (6.5, "1664m")])
def test_driver_memory_is_a_quarter_of_the_machine_within_bounds(total_gib: float, expected: str) -> None:
    assert driver_memory_for(int(total_gib * 2**30)) == expected


def test_one_session_configured_and_reused(spark) -> None:
    assert get_spark() is spark
    assert get_spark("local[2]") is spark
    assert active_spark() is spark
    conf = spark.sparkContext.getConf()
    assert spark.sparkContext.master == "local[2]"
    assert conf.get("spark.ui.enabled") == "false"
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert os.environ["PYSPARK_DRIVER_PYTHON"] == sys.executable
    # The driver JVM really got the heap asked for (it has to be set before the JVM starts).
    wanted = int(driver_memory_for(machine_memory_bytes())[:-1]) * 2**20
    assert conf.get("spark.driver.memory") == driver_memory_for(machine_memory_bytes())
    assert spark._jvm.java.lang.Runtime.getRuntime().maxMemory() > 0.8 * wanted
    # The executors run this interpreter (the one with pandas and the package), not python3.
    seen = spark.sparkContext.parallelize([0, 1], 2).map(lambda _: __import__("sys").executable).collect()
    assert seen == [sys.executable, sys.executable]


def test_a_different_master_replaces_the_session(spark) -> None:
    """Kept last in this module: it replaces the shared session, then restores local[2]."""
    try:
        other = get_spark("local[1]")
        assert other is not spark
        assert other.sparkContext.master == "local[1]"
        assert spark.sparkContext._jsc is None  # the old one was stopped
        assert get_spark() is other
    finally:
        restored = get_spark("local[2]")
    assert restored.sparkContext.master == "local[2]"
    assert restored.conf.get("spark.sql.shuffle.partitions") == "2"
