"""``sl.explain``: each table's worst lag episode splits into parts (inherited, behind refreshes,
waiting for a track, own refresh) that sum exactly to the observed worst lag, and the what-ifs
are predicted and re-simulated."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.model import Table, Workload
from staleness_lab.theory.lagsplit import PARTS
from leontyev_strategies import leontyev_workloads


@settings(max_examples=40, deadline=None)
@given(leontyev_workloads(replayed=True), st.sampled_from(["gedf-np", "aus", "fifo", "max-benefit"]))
def test_the_parts_sum_exactly_to_the_worst_lag(w: Workload, policy: str):
    result = sl.simulate(w, policy)
    explained = sl.explain(result)
    worst = result.tables.set_index("table")["max_staleness"] if w.warmup == 0 else None
    for e in explained.episodes:
        assert sum(e.parts, Fraction(0)) == Fraction(e.until) - Fraction(e.since) == e.lag
        assert all(p >= 0 for p in e.parts)
        if worst is not None:
            assert abs(float(e.lag) - worst[e.table]) <= 1e-9 * max(1.0, worst[e.table]), (e.table, worst[e.table])
    frame = explained.parts
    assert list(frame["part"]) == list(PARTS) * len(w.tables)
    assert (frame.groupby("table", sort=False)["exact"].sum() == [e.lag for e in explained.episodes]).all()


def test_a_second_track_removes_the_wait_it_predicts():
    """Two tables released together on one track: the second waits a whole refresh of the first;
    with a second track it waits none, as predicted; relaxing the first's target changes nothing
    under gedf-np, which does not read targets."""
    w = Workload(tables=(Table("a", alpha=2, beta=0, period=10, target_lag=50),
                         Table("b", alpha=3, beta=0, period=10, target_lag=50)), tracks=1, horizon=40)
    explained = sl.explain(sl.simulate(w, "gedf-np"), table="b")
    (episode,) = explained.episodes
    assert [float(p) for p in episode.parts] == [10.0, 0.0, 2.0, 3.0]
    more, relax = explained.what_if.to_dict("records")
    assert more["scenario"] == "one more track (2)" and more["predicted"] == more["simulated"] == 13.0
    assert relax["scenario"] == "relax a (target x2)" and relax["predicted"] == 13.0 and relax["simulated"] == 15.0
