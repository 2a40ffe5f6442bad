"""TPC-H data for the intermittent-query experiments: streams of numbered Parquet parts.

Chandrasekaran & Sudarshan stream TPC-H's orders and lineitem as files arriving one per second
(digest §5-6) and keep the six other tables static. :func:`generate` runs the ``tpchgen-cli``
generator (a Rust binary from PyPI, no Python API) and rewrites its Parquet output with pyarrow
(no pyspark here)::

    data/tpch/sf<SF>-p<P>/
        orders/orders.<k>.parquet       k = 1..P, each row with arrival_ts = T0 + (k-1) s
        lineitem/lineitem.<k>.parquet   the same k: part k of both holds the same o_orderkey range
        static/<table>.parquet          customer, nation, region, part, partsupp, supplier
        manifest.json                   this program's marker, SF, P, the generator's version, T0,
                                        and per file its rows, arrival, size and sha256

Part k of orders and part k of lineitem cover the same order keys (the generator's parts split
the order key range), which is the paper's assumption that matching orders and lineitems arrive
in the same batch. Types stay exact: decimal(15,2) and date from the generator; its Arrow string
views become plain strings (Spark reads those), and ``arrival_ts`` is a UTC timestamp for
streaming watermarks.

Everything is written into a hidden temporary directory beside the target and renamed into place
when complete, so a killed run never leaves a directory that looks finished; a rerun skips only
when the target's manifest matches (SF, P, generator version, T0) and every listed file has the
size and sha256 the manifest records, and otherwise replaces the earlier generation: a damaged
one (a truncated or edited part) is regenerated, never taken as complete. Only a generation of
this program's is ever replaced (the rule of :mod:`staleness_lab.outputs`): a directory whose
``manifest.json`` is another program's (or no JSON object), that holds files besides the
generation's, or a symbolic link, file, device or FIFO at the target is refused before the
generator runs. :func:`check_generation` checks a generation's files before they are used
(``tpch run --data``).
``tpchgen-cli`` itself skips files that already exist, with a warning and exit 0, without
checking them: it only ever writes into a fresh temporary directory here.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from staleness_lab import outputs
from staleness_lab.errors import InputError
from staleness_lab.held_signals import communicate, signals_held
from staleness_lab.provenance import building_directory

STREAMS = ("orders", "lineitem")
STATIC = ("customer", "nation", "region", "part", "partsupp", "supplier")
#: When part 1 arrives; part k arrives k - 1 seconds later (λ = 1 file per second).
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
MANIFEST = "manifest.json"
#: The marker of a generation's manifest (:func:`staleness_lab.outputs.marker`); version 1 had none.
MANIFEST_KIND = "tpch-generation"
MANIFEST_VERSION = 2
GENERATOR = "tpchgen-cli"
#: Limits that keep a typo from filling the disk: SF 1 is about 1 GB of TPC-H data.
MAX_SCALE = 1000.0
MAX_PARTS = 100_000


def generator_path() -> Path:
    """``tpchgen-cli``: beside this Python first (``make test`` runs ``.venv/bin/python`` without
    the venv on PATH), then on PATH; an :class:`InputError` saying how to install it otherwise."""
    beside = Path(sys.executable).parent / GENERATOR
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(GENERATOR)
    if found:
        return Path(found)
    raise InputError(GENERATOR, "the TPC-H generator is not installed: `make setup` installs it "
                                "(or `pip install 'tpchgen-cli>=4,<5'`)")


def generator_version(binary: Path | None = None) -> str:
    """The generator's version string, e.g. ``tpchgen-cli 4.0.0``."""
    out = subprocess.run([str(binary or generator_path()), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def check_scale(scale: Any, field: str = "--scale") -> float:
    """A scale factor: a finite number in (0, MAX_SCALE]."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise InputError(field, f"must be a finite number, got {scale!r}")
    if not 0 < scale <= MAX_SCALE:
        raise InputError(field, f"must be > 0 and <= {MAX_SCALE:g}, got {scale:g}")
    return float(scale)


def check_parts(parts: Any, field: str = "--parts") -> int:
    """A part count: an integer in [1, MAX_PARTS]."""
    if isinstance(parts, bool) or not isinstance(parts, int):
        raise InputError(field, f"must be an integer, got {parts!r}")
    if not 1 <= parts <= MAX_PARTS:
        raise InputError(field, f"must be between 1 and {MAX_PARTS}, got {parts}")
    return parts


def default_dir(scale: float, parts: int) -> Path:
    """``data/tpch/sf<SF>-p<P>`` under the data root (the checkout, else the working directory)."""
    from staleness_lab.paths import data_root

    return data_root() / "data" / "tpch" / f"sf{scale:g}-p{parts}"


def arrival(part: int, t0: datetime = T0) -> datetime:
    """When stream part ``part`` (1-based) arrives: ``T0 + (part - 1)`` seconds."""
    return t0 + timedelta(seconds=part - 1)


def expected_files(parts: int) -> list[tuple[str, int | None, str]]:
    """``(table, part, path)`` of every file of a generation in ``parts`` stream parts, in the
    order they are written: each stream part k of orders and lineitem, then the static tables."""
    rows: list[tuple[str, int | None, str]] = [
        (table, k, f"{table}/{table}.{k}.parquet") for k in range(1, parts + 1) for table in STREAMS]
    return rows + [(table, None, f"static/{table}.parquet") for table in STATIC]


def _well_formed(document: dict[str, Any], checksums: bool) -> bool:
    """The shape of a generation's manifest: a scale, a part count, the generator's name, T0,
    and exactly the files of :func:`expected_files` (each with its rows; with ``checksums``,
    its size in bytes and its sha256)."""
    scale, parts, files = document.get("scale"), document.get("parts"), document.get("files")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (math.isfinite(scale) and scale > 0):
        return False
    if type(parts) is not int or not 1 <= parts <= MAX_PARTS or not isinstance(files, list):
        return False
    if not isinstance(document.get("generator"), str) or not document["generator"].startswith(GENERATOR):
        return False
    if not isinstance(document.get("t0"), str) or not all(isinstance(f, dict) for f in files):
        return False
    listed = [(f.get("table"), f.get("part"), f.get("path")) for f in files]
    if listed != expected_files(parts):
        return False
    for f in files:
        if type(f.get("rows")) is not int or f["rows"] < 0:
            return False
        if checksums and (type(f.get("size")) is not int or f["size"] < 0 or not _is_sha256(f.get("sha256"))):
            return False
    return True


def _is_sha256(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def manifest_is_ours(document: Any) -> bool:
    """True when ``document`` is the manifest of a generation this program wrote: the marker
    ``{"producer": "staleness-lab", "kind": "tpch-generation", "version": 2}`` with a well-formed
    body (every file with rows, size and sha256), or the unmarked form version 1 wrote (no
    ``producer`` key, the same body without sizes and checksums, ``generator`` naming
    ``tpchgen-cli``)."""
    if outputs.manifest_is_ours(document, MANIFEST_KIND, (MANIFEST_VERSION,)):
        return _well_formed(document, checksums=True)
    return isinstance(document, dict) and "producer" not in document and _well_formed(document, checksums=False)


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The directory's manifest when it is one of this program's (:func:`manifest_is_ours`);
    None when it has none, it cannot be read, or it is another program's (or not an object)."""
    try:
        document = json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if manifest_is_ours(document) else None


def _stranger(directory: Path) -> str | None:
    """``owns`` test of :func:`check_generation_dir`: None when ``directory`` holds a generation
    of this program's and nothing else (its manifest, and under orders/, lineitem/ and static/
    only regular files the manifest lists), else what is not."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None:
        return f"a {MANIFEST} of another program" if os.path.lexists(directory / MANIFEST) else f"no {MANIFEST}"
    listed = {f["path"] for f in manifest["files"]}
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if entry.name == MANIFEST and entry.is_file(follow_symlinks=False):
            continue
        if entry.name not in (*STREAMS, "static") or not entry.is_dir(follow_symlinks=False):
            return entry.name
        for inner in sorted(os.scandir(entry.path), key=lambda e: e.name):
            if f"{entry.name}/{inner.name}" not in listed or not inner.is_file(follow_symlinks=False):
                return f"{entry.name}/{inner.name}"
    return None


def check_generation_dir(target: Path, option: str = "--out") -> None:
    """The rule of :mod:`staleness_lab.outputs` for a generation's directory: missing, empty, or
    a generation of this program's with nothing else in it (:func:`manifest_is_ours`; it is then
    skipped when complete, else replaced). A directory of the user's, another program's
    manifest, a symbolic link, a file, a device or a FIFO is refused, before the generator runs."""
    outputs.check_output_directory(Path(target), option, _stranger,
                                   hint="give a new or empty directory or an earlier TPC-H generation")


def file_sha256(path: Path) -> str:
    """sha256 (hex) of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def damage(directory: Path, manifest: dict[str, Any], *, checksums: bool = True) -> str | None:
    """The first listed file that does not match ``manifest`` (``"<path>: <what>"``), or None.

    Each file must be a regular file (not a link) of the size the manifest lists and, with
    ``checksums``, of its sha256. A version-1 manifest lists neither: its files must exist and
    their Parquet footers hold the rows listed."""
    directory = Path(directory)
    for f in manifest["files"]:
        path = directory / f["path"]
        try:
            found = os.lstat(path)
        except OSError:
            return f"{f['path']}: missing"
        if not stat.S_ISREG(found.st_mode):
            return f"{f['path']}: not a regular file"
        if "size" not in f:  # version 1: no sizes or checksums recorded
            import pyarrow.parquet as pq

            try:
                rows = pq.read_metadata(path).num_rows
            except Exception:  # noqa: BLE001 - unreadable Parquet is damage
                return f"{f['path']}: not readable as Parquet"
            if rows != f["rows"]:
                return f"{f['path']}: {rows} rows, the manifest lists {f['rows']}"
            continue
        if found.st_size != f["size"]:
            return f"{f['path']}: {found.st_size} bytes, the manifest lists {f['size']}"
        if checksums and file_sha256(path) != f["sha256"]:
            return f"{f['path']}: its sha256 differs from the manifest's"
    return None


def check_generation(directory: Path, field: str = "--data", *, files: bool = True,
                     checksums: bool = True) -> dict[str, Any]:
    """The manifest of the generation at ``directory`` once it is recognised as this program's
    (:func:`read_manifest`) and, with ``files``, its files check out (:func:`damage`, with or
    without ``checksums``), before any use of them; an :class:`InputError` naming ``field`` and
    the directory (and the first damaged part) otherwise."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None:
        what = "is another program's" if os.path.lexists(directory / MANIFEST) else "is missing or unreadable"
        raise InputError(field, f"{directory}: not a TPC-H generation of staleness-lab's (its {MANIFEST} {what}); "
                                "run `staleness-lab tpch generate`")
    problem = damage(directory, manifest, checksums=checksums) if files else None
    if problem is not None:
        raise InputError(field, f"{directory}: damaged TPC-H generation ({problem}); regenerate it with "
                                f"`staleness-lab tpch generate --out {directory}`")
    return manifest


def is_complete(directory: Path, scale: float, parts: int, version: str) -> bool:
    """True when ``directory`` holds a version-2 generation of ``scale`` and ``parts`` by
    ``version`` whose every listed file has the size and sha256 its manifest lists (what a
    rerun may skip). A damaged or version-1 generation is not complete: it is regenerated."""
    manifest = read_manifest(directory)
    if manifest is None or "size" not in manifest["files"][0]:
        return False
    if (manifest.get("scale"), manifest.get("parts"), manifest.get("generator"), manifest.get("t0")) != (
            scale, parts, version, T0.isoformat()):
        return False
    return damage(directory, manifest) is None


def generate(scale: float, parts: int, out: Path | None = None, *, progress: bool = False,
             option: str = "--out") -> tuple[Path, bool]:
    """Generate (or find) the TPC-H files of ``scale`` in ``parts`` stream parts (module
    docstring). Returns the directory and whether it was generated now (False: skipped, its
    manifest matched and every file its size and checksum). The target is checked by the rule
    of :mod:`staleness_lab.outputs` first (:func:`check_generation_dir`; a refusal names
    ``option``)."""
    scale, parts = check_scale(scale), check_parts(parts)
    target = Path(out) if out is not None else default_dir(scale, parts)
    check_generation_dir(target, option)
    binary = generator_path()
    version = generator_version(binary)
    if is_complete(target, scale, parts, version):
        return target, False
    # an older, mismatched generation goes only once this is in; a write the system refuses is one line
    with outputs.writing(target, option), building_directory(target) as work:
        _generate_into(work, binary, scale, parts, version, progress)
        check_generation_dir(target, option)  # again just before the swap: what is there is still ours
    return target, True


def _generate_into(work: Path, binary: Path, scale: float, parts: int, version: str, progress: bool) -> None:
    raw = work / ".raw"
    _run(binary, ["parquet", "-s", f"{scale:g}", f"--tables={','.join(STREAMS)}", f"--parts={parts}",
                  "-o", str(raw / "stream")])
    _run(binary, ["parquet", "-s", f"{scale:g}", f"--tables={','.join(STATIC)}", "-o", str(raw / "static")])
    files: list[dict[str, Any]] = []
    steps = [(table, k) for k in range(1, parts + 1) for table in STREAMS]
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc="rewriting TPC-H parts", unit="file")
    for table, k in steps:
        path = Path(table) / f"{table}.{k}.parquet"
        rows = _rewrite(raw / "stream" / table / f"{table}.{k}.parquet", work / path, arrival(k))
        files.append({"table": table, "part": k, "path": path.as_posix(), "rows": rows,
                      "arrival_ts": arrival(k).isoformat(), **_size_and_sha256(work / path)})
    for table in STATIC:
        path = Path("static") / f"{table}.parquet"
        rows = _rewrite(raw / "static" / f"{table}.parquet", work / path, None)
        files.append({"table": table, "part": None, "path": path.as_posix(), "rows": rows, "arrival_ts": None,
                      **_size_and_sha256(work / path)})
    shutil.rmtree(raw)
    manifest = {**outputs.marker(MANIFEST_KIND, MANIFEST_VERSION), "scale": scale, "parts": parts,
                "generator": version, "t0": T0.isoformat(), "rate_files_per_second": 1, "files": files}
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _size_and_sha256(path: Path) -> dict[str, Any]:
    return {"size": path.stat().st_size, "sha256": file_sha256(path)}


def _run(binary: Path, args: list[str]) -> None:
    """Run the generator to its end; a signal that stops this process stops the generator too.

    ``subprocess.run`` kills its child when the signal's exception reaches ``communicate``, but
    not when it lands while ``Popen`` is still starting the child: that child was left running,
    writing into a directory the cleanup had removed. The start is held (:func:`signals_held`),
    so a signal raises only once the child has a handle, inside the block that kills it. The
    wait for it runs in slices (:func:`~staleness_lab.held_signals.communicate`): a signal
    another thread took is acted on within one."""
    child: subprocess.Popen[str] | None = None
    try:
        with signals_held():
            child = subprocess.Popen([str(binary), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        stdout, stderr = communicate(child)
    except BaseException:
        if child is not None:
            child.kill()
            child.communicate()
        raise
    if child.returncode < 0:  # e.g. SIGXFSZ past ``ulimit -f``, SIGKILL from the OOM killer
        raise InputError(GENERATOR, f"killed by {signal.Signals(-child.returncode).name}")
    if child.returncode != 0:
        first = (stderr or stdout).strip().splitlines()[:1]
        raise InputError(GENERATOR, f"failed (exit {child.returncode}): {first[0] if first else 'no message'}")


def _rewrite(source: Path, dest: Path, arrived: datetime | None) -> int:
    """Copy one Parquet file with string views as strings and, for a stream part, its
    ``arrival_ts`` column; return its row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(source)
    fields = [pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type, nullable=f.nullable)
              for f in table.schema]
    table = table.cast(pa.schema(fields))
    if arrived is not None:
        stamp = pa.array([arrived] * table.num_rows, type=pa.timestamp("us", tz="UTC"))
        table = table.append_column(pa.field("arrival_ts", stamp.type, nullable=False), stamp)
    dest.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, dest)
    return table.num_rows
