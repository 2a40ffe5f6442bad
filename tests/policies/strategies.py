"""Hypothesis strategies shared by the partitioner tests."""

from __future__ import annotations

from hypothesis import strategies as st

PERIODS = [2, 4, 5, 8, 10, 20, 25, 40, 100]


@st.composite
def periodic_tables(draw, alphas):
    """2-8 tables: periodic base tables (periods from PERIODS, small phases) and, from the third
    on, now and then a derived table over one or two earlier ones; alpha drawn from ``alphas``."""
    n = draw(st.integers(2, 8))
    tables = []
    for k in range(n):
        t = {
            "name": f"t{k}",
            "alpha": draw(st.sampled_from(alphas)),
            "beta": draw(st.sampled_from([0, 0.01, 0.05, 0.1])),
            "priority": draw(st.sampled_from([1, 2, 5, 10])),
        }
        if k >= 2 and draw(st.integers(0, 3)) == 0:
            t["sources"] = draw(st.lists(st.sampled_from([f"t{j}" for j in range(k)]), min_size=1, max_size=2, unique=True))
        else:
            t["period"] = draw(st.sampled_from(PERIODS))
            t["phase"] = draw(st.sampled_from([0, 0.5, 1, 1.5])) % t["period"]
        tables.append(t)
    return tables
