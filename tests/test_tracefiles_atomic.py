"""``write_trace`` puts a trace in place as a pair, all or nothing; the output checks refuse
paths that cannot be written safely, before any work.

Real traces of the quickstart workload (``data/workloads/demo.yaml``, shortened); faults are
injected into the Parquet writer (the second file of a trace fails with ENOSPC or is interrupted).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import staleness_lab
from staleness_lab import InputError, simulate
from staleness_lab.provenance import provenance_metadata, write_parquet_atomic
from staleness_lab.tracefiles import check_output_file, check_trace_dir, write_trace

REPO = Path(__file__).resolve().parents[1]
WORKLOAD = REPO / "data" / "workloads" / "demo.yaml"
CLI = Path(sys.executable).parent / "staleness-lab"
VERSION = staleness_lab.__version__
PAIR = ["freshness.parquet", "jobs.parquet"]


@pytest.fixture(scope="module")
def traces() -> dict[int, staleness_lab.sim.Trace]:
    """Two traces of one workload that differ (other seeds), so a replacement is visible."""
    return {seed: simulate(WORKLOAD, "edf", horizon=200, seed=seed).trace for seed in (1, 2)}


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def _hidden(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def _meta(path: Path) -> dict[str, str]:
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if k.startswith(b"staleness_lab.")}


def _raised(exc: BaseException) -> type[BaseException]:
    """What ``write_trace`` raises for ``exc``: an OSError (no space, no permission) becomes the
    one-line InputError naming ``--trace-out`` (:func:`staleness_lab.outputs.writing`); Ctrl-C
    goes on as it is."""
    return InputError if isinstance(exc, OSError) else type(exc)


def _fail_second_write(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> list[str]:
    """Let the first Parquet write through; the second writes a few bytes, then raises ``exc``."""
    real = pq.write_table
    calls: list[str] = []

    def write_table(table, where, *args, **kwargs):
        calls.append(str(where))
        if len(calls) == 2:
            if isinstance(where, (str, os.PathLike)):
                Path(where).write_bytes(b"PAR1 partial")
            raise exc
        return real(table, where, *args, **kwargs)

    monkeypatch.setattr(pq, "write_table", write_table)
    return calls


# --------------------------------------------------------------------------------------------
# write_trace
# --------------------------------------------------------------------------------------------
def test_new_directory_gets_the_pair_with_provenance(traces, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "run1"
    written = write_trace(traces[1], out, version=VERSION)
    assert written == [out / "jobs.parquet", out / "freshness.parquet"]
    assert sorted(p.name for p in out.iterdir()) == PAIR
    assert _hidden(out.parent) == []
    pd.testing.assert_frame_equal(pd.read_parquet(out / "jobs.parquet"), traces[1].jobs.reset_index(drop=True),
                                  check_dtype=False, check_categorical=False)
    expected = {
        "staleness_lab.workload_sha256": traces[1].workload.digest(),
        "staleness_lab.seed": "1",
        "staleness_lab.version": VERSION,
        "staleness_lab.policy": "edf",
    }
    for name in PAIR:
        assert _meta(out / name) == expected, name


def test_empty_existing_directory_is_used(traces, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    write_trace(traces[1], out, version=VERSION)
    assert sorted(p.name for p in out.iterdir()) == PAIR
    assert _hidden(tmp_path) == []


def test_directory_follows_the_umask(traces, tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_trace(traces[1], tmp_path / "out", version=VERSION)
    finally:
        os.umask(old)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o750


def test_existing_pair_is_replaced_together(traces, tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_trace(traces[1], out, version=VERSION)
    before = _snapshot(out)
    write_trace(traces[2], out, version=VERSION)
    after = _snapshot(out)
    assert sorted(after) == PAIR
    assert all(after[name] != before[name] for name in PAIR)  # both files are the new run's
    assert {_meta(out / name)["staleness_lab.seed"] for name in PAIR} == {"2"}
    assert _hidden(tmp_path) == []  # neither .out.*.tmp nor .out.*.old left


def test_a_lone_jobs_file_of_an_earlier_trace_is_replaced(traces, tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_trace(traces[1], out, version=VERSION)
    (out / "freshness.parquet").unlink()
    write_trace(traces[2], out, version=VERSION)
    assert sorted(p.name for p in out.iterdir()) == PAIR


def test_symlink_to_a_trace_directory_is_refused(traces, tmp_path: Path) -> None:
    """The output rule (staleness_lab/outputs.py): a link is the user's, even to a trace of ours."""
    real = tmp_path / "real"
    write_trace(traces[1], real, version=VERSION)
    before = _snapshot(real)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    with pytest.raises(InputError, match=rf"^--trace-out: {link}: is a symbolic link; "):
        write_trace(traces[2], link, version=VERSION)
    assert link.is_symlink() and os.path.realpath(link) == str(real)
    assert _snapshot(real) == before
    assert _hidden(tmp_path) == []


