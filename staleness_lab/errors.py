"""The one exception type the workbench raises for bad input."""

from __future__ import annotations

from typing import Any


class InputError(ValueError):
    """Bad input: a workload, an option or a parameter that breaks a rule.

    ``field`` is a dotted path to the offending value (``tables[1].period``,
    ``tracks``, ``--policy``); ``table`` names the table at fault when there is one.
    The message always starts with the field so one line on stderr says what is wrong.
    """

    def __init__(self, field: str, rule: str, *, table: str | None = None) -> None:
        self.field = field
        self.rule = rule
        self.table = table
        where = f"{field} (table {table!r})" if table is not None else field
        super().__init__(one_line(f"{where}: {rule}"))


#: The longest message printed: an input echoing a 10^5-character name still gives one readable line.
MAX_MESSAGE = 2000


#: Every character ``str.splitlines`` breaks a line at, escaped in a message: ``\r`` and ``\n``
#: as such, the others (vertical tab, form feed, the file/group/record separators, NEL U+0085,
#: the line and paragraph separators U+2028/U+2029) as ``\xNN`` or ``\uNNNN``.
_LINE_BREAKS = {ord("\r"): "\\r", ord("\n"): "\\n",
                **{c: f"\\x{c:02x}" for c in (0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85)},
                **{c: f"\\u{c:04x}" for c in (0x2028, 0x2029)}}


def one_line(text: str) -> str:
    """Escape line breaks (from names or keys in the input: every one ``str.splitlines`` knows)
    so the message stays one line, and characters that are not valid Unicode (a lone surrogate)
    so it can be printed at all; cut past :data:`MAX_MESSAGE` characters."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8").translate(_LINE_BREAKS)
    return text if len(text) <= MAX_MESSAGE else f"{text[:MAX_MESSAGE - 40]}... ({len(text):,} characters in all)"


class Infeasible(Exception):
    """A scheduler cannot run this workload as configured (e.g. a partitioner cannot place the
    tables on the tracks). A result to report, not a crash: ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def shown(value: Any, width: int = 40) -> str:
    """``repr(value)`` cut to ``width`` characters, so a refused value is named in one line
    however long it is."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."
