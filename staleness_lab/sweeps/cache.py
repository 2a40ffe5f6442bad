"""The per-row result cache that makes sweeps resumable.

One small Parquet file per parameter row: ``<cache_dir>/<experiment>/<key>.parquet``, where
``key`` is the sha256 of the canonical JSON of ``{experiment, params, version}`` (all the row's
parameters, defaults included, and :func:`code_identity`: the package version and a digest of
the sources the experiment depends on (:mod:`~staleness_lab.sweeps.code_scope`), so neither a
new version nor edited code reuses old results, while edits to another paper's code keep them). A file holds the experiment's own output for that row (the observations, without the
parameter columns the runner adds) and carries in its Parquet schema metadata its provenance
(including ``cache_key``, the key it was written for) and a checksum of its content
(:data:`CHECKSUM_KEY`, see :func:`content_checksum`).

A file is served only when it parses, names the expected key and its data match its checksum;
otherwise :func:`read_cached` raises :class:`CorruptCacheEntry` and the runner recomputes and
rewrites the row and says so on stderr (see :mod:`staleness_lab.sweeps.runner`): flipped
bytes, a truncated file or another row's file copied under this key are never served. An entry
without a checksum (written by older code) counts as corrupt: it is a cache, recomputing it
costs only time. Damage that leaves the data and the key as they were (in Parquet's column
statistics, say) is harmless and goes unnoticed. The checksum guards against accidents, not
against someone rewriting a file and its checksum together.

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
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from staleness_lab.jsonout import canonical_json
from staleness_lab.outputs import writing
from staleness_lab.paths import data_root
from staleness_lab.provenance import (
    PROVENANCE_KEY,
    provenance_metadata,
    source_digest,
    write_parquet_atomic,
)
from staleness_lab.sweeps.code_scope import scoped_digest

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

#: The Parquet schema-metadata key of a cache entry's content checksum (:func:`content_checksum`).
CHECKSUM_KEY = "staleness_lab.content_sha256"


class CorruptCacheEntry(Exception):
    """A cache file that exists but must not be served; ``path`` is the file, ``reason`` why."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def default_cache_dir() -> Path:
    """``data/cache`` under :func:`data_root`."""
    return data_root() / "data" / "cache"


def code_identity(module: str | None = None) -> str:
    """The package version plus a digest of the sources an experiment defined in ``module``
    depends on (:mod:`staleness_lab.sweeps.code_scope`; every source when ``module`` is None
    or outside the package): the ``version`` part of cache keys, so results of edited code are
    never served from the cache, and edits elsewhere do not discard a long sweep's rows."""
    from staleness_lab import __version__

    return f"{__version__}+{source_digest() if module is None else scoped_digest(module)}"


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


def _type_token(kind: pa.DataType) -> str:
    """``str(kind)``, but a list's item field unnamed (a Parquet round trip renames it)."""
    import pyarrow as pa

    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return f"{'large_list' if pa.types.is_large_list(kind) else 'list'}<{_type_token(kind.value_type)}>"
    if pa.types.is_struct(kind):
        return "struct<" + ", ".join(f"{f.name}: {_type_token(f.type)}" for f in kind) + ">"
    return str(kind)


def _value_parts(array: pa.Array) -> list[bytes | memoryview]:
    """The values of ``array`` (which has no nulls) as :func:`content_checksum` serialises them."""
    import pyarrow as pa

    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    kind = array.type
    large = pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)
    if large or pa.types.is_string(kind) or pa.types.is_binary(kind):
        if len(array) == 0:
            return [b"", b""]
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if large else np.int32)
        offsets = offsets[array.offset : array.offset + len(array) + 1]
        data = array.buffers()[2]
        return [(offsets - offsets[0]).tobytes(), b"" if data is None else memoryview(data)[offsets[0] : offsets[-1]]]
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind) or pa.types.is_temporal(kind):
        values = array.to_numpy(zero_copy_only=False)
        if values.dtype != object:  # intervals, for one, come out as Python objects
            return [values.tobytes()]
    return [repr(array.to_pylist()).encode()]


