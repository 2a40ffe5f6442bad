"""The grid runner with the local runner: tidy shape, cache (resumable), failing rows, provenance.

The Spark runner is tested against this one in ``tests/spark/``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import staleness_lab
from staleness_lab.errors import InputError
from staleness_lab.experiments import get_experiment
from staleness_lab.provenance import PROVENANCE_KEY, git_commit, provenance, read_provenance, write_parquet_atomic
from staleness_lab.sweeps.cache import cache_key, cache_path, code_identity, read_cached
from staleness_lab.sweeps.registry import Experiment, Param
from staleness_lab.sweeps.runner import SweepError, format_params, run_grid, run_sweep


class Counting:
    """A cheap experiment that counts its calls and can be told to fail."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, a: int, b: float, label: str) -> pd.DataFrame:
        self.calls.append({"a": a, "b": b, "label": label})
        if label == "boom":
            raise ZeroDivisionError("division by zero in the model")
        if label == "bad-input":
            raise InputError("label", "is not a label this experiment knows")
        return pd.DataFrame({"obs": [a * b, a + b], "kind": ["product", "sum"], "flag": [a > 1, False]})


def make(name: str = "counting") -> tuple[Experiment, Counting]:
    func = Counting()
    exp = Experiment(
        name=name,
        run=func,
        params=(Param("a", int, 1, "an int"), Param("b", float, 0.5, "a float"), Param("label", str, "x", "a label")),
        doc="Counts its calls.",
    )
    return exp, func


GRID = {"a": [1, 2, 3], "b": [0.5, 2]}


def test_tidy_frame_params_first_then_row_then_observations() -> None:
    exp, _ = make()
    frame = run_grid(exp, GRID, cache_dir=None, progress=False)
    assert list(frame.columns) == ["a", "b", "label", "row", "obs", "kind", "flag"]
    assert isinstance(frame.index, pd.RangeIndex) and list(frame.index) == list(range(12))
    # two observations per row, rows in grid order (last key fastest)
    assert frame["row"].tolist() == [r for r in range(6) for _ in range(2)]
    assert frame[["a", "b"]].drop_duplicates().values.tolist() == [[1, 0.5], [1, 2.0], [2, 0.5], [2, 2.0], [3, 0.5], [3, 2.0]]
    assert frame["b"].dtype == "float64" and frame["a"].dtype == "int64" and frame["row"].dtype == "int64"
    assert (frame["label"] == "x").all()


def test_explicit_rows_are_completed_and_validated() -> None:
    exp, func = make()
    frame = run_grid(exp, [{"a": 5}, {"b": 1, "label": "y"}], cache_dir=None, progress=False)
    assert frame.drop_duplicates("row")[["a", "b", "label"]].values.tolist() == [[5, 0.5, "x"], [1, 1.0, "y"]]
    assert len(func.calls) == 2
    with pytest.raises(InputError, match=r"^rows\[1\]\.bogus: "):
        run_grid(exp, [{"a": 5}, {"bogus": 1}], cache_dir=None, progress=False)
    with pytest.raises(InputError, match=r"^rows\[0\]\.a: must be of type int"):
        run_grid(exp, [{"a": "5"}], cache_dir=None, progress=False)
    assert len(func.calls) == 2  # validation happens before any work


def test_repeated_rows_are_computed_once() -> None:
    exp, func = make()
    frame = run_grid(exp, [{"a": 2}, {"a": 3}, {"a": 2}], cache_dir=None, progress=False)
    assert len(func.calls) == 2
    assert frame["row"].tolist() == [0, 0, 1, 1, 2, 2]
    assert frame.loc[frame["row"] == 2, "obs"].tolist() == frame.loc[frame["row"] == 0, "obs"].tolist()


def test_bad_runner_options_fail_early() -> None:
    exp, func = make()
    with pytest.raises(InputError, match="^runner: "):
        run_grid(exp, GRID, runner="dask", cache_dir=None)
    with pytest.raises(InputError, match="^master: applies only"):
        run_grid(exp, GRID, runner="local", master="local[2]", cache_dir=None)
    with pytest.raises(InputError, match="^experiment: unknown experiment 'nope'"):
        run_grid("nope")
    assert not func.calls


