"""BatchPlanExplorer: the plan shown equals the planner's plan of the same query set, and a
plan no scheme can make shows why."""

from __future__ import annotations


import pytest

from staleness_lab.intermittent import load_queryset
from staleness_lab.intermittent.deadlines import with_deadlines
from staleness_lab.intermittent.schemes import make_plan
from staleness_lab.widgets import BatchPlanExplorer
from staleness_lab.widgets.plans import OPTIMAL
from tests.widgets.helpers import E5, drawn, refused_keeps_view


@pytest.fixture()
def explorer() -> BatchPlanExplorer:
    return BatchPlanExplorer(E5)


def e5(queries: int, rho: float, executors: int = 1, c_max: float | None = 10):
    qs = load_queryset(E5)
    qs = qs.with_overrides(queries=qs.queries[:queries], executors=executors, c_max=c_max)
    return with_deadlines(qs, rho, order=range(queries))


def test_e5_at_rho_0_4_has_the_files_deadlines_and_the_planners_plan(explorer: BatchPlanExplorer) -> None:
    assert explorer.reason is None
    assert [q["deadline"] for q in explorer.summary["queries"]] == [118.8, 123.2, 136.8]  # the file's A5 values
    assert explorer.summary == make_plan(e5(3, 0.4), "edf").to_json()
    before = drawn(explorer)
    explorer.controls["scheme"].value = "llf"
    explorer.controls["executors"].value = 2
    explorer.controls["rho"].value = 0.2
    assert explorer.summary == make_plan(e5(3, 0.2, executors=2), "llf").to_json()
    assert drawn(explorer)["plan"] != before["plan"]
    assert "executor 1" in drawn(explorer)["plan"]


def test_the_optimum_shows_its_gap_and_the_heuristic_it_beat(explorer: BatchPlanExplorer) -> None:
    explorer.controls["queries"].value = 2
    explorer.controls["scheme"].value = "optimal"
    plan = make_plan(e5(2, 0.4), "optimal", **OPTIMAL)
    assert explorer.summary["status"] == "ok" and explorer.summary["solver"]["status"] == plan.solver["status"]
    assert (explorer.summary["misses"], explorer.summary["total_cost"]) == (plan.misses, float(plan.total_cost))
    assert "CP-SAT" in explorer.notes and "gap" in explorer.notes and "the best heuristic" in explorer.notes


def test_algorithm1_plans_one_query_alone(explorer: BatchPlanExplorer) -> None:
    refused_keeps_view(explorer, "scheme", "algorithm1", "Algorithm 1 plans one query alone")
    explorer.controls["queries"].value = 1
    assert explorer.reason is None
    assert explorer.summary == make_plan(e5(1, 0.4), "algorithm1").to_json()


def test_a_deadline_no_plan_can_meet_shows_the_reason(explorer: BatchPlanExplorer) -> None:
    explorer.controls["queries"].value = 1
    explorer.controls["scheme"].value = "algorithm1"
    explorer.controls["c_max"].value = 0.0
    refused_keeps_view(explorer, "rho", 0.1, "no tuple fits between the window end 100 and D_last")
    # rho 0 without slack: the deadline is the window end itself, which the model refuses
    refused_keeps_view(explorer, "rho", 0.0, "queries[0].deadline", "must be after the window end")
    assert explorer.summary["queries"][0]["deadline"] == pytest.approx(108.8)  # still rho 0.4 without slack
