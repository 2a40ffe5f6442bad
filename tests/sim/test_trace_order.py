"""``trace.table_time_order``, the radix-sort shortcut for steps listed in time order, against
the lexsort it replaces: the same permutation on any input, sorted times or not."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.sim.trace import table_time_order


@settings(max_examples=300, deadline=None)
@given(pos=st.lists(st.integers(0, 40), max_size=200), times=st.lists(st.sampled_from([0.0, 1.0, 2.5, 7.0, np.nan]),
       max_size=200), in_time_order=st.booleans())
def test_same_permutation_as_lexsort(pos: list[int], times: list[float], in_time_order: bool) -> None:
    k = min(len(pos), len(times))
    p, t = np.array(pos[:k], dtype=np.int64), np.array(times[:k], dtype=float)
    if in_time_order:
        t = np.sort(np.nan_to_num(t))
    assert np.array_equal(table_time_order(p, t), np.lexsort((t, p)))


def test_many_tables_take_the_lexsort() -> None:
    p = np.array([40_000, 3, 40_000, 3], dtype=np.int64)
    t = np.array([0.0, 0.0, 1.0, 2.0])
    assert np.array_equal(table_time_order(p, t), np.lexsort((t, p)))
