"""The worked examples of Golab et al. as exact tests (the spec digest's acceptance checks 1-6).

Check 3 (the Fig. 2 staleness trace, integral 42.5, and its one-batch variant) is a property of
the engine alone and lives in ``tests/sim/test_hand_traces.py`` (``test_fig2_*``).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.policies import BoundPolicy
from staleness_lab.policies import lookahead, partitioned, proportional
from staleness_lab.sim import run, total_weighted_staleness

EXACT = dict(rel=0, abs=1e-9)
WORKLOADS = Path(__file__).resolve().parents[2] / "data" / "workloads"


class FixedOrder:
    """A custom policy: tables run in a given order of file positions (smallest rank first)."""

    name = "fixed-order"

    def __init__(self, order: tuple[int, ...]) -> None:
        self.rank = {table: k for k, table in enumerate(order)}

    def bind(self, workload, rng):
        rank = [self.rank[i] for i in range(len(workload.tables))]
        return BoundPolicy(key=lambda i, now, release, n: rank[i])


# ---------------------------------------------------------------------------------------------
# Check 1: Max Benefit, Sec. 3.1 / Fig. 3 -- 80 with J1 first, 85 with J2 first
# ---------------------------------------------------------------------------------------------


def test_check1_max_benefit_example_80_and_85():
    w = sl.load_workload(WORKLOADS / "golab-sec3-1-example.yaml")
    # MB_1 = 10 / E(10) = 10/3 > MB_2 = 5 / E(5) = 5/2: J1 runs [0, 3], J2 runs [3, 5].
    mb = sl.simulate(w, "max-benefit")
    assert mb.jobs.sort_values("start")["table"].tolist() == ["J1", "J2"]
    assert mb.total_weighted_staleness == pytest.approx(80.0, **EXACT)
    # table 1: 10 -> 13 over [0, 3] then 3 -> 5 over [3, 5]: 34.5 + 8 = 42.5; table 2: 5 -> 10: 37.5
    assert mb.tables["staleness_area"].tolist() == pytest.approx([42.5, 37.5], **EXACT)
    # J2 first: table 1 10 -> 15 (62.5); table 2 5 -> 7, then 2 -> 5 (12 + 10.5 = 22.5): 85
    j2_first = sl.simulate(w, FixedOrder((1, 0)))
    assert j2_first.jobs.sort_values("start")["table"].tolist() == ["J2", "J1"]
    assert j2_first.total_weighted_staleness == pytest.approx(85.0, **EXACT)
    # with nothing to predict, Lookahead makes Max Benefit's choice
    assert sl.simulate(w, "max-benefit-lookahead").total_weighted_staleness == pytest.approx(80.0, **EXACT)


# ---------------------------------------------------------------------------------------------
# Check 2: Max Benefit with Lookahead, Sec. 3.1 -- B[{J2}] = 101, so J2 runs, not J1
# ---------------------------------------------------------------------------------------------


def lookahead_example() -> dict:
    # The spec digest's construction (its Sec. 4.9), tau = 49, one track, beta = 0:
    #   J1: data to 39 at 39 runs [39, 42]; data to 49 at 49 -> dF = 10, E = 3, MB = 10/3.
    #   J2: data to 44 at 44 runs [44, 46]; data to 49 at 49 -> dF = 5,  E = 2, MB = 5/2.
    #   J3: period 50, phase 0, F = 0, idle at 49; next arrival 50 = tau + 1 -> dF = 50,
    #       E = 3, p = 10: MB = 500/3.
    return {
        "tracks": 1,
        "horizon": 60,
        "warmup": 49,
        "tables": [
            {"name": "J1", "arrivals": [[39, 39], [49, 49]], "alpha": 3, "beta": 0, "priority": 1},
            {"name": "J2", "arrivals": [[44, 44], [49, 49]], "alpha": 2, "beta": 0, "priority": 1},
            {"name": "J3", "period": 50, "phase": 0, "alpha": 3, "beta": 0, "priority": 10},
        ],
    }


def test_check2_lookahead_rule_on_the_paper_numbers():
    # ready J1 (p dF = 10, E = 3), J2 (5, 2); predicted J3 at tau + 1 (500, 3).
    # Sets S of other ready jobs with 1 <= sum E < 3: only {J2}; B = (5 + 500) / (2 + 3) = 101.
    d = lookahead.decide(49.0, [(0, 10.0, 3.0), (1, 5.0, 2.0)], [(2, 50.0, 500.0, 3.0)])
    assert d.best == 0 and d.marginal_benefit == pytest.approx(10 / 3, **EXACT)
    assert d.B == pytest.approx(101.0, **EXACT)
    assert d.S == (1,) and d.k == 2
    assert d.table == 1


def test_check2_lookahead_dispatches_j2_where_max_benefit_dispatches_j1(monkeypatch):
    seen = []
    original = lookahead._best_alternative

    def spy(now, e_i, cands, preds, max_set, floor):
        found = original(now, e_i, cands, preds, max_set, floor)
        seen.append((now, e_i, found))
        return found

    monkeypatch.setattr(lookahead, "_best_alternative", spy)
    la = sl.simulate(lookahead_example(), "max-benefit-lookahead")
    mb = sl.simulate(lookahead_example(), "max-benefit")

    def started_at(result, t):
        jobs = result.jobs
        return jobs.loc[jobs["start"] == t, "table"].tolist()

    assert started_at(mb, 49.0) == ["J1"]
    assert started_at(la, 49.0) == ["J2"]
    # the decision at 49 saw B[{J2}, J3] = 101 against E_1 = 3
    at49 = [(e_i, found) for now, e_i, found in seen if now == 49.0]
    assert len(at49) == 1
    e_i, (b, members, first, k) = at49[0]
    assert e_i == 3.0 and b == pytest.approx(101.0, **EXACT)
    assert members == (1,) and first == 1 and k == 2
    # J2 runs [49, 51]; J3 arrives at 50 and runs as soon as J2 is done, then J1
    assert started_at(la, 51.0) == ["J3"]
    assert started_at(la, 54.0) == ["J1"]
    # and the lookahead pays off in weighted staleness over [49, 60]
    assert la.total_weighted_staleness < mb.total_weighted_staleness


# ---------------------------------------------------------------------------------------------
# Checks 4-5: Sec. 3.2.4, EDF-partitioning and Proportional allocation of one example
# ---------------------------------------------------------------------------------------------


def sec324(tracks: int = 2) -> sl.Workload:
    # J1 (P 4, E 1), J2 (4, 1), J3 (8, 2), J4 (10, 1.25): beta = 0 and alpha = E, so E(P) = E.
    specs = [("J1", 4, 1), ("J2", 4, 1), ("J3", 8, 2), ("J4", 10, 1.25)]
    return sl.parse_workload(
        {
            "tracks": tracks,
            "horizon": 100,
            "tables": [{"name": n, "period": p, "alpha": e, "beta": 0, "priority": 1} for n, p, e in specs],
        }
    )


def test_check4_edf_partitioning_and_promotion():
    w = sec324()
    packing = partitioned.pack(w)
    # track 0 = {J1, J2}, U = 0.5 (J3 would make 0.75 > 1 - 2/4); track 1 = {J3, J4}, U = 0.375
    assert packing.tracks == ((0, 1), (2, 3))
    assert packing.utilization == pytest.approx((0.5, 0.375), **EXACT)
    assert packing.emax == (1.0, 2.0) and packing.pmin == (4.0, 8.0)
    assert packing.needed == 2 and packing.free == ()
    # J1 -> 1: 0.625 > 1 - 2/4; J3 -> 0: 0.75 > 1 - 2/4; J4 -> 0: 0.625 <= 1 - 1.25/4 = 0.6875
    assert partitioned.promotable(packing, w) == {(3, 0)}
    # the printed condition (without + u_J) would also promote J1, J2 and J3
    nom = partitioned.nominal(w)
    printed = {
        (i, r)
        for i in range(4)
        for r in range(2)
        if r != packing.home[i]
        and packing.utilization[r] <= 1 - max(packing.emax[r], nom.cost[i]) / min(packing.pmin[r], nom.period[i])
    }
    assert printed == {(0, 1), (1, 1), (2, 0), (3, 0)}


def test_check5_proportional_allocation():
    w = sec324()
    # sorted by E: J1, J2, J4, J3; k = 2: J4's period 10 > 2 * 4 opens the long cluster
    groups = proportional.clusters(w, k=2)
    assert [sorted(g) for g in groups] == [[0, 1], [2, 3]]
    full = proportional.allocate(w, groups, mode="all")
    assert full.total_utilization == pytest.approx(0.875, **EXACT)
    assert Fraction(full.M).limit_denominator(1000) == Fraction(16, 7)
    # long cluster [0, 6/7): track 0 only; short cluster [6/7, 2): bottom 0 (shared), upper 1
    assert full.lo[1] == 0 and full.hi[1] == pytest.approx(6 / 7, **EXACT)
    assert full.lo[0] == pytest.approx(6 / 7, **EXACT) and full.hi[0] == pytest.approx(2.0, **EXACT)
    short_tracks, long_tracks = set(full.home_tracks(0)), set(full.home_tracks(1))
    assert short_tracks == {0, 1} and long_tracks == {0}
    assert short_tracks & long_tracks == {0}  # the long cluster's one track is shared
    assert full.free == ()
    basic = proportional.allocate(w, groups, mode="basic")
    assert Fraction(basic.M).limit_denominator(1000) == Fraction(8, 7)
    # long [0, 3/7), short [3/7, 1): both inside track 0; track 1 free
    assert basic.hi[1] == pytest.approx(3 / 7, **EXACT)
    assert set(basic.home_tracks(0)) == set(basic.home_tracks(1)) == {0}
    assert basic.free == (1,)
    # the printed rule (E_J < k * Pmin) keeps all four jobs in one cluster
    assert [sorted(g) for g in proportional.clusters(w, k=2, rule="cost")] == [[0, 1, 2, 3]]


# ---------------------------------------------------------------------------------------------
# Check 6: Smith's rule -- on a static single-track instance Max Benefit is optimal
# ---------------------------------------------------------------------------------------------


@st.composite
def static_instances(draw):
    n = draw(st.sampled_from([2, 3, 4, 5, 6, 6, 6]))
    tables = []
    for k in range(n):
        alpha = draw(st.sampled_from([0.5, 1, 2, 3]))
        beta = draw(st.sampled_from([0, 0.1, 0.25, 0.5]))
        stale = draw(st.sampled_from([1, 2, 4, 5, 7.5, 10, 20]))
        priority = draw(st.sampled_from([0.5, 1, 2, 3, 10]))
        tables.append(
            {
                "name": f"t{k}", "arrivals": [[0, 0]], "initial_freshness": -stale,
                "alpha": alpha, "beta": beta, "priority": priority,
            }
        )
    total_cost = sum(t["alpha"] + t["beta"] * -t["initial_freshness"] for t in tables)
    return sl.parse_workload({"tracks": 1, "horizon": math.ceil(total_cost) + 1, "tables": tables})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(static_instances())
def test_check6_max_benefit_attains_the_minimum_over_all_orders(w):
    # One job per table, all released at 0, horizon after the last completion: the orders differ
    # only through sum p_i dF_i C_i, minimized by Smith's ratio rule = Max Benefit.
    best = min(
        total_weighted_staleness(run(w, FixedOrder(order), "fixed-order"))
        for order in itertools.permutations(range(len(w.tables)))
    )
    got = total_weighted_staleness(run(w, sl.get_policy("max-benefit"), "max-benefit"))
    assert got == pytest.approx(best, rel=1e-12, abs=1e-9)
    # Lookahead has nothing to predict here and agrees
    la = total_weighted_staleness(run(w, sl.get_policy("max-benefit-lookahead"), "la"))
    assert la == pytest.approx(best, rel=1e-12, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# Sec. 3.4: chopping caps every job at c periods of data under every new scheduler
# ---------------------------------------------------------------------------------------------


@st.composite
def chopped_workloads(draw):
    n = draw(st.integers(1, 5))
    tables = []
    for k in range(n):
        t = {
            "name": f"t{k}",
            "alpha": draw(st.sampled_from([0.5, 1, 2, 4])),
            "beta": draw(st.sampled_from([0.05, 0.1, 0.3])),
            "priority": draw(st.sampled_from([1, 2, 10])),
        }
        kind = draw(st.sampled_from(["periodic", "replayed"] + (["derived"] if k else [])))
        if kind == "periodic":
            t["period"] = draw(st.sampled_from([2, 5, 10]))
            t["initial_freshness"] = draw(st.sampled_from([0, 0, -4, -25]))
        elif kind == "replayed":
            gaps = draw(st.lists(st.sampled_from([1, 2, 5, 12, 30]), min_size=1, max_size=12))
            times = [sum(gaps[: j + 1]) for j in range(len(gaps))]
            t["arrivals"] = [[x, x] for x in times]
            t["nominal_period"] = draw(st.sampled_from([2, 5, 10]))
        else:
            t["sources"] = [f"t{draw(st.integers(0, k - 1))}"]
            t["initial_freshness"] = min(tables[int(t["sources"][0][1:])].get("initial_freshness", 0), 0)
        tables.append(t)
    w = {"tracks": draw(st.integers(1, 2)), "horizon": 120, "chop": draw(st.sampled_from([1, 1.5, 3])), "tables": tables}
    if draw(st.booleans()):
        w["slowdown"] = {"factor": 3, "normal": 10, "slow": 30}  # overload: data piles up
    return sl.parse_workload(w)


def batch_ends(table, after: float, until: float) -> list[float]:
    """The data boundaries of a base table's batches in (after, until]."""
    if table.arrivals is not None:
        return [d for _, d in table.arrivals if after < d <= until]
    first = math.floor((after - table.phase) / table.period) + 1
    out = []
    k = max(first, 1)
    while table.phase + k * table.period <= until:
        if table.phase + k * table.period > after:
            out.append(table.phase + k * table.period)
        k += 1
    return out


