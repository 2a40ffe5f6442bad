"""Writing traces as Parquet with their provenance, atomically.

A trace is a *pair* of files, ``DIR/jobs.parquet`` and ``DIR/freshness.parquet``, and it is put
in place as a pair: :func:`write_trace` fills a hidden temporary sibling ``.DIR.*.tmp`` and then
renames it to ``DIR`` (swapping out an earlier trace pair, see
:func:`staleness_lab.provenance.replace_directory`), so readers see the old pair or the whole new
one, never one new file beside an old one. :func:`check_trace_dir` refuses, before any work, a
``DIR`` that holds anything but such a pair (it would be replaced); :func:`check_output_dir` and
:func:`check_output_file` check other outputs early.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from staleness_lab.errors import InputError
from staleness_lab.provenance import building_directory, write_parquet_atomic
from staleness_lab.sim import Trace

if TYPE_CHECKING:
    import pandas as pd

#: The files of one trace, in the order they are written.
TRACE_FILES = ("jobs.parquet", "freshness.parquet")
#: Files a trace adds under the sporadic job model (``Trace.frames``: trailing edges, AUS's modes).
FRAME_FILES = ("trailing_edge.parquet", "modes.parquet")


def _provenance(trace: Trace, version: str) -> dict[bytes, bytes]:
    return {
        b"staleness_lab.workload_sha256": trace.workload.digest().encode(),
        b"staleness_lab.seed": str(trace.workload.seed).encode(),
        b"staleness_lab.version": version.encode(),
        b"staleness_lab.policy": trace.policy.encode(),
    }


def check_output_dir(directory: Path, option: str) -> None:
    """Fail early (before any work) if ``directory`` cannot be a directory we create or reuse."""
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            if not candidate.is_dir():
                rule = "exists and is not a directory" if candidate == directory else f"cannot be created: {candidate} is not a directory"
                raise InputError(option, f"{directory}: {rule}")
            if not os.access(candidate, os.W_OK):
                raise InputError(option, f"{directory}: {candidate} is not writable")
            return


def check_trace_dir(directory: Path, option: str, names: tuple[str, ...] = TRACE_FILES + FRAME_FILES) -> None:
    """Fail early (before any work) unless :func:`write_trace` may put a trace pair at ``directory``.

    ``directory`` may be missing (it is created with its parents), empty, or hold nothing but
    regular files named in ``names`` (default ``jobs.parquet`` / ``freshness.parquet`` and
    :data:`FRAME_FILES`: an earlier trace, which is replaced as a whole). Anything else in it -- another file, a subdirectory, a symbolic link,
    even one named like a trace file -- is refused with an :class:`InputError` naming ``option``,
    since replacing the directory would delete it. A symbolic link to a directory counts as that
    directory; its parent must be writable, because the new trace is renamed into place.
    """
    directory = Path(directory)
    if os.path.islink(directory) and not directory.exists():
        raise InputError(option, f"{directory}: is a symbolic link to a missing path; give a new or empty directory")
    check_output_dir(directory, option)
    target = _target(directory)
    if not target.name:
        raise InputError(option, f"{directory}: cannot be replaced (the filesystem root); give a new or empty directory")
    if not target.exists():
        return  # created with its parents; check_output_dir saw the nearest existing one is writable
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise InputError(option, f"{directory}: {target.parent} is not writable")
    try:
        with os.scandir(target) as entries:
            found = sorted((e.name, e.name in names and e.is_file(follow_symlinks=False)) for e in entries)
    except OSError as err:
        raise InputError(option, f"{directory}: cannot be read ({err.strerror or err})") from None
    what = "a trace pair" if names == TRACE_FILES + FRAME_FILES else "an earlier trace"
    for name, trace_file in found:
        if not trace_file:
            raise InputError(
                option,
                f"{directory}: holds files other than {what} ({name}); "
                f"give a new or empty directory or a previous {option} directory",
            )


def check_output_file(path: Path, option: str) -> None:
    """Fail early (before any work) if ``path`` cannot be a file we write (replace atomically).

    A missing path or an existing regular file is fine when its parent directory exists and is
    writable or can be created (:func:`check_output_dir`). Refused with an :class:`InputError`
    naming ``option`` and ``path``: a symbolic link (even to a regular file: replacing it would
    replace the link, not the file it names), a directory, a device, a FIFO or a socket.
    """
    path = Path(path)
    if os.path.islink(path):
        raise InputError(option, f"{path}: is a symbolic link; give a regular file or a new path")
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # check_output_dir says what is wrong with the parent, if anything
    except OSError as err:
        raise InputError(option, f"{path}: cannot be inspected ({err.strerror or err})") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = (
            "a directory" if stat.S_ISDIR(mode)
            else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        raise InputError(option, f"{path}: is {kind}; give a regular file or a new path")
    try:
        check_output_dir(path.parent, option)
    except InputError as err:
        raise InputError(option, f"{path}: cannot be written ({err.rule})") from None


def write_trace(trace: Trace, directory: Path, *, version: str, option: str = "--trace-out") -> list[Path]:
    """Write ``jobs.parquet`` and ``freshness.parquet`` into ``directory``, as a pair (plus
    ``<name>.parquet`` for each of the trace's extra ``frames``: :data:`FRAME_FILES`).

    Both files are written into a hidden temporary sibling ``.NAME.*.tmp``
    (:func:`~staleness_lab.provenance.building_directory`: given the user's umask when complete),
    which then becomes ``directory``: by a rename when ``directory`` is missing or empty, else by
    swapping out the earlier trace pair (:func:`~staleness_lab.provenance.replace_directory`). On
    any exception, KeyboardInterrupt included, the temporary directory is removed and an earlier
    pair is left untouched. A
    ``directory`` that holds anything but a trace pair is refused before anything is written
    (:func:`check_trace_dir`, with ``option`` in the message). The Parquet metadata carries the
    workload's hash, the seed, the policy and the package version.
    """
    frames = {"jobs": trace.jobs, "freshness": trace.freshness, **trace.frames}
    return write_frames(frames, directory, _provenance(trace, version), option=option, names=TRACE_FILES + FRAME_FILES)


def _target(directory: Path) -> Path:
    """The directory to replace: absolute, with symbolic links (``directory`` itself included)
    resolved, so the rename happens next to the real directory and never replaces a link."""
    return Path(os.path.realpath(directory))


def write_frames(frames: dict[str, "pd.DataFrame"], directory: Path, meta: dict[bytes, bytes], *, option: str,
                 names: tuple[str, ...] | None = None) -> list[Path]:
    """Write ``<name>.parquet`` per frame into ``directory`` as one set, like :func:`write_trace`
    (a hidden temporary sibling renamed into place; a directory holding anything but the files
    ``names``, default the frames' own, is refused before anything is written and checked again
    just before an earlier directory is swapped out)."""
    directory = Path(directory)
    names = names if names is not None else tuple(f"{name}.parquet" for name in frames)
    check_trace_dir(directory, option, names)
    with building_directory(_target(directory)) as work:
        for name, frame in frames.items():
            write_parquet_atomic(frame, work / f"{name}.parquet", meta)
        check_trace_dir(directory, option, names)
    return [directory / f"{name}.parquet" for name in frames]
