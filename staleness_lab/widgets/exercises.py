"""``check_answer``: a teaching notebook's exercise, marked against a value computed there and then.

The right value is never written in a notebook: the exercise cell hands ``check_answer`` a
function that computes it through the public API, called only when the student checks. Numbers
match within a relative tolerance, text case-insensitively; the verdict says right or wrong, and
why (the ``why`` hint, plus the value once the answer is right).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Relative tolerance of a numeric answer (students type a few digits).
REL_TOL = 0.01


@dataclass(frozen=True)
class Verdict:
    """A marked answer: ``right`` (None: nothing answered yet) and the sentence shown."""

    right: bool | None
    message: str

    def __bool__(self) -> bool:
        return bool(self.right)

    def __repr__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        color = {True: "#1b7f3b", False: "#b00020", None: "#555555"}[self.right]
        return f'<p style="color:{color};font-weight:600">{html.escape(self.message)}</p>'


def _matches(answer: Any, expected: Any, rel_tol: float) -> bool:
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().casefold() == expected.strip().casefold()
    if isinstance(answer, bool) or isinstance(expected, bool):
        return answer is expected
    try:
        return math.isclose(float(answer), float(expected), rel_tol=rel_tol, abs_tol=1e-9)
    except (TypeError, ValueError):
        return False


def check_answer(answer: Any, compute: Callable[[], Any], why: str, *, rel_tol: float = REL_TOL) -> Verdict:
    """Mark ``answer`` against ``compute()`` (the right value, computed now). ``why`` says how
    the value arises: shown with a wrong answer as the hint, and with a right one beside the value.
    ``answer = None`` (the exercise cell as committed) is not marked."""
    if answer is None:
        return Verdict(None, f"Type your answer and run the cell again. Hint: {why}")
    expected = compute()
    if _matches(answer, expected, rel_tol):
        shown = expected if isinstance(expected, str) else f"{float(expected):.6g}"
        return Verdict(True, f"Right: {shown}. {why}")
    return Verdict(False, f"Not quite: {answer!r} is not it. {why}")