NEW_SCHEDULERS = [
    ("max-benefit-lookahead", {}),
    ("edf-partitioned", {}),
    ("edf-partitioned", {"aggressive": True, "basic": "edf-p"}),
    ("proportional", {}),
    ("proportional", {"tracks_mode": "basic", "aggressive": True, "k": 2.0}),
    ("max-benefit", {"inheritance": "max"}),
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chopped_workloads(), st.sampled_from(NEW_SCHEDULERS))
def test_chopping_never_loads_more_than_c_periods(w, scheduler):
    # A job of a chopped table loads at most c * P of data, with one exception: a base table
    # always loads at least one whole batch, so a single batch larger than c * P (a long gap in
    # a replayed log, or a negative initial freshness before the first arrival) loads whole.
    name, options = scheduler
    if name == "edf-partitioned":
        w = w.with_overrides(tracks=max(w.tracks, partitioned.pack(w).needed))
    jobs = sl.simulate(w, name, options=options).jobs
    for row in jobs.itertuples(index=False):
        i = w.index[row.table]
        table = w.tables[i]
        cap = w.chop_of(i) * w.periods[i]
        load = row.data_to - row.data_from
        if load <= cap + 1e-9:
            if load > cap - 1e-9:
                event("a job loaded exactly c periods")
            continue
        event("one batch larger than c periods")
        assert table.is_base, (row, cap)
        assert batch_ends(table, row.data_from, row.data_to) == [row.data_to], (row, cap)  # one batch
