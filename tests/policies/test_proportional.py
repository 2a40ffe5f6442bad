"""Proportional partitioning (Golab et al., Sec. 3.2.3): clustering, allocation, dispatch.

The Sec. 3.2.4 example (k = 2, "all" and "basic") is in ``test_golab_examples.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.policies import proportional
from staleness_lab.sim import run
from policies.placement_recorder import Recorder
from policies.strategies import periodic_tables

TABLE2 = Path(__file__).resolve().parents[2] / "data" / "workloads" / "golab-table2.yaml"


def classes(short: int = 15, long: int = 15, tracks: int = 4, scale: float = 1.0) -> sl.Workload:
    """The Fig. 9 shape: short jobs (P 100, p 100) and long ones (P 10000, p 1), alpha 1, beta 0.1."""
    tables = [
        {"name": f"s{k:02d}", "period": 100, "phase": k * 100 / short, "alpha": scale, "beta": 0.1 * scale, "priority": 100}
        for k in range(short)
    ] + [
        {"name": f"l{k:02d}", "period": 10000, "phase": k * 10000 / long, "alpha": scale, "beta": 0.1 * scale, "priority": 1}
        for k in range(long)
    ]
    return sl.parse_workload({"tracks": tracks, "horizon": 20000, "tables": tables})


def test_k_decides_how_many_clusters():
    w = classes()
    # sorted by E(P): 15 short (E 11) then 15 long (E 1001); 10000 > k * 100 unless k >= 100
    assert [len(c) for c in proportional.clusters(w, k=1)] == [15, 15]
    assert [len(c) for c in proportional.clusters(w, k=10)] == [15, 15]
    assert [len(c) for c in proportional.clusters(w, k=100)] == [30]
    # the printed rule compares E with k * Pmin: 1001 < 1 * 100 fails, 1001 < 20 * 100 holds
    assert [len(c) for c in proportional.clusters(w, k=1, rule="cost")] == [15, 15]
    assert [len(c) for c in proportional.clusters(w, k=20, rule="cost")] == [30]


def test_five_minute_hourly_daily_feeds_split_at_k_10():
    # the paper's remark on k = 10 (periods in minutes: 5, 60, 1440)
    tables = [
        {"name": f"{kind}{k}", "period": period, "alpha": 0.1, "beta": 0.001, "priority": 1}
        for kind, period in (("m", 5), ("h", 60), ("d", 1440))
        for k in range(3)
    ]
    w = sl.parse_workload({"tracks": 3, "horizon": 100, "tables": tables})
    groups = proportional.clusters(w, k=10)
    assert [[w.tables[i].name[0] for i in g] for g in groups] == [["m"] * 3, ["h"] * 3, ["d"] * 3]


def test_allocation_puts_long_clusters_low_and_leaves_free_tracks_in_basic_mode():
    w = classes(scale=1.0, tracks=4)
    # UC short = 15 * 0.11 = 1.65, UC long = 15 * 0.1001 = 1.5015, U = 3.1515
    basic = proportional.allocate(w, k=1, mode="basic")
    assert basic.used == 4 and basic.free == ()
    full = proportional.allocate(w, k=1, mode="all", tracks=6)
    assert full.used == 6 and full.free == ()
    b6 = proportional.allocate(w, k=1, mode="basic", tracks=6)
    assert b6.used == 4 and b6.free == (4, 5)
    assert b6.M == pytest.approx(4 / b6.total_utilization)
    # long cluster (the last) starts at track 0; the short one sits above it
    assert b6.lo[1] == 0 and b6.hi[1] == pytest.approx(b6.M * 1.5015)
    assert b6.lo[0] == pytest.approx(b6.hi[1]) and b6.hi[0] == pytest.approx(4)
    assert b6.bottom == (1, 0) and b6.upper == ((2, 3), (1,))


def test_overload_uses_every_track_with_m_below_one():
    w = classes(scale=2.0, tracks=4)  # U ~ 6.3 > 4
    for mode in ("basic", "all"):
        a = proportional.allocate(w, k=1, mode=mode)
        assert a.used == 4 and a.M < 1 and a.free == ()
        assert a.hi[0] == 4


def test_integer_tracks_round_safely():
    # three clusters whose boundaries land exactly on whole tracks: no track beyond N, no
    # track skipped
    tables = [
        {"name": f"c{c}_{k}", "period": 10 ** (c + 1), "alpha": 10 ** (c + 1) / 3, "beta": 0, "priority": 1}
        for c in range(3)
        for k in range(3)
    ]
    w = sl.parse_workload({"tracks": 3, "horizon": 100, "tables": tables})
    a = proportional.allocate(w, k=2, mode="all")
    assert len(a.clusters) == 3
    assert a.utilization == pytest.approx((1, 1, 1))
    assert a.bottom == (2, 1, 0) and a.upper == ((), (), ())


# ---------------------------------------------------------------------------------------------
# dispatch on the Sec. 3.2.4 allocation ("all"): long cluster on track 0, short on {0, 1}
# ---------------------------------------------------------------------------------------------


def sec324(tracks: int = 2) -> sl.Workload:
    specs = [("J1", 4, 1), ("J2", 4, 1), ("J3", 8, 2), ("J4", 10, 1.25)]
    tables = [{"name": n, "period": p, "alpha": e, "beta": 0, "priority": 1} for n, p, e in specs]
    return sl.parse_workload({"tracks": tracks, "horizon": 100, "tables": tables})


J1, J2, J3, J4 = range(4)


def place_for(w, **options):
    return sl.get_policy("proportional", k=2, **options).bind(w, None).place


def test_upper_track_before_the_bottom_one():
    place = place_for(sec324())
    assert place([J1, J2], [0, 1], 0.0, None) == [(J1, 1), (J2, 0)]
    # long jobs never go above their cluster
    assert place([J3, J4], [1], 0.0, None) == []
    assert place([J3, J1], [0, 1], 0.0, None) == [(J3, 0), (J1, 1)]


def test_borrowing_a_longer_clusters_track():
    # four tracks, k = 2, "all": M = 4/0.875; long [0, 12/7) -> bottom 0, upper {1};
    # short [12/7, 4) -> bottom 1 (shared), upper {2, 3}. Track 0 belongs to the long cluster only.
    w = sec324(tracks=4)
    a = proportional.allocate(w, k=2)
    assert a.bottom == (1, 0) and a.upper == ((2, 3), (1,))
    calm = place_for(w)
    bold = place_for(w, aggressive=True)
    # J1's tracks 1-3 are busy; track 0 is below its bottom. J3 (later) would take track 0.
    assert calm([J1, J3], [0], 0.0, None) == [(J3, 0)]
    assert bold([J1, J3], [0], 0.0, None) == [(J1, 0)]
    # no later job needs track 0: both borrow it
    assert calm([J1, J2], [0], 0.0, None) == [(J1, 0)]


def test_free_tracks_come_after_the_clusters_own_tracks():
    w = sec324(tracks=3)
    place = place_for(w, tracks_mode="basic")  # M = 8/7: both clusters on track 0, tracks 1-2 free
    assert place([J3, J1, J4], [0, 1, 2], 0.0, None) == [(J3, 0), (J1, 1), (J4, 2)]


def test_one_cluster_behaves_like_global_max_benefit():
    # Fig. 6: uniform jobs form one cluster on every track, so Proportional makes global Max
    # Benefit's choices (on permuted track numbers) and the staleness is identical.
    w = sl.load_workload(TABLE2).with_overrides(horizon=3000)
    assert len(proportional.clusters(w, k=1)) == 1
    mb = sl.simulate(w, "max-benefit")
    pr = sl.simulate(w, "proportional")
    assert pr.total_weighted_staleness == pytest.approx(mb.total_weighted_staleness, rel=1e-12)
    assert pr.jobs["table"].tolist() == mb.jobs["table"].tolist()


# ---------------------------------------------------------------------------------------------
# property: a job only ever runs where the rules allow, for every variant
# ---------------------------------------------------------------------------------------------

@st.composite
def periodic_workloads(draw):
    tables = draw(periodic_tables([0.1, 0.25, 0.5, 1, 2, 5]))
    w = {
        "tracks": draw(st.integers(1, 6)),
        "horizon": draw(st.sampled_from([60, 150, 300])),
        "seed": draw(st.integers(0, 99)),
        "tables": tables,
    }
    if draw(st.booleans()):
        w["variability"] = 0.5
    return sl.parse_workload(w)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    periodic_workloads(),
    st.sampled_from([0.5, 1, 2, 10]),
    st.sampled_from(["basic", "all"]),
    st.booleans(),
    st.sampled_from(["period", "cost"]),
)
def test_jobs_run_only_on_allowed_tracks(w, k, mode, aggressive, rule):
    policy = sl.get_policy("proportional", k=k, tracks_mode=mode, aggressive=aggressive, clustering=rule)
    alloc = policy.allocation(w)
    # the allocation covers [0, used) without gaps or overlaps, long clusters lowest
    assert alloc.lo[-1] == 0 and alloc.hi[0] == alloc.used
    for j in range(len(alloc.clusters) - 1):
        assert alloc.lo[j] == alloc.hi[j + 1]
        assert alloc.bottom[j] >= alloc.bottom[j + 1]
    assert all(0 <= alloc.bottom[j] < alloc.used for j in range(len(alloc.clusters)))
    assert sorted(i for c in alloc.clusters for i in c) == list(range(len(w.tables)))
    allowed = proportional.allowed_tracks(alloc)
    cluster_of = alloc.cluster_of
    rec = Recorder(policy)
    jobs = run(w, rec, "proportional").jobs
    kinds = set()
    for table, track in zip(jobs["table"], jobs["track"]):
        i = w.index[table]
        assert track in allowed[i], (table, track, allowed[i])
        j = cluster_of[i]
        kinds.add("own" if track in alloc.home_tracks(j) else "free" if track in alloc.free else "borrowed")
    for kind in sorted(kinds):
        event(f"ran on {kind} track")
    free = set(alloc.free)
    for order, idle, chosen in rec.calls:
        available = set(idle)
        placed = dict(chosen)
        assert [i for i in order if i in placed] == [i for i, _ in chosen]
        for pos, i in enumerate(order):
            j = cluster_of[i]
            own = set(alloc.home_tracks(j))
            below = set(range(alloc.bottom[j]))
            if i not in placed:
                if available:
                    assert not (available & own) and not (available & free)
                    if aggressive:
                        assert not (available & below)
                continue
            r = placed[i]
            assert r in available
            if r in alloc.upper[j]:
                pass
            elif r == alloc.bottom[j]:
                assert not (available & set(alloc.upper[j]))
            elif r in free:
                assert not (available & own)
            else:  # borrowed from a longer cluster
                assert r in below and not (available & own) and not (available & free)
                if not aggressive:
                    later = {cluster_of[q] for q in order[pos + 1:]}
                    assert not any(r in alloc.home_tracks(c) for c in later)
            available.discard(r)
