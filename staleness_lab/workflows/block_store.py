"""The block store of the ``spark`` mode: one run's blocks as Parquet directories with atomically
committed manifests (digest §8 "Layout", "Commit", "Manifest" [D]; the issue's "Spark store and
commit"). No pyspark here: whoever writes a block's data passes a function that fills a
directory (Spark in :mod:`staleness_lab.spark.workflows.executor`, pyarrow for input arrivals),
and ``workflow verify`` reads only manifests and Parquet footers.

**Layout.** A run lives in ``<store>/<workflow>/<scenario>-<scheduler>-s<seed>/``: ``run.json``
(the workflow's SHA-256, seed, horizon, options, version), the data of block ``id`` of a channel
in ``<channel>/<id>/part-*.parquet`` and its manifest in ``<channel>/_blocks/<id>.json``. A
chain's manifest lists its parts (the ids it chains) and moves no data.

**Commit.** The data goes to a hidden ``<channel>/.<id>.tmp-<uuid>/``, renamed to ``<id>/``;
then the manifest goes to a hidden temporary file in ``_blocks/``, is fsynced and
``os.replace``-d into ``<id>.json`` (and the directory fsynced). A block exists iff its manifest
does; readers list manifests only, so a crash at any point leaves only earlier blocks visible
and some orphans (hidden temporaries, data directories without a manifest) that a resumed run
removes and :func:`verify` lists.

**Paths.** The workflow's and channels' names are safe path components (checked when the
workflow loads, and again here); :meth:`BlockStore.check` (run by :meth:`BlockStore.open`, and
by the command line before Spark starts) refuses a root that cannot be a writable directory
and a run directory resolving outside the root, and every commit checks that the directory it
writes in resolves under the run's directory.

**Crash injection.** ``STALENESS_LAB_CRASH_AT=n:point`` makes the ``n``-th data commit of the
process (1-based) end the process with ``os._exit(75)`` right after ``point``: ``data`` (the
temporary directory is written), ``rename`` (it has its final name) or ``manifest`` (the
manifest's temporary file is written and fsynced, not yet replaced). Tests use it to check
that a resumed run ends with the manifests of an uninterrupted one.

**Ids** hash (channel, type, from, to) and the producing invocation (its place in the run's
log, operator, variant, input ids and virtual time), so a replayed run names every block as
the first run did, and a block made twice (retired, then made again) gets two ids.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from staleness_lab.errors import InputError
from staleness_lab.jsonout import canonical_json
from staleness_lab.paths import data_root, path_within, safe_name
from staleness_lab.workflows.blocks import Block
from staleness_lab.workflows.provenance import Provenance

RUN_FILE = "run.json"
MANIFESTS = "_blocks"
CRASH_ENV = "STALENESS_LAB_CRASH_AT"
CRASH_POINTS = ("data", "rename", "manifest")
#: The exit status of an injected crash (EX_TEMPFAIL: the run can be resumed).
CRASH_STATUS = 75
#: Hex characters of a block id (80 bits).
ID_CHARS = 20


def default_store() -> Path:
    """``data/warehouse`` under the data root (git-ignored)."""
    return data_root() / "data" / "warehouse"


def check_writable_dir(path: Path, field: str) -> Path:
    """Before any work: ``path`` is a directory this process can write in, or can be created as
    one (its nearest existing ancestor is such a directory); else an :class:`InputError`
    naming ``field`` (a path under a regular file, a dangling link, no write permission)."""
    path = Path(path)
    probe = path
    while not probe.exists():
        if probe.is_symlink():
            raise InputError(field, f"{probe} is a dangling symbolic link")
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        below = "" if probe == path else f" ({path} cannot be created under it)"
        raise InputError(field, f"{probe} exists and is not a directory{below}")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(field, f"{probe} is not writable by this process")
    return path


def provenance_json(p: Provenance | None) -> list[list[float]] | None:
    """A provenance as lists of sorted times (the manifest's ``from`` and ``to``)."""
    return None if p is None else [sorted(e) for e in p]


def block_id(block: Block, producer: str) -> str:
    """The id of ``block`` made by ``producer`` (module docstring)."""
    key = [block.channel, block.kind, provenance_json(block.frm), provenance_json(block.to), producer]
    return hashlib.sha256(canonical_json(key).encode()).hexdigest()[:ID_CHARS]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_json_atomically(path: Path, value: dict[str, Any], before_replace: Callable[[], None] = lambda: None) -> None:
    tmp = path.parent / f".{path.name}.tmp-{uuid.uuid4().hex}"
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(value, out, indent=1, sort_keys=True, allow_nan=False)
        out.flush()
        os.fsync(out.fileno())
    before_replace()
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _parse_crash(text: str | None) -> tuple[int, str] | None:
    if not text:
        return None
    n, sep, point = text.partition(":")
    if not sep or not n.strip().isdigit() or int(n) < 1 or point not in CRASH_POINTS:
        raise InputError(CRASH_ENV, f"must be n:point with n >= 1 and point one of {', '.join(CRASH_POINTS)}, got {text!r}")
    return int(n), point


def parquet_files(directory: Path) -> list[Path]:
    """The Parquet part files of a block's data directory, sorted by name."""
    return sorted(p for p in directory.iterdir() if p.name.startswith("part-") and p.name.endswith(".parquet"))


@dataclass
class BlockStore:
    """One run's directory (module docstring); ``run`` is what ``run.json`` holds."""

    root: Path
    workflow: str
    name: str
    run: dict[str, Any]
    commits: int = 0
    crash: tuple[int, str] | None = field(default_factory=lambda: _parse_crash(os.environ.get(CRASH_ENV)))

    @property
    def dir(self) -> Path:
        return Path(self.root) / self.workflow / self.name

    def check(self) -> None:
        """Before any work: the workflow and run names are safe path components
        (:func:`~staleness_lab.paths.safe_name`), the run's directory resolves under the root
        (:func:`~staleness_lab.paths.path_within`: no link inside the store leads out) and it
        is, or can be created as, a writable directory."""
        safe_name(self.workflow, "name")
        safe_name(self.name, "run")
        path_within(self.root, self.dir, "--store")
        check_writable_dir(self.dir, "--store")

    def _within(self, path: Path) -> Path:
        """``path`` if it resolves under the run's directory (checked before each write)."""
        path_within(self.dir, path, "--store")
        return path

    def open(self) -> bool:
        """Check the store (:meth:`check`), then create the run's directory, or resume it: True
        when a ``run.json`` was there (it must equal this run's, else bad input) and the
        orphans it left were removed."""
        self.check()
        path = self.dir / RUN_FILE
        if path.exists():
            try:
                found = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                raise InputError("--store", f"{path}: unreadable run.json ({err})") from err
            if found != self.run:
                differs = sorted(k for k in set(found) | set(self.run) if found.get(k) != self.run.get(k))
                raise InputError("--store", f"{self.dir} holds another run (run.json differs in {', '.join(differs)}); "
                                            "remove it or choose another --store")
            self.remove_orphans()
            return True
        if self.dir.exists() and any(self.dir.iterdir()):
            raise InputError("--store", f"{self.dir} is not empty and has no run.json")
        self.dir.mkdir(parents=True, exist_ok=True)
        _write_json_atomically(path, self.run)
        return False

    # -- reading -------------------------------------------------------------------------------
    def manifest(self, channel: str, bid: str) -> dict[str, Any] | None:
        """The manifest of block ``bid`` of ``channel``, or None if it is not committed."""
        path = self.dir / channel / MANIFESTS / f"{bid}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def data_dir(self, channel: str, bid: str) -> Path:
        return self.dir / channel / bid

    # -- committing ----------------------------------------------------------------------------
    def commit_data(self, block: Block, bid: str, write: Callable[[Path], None], meta: dict[str, Any]) -> dict[str, Any]:
        """Commit a block whose data ``write`` puts in the directory it is given (module
        docstring); returns the manifest, with rows, deletions and bytes from the files."""
        channel_dir = self._within(self.dir / safe_name(block.channel, "channel"))
        channel_dir.mkdir(parents=True, exist_ok=True)
        tmp = channel_dir / f".{bid}.tmp-{uuid.uuid4().hex}"
        self.commits += 1
        write(tmp)
        self._crash("data")
        final = channel_dir / bid
        os.rename(tmp, final)
        _fsync_dir(channel_dir)
        self._crash("rename")
        parts = parquet_files(final)
        rows, deletes = _count_rows(parts)
        manifest = self._manifest(block, bid, meta, rows=rows, deletes=deletes,
                                  parts=[{"file": p.name, "bytes": p.stat().st_size} for p in parts])
        self._publish(block.channel, bid, manifest, crash=True)
        return manifest

    def commit_chain(self, block: Block, bid: str, parts: list[str], rows: int, deletes: int,
                     meta: dict[str, Any]) -> dict[str, Any]:
        """Commit a chain: a manifest listing the ids it chains, no data (digest §8)."""
        manifest = self._manifest(block, bid, meta, rows=rows, deletes=deletes, parts=parts)
        self._publish(block.channel, bid, manifest, crash=False)
        return manifest

    def _manifest(self, block: Block, bid: str, meta: dict[str, Any], **sizes: Any) -> dict[str, Any]:
        return {"channel": block.channel, "id": bid, "type": block.kind, "from": provenance_json(block.frm),
                "to": provenance_json(block.to), "label": block.label(), "seed": self.run.get("seed"), **meta, **sizes}

    def _publish(self, channel: str, bid: str, manifest: dict[str, Any], *, crash: bool) -> None:
        manifests = self._within(self.dir / safe_name(channel, "channel") / MANIFESTS)
        manifests.mkdir(parents=True, exist_ok=True)
        _write_json_atomically(manifests / f"{bid}.json", manifest,
                               before_replace=(lambda: self._crash("manifest")) if crash else (lambda: None))

    def _crash(self, point: str) -> None:
        if self.crash is not None and self.crash == (self.commits, point):
            os._exit(CRASH_STATUS)

    def remove_orphans(self) -> list[Path]:
        """Remove what no manifest names (hidden temporaries, data directories without a
        manifest); returns what was removed. Each is checked to resolve under the run's
        directory first (a channel directory linked elsewhere is refused, nothing removed)."""
        removed = list(orphans(self.dir))
        for path in removed:
            path_within(self.dir, path, "--store")
        for path in removed:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        return removed


def _count_rows(parts: list[Path]) -> tuple[int, int]:
    """Rows of the Parquet parts (footers), and how many have ``_sign`` < 0."""
    rows = deletes = 0
    for part in parts:
        f = pq.ParquetFile(part)
        rows += f.metadata.num_rows
        if "_sign" in f.schema_arrow.names and f.metadata.num_rows:
            signs = f.read(columns=["_sign"]).column(0).to_numpy(zero_copy_only=False)
            deletes += int((signs < 0).sum())
    return rows, deletes


# ---------------------------------------------------------------- verify

def run_dirs(store: Path) -> Iterator[Path]:
    """Every run directory (one holding ``run.json``) of ``store``: a run itself, a
    workflow's directory or the store's root (the layout's two levels; no walk through the
    blocks' data, which a running writer is renaming)."""
    store = Path(store)
    if (store / RUN_FILE).exists():
        yield store
        return
    yield from sorted(p.parent for p in (*store.glob(f"*/{RUN_FILE}"), *store.glob(f"*/*/{RUN_FILE}")))


def _channel_dirs(run: Path) -> Iterator[Path]:
    return (p for p in sorted(run.iterdir()) if p.is_dir() and not p.name.startswith("."))


def manifest_paths(run: Path) -> Iterator[Path]:
    """Every committed manifest of one run directory, by channel then id: what readers list
    (a block exists iff its manifest does)."""
    for channel in _channel_dirs(run):
        yield from sorted((channel / MANIFESTS).glob("*.json"))


def orphans(run: Path) -> Iterator[Path]:
    """Hidden temporaries and data directories without a manifest in one run directory."""
    if not run.exists():
        return
    named = {(p.parent.parent.name, p.stem) for p in manifest_paths(run)}
    for channel in _channel_dirs(run):
        manifests = channel / MANIFESTS
        for p in sorted(channel.iterdir()):
            if p.name.startswith(".") or (p.is_dir() and p.name != MANIFESTS and (channel.name, p.name) not in named):
                yield p
        if manifests.exists():
            yield from sorted(p for p in manifests.iterdir() if p.name.startswith("."))


@dataclass
class Verified:
    """What :func:`verify` found: blocks checked, orphans, and damage (one line each)."""

    runs: int = 0
    blocks: int = 0
    orphans: list[str] = field(default_factory=list)
    damage: list[str] = field(default_factory=list)


def verify(store: Path) -> Verified:
    """Check every manifest of every run under ``store`` against its data: the listed part
    files exist with their byte sizes, their footers hold the manifest's rows, a chain's parts
    are committed blocks; list orphans (harmless: invisible by the commit protocol)."""
    found = Verified()
    for run in run_dirs(store):
        found.runs += 1
        found.orphans.extend(str(p) for p in orphans(run))
        for path in manifest_paths(run):
            found.blocks += 1
            problem = _check_manifest(path.parent.parent, path)
            if problem:
                found.damage.append(f"{path}: {problem}")
    return found


def _check_manifest(channel: Path, path: Path) -> str | None:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return f"unreadable manifest ({err})"
    if manifest.get("id") != path.stem or manifest.get("channel") != channel.name:
        return f"names block {manifest.get('channel')}/{manifest.get('id')}"
    parts = manifest.get("parts")
    if not isinstance(parts, list):
        return "no parts list"
    if manifest.get("chain"):
        missing = [p for p in parts if not (channel / MANIFESTS / f"{p}.json").exists()]
        return f"chain part(s) not committed: {', '.join(missing)}" if missing else None
    data = channel / path.stem
    listed = {p["file"]: p["bytes"] for p in parts}
    if not data.is_dir():
        return f"data directory {data.name}/ is missing"
    present = {p.name: p.stat().st_size for p in parquet_files(data)}
    if present != listed:
        missing = sorted(set(listed) - set(present))
        extra = sorted(set(present) - set(listed))
        resized = sorted(n for n in set(listed) & set(present) if listed[n] != present[n])
        return f"data differs from the manifest: missing {missing}, unlisted {extra}, resized {resized}"
    try:
        rows = sum(pq.read_metadata(p).num_rows for p in parquet_files(data))  # footers only
    except (OSError, ValueError) as err:
        return f"unreadable Parquet ({err})"
    if rows != manifest.get("rows"):
        return f"{rows} rows in the data, {manifest.get('rows')} in the manifest"
    return None
