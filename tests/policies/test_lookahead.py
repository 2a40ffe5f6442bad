"""Max Benefit with Lookahead (Golab et al., Sec. 3.1). The paper's example (B = 101) is check 2
in ``test_golab_examples.py``; here: the bounds of the rule, predictions, several tracks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import example as pinned
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.policies import lookahead
from staleness_lab.sim import run

from engine_workloads import fingerprint, table2

EXACT = dict(rel=0, abs=1e-9)
TABLE2 = Path(__file__).resolve().parents[2] / "data" / "workloads" / "golab-table2.yaml"

# ---------------------------------------------------------------------------------------------
# the rule on explicit numbers: ready = (table, p*dF, E) in MB order; predicted = (table, r, p*dF, E)
# ---------------------------------------------------------------------------------------------


def test_nothing_predicted_runs_the_best_job():
    d = lookahead.decide(0.0, [(0, 10.0, 3.0), (1, 5.0, 2.0)], [])
    assert (d.table, d.B, d.S, d.k) == (0, None, (), None)


def test_a_prediction_must_beat_the_best_job_and_arrive_before_it_would_finish():
    ready = [(0, 10.0, 3.0), (1, 5.0, 2.0)]
    # MB_k = 9/3 = 3 < 10/3: ignored
    assert lookahead.decide(0.0, ready, [(2, 1.0, 9.0, 3.0)]).k is None
    # arrives at t + E_i = 3: J_i would be done by then; ignored
    assert lookahead.decide(0.0, ready, [(2, 3.0, 500.0, 3.0)]).k is None
    # arrives at t itself (not strictly later): ignored
    assert lookahead.decide(0.0, ready, [(2, 0.0, 500.0, 3.0)]).k is None


def test_sets_never_leave_the_track_idle_before_the_release():
    # r_k - t = 2.5 > E_2 = 2: running J2 first would idle the track over [2, 2.5]
    d = lookahead.decide(0.0, [(0, 10.0, 3.0), (1, 5.0, 2.0)], [(2, 2.5, 500.0, 3.0)])
    assert d.k is None and d.table == 0


def test_sets_must_finish_before_the_best_job_would():
    # J2 costs 3 = E_1: not < E_i
    d = lookahead.decide(0.0, [(0, 10.0, 3.0), (1, 6.0, 3.0)], [(2, 1.0, 500.0, 3.0)])
    assert d.k is None and d.table == 0


def test_set_size_is_capped_and_the_best_member_runs_first():
    # J_i costs 10; four unit jobs with benefits 6, 5, 4, 3 (listed in MB order); the release is
    # at t + 3.5, so a set needs sum E >= 3.5: only the set of all four qualifies, beyond
    # max_set = 3 -> J_i runs.
    ready = [(0, 100.0, 10.0)] + [(k, 2.0 + k, 1.0) for k in (4, 3, 2, 1)]
    pred = [(9, 3.5, 10000.0, 1.0)]
    assert lookahead.decide(0.0, ready, pred).table == 0
    d = lookahead.decide(0.0, ready, pred, max_set=4)
    assert d.S == (4, 3, 2, 1) and d.B == pytest.approx((6 + 5 + 4 + 3 + 10000) / 5, **EXACT)
    assert d.table == 4  # the set's job earliest in Max Benefit order
    # released at t + 2.5, three unit jobs suffice; the best three win
    d3 = lookahead.decide(0.0, ready, [(9, 2.5, 10000.0, 1.0)])
    assert d3.S == (4, 3, 2) and d3.B == pytest.approx((6 + 5 + 4 + 10000) / 4, **EXACT)
    assert d3.table == 4


def test_candidate_cap_limits_the_jobs_sets_draw_on():
    # release at t + 4: J2 (E 2) alone ends too early, J1 (E 5) alone qualifies:
    # B[{J1}] = 10001/6 > B[{J2, J1}] = 10051/8. With one candidate only J2 (the higher MB) is
    # considered, no set qualifies and J_i runs.
    ready = [(0, 100.0, 10.0), (2, 50.0, 2.0), (1, 1.0, 5.0)]
    pred = [(9, 4.0, 10000.0, 1.0)]
    d = lookahead.decide(0.0, ready, pred)
    assert d.S == (1,) and d.B == pytest.approx(10001 / 6, **EXACT) and d.table == 1
    assert lookahead.decide(0.0, ready, pred, candidates=1).table == 0


# ---------------------------------------------------------------------------------------------
# predictions from the engine's view
# ---------------------------------------------------------------------------------------------


def example(j3: dict, tracks: int = 1) -> dict:
    # as check 2: J1 (dF 10, E 3) and J2 (dF 5, E 2) ready at 49 on track 0
    return {
        "tracks": tracks,
        "horizon": 60,
        "tables": [
            {"name": "J1", "arrivals": [[39, 39], [49, 49]], "alpha": 3, "beta": 0, "priority": 1},
            {"name": "J2", "arrivals": [[44, 44], [49, 49]], "alpha": 2, "beta": 0, "priority": 1},
            {"name": "J3", "alpha": 3, "beta": 0, "priority": 10, **j3},
        ],
    }


def started_at(result, t: float) -> list[str]:
    jobs = result.jobs
    return sorted(jobs.loc[jobs["start"] == t, "table"].tolist())


def test_a_replayed_feed_is_predicted_from_its_log():
    w = example({"arrivals": [[50, 50]]})
    assert started_at(sl.simulate(w, "max-benefit-lookahead"), 49.0) == ["J2"]
    assert started_at(sl.simulate(w, "max-benefit"), 49.0) == ["J1"]


def test_a_table_with_a_job_running_is_not_predicted():
    # J3 loads data to 40 over [40, 50] on track 1, so at 49 it is running: its arrival at 50
    # is no prediction and the free track 0 gets Max Benefit's choice.
    w = example({"arrivals": [[40, 40], [50, 50]], "alpha": 10}, tracks=2)
    la = sl.simulate(w, "max-benefit-lookahead")
    assert started_at(la, 49.0) == ["J1"]
    assert la.jobs.loc[la.jobs["table"] == "J3", "track"].tolist()[0] == 1


def test_a_derived_table_is_not_predicted():
    # J3 is now a view of a table whose data lands at 50: nothing predicts the view's release
    w = example({"sources": ["src"]})
    w["tables"].insert(0, {"name": "src", "arrivals": [[50, 50]], "alpha": 0.001, "beta": 0, "priority": 0.001})
    assert started_at(sl.simulate(w, "max-benefit-lookahead"), 49.0) == ["J1"]


def test_one_pick_per_track():
    # A (dF 49, E 3, MB 49/3) is the best ready job. Pick 1 (track 0): J3 at 50 beats A, and
    # {J2} fills [49, 51) -> J2. Pick 2 (track 1): among A and J1 no set fits under E_A = 3
    # (J1 costs 3) -> A. Max Benefit runs A and J1.
    w = example({"period": 50}, tracks=2)
    w["tables"].append({"name": "A", "arrivals": [[49, 49]], "alpha": 3, "beta": 0, "priority": 1})
    la = sl.simulate(w, "max-benefit-lookahead")
    mb = sl.simulate(w, "max-benefit")
    assert started_at(la, 49.0) == ["A", "J2"]
    assert started_at(mb, 49.0) == ["A", "J1"]


def test_the_order_is_max_benefits_key_with_inheritance():
    w = sl.load_workload(TABLE2)
    for mode in ("none", "max"):
        la = sl.get_policy("max-benefit-lookahead", inheritance=mode).bind(w, None)
        mb = sl.get_policy("max-benefit", inheritance=mode).bind(w, None)
        assert la.rekey_on_data
        for i in (0, 1, 2):
            assert la.key(i, 5.0, 1.0, 37.5) == mb.key(i, 5.0, 1.0, 37.5)


# ---------------------------------------------------------------------------------------------
# property: work-conserving, like Max Benefit
# ---------------------------------------------------------------------------------------------


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 7))
    tables = []
    for k in range(n):
        t = {
            "name": f"t{k}",
            "alpha": draw(st.sampled_from([0.25, 0.5, 1, 2, 4])),
            "beta": draw(st.sampled_from([0, 0.05, 0.1, 0.3])),
            "priority": draw(st.sampled_from([0.5, 1, 2, 10, 100])),
        }
        kind = draw(st.sampled_from(["periodic", "periodic", "replayed"] + (["derived"] if k else [])))
        if kind == "periodic":
            t["period"] = draw(st.sampled_from([3, 5, 7.5, 10, 20]))
            t["phase"] = draw(st.sampled_from([0, 1, 2.5]))
        elif kind == "replayed":
            times = sorted(set(draw(st.lists(st.sampled_from(range(0, 100, 3)), min_size=1, max_size=10))))
            t["arrivals"] = [[x, x] for x in times]
        else:
            t["sources"] = [f"t{draw(st.integers(0, k - 1))}"]
        if "sources" not in t and "arrivals" not in t and draw(st.integers(0, 3)) == 0:
            t["chop"] = 2
        tables.append(t)
    return sl.parse_workload(
        {"tracks": draw(st.integers(1, 3)), "horizon": 100, "seed": draw(st.integers(0, 9)), "variability": 0.5, "tables": tables}
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from([1, 2, 3]))
def test_every_idle_track_gets_a_job_while_jobs_wait(w, max_set):
    calls = []
    policy = sl.get_policy("max-benefit-lookahead", max_set=max_set)

    class Spy:
        name = "spy"

        def bind(self, workload, rng):
            bound = policy.bind(workload, rng)

            def place(order, idle, now, view):
                chosen = bound.place(order, idle, now, view)
                calls.append((order, idle, chosen))
                return chosen

            return type(bound)(key=bound.key, rekey_on_data=True, place=place)

    run(w, Spy(), "spy")
    for order, idle, chosen in calls:
        assert len(chosen) == min(len(order), len(idle))
        assert [t for t, _ in chosen] != [] or not order
        assert [r for _, r in chosen] == idle[: len(chosen)]  # tracks in order, one pick each


def test_in_lasting_overload_lookahead_starves_a_long_job_for_good():
    """A finding, pinned: the rule has no aging. Once the best ready job J_i is a backlogged
    low-priority table, its cost E_i keeps growing, so some high-priority release always falls
    within E_i and some set of shorter jobs always beats it: J_i never runs while anything else
    is ready, which in lasting overload is forever. On the Fig. 7 workload at U = 1.2 (above
    the merging limit 1.1) one table's maximum staleness is nearly the whole horizon under
    Lookahead, while Max Benefit keeps every table's below a tenth of it."""
    from staleness_lab.experiments.golab import sweeps as golab
    from staleness_lab.experiments.golab.generators import scale_to_utilization, two_classes

    w = two_classes(15, {"priority": 1.0}, {"priority": 10.0}, tracks=4, horizon=200_000.0, seed=0,
                    variability=0.5, slowdown=golab.type2_slowdown(3.0))
    w = scale_to_utilization(w, 1.2)
    worst = {p: sl.simulate(w, p).tables["max_staleness"].max() for p in ("max-benefit", "max-benefit-lookahead")}
    assert worst["max-benefit-lookahead"] > 0.95 * w.horizon  # measured 199,078 of 200,000
    assert worst["max-benefit"] < 0.1 * w.horizon  # measured 19,242


