"""The sources an experiment's cached rows depend on (:mod:`staleness_lab.sweeps.code_scope`):
every package function a row calls lies in its experiment's scope (rows run under a profiler),
and edits to another paper's code keep a sweep's rows."""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from staleness_lab import paths
from staleness_lab.experiments import get_experiment
from staleness_lab.intermittent import tpch
from staleness_lab.sweeps.cache import code_identity
from staleness_lab.sweeps.code_scope import ROOT, module_file, scope


def called_package_files(run: Callable[[], Any]) -> set[Path]:
    """The package source files whose functions ``run`` calls (module and class bodies run by
    an import during the call are not counted: what they define is reached through functions)."""
    seen: set[str] = set()

    def profile(frame: Any, event: str, _: Any) -> None:
        if event == "call" and frame.f_code.co_flags & inspect.CO_OPTIMIZED:  # a function's frame
            seen.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    files = {Path(f).resolve() for f in seen if f.endswith(".py")}
    return {f for f in files if ROOT in f.parents}


ROWS = [  # one cheap row of each paper's experiments, through every path a registry opens
    ("golab-fig7", dict(policy="max-benefit-lookahead", horizon=3000.0)),
    ("golab-fig8", dict(inheritance="sum", horizon=3000.0)),
    ("golab-fig11", dict(variant="chopping", horizon=3000.0)),
    ("baseline-utilization", dict(policy="proportional", horizon=2000.0)),
    ("leontyev-bounds", dict(tables=4)),
    ("bateni-x1", dict(n=4)),
    ("bateni-x3", dict(steps=5, time_limit=1.0)),
    ("intermittent-optimum", dict(n_queries=2, N=6, deterministic_time=0.5)),
    ("intermittent-multi", dict()),
    ("olston-run", dict(workflow="feedback-prioritization", hours=3.0)),
    ("olston-cascade", dict(k=2, hours=3.0)),
]


@pytest.mark.parametrize(("name", "params"), ROWS, ids=[name for name, _ in ROWS])
def test_every_function_a_row_calls_is_in_its_experiments_scope(name: str, params: dict) -> None:
    exp = get_experiment(name)
    row = exp.complete(params)
    called = called_package_files(lambda: exp.run(**row))
    assert called, "the profiler saw no package function"
    missing = sorted(str(p.relative_to(ROOT)) for p in called - scope(exp.run.__module__))
    assert missing == []


def test_a_spark_rows_calls_are_in_its_scope(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tpch.generate(0.01, 4, tmp_path / "data" / "tpch" / "sf0.01-p4")
    monkeypatch.setattr(paths, "data_root", lambda: tmp_path)
    exp = get_experiment("intermittent-spark-costs")
    row = exp.complete(dict(query="CQ2", scale=0.01, parts=4, warmups=0, repeats=1))
    called = called_package_files(lambda: exp.run(**row))
    assert module_file("staleness_lab.spark.intermittent.calibrate") in called
    assert sorted(str(p.relative_to(ROOT)) for p in called - scope(exp.run.__module__)) == []


def test_a_hybrid_rows_calls_are_in_its_scope(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Algorithm 1's plan executed on Spark after the warm-up: every call in the hybrid scope,
    and the scratch run directory (warm-up outputs included) removed afterwards."""
    tpch.generate(0.01, 4, tmp_path / "data" / "tpch" / "sf0.01-p4")
    monkeypatch.setattr(paths, "data_root", lambda: tmp_path)
    fits = tmp_path / "fits"
    fits.mkdir()
    (fits / "CQ2.json").write_text(json.dumps({"cost": {"kind": "linear", "S": 0.3, "R": 0.01},
                                               "agg_cost": {"kind": "linear", "a0": 0.2, "a1": 0.01}}), encoding="utf-8")
    exp = get_experiment("intermittent-spark-fig6")
    row = exp.complete(dict(query="CQ2", f=1.0, scale=0.01, parts=4, costmodels=str(fits), fits="test"))
    frames: list[Any] = []
    called = called_package_files(lambda: frames.append(exp.run(**row)))
    assert module_file("staleness_lab.spark.intermittent.steps") in called
    assert sorted(str(p.relative_to(ROOT)) for p in called - scope(exp.run.__module__)) == []
    assert frames[0]["status"].tolist() == ["ok"] and frames[0]["wrong_results"].tolist() == [""]
    assert list((tmp_path / "data" / "runs").iterdir()) == []


def relative(paths: frozenset[Path]) -> set[str]:
    return {p.relative_to(ROOT).as_posix() for p in paths}


def test_the_spark_experiments_do_not_depend_on_the_simulator_or_other_papers() -> None:
    spark_rows = relative(scope("staleness_lab.experiments.intermittent.spark"))
    assert {"spark/intermittent/calibrate.py", "spark/intermittent/streaming.py", "intermittent/tpch.py"} <= spark_rows
    assert not {p for p in spark_rows if p.startswith(("sim/", "policies/", "workflows/", "theory/"))}
    assert "experiments/golab/sweeps.py" not in spark_rows
    assert {"experiments/__init__.py", "experiments/intermittent/__init__.py"} <= spark_rows


def test_the_hybrid_rows_scope_holds_the_planning_and_the_measurements_do_not() -> None:
    """Editing part 1's schemes or the hybrid scaling must not discard hours of measured rows."""
    spark_rows = relative(scope("staleness_lab.experiments.intermittent.spark"))
    hybrid = relative(scope("staleness_lab.experiments.intermittent.hybrid"))
    planning = {"experiments/intermittent/hybrid.py", "intermittent/single.py", "intermittent/dispatch.py",
                "optimize/batch_plan.py", "spark/intermittent/runner.py"}
    assert planning <= hybrid and not planning & spark_rows
    assert spark_rows <= hybrid  # the hybrid rows run on the same data and catalogue


def test_a_policy_chosen_by_name_is_in_scope_through_the_registry() -> None:
    golab = relative(scope("staleness_lab.experiments.golab.sweeps"))
    assert {"policies/lookahead.py", "policies/proportional.py", "sim/placement.py", "sim/compiled_kernel.py"} <= golab
    assert not {p for p in golab if p.startswith("workflows/")}


def test_code_identity_is_scoped_for_package_experiments_and_whole_otherwise() -> None:
    spark_key = code_identity("staleness_lab.experiments.intermittent.spark")
    assert spark_key != code_identity() != code_identity("staleness_lab.experiments.golab.sweeps")
    assert code_identity("tests.experiments.test_runner") == code_identity()  # outside the package
    assert spark_key == code_identity("staleness_lab.experiments.intermittent.spark")