def test_directory_in_the_way_is_refused_before_any_work(traces, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    write_trace(traces[1], out, version=VERSION)
    (out / "freshness.parquet").unlink()
    (out / "freshness.parquet").mkdir()
    jobs = (out / "jobs.parquet").read_bytes()
    message = (f"--trace-out: {out}: holds what staleness-lab did not write (freshness.parquet); "
               f"staleness-lab replaces only what it wrote itself: give a new or empty directory or a previous "
               f"--trace-out directory (a trace pair)")

    with pytest.raises(InputError) as caught:
        check_trace_dir(out, "--trace-out")
    assert str(caught.value) == message and caught.value.field == "--trace-out"

    def no_write(*args, **kwargs):
        raise AssertionError("wrote Parquet before refusing")

    monkeypatch.setattr(pq, "write_table", no_write)
    with pytest.raises(InputError) as caught:
        write_trace(traces[2], out, version=VERSION)
    assert str(caught.value) == message
    assert (out / "jobs.parquet").read_bytes() == jobs
    assert (out / "freshness.parquet").is_dir()
    assert _hidden(tmp_path) == []


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda d: (d / "notes.txt").write_text("mine"), "notes.txt"),
        (lambda d: (d / "sub").mkdir(), "sub"),
        (lambda d: (d / ".jobs.parquet.abc.tmp").write_bytes(b""), ".jobs.parquet.abc.tmp"),
        (lambda d: (d / "jobs.parquet").symlink_to(d.parent / "elsewhere.parquet"), "jobs.parquet"),
        (lambda d: pd.DataFrame({"x": [1]}).to_parquet(d / "freshness.parquet"), "freshness.parquet"),
        (lambda d: (d / "jobs.parquet").write_bytes(b"not parquet"), "jobs.parquet"),
    ],
    ids=["other-file", "subdirectory", "hidden-file", "symlinked-trace-file", "foreign-parquet", "not-parquet"],
)
def test_anything_but_a_trace_pair_is_refused(make, name: str, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.parquet").write_bytes(b"")
    out = tmp_path / "out"
    out.mkdir()
    make(out)
    with pytest.raises(InputError, match=rf"^--trace-out: {out}: holds what staleness-lab did not write \({name}\); "):
        check_trace_dir(out, "--trace-out")


@pytest.mark.parametrize("target", ["new", "new/deeper", "empty"])
def test_new_or_empty_directories_pass_the_check(target: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    check_trace_dir(tmp_path / target, "--trace-out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]  # the check creates nothing


def test_file_or_dangling_link_as_trace_dir_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="exists and is not a directory"):
        check_trace_dir(tmp_path / "file", "--trace-out")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    with pytest.raises(InputError, match="is a symbolic link"):
        check_trace_dir(tmp_path / "dangling", "--trace-out")


@pytest.mark.parametrize(
    "exc", [OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), KeyboardInterrupt()], ids=["ENOSPC", "KeyboardInterrupt"]
)
def test_failure_on_the_second_file_leaves_the_old_pair(exc: BaseException, traces, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    write_trace(traces[1], out, version=VERSION)
    before = _snapshot(out)
    calls = _fail_second_write(monkeypatch, exc)
    with pytest.raises(_raised(exc)):
        write_trace(traces[2], out, version=VERSION)
    assert len(calls) == 2
    assert _snapshot(out) == before  # byte-identical, both files
    assert _hidden(tmp_path) == []  # no .out.*.tmp left


@pytest.mark.parametrize(
    "exc", [OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), KeyboardInterrupt()], ids=["ENOSPC", "KeyboardInterrupt"]
)
def test_failure_on_a_new_directory_leaves_nothing(exc: BaseException, traces, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_second_write(monkeypatch, exc)
    with pytest.raises(_raised(exc)):
        write_trace(traces[2], tmp_path / "out", version=VERSION)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_failure_of_the_final_rename_restores_the_old_pair(traces, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    write_trace(traces[1], out, version=VERSION)
    before = _snapshot(out)
    real = os.rename

    def rename(src, dst):
        if Path(src).name.endswith(".tmp") and Path(dst) == out:
            raise OSError(errno.EIO, "injected")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(InputError, match=rf"^--trace-out: {out}: cannot be written \(injected\)$"):
        write_trace(traces[2], out, version=VERSION)
    assert _snapshot(out) == before
    assert _hidden(tmp_path) == []


def test_cli_refuses_a_directory_in_the_way_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "freshness.parquet").mkdir(parents=True)
    (out / "jobs.parquet").write_bytes(b"old")
    proc = subprocess.run([str(CLI), "simulate", str(WORKLOAD), "--policy", "fifo", "--horizon", "100",
                           "--trace-out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"staleness-lab: error: --trace-out: {out}: holds what staleness-lab did not write (freshness.parquet); "
        f"staleness-lab replaces only what it wrote itself: give a new or empty directory or a previous "
        f"--trace-out directory (a trace pair)"
    ]
    assert (out / "jobs.parquet").read_bytes() == b"old"
    assert _hidden(tmp_path) == []


# --------------------------------------------------------------------------------------------
# check_output_file
# --------------------------------------------------------------------------------------------
def test_output_file_of_ours_or_missing_is_fine(tmp_path: Path) -> None:
    write_parquet_atomic(pd.DataFrame({"x": [1]}), tmp_path / "rows.parquet", provenance_metadata({"table": "t"}))
    check_output_file(tmp_path / "rows.parquet", "--out")
    check_output_file(tmp_path / "missing.parquet", "--out")
    check_output_file(tmp_path / "new" / "dir" / "missing.parquet", "--out")  # parent can be created
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.parquet"]


@pytest.mark.parametrize("content", [b"old", b"PAR1 not parquet", None], ids=["text", "not-parquet", "foreign-parquet"])
def test_output_file_not_written_by_this_program_is_refused(content: bytes | None, tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    if content is None:
        pd.DataFrame({"x": [1]}).to_parquet(path)
    else:
        path.write_bytes(content)
    before = path.read_bytes()
    with pytest.raises(InputError, match=rf"^--out: {path}: exists and was not written by staleness-lab; "
                                         r"staleness-lab replaces only what it wrote itself"):
        check_output_file(path, "--out")
    assert path.read_bytes() == before


def test_output_file_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.parquet").write_bytes(b"")
    (tmp_path / "link.parquet").symlink_to(tmp_path / "real.parquet")
    with pytest.raises(InputError, match=rf"^--out: {tmp_path / 'link.parquet'}: is a symbolic link"):
        check_output_file(tmp_path / "link.parquet", "--out")
    (tmp_path / "dangling.parquet").symlink_to(tmp_path / "missing")
    with pytest.raises(InputError, match="is a symbolic link"):
        check_output_file(tmp_path / "dangling.parquet", "--out")


def test_output_file_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=rf"^--out: {tmp_path / 'd'}: is a directory"):
        (tmp_path / "d").mkdir()
        check_output_file(tmp_path / "d", "--out")


def test_output_file_device_is_refused() -> None:
    with pytest.raises(InputError, match=r"^--out: /dev/null: is a device"):
        check_output_file(Path("/dev/null"), "--out")


def test_output_file_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputError, match=rf"^--out: {tmp_path / 'pipe'}: is a FIFO"):
        check_output_file(tmp_path / "pipe", "--out")


def test_output_file_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match=rf"^--out: {tmp_path / 'file' / 'rows.parquet'}: cannot be written \({tmp_path / 'file'}: exists and is not a directory\)$"):
        check_output_file(tmp_path / "file" / "rows.parquet", "--out")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_output_file_in_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(InputError, match=rf"^--out: {ro / 'rows.parquet'}: cannot be written \(.* is not writable\)$"):
            check_output_file(ro / "rows.parquet", "--out")
    finally:
        ro.chmod(0o755)
