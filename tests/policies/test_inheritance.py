"""Priority inheritance (Golab et al., Sec. 3.3): the inherited values, their effect on the order,
and the metric that never sees them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.policies.inheritance import dependent_sets, inherited_priorities

MODES = ["none", "sum", "max", "max-plus"]


def chain(priorities, period: float = 100.0, **top) -> sl.Workload:
    """base -> v1 -> v2 -> ... with the given priorities (base first)."""
    tables = [{"name": "c0", "period": period, "alpha": 1, "beta": 0.1, "priority": priorities[0]}]
    for k, p in enumerate(priorities[1:], start=1):
        tables.append({"name": f"c{k}", "sources": [f"c{k - 1}"], "alpha": 1, "beta": 0.1, "priority": p})
    return sl.parse_workload({"tracks": 1, "horizon": 500, "tables": tables, **top})


def test_documented_values_on_the_three_level_chain():
    w = chain([0.001, 1, 100])
    assert inherited_priorities(w, "none") == [0.001, 1, 100]
    assert inherited_priorities(w, "sum") == pytest.approx([101.001, 101, 100], rel=1e-15)
    assert inherited_priorities(w, "max") == [100, 100, 100]
    assert inherited_priorities(w, "max-plus", 2.0) == [400, 200, 100]
    assert inherited_priorities(w, "max-plus", 10.0) == [10000, 1000, 100]


def test_sum_counts_a_dependent_reached_by_two_paths_once():
    # b -> x, b -> y, (x, y) -> z: Sum(b) = p_b + p_x + p_y + p_z
    tables = [
        {"name": "b", "period": 10, "alpha": 1, "beta": 0, "priority": 1},
        {"name": "x", "sources": ["b"], "alpha": 1, "beta": 0, "priority": 2},
        {"name": "y", "sources": ["b"], "alpha": 1, "beta": 0, "priority": 4},
        {"name": "z", "sources": ["x", "y"], "alpha": 1, "beta": 0, "priority": 8},
    ]
    w = sl.parse_workload({"tracks": 1, "horizon": 50, "tables": tables})
    assert dependent_sets(w) == [frozenset({1, 2, 3}), frozenset({3}), frozenset({3}), frozenset()]
    assert inherited_priorities(w, "sum") == [15, 10, 12, 8]
    assert inherited_priorities(w, "max") == [8, 8, 8, 8]
    # max-plus: z 8; x = max(2, 2*8) = 16; y = 16; b = max(1, 2*16) = 32
    assert inherited_priorities(w, "max-plus", 2.0) == [32, 16, 16, 8]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0.001, 0.5, 1, 2, 10, 100]), min_size=1, max_size=6), st.sampled_from([1.5, 2.0, 10.0]))
def test_inherited_values_on_any_chain(priorities, plus):
    w = chain(priorities)
    n = len(priorities)
    assert inherited_priorities(w, "sum") == pytest.approx([sum(priorities[i:]) for i in range(n)], rel=1e-12)
    assert inherited_priorities(w, "max") == [max(priorities[i:]) for i in range(n)]
    expected = [max(plus ** (j - i) * priorities[j] for j in range(i, n)) for i in range(n)]
    assert inherited_priorities(w, "max-plus", plus) == pytest.approx(expected, rel=1e-12)
    for mode in ("sum", "max", "max-plus"):  # a table never inherits less than its own priority
        assert all(ip >= p for ip, p in zip(inherited_priorities(w, mode, plus), priorities))


# ---------------------------------------------------------------------------------------------
# the order changes
# ---------------------------------------------------------------------------------------------


def two_chains(first: str = "cheap") -> dict:
    # Two bases with the same data at 10 on one track: "cheap" (p 1) feeds a p-1 view,
    # "vital" (p 0.001) feeds a p-100 view. Without inheritance the base with the larger own
    # priority runs first; with inheritance the one feeding the important view does.
    cheap = [
        {"name": "cheap", "period": 10, "alpha": 1, "beta": 0, "priority": 1},
        {"name": "cheap_view", "sources": ["cheap"], "alpha": 1, "beta": 0, "priority": 1},
    ]
    vital = [
        {"name": "vital", "period": 10, "alpha": 1, "beta": 0, "priority": 0.001},
        {"name": "vital_view", "sources": ["vital"], "alpha": 1, "beta": 0, "priority": 100},
    ]
    tables = cheap + vital if first == "cheap" else vital + cheap
    return {"tracks": 1, "horizon": 10.5, "tables": tables}


def started_first(workload: dict, policy: str, **options) -> str:
    w = sl.parse_workload(workload)
    jobs = sl.simulate(w, policy, options=options, horizon=11.5).jobs.sort_values("start")
    return str(jobs["table"].iloc[0])


@pytest.mark.parametrize("policy", ["edf-p", "max-benefit", "max-benefit-lookahead", "edf-partitioned", "proportional"])
def test_inheritance_lifts_the_base_of_the_important_view(policy):
    for first in ("cheap", "vital"):
        assert started_first(two_chains(first), policy) == "cheap"
        for mode in ("sum", "max", "max-plus"):
            assert started_first(two_chains(first), policy, inheritance=mode) == "vital"


def test_edf_breaks_deadline_ties_by_inherited_priority():
    # EDF has no priority to replace: both bases have the same deadline 10 + 10, so without
    # inheritance the file order decides; with it the inherited priority does.
    assert started_first(two_chains("cheap"), "edf") == "cheap"
    assert started_first(two_chains("vital"), "edf") == "vital"
    for mode in ("sum", "max", "max-plus"):
        assert started_first(two_chains("cheap"), "edf", inheritance=mode) == "vital"


def test_no_inheritance_keys_are_the_plain_algorithms():
    w = chain([0.001, 1, 100])
    p = [t.priority for t in w.tables]
    period = w.periods
    mb = sl.get_policy("max-benefit").bind(w, None)
    edf = sl.get_policy("edf").bind(w, None)
    edfp = sl.get_policy("edf-p").bind(w, None)
    for i in range(3):
        for n in (0.5, 10.0, 123.25):
            assert mb.key(i, 7.0, 3.0, n) == -p[i] * n / (1 + 0.1 * n)
            assert edf.key(i, 7.0, 3.0, n) == 3.0 + period[i]
            assert edfp.key(i, 7.0, 3.0, n) == (-p[i], 3.0 + period[i])
    inherited = sl.get_policy("max-benefit", inheritance="max").bind(w, None)
    assert inherited.key(0, 7.0, 3.0, 10.0) == -100 * 10.0 / 2.0


def test_bad_inheritance_options_name_the_option():
    with pytest.raises(sl.InputError, match=r"^option inheritance: must be one of none, sum, max, max-plus"):
        sl.get_policy("max-benefit", inheritance="min")
    with pytest.raises(sl.InputError, match=r"^option plus: must be > 1"):
        sl.get_policy("edf-p", inheritance="max-plus", plus=1.0)
    with pytest.raises(sl.InputError, match=r"^option plus: must be of type float"):
        sl.get_policy("proportional", plus="big")


# ---------------------------------------------------------------------------------------------
# the metric keeps the workload's priorities
# ---------------------------------------------------------------------------------------------


@st.composite
def hierarchies(draw):
    n_chains = draw(st.integers(1, 3))
    tables = []
    for c in range(n_chains):
        depth = draw(st.integers(1, 3))
        for level in range(depth):
            t = {
                "name": f"c{c}l{level}",
                "alpha": draw(st.sampled_from([0.5, 1, 2])),
                "beta": draw(st.sampled_from([0.05, 0.1, 0.2])),
                "priority": draw(st.sampled_from([0.001, 1, 10, 100])),
            }
            if level == 0:
                t["period"] = draw(st.sampled_from([5, 10, 20]))
                t["phase"] = draw(st.sampled_from([0, 1, 2.5]))
            else:
                t["sources"] = [f"c{c}l{level - 1}"]
            tables.append(t)
    return sl.parse_workload(
        {"tracks": draw(st.integers(1, 3)), "horizon": 120, "seed": draw(st.integers(0, 9)), "variability": 0.5, "tables": tables}
    )


POLICIES = ["edf", "edf-p", "max-benefit", "max-benefit-lookahead", "edf-partitioned", "proportional"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hierarchies(), st.sampled_from(POLICIES), st.sampled_from(MODES[1:]), st.sampled_from([1.5, 2.0, 10.0]))
def test_inheritance_never_reaches_the_metric(w, policy, mode, plus):
    if policy == "edf-partitioned":
        from staleness_lab.policies.partitioned import pack

        w = w.with_overrides(tracks=max(w.tracks, pack(w).needed))
    r = sl.simulate(w, policy, options={"inheritance": mode, "plus": plus})
    p = [t.priority for t in w.tables]
    assert r.tables["priority"].tolist() == p
    assert r.tables["weighted_staleness_area"].tolist() == pytest.approx(
        [pi * a for pi, a in zip(p, r.tables["staleness_area"])], rel=1e-15
    )
    assert r.total_weighted_staleness == pytest.approx(sum(pi * a for pi, a in zip(p, r.trace.staleness_area)), rel=1e-12)
    assert [t["priority"] for t in r.summary()["tables"]] == p
