"""``BatchPlanExplorer``: intermittent queries batched against their deadlines (Chandrasekaran
& Sudarshan).

One to three queries of a query set share the executors; their deadlines come from the A5
generator at the deadline factor rho and slack C_max (:func:`staleness_lab.intermittent.
deadlines.with_deadlines`, the queries' own order), and a scheme plans them
(:func:`staleness_lab.intermittent.schemes.make_plan`): Algorithm 1, LLF/EDF/SJF/RR or the
CP-SAT optimum, whose report gives its optimality gap and the best heuristic it started from.
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
#: CP-SAT's budget in the explorer: one worker and a deterministic limit per phase, so the same
#: controls give the same plan; the wall-clock limit only stops a runaway solve. On E5 at
#: rho = 0.2 no budget proves the misses optimal (2.0 took 14 s for the same plan as 0.5 in 6 s):
#: the explorer then shows "feasible" and the gap, which is the lesson.
OPTIMAL = {"workers": 1, "deterministic_time": 0.5, "time_limit": 2.0}


def plan_notes(plan: BatchPlan) -> str:
    """Misses and cost of ``plan``; for the optimum, the solver's status, each phase's gap and
    the best heuristic it was hinted with."""
    text = (f"<p><b>{plan.misses}</b> deadline(s) missed · total cost <b>{float(plan.total_cost):.4g}</b> s "
            f"({html.escape(plan.scheme)})</p>")
    solver = plan.solver
    if solver:
        phases = ", ".join(f"{html.escape(str(p['phase']))}: {html.escape(str(p['status']))}"
                           + ("" if p.get("gap") is None else f", gap {p['gap']:.3g}") for p in solver.get("phases", ()))
        hint = solver.get("hint")
        against = ("" if not hint else f"; the best heuristic ({html.escape(str(hint['scheme']))}) had "
                   f"{hint['misses']} miss(es) at cost {hint['total_cost']:.4g} s")
        text += f"<p>CP-SAT: <b>{html.escape(str(solver.get('status')))}</b> ({phases}){against}</p>"
    return text + viz.styled(plan.queries, precision=4, hide_index=True).to_html()


class BatchPlanExplorer(Explorer):
    """One to three intermittent queries planned by a scheme.

    ``.controls``: ``queries`` (how many of the set's, in order), ``rho`` (A5's deadline
    factor), ``c_max`` (A5's slack; 0: none), ``executors``, ``scheme`` and ``minbatch``;
    ``.summary`` is :meth:`~staleness_lab.intermittent.BatchPlan.to_json` of the plan shown;
    ``.figures``: ``plan`` (the Gantt chart with deadlines and misses). A plan that a scheme
    cannot make (Algorithm 1 on several queries, a deadline it cannot meet) shows the reason.
    ``main`` (the control a handout precomputes): ``rho`` by default.
    """

    def __init__(self, queryset: QuerySet | str | Path, *, queries: int | None = None, rho: float = 0.4,
                 scheme: str = "edf", main: str = "rho") -> None:
        self.queryset = queryset if isinstance(queryset, QuerySet) else load_queryset(queryset)
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
        extra = OPTIMAL if scheme == "optimal" else {}
        plan = make_plan(self.instance(), scheme, minbatch=c["minbatch"].value, **extra)
        if plan.status != "ok":
            raise Refused(f"{scheme} made no plan ({plan.status}): {plan.reason or 'no reason given'}")
        return View(plan.to_json(), {"plan": viz.batch_gantt(plan)}, plan_notes(plan))
