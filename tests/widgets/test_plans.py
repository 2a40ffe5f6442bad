"""BatchPlanExplorer: the plan shown equals the planner's plan of the same query set, and a
plan no scheme can make shows why."""

from __future__ import annotations

from typing import Any

import pytest

from staleness_lab.intermittent import load_queryset
from staleness_lab.intermittent.deadlines import with_deadlines
from staleness_lab.intermittent.schemes import make_plan
from staleness_lab.widgets import BatchPlanExplorer
from staleness_lab.widgets.plans import optimal_options
from tests.widgets.helpers import E5, drawn, refused_keeps_view


@pytest.fixture()
def explorer() -> BatchPlanExplorer:
    return BatchPlanExplorer(E5)


def timeless(value: Any) -> Any:
    """A plan's JSON without the solver's wall-clock ``seconds`` (per phase, per stage): all else
    is deterministic with one worker and a deterministic budget."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


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
    plan = make_plan(e5(2, 0.4), "optimal", **optimal_options(e5(2, 0.4)))
    assert timeless(explorer.summary) == timeless(plan.to_json())  # one worker, a deterministic budget
    assert "CP-SAT" in explorer.notes and "gap" in explorer.notes and "the best heuristic" in explorer.notes


def test_an_unproven_optimum_says_feasible_and_its_gap(explorer: BatchPlanExplorer) -> None:
    """Three queries on one executor at rho 0.2: the interactive budget ends before the proof,
    and the notes say so with the gap of the first phase left unproven, as the solver reports it."""
    explorer.controls["rho"].value = 0.2
    explorer.controls["scheme"].value = "optimal"
    plan = make_plan(e5(3, 0.2), "optimal", **optimal_options(e5(3, 0.2)))
    assert timeless(explorer.summary) == timeless(plan.to_json())
    solver = explorer.summary["solver"]
    assert solver["status"] == "feasible" and solver["method"] == "monolithic (auto: queries share an executor)"
    first = next(p for p in solver["phases"] if p["status"] != "optimal")
    said = "gap not known" if first["gap"] is None else f"gap {first['gap']:.3g}"
    assert f"<b>feasible, {said} (the {first['phase']} phase not proven within the budget)</b>" in explorer.notes
    assert "proven)" not in explorer.notes.replace("not proven", "")


def test_queries_on_executors_of_their_own_are_proven_by_the_exact_dp(explorer: BatchPlanExplorer) -> None:
    explorer.controls["executors"].value = 3
    explorer.controls["rho"].value = 0.2
    explorer.controls["scheme"].value = "optimal"
    solver = explorer.summary["solver"]
    assert solver["method"] == "decomposition (auto: every query has an executor of its own)"
    assert solver["status"] == "optimal"
    assert all(p["status"] == "optimal" and p["gap"] == 0 for p in solver["phases"])
    assert "<b>optimal (proven)</b>" in explorer.notes
    expected = make_plan(e5(3, 0.2, executors=3), "optimal", **optimal_options(e5(3, 0.2, executors=3)))
    assert timeless(explorer.summary) == timeless(expected.to_json())


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
