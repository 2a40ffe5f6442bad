"""Writing traces as Parquet with their provenance, atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab.provenance import write_parquet_atomic
from staleness_lab.sim import Trace


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


def write_trace(trace: Trace, directory: Path, *, version: str) -> list[Path]:
    """Write ``jobs.parquet`` and ``freshness.parquet`` into ``directory``.

    Each file is written under a temporary name and renamed when complete, so an interrupted
    write never leaves a file that looks finished. The Parquet metadata carries the workload's
    hash, the seed, the policy and the package version.
    """
    directory.mkdir(parents=True, exist_ok=True)
    meta = _provenance(trace, version)
    written = []
    for name, frame in (("jobs.parquet", trace.jobs), ("freshness.parquet", trace.freshness)):
        written.append(_write_atomic(frame, directory / name, meta))
    return written


def _write_atomic(frame: pd.DataFrame, path: Path, meta: dict[bytes, bytes]) -> Path:
    return write_parquet_atomic(frame, path, meta)
