"""Exact numbers for the intermittent-query model: every time, rate and cost is a ``Fraction``.

Numbers are read as written (``Fraction(repr(x))``: ``0.1`` is 1/10, not the nearest binary
float), so the worked examples of the digest (E1-E5) come out exact and the CP-SAT planner can
scale them to integers on its time grid without rounding. Frames and JSON show them as floats.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

import numpy as np

from staleness_lab.errors import InputError, shown
from staleness_lab.model.values import decimal_digits, number_text_rule

#: The largest magnitude accepted: every number must also be shown as a float.
LARGEST = Fraction(sys.float_info.max)


def exact(value: Any, field: str, *, gt: float | None = None, ge: float | None = None) -> Fraction:
    """``value`` as a Fraction (an int, a float read by its repr, a Fraction, a NumPy scalar, or a
    decimal string such as ``"2.25"``), finite, within float range (every result is also shown as
    a float) and within the bounds, or an :class:`InputError` naming ``field``.

    A string is first held to :func:`~staleness_lab.model.values.number_text_rule` (at most 320
    digits, an exponent of at most ±400), checked on its characters before any conversion: files
    and command-line flags (``--cmax``, ``--delta-rsf``) pass through here alike."""
    if isinstance(value, np.generic) and not isinstance(value, np.bool_):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, str)):
        raise InputError(field, f"must be a number, got {value!r} ({type(value).__name__})")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(field, f"must be a finite number, got {value}")
    if isinstance(value, str):
        rule = number_text_rule(value)
        if rule is not None:
            raise InputError(field, rule)
    try:
        number = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise InputError(field, f"must be a number, got {shown(value, 60)}") from None
    if abs(number) > LARGEST:
        raise InputError(field, f"must be within ±{float(LARGEST):g} (float range), got a number of "
                                f"{decimal_digits(abs(number.numerator) // number.denominator)} digits")
    if gt is not None and not number > gt:
        raise InputError(field, f"must be > {gt:g}, got {show(number)}")
    if ge is not None and not number >= ge:
        raise InputError(field, f"must be >= {ge:g}, got {show(number)}")
    return number


def show(value: Fraction | int | float | None) -> str:
    """A number as a short human string (``2.25``, ``1/3`` shown as ``0.333333``)."""
    if value is None:
        return "none"
    return f"{float(value):g}"