def content_checksum(table: pa.Table) -> str:
    """sha256 (hex) of a canonical serialisation of ``table``'s content.

    The parts, in order: per column its name, its type (:func:`_type_token`), its null mask (one
    byte per row; empty without nulls) and its non-null values -- numbers, booleans and times as
    their NumPy bytes, strings and binaries as their lengths then their bytes, dictionaries
    decoded, anything else as the ``repr`` of its Python values -- and last the ``pandas``
    schema metadata (it decides how the frame is rebuilt). Hashed: the row count, the number of
    parts and each part's length (int64s), then the parts. Chunking, the other schema metadata
    and the undefined bytes under nulls do not count, so equal tables give equal checksums,
    before and after a Parquet round trip."""
    parts: list[bytes | memoryview] = []
    for name, column in zip(table.column_names, table.columns):
        array = column.combine_chunks()
        parts += [name.encode(), _type_token(array.type).encode()]
        if array.null_count:
            parts.append(array.is_valid().to_numpy(zero_copy_only=False).tobytes())
            array = array.drop_null()
        else:
            parts.append(b"")
        parts += _value_parts(array)
    parts.append((table.schema.metadata or {}).get(b"pandas", b""))
    digest = hashlib.sha256(struct.pack(f"<{len(parts) + 2}q", table.num_rows, len(parts), *map(len, parts)))
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


def _stored_key(meta: Mapping[bytes, bytes]) -> str | None:
    """The ``cache_key`` of the provenance in ``meta``, or None if it has none or is damaged."""
    try:
        key = json.loads(meta[PROVENANCE_KEY.encode()])["cache_key"]
    except (KeyError, TypeError, ValueError):
        return None
    return key if isinstance(key, str) else None


def _why_not_served(table: pa.Table, key: str) -> str | None:
    """Why a cache entry read as ``table`` must not be served for ``key``, or None if it may."""
    meta = table.schema.metadata or {}
    stored = _stored_key(meta)
    if stored != key:
        return f"written for key {stored}, not {key}"
    checksum = meta.get(CHECKSUM_KEY.encode())
    if checksum is None:
        return "no content checksum (written by older code)"
    if checksum != content_checksum(table).encode():
        return "content does not match its checksum"
    return None


def read_cached(path: Path, key: str | None = None) -> pd.DataFrame | None:
    """The frame cached at ``path`` for ``key``, or None when there is no such file.

    ``key`` defaults to the file's name without ``.parquet`` (the key :func:`cache_path` put
    there). Raises :class:`CorruptCacheEntry` for a file that must not be served: it does not
    parse as Parquet (e.g. truncated), its provenance names another key (another row's file
    copied here) or none, it has no checksum (written by older code), or its content does not
    match its checksum (:func:`content_checksum`, recomputed from the data read back)."""
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        table = pq.read_table(path)
        reason = _why_not_served(table, path.stem if key is None else key)
    except FileNotFoundError:
        return None
    except Exception as err:  # noqa: BLE001 - whatever the damage, the entry is not served
        raise CorruptCacheEntry(path, f"unreadable ({type(err).__name__}: {err})") from err
    if reason is not None:
        raise CorruptCacheEntry(path, reason)
    return table.to_pandas()


def write_cached(path: Path, frame: pd.DataFrame, *, experiment: str, params: Mapping[str, Any], key: str) -> Path:
    """Write one row's frame atomically, with its provenance (experiment, params, key) and its
    content checksum (:data:`CHECKSUM_KEY`) attached. A write the system refuses (disk full, a
    file-size limit) is an :class:`~staleness_lab.errors.InputError` naming ``--cache`` and the
    file (:func:`~staleness_lab.outputs.writing`; no temporary file is left)."""
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = provenance_metadata({"experiment": experiment, "params": dict(params), "cache_key": key})
    meta[CHECKSUM_KEY.encode()] = content_checksum(table).encode()
    with writing(path, "--cache"):
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_parquet_atomic(table, path, meta)
