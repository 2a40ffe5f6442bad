"""Reading workloads from YAML or JSON files and plain mappings, with field-naming errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from staleness_lab.errors import InputError
from staleness_lab.model.documents import load_document
from staleness_lab.model.table import Table
from staleness_lab.model.values import check_keys, require_mapping
from staleness_lab.model.workload import Slowdown, Workload

TOP_KEYS = {"tracks", "horizon", "seed", "tables", "variability", "cost_noise", "provisioning", "slowdown", "warmup", "chop"}
TOP_REQUIRED = {"tracks", "horizon", "tables"}
TABLE_KEYS = {
    "name", "period", "phase", "arrivals", "nominal_period", "sources",
    "alpha", "beta", "priority", "initial_freshness", "chop", "min_separation", "length_range",
    "outages", "arrival_jitter", "timestamp_jitter", "budget", "recovery_period", "recovery_threshold",
    "target_lag",
}
TABLE_REQUIRED = {"name", "alpha", "beta", "priority"}
SLOWDOWN_KEYS = {"factor", "normal", "slow"}


def parse_workload(data: Any) -> Workload:
    """Build a :class:`Workload` from a mapping as found in a YAML/JSON file.

    Every rule violation raises :class:`InputError` naming the field, e.g.
    ``tables[1].period (table 'b'): must be > 0, got -1``.
    """
    data = require_mapping(data, "workload")
    check_keys(data, "", allowed=TOP_KEYS, required=TOP_REQUIRED)
    raw_tables = data["tables"]
    if not isinstance(raw_tables, list):
        raise InputError("tables", f"must be a list of tables, got {type(raw_tables).__name__}")
    if not raw_tables:
        raise InputError("tables", "must not be empty")
    tables = [_parse_table(raw, k) for k, raw in enumerate(raw_tables)]
    slowdown = None
    if data.get("slowdown") is not None:
        raw = require_mapping(data["slowdown"], "slowdown")
        check_keys(raw, "slowdown", allowed=SLOWDOWN_KEYS, required=SLOWDOWN_KEYS)
        slowdown = Slowdown(**raw)
    options = {k: data[k] for k in ("seed", "variability", "cost_noise", "provisioning", "warmup", "chop") if k in data}
    return Workload(tables=tuple(tables), tracks=data["tracks"], horizon=data["horizon"], slowdown=slowdown, **options)


def _parse_table(raw: Any, k: int) -> Table:
    field = f"tables[{k}]"
    raw = require_mapping(raw, field)
    name = raw.get("name") if isinstance(raw.get("name"), str) else None
    check_keys(raw, field, allowed=TABLE_KEYS, required=TABLE_REQUIRED, table=name)
    try:
        table = Table(**raw)
    except InputError as err:
        raise InputError(f"{field}.{err.field}", err.rule, table=err.table) from None
    return table


def read_document(path: str | Path, what: str = "workload") -> dict[str, Any]:
    """The mapping at the top of a YAML or JSON file (``.json`` as JSON, anything else as YAML),
    or an :class:`InputError` naming the file: missing, not a regular file, too big, not UTF-8,
    empty, unparsable, not a mapping -- or naming the path of a value beyond the limits of
    :mod:`staleness_lab.model.documents` (depth, aliases, integer range, duplicate keys, ...).
    ``what`` names the kind of file in the messages (``workload``, ``query set``)."""
    return load_document(path, what=what)


def load_workload(path: str | Path) -> Workload:
    """Read and validate a workload file (``.json`` as JSON, anything else as YAML)."""
    return parse_workload(read_document(path, "workload"))


def dump_workload(workload: Workload, path: str | Path) -> None:
    """Write a workload as YAML (or JSON for a ``.json`` path); round-trips through load_workload."""
    path = Path(path)
    data = workload.to_dict()
    text = json.dumps(data, indent=2) if path.suffix.lower() == ".json" else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
