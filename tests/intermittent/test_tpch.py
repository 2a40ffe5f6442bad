"""``staleness-lab tpch generate``: TPC-H streams as numbered Parquet parts with a manifest.

Real runs of the generator at SF 0.01 (about 1 s each): the manifest, part k of orders and of
lineitem holding the same order keys, arrival times one second apart, a rerun skipping, and an
interrupted generation never taken as complete.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from staleness_lab.cli import main
from staleness_lab.errors import InputError
from staleness_lab.intermittent import tpch
from tests.cli_signals import survivors

SCALE, PARTS = 0.01, 4


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory, made = tpch.generate(SCALE, PARTS, tmp_path_factory.mktemp("tpch") / "sf-test")
    assert made
    return directory


def test_the_manifest_lists_every_file_with_its_rows_and_arrival(generated: Path) -> None:
    manifest = json.loads((generated / tpch.MANIFEST).read_text(encoding="utf-8"))
    assert (manifest["scale"], manifest["parts"]) == (SCALE, PARTS)
    assert manifest["generator"].startswith("tpchgen-cli 4.")
    streams = [f for f in manifest["files"] if f["part"] is not None]
    assert sorted((f["table"], f["part"]) for f in streams) == sorted(
        (t, k) for t in tpch.STREAMS for k in range(1, PARTS + 1))
    assert {f["table"] for f in manifest["files"] if f["part"] is None} == set(tpch.STATIC)
    for entry in manifest["files"]:
        assert pq.read_metadata(generated / entry["path"]).num_rows == entry["rows"] > 0
    orders = sum(f["rows"] for f in streams if f["table"] == "orders")
    assert orders == 15_000  # TPC-H: 1.5 M orders per unit of scale
    assert sorted(p.name for p in generated.iterdir()) == ["lineitem", tpch.MANIFEST, "orders", "static"]


def test_part_k_of_both_streams_holds_the_same_orders_and_arrives_at_t0_plus_k_minus_1(generated: Path) -> None:
    for k in range(1, PARTS + 1):
        orders = pq.read_table(generated / "orders" / f"orders.{k}.parquet")
        lines = pq.read_table(generated / "lineitem" / f"lineitem.{k}.parquet")
        assert set(pc.unique(lines["l_orderkey"]).to_pylist()) == set(orders["o_orderkey"].to_pylist())
        for table in (orders, lines):
            stamps = pc.unique(table["arrival_ts"]).to_pylist()
            assert stamps == [tpch.T0 + timedelta(seconds=k - 1)]
    schema = pq.read_schema(generated / "lineitem" / "lineitem.1.parquet")
    assert schema.field("l_extendedprice").type == pa.decimal128(15, 2)
    assert schema.field("l_shipdate").type == pa.date32()
    assert schema.field("l_shipmode").type == pa.string()  # no string views: Spark reads these
    assert schema.field("arrival_ts").type == pa.timestamp("us", tz="UTC")


def test_a_rerun_skips_only_when_the_manifest_matches(generated: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in generated.rglob("*")}
    directory, made = tpch.generate(SCALE, PARTS, generated)
    assert (directory, made) == (generated, False)
    assert {p: p.stat().st_mtime_ns for p in generated.rglob("*")} == before


def test_a_mismatched_or_broken_generation_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "data"
    tpch.generate(SCALE, 2, target)
    assert not tpch.generate(SCALE, 2, target)[1]
    (target / "orders" / "orders.2.parquet").unlink()  # a listed file gone: not complete
    assert tpch.generate(SCALE, 2, target)[1]
    assert tpch.generate(SCALE, 3, target)[1]  # another P in the same place: regenerated
    assert json.loads((target / tpch.MANIFEST).read_text())["parts"] == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # nothing aside left behind


def test_an_interrupted_generation_is_never_taken_as_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "data"
    real = tpch._rewrite
    calls = {"n": 0}

    def dies_on_the_third_file(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(tpch, "_rewrite", dies_on_the_third_file)
    with pytest.raises(KeyboardInterrupt):
        tpch.generate(SCALE, 2, target)
    assert list(tmp_path.iterdir()) == []  # neither the target nor the hidden work directory
    # a work directory a killed process left behind is hidden and never mistaken for the target
    (tmp_path / ".data.leftover.tmp" / "orders").mkdir(parents=True)
    monkeypatch.setattr(tpch, "_rewrite", real)
    assert tpch.generate(SCALE, 2, target)[1]
    assert tpch.is_complete(target, SCALE, 2, tpch.generator_version())


def test_a_directory_of_other_files_is_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="no manifest.json"):
        tpch.generate(SCALE, 2, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize(("argv", "field"), [
    (["--scale", "0", "--parts", "4"], "--scale"),
    (["--scale", "nan", "--parts", "4"], "--scale"),
    (["--scale", "5000", "--parts", "4"], "--scale"),
    (["--scale", "0.01", "--parts", "0"], "--parts"),
    (["--scale", "0.01", "--parts", "1000000"], "--parts"),
])
def test_bad_scale_or_parts_is_one_line_and_exit_2(argv: list[str], field: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    assert main(["tpch", "generate", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {field}:" in err
    assert not out.exists()


def test_the_command_line_generates_then_skips(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "staleness_lab.cli", "tpch", "generate", "--scale", "0.01", "--parts", "2",
               "--out", str(tmp_path / "d")]
    first = subprocess.run(command, capture_output=True, text=True)
    assert first.returncode == 0 and first.stdout.strip().endswith("generated"), first.stderr
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 0 and "skipped" in again.stdout


def test_the_generator_is_found_beside_this_python() -> None:
    binary = tpch.generator_path()
    assert binary.name == "tpchgen-cli"
    if (Path(sys.executable).parent / "tpchgen-cli").exists():
        assert binary.parent == Path(sys.executable).parent


@pytest.mark.parametrize("text", ['["a list"]', '{"name": "my-app", "version": "1.0.0"}', '{"scale": 0.01}', "{"])
def test_a_manifest_not_ours_is_one_input_error_not_a_key_error(text: str, tmp_path: Path) -> None:
    (tmp_path / tpch.MANIFEST).write_text(text, encoding="utf-8")
    assert tpch.read_manifest(tmp_path) is None
    with pytest.raises(InputError, match=r"^data: .*not a TPC-H generation of staleness-lab's"):
        tpch.check_generation(tmp_path, "data", files=False)


class _Stopped(Exception):
    """What the test's SIGTERM handler raises, as the command line's does."""


def _raise_stopped(signum: int, frame: object) -> None:
    raise _Stopped


def test_a_signal_while_the_generator_starts_leaves_no_generator_running(tmp_path: Path) -> None:
    """A SIGTERM that lands at any instant of ``_run`` (before, during or after the generator is
    started) ends with the generator killed and reaped: ``subprocess.run`` left a child running
    when the signal's exception came while ``Popen`` was still starting it. The signal is sent
    from a second thread at delays spread over the start (a few milliseconds)."""
    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        for k in range(120):
            out = tmp_path / f"run{k}"
            timer = threading.Timer(k * 5e-5, os.kill, (os.getpid(), signal.SIGTERM))
            with pytest.raises(_Stopped):
                timer.start()
                tpch._run(tpch.generator_path(), ["parquet", "-s", "1", "--tables=lineitem", "-o", str(out)])
                time.sleep(5)  # the generator ended before the signal (it cannot, at SF 1): wait for it
            timer.join()
            assert not survivors(str(out)), f"a generator still runs after a signal at {k * 5e-5:.4f} s"
    finally:
        signal.signal(signal.SIGTERM, previous)
