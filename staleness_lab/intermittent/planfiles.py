"""Writing a batch plan as Parquet with its provenance, all or nothing; and its strict JSON form.

:func:`write_plan` writes ``DIR/batches.parquet`` and ``DIR/queries.parquet`` (the plan's two
frames, :mod:`staleness_lab.intermittent.plan`) into a hidden temporary sibling directory
``.DIR.<random>.tmp`` and then renames that directory into place, so ``DIR`` holds both new
files or neither: a failure removes the temporary directory and leaves ``DIR`` as it was.

``DIR`` may be absent (created by the rename), an empty directory, or a directory holding only
an earlier plan's two files, marked as this program's by their Parquet metadata (replaced: the
old directory is renamed aside, the new one into place, then the old one removed; a reader sees
the old pair, briefly no directory, or the new pair, never a mix). Anything else -- in ``DIR`` or at ``DIR`` (a symbolic link, a file) -- is
refused before any work (:func:`check_plan_dir`, the rule of :mod:`staleness_lab.outputs`)
rather than deleted or replaced.

Each file's Parquet schema metadata carries, under
:data:`~staleness_lab.provenance.PROVENANCE_KEY` (JSON, read back with
:func:`~staleness_lab.provenance.read_provenance`), the package version, the git commit, the
environment, and: ``queryset_sha256`` (SHA-256 of the query set's canonical ``to_dict()`` JSON,
:func:`queryset_sha256`), ``scheme``, ``status``, ``options`` (the planning options) and
``table`` (``batches`` or ``queries``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from staleness_lab.intermittent.model import QuerySet
from staleness_lab.intermittent.plan import BatchPlan
from staleness_lab.jsonout import strict
from staleness_lab.outputs import check_output_directory, only_files, parquet_is_ours, writing
from staleness_lab.provenance import building_directory, provenance_metadata, write_parquet_atomic

#: The files :func:`write_plan` writes, in order.
PLAN_FILES = ("batches.parquet", "queries.parquet")


def queryset_sha256(qs: QuerySet) -> str:
    """SHA-256 (hex) of the query set's canonical JSON: ``to_dict()`` with sorted keys and no spaces."""
    text = json.dumps(qs.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan_json(plan: BatchPlan, *, version: str) -> dict[str, Any]:
    """The ``plan --json`` object: :meth:`BatchPlan.to_json` (status, scheme, reason, batches,
    queries, misses, total_cost, solver) plus ``version``, strict JSON (non-finite numbers null)."""
    return strict({**plan.to_json(), "version": version})


def check_plan_dir(directory: Path, option: str = "--out") -> None:
    """Fail early (before any work) unless ``directory`` can receive a plan, by the rule of
    :mod:`staleness_lab.outputs` (only what this program wrote is replaced): absent with a
    writable ancestor, empty, or holding nothing but :data:`PLAN_FILES` as regular Parquet files
    whose metadata marks them as this program's (an earlier plan, replaced whole). A symbolic
    link, a file, a device or a FIFO at ``directory``, or anything else in it (a directory named
    ``batches.parquet``, a user's file) is refused with an :class:`InputError` naming ``option``."""
    check_output_directory(Path(directory), option, lambda d: only_files(d, PLAN_FILES, parquet_is_ours),
                           hint=f"give a new or empty directory or a previous plan {option} directory")


def write_plan(plan: BatchPlan, directory: Path, *, version: str,
               options: Mapping[str, Any] | None = None) -> list[Path]:
    """Write ``DIR/batches.parquet`` and ``DIR/queries.parquet`` all or nothing (module docstring);
    a write the system refuses (no space, no permission) is an :class:`InputError` naming ``--out``."""
    with writing(directory, "--out"):
        return _write_plan(plan, Path(directory), version=version, options=options)


def _write_plan(plan: BatchPlan, directory: Path, *, version: str, options: Mapping[str, Any] | None) -> list[Path]:
    check_plan_dir(directory)
    common = {
        "version": version, "queryset_sha256": queryset_sha256(plan.queryset), "scheme": plan.scheme,
        "status": plan.status, "options": strict(dict(options or {})),
    }
    with building_directory(directory) as tmp:
        for name, frame in zip(PLAN_FILES, (plan.batches, plan.queries)):
            meta = provenance_metadata({**common, "table": name.removesuffix(".parquet")})
            write_parquet_atomic(frame, tmp / name, meta)
        check_plan_dir(directory)  # again just before the swap: what is there now is still ours
    return [directory / name for name in PLAN_FILES]
