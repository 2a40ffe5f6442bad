"""Hypothesis strategies for Bateni et al.'s model: replayed base tables, alpha 0, data ending at
arrival, continuous release times (the paper assumes distinct releases, A7)."""

from __future__ import annotations

from hypothesis import assume
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


@st.composite
def quasiperiodic_workloads(draw, max_groups: int = 3, max_tables: int = 5, max_updates: int = 12) -> dict:
    """GROUPANDRUN's setting (digest Sec. 3, Theorem 4.3): g groups, each of B-quasiperiodic
    tables (every length, the first included, in [B/2, B], declared as ``length_range``), the
    groups' B far enough apart that stabbing recovers them, distinct continuous releases, and
    alpha = max beta within Theorem 4.3's precondition min((p-g)/(8t), 1/8) (times a factor
    in (0, 1])."""
    g = draw(st.integers(1, max_groups))
    scales = draw(st.lists(st.sampled_from([1.0, 3.0, 10.0, 60.0, 1440.0]), min_size=g, max_size=g, unique=True))
    tables = []
    for k, big_b in enumerate(scales):
        for j in range(draw(st.integers(1, max_tables))):
            n = draw(st.integers(1, max_updates))
            lengths = draw(st.lists(st.floats(0.5, 1.0), min_size=n, max_size=n))
            times, now = [], 0.0
            for length in lengths:
                now += length * big_b
                times.append(now)
            tables.append({"name": f"g{k}t{j}", "arrivals": times, "alpha": 0, "beta": 1.0,
                           "priority": draw(st.sampled_from([0.5, 1, 2, 4])), "length_range": [big_b / 2, big_b]})
    releases = [a for table in tables for a in table["arrivals"]]
    assume(len(set(releases)) == len(releases))  # Sec. 4 assumes distinct releases
    t = len(tables)
    p = draw(st.integers(g + 1, g + 1 + t))
    alpha = min((p - g) / (8 * t), 1 / 8) * draw(st.floats(0.05, 1.0))
    for table in tables:
        table["beta"] = alpha * draw(st.floats(0.2, 1.0)) if table is not tables[0] else alpha
    return {"tracks": p, "horizon": 1, "seed": draw(st.integers(0, 1000)), "tables": tables}
