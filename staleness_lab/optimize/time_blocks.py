"""Where an instance of the exact X_w optimum splits in time (Bateni digest §5; this project's
decomposition of :func:`staleness_lab.optimize.staleness_optimum.optimum`).

Cut the updates at an arrival instant τ: those that arrive before τ form the first part, the
rest the second (each table's second part starts from the data its first part ends with). Two
facts make the cut exact when it applies:

* **A lower bound.** Any schedule of the whole instance, restricted to one part (a batch that
  mixes both keeps its own part's updates, at the same start, ending no later), is a schedule of
  that part alone, X_w being a sum over updates; so OPT ≥ OPT(first) + OPT(second).
* **A schedule.** When an optimal schedule of the first part alone ends every batch by τ, it
  and an optimal schedule of the second part (whose batches start at or after their arrivals,
  so at or after τ) together schedule the whole instance: tracks and tables are free by τ, and
  no first-part batch starts at or after a second-part arrival (forced batching holds).

Candidate cuts are the instants at which a known schedule (the hint) is empty: every update
arrived before τ is in a batch that starts before τ and ends by τ. The caller solves the parts
(:func:`staleness_lab.optimize.staleness_optimum._solve_blocks`) and merges a part with the next
when its optimum does not end by the cut.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence


def cuts(arrivals: Sequence[Sequence[int]], batches: Sequence[tuple[int, int, int, int, int]]) -> list[int]:
    """The arrival instants τ (after the first) at which ``batches`` ``(table, first, last, start,
    end)``, covering every update of ``arrivals`` (per table, increasing), is empty (module
    docstring), increasing."""
    span: dict[tuple[int, int], tuple[int, int]] = {}
    for table, first, last, start, end in batches:
        for j in range(first, last + 1):
            span[(table, j)] = (start, end)
    updates = sorted((r, *span[(i, j)]) for i, row in enumerate(arrivals) for j, r in enumerate(row))
    out: list[int] = []
    latest_start = latest_end = None
    for k, (r, start, end) in enumerate(updates):
        if k and r != updates[k - 1][0] and latest_start < r and latest_end <= r:
            out.append(r)
        latest_start = start if latest_start is None else max(latest_start, start)
        latest_end = end if latest_end is None else max(latest_end, end)
    return out


def spans(arrivals: Sequence[Sequence[int]], lo: int | None, hi: int | None) -> list[tuple[int, int]]:
    """Per table, the positions ``(first, stop)`` of its updates arriving in ``[lo, hi)`` (None:
    unbounded)."""
    return [(0 if lo is None else bisect_left(row, lo), len(row) if hi is None else bisect_left(row, hi))
            for row in arrivals]
