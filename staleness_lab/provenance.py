"""Where a result came from, and writing result files that carry it.

:func:`provenance` describes the code and the environment that produced a result (package
version, git commit of the checkout, Python, NumPy and -- once Spark was used in the process --
PySpark versions, a UTC creation time) plus the caller's creation parameters.
:func:`write_parquet_atomic` writes a DataFrame as Parquet with key/value metadata in the schema,
under a temporary name in the target directory and then renamed, so an interrupted write never
leaves a file that looks complete. Files and directories written here get the permissions the
user's umask gives new ones (:func:`current_umask`), not the private modes of ``tempfile``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from importlib.metadata import PackageNotFoundError, version as _dist_version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from staleness_lab.held_signals import signals_held

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

#: The Parquet schema-metadata key under which result files carry their provenance (JSON).
PROVENANCE_KEY = "staleness_lab.provenance"


@functools.cache
def project_root() -> Path | None:
    """The root of the source checkout the package runs from, or None when installed.

    A checkout is recognised by a ``pyproject.toml`` naming ``staleness-lab`` next to the
    package directory (a plain or editable install from a clone).
    """
    root = Path(__file__).resolve().parents[1]
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "staleness-lab"' in text else None


@functools.cache
def git_commit() -> str | None:
    """``git rev-parse HEAD`` of the checkout the package runs from; None outside a git checkout
    of this project, without git, or on any error (it never fails)."""
    root = project_root()
    if root is None:
        return None
    try:
        top = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel", "HEAD"],
            capture_output=True, text=True, timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = top.stdout.split()
    if top.returncode != 0 or len(lines) != 2:
        return None
    # Only this project's own repository counts, not one that merely encloses an installation.
    try:
        if Path(lines[0]).resolve() != root:
            return None
    except OSError:
        return None
    return lines[1]


def _version(dist: str) -> str | None:
    try:
        return _dist_version(dist)
    except PackageNotFoundError:
        return None


@functools.cache
def source_digest(paths: frozenset[Path] | None = None) -> str:
    """sha256 (first 16 hex digits) of the package's Python sources (paths relative to the
    package, and contents, in path order): results computed by different code never share a
    cache key, even between two commits of one version. ``paths``: only these sources (an
    experiment's scope, :mod:`staleness_lab.sweeps.code_scope`)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py") if paths is None else paths):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def provenance(extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Package version, git commit (None outside a checkout), Python/NumPy versions, the
    PySpark version when Spark was used in this process (None otherwise), the UTC creation
    time, and the creation parameters ``extra`` (which win over the fixed keys on a clash)."""
    from staleness_lab import __version__

    out: dict[str, Any] = {
        "package": "staleness-lab",
        "version": __version__,
        "git_commit": git_commit(),
        "source_sha256": source_digest(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "pandas": pd.__version__,
        "pyspark": _version("pyspark") if "pyspark" in sys.modules else None,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    out.update(extra or {})
    return out


def provenance_metadata(extra: Mapping[str, Any] | None = None) -> dict[bytes, bytes]:
    """:func:`provenance` as Parquet schema metadata: ``{PROVENANCE_KEY: JSON}``."""
    return {PROVENANCE_KEY.encode(): json.dumps(provenance(extra), sort_keys=True, default=str).encode()}


def read_provenance(path: Path | str) -> dict[str, Any] | None:
    """The provenance stored in a Parquet file's schema metadata, or None if it has none."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(PROVENANCE_KEY.encode())
    return None if raw is None else json.loads(raw)


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows: the ``Umask:``
    line of ``/proc/self/status`` (Linux 4.7+); elsewhere :func:`os.umask` sets it to 0o077 and
    at once back (a file another thread creates in between is only more private)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, IndexError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def write_parquet_atomic(frame: pd.DataFrame | pa.Table, path: Path, meta: Mapping[str | bytes, str | bytes]) -> Path:
    """Write ``frame`` (a DataFrame, without its index, or an Arrow table) to ``path`` as Parquet
    with ``meta`` added to the schema metadata, under a hidden temporary name in the same
    directory renamed into place when complete (``os.replace``): readers see the old file or the
    whole new one, and a killed writer leaves at most a ``.NAME.*.tmp`` file behind (any
    exception, KeyboardInterrupt included, removes it). The file gets the mode a new file gets
    (``0o666`` less the umask), not ``mkstemp``'s 0600."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    encoded = {(k.encode() if isinstance(k, str) else k): (v.encode() if isinstance(v, str) else v) for k, v in meta.items()}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **encoded})
    tmp: str | None = None
    try:
        with signals_held():
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            os.fchmod(fd, 0o666 & ~current_umask())
        finally:
            os.close(fd)
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextlib.contextmanager
def building_directory(target: Path) -> Iterator[Path]:
    """A hidden temporary sibling of ``target`` (``.NAME.*.tmp``) to fill: on a clean exit it is
    given the mode a new directory gets (``0o777`` less the umask; ``mkdtemp`` makes it 0700)
    and put in place by :func:`replace_directory`; on any exception (KeyboardInterrupt included)
    it is removed, and ``target`` is left as it was. The directory's creation and the swap run
    with signals held (:func:`signals_held`), so an interrupt lands before or after them."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work: Path | None = None
    try:
        with signals_held():
            work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        yield work
        os.chmod(work, 0o777 & ~current_umask())
        with signals_held():
            replace_directory(work, target)
    except BaseException:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        raise


def replace_directory(work: Path, target: Path) -> None:
    """Put the finished directory ``work`` in place as ``target``, all or nothing: onto an absent
    or empty ``target`` by one rename; otherwise the old ``target`` is moved aside (a hidden
    ``.NAME.*.old`` sibling), restored if the rename fails, and removed only once the new one is
    in place, so the user's files are never deleted without their replacement. A symbolic link
    at ``target`` is never replaced (``FileExistsError``): callers refuse it earlier by the rule
    of :mod:`staleness_lab.outputs`, which also decides whether an existing ``target`` is
    this program's to replace."""
    if os.path.islink(target):
        raise FileExistsError(errno.EEXIST, "a symbolic link is never replaced", str(target))
    if not (target.is_dir() and any(target.iterdir())):
        os.replace(work, target)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.rename(target, aside / "previous")
    try:
        os.rename(work, target)
    except BaseException:
        os.rename(aside / "previous", target)
        shutil.rmtree(aside, ignore_errors=True)
        raise
    shutil.rmtree(aside, ignore_errors=True)
