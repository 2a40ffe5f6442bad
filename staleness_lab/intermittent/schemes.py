"""Every planning scheme behind one name: ``make_plan(qs, scheme)`` returns a :class:`BatchPlan`.

Schemes (:data:`SCHEMES`):

* ``algorithm1``: the paper's single-query heuristic (Function 1 and the aggregation loop,
  :func:`staleness_lab.intermittent.single.algorithm1`); one query only.
* ``exact``: the exact single-query reference (:func:`staleness_lab.intermittent.single.exact`);
  one query only, ``N <= 20,000`` (its suffix DP).
* ``llf``, ``edf``, ``sjf``, ``rr``: the dynamic dispatcher
  (:func:`staleness_lab.intermittent.dispatch.dispatch`), with or without MinBatch.
* ``optimal``: the CP-SAT planner (:func:`staleness_lab.optimize.batch_plan.optimal_plan`),
  seeded with :func:`best_heuristic`'s plan as its hint. OR-Tools is imported only for it.

:func:`best_heuristic` runs every heuristic that applies (the four dispatch policies with the
given MinBatch setting, plus Algorithm 1 and the exact DP when the set has one query and they
give a plan) and keeps the one with the fewest misses, then the lowest total cost (ties: the
order just listed). The optimal plan's solver report names it under ``solver["hint"]``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.intermittent.costs import LinearCost
from staleness_lab.intermittent.dispatch import POLICIES, dispatch
from staleness_lab.intermittent.model import QuerySet
from staleness_lab.intermittent.plan import METHODS, OBJECTIVES, BatchPlan
from staleness_lab.intermittent.single import PARETO_MAX_TUPLES, algorithm1, exact
from staleness_lab.intermittent.size import MAX_MODEL_TERMS, PlanLimits, check_plan_size
from staleness_lab.cpsat import check_workers

#: The largest window the exact DP hints the optimizer with, for non-linear costs.
HINT_EXACT_TUPLES = 200
SCHEMES = ("algorithm1", "exact", "llf", "edf", "sjf", "rr", "optimal")
#: The dispatch policies among :data:`SCHEMES`, in :func:`best_heuristic`'s tie-break order.
DISPATCH_SCHEMES = POLICIES


def check_options(scheme: Any, objective: Any = "misses", time_limit: Any = 10.0, workers: Any = 2,
                  deterministic_time: Any = None, method: Any = "auto") -> None:
    """Raise :class:`InputError` naming the first bad option of :func:`make_plan`."""
    if scheme not in SCHEMES:
        raise InputError("--scheme", f"must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    if objective not in OBJECTIVES:
        raise InputError("--objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float))
            or not math.isfinite(time_limit) or not time_limit > 0):
        raise InputError("--time-limit", f"must be a finite number of seconds > 0, got {time_limit!r}")
    check_workers(workers, "--workers")
    if method not in METHODS:
        raise InputError("--method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    if deterministic_time is not None and (
            isinstance(deterministic_time, bool) or not isinstance(deterministic_time, (int, float))
            or not math.isfinite(deterministic_time) or not deterministic_time > 0):
        raise InputError("deterministic_time", f"must be a finite number > 0 or None, got {deterministic_time!r}")


def _rank(plan: BatchPlan) -> tuple[int, Any]:
    return plan.misses, plan.total_cost


def best_heuristic(qs: QuerySet, minbatch: bool = True) -> BatchPlan:
    """The heuristic plan with the fewest misses, then the lowest total cost (module docstring)."""
    candidates = [dispatch(qs, policy, minbatch=minbatch) for policy in DISPATCH_SCHEMES]
    if len(qs.queries) == 1:
        candidates.append(algorithm1(qs))
        query = qs.queries[0]
        # the exact DP as a hint within the sizes this hint was measured at: linear costs up to
        # 2,000 tuples, other costs up to a few hundred (then its Pareto search took seconds)
        if query.n <= (PARETO_MAX_TUPLES if isinstance(query.cost, LinearCost) else HINT_EXACT_TUPLES):
            candidates.append(exact(qs))
    planned = [plan for plan in candidates if plan.status == "ok"]
    # the dispatcher always plans, so `planned` is never empty
    return min(planned, key=_rank)


def make_plan(qs: QuerySet, scheme: str, *, minbatch: bool = True, objective: str = "misses",
              time_limit: float = 10.0, workers: int = 2, deterministic_time: float | None = None,
              limits: PlanLimits | None = None, max_model_terms: int | None = MAX_MODEL_TERMS,
              method: str = "auto") -> BatchPlan:
    """``qs`` planned by ``scheme`` (one of :data:`SCHEMES`). ``minbatch`` applies to the dispatch
    policies and to the hint of ``optimal``; ``objective``, ``time_limit``, ``workers`` and
    ``deterministic_time`` apply to ``optimal`` only. Bad options raise :class:`InputError`
    naming the option (``--scheme``, ``--objective``, ...); a set above the size ``limits``
    (:func:`~staleness_lab.intermittent.size.check_plan_size`, default :class:`PlanLimits`), or
    one the CP-SAT planner cannot hold (``optimal``), is refused before any planning;
    ``max_model_terms`` (default :data:`~staleness_lab.optimize.batch_plan.MAX_MODEL_TERMS`; None:
    no limit) bounds the CP-SAT model, checked after the heuristic hint and before the model is built."""
    check_options(scheme, objective, time_limit, workers, deterministic_time, method)
    check_plan_size(qs, limits)
    if scheme == "optimal":
        from staleness_lab.optimize.batch_plan import check_max_terms, check_model_size  # before the hint's work

        check_model_size(qs)
        if max_model_terms is not None:
            check_max_terms(max_model_terms)
    if scheme == "algorithm1":
        return algorithm1(qs)
    if scheme == "exact":
        return exact(qs)
    if scheme in DISPATCH_SCHEMES:
        return dispatch(qs, scheme, minbatch=minbatch)
    hint = best_heuristic(qs, minbatch=minbatch)
    from staleness_lab.optimize.batch_plan import optimal_plan  # OR-Tools only when needed

    plan = optimal_plan(qs, objective=objective, time_limit=float(time_limit), workers=workers, hint=hint,
                        deterministic_time=None if deterministic_time is None else float(deterministic_time),
                        max_terms=max_model_terms, method=method)
    if plan.solver is None:
        return plan
    hinted = {"scheme": hint.scheme, "misses": hint.misses, "total_cost": float(hint.total_cost)}
    return replace(plan, solver={**plan.solver, "hint": hinted})
