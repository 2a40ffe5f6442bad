"""The plan format and its checker (digest §9 check 9): a sound plan passes, each broken rule is named."""

from __future__ import annotations

import json
from fractions import Fraction as F

import pytest

from staleness_lab.intermittent import (
    AggCost, BatchPlan, FixedRate, LinearCost, Query, QuerySet, check_plan, rate_profile,
)
from staleness_lab.intermittent.plan import aggregate, batch
from staleness_lab.intermittent.plan import check_measured_plan


def _qs(executors: int = 1) -> QuerySet:
    arrivals = FixedRate(ws=F(1), rate=F(1), n=10)
    agg = AggCost(a0=F(1, 2), a1=F(1, 2))
    return QuerySet(
        queries=(
            Query("a", arrivals, F(30), LinearCost(S=F(1), R=F(1, 2)), agg),
            Query("b", arrivals, F(40), LinearCost(S=F(2), R=F(1, 10)), agg),
        ),
        executors=executors,
    )


def _sound(qs: QuerySet) -> BatchPlan:
    # a: tuples 1-6 at 6 (cost 4), 7-10 at 10 (cost 3), aggregation 1.5; b: one batch at 13 (cost 3)
    steps = (
        batch("a", 0, F(6), F(10), 1, 6), batch("a", 0, F(10), F(13), 7, 10), aggregate("a", 0, F(13), F(29, 2), 2),
        batch("b", 0, F(29, 2), F(35, 2), 1, 10),
    )
    return BatchPlan(qs, "manual", steps)


def test_a_sound_plan_passes_and_its_frames_are_tidy() -> None:
    qs = _qs()
    plan = _sound(qs)
    assert check_plan(qs, plan) == []
    assert list(plan.batches["kind"]) == ["batch", "batch", "aggregate", "batch"]
    assert list(plan.batches["size"]) == [6, 4, 2, 10]
    queries = plan.queries.set_index("query")
    assert queries.loc["a", "n_batches"] == 2 and queries.loc["a", "completion"] == 14.5
    assert queries.loc["a", "cost"] == 8.5 and queries.loc["a", "normalized_cost"] == pytest.approx(8.5 / 6)
    assert not queries["late"].any() and plan.misses == 0
    assert plan.total_cost == F(23, 2)
    json.dumps(plan.to_json(), allow_nan=False)


def test_lateness_and_tardiness() -> None:
    qs = _qs()
    late = QuerySet(queries=(Query("a", qs.queries[0].arrivals, F(14), qs.queries[0].cost, qs.queries[0].agg_cost),
                             qs.queries[1]))
    plan = _sound(late)
    assert plan.misses == 1
    assert plan.queries.set_index("query").loc["a", "tardiness"] == 0.5
    assert plan.total_tardiness == F(1, 2)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        # b starts before a's aggregation ends on the one executor
        ((batch("a", 0, F(6), F(10), 1, 6), batch("a", 0, F(10), F(13), 7, 10), aggregate("a", 0, F(13), F(29, 2), 2),
          batch("b", 0, F(14), F(17), 1, 10)), "overlaps"),
        # a batch holding tuples that have not arrived (tuple 6 arrives at 6)
        ((batch("a", 0, F(5), F(9), 1, 6), batch("a", 0, F(10), F(13), 7, 10), aggregate("a", 0, F(13), F(29, 2), 2),
          batch("b", 0, F(15), F(18), 1, 10)), "have arrived"),
        # a batch shorter than Cost(size)
        ((batch("a", 0, F(6), F(9), 1, 6), batch("a", 0, F(10), F(13), 7, 10), aggregate("a", 0, F(13), F(29, 2), 2),
          batch("b", 0, F(15), F(18), 1, 10)), "< Cost(6)"),
        # two batches but no aggregation
        ((batch("a", 0, F(6), F(10), 1, 6), batch("a", 0, F(10), F(13), 7, 10), batch("b", 0, F(15), F(18), 1, 10)),
         "one final aggregation"),
        # tuples 7..9 only: N not covered
        ((batch("a", 0, F(6), F(10), 1, 6), batch("a", 0, F(10), F(13), 7, 9), aggregate("a", 0, F(13), F(29, 2), 2),
          batch("b", 0, F(15), F(18), 1, 10)), "cover 9 tuples"),
        # the aggregation before the last batch ends
        ((batch("a", 0, F(6), F(10), 1, 6), batch("a", 0, F(10), F(13), 7, 10), aggregate("a", 1, F(12), F(27, 2), 2),
          batch("b", 0, F(15), F(18), 1, 10)), "before the last batch ends"),
        # a query missing entirely
        ((batch("a", 0, F(11), F(17), 1, 10),), "b: no batches"),
    ],
)
def test_each_broken_rule_is_named(steps: tuple, message: str) -> None:
    qs = _qs(executors=2)
    problems = check_plan(qs, BatchPlan(qs, "manual", steps))
    assert any(message in p for p in problems), problems


def test_executors_out_of_range_and_measured_plans() -> None:
    qs = _qs()
    plan = BatchPlan(qs, "manual", (batch("a", 1, F(11), F(17), 1, 10), batch("b", 0, F(11), F(12), 1, 10)))
    problems = check_plan(qs, plan)
    assert any("executor 1 outside" in p for p in problems)
    assert any("< Cost(10)" in p for p in problems)
    # a measured plan takes whatever the runner measured: only the duration rule is relaxed
    assert not any("Cost(" in p for p in check_measured_plan(qs, plan))


def test_a_plan_without_status_ok_has_no_steps() -> None:
    qs = _qs()
    assert check_plan(qs, BatchPlan(qs, "manual", (), status="no-plan", reason="loop")) == []
    assert check_plan(qs, BatchPlan(qs, "manual", _sound(qs).steps, status="infeasible")) != []
    with pytest.raises(ValueError):
        BatchPlan(qs, "manual", (), status="maybe")


def test_generated_profiles_are_monotone_and_end_where_fig9_says() -> None:
    n = 451
    width = F(n - 1)
    for kind, end in [("VR1", F(9, 10) * width), ("VR2", F(9, 10) * width),
                      ("VR3", (1 + F(20, 4500)) * width), ("VR4", (1 + F(7, 4500)) * width)]:
        profile = rate_profile(kind, n, rate=1, ws=1, seed=7)
        assert profile.n == n
        assert list(profile.times) == sorted(set(profile.times))
        assert abs(profile.we - 1 - end) <= F(1, 100), kind
        assert profile.available(profile.we) == n and profile.available(profile.ws - F(1, 100)) == 0
        assert rate_profile(kind, n, rate=1, ws=1, seed=7) == profile
    assert rate_profile("FR", n) == FixedRate(ws=F(1), rate=F(1), n=n)
