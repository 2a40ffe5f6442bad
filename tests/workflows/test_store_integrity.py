"""The block store's integrity through the command line (issue #53): each data part's size and
SHA-256 in its manifest, recomputed by ``workflow verify`` (one flipped byte is damage) and by a
resumed run before it reuses a block; only regular files opened (a FIFO never blocks, a link is
never followed or removed); one writer per store. Each case in a temporary directory whose files
are compared byte for byte afterwards. No Spark: every refusal here comes before Spark starts
(the spark mode's signals and two real runs are in tests/spark/test_workflows_spark_mode.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from staleness_lab.errors import InputError
from staleness_lab.workflows.block_store import BlockStore, block_id
from staleness_lab.workflows.blocks import BASE, Block
from staleness_lab.workflows.load import load_workflow
from staleness_lab.workflows.provenance import prov
from staleness_lab.workflows.sim import RunConfig, block_store
from staleness_lab.workflows.store_lock import LOCK_FILE, store_lock

from tests.test_hostile_inputs import one_error_line, run_cli
from tests.workflows.test_block_store import _commit_two, _store, _writer
from tests.workflows.test_hostile_workflows import BASE as WF_BASE
from tests.workflows.test_hostile_workflows import DIGESTS, tree



def _flip_a_byte(path: Path) -> None:
    """One byte in the middle of ``path`` changed, its size kept."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _verify_cli(store: Path, cwd: Path) -> tuple[int, list[str]]:
    """``workflow verify`` through the console script: its exit status and damage lines; it
    wrote nothing (every file under ``cwd`` byte for byte as before) and said nothing on stderr."""
    before = tree(cwd)
    proc = run_cli("workflow", "verify", store, cwd=cwd)
    assert proc.stderr == "" and tree(cwd) == before, proc.stderr[-2000:]
    return proc.returncode, [line for line in proc.stdout.splitlines() if line.startswith("  damaged: ")]


def test_manifest_holds_each_parts_size_and_sha256(tmp_path: Path) -> None:
    store = _store(tmp_path)
    a, _ = _commit_two(store)
    part = store.data_dir("pages", a) / "part-00000.parquet"
    manifest = store.manifest("pages", a)
    assert manifest is not None
    assert manifest["parts"] == [{"file": part.name, "bytes": part.stat().st_size,
                                  "sha256": hashlib.sha256(part.read_bytes()).hexdigest()}]


def test_verify_finds_one_flipped_byte(tmp_path: Path) -> None:
    """Same size, same footer: only the checksum sees it; exit 1 naming the block and the part."""
    store = _store(tmp_path / "store")
    a, _ = _commit_two(store)
    _flip_a_byte(store.data_dir("pages", a) / "part-00000.parquet")
    code, damage = _verify_cli(tmp_path / "store", tmp_path)
    assert code == 1 and len(damage) == 1, damage
    assert f"pages/_blocks/{a}.json: part-00000.parquet: its bytes differ from the manifest's checksum" in damage[0]


def _replace_by_fifo(path: Path) -> None:
    shutil.rmtree(path) if path.is_dir() else path.unlink()
    os.mkfifo(path)


def _replace_by_link(path: Path, outside: Path) -> None:
    """``path`` moved to ``outside`` (the same bytes, so a reader following the link would find
    nothing wrong) and a link to it left in its place."""
    shutil.move(path, outside)
    path.symlink_to(outside)


