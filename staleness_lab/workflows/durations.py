"""Durations in workflow files, in hours (digest §3 [D]: every time and bound of a workflow is in
hours; the paper states its bounds as "1 hour", "4 hours", "1 day", "1 week", §5).

A duration is a number of hours or a string ``<number><unit>`` with unit ``min``, ``h``, ``d`` or
``w`` (``15min``, ``2h``, ``1d``, ``1w``); anything else is bad input naming the field.
"""

from __future__ import annotations

import math
import re
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.model.values import require_number

#: Hours per unit.
UNITS: dict[str, float] = {"min": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}
_TEXT = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)(min|h|d|w)")


def parse_duration(value: Any, field: str, *, ge: float | None = None, gt: float | None = None) -> float:
    """``value`` in hours: a finite number, or a ``<number><unit>`` string, within the bounds."""
    if isinstance(value, str):
        match = _TEXT.fullmatch(value)
        if match is None:
            raise InputError(field, f"must be a duration: hours as a number, or <number><unit> with unit min, h, d "
                                    f"or w (15min, 2h, 1d, 1w), got {value[:40]!r}")
        value = float(match[1]) * UNITS[match[2]]
    return require_number(value, field, ge=ge, gt=gt)


def format_duration(hours: float) -> str:
    """A short text for ``hours``: ``0``, else the largest whole unit (``1w``, ``1d``, ``4h``,
    ``15min``), else hours (``0.3h``)."""
    if hours == 0:
        return "0"
    for unit in ("w", "d", "h", "min"):
        amount = hours / UNITS[unit]
        if round(amount) >= 1 and math.isclose(amount, round(amount), rel_tol=0, abs_tol=1e-9):
            return f"{round(amount)}{unit}"
    return f"{hours:g}h"