def test_cache_one_file_per_row_reused_and_refreshed(tmp_path: Path) -> None:
    exp, func = make()
    first = run_sweep(exp, GRID, cache_dir=tmp_path, progress=False)
    assert (first.computed, first.from_cache) == (6, 0)
    files = sorted((tmp_path / "counting").glob("*.parquet"))
    assert len(files) == 6 and all(re.fullmatch(r"[0-9a-f]{64}\.parquet", f.name) for f in files)
    assert not [p for p in (tmp_path / "counting").iterdir() if p.suffix != ".parquet"]  # no temp files left

    again = run_sweep(exp, GRID, cache_dir=tmp_path, progress=False)
    assert (again.computed, again.from_cache) == (0, 6) and len(func.calls) == 6
    pd.testing.assert_frame_equal(again.frame, first.frame, check_exact=True)

    before = {f: f.stat().st_mtime_ns for f in files}
    fresh = run_sweep(exp, GRID, cache_dir=tmp_path, use_cache=False, progress=False)
    assert (fresh.computed, fresh.from_cache) == (6, 0) and len(func.calls) == 12
    assert all(f.stat().st_mtime_ns >= before[f] for f in files)
    assert sorted((tmp_path / "counting").glob("*.parquet")) == files
    pd.testing.assert_frame_equal(fresh.frame, first.frame, check_exact=True)

    # A cache entry holds that row's observations and its provenance.
    row = {"a": 1, "b": 0.5, "label": "x"}
    path = cache_path(tmp_path, "counting", cache_key("counting", row, code_identity()))
    assert path.exists()
    assert list(read_cached(path).columns) == ["obs", "kind", "flag"]
    meta = read_provenance(path)
    assert meta["params"] == row and meta["experiment"] == "counting" and meta["version"] == staleness_lab.__version__


def test_a_partial_cache_resumes_with_only_the_missing_rows(tmp_path: Path) -> None:
    exp, func = make()
    whole = run_grid(exp, GRID, cache_dir=None, progress=False)
    run_grid(exp, GRID, cache_dir=tmp_path, progress=False)
    files = sorted((tmp_path / "counting").glob("*.parquet"))
    for f in files[::2]:
        f.unlink()
    (tmp_path / "counting" / files[1].name).write_bytes(b"not parquet")  # a damaged entry is a miss
    calls = len(func.calls)
    resumed = run_sweep(exp, GRID, cache_dir=tmp_path, progress=False)
    assert (resumed.computed, resumed.from_cache) == (4, 2)
    assert len(func.calls) == calls + 4
    pd.testing.assert_frame_equal(resumed.frame, whole, check_exact=True)