#: (case, how the store is changed, what verify says): each an entry where the layout has a
#: regular file or a directory, replaced by something else.
NOT_REGULAR = [
    ("fifo-manifest", lambda run, a, out: _replace_by_fifo(run / "pages" / "_blocks" / f"{a}.json"),
     "the manifest is a FIFO, not a regular file"),
    ("fifo-part", lambda run, a, out: _replace_by_fifo(run / "pages" / a / "part-00000.parquet"),
     "part-00000.parquet is a FIFO, not a regular file"),
    ("link-part", lambda run, a, out: _replace_by_link(run / "pages" / a / "part-00000.parquet", out),
     "part-00000.parquet is a symbolic link, not a regular file"),
    ("link-data-directory", lambda run, a, out: _replace_by_link(run / "pages" / a, out),
     "data directory {a}/ is a symbolic link, not a directory"),
    ("directory-manifest", lambda run, a, out: (run / "pages" / "_blocks" / f"{a}.json").unlink()
     or (run / "pages" / "_blocks" / f"{a}.json").mkdir(), "the manifest is a directory, not a regular file"),
    ("link-channel", lambda run, a, out: _replace_by_link(run / "pages", out),
     "pages: is a symbolic link, not a directory, where a channel directory should be"),
    ("fifo-run-json", lambda run, a, out: _replace_by_fifo(run / "run.json"), "run.json: is a FIFO, not a regular file"),
    ("link-orphan", lambda run, a, out: (out.write_text("keep\n"), (run / "pages" / ".x.tmp-1").symlink_to(out)),
     ".x.tmp-1 is a symbolic link: not made by staleness-lab"),
]


@pytest.mark.parametrize("case", NOT_REGULAR, ids=[c[0] for c in NOT_REGULAR])
def test_verify_reports_what_is_not_a_regular_file_and_never_blocks(case: Any, tmp_path: Path) -> None:
    """Each entry is named as damage (exit 1) and never opened or followed: a FIFO would block a
    reader forever (the command has the CLI tests' timeout), the link's target is left as it was."""
    _, change, said = case
    store = _store(tmp_path / "store")
    a, _ = _commit_two(store)
    outside = tmp_path / "outside"
    change(store.dir, a, outside)
    before = tree(tmp_path)
    code, damage = _verify_cli(tmp_path / "store", tmp_path)
    assert code == 1 and any(said.format(a=a) in line for line in damage), damage
    assert tree(tmp_path) == before


def test_old_manifests_without_checksums_are_damage(tmp_path: Path) -> None:
    """Written before part checksums: verify cannot vouch for the parts (footers alone would
    miss a changed byte), so it says which version wrote them and to rerun; a resume refuses."""
    store = _store(tmp_path / "store")
    a, _ = _commit_two(store)
    path = store.dir / "pages" / "_blocks" / f"{a}.json"
    old = json.loads(path.read_text())
    old["parts"] = [{k: v for k, v in p.items() if k != "sha256"} for p in old["parts"]]
    path.write_text(json.dumps(old))
    code, damage = _verify_cli(tmp_path / "store", tmp_path)
    assert code == 1 and len(damage) == 1 and "written by an older version of staleness-lab" in damage[0], damage
    with pytest.raises(InputError, match="written by an older version"):
        _store(tmp_path / "store")


# -- resuming through the command line (refused before Spark starts) ------------------------------
@pytest.fixture
def resumable(tmp_path: Path) -> tuple[Path, BlockStore, str]:
    """A workflow file (tests/workflows/test_hostile_workflows.py's small one) and the store of
    its ``workflow run --mode spark --store tmp_path/store`` with one committed input block, as
    a stopped run leaves it; returns the file, the store and the block's id."""
    (tmp_path / "digests.csv").write_text(DIGESTS, encoding="utf-8")
    path = tmp_path / "workflow.yaml"
    path.write_text(yaml.safe_dump(WF_BASE, sort_keys=False), encoding="utf-8")
    workflow = load_workflow(path)
    store = block_store(workflow, RunConfig(mode="spark", store=tmp_path / "store"), workflow.horizon)
    store.open()
    block = Block("digests", BASE, prov(0.0))
    bid = block_id(block, "input@0.0")
    store.commit_data(block, bid, _writer(pd.DataFrame({"url": ["a.com/x"], "site": ["a.com"]})), {"op": "input"})
    return path, store, bid


