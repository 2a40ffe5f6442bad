"""TPC-H data for the intermittent-query experiments: streams of numbered Parquet parts.

Chandrasekaran & Sudarshan stream TPC-H's orders and lineitem as files arriving one per second
(digest §5-6) and keep the six other tables static. :func:`generate` runs the ``tpchgen-cli``
generator (a Rust binary from PyPI, no Python API) and rewrites its Parquet output with pyarrow
(no pyspark here)::

    data/tpch/sf<SF>-p<P>/
        orders/orders.<k>.parquet       k = 1..P, each row with arrival_ts = T0 + (k-1) s
        lineitem/lineitem.<k>.parquet   the same k: part k of both holds the same o_orderkey range
        static/<table>.parquet          customer, nation, region, part, partsupp, supplier
        manifest.json                   SF, P, the generator's version, T0, rows and arrival per file

Part k of orders and part k of lineitem cover the same order keys (the generator's parts split
the order key range), which is the paper's assumption that matching orders and lineitems arrive
in the same batch. Types stay exact: decimal(15,2) and date from the generator; its Arrow string
views become plain strings (Spark reads those), and ``arrival_ts`` is a UTC timestamp for
streaming watermarks.

Everything is written into a hidden temporary directory beside the target and renamed into place
when complete, so a killed run never leaves a directory that looks finished; a rerun skips only
when the target's manifest matches (SF, P, generator version, T0, every listed file present), and
otherwise replaces an earlier generation. A non-empty directory without a manifest is refused.
``tpchgen-cli`` itself skips files that already exist, with a warning and exit 0, without
checking them: it only ever writes into a fresh temporary directory here.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.provenance import building_directory

STREAMS = ("orders", "lineitem")
STATIC = ("customer", "nation", "region", "part", "partsupp", "supplier")
#: When part 1 arrives; part k arrives k - 1 seconds later (λ = 1 file per second).
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
MANIFEST = "manifest.json"
GENERATOR = "tpchgen-cli"
#: Limits that keep a typo from filling the disk: SF 1 is about 1 GB of TPC-H data.
MAX_SCALE = 1000.0
MAX_PARTS = 100_000


def generator_path() -> Path:
    """``tpchgen-cli``: beside this Python first (``make test`` runs ``.venv/bin/python`` without
    the venv on PATH), then on PATH; an :class:`InputError` saying how to install it otherwise."""
    beside = Path(sys.executable).parent / GENERATOR
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(GENERATOR)
    if found:
        return Path(found)
    raise InputError(GENERATOR, "the TPC-H generator is not installed: `make setup` installs it "
                                "(or `pip install 'tpchgen-cli>=4,<5'`)")


def generator_version(binary: Path | None = None) -> str:
    """The generator's version string, e.g. ``tpchgen-cli 4.0.0``."""
    out = subprocess.run([str(binary or generator_path()), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def check_scale(scale: Any, field: str = "--scale") -> float:
    """A scale factor: a finite number in (0, MAX_SCALE]."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise InputError(field, f"must be a finite number, got {scale!r}")
    if not 0 < scale <= MAX_SCALE:
        raise InputError(field, f"must be > 0 and <= {MAX_SCALE:g}, got {scale:g}")
    return float(scale)


def check_parts(parts: Any, field: str = "--parts") -> int:
    """A part count: an integer in [1, MAX_PARTS]."""
    if isinstance(parts, bool) or not isinstance(parts, int):
        raise InputError(field, f"must be an integer, got {parts!r}")
    if not 1 <= parts <= MAX_PARTS:
        raise InputError(field, f"must be between 1 and {MAX_PARTS}, got {parts}")
    return parts


def default_dir(scale: float, parts: int) -> Path:
    """``data/tpch/sf<SF>-p<P>`` under the data root (the checkout, else the working directory)."""
    from staleness_lab.paths import data_root

    return data_root() / "data" / "tpch" / f"sf{scale:g}-p{parts}"


def arrival(part: int, t0: datetime = T0) -> datetime:
    """When stream part ``part`` (1-based) arrives: ``T0 + (part - 1)`` seconds."""
    return t0 + timedelta(seconds=part - 1)


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The directory's manifest, or None when it has none or it cannot be read."""
    try:
        return json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_complete(directory: Path, scale: float, parts: int, version: str) -> bool:
    """True when ``directory`` holds a generation of ``scale`` and ``parts`` by ``version`` whose
    every listed file exists (what a rerun may skip)."""
    manifest = read_manifest(directory)
    if manifest is None:
        return False
    if (manifest.get("scale"), manifest.get("parts"), manifest.get("generator"), manifest.get("t0")) != (
            scale, parts, version, T0.isoformat()):
        return False
    files = manifest.get("files", [])
    expected = len(STREAMS) * parts + len(STATIC)
    return len(files) == expected and all((Path(directory) / f["path"]).is_file() for f in files)


def generate(scale: float, parts: int, out: Path | None = None, *, progress: bool = False) -> tuple[Path, bool]:
    """Generate (or find) the TPC-H files of ``scale`` in ``parts`` stream parts (module
    docstring). Returns the directory and whether it was generated now (False: skipped, its
    manifest matched)."""
    scale, parts = check_scale(scale), check_parts(parts)
    target = Path(out) if out is not None else default_dir(scale, parts)
    if target.exists() and not target.is_dir():
        raise InputError("--out", f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and read_manifest(target) is None:
        raise InputError("--out", f"{target} holds files but no {MANIFEST}: not a TPC-H generation, left untouched")
    binary = generator_path()
    version = generator_version(binary)
    if is_complete(target, scale, parts, version):
        return target, False
    with building_directory(target) as work:  # an older, mismatched generation goes only once this is in
        _generate_into(work, binary, scale, parts, version, progress)
    return target, True


def _generate_into(work: Path, binary: Path, scale: float, parts: int, version: str, progress: bool) -> None:
    raw = work / ".raw"
    _run(binary, ["parquet", "-s", f"{scale:g}", f"--tables={','.join(STREAMS)}", f"--parts={parts}",
                  "-o", str(raw / "stream")])
    _run(binary, ["parquet", "-s", f"{scale:g}", f"--tables={','.join(STATIC)}", "-o", str(raw / "static")])
    files: list[dict[str, Any]] = []
    steps = [(table, k) for k in range(1, parts + 1) for table in STREAMS]
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc="rewriting TPC-H parts", unit="file")
    for table, k in steps:
        path = Path(table) / f"{table}.{k}.parquet"
        rows = _rewrite(raw / "stream" / table / f"{table}.{k}.parquet", work / path, arrival(k))
        files.append({"table": table, "part": k, "path": path.as_posix(), "rows": rows,
                      "arrival_ts": arrival(k).isoformat()})
    for table in STATIC:
        path = Path("static") / f"{table}.parquet"
        rows = _rewrite(raw / "static" / f"{table}.parquet", work / path, None)
        files.append({"table": table, "part": None, "path": path.as_posix(), "rows": rows, "arrival_ts": None})
    shutil.rmtree(raw)
    manifest = {"scale": scale, "parts": parts, "generator": version, "t0": T0.isoformat(),
                "rate_files_per_second": 1, "files": files}
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _run(binary: Path, args: list[str]) -> None:
    done = subprocess.run([str(binary), *args], capture_output=True, text=True)
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()[:1]
        raise InputError(GENERATOR, f"failed (exit {done.returncode}): {first[0] if first else 'no message'}")


def _rewrite(source: Path, dest: Path, arrived: datetime | None) -> int:
    """Copy one Parquet file with string views as strings and, for a stream part, its
    ``arrival_ts`` column; return its row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(source)
    fields = [pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type, nullable=f.nullable)
              for f in table.schema]
    table = table.cast(pa.schema(fields))
    if arrived is not None:
        stamp = pa.array([arrived] * table.num_rows, type=pa.timestamp("us", tz="UTC"))
        table = table.append_column(pa.field("arrival_ts", stamp.type, nullable=False), stamp)
    dest.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, dest)
    return table.num_rows
