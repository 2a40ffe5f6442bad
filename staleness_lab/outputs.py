"""The one rule for every path this program writes: it replaces only what it wrote itself.

Every command that writes (``simulate --trace-out``, ``workflow run --trace-out``, ``plan --out``,
``sweep --out``, ``report --out``, ``tpch generate --out``, ``tpch calibrate --out``,
``tpch run --out``) checks its output path here, before any work:

- a missing path is created (its nearest existing ancestor must be a writable directory);
- an existing directory or file is replaced (or written into) only when it carries this
  program's own marker, recognised by the caller's ``owns`` test: a Parquet file whose schema
  metadata names ``staleness-lab`` (:func:`parquet_is_ours`), a JSON manifest
  ``{"producer": "staleness-lab", "kind": ..., "version": N, ...}`` (:func:`manifest_is_ours`),
  or the recognisable form an earlier version of this program wrote;
- an empty directory is used;
- anything else -- a symbolic link (even to a directory or file of ours: replacing it would
  replace the link), a device, a FIFO, a socket, a file where a directory is expected, a
  directory holding anything the program did not write, a foreign manifest -- is refused with an
  :class:`~staleness_lab.errors.InputError` naming the option, the path and this rule.

The checks create nothing. Writers then put the new output in place through a temporary
sibling (:func:`staleness_lab.provenance.building_directory`,
:func:`staleness_lab.provenance.write_parquet_atomic`), inside :func:`writing`, so a write the
system refuses (disk full, a file-size limit, a permission) ends in one line naming the option,
the path and the system's error, the temporary sibling removed and the target as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from staleness_lab.errors import InputError

#: The producer every marker names.
PRODUCER = "staleness-lab"
#: The rule, as the refusals state it.
RULE = "staleness-lab replaces only what it wrote itself"


def refusal(option: str, path: Path | str, problem: str, hint: str) -> InputError:
    """The one-line refusal: ``OPTION: PATH: PROBLEM; RULE: HINT``."""
    return InputError(option, f"{path}: {problem}; {RULE}: {hint}")


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode)
            else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode)
            else "a regular file" if stat.S_ISREG(mode)
            else "not a regular file")


@contextlib.contextmanager
def writing(path: Path, option: str) -> Iterator[None]:
    """Around a writer of ``path`` (which cleans up after itself on any exception): an
    ``OSError`` (``ENOSPC``, ``EFBIG`` under ``ulimit -f``, ``EACCES``, ...; pyarrow raises it
    too) becomes an :class:`InputError` naming ``option``, ``path`` and the system's error."""
    try:
        yield
    except OSError as err:
        raise InputError(option, f"{path}: cannot be written ({err.strerror or err})") from None


def lstat_or_none(path: Path, option: str) -> os.stat_result | None:
    """``os.lstat(path)`` (the path itself, a link not followed), or None when it is missing."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:
        raise InputError(option, f"{path}: cannot be inspected ({err.strerror or err})") from None


def check_output_dir(directory: Path, option: str) -> None:
    """Fail early (before any work) if ``directory`` cannot be a directory we create or write
    into: the nearest existing path among it and its parents must be a writable directory.
    (For directories only ever written into, such as caches; what is replaced goes through
    :func:`check_output_directory`.)"""
    directory = Path(directory)
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            if not candidate.is_dir():
                rule = ("exists and is not a directory" if candidate == directory
                        else f"cannot be created: {candidate} is not a directory")
                raise InputError(option, f"{directory}: {rule}")
            if not os.access(candidate, os.W_OK):
                raise InputError(option, f"{directory}: {candidate} is not writable")
            return


def parquet_is_ours(path: Path) -> bool:
    """True when ``path`` is a regular file (not a link) holding Parquet whose schema metadata
    this program wrote: the ``staleness_lab.provenance`` JSON with ``"package": "staleness-lab"``
    and a ``version`` (results, plans), or the ``staleness_lab.version`` key (traces)."""
    import pyarrow.parquet as pq

    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        meta = pq.read_schema(path).metadata or {}
    except Exception:  # noqa: BLE001 - not Parquet, unreadable: not ours
        return False
    if b"staleness_lab.version" in meta:
        return True
    raw = meta.get(b"staleness_lab.provenance")
    try:
        found = json.loads(raw) if raw is not None else None
    except ValueError:
        return False
    return isinstance(found, dict) and found.get("package") == PRODUCER and "version" in found


def marker(kind: str, version: int) -> dict[str, Any]:
    """The keys that mark a JSON manifest as this program's: producer, kind and format version."""
    return {"producer": PRODUCER, "kind": kind, "version": version}


