"""The block store of the ``spark`` mode: one run's blocks as Parquet directories with atomically
committed manifests (digest §8 "Layout", "Commit", "Manifest" [D]; the issue's "Spark store and
commit"). No pyspark here: whoever writes a block's data passes a function that fills a
directory (Spark in :mod:`staleness_lab.spark.workflows.executor`, pyarrow for input arrivals),
and ``workflow verify`` reads manifests, the parts' bytes and their Parquet footers.

**Layout.** A run lives in ``<store>/<workflow>/<scenario>-<scheduler>-s<seed>/``: ``run.json``
(the workflow's SHA-256, seed, horizon, options, version), the data of block ``id`` of a channel
in ``<channel>/<id>/part-*.parquet`` and its manifest in ``<channel>/_blocks/<id>.json``. A
chain's manifest lists its parts (the ids it chains) and moves no data.

**Commit.** The data goes to a hidden ``<channel>/.<id>.tmp-<uuid>/``, renamed to ``<id>/``;
then the manifest goes to a hidden temporary file in ``_blocks/``, is fsynced and
``os.replace``-d into ``<id>.json`` (and the directory fsynced). A block exists iff its manifest
does; readers list manifests only, so a crash at any point leaves only earlier blocks visible
and some orphans (hidden temporaries, data directories without a manifest) that a resumed run
removes and :func:`verify` lists; an exception during a commit (Ctrl-C, SIGTERM) removes the
commit's temporaries on its way out.

**Integrity.** A data block's manifest lists each part file with its byte size and SHA-256,
computed at commit; :func:`verify`, and a resumed run before it reuses a block, recompute them,
so one changed byte is damage. Entries are examined without following links and only regular
files are opened (:mod:`.store_files`): a link, FIFO or device where the store keeps a file or
directory is damage, never read, followed or removed. A manifest written before part checksums
existed is damage too ("written by an older version"): its parts cannot be vouched for, so the
run is to be made again in a new store rather than checked by footers alone.

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
import stat
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
from staleness_lab.workflows.store_files import NotRegular, file_sum, is_dir, kind, not_a, open_regular, part_sum, read_json

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
    try:
        with open(tmp, "x", encoding="utf-8") as out:
            json.dump(value, out, indent=1, sort_keys=True, allow_nan=False)
            out.flush()
            os.fsync(out.fileno())
        before_replace()
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
    _fsync_dir(path.parent)


def _remove(path: Path) -> None:
    """Remove this process's temporary ``path`` if it is there (a directory, or anything else
    unlinked without following a link)."""
    if is_dir(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def _parse_crash(text: str | None) -> tuple[int, str] | None:
    if not text:
        return None
    n, sep, point = text.partition(":")
    if not sep or not n.strip().isdigit() or int(n) < 1 or point not in CRASH_POINTS:
        raise InputError(CRASH_ENV, f"must be n:point with n >= 1 and point one of {', '.join(CRASH_POINTS)}, got {text!r}")
    return int(n), point


def parquet_files(directory: Path) -> list[Path]:
    """The Parquet part entries of a block's data directory, sorted by name (whatever their
    file type: :func:`data_problem` opens only regular files)."""
    return sorted(p for p in directory.iterdir() if p.name.startswith("part-") and p.name.endswith(".parquet"))


def part_entries(parts: list[Path]) -> list[dict[str, Any]]:
    """A data manifest's ``parts``: each part file's name, byte size and SHA-256."""
    sums = [part_sum(p) for p in parts]
    return [{"file": p.name, "bytes": size, "sha256": digest} for p, (size, digest) in zip(parts, sums)]


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
        is, or can be created as, a writable directory; a run to resume is checked whole
        (:meth:`_check_resumable`)."""
        self._check_paths()
        if os.path.lexists(self.dir / RUN_FILE):
            self._check_resumable()

    def _check_paths(self) -> None:
        safe_name(self.workflow, "name")
        safe_name(self.name, "run")
        path_within(self.root, self.dir, "--store")
        check_writable_dir(self.dir, "--store")

    def _check_resumable(self) -> list[Path]:
        """A run directory to resume: its ``run.json`` equals this run's, its layout holds no
        link or other stray (:func:`strays`; a channel directory linked elsewhere is refused),
        no orphan is :func:`foreign` (a resume neither follows nor removes a link)
        and every committed block is sound (:func:`check_block`: each part's size and SHA-256,
        so a changed byte is never carried forward). Returns the orphans, which may be
        removed; anything else is an :class:`InputError`."""
        path = self.dir / RUN_FILE
        try:
            found = read_json(path)
        except (OSError, ValueError) as err:
            raise InputError("--store", f"{path}: unreadable run.json ({err})") from err
        if found != self.run:
            differs = sorted(k for k in set(found) | set(self.run) if found.get(k) != self.run.get(k))
            raise InputError("--store", f"{self.dir} holds another run (run.json differs in {', '.join(differs)}); "
                                        "remove it or choose another --store")
        for entry, problem in strays(self.dir):
            raise InputError("--store", f"{entry} {problem}: a resumed run neither follows nor removes it; remove it "
                                        "or choose another --store")
        removable = list(orphans(self.dir))
        for orphan in removable:
            problem = foreign(orphan)
            if problem is not None:
                raise InputError("--store", f"{problem}: not made by staleness-lab, so a resumed run neither "
                                            "follows nor removes it; remove it or choose another --store")
        damaged = [(p, problem) for p in manifest_paths(self.dir) if (problem := check_block(p.parent.parent, p)[1])]
        if damaged:
            first, problem = damaged[0]
            raise InputError("--store", f"{first}: {problem} ({len(damaged)} damaged block(s); `staleness-lab "
                                        "workflow verify` lists them): a resumed run reuses only sound blocks, "
                                        "so remove the run or choose another --store")
        return removable

    def _within(self, path: Path) -> Path:
        """``path`` if it resolves under the run's directory (checked before each write)."""
        path_within(self.dir, path, "--store")
        return path

    def open(self) -> bool:
        """Check the store (:meth:`check`), then create the run's directory, or resume it: True
        when a ``run.json`` was there (it must equal this run's, else bad input) and the
        orphans it left were removed. A resume is checked here again (once: by
        :meth:`remove_orphans`), since the store may have changed since a caller's check
        before Spark started."""
        self._check_paths()
        if os.path.lexists(self.dir / RUN_FILE):
            self.remove_orphans()
            return True
        if self.dir.exists() and any(self.dir.iterdir()):
            raise InputError("--store", f"{self.dir} is not empty and has no run.json")
        self.dir.mkdir(parents=True, exist_ok=True)
        _write_json_atomically(self.dir / RUN_FILE, self.run)
        return False

    # -- reading -------------------------------------------------------------------------------
    def manifest(self, channel: str, bid: str) -> dict[str, Any] | None:
        """The manifest of block ``bid`` of ``channel``, or None if it is not committed (read
        as a regular file only; the block's data were checked when the run opened)."""
        path = self.dir / channel / MANIFESTS / f"{bid}.json"
        if not os.path.lexists(path):
            return None
        manifest, problem = check_block(path.parent.parent, path, data=False)
        if problem is not None or manifest is None:
            raise InputError("--store", f"{path}: {problem}; `staleness-lab workflow verify` lists the damage: "
                                        "choose another --store")
        return manifest

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
        final = channel_dir / bid
        try:
            write(tmp)
            self._crash("data")
            os.rename(tmp, final)
        except BaseException:
            _remove(tmp)
            raise
        _fsync_dir(channel_dir)
        self._crash("rename")
        try:
            parts = parquet_files(final)
            rows, deletes = _count_rows(parts)
            manifest = self._manifest(block, bid, meta, rows=rows, deletes=deletes, parts=part_entries(parts))
            self._publish(block.channel, bid, manifest, crash=True)
        except BaseException:
            if not os.path.lexists(channel_dir / MANIFESTS / f"{bid}.json"):
                _remove(final)  # not committed: no manifest names it
            raise
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
        manifest); returns what was removed. Nothing is removed unless the run passes
        :meth:`_check_resumable` first (no link followed or removed, nothing outside the run's
        directory touched)."""
        removed = self._check_resumable()
        for path in removed:
            _remove(path)
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

def _entries(directory: Path) -> list[Path]:
    """The entries of ``directory`` not hidden (no leading dot), sorted; none if it is not a
    directory itself (a link to one is not followed)."""
    if not is_dir(directory):
        return []
    with os.scandir(directory) as found:
        return sorted(Path(e.path) for e in found if not e.name.startswith("."))


def _subdirs(directory: Path) -> list[Path]:
    """The directories (links not followed) among :func:`_entries`."""
    return [p for p in _entries(directory) if is_dir(p)]


def run_dirs(store: Path) -> Iterator[Path]:
    """Every run directory (one holding ``run.json``) of ``store``: a run itself, a
    workflow's directory or the store's root (the layout's two levels, through directories
    only, never a link; no walk through the blocks' data, which a running writer is
    renaming)."""
    store = Path(store)
    if os.path.lexists(store / RUN_FILE):
        yield store
        return
    level1 = _subdirs(store)
    yield from sorted(p for p in (*level1, *(q for d in level1 for q in _subdirs(d)))
                      if os.path.lexists(p / RUN_FILE))


def _channel_dirs(run: Path) -> list[Path]:
    return _subdirs(run)


def manifest_paths(run: Path) -> Iterator[Path]:
    """Every committed manifest of one run directory, by channel then id: what readers list
    (a block exists iff its manifest does; what the entry is, :func:`check_block` says)."""
    for channel in _channel_dirs(run):
        yield from (p for p in _entries(channel / MANIFESTS) if p.suffix == ".json")


def strays(run: Path) -> Iterator[tuple[Path, str]]:
    """Entries where the layout keeps a file or directory but which are something else, with
    what they are: ``run.json`` not a regular file, a channel or ``_blocks`` that is not a
    directory (a link to one included)."""
    for entry in _entries(run):
        problem = not_a(entry, "file" if entry.name == RUN_FILE else "directory")
        if problem is not None:
            yield entry, problem + ("" if entry.name == RUN_FILE else ", where a channel directory should be")
    for channel in _channel_dirs(run):
        problem = not_a(channel / MANIFESTS, "directory")
        if problem is not None and problem != "is missing":
            yield channel / MANIFESTS, problem


def orphans(run: Path) -> Iterator[Path]:
    """What no manifest names in one run directory: hidden entries, data directories without a
    manifest, and entries of a channel that are neither directories nor regular files (links,
    FIFOs: :func:`foreign`). A channel's regular files are left alone."""
    named = {(p.parent.parent.name, p.stem) for p in manifest_paths(run)}
    for channel in _channel_dirs(run):
        with os.scandir(channel) as scan:
            entries = sorted(scan, key=lambda e: e.name)
        for e in entries:
            if e.name.startswith(".") or (e.name != MANIFESTS and (channel.name, e.name) not in named
                                          and not e.is_file(follow_symlinks=False)):
                yield Path(e.path)
        if is_dir(channel / MANIFESTS):
            with os.scandir(channel / MANIFESTS) as scan:
                yield from sorted(Path(e.path) for e in scan if e.name.startswith("."))