def _resume_refused(path: Path, store: BlockStore, cwd: Path, rule: str) -> None:
    """``workflow run --mode spark`` on the store: exit 2, one line naming --store and ``rule``,
    and nothing under ``cwd`` changed (nothing removed, no link followed)."""
    before = tree(cwd)
    line = one_error_line(run_cli("workflow", "run", path, "--mode", "spark", "--store", store.root, cwd=cwd))
    assert line.startswith("staleness-lab: error: --store: ") and rule in line, line
    assert tree(cwd) == before


def test_resume_refuses_a_flipped_byte_in_an_input_block(resumable: tuple[Path, BlockStore, str],
                                                         tmp_path: Path) -> None:
    path, store, bid = resumable
    _flip_a_byte(store.data_dir("digests", bid) / "part-00000.parquet")
    _resume_refused(path, store, tmp_path, "part-00000.parquet: its bytes differ from the manifest's checksum")


@pytest.mark.parametrize("where", ["run", "channel-orphan", "data-directory"])
def test_resume_never_follows_a_link_out_of_the_store(where: str, resumable: tuple[Path, BlockStore, str],
                                                     tmp_path: Path) -> None:
    """A link to a file (or directory) outside the store, placed in the run's directory, in a
    channel as a hidden temporary, or in a channel as a data directory no manifest names: the
    resume refuses in one line; the link and what it points to stay byte for byte."""
    path, store, _ = resumable
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "precious.txt").write_text("keep me\n", encoding="utf-8")
    link, target = {"run": (store.dir / "evil", tmp_path / "outside" / "precious.txt"),
                    "channel-orphan": (store.dir / "digests" / ".a.tmp-1", tmp_path / "outside" / "precious.txt"),
                    "data-directory": (store.dir / "digests" / ("0" * 20), tmp_path / "outside")}[where]
    link.symlink_to(target)
    _resume_refused(path, store, tmp_path, "symbolic link")
    assert (tmp_path / "outside" / "precious.txt").read_bytes() == b"keep me\n" and link.is_symlink()


# -- one writer per store -------------------------------------------------------------------------
HOLD = ("import sys, time; from pathlib import Path; from staleness_lab.workflows.store_lock import store_lock\n"
        "with store_lock(Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(600)\n")


def _holder(store: Path) -> subprocess.Popen[str]:
    """A process holding ``store``'s lock (it has said so when this returns)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(store)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_second_writer_is_refused_naming_the_holder_and_a_killed_holder_blocks_no_one(
        resumable: tuple[Path, BlockStore, str], tmp_path: Path) -> None:
    path, store, _ = resumable
    holder = _holder(store.root)
    try:
        _resume_refused(path, store, tmp_path, f"is in use by another run (pid {holder.pid}, started '")
    finally:
        holder.kill()
        holder.wait()
    assert json.loads((store.root / LOCK_FILE).read_text())["pid"] == holder.pid  # left behind by the SIGKILL
    with store_lock(store.root):  # the OS released it with the process
        assert json.loads((store.root / LOCK_FILE).read_text())["pid"] == os.getpid()


def test_the_lock_is_reentrant_within_a_process_only(tmp_path: Path) -> None:
    with store_lock(tmp_path / "store"), store_lock(tmp_path / "store"):
        probe = subprocess.run([sys.executable, "-c", HOLD, str(tmp_path / "store")], capture_output=True, text=True,
                               timeout=60)
        assert probe.returncode == 1 and "is in use by another run (pid " in probe.stderr.splitlines()[-1]
    holder = _holder(tmp_path / "store")  # released by both exits
    holder.kill()
    holder.wait()


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused(kind: str, resumable: tuple[Path, BlockStore, str],
                                                           tmp_path: Path) -> None:
    path, store, _ = resumable
    lock = store.root / LOCK_FILE
    if kind == "fifo":
        os.mkfifo(lock)
    else:
        (tmp_path / "target.txt").write_text("keep me\n", encoding="utf-8")
        lock.symlink_to(tmp_path / "target.txt")
    _resume_refused(path, store, tmp_path, "a FIFO: the store's lock file must be a regular file" if kind == "fifo"
                    else "cannot open the store's lock file (Too many levels of symbolic links)")
