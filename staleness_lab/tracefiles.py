"""Writing traces as Parquet with their provenance, atomically.

A trace is a *pair* of files, ``DIR/jobs.parquet`` and ``DIR/freshness.parquet``, and it is put
in place as a pair: :func:`write_trace` fills a hidden temporary sibling ``.DIR.*.tmp`` and then
renames it to ``DIR`` (swapping out an earlier trace pair, see
:func:`staleness_lab.provenance.replace_directory`), so readers see the old pair or the whole new
one, never one new file beside an old one. :func:`check_trace_dir` refuses, before any work, a
``DIR`` that holds anything but such a pair of this program's (it would be replaced), by the one
rule of :mod:`staleness_lab.outputs`, whose :func:`check_output_dir` (directories only ever
written into, such as caches) and :func:`check_output_file` (the rule for files) are re-exported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from staleness_lab.outputs import (check_output_dir, check_output_directory, check_output_file, only_files,
                                   parquet_is_ours, writing)
from staleness_lab.provenance import building_directory, write_parquet_atomic
from staleness_lab.sim import Trace

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FRAME_FILES", "TRACE_FILES", "check_output_dir", "check_output_file", "check_trace_dir", "write_frames",
           "write_trace"]

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


def check_trace_dir(directory: Path, option: str, names: tuple[str, ...] = TRACE_FILES + FRAME_FILES) -> None:
    """Fail early (before any work) unless :func:`write_trace` may put a trace at ``directory``,
    by the rule of :mod:`staleness_lab.outputs` (only what this program wrote is replaced).

    ``directory`` may be missing (it is created with its parents), empty, or hold nothing but
    regular files named in ``names`` (default ``jobs.parquet`` / ``freshness.parquet`` and
    :data:`FRAME_FILES`) whose Parquet metadata marks them as this program's: an earlier trace,
    replaced as a whole. Anything else in it -- another file, a subdirectory, a symbolic link,
    a file named like a trace file but not written by this program -- and a symbolic link,
    file, device or FIFO at ``directory`` itself is refused with an :class:`InputError` naming
    ``option``, since replacing the directory would delete it.
    """
    what = "a trace pair" if names == TRACE_FILES + FRAME_FILES else "an earlier trace"
    check_output_directory(
        Path(directory), option, lambda d: only_files(d, names, parquet_is_ours),
        hint=f"give a new or empty directory or a previous {option} directory ({what})")


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
    """The directory to replace: absolute, with symbolic links among its parents resolved, so
    the rename happens next to the real directory (a link at ``directory`` itself is refused
    by :func:`check_trace_dir`)."""
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
    with writing(directory, option), building_directory(_target(directory)) as work:
        for name, frame in frames.items():
            write_parquet_atomic(frame, work / f"{name}.parquet", meta)
        check_trace_dir(directory, option, names)
    return [directory / f"{name}.parquet" for name in frames]