def manifest_is_ours(document: Any, kind: str, versions: Iterable[int]) -> bool:
    """True when ``document`` is a JSON object carrying :func:`marker` for ``kind`` with one of
    the format ``versions`` this code reads."""
    return (isinstance(document, dict) and document.get("producer") == PRODUCER and document.get("kind") == kind
            and type(document.get("version")) is int and document.get("version") in set(versions))


def check_output_file(path: Path, option: str, owns: Callable[[Path], bool] = parquet_is_ours) -> None:
    """The rule for an output file: missing (its directory creatable), or a regular file that
    ``owns`` recognises as this program's (default: Parquet it wrote). A symbolic link, a
    directory, a device, a FIFO, a socket or a regular file not ours is refused."""
    path = Path(path)
    found = lstat_or_none(path, option)
    if found is not None:
        if stat.S_ISLNK(found.st_mode):
            raise refusal(option, path, "is a symbolic link", "give a regular file it wrote or a new path")
        if not stat.S_ISREG(found.st_mode):
            raise refusal(option, path, f"is {_kind(found.st_mode)}", "give a regular file it wrote or a new path")
        if not owns(path):
            raise refusal(option, path, "exists and was not written by staleness-lab",
                          "give a new path or one of its earlier outputs")
    try:
        check_output_dir(path.parent, option)
    except InputError as err:
        raise InputError(option, f"{path}: cannot be written ({err.rule})") from None


def check_output_directory(directory: Path, option: str, owns: Callable[[Path], str | None],
                           hint: str = "give a new or empty directory") -> bool:
    """The rule for an output directory (replaced whole, or written into).

    ``directory`` may be missing (created with its parents: the nearest existing ancestor must
    be a writable directory), empty, or one ``owns`` recognises: ``owns(directory)`` returns None
    when every entry in it is this program's, else the name of the first entry that is not (or
    a short reason). A symbolic link (dangling or not), a file, a device, a FIFO or a socket at
    ``directory``, or a directory ``owns`` rejects, is refused with :func:`refusal`. Returns
    whether the directory exists (and so would be replaced or written into).
    """
    directory = Path(directory)
    found = lstat_or_none(directory, option)
    if found is None:
        check_output_dir(directory, option)  # names the first ancestor that is not a writable directory
        return False
    if stat.S_ISLNK(found.st_mode):
        raise refusal(option, directory, "is a symbolic link", hint)
    if not stat.S_ISDIR(found.st_mode):
        if stat.S_ISREG(found.st_mode):
            raise InputError(option, f"{directory}: exists and is not a directory; {RULE}: {hint}")
        raise refusal(option, directory, f"is {_kind(found.st_mode)}", hint)
    if not Path(directory.absolute()).name:
        raise InputError(option, f"{directory}: cannot be replaced (the filesystem root); {hint}")
    parent = Path(os.path.abspath(directory)).parent
    if not os.access(directory, os.W_OK | os.X_OK) or not os.access(parent, os.W_OK | os.X_OK):
        where = directory if not os.access(directory, os.W_OK | os.X_OK) else parent
        raise InputError(option, f"{directory}: {where} is not writable")
    try:
        with os.scandir(directory) as entries:
            empty = next(entries, None) is None
    except OSError as err:
        raise InputError(option, f"{directory}: cannot be read ({err.strerror or err})") from None
    if empty:
        return True
    try:
        stranger = owns(directory)
    except OSError as err:
        raise InputError(option, f"{directory}: cannot be read ({err.strerror or err})") from None
    if stranger is not None:
        raise refusal(option, directory, f"holds what staleness-lab did not write ({stranger})", hint)
    return True


def only_files(directory: Path, names: Iterable[str], is_ours: Callable[[Path], bool]) -> str | None:
    """An ``owns`` test for :func:`check_output_directory`: None when every entry of
    ``directory`` is a regular file named in ``names`` that ``is_ours`` recognises, else the
    first entry that is not (sorted by name)."""
    allowed = set(names)
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if entry.name not in allowed or not entry.is_file(follow_symlinks=False) or not is_ours(Path(entry.path)):
            return entry.name
    return None


def nothing_is_ours(directory: Path) -> str | None:
    """An ``owns`` test for outputs that are never replaced, so only a new or empty directory
    is taken: names the first entry found."""
    return min(entry.name for entry in os.scandir(directory))
