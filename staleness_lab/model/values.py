"""Checks of single values: the type and range rules every model field obeys.

Each check raises :class:`InputError` naming the field (and the table, when there is one)
and the rule the value breaks; it returns the value normalised (ints and floats as float).
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any

from staleness_lab.errors import InputError


def require_int(
    value: Any, field: str, *, minimum: int | None = None, maximum: int | None = None, table: str | None = None
) -> int:
    """An integer (``True`` and ``"2"`` are not), optionally within ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(field, f"must be an integer, got {_show(value)}", table=table)
    if minimum is not None and value < minimum:
        raise InputError(field, f"must be >= {minimum}, got {_show_int(value)}", table=table)
    if maximum is not None and value > maximum:
        raise InputError(field, f"must be <= {maximum:,}, got {_show_int(value)}", table=table)
    return value


def require_number(
    value: Any,
    field: str,
    *,
    table: str | None = None,
    gt: float | None = None,
    ge: float | None = None,
    le: float | None = None,
    lt: float | None = None,
) -> float:
    """A finite real number (not a bool, not NaN or infinite) within the given bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(field, f"must be a number, got {_show(value)}", table=table)
    if isinstance(value, int) and abs(value) > FLOAT_MAX:
        raise InputError(field, huge_int_rule(decimal_digits(value)), table=table)
    number = float(value)
    if not math.isfinite(number):
        raise InputError(field, f"must be a finite number, got {value}", table=table)
    if gt is not None and not number > gt:
        raise InputError(field, f"must be > {_fmt(gt)}, got {_fmt(number)}", table=table)
    if ge is not None and not number >= ge:
        raise InputError(field, f"must be >= {_fmt(ge)}, got {_fmt(number)}", table=table)
    if le is not None and not number <= le:
        raise InputError(field, f"must be <= {_fmt(le)}, got {_fmt(number)}", table=table)
    if lt is not None and not number < lt:
        raise InputError(field, f"must be < {_fmt(lt)}, got {_fmt(number)}", table=table)
    return number


def require_str(value: Any, field: str, *, table: str | None = None) -> str:
    """A non-empty string of valid Unicode (a lone surrogate such as ``"\\ud800"`` is not:
    it cannot be written as UTF-8 to a trace, a cache key or a report)."""
    if not isinstance(value, str) or not value:
        raise InputError(field, f"must be a non-empty string, got {_show(value)}", table=table)
    if lone_surrogate_at(value) is not None:
        raise InputError(field, f"must be valid Unicode text, got {_show(value)}", table=table)
    return value


#: The longest name of a thing that is shown but never part of a path (a table's), in characters.
MAX_LABEL_CHARS = 256


def require_label(value: Any, field: str, *, table: str | None = None) -> str:
    """A name shown in reports and traces but never made part of a path (a workload's table
    names): :func:`require_str`, at most :data:`MAX_LABEL_CHARS` characters, and no NUL (which
    C libraries, Parquet readers and terminals take as the end of the text). Other characters,
    a line break included, are kept: messages escape them. Names that become path components
    take the stricter :func:`staleness_lab.paths.safe_name`."""
    text = require_str(value, field, table=table)
    if len(text) > MAX_LABEL_CHARS:
        raise InputError(field, f"has {len(text):,} characters, more than {MAX_LABEL_CHARS}")
    if "\0" in text:
        raise InputError(field, f"holds a NUL character (U+0000) at position {text.index(chr(0))}")
    return text


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (which UTF-8 cannot encode), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        return err.start
    return None


def require_list(value: Any, field: str, *, table: str | None = None, non_empty: bool = True) -> list[Any]:
    """A list (a tuple is accepted from Python), non-empty unless allowed."""
    if not isinstance(value, (list, tuple)):
        raise InputError(field, f"must be a list, got {_show(value)}", table=table)
    if non_empty and not value:
        raise InputError(field, "must not be empty", table=table)
    return list(value)


def require_mapping(value: Any, field: str) -> dict[str, Any]:
    """A mapping with string keys."""
    if not isinstance(value, dict):
        raise InputError(field, f"must be a mapping, got {_show(value)}")
    return value


def check_keys(
    mapping: dict[str, Any], field: str, *, allowed: set[str], required: set[str], table: str | None = None
) -> None:
    """No unknown keys (the first one is named) and every required key present."""
    for key in mapping:
        if key not in allowed:
            where = f"{field}.{key}" if field else str(key)
            raise InputError(where, f"unknown field {key!r} (allowed: {', '.join(sorted(allowed))})", table=table)
    for key in sorted(required):
        if key not in mapping:
            where = f"{field}.{key}" if field else key
            raise InputError(where, "missing required field", table=table)


#: The largest finite float: an integer beyond it has no float value.
FLOAT_MAX = sys.float_info.max


def decimal_digits(value: int) -> int:
    """Decimal digits of ``abs(value)``, exactly, without ``str()`` (which refuses past 4,300
    digits): 2^(b-1) <= |value| < 2^b leaves two candidates, told apart by one power of ten."""
    magnitude = abs(value)
    if magnitude < 10:
        return 1
    digits = int((magnitude.bit_length() - 1) * math.log10(2)) + 1
    return digits + 1 if magnitude >= 10**digits else digits


def huge_int_rule(digits: int) -> str:
    """The rule an integer of ``digits`` digits beyond :data:`FLOAT_MAX` breaks."""
    return f"integer with {digits} digits is beyond the float range (at most {FLOAT_MAX:.1e})"


#: The most digits a number may be written with: the float range has 309 integer digits, so a
#: longer integer is out of range either way, and no float needs more to be read exactly. The
#: document loader refuses longer integer literals unconverted; :func:`number_text_rule` applies
#: the same limit to numbers written as text (``"2.25"``, ``"1/3"``, ``"1e5"``).
MAX_NUMBER_DIGITS = 320
#: The largest exponent, in magnitude, of a number written as text: past the float range
#: (1.8e308 up, 4.9e-324 down) with room for the digits before the point. Exact arithmetic on
#: ``1e999999999`` would build a billion-digit integer before any range check could run.
MAX_EXPONENT = 400
_EXPONENT = re.compile(r"[eE]([-+]?)([\d_]+)\s*\Z")  # \d: any Unicode digit, as int() reads


def number_text_rule(text: str) -> str | None:
    """Why a number written as text must not be converted to an exact fraction, or None.

    The rule, checked on the characters alone (nothing is converted): at most
    :data:`MAX_NUMBER_DIGITS` digits before the exponent (sign, point, ``/`` and ``_`` aside;
    leading zeros count), and an exponent of at most :data:`MAX_EXPONENT` in magnitude. Text
    that is not a number at all passes here and is refused by the conversion that follows."""
    exponent = _EXPONENT.search(text)
    mantissa = text if exponent is None else text[:exponent.start()]
    digits = sum(1 for ch in mantissa if ch.isdecimal())
    if digits > MAX_NUMBER_DIGITS:
        return (f"number written with {digits:,} digits, more than {MAX_NUMBER_DIGITS} (the limit: no float "
                f"needs more, the float range ends at {FLOAT_MAX:.1e})")
    if exponent is not None:
        written = exponent.group(2).replace("_", "")
        zeros = 0
        while zeros < len(written) - 1 and int(written[zeros]) == 0:
            zeros += 1
        written = written[zeros:]
        if written and (len(written) > len(str(MAX_EXPONENT)) or int(written) > MAX_EXPONENT):
            shown = written if len(written) <= 30 else f"of {len(written):,} digits"
            return (f"number with exponent {exponent.group(1)}{shown}, beyond ±{MAX_EXPONENT} (the limit: the float "
                    f"range is {FLOAT_MAX:.1e} down to 4.9e-324)")
    return None


def _show_int(value: int) -> str:
    """An integer as text, or its digit count when it is too long to print in one line."""
    return str(value) if abs(value) < 10**30 else f"an integer with {decimal_digits(value)} digits"


def _fmt(number: float) -> str:
    return f"{number:g}"


def _show(value: Any) -> str:
    kind = type(value).__name__
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"{_show_int(value)} ({kind})"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{text} ({kind})"
