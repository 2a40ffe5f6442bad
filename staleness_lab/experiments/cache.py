"""The per-row result cache that makes sweeps resumable.

One small Parquet file per parameter row: ``<cache_dir>/<experiment>/<key>.parquet``, where
``key`` is the sha256 of the canonical JSON of ``{experiment, params, version}`` (all the row's
parameters, defaults included, and :func:`code_identity`: the package version and a digest of
its sources, so neither a new version nor edited code reuses old results). A file holds the experiment's own output for that row (the observations, without the
parameter columns the runner adds) and carries its provenance in the Parquet metadata.

Files are written atomically (a hidden temporary name in the same directory, then
``os.replace``) by whoever computed the row -- a Spark executor writes its row's file itself as
soon as the row finishes -- so a sweep killed part way keeps every finished row and leaves at
most hidden ``.*.tmp`` files, which are never read. The executors write to the same path as the
driver: on the embedded ``local[*]`` master and on a cluster whose workers run on this machine
that is one filesystem; on a real multi-host cluster the cache directory must be a shared
(network) path mounted at the same place on every host, or the driver writes the rows
executors could not.

Default location: ``data/cache`` under the project root when the package runs from a source
checkout (so a notebook in ``notebooks/`` and the CLI in the root share one cache), else under
the current working directory.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from staleness_lab.provenance import project_root, provenance_metadata, source_digest, write_parquet_atomic


def data_root() -> Path:
    """Where ``data/`` lives by default: the checkout's root, else the working directory."""
    return project_root() or Path.cwd()


def default_cache_dir() -> Path:
    """``data/cache`` under :func:`data_root`."""
    return data_root() / "data" / "cache"


def canonical_json(value: Any) -> str:
    """Key-sorted, compact, ASCII JSON with no NaN/Infinity: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def code_identity() -> str:
    """The package version plus a digest of its sources: the ``version`` part of cache keys,
    so results of edited code are never served from the cache."""
    from staleness_lab import __version__

    return f"{__version__}+{source_digest()}"


def cache_key(experiment: str, params: Mapping[str, Any], version: str) -> str:
    """sha256 (hex) of the canonical JSON of ``{experiment, params, version}``."""
    payload = canonical_json({"experiment": experiment, "params": dict(params), "version": version})
    return hashlib.sha256(payload.encode()).hexdigest()


def _safe(name: str) -> str:
    """An experiment name usable as one directory name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return safe if safe.strip(".") else f"_{safe}"


def cache_path(cache_dir: Path, experiment: str, key: str) -> Path:
    """``<cache_dir>/<experiment>/<key>.parquet``."""
    return Path(cache_dir) / _safe(experiment) / f"{key}.parquet"


def read_cached(path: Path) -> pd.DataFrame | None:
    """The cached frame, or None when the file is missing or unreadable (it is recomputed)."""
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pandas()
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - a damaged entry is a cache miss, never a failed sweep
        return None


def write_cached(path: Path, frame: pd.DataFrame, *, experiment: str, params: Mapping[str, Any], key: str) -> Path:
    """Write one row's frame atomically, with provenance (experiment, params, key) attached."""
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = provenance_metadata({"experiment": experiment, "params": dict(params), "cache_key": key})
    return write_parquet_atomic(frame, path, meta)
