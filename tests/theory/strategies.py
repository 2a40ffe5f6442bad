"""Hypothesis strategies for Bateni et al.'s model: replayed base tables, alpha 0, data ending at
arrival, continuous release times (the paper assumes distinct releases, A7)."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def bateni_workloads(draw, max_tables: int = 6, max_updates: int = 8, max_load: float = 1.2) -> dict:
    """A workload dict: t tables, p <= t tracks (sometimes p = t: lock waits, A1), each table
    1..max_updates releases with continuous gaps, alpha_i = beta in (0, alpha] with the load
    x = alpha t / p drawn in (0, max_load]; weights in [0.5, 4]."""
    t = draw(st.integers(1, max_tables))
    p = draw(st.integers(1, t))
    x = draw(st.floats(0.01, max_load))
    alpha = min(x * p / t, 1.0)
    equal = draw(st.booleans())
    tables = []
    for k in range(t):
        n = draw(st.integers(1, max_updates))
        gaps = draw(st.lists(st.floats(0.05, 10, allow_nan=False), min_size=n, max_size=n))
        times, now = [], 0.0
        for gap in gaps:
            now += gap
            times.append(round(now, 9))
        beta = alpha if equal or k == 0 else draw(st.floats(0.1, 1)) * alpha
        tables.append({"name": f"t{k}", "arrivals": times, "alpha": 0, "beta": beta,
                       "priority": draw(st.sampled_from([0.5, 1, 2, 4]))})
    return {"tracks": p, "horizon": 1, "seed": draw(st.integers(0, 1000)), "tables": tables}
