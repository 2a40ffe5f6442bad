"""Never delete or replace what this program did not create (issue #53), through the real CLI.

The rule (``staleness_lab/outputs.py``, README "Limits and bad input"): an output path is
created when missing, used when an empty directory, and replaced only when it carries this
program's marker; a symbolic link, a device, a FIFO, a user's directory or file, another
program's manifest is refused before any work with exit 2 and one line naming the path and the
rule. Each test runs in its own tmp directory and compares a snapshot of every path under it
(type, bytes, link target) before and after.

The findings it pins: ``plan --out`` emptying a directory named ``batches.parquet`` and replacing
a symbolic link; ``tpch generate --out`` replacing a directory with another program's
``manifest.json`` (and a traceback for a manifest that is a JSON list); ``tpch run --data`` failing
inside Spark on another program's manifest or a truncated part; a truncated part passing as a
complete generation. The last test walks every command's help for its output options, so a new
one cannot miss the rule.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
import yaml

from staleness_lab.intermittent import tpch
from staleness_lab.outputs import RULE
from test_hostile_inputs import one_error_line, run_cli

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "workloads" / "demo.yaml"
E5 = REPO / "data" / "intermittent" / "e5.yaml"
WORKFLOW = REPO / "data" / "workflows" / "olston-example.yaml"
SCALE, PARTS = "0.01", "2"
FOREIGN_MANIFEST = {"name": "my-app", "version": "1.0.0", "main": "src/app.js"}


def tree(root: Path) -> dict[str, tuple[str, bytes | str | None]]:
    """Every path under ``root`` (links not followed): its type and its bytes or link target."""
    found: dict[str, tuple[str, bytes | str | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            key = path.relative_to(root).as_posix()
            if stat.S_ISLNK(mode):
                found[key] = ("link", os.readlink(path))
            elif stat.S_ISDIR(mode):
                found[key] = ("dir", None)
            elif stat.S_ISREG(mode):
                found[key] = ("file", path.read_bytes())
            else:
                found[key] = ("other", None)
    return found


def refused(proc, path: Path, option: str) -> str:
    """The one error line, which names ``option``, ``path`` and the rule."""
    line = one_error_line(proc)
    assert line.startswith(f"staleness-lab: error: {option}: {path}: "), line
    assert RULE in line or "exists and is not a directory" in line or ": is a " in line, line
    return line


def queries_file(path: Path) -> Path:
    """A catalogue query set over PARTS parts (for ``tpch run``)."""
    path.write_text(yaml.safe_dump({
        "executors": 1, "delta_rsf": 0.5, "c_max": 1.0,
        "queries": [{"name": "Q6", "arrivals": {"ws": 1, "rate": 1, "N": int(PARTS)}, "deadline": 40.0,
                     "cost": {"kind": "linear", "S": 0.4, "R": 0.2},
                     "agg_cost": {"kind": "linear", "a0": 0.2, "a1": 0.1}}],
    }), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def generation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generation made by the command (SF 0.01, 2 parts), copied by tests that damage it."""
    out = tmp_path_factory.mktemp("tpch") / "gen"
    proc = run_cli("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", out, cwd=out.parent, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == f"{out}: generated", proc.stderr
    return out


def copy_of(generation: Path, where: Path) -> Path:
    import shutil

    return Path(shutil.copytree(generation, where, symlinks=True))


# --------------------------------------------------------------------------------------------
# finding 1: plan --out
# --------------------------------------------------------------------------------------------
def test_plan_out_keeps_a_users_directory_named_batches_parquet(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    (out / "batches.parquet").mkdir(parents=True)
    (out / "batches.parquet" / "mine.txt").write_text("the user's", encoding="utf-8")
    before = tree(tmp_path)
    line = refused(run_cli("plan", E5, "--scheme", "edf", "--out", out, cwd=tmp_path), out, "--out")
    assert "batches.parquet" in line
    assert tree(tmp_path) == before


@pytest.mark.parametrize("behind", ["users-directory", "earlier-plan", "dangling"])
def test_plan_out_never_replaces_a_symbolic_link(behind: str, tmp_path: Path) -> None:
    real = tmp_path / "real"
    if behind == "earlier-plan":  # even a plan of ours behind the link: the link is the user's
        assert run_cli("plan", E5, "--scheme", "edf", "--out", real, cwd=tmp_path).returncode == 0
    elif behind == "users-directory":
        real.mkdir()
        (real / "notes.txt").write_text("mine", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    before = tree(tmp_path)
    line = refused(run_cli("plan", E5, "--scheme", "rr", "--out", link, cwd=tmp_path), link, "--out")
    assert "symbolic link" in line
    assert tree(tmp_path) == before


def test_plan_out_still_replaces_its_own_earlier_plan(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    for scheme in ("edf", "rr"):
        proc = run_cli("plan", E5, "--scheme", scheme, "--out", out, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert sorted(tree(tmp_path)) == ["plan", "plan/batches.parquet", "plan/queries.parquet"]


# --------------------------------------------------------------------------------------------
# finding 2: another program's manifest.json
# --------------------------------------------------------------------------------------------
def test_tpch_generate_keeps_a_directory_with_another_programs_manifest(tmp_path: Path) -> None:
    app = tmp_path / "app"
    (app / "src").mkdir(parents=True)
    (app / "src" / "app.js").write_text("console.log('mine')\n", encoding="utf-8")
    (app / tpch.MANIFEST).write_text(json.dumps(FOREIGN_MANIFEST), encoding="utf-8")
    before = tree(tmp_path)
    line = refused(run_cli("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", app, cwd=tmp_path),
                   app, "--out")
    assert "manifest.json of another program" in line
    assert tree(tmp_path) == before


@pytest.mark.parametrize("text", ["[1, 2, 3]", "null", "\"scale\"", "{\"scale\": 0.01, \"parts\": 2, \"files\": 7}",
                                  "not json"])
def test_tpch_generate_refuses_a_manifest_that_is_not_ours_in_one_line(text: str, tmp_path: Path) -> None:
    out = tmp_path / "gen"
    out.mkdir()
    (out / tpch.MANIFEST).write_text(text, encoding="utf-8")
    before = tree(tmp_path)
    refused(run_cli("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", out, cwd=tmp_path), out, "--out")
    assert tree(tmp_path) == before


def test_tpch_generate_keeps_a_users_file_put_into_a_generation(generation: Path, tmp_path: Path) -> None:
    gen = copy_of(generation, tmp_path / "gen")
    (gen / "orders" / "notes.txt").write_text("mine", encoding="utf-8")
    (gen / "orders" / "orders.2.parquet").write_bytes(b"damaged")  # would be regenerated if alone
    before = tree(tmp_path)
    line = refused(run_cli("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", gen, cwd=tmp_path),
                   gen, "--out")
    assert "orders/notes.txt" in line
    assert tree(tmp_path) == before


@pytest.mark.parametrize("manifest", ["foreign", "list", "missing"])
def test_tpch_run_data_with_a_manifest_not_ours_is_refused_before_spark(manifest: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "src").mkdir(parents=True)
    (data / "src" / "app.js").write_text("mine", encoding="utf-8")
    if manifest != "missing":
        text = json.dumps(FOREIGN_MANIFEST) if manifest == "foreign" else "[]"
        (data / tpch.MANIFEST).write_text(text, encoding="utf-8")
    line = _refused_tpch_run(data, tmp_path)
    assert line.startswith(f"staleness-lab: error: --data: {data}: not a TPC-H generation of staleness-lab's")


def _refused_tpch_run(data: Path, tmp_path: Path) -> str:
    """``tpch run --data DATA`` on a query set: its one error line, refused before Spark starts
    with nothing written under ``tmp_path``."""
    queries = queries_file(tmp_path / "qs.yaml")
    before = tree(tmp_path)
    line = one_error_line(run_cli("tpch", "run", queries, "--scheme", "llf", "--data", data, "--out", tmp_path / "run",
                                  cwd=tmp_path))
    assert tree(tmp_path) == before
    return line


# --------------------------------------------------------------------------------------------
# finding 3: a damaged generation is never complete
# --------------------------------------------------------------------------------------------
def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: only the checksum sees it
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_truncate, _flip_a_byte], ids=["truncated", "same-size-edit"])
def test_tpch_generate_regenerates_a_damaged_generation(damage, generation: Path, tmp_path: Path) -> None:
    gen = copy_of(generation, tmp_path / "gen")
    damage(gen / "lineitem" / "lineitem.2.parquet")
    proc = run_cli("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", gen, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == f"{gen}: generated", (proc.stdout, proc.stderr)
    manifest = tpch.check_generation(gen)  # sizes and checksums match again
    assert manifest["producer"] == "staleness-lab" and manifest["kind"] == "tpch-generation"
    assert all({"size", "sha256"} <= set(f) for f in manifest["files"])
    assert sorted(tree(gen)) == sorted(tree(generation))
    again = run_cli("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", gen, cwd=tmp_path)
    assert again.returncode == 0 and "up to date" in again.stdout  # a sound one is still skipped
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"]  # nothing aside left behind


@pytest.mark.parametrize("damage", [_truncate, _flip_a_byte], ids=["truncated", "same-size-edit"])
def test_tpch_run_names_a_damaged_part_before_spark(damage, generation: Path, tmp_path: Path) -> None:
    gen = copy_of(generation, tmp_path / "gen")
    damage(gen / "orders" / "orders.2.parquet")
    line = _refused_tpch_run(gen, tmp_path)
    assert line.startswith(f"staleness-lab: error: --data: {gen}: damaged TPC-H generation (orders/orders.2.parquet: ")


def test_a_generation_written_by_version_1_is_still_ours(generation: Path, tmp_path: Path) -> None:
    """A manifest without the marker, sizes or checksums (what the earlier code wrote) is
    recognised: read for ``tpch run`` (rows checked) and regenerated by ``tpch generate``."""
    gen = copy_of(generation, tmp_path / "gen")
    manifest = json.loads((gen / tpch.MANIFEST).read_text(encoding="utf-8"))
    for key in ("producer", "kind", "version"):
        del manifest[key]
    for f in manifest["files"]:
        del f["size"], f["sha256"]
    (gen / tpch.MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    assert tpch.check_generation(gen)["parts"] == int(PARTS)
    proc = run_cli("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", gen, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == f"{gen}: generated", proc.stderr
    assert "sha256" in tpch.check_generation(gen)["files"][0]


# --------------------------------------------------------------------------------------------
# every output option of every command
# --------------------------------------------------------------------------------------------
OUTPUT_OPTIONS = ("--out", "--trace-out")


def _commands(prefix: tuple[str, ...], cwd: Path) -> list[tuple[tuple[str, ...], str]]:
    """``(command words, option)`` for every output option in the help, recursively."""
    proc = run_cli(*prefix, "--help", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    found = [(prefix, option) for option in OUTPUT_OPTIONS if re.search(rf"^\s+{re.escape(option)}\b", text, re.M)]
    choices = re.search(r"^positional arguments:\n\s+\{([a-z,-]+)\}", text, re.M)
    for word in (choices.group(1).split(",") if choices else []):
        if word != "bench":  # bench passes its arguments through to the benchmark script
            found += _commands((*prefix, word), cwd)
    return found


def _arguments(command: tuple[str, ...], tmp_path: Path) -> list[str | Path]:
    """The smallest valid arguments of each command with an output option (new ones fail here)."""
    grid = tmp_path / "grid.yaml"
    grid.write_text("policy: [fifo]\nfixed: {horizon: 200.0, n_tables: 3}\n", encoding="utf-8")
    table: dict[tuple[str, ...], list[str | Path]] = {
        ("simulate",): [DEMO, "--policy", "edf", "--horizon", "50"],
        ("sweep",): ["baseline-utilization", "--grid", grid, "--runner", "local", "--cache", tmp_path / "cache"],
        ("report",): ["--quick"],
        ("plan",): [E5, "--scheme", "edf"],
        ("tpch", "generate"): ["--scale", SCALE, "--parts", PARTS],
        ("tpch", "calibrate"): ["--scale", SCALE],
        ("tpch", "run"): [queries_file(tmp_path / "qs.yaml"), "--scheme", "llf", "--data", tmp_path / "no-data"],
        ("workflow", "run"): [WORKFLOW],
    }
    assert command in table, f"{' '.join(command)} has an output option: add it to this table"
    return table[command]


def test_every_output_option_refuses_a_symbolic_link_and_a_foreign_directory(tmp_path: Path) -> None:
    found = _commands((), tmp_path)
    assert {(" ".join(c), o) for c, o in found} >= {
        ("simulate", "--trace-out"), ("plan", "--out"), ("sweep", "--out"), ("report", "--out"),
        ("tpch generate", "--out"), ("tpch calibrate", "--out"), ("tpch run", "--out"),
        ("workflow run", "--trace-out")}
    for command, option in found:
        where = tmp_path / "-".join((*command, option.strip("-")))
        where.mkdir()
        args = _arguments(command, where)
        theirs = where / "theirs"
        (theirs / "sub").mkdir(parents=True)
        (theirs / "notes.txt").write_text("mine", encoding="utf-8")
        (theirs / "sub" / "keep.bin").write_bytes(b"\x00\x01")
        link = where / "link"
        link.symlink_to(theirs, target_is_directory=True)
        before = tree(where)
        for target in (link, theirs):
            proc = run_cli(*command, *args, option, target, cwd=where, timeout=120)
            line = refused(proc, target, option)
            expected = "symbolic link" if target == link else ("is a directory" if command == ("sweep",) else RULE)
            assert expected in line, (command, line)
            assert tree(where) == before, (command, option, target)
