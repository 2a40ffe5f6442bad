"""Strict JSON for every ``--json`` output: no ``NaN`` or ``Infinity`` tokens, ever.

Python's ``json.dumps`` writes ``Infinity`` for an infinite float, which no strict JSON parser
reads. :func:`strict` turns such values into ``null`` (NumPy scalars, Fractions and tuples
into their JSON forms); :func:`dumps` also lists each replaced number under ``"warnings"``,
naming its field (``tables[0].max_staleness: inf printed as null``), so a null that stands for
an overflow is told apart from one that means "not applicable".

:func:`canonical_json` is the text that keys and identities are hashed from (the sweeps' cache
keys, the workflow warehouse's block ids): one spelling per value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd


def strict(value: Any, path: str = "", warnings: list[str] | None = None) -> Any:
    """``value`` made strict-JSON-safe: NA and non-finite floats become None (each non-finite
    float noted in ``warnings`` with its ``path`` when a list is given), NumPy scalars and
    Fractions Python numbers, tuples lists, mapping keys strings (recursively)."""
    if value is pd.NA:
        return None
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): strict(v, f"{path}.{k}" if path else str(k), warnings) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v, f"{path}[{i}]", warnings) for i, v in enumerate(value)]
    if not isinstance(value, float):
        item = getattr(value, "item", None)  # numpy scalars
        if callable(item):
            return strict(item(), path, warnings)
        try:
            value = float(value)  # e.g. Fraction
        except (TypeError, ValueError):
            return str(value)
    if math.isfinite(value):
        return value
    if warnings is not None:
        warnings.append(f"{path}: {value} printed as null")
    return None


def dumps(document: Mapping[str, Any]) -> str:
    """One strict JSON object: ``document`` through :func:`strict`, plus a ``warnings`` list
    naming every non-finite number printed as null (absent when there is none)."""
    warnings: list[str] = []
    out = strict(document, "", warnings)
    if warnings:
        out["warnings"] = warnings
    return json.dumps(out, allow_nan=False)


def canonical_json(value: Any) -> str:
    """Key-sorted, compact, ASCII JSON with no NaN/Infinity: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