def foreign(path: Path) -> str | None:
    """None when ``path`` is a regular file or a directory holding only directories and regular
    files (what this program writes; links not followed); else the first other entry and what
    it is."""
    entries = [str(path)]
    if is_dir(path):
        entries += [os.path.join(root, name) for root, dirs, files in os.walk(path) for name in (*dirs, *files)]
    for entry in entries:
        try:
            mode = os.lstat(entry).st_mode
        except FileNotFoundError:  # a running writer renamed its temporary
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return f"{entry} is {kind(mode)}"
    return None


@dataclass
class Verified:
    """What :func:`verify` found: blocks checked, orphans, and damage (one line each)."""

    runs: int = 0
    blocks: int = 0
    orphans: list[str] = field(default_factory=list)
    damage: list[str] = field(default_factory=list)


def verify(store: Path) -> Verified:
    """Check every manifest of every run under ``store`` against its data
    (:func:`check_block`: each part's size, SHA-256 and footer rows; a chain's parts
    committed), and the layout's entries (:func:`strays`); list orphans (harmless: invisible by
    the commit protocol) except those a resumed run would refuse (:func:`foreign`: damage).
    Only regular files are opened, so nothing placed in the store can make it wait."""
    found = Verified()
    for run in run_dirs(store):
        found.runs += 1
        found.damage.extend(f"{path}: {problem}" for path, problem in strays(run))
        for path in orphans(run):
            problem = foreign(path)
            if problem is None:
                found.orphans.append(str(path))
            else:
                found.damage.append(f"{problem}: not made by staleness-lab (a resumed run refuses it)")
        for path in manifest_paths(run):
            found.blocks += 1
            _, problem = check_block(path.parent.parent, path)
            if problem:
                found.damage.append(f"{path}: {problem}")
    return found


