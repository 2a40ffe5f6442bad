"""The verdict format every paper's report shares: one record per check, and the summary line
the report index shows.

A verdict is one row of :data:`COLUMNS`::

    check    the check's label ("1", "fig7", "erratum: ...": each paper numbers its own)
    figure   what it is about ("Sec. 4.2", "Fig. 6", "E1", ...)
    claim    the claim and its threshold, in one sentence
    holds    True / False, or None when the data cannot decide (a sweep not run, a point missing)
    margin   the binding slack: >= 0 when the check holds, < 0 by how much it fails, in the
             units named by ``detail``; NaN if none
    detail   every measured quantity the verdict rests on, as a sentence
    profile  the profile the data came from (:data:`LIVE` for what is computed now)

A check that does not hold is a finding, reported as such; no paper's verdicts loosen a
threshold to make a claim hold.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

COLUMNS = ["check", "figure", "claim", "holds", "margin", "detail", "profile"]
#: The ``profile`` of a verdict computed now (a worked example), not read from a sweep.
LIVE = "live"


def verdict_row(check: int | str, figure: str, claim: str, holds: bool | None, margin: float | None, detail: str,
                profile: str = LIVE) -> dict[str, Any]:
    """One verdict in the record format of :data:`COLUMNS`, shared by every paper's checks:
    ``holds`` as a bool or None (undecided), a missing or infinite ``margin`` as NaN."""
    return {
        "check": check, "figure": figure, "claim": claim,
        "holds": None if holds is None else bool(holds),
        "margin": float(margin) if margin is not None and np.isfinite(margin) else math.nan,
        "detail": detail, "profile": profile,
    }


def summary_line(table: pd.DataFrame, profile: str, subject: str, undecided: str = "undecided") -> str:
    """One line for the report index: how many ``subject`` hold at the profile, which differ
    and which cannot be decided (listed after ``undecided``)."""
    yes = [c for c, h in zip(table["check"], table["holds"]) if h is True]
    no = [c for c, h in zip(table["check"], table["holds"]) if h is False]
    unknown = [c for c, h in zip(table["check"], table["holds"]) if h is None]
    line = f"{len(yes)} of {len(table)} {subject} hold at the {profile} profile"
    if no:
        line += f"; differ: {', '.join(map(str, no))}"
    if unknown:
        line += f"; {undecided}: {', '.join(map(str, unknown))}"
    return line
