"""Hypothesis strategy for the staleness optimum's tests: small replayed-feed workloads that the
brute force can still enumerate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st


@st.composite
def replayed_workloads(draw: st.DrawFn, max_updates: int, max_tick: int, alphas: Sequence[float],
                       betas: Sequence[float]) -> dict[str, Any]:
    """At most 3 tables and ``max_updates`` updates on p <= 2 tracks, releases on a 0.1 grid in
    ``(0, max_tick / 10]``, each table's alpha and beta drawn from ``alphas`` and ``betas``."""
    n_tables = draw(st.integers(1, 3))
    counts = [1] * n_tables
    for _ in range(draw(st.integers(0, max_updates - n_tables))):
        counts[draw(st.integers(0, n_tables - 1))] += 1
    tables = []
    for k, n in enumerate(counts):
        ticks = sorted(draw(st.lists(st.integers(1, max_tick), min_size=n, max_size=n, unique=True)))
        tables.append({"name": f"t{k}", "arrivals": [t / 10 for t in ticks],
                       "alpha": draw(st.sampled_from(list(alphas))), "beta": draw(st.sampled_from(list(betas))),
                       "priority": draw(st.sampled_from([1, 1, 2, 0.5]))})
    return {"tracks": draw(st.integers(1, 2)), "horizon": 100, "tables": tables}