def check_block(channel: Path, path: Path, *, data: bool = True) -> tuple[dict[str, Any] | None, str | None]:
    """The manifest at ``path`` (in ``channel``'s ``_blocks``) and what is wrong with the block
    (None: nothing): the manifest a regular file naming this block and, with ``data``, a
    chain's parts committed, a data block's parts as :func:`data_problem` checks them."""
    problem = not_a(path, "file")
    if problem is not None:
        return None, f"the manifest {problem}"
    try:
        manifest = read_json(path)
    except (OSError, ValueError) as err:
        return None, f"unreadable manifest ({err})"
    if not isinstance(manifest, dict) or manifest.get("id") != path.stem or manifest.get("channel") != channel.name:
        named = manifest if not isinstance(manifest, dict) else f"{manifest.get('channel')}/{manifest.get('id')}"
        return None, f"names block {named}"
    parts = manifest.get("parts")
    if not isinstance(parts, list):
        return manifest, "no parts list"
    if not data:
        return manifest, None
    if manifest.get("chain"):
        missing = [str(p) for p in parts if not_a(channel / MANIFESTS / f"{p}.json", "file") is not None]
        return manifest, f"chain part(s) not committed: {', '.join(missing)}" if missing else None
    return manifest, data_problem(channel / path.stem, parts, manifest.get("rows"))