def test_no_cache_dir_means_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exp, _ = make()
    run_grid(exp, GRID, cache_dir=None, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_cache_key_is_canonical_and_covers_experiment_params_and_version() -> None:
    row = {"a": 1, "b": 0.5, "label": "x"}
    key = cache_key("e", row, "1.0")
    assert key == cache_key("e", dict(reversed(list(row.items()))), "1.0")
    assert len({key, cache_key("f", row, "1.0"), cache_key("e", {**row, "a": 2}, "1.0"), cache_key("e", row, "1.1")}) == 4
    assert cache_path(Path("/c"), "e", key) == Path("/c/e") / f"{key}.parquet"


@pytest.mark.parametrize(("label", "is_input"), [("boom", False), ("bad-input", True)])
def test_a_failing_row_names_its_parameters(tmp_path: Path, label: str, is_input: bool) -> None:
    exp, func = make()
    rows = [{"a": 1}, {"a": 2}, {"a": 3, "label": label}, {"a": 4}]
    with pytest.raises(SweepError) as info:
        run_grid(exp, rows, cache_dir=tmp_path, progress=False)
    err = info.value
    expected = "division by zero in the model" if label == "boom" else "label: is not a label this experiment knows"
    assert str(err) == f"row 2 {{a: 3, b: 0.5, label: {label!r}}}: {expected}"
    assert isinstance(err, RuntimeError) and isinstance(err, InputError) == is_input
    assert err.index == 2 and err.params == {"a": 3, "b": 0.5, "label": label}
    assert isinstance(err.__cause__, ZeroDivisionError if label == "boom" else InputError)
    if is_input:
        assert err.field == "label"
    assert len(func.calls) == 3  # the local runner stops at the failing row
    assert len(list((tmp_path / "counting").glob("*.parquet"))) == 2  # the rows before it are cached


def test_a_row_failing_in_sparks_jvm_reports_the_java_exception_first(spark: object) -> None:
    def load(name: str) -> pd.DataFrame:
        spark._jvm.java.lang.Class.forName(name)  # type: ignore[attr-defined]  # raises in the JVM
        return pd.DataFrame({"x": [1]})

    exp = Experiment("jvm", load, (Param("name", str, "java.lang.String", "a class"),), "")
    with pytest.raises(SweepError) as info:
        run_grid(exp, [{"name": "no.such.Class"}], cache_dir=None, progress=False)
    assert str(info.value) == ("row 0 {name: 'no.such.Class'}: java.lang.ClassNotFoundException: no.such.Class "
                               "(An error occurred while calling z:java.lang.Class.forName)")


def test_experiment_output_that_is_not_a_frame_or_clashes_names_the_row() -> None:
    bad_type = Experiment("bad-type", lambda a: [a], (Param("a", int, 1),), "")
    with pytest.raises(SweepError, match=r"^row 0 \{a: 1\}: experiment 'bad-type' returned list, not a pandas DataFrame"):
        run_grid(bad_type, cache_dir=None, progress=False)
    clash = Experiment("clash", lambda a: pd.DataFrame({"a": [a], "row": [0]}), (Param("a", int, 1),), "")
    with pytest.raises(SweepError, match=r"^row 0 \{a: 1\}: .*column\(s\) a, row that clash"):
        run_grid(clash, cache_dir=None, progress=False)


def test_format_params() -> None:
    assert format_params({"policy": "x", "u": 0.5, "n": 3, "ok": True}) == "{policy: 'x', u: 0.5, n: 3, ok: True}"


def test_sweep_provenance_names_the_grid_and_seeds() -> None:
    result = run_sweep(get_experiment("baseline-utilization"), {"seed": [3, 1], "fixed": {"horizon": 500.0}},
                       cache_dir=None, progress=False)
    extra = result.provenance_extra()
    assert extra["experiment"] == "baseline-utilization" and extra["seeds"] == [1, 3] and extra["rows"] == 2
    assert extra["grid"] == {"seed": [3, 1], "fixed": {"horizon": 500.0}}


def test_provenance_has_version_commit_and_environment() -> None:
    meta = provenance({"experiment": "e", "version": "overridden"})
    assert meta["package"] == "staleness-lab" and meta["experiment"] == "e" and meta["version"] == "overridden"
    assert meta["python"] and meta["numpy"] and meta["created_utc"].endswith("+00:00")
    assert "pyspark" in meta
    commit = meta["git_commit"]
    assert commit is None or re.fullmatch(r"[0-9a-f]{40}", commit)
    json.dumps(meta)


def test_git_commit_never_fails_without_git(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_git(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("git")

    git_commit.cache_clear()
    monkeypatch.setattr(subprocess, "run", no_git)
    try:
        assert git_commit() is None
    finally:
        monkeypatch.undo()
        git_commit.cache_clear()


def test_git_commit_matches_the_checkout() -> None:
    root = Path(staleness_lab.__file__).resolve().parents[1]
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip("not running from a git checkout")
    assert git_commit() == proc.stdout.strip()


def test_atomic_parquet_write_carries_metadata_and_leaves_nothing_on_failure(tmp_path: Path) -> None:
    frame = pd.DataFrame({"x": [1, 2], "y": ["a", "b"]})
    path = write_parquet_atomic(frame, tmp_path / "f.parquet", {PROVENANCE_KEY: json.dumps({"k": 1})})
    assert os.listdir(tmp_path) == ["f.parquet"]
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame)
    assert read_provenance(path) == {"k": 1}
    assert pq.read_schema(path).metadata[b"pandas"]  # pandas' own metadata is kept
    with pytest.raises(Exception):
        write_parquet_atomic(pd.DataFrame({"x": [object()]}), tmp_path / "g.parquet", {})
    assert os.listdir(tmp_path) == ["f.parquet"]
