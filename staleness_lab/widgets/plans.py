"""``BatchPlanExplorer``: intermittent queries batched against their deadlines (Chandrasekaran
& Sudarshan).

One to three queries of a query set share the executors; their deadlines come from the A5
generator at the deadline factor rho and slack C_max (:func:`staleness_lab.intermittent.
deadlines.with_deadlines`, the queries' own order), and a scheme plans them
(:func:`staleness_lab.intermittent.schemes.make_plan`): Algorithm 1, LLF/EDF/SJF/RR or the
CP-SAT optimum, whose report gives its optimality gap and the best heuristic it started from.
The optimum is sought within a budget that keeps a redraw interactive (:func:`optimal_options`):
exactly, by dynamic programming, when every query has an executor of its own; otherwise the
notes say "feasible, gap g" whenever the budget ends before the proof.
"""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as W

from staleness_lab import viz
from staleness_lab.errors import InputError
from staleness_lab.intermittent import QuerySet, load_queryset
from staleness_lab.intermittent.deadlines import with_deadlines
from staleness_lab.intermittent.plan import BatchPlan
from staleness_lab.intermittent.schemes import make_plan
from staleness_lab.widgets.base import Explorer, Refused, View, choice, int_slider, slider

#: The schemes offered, by label.
SCHEMES = (("Algorithm 1 (one query)", "algorithm1"), ("LLF", "llf"), ("EDF", "edf"), ("SJF", "sjf"),
           ("RR", "rr"), ("CP-SAT optimum", "optimal"))
MAX_QUERIES = 3
MAX_EXECUTORS = 3
#: CP-SAT's budget per phase in the explorer, in deterministic seconds with one worker, so the
#: same controls give the same plan and a redraw stays interactive (about 0.1-0.2 s). E5's three
#: queries on one executor are not proven optimal within it (at rho 0.2 no budget under 2.0
#: deterministic s proves them, 14 s): the notes then say "feasible, gap g", which is the lesson;
#: ``BatchPlanExplorer(..., budget=0.5)`` gives the solver more.
BUDGET = 0.005
#: A runaway solve's wall-clock stop (seconds per phase); the deterministic budget ends it first.
TIME_LIMIT = 2.0


def optimal_options(qs: QuerySet, budget: float = BUDGET) -> dict[str, object]:
    """What the explorer hands :func:`~staleness_lab.intermittent.schemes.make_plan` for the
    optimum of ``qs``: the planner's ``auto`` method (when every query has an executor of its own,
    the decomposition, which plans each exactly by dynamic programming,
    :mod:`staleness_lab.optimize.one_query`, proven in milliseconds; otherwise the slot model)
    within ``budget``."""
    return {"workers": 1, "deterministic_time": budget, "time_limit": TIME_LIMIT, "method": "auto"}


def solver_verdict(solver: dict) -> str:
    """The optimum's standing in words: ``optimal (proven)``, or ``feasible, gap g`` with the
    first phase not proven (``gap not known`` when that phase found no plan within the budget,
    so the plan is the heuristic it started from)."""
    unproven = next((p for p in solver.get("phases", ()) if p.get("status") != "optimal"), None)
    if solver.get("status") == "optimal" and unproven is None:
        return "optimal (proven)"
    if unproven is None:
        return str(solver.get("status"))
    gap = unproven.get("gap")
    shown = "gap not known" if gap is None else f"gap {gap:.3g}"
    return f"{solver.get('status')}, {shown} (the {unproven['phase']} phase not proven within the budget)"


def plan_notes(plan: BatchPlan) -> str:
    """Misses and cost of ``plan``; for the optimum, :func:`solver_verdict`, each phase's status
    and gap, and the best heuristic it was hinted with."""
    text = (f"<p><b>{plan.misses}</b> deadline(s) missed · total cost <b>{float(plan.total_cost):.4g}</b> s "
            f"({html.escape(plan.scheme)})</p>")
    solver = plan.solver
    if solver:
        phases = ", ".join(f"{html.escape(str(p['phase']))}: {html.escape(str(p['status']))}"
                           + ("" if p.get("gap") is None else f", gap {p['gap']:.3g}") for p in solver.get("phases", ()))
        hint = solver.get("hint")
        against = ("" if not hint else f"; the best heuristic ({html.escape(str(hint['scheme']))}) had "
                   f"{hint['misses']} miss(es) at cost {hint['total_cost']:.4g} s")
        text += (f"<p>CP-SAT ({html.escape(str(solver.get('method')))}): <b>{html.escape(solver_verdict(solver))}</b>"
                 f" ({phases}){against}</p>")
    return text + viz.styled(plan.queries, precision=4, hide_index=True).to_html()


class BatchPlanExplorer(Explorer):
    """One to three intermittent queries planned by a scheme.

    ``.controls``: ``queries`` (how many of the set's, in order), ``rho`` (A5's deadline
    factor), ``c_max`` (A5's slack; 0: none), ``executors``, ``scheme`` and ``minbatch``;
    ``.summary`` is :meth:`~staleness_lab.intermittent.BatchPlan.to_json` of the plan shown;
    ``.figures``: ``plan`` (the Gantt chart with deadlines and misses). A plan that a scheme
    cannot make (Algorithm 1 on several queries, a deadline it cannot meet) shows the reason.
    ``main`` (the control a handout precomputes): ``rho`` by default; ``budget``: CP-SAT's
    deterministic seconds per phase for the optimum (:func:`optimal_options`).
    """

    def __init__(self, queryset: QuerySet | str | Path, *, queries: int | None = None, rho: float = 0.4,
                 scheme: str = "edf", main: str = "rho", budget: float = BUDGET) -> None:
        self.queryset = queryset if isinstance(queryset, QuerySet) else load_queryset(queryset)
        self.budget = budget
        qs = self.queryset
        count = min(len(qs.queries), MAX_QUERIES)
        c_max = float(qs.c_max or 0)
        controls = {"queries": int_slider(queries or count, 1, count, "queries"),
                    "rho": slider(rho, 0.0, 2.0, "deadline factor ρ", step=0.05),
                    "c_max": slider(c_max, 0.0, max(4 * c_max, 10.0), "slack C_max"),
                    "executors": int_slider(qs.executors, 1, MAX_EXECUTORS, "executors"),
                    "scheme": choice(SCHEMES, scheme, "scheme"),
                    "minbatch": W.Checkbox(value=True, description="MinBatch", indent=False)}
        super().__init__(controls, [["plan"]], main)

    def instance(self) -> QuerySet:
        """The query set the controls describe (what :meth:`compute` plans)."""
        c = self.controls
        first = self.queryset.queries[: c["queries"].value]
        qs = self.queryset.with_overrides(queries=first, executors=c["executors"].value,
                                          c_max=c["c_max"].value or None)
        return with_deadlines(qs, c["rho"].value, order=range(len(first)))

    def compute(self) -> View:
        c = self.controls
        scheme = c["scheme"].value
        if scheme == "algorithm1" and c["queries"].value > 1:
            raise InputError("scheme", "Algorithm 1 plans one query alone: set queries to 1")
        qs = self.instance()
        extra = optimal_options(qs, self.budget) if scheme == "optimal" else {}
        plan = make_plan(qs, scheme, minbatch=c["minbatch"].value, **extra)
        if plan.status != "ok":
            raise Refused(f"{scheme} made no plan ({plan.status}): {plan.reason or 'no reason given'}")
        return View(plan.to_json(), {"plan": viz.batch_gantt(plan)}, plan_notes(plan))
