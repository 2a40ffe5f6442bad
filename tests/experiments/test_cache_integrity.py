"""The sweep cache never serves a damaged or misplaced entry, and files follow the user's umask.

Real cache files of a real experiment (``baseline-utilization``, a few short rows) written by the
local runner (one case on the shared Spark session, whose executors write the files): an entry
whose data were altered, that is truncated, that is another row's file or that has no checksum
is recomputed and reported once on stderr; an intact entry is served as is. Result files, cache
files and built directories get the modes the umask gives new ones.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from staleness_lab.experiments import get_experiment
from staleness_lab.provenance import PROVENANCE_KEY, building_directory, current_umask, write_parquet_atomic
from staleness_lab.sweeps.cache import (
    CHECKSUM_KEY,
    CorruptCacheEntry,
    cache_key,
    cache_path,
    code_identity,
    content_checksum,
    read_cached,
    write_cached,
)
from staleness_lab.sweeps.registry import expand_grid
from staleness_lab.sweeps.runner import SweepResult, run_sweep
from staleness_lab.sweeps.sweep import sweep_command

EXPERIMENT = "baseline-utilization"
GRID = {"policy": ["edf", "fifo"], "seed": [0, 1], "fixed": {"horizon": 500.0}}
ROWS = 4
#: An observation whose value is stored verbatim in the cache file's data pages.
COLUMN = "mean_staleness"
MESSAGE = "recomputed: corrupt cache entry"


def sweep(cache_dir: Path | None, **options: Any) -> SweepResult:
    """The test grid's sweep, with ``cache_dir`` (None: no cache)."""
    return run_sweep(EXPERIMENT, GRID, cache_dir=cache_dir, progress=False, **options)


def row_file(cache_dir: Path, row: int) -> Path:
    """The cache file of grid row ``row``."""
    exp = get_experiment(EXPERIMENT)
    params = expand_grid(exp, GRID)[row]
    return cache_path(cache_dir, EXPERIMENT, cache_key(EXPERIMENT, params, code_identity(exp.run.__module__)))


def observations(frame: pd.DataFrame, row: int) -> pd.DataFrame:
    """Row ``row``'s observations in a sweep's frame, as its cache entry holds them."""
    columns = frame.columns[frame.columns.get_loc("row") + 1 :]
    return frame.loc[frame["row"] == row, columns].reset_index(drop=True)


@pytest.fixture(scope="module")
def fresh() -> pd.DataFrame:
    """The sweep's frame computed without any cache."""
    return sweep(None).frame


