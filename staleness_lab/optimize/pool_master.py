"""A plan from the release LP's columns: one column per query chosen exactly among them (this
project's price-and-branch step for queries sharing one executor, Chandrasekaran & Sudarshan
§4's planning problem).

**Why.** Round after round, the release-time LP (:mod:`~staleness_lab.optimize.release_lp`)
prices the plan each query would take at its duals. Its last columns fit together better than the
plans the split search finds: on the 13-query set at ρ = 0.4 the split search's plan costs
662.4 s, the best choice of one LP column per query 656.9 s (the LP's bound 653.2 s on the bound grid
of 1 ms), chosen by CP-SAT in 0.2-0.4 s among 127 columns.

**The model** (on the planner's grid: durations and releases rounded up). Each query takes one of
its columns, or, while at most ``misses`` do, none: it is then late, one batch after all the
others (its cheapest place, :mod:`~staleness_lab.optimize.split_search`). The choice is realized
in the split form's list schedule (:func:`~staleness_lab.optimize.split_search.schedule`): the
non-final batches in release order end at

    E = max(W, max over instants a of (a + the non-final work released at a or later)),

W the last release, and the finals (each with its aggregation) run from E in order of deadline,
so a query q on time needs E + Σ F_k over the queries k on time with D_k <= D_q to be at most D_q.
With one executor and one window (every last tuple at W) these rows are exactly the schedule's;
elsewhere they only steer the choice, and the plan realized is judged by its true key like any
other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from staleness_lab.optimize.release_lp import plan_cost
from staleness_lab.optimize.split_search import Found, Tables


def pool_model(tables: Tables, pool: Sequence[Sequence[tuple[int, ...]]], start: Sequence[tuple[int, ...] | None],
               misses: int) -> tuple[cp_model.CpModel, Callable[[cp_model.CpSolver], Found]]:
    """The model of the module docstring over ``pool`` (per query, plans as batch sizes in tuple
    order; a query without any may only be late), hinted with ``start`` (per query its plan's
    sizes, None when late), and the function
    that reads a solved model's choice as a :class:`~staleness_lab.optimize.split_search.Found`."""
    nq = len(tables.n)
    model = cp_model.CpModel()
    most_batches = tables.agg.shape[1] - 1
    pools = [sorted({tuple(c) for c in (pool[q] if q < len(pool) else ()) if len(c) <= most_batches
                     and sum(c) == tables.n[q]}) for q in range(nq)]
    last = int(max(tables.release[q, tables.n[q]] for q in range(nq)))
    horizon = last + sum(max((plan_cost(tables.dur[q], tables.agg[q], c) for c in pools[q]), default=0)
                         for q in range(nq))
    released: dict[int, list[tuple[int, Any]]] = {}
    cost: list[tuple[int, Any]] = []
    finals, late, choices = [], [], []
    for q, cols in enumerate(pools):
        n = int(tables.n[q])
        picks = [model.new_bool_var(f"q{q}c{i}") for i in range(len(cols))]
        gone = model.new_bool_var(f"late{q}")
        model.add_exactly_one([*picks, gone])
        cost.append((plan_cost(tables.dur[q], tables.agg[q], (n,)), gone))
        final = []
        for pick, sizes in zip(picks, cols):
            cost.append((plan_cost(tables.dur[q], tables.agg[q], sizes), pick))
            end = 0
            for s in sizes[:-1]:
                end += s
                released.setdefault(int(tables.release[q, end]), []).append((int(tables.dur[q, s]), pick))
            final.append((int(tables.dur[q, sizes[-1]] + tables.agg[q, len(sizes)]), pick))
        work = model.new_int_var(0, horizon, f"final{q}")
        model.add(work == sum(w * x for w, x in final))
        finals.append(work)
        late.append(gone)
        choices.append((cols, picks))
        mine = start[q] if q < len(start) else None
        model.add_hint(gone, mine is None or tuple(mine) not in cols)
        for sizes, pick in zip(cols, picks):
            model.add_hint(pick, mine is not None and tuple(mine) == sizes)
    model.add(sum(late) <= misses)
    ends = model.new_int_var(last, horizon, "E")
    after = None   # the non-final work released at this instant or later
    for a in sorted(released, reverse=True):
        here = model.new_int_var(0, horizon, f"after{a}")
        model.add(here == sum(w * x for w, x in released[a]) + (after if after is not None else 0))
        model.add(ends >= a + here)
        after = here
    for q in range(nq):
        due = [finals[k] for k in range(nq) if tables.deadline[k] <= tables.deadline[q]]
        model.add(ends + sum(due) <= int(tables.deadline[q])).only_enforce_if(~late[q])
    model.minimize(sum(w * x for w, x in cost))

    def read(solver: cp_model.CpSolver) -> Found:
        cuts, kept = [], []
        for gone, (cols, picks) in zip(late, choices):
            chosen = next((sizes for sizes, pick in zip(cols, picks) if solver.boolean_value(pick)), None)
            kept.append(chosen is not None and not solver.boolean_value(gone))
            cuts.append([] if chosen is None else [int(x) for x in np.cumsum(chosen[:-1])])
        return Found(cuts=cuts, kept=kept, misses=kept.count(False), cost=int(round(solver.objective_value)))

    return model, read
