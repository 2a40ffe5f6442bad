"""The decomposition's repair and its shortcuts (``optimal_plan(method="decomposition")``).

The repair moves a plan towards the master's columns one query at a time (batch sizes fixed, the
slot model sequencing them): on random sets (piecewise and table costs, one and two executors,
fixed and tabulated arrivals, on the grid and off it) with random targets, what it keeps passes
``check_plan``, is never worse than where it started, never beats the brute-force optimum, and a
kept trial is a strict improvement. On an A5 set at ρ = 0.4 it finds the plan with no miss that
the heuristics, the master's columns together and the slot model missed. With a plan on time
known, the master's phase 1 is fixed at 0 without a solve, and where both methods prove an
optimum they agree.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from staleness_lab.experiments.intermittent.sweeps import random_a5_instance
from staleness_lab.intermittent import QuerySet, check_plan
from staleness_lab.intermittent.schemes import best_heuristic
from staleness_lab.optimize import batch_plan as bp
from staleness_lab.optimize import optimal_plan
from staleness_lab.optimize.true_bounds import Incumbent, true_key

from tests.intermittent.test_single import compositions
from tests.optimize.test_batch_decomposition import query_sets
from tests.optimize.test_true_bounds import brute_force, off_grid_sets


def _repaired(qs: QuerySet, data: st.DataObject, objective: str) -> tuple[Incumbent, tuple, list]:
    """The repair of the best heuristic's plan towards drawn targets (None for some queries)."""
    hint = best_heuristic(qs)
    consts = [bp._const(qs, q, q.n, None, False) for q in qs.queries]
    targets = [data.draw(st.none() | st.sampled_from(compositions(q.n))) for q in qs.queries]
    inc = Incumbent(objective)
    inc.offer(hint)
    start = inc.key
    stages: list[dict] = []
    bp._repair(qs, consts, targets, inc, hint, objective, bp._Budget(time_limit=2.0, workers=1, deterministic=None),
               stages)
    assert inc.plan is not None and check_plan(qs, inc.plan) == []
    assert inc.key == true_key(inc.plan, objective) and inc.key <= start
    for stage in stages:
        assert stage["stage"] == "repair" and 0 <= stage["kept"] <= stage["trials"]
        if stage["kept"]:
            assert inc.key < start
    return inc, start, stages


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query_sets(), st.sampled_from(["misses", "tardiness"]), st.data())
def test_the_repair_keeps_only_sound_better_plans(qs: QuerySet, objective: str, data: st.DataObject) -> None:
    _repaired(qs, data, objective)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(off_grid_sets(), st.data())
def test_a_repaired_plan_never_beats_the_brute_force_optimum(qs: QuerySet, data: st.DataObject) -> None:
    inc, _, _ = _repaired(qs, data, "misses")
    misses, price = brute_force(qs)
    assert (misses, price) <= (inc.key[0], inc.key[1])


def test_the_repair_finds_the_plan_on_time_the_others_missed() -> None:
    """A5, 4 queries of N = 100 at ρ = 0.4, seed 1: the best heuristic misses a deadline, so did
    the slot model in 60 s; the master's columns realized together miss two; moved one query at a
    time (the repair) they miss one, and the slot model seeded with that plan finds one with none.
    Deterministic time, so the result does not depend on the machine's load: under a 60 s
    wall-clock limit a loaded machine once ended with the repair's miss kept. Without the split
    search, which finds a plan on time before any of them (then nothing is left to repair)."""
    qs = random_a5_instance(4, 100, 0.4, 1)
    hint = best_heuristic(qs)
    assert hint.misses == 1
    plan = optimal_plan(qs, hint=hint, method="decomposition", deterministic_time=0.4, workers=2, max_terms=None,
                        split_search=False)
    assert plan.status == "ok" and check_plan(qs, plan) == [] and plan.misses == 0 and plan.solver["start"] == "hint"
    stages = plan.solver["stages"]
    realized = [s["objective"] for s in stages if s["stage"] == "realize"][0]
    repair = next(s for s in stages if s["stage"] == "repair")
    assert realized == 2 and repair["kept"] > 0 and repair["misses"] == 1
    assert [s["objective"] for s in stages if s["stage"] == "monolithic"][0] == 0


def test_in_deterministic_mode_the_wall_clock_decides_nothing() -> None:
    """With ``deterministic_time`` the time limit is not used (module docstring, "Budget"): a
    limit of a millisecond runs the same stages to the same plan as one of a minute. The
    realization (and the column rounds, the repair and the fallback alike) was skipped once the
    wall clock ran past the limit, so the plan depended on the machine's load."""
    qs = random_a5_instance(4, 30, 0.4, 0)
    hint = best_heuristic(qs)
    plans = [optimal_plan(qs, hint=hint, method="decomposition", deterministic_time=0.2, time_limit=limit,
                          workers=2, max_terms=None) for limit in (60.0, 0.001)]
    ran = [[(s["stage"], s.get("objective")) for s in p.solver["stages"]] for p in plans]
    assert ran[0] == ran[1] and "realize" in {stage for stage, _ in ran[0]}
    assert plans[0].steps == plans[1].steps


def test_with_a_plan_on_time_the_master_fixes_phase_1_without_a_solve() -> None:
    qs = random_a5_instance(4, 100, 0.4, 0)
    hint = best_heuristic(qs)
    assert hint.misses == 0
    plan = optimal_plan(qs, hint=hint, method="decomposition", time_limit=60.0, workers=2, max_terms=None)
    first = next(s for s in plan.solver["stages"] if s["stage"] == "master")
    assert first["phase"] == "misses" and first["objective"] == first["bound"] == 0.0 and first["seconds"] == 0.0
    assert "no solve" in first["note"]
    reference = optimal_plan(qs, hint=hint, method="monolithic", time_limit=60.0, workers=2, max_terms=None)
    assert plan.solver["status"] == reference.solver["status"] == "optimal"
    assert (plan.misses, plan.total_cost) == (reference.misses, reference.total_cost)
