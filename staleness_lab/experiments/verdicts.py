"""The verdict vocabulary every paper's report shares: one record per check, and the summary line
the report index shows.

A verdict is one row of :data:`COLUMNS`::

    check    the check's label ("1", "fig7", "erratum: ...": each paper numbers its own)
    figure   where in the paper ("Sec. 4.2", "Fig. 6", "E1", ...)
    claim    the claim and its threshold, in one sentence
    verdict  one of :data:`VERDICTS`:
               holds      the claim holds on the data
               differs    the paper's claim fails under a faithful reading; the detail has the evidence
               undecided  the data cannot decide; ``reason`` says why
               finding    a paper error confirmed (the claim as printed is wrong, as Bateni's errata)
    reason   for ``undecided`` only, one of :data:`REASONS`; ``""`` otherwise
    reading  the reading the verdict was computed under: :data:`PAPER` (the paper's own), or the
             name of one of ours
    margin   the binding slack: >= 0 when the check holds, < 0 by how much it fails, in the
             units named by ``detail``; NaN if none
    detail   every measured quantity the verdict rests on, as a sentence
    profile  the profile the data came from (:data:`LIVE` for what is computed now)

No paper's verdicts loosen a threshold to make a claim hold. A word outside the vocabulary is
refused (:class:`ValueError` naming the field and the allowed words), so every report speaks it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

COLUMNS = ["check", "figure", "claim", "verdict", "reason", "reading", "margin", "detail", "profile"]
#: The ``profile`` of a verdict computed now (a worked example), not read from a sweep.
LIVE = "live"

HOLDS, DIFFERS, UNDECIDED, FINDING = "holds", "differs", "undecided", "finding"
#: Every verdict, in the order counts are shown.
VERDICTS = (HOLDS, DIFFERS, UNDECIDED, FINDING)

#: The claim rests on rates and costs the paper does not print (Olston's correction 7).
UNPRINTED_RATES = "depends on the unprinted rates and costs"
#: Judged on synthetic cost curves where the paper's measured ones are unpublished.
SYNTHETIC_COSTS = "synthetic costs"
#: The profile does not reach what the claim needs (a sweep not run, a point or a regime missing).
SCALE = "scale"
#: A solver or scheduler ran out of its time budget (a CP-SAT time-out, a run timed out).
BUDGET = "budget"
#: The paper's statement does not say what it claims (Leontyev §5.4, digest correction 3).
AMBIGUOUS = "ambiguous in the paper"
#: Why a verdict is undecided: the only reasons there are.
REASONS = (UNPRINTED_RATES, SYNTHETIC_COSTS, SCALE, BUDGET, AMBIGUOUS)

#: The reading of a verdict computed as the paper states its claim.
PAPER = "paper"


def _one_of(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{field}: {value!r} is not one of {', '.join(map(repr, allowed))}")
    return value


def verdict_of(outcome: bool | str | None) -> str:
    """The vocabulary's word for a check's outcome: True holds, False differs, None undecided,
    or a word of :data:`VERDICTS` as given."""
    if outcome is None:
        return UNDECIDED
    if isinstance(outcome, (bool, np.bool_)):
        return HOLDS if outcome else DIFFERS
    return _one_of("verdict", outcome, VERDICTS)


def erratum(holds: bool) -> str:
    """An erratum row's verdict: the paper's claim failing confirms the erratum (a
    :data:`FINDING`); holding, it holds."""
    return HOLDS if holds else FINDING


def verdict_row(check: int | str, figure: str, claim: str, outcome: bool | str | None, margin: float | None,
                detail: str, profile: str = LIVE, *, reason: str | None = None, reading: str = PAPER) -> dict[str, Any]:
    """One verdict in the record format of :data:`COLUMNS`. ``outcome``: see :func:`verdict_of`;
    ``reason`` (one of :data:`REASONS`) is why the verdict would be undecided, kept only when it
    is (an undecided verdict without one is refused); a missing or infinite ``margin`` is NaN."""
    verdict = verdict_of(outcome)
    if reason is not None:
        _one_of("reason", reason, REASONS)
    if verdict == UNDECIDED and reason is None:
        raise ValueError(f"reason: check {check!r} is undecided without a reason (one of "
                         f"{', '.join(map(repr, REASONS))})")
    if not isinstance(reading, str) or not reading.strip():
        raise ValueError(f"reading: check {check!r} names no reading (give {PAPER!r} or the name of ours)")
    return {
        "check": check, "figure": figure, "claim": claim, "verdict": verdict,
        "reason": reason if verdict == UNDECIDED else "", "reading": reading,
        "margin": float(margin) if margin is not None and np.isfinite(margin) else math.nan,
        "detail": detail, "profile": profile,
    }


def check_table(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` when it is a verdict table in the vocabulary (:data:`COLUMNS`, every verdict
    and reason a word of :data:`VERDICTS` and :data:`REASONS`, a reason exactly when undecided,
    a reading named); else :class:`ValueError` naming the first row at fault."""
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"columns: {', '.join(missing)} missing from the verdict table")
    for row in table.itertuples(index=False):
        where = f"check {row.check!r}"
        try:
            verdict = _one_of("verdict", row.verdict, VERDICTS)
            if verdict == UNDECIDED:
                _one_of("reason", row.reason, REASONS)
            elif row.reason != "":
                raise ValueError(f"reason: {row.reason!r} given for a verdict that is {verdict!r}, not undecided")
            if not isinstance(row.reading, str) or not row.reading.strip():
                raise ValueError("reading: none named")
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
    return table


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many rows of ``table`` carry each verdict, in the order of :data:`VERDICTS`."""
    found = table["verdict"].value_counts()
    return {v: int(found.get(v, 0)) for v in VERDICTS}


def counts_text(counts: dict[str, int]) -> str:
    """``11 hold, 3 differ, 12 undecided, 3 findings``: the counts as the index and the command
    line show them."""
    words = {HOLDS: "hold", DIFFERS: "differ", UNDECIDED: "undecided", FINDING: "findings"}
    return ", ".join(f"{counts.get(v, 0)} {words[v]}" for v in VERDICTS)


def summary_line(table: pd.DataFrame, profile: str, subject: str) -> str:
    """One line for the report index: the counts of :func:`verdict_counts` over the ``subject``
    at the profile, then which checks differ, which are undecided (by reason) and which are
    findings."""
    line = f"{len(table)} {subject} at the {profile} profile: {counts_text(verdict_counts(table))}"
    differ = [str(c) for c, v in zip(table["check"], table["verdict"]) if v == DIFFERS]
    if differ:
        line += f"; differ: {', '.join(differ)}"
    undecided = table[table["verdict"] == UNDECIDED]
    for reason, part in undecided.groupby("reason", sort=False):
        line += f"; undecided ({reason}): {', '.join(map(str, part['check']))}"
    found = [str(c) for c, v in zip(table["check"], table["verdict"]) if v == FINDING]
    if found:
        line += f"; findings: {', '.join(found)}"
    return line


def coverage_table(items: list[tuple[str, tuple[str, ...], str]], table: pd.DataFrame) -> pd.DataFrame:
    """Each numbered figure, table and worked example of a paper (``items``: the item, the
    checks of ``table`` that judge it, a note), with those checks' verdicts, or, naming no check,
    the note saying why it is not reproduced here (or which report judges it). A named check
    missing from ``table`` is refused (:class:`ValueError` naming the item)."""
    verdicts = dict(zip(table["check"].astype(str), table["verdict"]))
    rows = []
    for item, checks, note in items:
        missing = [c for c in checks if c not in verdicts]
        if missing:
            raise ValueError(f"coverage: {item} names check(s) {', '.join(missing)} the verdict table lacks")
        if not checks and not note:
            raise ValueError(f"coverage: {item} has neither a check nor a reason")
        rows.append({"item": item, "verdicts": "; ".join(f"{c}: {verdicts[c]}" for c in checks) or "-", "note": note})
    return pd.DataFrame(rows, columns=["item", "verdicts", "note"])