@pytest.fixture
def cached(tmp_path: Path, fresh: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> Path:
    """A cache directory filled by one sweep (stderr of that sweep discarded)."""
    first = sweep(tmp_path)
    assert (first.computed, first.from_cache) == (ROWS, 0)
    pd.testing.assert_frame_equal(first.frame, fresh, check_exact=True)
    capsys.readouterr()
    return tmp_path


# -- ways to damage an entry -----------------------------------------------------------------


def alter_a_value(path: Path, cache_dir: Path) -> None:
    """Flip the lowest byte of a stored observation where its data page holds it: the file still
    parses, with a slightly different number in it (the silent case the checksum exists for)."""
    value = pq.read_table(path).column(COLUMN)[0].as_py()
    data = bytearray(path.read_bytes())
    at = bytes(data).index(struct.pack("<d", value))
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    assert pq.read_table(path).column(COLUMN)[0].as_py() != value  # it would be served wrong


def flip_the_middle_of_the_data(path: Path, cache_dir: Path) -> None:
    """Invert 16 bytes in the middle of the column chunks (between the magic and the footer)."""
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    middle = (4 + len(data) - 8 - footer) // 2
    data[middle : middle + 16] = bytes(b ^ 0xFF for b in data[middle : middle + 16])
    path.write_bytes(bytes(data))


def truncate(path: Path, cache_dir: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def copy_another_rows_file(path: Path, cache_dir: Path) -> None:
    other = row_file(cache_dir, 0)
    assert other != path
    path.write_bytes(other.read_bytes())


def drop_the_checksum(path: Path, cache_dir: Path) -> None:
    """Rewrite the entry as older code did: the provenance (with the right key), no checksum."""
    table = pq.read_table(path)
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if k != CHECKSUM_KEY.encode()}
    write_parquet_atomic(table.replace_schema_metadata(meta), path, {})


DAMAGE: dict[str, Callable[[Path, Path], None]] = {
    "altered value": alter_a_value,
    "flipped bytes": flip_the_middle_of_the_data,
    "truncated": truncate,
    "another row's file": copy_another_rows_file,
    "no checksum": drop_the_checksum,
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_entry_is_recomputed_and_reported_once(
    cached: Path, fresh: pd.DataFrame, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    victim = row_file(cached, 2)
    DAMAGE[damage](victim, cached)
    with pytest.raises(CorruptCacheEntry):
        read_cached(victim)

    again = sweep(cached)
    assert (again.computed, again.from_cache) == (1, ROWS - 1)
    assert again.recomputed_corrupt == [victim]
    pd.testing.assert_frame_equal(again.frame, fresh, check_exact=True)
    err = capsys.readouterr().err
    assert err.splitlines() == [f"{MESSAGE} {victim}"]
    # The entry was rewritten: the next sweep serves every row, silently.
    pd.testing.assert_frame_equal(read_cached(victim), observations(fresh, 2), check_exact=True)
    last = sweep(cached)
    assert (last.computed, last.from_cache, last.recomputed_corrupt) == (0, ROWS, [])
    assert capsys.readouterr().err == ""


def test_an_entry_shared_by_repeated_rows_is_recomputed_and_reported_once(
    cached: Path, fresh: pd.DataFrame, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = row_file(cached, 2)
    truncate(victim, cached)
    row = expand_grid(get_experiment(EXPERIMENT), GRID)[2]
    again = run_sweep(EXPERIMENT, [row, row], cache_dir=cached, progress=False)
    assert (again.computed, again.from_cache, again.recomputed_corrupt) == (1, 0, [victim])
    assert capsys.readouterr().err.splitlines() == [f"{MESSAGE} {victim}"]
    for copy in (0, 1):
        pd.testing.assert_frame_equal(observations(again.frame, copy), observations(fresh, 2), check_exact=True)


def test_an_intact_cache_is_served_untouched(cached: Path, fresh: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted((cached / EXPERIMENT).glob("*.parquet"))
    before = {f: f.stat().st_mtime_ns for f in files}
    again = sweep(cached)
    assert (again.computed, again.from_cache, again.recomputed_corrupt) == (0, ROWS, [])
    assert {f: f.stat().st_mtime_ns for f in files} == before
    pd.testing.assert_frame_equal(again.frame, fresh, check_exact=True)
    assert capsys.readouterr().err == ""


def test_a_missing_entry_is_a_plain_miss(cached: Path, fresh: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> None:
    row_file(cached, 1).unlink()
    assert read_cached(row_file(cached, 1)) is None
    again = sweep(cached)
    assert (again.computed, again.from_cache, again.recomputed_corrupt) == (1, ROWS - 1, [])
    pd.testing.assert_frame_equal(again.frame, fresh, check_exact=True)
    assert capsys.readouterr().err == ""


def test_a_damaged_entry_is_recomputed_on_spark(spark: Any, cached: Path, fresh: pd.DataFrame,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    victim = row_file(cached, 3)
    alter_a_value(victim, cached)
    again = sweep(cached, runner="spark", master=spark.sparkContext.master)
    assert (again.computed, again.from_cache, again.recomputed_corrupt) == (1, ROWS - 1, [victim])
    pd.testing.assert_frame_equal(again.frame, fresh, check_exact=True)
    assert capsys.readouterr().err.splitlines() == [f"{MESSAGE} {victim}"]
    assert read_cached(victim) is not None  # the executor rewrote it, with a valid checksum


def test_the_checksum_survives_a_parquet_round_trip_of_every_common_dtype(tmp_path: Path) -> None:
    frame = pd.DataFrame({
        "int": [1, 2, 3],
        "float": [0.5, np.nan, -2.0],
        "bool": [True, False, True],
        "text": ["a", None, ""],
        "bytes": [b"\x00\x01", None, b""],
        "category": pd.Categorical(["x", None, "x"], categories=["x", "y"]),
        "time": pd.to_datetime(["2020-01-01", None, "2021-06-30"]).tz_localize("UTC"),
        "nullable": pd.array([1, None, 3], dtype="Int64"),
        "lists": [[1, 2], None, [None, 3]],
        "nothing": [None, None, None],
    })
    path = tmp_path / "e" / f"{'0' * 64}.parquet"
    write_cached(path, frame, experiment="e", params={}, key="0" * 64)
    served = read_cached(path)
    assert served is not None and list(served.columns) == list(frame.columns)
    table = pq.read_table(path)
    assert table.schema.metadata[CHECKSUM_KEY.encode()].decode() == content_checksum(table)
    assert b'"cache_key": "' + b"0" * 64 in table.schema.metadata[PROVENANCE_KEY.encode()]
    # Equal data, other chunking: the same checksum; one value changed: another.
    assert content_checksum(pq.read_table(path).combine_chunks()) == content_checksum(table)
    changed = frame.assign(float=[0.5, np.nan, -2.5])
    write_cached(path, changed, experiment="e", params={}, key="0" * 64)
    assert content_checksum(pq.read_table(path)) != content_checksum(table)


# -- modes: the user's umask -----------------------------------------------------------------


@pytest.fixture
def restore_umask() -> Iterator[None]:
    """The process umask as it was before the test, whatever the test sets."""
    original = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(original)


@pytest.mark.parametrize(("mask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700)])
def test_results_caches_and_built_directories_follow_the_umask(
    tmp_path: Path, restore_umask: None, mask: int, file_mode: int, dir_mode: int
) -> None:
    os.umask(mask)
    assert current_umask() == mask
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump(GRID))
    out = tmp_path / "results" / "out.parquet"
    status = sweep_command(experiment=get_experiment(EXPERIMENT), grid=grid, master=None, runner="local",
                           out=out, cache=tmp_path / "cache", use_cache=True)
    assert status == 0
    cache_files = list((tmp_path / "cache" / EXPERIMENT).glob("*.parquet"))
    assert len(cache_files) == ROWS
    for path in [out, *cache_files]:
        assert path.stat().st_mode & 0o777 == file_mode, path
    with building_directory(tmp_path / "built") as work:
        write_parquet_atomic(pd.DataFrame({"x": [1]}), work / "part.parquet", {})
    assert (tmp_path / "built").stat().st_mode & 0o777 == dir_mode
    assert (tmp_path / "built" / "part.parquet").stat().st_mode & 0o777 == file_mode


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_parquet_atomic(pd.DataFrame({"x": [1]}), tmp_path / "f.parquet", {})
    assert list(tmp_path.iterdir()) == []