def data_problem(data: Path, parts: list[Any], rows: Any) -> str | None:
    """What is wrong with a data block's directory ``data`` against its manifest's ``parts``
    (file, bytes, sha256) and ``rows`` (None: nothing): the directory and each part checked
    without following links, each part's bytes hashed, its footer read from the same open
    file."""
    problem = not_a(data, "directory")
    if problem is not None:
        return f"data directory {data.name}/ {problem}"
    if not all(isinstance(p, dict) and isinstance(p.get("file"), str) for p in parts):
        return "malformed parts list"
    listed = {p["file"]: p for p in parts}
    old = sorted(name for name, p in listed.items() if "sha256" not in p)
    if old:
        return (f"no checksum of {', '.join(old)}: written by an older version of staleness-lab (before part "
                "checksums), so its contents cannot be checked; rerun into a new store")
    present = {p.name: p for p in parquet_files(data)}
    if set(present) != set(listed):
        missing, extra = sorted(set(listed) - set(present)), sorted(set(present) - set(listed))
        return f"data differs from the manifest: missing {missing}, unlisted {extra}"
    total = 0
    for name in sorted(present):
        try:
            with open_regular(present[name]) as f:
                size, digest = file_sum(f)
                if size != listed[name]["bytes"]:
                    return f"{name} has {size} bytes, the manifest says {listed[name]['bytes']}"
                if digest != listed[name]["sha256"]:
                    return f"{name}: its bytes differ from the manifest's checksum (sha256 {digest[:16]}..., " \
                           f"recorded {str(listed[name]['sha256'])[:16]}...)"
                f.seek(0)
                total += pq.read_metadata(f).num_rows
        except NotRegular as err:
            return str(err)
        except (OSError, ValueError) as err:
            return f"{name}: unreadable Parquet ({err})"
    if total != rows:
        return f"{total} rows in the data, {rows} in the manifest"
    return None
