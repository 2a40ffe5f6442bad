"""EDF-Partitioned (Golab et al., Sec. 3.2.1-3.2.2): packing, fit test, promotability, dispatch.

The Sec. 3.2.4 example itself (only J4 promotable) is in ``test_golab_examples.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.errors import Infeasible
from staleness_lab.policies import partitioned
from staleness_lab.sim import run
from policies.placement_recorder import Recorder
from policies.strategies import periodic_tables


def identical(count: int, alpha: float, beta: float = 0.1, period: float = 100, tracks: int = 4, **top) -> sl.Workload:
    tables = [
        {"name": f"t{k:02d}", "period": period, "phase": k * period / count, "alpha": alpha, "beta": beta, "priority": 1}
        for k in range(count)
    ]
    return sl.parse_workload({"tracks": tracks, "horizon": 2000, "tables": tables, **top})


def sec324(tracks: int = 2) -> sl.Workload:
    specs = [("J1", 4, 1), ("J2", 4, 1), ("J3", 8, 2), ("J4", 10, 1.25)]
    tables = [{"name": n, "period": p, "alpha": e, "beta": 0, "priority": 1} for n, p, e in specs]
    return sl.parse_workload({"tracks": tracks, "horizon": 100, "tables": tables})


# ---------------------------------------------------------------------------------------------
# packing
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alpha", "sizes"),
    [
        (1, [8, 8, 8, 6]),  # u = 0.11: (k + 1) u <= 1 - u  ->  8 per track
        (2, [7, 7, 7, 7, 2]),  # u = 0.12 (Table 2 workload): 7 per track
        (3, [6, 6, 6, 6, 6]),  # u = 0.13: 6 per track
        (100 / 9 - 10, [8, 8, 8, 6]),  # u = 1/9 exactly: 9u = 1 must not fail by rounding
    ],
)
def test_identical_jobs_pack_k_per_track(alpha, sizes):
    w = identical(30, alpha, tracks=5)
    packing = partitioned.pack(w)
    assert packing.sizes() == sizes
    assert packing.needed == len(sizes)
    # next-fit by period, ties by file position: consecutive tables share a track
    assert [i for track in packing.tracks for i in track] == list(range(30))
    assert packing.free == tuple(range(len(sizes), 5))


def test_full_tracks_never_accept_a_promotion():
    # u = 0.11 on 5 tracks: 8, 8, 8, 6 and one free track. A full track (8 jobs) cannot take a
    # ninth; the partly filled track 3 (6 jobs) can take anyone homed elsewhere.
    w = identical(30, 1, tracks=5)
    packing = partitioned.pack(w)
    assert packing.free == (4,)
    assert partitioned.promotable(packing, w) == {(i, 3) for i in range(24)}
    # Fig. 6 setting with u = 0.13: six full tracks -> no promotion at all, and no free track
    w13 = identical(30, 3, tracks=5)
    assert partitioned.promotable(partitioned.pack(w13), w13) == set()


def test_fit_test_is_the_single_track_condition_with_the_job_added():
    # empty track: a job alone fits iff u <= 1 - E/P
    assert partitioned.fits(0, 0, float("inf"), 0.25, 1, 4)
    assert not partitioned.fits(0, 0, float("inf"), 0.6, 6, 10)
    # the introduction's heterogeneity example: two (P 10, E 2) and one (P 100, E 20): U = 0.6
    # but 1 - 20/10 < 0, so the long job never fits with the short ones
    assert partitioned.fits(0.2, 2, 10, 0.2, 2, 10)
    assert not partitioned.fits(0.4, 2, 10, 0.2, 20, 100)


def test_a_job_that_fails_even_alone_gets_a_track_of_its_own():
    # E = 6 > P/2: it violates the condition alone; packing still opens a track for it
    tables = [
        {"name": "short", "period": 10, "alpha": 1, "beta": 0, "priority": 1},
        {"name": "heavy", "period": 10, "alpha": 6, "beta": 0, "priority": 1},
        {"name": "other", "period": 10, "alpha": 1, "beta": 0, "priority": 1},
    ]
    w = sl.parse_workload({"tracks": 3, "horizon": 50, "tables": tables})
    assert partitioned.pack(w).tracks == ((0,), (1,), (2,))


def test_derived_tables_pack_with_their_largest_ancestor_period():
    tables = [
        {"name": "fast", "period": 5, "alpha": 0.5, "beta": 0, "priority": 1},
        {"name": "slow", "period": 50, "alpha": 1, "beta": 0, "priority": 1},
        {"name": "view", "sources": ["fast", "slow"], "alpha": 2, "beta": 0.1, "priority": 1},
    ]
    w = sl.parse_workload({"tracks": 2, "horizon": 50, "tables": tables})
    nom = partitioned.nominal(w)
    assert nom.period == (5, 50, 50)
    assert nom.cost == pytest.approx((0.5, 1.0, 7.0))  # the view: E(50) = 2 + 0.1 * 50
    # fast + slow: U = 0.1 + 0.02 <= 1 - 1/5; the view (E 7 > Pmin 5) cannot join them
    assert partitioned.pack(w).tracks == ((0, 1), (2,))


def test_infeasible_packing_names_the_tracks_it_needs():
    w = identical(30, 3, tracks=4)  # needs 5
    with pytest.raises(Infeasible, match=r"needs 5 tracks .* has 4"):
        sl.simulate(w, "edf-partitioned")
    assert not partitioned.pack(w).feasible and partitioned.pack(w).free == ()
    sl.simulate(w, "edf-partitioned", tracks=5)  # runs with one more


def test_partitioners_need_periods():
    w = {"tracks": 1, "horizon": 10, "tables": [{"name": "log", "arrivals": [[1, 1]], "alpha": 1, "beta": 0, "priority": 1}]}
    for name in ("edf-partitioned", "proportional"):
        with pytest.raises(sl.InputError, match=r"tables\[0\]\.nominal_period .*needs a period"):
            sl.simulate(w, name)


# ---------------------------------------------------------------------------------------------
# dispatch rule, on the Sec. 3.2.4 packing: track 0 = {J1, J2}, track 1 = {J3, J4}
# ---------------------------------------------------------------------------------------------


def place_for(w: sl.Workload, aggressive: bool):
    bound = sl.get_policy("edf-partitioned", aggressive=aggressive).bind(w, None)
    return bound.place


J1, J2, J3, J4 = range(4)


def test_home_track_first():
    place = place_for(sec324(), aggressive=False)
    assert place([J3, J1], [0, 1], 0.0, None) == [(J3, 1), (J1, 0)]


def test_non_aggressive_promotion_only_to_a_track_no_later_job_calls_home():
    place = place_for(sec324(), aggressive=False)
    # J4's home (1) is busy; it is promotable to 0, but J1 (later in the order) is homed there
    assert place([J4, J1], [0], 0.0, None) == [(J1, 0)]
    # nobody later wants track 0: J4 takes it
    assert place([J4, J3], [0], 0.0, None) == [(J4, 0)]
    # J3 is not promotable to track 0 at all
    assert place([J3], [0], 0.0, None) == []


def test_aggressive_promotion_takes_the_track():
    place = place_for(sec324(), aggressive=True)
    assert place([J4, J1], [0], 0.0, None) == [(J4, 0)]
    assert place([J1, J4], [0], 0.0, None) == [(J1, 0)]


def test_free_track_before_promotion():
    place = place_for(sec324(tracks=3), aggressive=True)  # track 2 is free
    # J4: home 1 busy -> the free track 2 (not promotion to 0); J1 then takes its home 0
    assert place([J4, J1], [0, 2], 0.0, None) == [(J4, 2), (J1, 0)]
    # J2 waits (home busy, free track taken, not promotable to 1); J3 takes its home
    assert place([J1, J2, J3], [1, 2], 0.0, None) == [(J1, 2), (J3, 1)]


# ---------------------------------------------------------------------------------------------
# property: a job only ever runs where the rules allow, aggressive or not
# ---------------------------------------------------------------------------------------------

@st.composite
def periodic_workloads(draw):
    tables = draw(periodic_tables([0.1, 0.25, 0.5, 1, 2]))
    w = {"tracks": 1, "horizon": draw(st.sampled_from([60, 150, 300])), "seed": draw(st.integers(0, 99)), "tables": tables}
    if draw(st.booleans()):
        w["variability"] = 0.5
    if draw(st.integers(0, 3)) == 0:
        w["slowdown"] = {"factor": 3, "normal": 20, "slow": 20}
    extra = draw(st.integers(0, 2))
    parsed = sl.parse_workload(w)
    return parsed.with_overrides(tracks=partitioned.pack(parsed).needed + extra)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(periodic_workloads(), st.booleans(), st.sampled_from(["max-benefit", "edf", "edf-p"]))
def test_jobs_run_only_on_allowed_tracks(w, aggressive, basic):
    packing = partitioned.pack(w)
    allowed = partitioned.allowed_tracks(packing, w)
    promo = partitioned.promotable(packing, w)
    rec = Recorder(sl.get_policy("edf-partitioned", aggressive=aggressive, basic=basic))
    trace = run(w, rec, "edf-partitioned")
    jobs = trace.jobs
    kinds = set()
    for table, track in zip(jobs["table"], jobs["track"]):
        i = w.index[table]
        assert track in allowed[i], (table, track, allowed[i])
        kinds.add("home" if track == packing.home[i] else "free" if track in packing.free else "promoted")
    for kind in sorted(kinds):
        event(f"ran on a {kind} track")
    # every decision, step by step
    free = set(packing.free)
    for order, idle, chosen in rec.calls:
        available = set(idle)
        placed = dict(chosen)
        assert [i for i in order if i in placed] == [i for i, _ in chosen]  # walked in order
        for pos, i in enumerate(order):
            home = packing.home[i]
            if i not in placed:
                # it waited: its home was taken, and it had no free track (it may have had a
                # promotable track that a later job calls home, or none)
                if available:
                    assert home not in available
                    assert not (available & free)
                    if aggressive:
                        assert not any((i, r) in promo for r in available)
                continue
            r = placed[i]
            assert r in available
            if r != home:
                assert home not in available
                if r not in free:
                    assert (i, r) in promo and not (available & free)
                    if not aggressive:
                        assert all(packing.home[q] != r for q in order[pos + 1:])
            available.discard(r)