# ---------------------------------------------------------------------------------------------
# the pruned enumeration against the full one (the reference, kept here)
# ---------------------------------------------------------------------------------------------


def full_enumeration(now, e_i, cands, preds, max_set):
    """Every set S in depth-first order over the candidates sorted by cost, no pruning: the
    search the policy ran before its enumeration was pruned by an upper bound."""
    if not preds or not cands:
        return None
    cands = sorted(cands, key=lambda c: (c[3], c[0]))
    n = len(cands)
    lows = [r - now for _, r, _, _ in preds]
    best = [-float("inf"), (), -1]

    def visit(start, bs, es, members):
        for q in range(start, n):
            e = es + cands[q][3]
            if e >= e_i:
                break
            b = bs + cands[q][2]
            new = (*members, q)
            for (k, _, bk, ek), low in zip(preds, lows):
                if e >= low and (b + bk) / (e + ek) > best[0]:
                    best[:] = [(b + bk) / (e + ek), new, k]
            if len(new) < max_set:
                visit(q + 1, b, e, new)

    visit(0, 0.0, 0.0, ())
    if best[2] < 0:
        return None
    chosen = sorted(cands[q] for q in best[1])
    return best[0], tuple(c[1] for c in chosen), chosen[0][1], best[2]


_COST = st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0, 4.5, 7.0, 1e-9])
_BENEFIT = st.sampled_from([0.0, 1.0, 2.5, 3.0, 10.0, 50.0, 500.0])


