"""The block store's commit protocol, resume rules and ``workflow verify``, with pyarrow writers
(the spark mode's runs are in ``tests/spark/test_workflows_spark_mode.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from staleness_lab.errors import InputError
from staleness_lab.workflows.block_store import CRASH_ENV, CRASH_STATUS, BlockStore, block_id, orphans, verify
from staleness_lab.workflows.blocks import BASE, DELTA, Block
from staleness_lab.workflows.provenance import prov

RUN = {"workflow_sha256": "ab" * 32, "seed": 3, "horizon_h": 6.0}
B1 = Block("pages", BASE, prov(0.0))
D2 = Block("pages", DELTA, prov(0.25), prov(0.0))


def _writer(frame: pd.DataFrame):
    def write(directory: Path) -> None:
        directory.mkdir()
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), directory / "part-00000.parquet")
    return write


def _store(root: Path, run: dict | None = None) -> BlockStore:
    store = BlockStore(root, "wf", "async-incr-dp-s3", dict(run or RUN))
    store.open()
    return store


def _commit_two(store: BlockStore) -> tuple[str, str]:
    a = block_id(B1, "input@0.0")
    store.commit_data(B1, a, _writer(pd.DataFrame({"url": ["u1", "u2"]})), {"op": "input"})
    b = block_id(D2, "input@0.25")
    delta = pd.DataFrame({"url": ["u1", "u3", "u4"], "_sign": pd.Series([-1, 1, 1], dtype="int8")})
    store.commit_data(D2, b, _writer(delta), {"op": "input"})
    return a, b


def test_commit_layout_manifest_and_verify(tmp_path: Path) -> None:
    store = _store(tmp_path)
    a, b = _commit_two(store)
    run = tmp_path / "wf" / "async-incr-dp-s3"
    assert json.loads((run / "run.json").read_text()) == RUN
    assert sorted(p.name for p in (run / "pages").iterdir()) == sorted(["_blocks", a, b])
    m = store.manifest("pages", b)
    assert m is not None
    assert (m["type"], m["from"], m["to"], m["rows"], m["deletes"], m["seed"]) == ("delta", [[0.0]], [[0.25]], 3, 1, 3)
    assert [p["file"] for p in m["parts"]] == ["part-00000.parquet"]
    chain = Block("pages", DELTA, prov(0.5), prov(0.0))
    store.commit_chain(chain, "c" * 20, [a, b], 5, 1, {"chain": True})
    found = verify(tmp_path)
    assert (found.runs, found.blocks, found.orphans, found.damage) == (1, 3, [], [])


def test_ids_name_block_and_producer() -> None:
    assert block_id(B1, "x") == block_id(Block("pages", BASE, prov(0.0), rows=9), "x")
    assert len({block_id(B1, "x"), block_id(B1, "y"), block_id(D2, "x")}) == 3


def test_verify_finds_damage(tmp_path: Path) -> None:
    store = _store(tmp_path)
    a, b = _commit_two(store)
    run = tmp_path / "wf" / "async-incr-dp-s3"
    (run / "pages" / a / "part-00000.parquet").unlink()
    manifest = run / "pages" / "_blocks" / f"{b}.json"
    edited = json.loads(manifest.read_text()) | {"rows": 7}
    manifest.write_text(json.dumps(edited))
    store.commit_chain(Block("pages", DELTA, prov(0.5), prov(0.25)), "d" * 20, [b, "e" * 20], 3, 1, {"chain": True})
    found = verify(run)
    assert len(found.damage) == 3, found.damage
    text = " ".join(found.damage)
    assert "missing ['part-00000.parquet']" in text and "3 rows in the data, 7 in the manifest" in text
    assert "chain part(s) not committed: " + "e" * 20 in text


def test_cli_verify_exit_codes(tmp_path: Path) -> None:
    store = _store(tmp_path)
    a, _ = _commit_two(store)
    cli = [sys.executable, "-m", "staleness_lab.cli", "workflow", "verify", str(tmp_path)]
    ok = subprocess.run(cli, capture_output=True, text=True)
    assert ok.returncode == 0 and "1 run(s), 2 block(s), 0 orphan(s), 0 damaged" in ok.stdout, ok.stdout + ok.stderr
    (tmp_path / "wf" / "async-incr-dp-s3" / "pages" / "_blocks" / f"{a}.json").write_text("{not json")
    bad = subprocess.run(cli, capture_output=True, text=True)
    assert bad.returncode == 1 and "unreadable manifest" in bad.stdout
    empty = subprocess.run([*cli[:-1], str(tmp_path / "wf" / "nothing")], capture_output=True, text=True)
    assert empty.returncode == 2 and len(empty.stderr.splitlines()) == 1 and "STORE" in empty.stderr


@pytest.mark.parametrize("point", ["data", "rename", "manifest"])
def test_crash_leaves_earlier_blocks_and_resume_removes_orphans(tmp_path: Path, point: str) -> None:
    """``n:point`` ends the process inside commit ``n``; only commits before it are visible,
    verify passes (orphans are not damage) and reopening removes the orphans."""
    script = (
        "import sys; sys.path.insert(0, 'tests/workflows'); from pathlib import Path; import test_block_store as t; "
        f"t._commit_two(t._store(Path({str(tmp_path)!r})))"
    )
    env = {**os.environ, CRASH_ENV: f"2:{point}"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == CRASH_STATUS, done.stderr
    run = tmp_path / "wf" / "async-incr-dp-s3"
    found = verify(tmp_path)
    left = 2 if point == "manifest" else 1  # the data, and the manifest's temporary file
    assert found.blocks == 1 and found.damage == [] and len(found.orphans) == left, found
    assert _store(tmp_path).dir == run  # the same run.json: resumed
    assert list(orphans(run)) == [] and verify(tmp_path).blocks == 1


def test_other_run_json_is_refused(tmp_path: Path) -> None:
    _store(tmp_path)
    with pytest.raises(InputError, match=r"--store: .* holds another run \(run.json differs in seed\)"):
        _store(tmp_path, RUN | {"seed": 4})


@pytest.mark.parametrize("value", ["2", "0:data", "1:write", "x:data"])
def test_bad_crash_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(CRASH_ENV, value)
    with pytest.raises(InputError, match=CRASH_ENV):
        BlockStore(tmp_path, "wf", "r", dict(RUN))