@settings(max_examples=600, deadline=None)
# E_i one ulp above r_k - now = fl(a + fl(b - a)): a bound that tested es + (low - es) >= E_i in
# floats dropped the prediction that the set of cost exactly r_k - now qualifies for
@pinned(e_i=1.4900139218501915, cands=[(0.0, 1.1596490434584439e-10), (0.0, 1.1596490434584439e-10),
                                        (0.0, 1.4900139216182615)],
         preds=[(1.4900139218501913, 10.0, 1.0)], max_set=3, floor=1.0)
@given(e_i=st.sampled_from([3.0, 6.0, 10.0, 25.0]),
       cands=st.lists(st.tuples(_BENEFIT, _COST), max_size=12),
       preds=st.lists(st.tuples(st.sampled_from([0.1, 1.0, 2.5, 5.0, 9.0]), _BENEFIT, _COST), max_size=5),
       max_set=st.integers(1, 4), floor=st.sampled_from([-float("inf"), 0.5, 2.0, 10.0, 100.0]))
def test_pruned_enumeration_finds_what_the_full_one_finds(e_i, cands, preds, max_set, floor) -> None:
    cands = [(pos + 1, 100 + pos, b, e) for pos, (b, e) in enumerate(cands) if e < e_i]
    preds = [(200 + k, r, b, e) for k, (r, b, e) in enumerate(preds)]
    full = full_enumeration(0.0, e_i, cands, preds, max_set)
    pruned = lookahead._best_alternative(0.0, e_i, cands, preds, max_set, floor=floor)
    event("a set wins" if pruned is not None else "no set" if full is None else "no set beats the floor")
    assert pruned == (full if full is not None and full[0] > floor else None)


def test_pruned_policy_runs_the_full_searchs_trace(monkeypatch) -> None:
    from staleness_lab.experiments.golab.sweeps import scale_to_utilization, two_classes, type2_slowdown

    def reference(now, e_i, cands, preds, max_set, floor=-float("inf")):
        found = full_enumeration(now, e_i, cands, preds, max_set)
        return found if found is not None and found[0] > floor else None

    for u in (0.8, 1.0, 1.2):
        w = scale_to_utilization(two_classes(15, {"priority": 1.0}, {"priority": 10.0}, tracks=4, horizon=20_000.0,
                                             seed=1, variability=0.5, slowdown=type2_slowdown(3.0)), u)
        policy = sl.get_policy("max-benefit-lookahead")
        pruned = run(w, policy, "lookahead", engine="python")
        with monkeypatch.context() as m:
            m.setattr(lookahead, "_best_alternative", reference)
            full = run(w, policy, "lookahead", engine="python")
        assert pruned.n_jobs > 1_000
        assert pruned.jobs_done == full.jobs_done and pruned.staleness_area == full.staleness_area


def without_lone_shortcut(policy):
    """The policy with ``place`` called at every decision, the reference for ``lone_lowest``."""
    class Reference:
        name = "reference"

        def bind(self, workload, rng):
            return dataclasses.replace(policy.bind(workload, rng), lone_lowest=False)

    return Reference()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from([1, 2, 3]))
def test_a_lone_ready_table_started_by_the_engine_gives_places_trace(w, max_set):
    policy = sl.get_policy("max-benefit-lookahead", max_set=max_set)
    assert policy.bind(w, np.random.default_rng(0)).lone_lowest
    assert fingerprint(run(w, policy, "x", engine="python")) == fingerprint(run(w, without_lone_shortcut(policy), "x"))


@pytest.mark.parametrize("tracks, u", [(6, None), (4, 1.0), (4, 1.2)])
def test_the_lone_shortcut_on_long_runs(tracks, u) -> None:
    from staleness_lab.experiments.golab.sweeps import scale_to_utilization, two_classes

    if u is None:  # Table 2 on spare tracks: every decision has one ready table
        w = sl.parse_workload({**table2(30, 20_000.0, noisy=True, slowdown=True), "tracks": tracks})
    else:  # Fig. 7's classes in overload: sets are searched at most decisions
        w = scale_to_utilization(two_classes(15, {"priority": 1.0}, {"priority": 10.0}, tracks=tracks,
                                             horizon=10_000.0, seed=2, variability=0.5), u)
    policy = sl.get_policy("max-benefit-lookahead")
    fast = run(w, policy, "x", engine="python")
    assert fast.n_jobs > 1_000
    assert fingerprint(fast) == fingerprint(run(w, without_lone_shortcut(policy), "x"))
