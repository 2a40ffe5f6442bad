"""The optimal batch plan of an intermittent query set, by CP-SAT (digest §7 and its corrections).

Chandrasekaran & Sudarshan, "Scheduling of Intermittent Query Processing": the MIP of their
§3.2 for one query, extended (digest §7) to several queries sharing executors. The digest is
``shared/specs/chandrasekaran-intermittent.md``; its corrections override its §7 where they
differ: correction 1 (CP-SAT must equal the exact DP and never cost more than Algorithm 1),
correction 2 (the CP-SAT details below) and the second round (the linear-cost identity, which
proves E5 at ρ = 0.4 optimal, 76.0, in under a second on 2 workers).

:func:`optimal_plan` returns a :class:`~staleness_lab.intermittent.plan.BatchPlan` with scheme
``"optimal"``. Every modelling choice:

**Time grid.** Every time is an integer count of ``u = qs.time_unit``. A batch of ``x`` tuples
lasts ``ceil(Cost(x)/u)`` units, the final aggregation over ``n`` partials ``ceil(AggCost(n)/u)``
units (``AggCost(1) = 0``), a deadline is ``floor(D/u)`` units, and a batch may start only on the
grid. Availability is exact on the grid: tuple ``c`` arrives at ``InputTime(c)``, and a batch
starting at grid time ``s`` may hold the cumulative count ``c`` only if ``A(s·u) >= c``, i.e.
``s >= ceil(InputTime(c)/u)``. For a fixed rate that is one linear constraint on integers
(``L·s >= a·c + b``, the rationals scaled by their common denominator); for a step profile,
``AddElement`` over the table ``ceil(InputTime(c)/u)`` indexed by the tuple count ``c``
(correction 2: look arrival times up by count, not counts by time). When ws, the arrival times,
every ``Cost(x)``, every ``AggCost(n)`` and every D are multiples of ``u`` (``on_grid``), every
semi-active schedule (each step as early as its predecessors and arrivals allow, which is never
worse for any objective here) lies on the grid, so the grid optimum is the optimum. Otherwise
(``solver["on_grid"]`` false) the plan stays on the grid, its durations the rounded-up ones (so
it is feasible for the true costs and passes ``check_plan``), while its bounds come from the
*bound grid*, every duration and release rounded DOWN (:mod:`~staleness_lab.optimize.true_bounds`:
every true plan maps onto it no worse, so its lower bounds hold for the true costs), and the
result is the better, by its true key, of that plan and the hint itself (not snapped).

**What is proven.** Off the grid (and on it alike) the reported phases compare the returned plan
*at the cost model's durations* (each step where it starts, lasting ``Cost(x)`` or ``AggCost(n)``:
:func:`~staleness_lab.intermittent.plan.at_model_costs`) with lower bounds that hold for every
plan of the true problem (batches in tuple order, each holding only tuples arrived at its start,
the final aggregation when the last batch ends, at most m steps at a time). ``status`` is
``"optimal"`` only when the plan's true (phase-1 value, cost, batches, tardiness) reaches the key
of a proven optimum of a relaxation of it (the relaxed master or each query's own DP on the bound
grid, or each query's exact optimum off any grid when none shares an executor): then no plan of
the true problem is better. Otherwise ``"feasible"``, each phase with its true bound and gap. The
slot model's own rounds (their records kept in ``phases`` before the last round, and
``grid_status``) prove optima of the rounded-up grid only.

**Batch cost.** Linear costs whose ``S`` and ``R`` are multiples of ``u`` (exact on the grid)
give each slot the affine duration ``S'·used + R'·x`` and the query's cost through the identity
``Σ d = S'·n + R'·N`` (+ ``AggCost(n)``), so the objective depends on ``n`` only (this is what
makes E5 prove optimal in under a second, against ~25 s with a sum over slots). Every other cost
(linear off the grid, piecewise, table) is a per-size table ``ceil(Cost(x)/u)``, ``x = 0..N``,
read with ``AddElement`` (correction 2: never R per tuple, rounded).

**Slots.** Query ``q`` has slots ``i = 1..K_q`` used as a prefix (``used_1 = 1``,
``used_{i+1} ⇒ used_i``); a used slot holds ``x_i >= 1`` tuples, an unused one none and sits at
time 0; ``Σ x_i = N`` through the cumulative counts ``c_i``; batches of a query run in order
(``used_{i+1} ⇒ e_i <= s_{i+1}``); ``n = Σ used``. The final aggregation is an interval of
``AggCost(n)`` units, present when ``n >= 2``, starting EXACTLY at the last used batch's end
(correction 2: ``f = max e_i``, or it floats); a query's completion is ``f + AggCost(n)``. The
one-executor heuristics (A2, A4) run the aggregation the same way, at the end of the last batch.
Deadlines are soft: ``late_q ⇔ completion > D``, tardiness ``T_q >= completion - D``, ``T_q >= 0``.

**Executors.** One executor (the paper's model): ``AddNoOverlap`` over every batch and
aggregation interval of every query. ``m > 1`` executors (this project's extension, correction 2):
``AddCumulative`` with demand 1 and capacity m; the plan's executors are then assigned greedily
by start time (lowest free executor first), which always succeeds for intervals whose overlap
never exceeds m. The horizon is the last arrival (or the latest deadline, if later) plus every
query's largest possible work, so the left-shifted optimum always fits.

**Objective, in phases.** Phase 1 minimises Σ late (``objective="misses"``) or Σ tardiness
(``"tardiness"``, in grid units). Only when phase 1 is OPTIMAL is its value fixed; when it is only
FEASIBLE, phase 2 is bounded by phase 1's incumbent (``<=``) and the result is FEASIBLE. Phase 2
("cost") minimises, lexicographically by weights, total cost (Σ batch durations + aggregations,
grid units), then the number of batches (needed when S = 0, as in E1), then total tardiness
(correction 2: late queries must not drift to the horizon; dropped when phase 1 reached 0).
Hints: on one executor the ``hint`` is first replaced by the plan of the split-form search
(:mod:`~staleness_lab.optimize.split_search`) when that is better, then (fewest misses) by the
plan chosen among the release LP's columns at its misses when that is better
(:func:`_column_plan`, :mod:`~staleness_lab.optimize.pool_master`; ``split_search=False`` keeps
the hint; ``solver["start"]`` says which, ``solver["start_columns"]`` what the choice did). The ``hint`` plan (e.g. the best heuristic) seeds
phase 1 with a complete assignment (sizes, starts, every derived variable); phase 2 is seeded
with phase 1's solution, or with the hint when it has phase 1's value and is cheaper; a phase-2
result worse than phase 1's solution is dropped; and later rounds are seeded with the best plan so far. A hint off the grid is snapped
onto it first (each step, in the plan's order, starts at its start rounded up, or when the
rounded-up steps before it on its executor or in its query end), so it stays feasible; when a
round finds nothing within its limit, the snapped hint is that round's (unproven) plan. So a
result is never worse (misses, then cost) than the hint on the grid, and a hint is never lost.
K rounds keep the best plan.

**Slot cap K.** ``K_q`` is the hint's batch count + 3, else ``ceil(N/MinBatch)`` (digest A3,
:func:`~staleness_lab.intermittent.minbatch.find_min_batch`), capped at N and at ``max_slots``.
K restricts the search, so after each round (both phases proven optimal for these K) a query is
*certified* when its K cannot have bound the result: ``K_q = N_q``, or phase 1 reached 0 (no
late query, zero tardiness: a lower bound), or a number of misses that the release-time LP proves
no plan goes below (the ``auto`` method: :func:`_misses_floor`), and every plan with more than ``K_q`` batches of ``q``
costs more, or as much with no fewer batches, by a time-free lower bound (cost of ``q`` with
``K_q + 1`` or more batches plus every other query's cheapest split; an exact DP over splits
for tables, ``S'·n + R'·N + AggCost(n)`` for linear costs). Uncertified queries get ``K_q``
doubled (``<= N``, ``<= max_slots``) and the model is solved again, hinted with the best plan, while
time is left (wall clock: more than 5 % of ``time_limit``; deterministic mode: at most 4 rounds).
``solver["K"]`` reports the caps of the returned round and ``solver["K_bound"]`` whether some
uncertified cap may have bound the result. A CP-SAT INFEASIBLE (possible only with
``cost_cap``) is a proof only when ``K_q = N_q`` for every query and the data lie on the grid;
otherwise the plan's status is ``"unknown"`` with the reason.

**Variants.** ``fixed_sizes={query: x}``: every batch but the last holds exactly ``x`` tuples
(MinBatch sizes, digest §7), so the query has ``ceil(N/x)`` batches of fixed sizes (the slot
count is then exact, not a cap) and ``plan.minbatch`` records x. ``cost_cap=True``: each query's
cost (grid units) ``<= floor((1 + δRSF)·Cost_q(N)/u)``.

**Budget.** ``time_limit`` (seconds, wall clock) is per phase: each CP-SAT solve gets at most
that, and the whole call at most twice that, counted from its start: the tables, both phases,
any rounds of K doubling, the decomposition's columns (their DPs stop when the budget is spent;
no relaxation is then built on them and the bounds are the time-free ones of the bound grid) and,
off the grid, the true bounds (the slot model's rounds then get 3/4 of the budget). What runs past
it is one DP layer, the tables of a call (Cost(x) for every size), the pricing of its plans and, on
one executor, the split search (a fixed number of moves: about 0.05 s for 5 A5 queries, 2 s for
the 13-query set) and the choice among the release LP's columns (within a quarter and a tenth of
the budget), so
a call with the defaults ends within about 20 s. ``deterministic_time`` instead gives every CP-SAT solve
``max_deterministic_time`` with ``interleave_search`` and a fixed seed, and no wall-clock limit,
so a result is reproducible run to run (sweeps use this); ``time_limit`` is then not used.
``workers`` CP-SAT threads, 1 to 64 (:func:`staleness_lab.cpsat.check_workers`); every solve runs
through :func:`staleness_lab.cpsat.solve`, so Ctrl-C and SIGTERM stop it at once (no unproven
plan is returned: the signal goes on to the caller).

**Output.** Steps are exact Fractions (grid units × u, or the hint's own). ``plan.status`` is
``"ok"`` when a plan exists (``solver["status"]`` is ``"optimal"`` when every phase was proven
optimal and no K bound, for the true costs as above, else ``"feasible"``), ``"infeasible"``
(proven) or ``"unknown"`` (no plan: timeout, or infeasible under a cap). Off the grid (and with
the decomposition always) ``solver`` also has ``bound_unit`` (the bound grid's unit, seconds) and
``bound_exact`` (whether no duration was rounded on it), and the returned round's two records
hold the plan's true objectives and true bounds. ``plan.solver``::

    {"phases": [{"round", "phase": "misses"|"tardiness"|"cost", "status", "objective", "bound",
                 "gap", "seconds", "workers", "time_limit", "deterministic_time", "K": {query: K},
                 "time_unit", "on_grid"}, ...],
     "K": {query: K}, "K_bound": bool, "time_unit": float, "on_grid": bool,
     "status": "optimal"|"feasible"|..., "deadlines": "met"|"infeasible"|"unknown",
     "round": the round whose plan is returned, "rounds", "K_tried", "K_uncertified",
     "start": "split search"|"release LP columns"|"hint"|None, "start_columns", "release_lp",
     "release_lp_cost", ...}

With ``auto``, an unproven cost phase of the returned round takes the release-time LP's least
cost at its misses as its bound when that is higher (its record then has ``"bound_by": "release
LP"``; :func:`_tighten_cost_bound`).

A phase's ``objective``/``bound`` are misses (a count), tardiness (seconds) or total cost
(seconds); ``gap = (objective - bound) / max(1, |objective|)``. ``deadlines`` is ``"met"``
when the plan is on time, ``"infeasible"`` when phase 1 proved a miss unavoidable with ``K = N``
for every query on grid data, and ``"unknown"`` otherwise (e.g. E3 at f = 0.2 with a small K).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from staleness_lab.cpsat import check_workers, solve
from staleness_lab.errors import InputError
from staleness_lab.intermittent.arrivals import FixedRate
from staleness_lab.intermittent.costs import LinearCost, PiecewiseCost
from staleness_lab.intermittent.minbatch import find_min_batch
from staleness_lab.intermittent.model import Query, QuerySet
from staleness_lab.intermittent.numbers import show
from staleness_lab.intermittent.plan import (METHODS, OBJECTIVES, BatchPlan, Step, aggregate, at_model_costs, batch,
                                             chosen_method)
from staleness_lab.intermittent.single import MAX_TUPLES as EXACT_MAX_TUPLES
from staleness_lab.intermittent.single import exact
from staleness_lab.intermittent.size import MAX_MODEL_TERMS
from staleness_lab.optimize.decomposition import (
    Column, HeadLayers, OutOfTime, QueryGrid, columns, least_splits, relaxation,
)
from staleness_lab.optimize.one_query import alone
from staleness_lab.optimize.pool_master import pool_model
from staleness_lab.optimize.release_lp import ReleaseBound, plan_cost, release_bound
from staleness_lab.optimize.split_search import MAX_CUTS, Found, Tables, schedule, search
from staleness_lab.optimize.true_bounds import Incumbent, TrueKey, bound_unit, floor_bounds, true_key

SCHEME = "optimal"
#: CP-SAT's random seed (fixed: deterministic mode needs it, and wall-clock runs vary less).
SEED = 1
#: The largest query (tuples) the planner takes: it tabulates costs and arrivals per size.
MAX_TUPLES = 100_000
#: The largest planning horizon in grid units (CP-SAT's domains are 64-bit; sums of them must fit).
MAX_UNITS = 10**9
#: A new round of K doubling starts only with this share of the call's budget left.
MIN_ROUND_SHARE = 0.05
#: Rounds (K doublings + 1) in deterministic mode.
DET_ROUNDS = 4
#: Largest ``(K + 2)·N^2`` for the exact split DP of the K certificate (numpy; else a weaker bound).
DP_LIMIT = 10_000_000
#: Terms of one slot besides its tables: its variables and constraints (``_Model._query``).
SLOT_TERMS = 10
#: Batch counts per query the decomposition's first columns cover (then doubled for a query whose
#: wide column the master takes).
FIRST_COUNTS = 4
#: The share of the call's budget the decomposition's master leaves for realizing its columns (and
#: the slot model after it): the master of the 13-query set used all of it, so its columns, a third
#: cheaper than the heuristic's plan, were never realized.
REALIZE_SHARE = 0.25
#: The release-time LP's bounds (:func:`_release_bounds`) take at most this share of the budget.
RELEASE_LP_SHARE = 0.25
#: The choice among the release LP's columns (:func:`_column_plan`) takes at most this share.
POOL_SHARE = 0.1
#: Off the grid, the share of the slot model's budget kept for the true bounds (the relaxed master
#: on the bound grid, :mod:`~staleness_lab.optimize.true_bounds`).
TRUE_BOUND_SHARE = 0.25
#: The ``plan`` option that raises :data:`MAX_MODEL_TERMS`.
MODEL_TERMS_FLAG = "--max-model-terms"

_STATUS = {
    cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible", cp_model.INFEASIBLE: "infeasible",
    cp_model.UNKNOWN: "unknown", cp_model.MODEL_INVALID: "model_invalid",
}


# -- per-query constants on the grid -----------------------------------------------------------


@dataclass
class _Const:
    """One query on the grid: every number the model needs, in units of ``u``."""

    query: Query
    K: int
    dur: list[int]                         # dur[x] = ceil(Cost(x)/u), x = 0..N
    lin: tuple[int, int] | None            # (S/u, R/u) for a linear cost exact on the grid
    agg: list[int]                         # agg[n] = ceil(AggCost(n)/u), n = 0..K
    release: list[int]                     # release[c] = ceil(InputTime(c)/u), c = 0..N
    rate: tuple[int, int, int] | None      # (L, a, b): batch at s may hold c iff L·s >= a·c + b
    deadline: int                          # floor(D/u)
    sizes: tuple[int, ...] | None          # fixed batch sizes (fixed_sizes variant)
    cap: int | None                        # cost cap (cost_cap variant)
    unit: Fraction                         # the grid, u
    last: int | None = None                # exactly K batches, the last of this many tuples (a column)

    @property
    def n(self) -> int:
        return self.query.n

    def work(self, sizes: list[int]) -> int:
        return sum(self.dur[x] for x in sizes) + self.agg[len(sizes)]

    def max_work(self) -> int:
        if self.sizes is not None:
            return self.work(list(self.sizes))
        if self.lin is not None:
            batches = self.lin[0] * self.K + self.lin[1] * self.n
        else:
            batches = self.K * self.dur[self.n]
        return batches + max(self.agg)


def _ceil(value: Fraction, unit: Fraction) -> int:
    value = value if type(value) is Fraction else Fraction(value)
    return -((-value.numerator * unit.denominator) // (value.denominator * unit.numerator))


def _floor(value: Fraction, unit: Fraction) -> int:
    # integer arithmetic, no Fraction made: a Fraction costs more than the tables of N = 4,500 can afford
    value = value if type(value) is Fraction else Fraction(value)
    return (value.numerator * unit.denominator) // (value.denominator * unit.numerator)


def _ceil_affine(base: Fraction, step: Fraction, counts: range, unit: Fraction) -> list[int]:
    """``ceil((base + step·j)/u)`` for j in ``counts``, in integers (a FixedRate's arrival times,
    a linear AggCost)."""
    base, step = Fraction(base) / unit, Fraction(step) / unit
    den = math.lcm(base.denominator, step.denominator)
    b, s = base.numerator * (den // base.denominator), step.numerator * (den // step.denominator)
    return [-((-(b + s * j)) // den) for j in counts]


@functools.lru_cache(maxsize=64)
def _costs(cost: Any, n: int) -> tuple[Fraction, ...]:
    """``Cost(x)`` for x = 0..N, computed once per cost model (``_off_grid`` and ``_const`` both read it)."""
    if isinstance(cost, PiecewiseCost):
        return cost.values(n)
    return (Fraction(0),) + tuple(cost(x) for x in range(1, n + 1))


def _affine(base: Fraction, step: Fraction, counts: range, unit: Fraction, down: bool) -> list[int]:
    """``ceil`` (or with ``down``, ``floor``) of ``(base + step·j)/u`` for j in ``counts``."""
    if not down:
        return _ceil_affine(base, step, counts, unit)
    return [-v for v in _ceil_affine(-Fraction(base), -Fraction(step), counts, unit)]


def _const(qs: QuerySet, query: Query, K: int, sizes: tuple[int, ...] | None, cost_cap: bool,
           last: int | None = None, *, unit: Fraction | None = None, down: bool = False,
           objective: str = "misses") -> _Const:
    """``query`` on the grid of ``unit`` (the planner's by default), every duration and release
    rounded up; with ``down``, the bound grid's numbers (:mod:`~staleness_lab.optimize.true_bounds`):
    durations and releases rounded down, the deadline down for misses and up for tardiness."""
    unit = qs.time_unit if unit is None else unit
    n = query.n
    rounded = _floor if down else _ceil
    costs = _costs(query.cost, n)
    dur = [0] + [rounded(costs[x], unit) for x in range(1, n + 1)]
    lin = None
    if isinstance(query.cost, LinearCost):
        s, r = query.cost.S / unit, query.cost.R / unit
        if s.denominator == 1 and r.denominator == 1:
            lin = (int(s), int(r))
    agg_cost = query.agg_cost
    if agg_cost.values is None:
        agg = [0, 0] + _affine(agg_cost.a0, agg_cost.a1, range(2, K + 1), unit, down)
    else:
        agg = [0, 0] + [rounded(agg_cost(j), unit) for j in range(2, K + 1)]
    agg = agg[:K + 1]
    rate = None
    arrivals = query.arrivals
    if isinstance(arrivals, FixedRate):
        if not down:
            a = 1 / (arrivals.rate * unit)
            b = (arrivals.ws - 1 / arrivals.rate) / unit
            scale = math.lcm(a.denominator, b.denominator)
            rate = (scale, int(a * scale), int(b * scale))
        release = [0] + _affine(arrivals.ws - 1 / arrivals.rate, 1 / arrivals.rate, range(1, n + 1), unit, down)
    else:
        release = [0] + [rounded(arrivals.input_time(c), unit) for c in range(1, n + 1)]
    cap = _floor((1 + qs.delta_rsf) * query.min_cost, unit) if cost_cap else None
    deadline = _ceil(query.deadline, unit) if down and objective == "tardiness" else _floor(query.deadline, unit)
    return _Const(query=query, K=K, dur=dur, lin=lin, agg=agg, release=release, rate=rate,
                  deadline=deadline, sizes=sizes, cap=cap, unit=unit, last=last)


def _off_grid(qs: QuerySet) -> list[str]:
    """Why the data are not on the grid of ``qs.time_unit`` ([] when they are)."""
    unit = qs.time_unit
    out: list[str] = []

    def on(value: Fraction) -> bool:
        value = Fraction(value)
        return (value.numerator * unit.denominator) % (value.denominator * unit.numerator) == 0

    for query in qs.queries:
        arrivals = query.arrivals
        if isinstance(arrivals, FixedRate):
            if not (on(arrivals.ws) and (arrivals.n == 1 or on(1 / arrivals.rate))):
                out.append(f"{query.name}: arrival times")
        elif not all(on(t) for t in arrivals.times):
            out.append(f"{query.name}: arrival times")
        if not all(on(x) for x in _costs(query.cost, query.n)):
            out.append(f"{query.name}: Cost(x)")
        if not all(on(query.agg_cost(j)) for j in range(2, query.n + 1)):
            out.append(f"{query.name}: AggCost(n)")
        if not on(query.deadline):
            out.append(f"{query.name}: deadline")
    return out


# -- the model of one round -------------------------------------------------------------------


@dataclass
class _QVars:
    """The CP-SAT variables of one query."""

    used: list[Any] = field(default_factory=list)
    x: list[Any] = field(default_factory=list)
    cum: list[Any] = field(default_factory=list)
    s: list[Any] = field(default_factory=list)
    e: list[Any] = field(default_factory=list)
    d: list[Any] = field(default_factory=list)       # batch durations
    r: list[Any] = field(default_factory=list)       # release variables (step profiles only)
    last: list[Any] = field(default_factory=list)
    intervals: list[Any] = field(default_factory=list)
    n: Any = None
    g: Any = None
    f: Any = None
    comp: Any = None
    late: Any = None
    tard: Any = None
    cost: Any = None


@dataclass
class _Solution:
    """One query's values: batches (start, end, size) in grid units, aggregation (f, g)."""

    batches: list[tuple[int, int, int]]
    f: int
    g: int


@dataclass
class _Round:
    """What one round (one set of K) produced."""

    K: dict[str, int]
    phases: list[dict[str, Any]]
    status1: str
    value1: int | None = None
    status2: str | None = None
    solution: dict[str, _Solution] | None = None
    key: tuple[int, int, int, int] | None = None    # (phase-1 value, cost, batches, tardiness)
    number: int = 0

    @property
    def proven(self) -> bool:
        return self.status1 == "optimal" and self.status2 == "optimal"


class _Model:
    """The §7 model for one set of slot caps (module docstring)."""

    def __init__(self, qs: QuerySet, consts: list[_Const]) -> None:
        self.qs = qs
        self.consts = consts
        self.model = cp_model.CpModel()
        self.vars: list[Any] = []
        self.seed: dict[str, _Solution] | None = None
        last_release = max(c.release[c.n] for c in consts)
        latest = max(c.deadline for c in consts)
        self.horizon = max(last_release, latest + 1) + sum(c.max_work() for c in consts) + 1
        self.q: list[_QVars] = [self._query(c) for c in consts]
        intervals = [iv for v in self.q for iv in v.intervals]
        if qs.executors == 1:
            self.model.add_no_overlap(intervals)
        else:
            # more executors than intervals change nothing (and a huge m would not fit CP-SAT's 64 bits)
            self.model.add_cumulative(intervals, [1] * len(intervals), min(qs.executors, len(intervals)))
        self.misses = sum(v.late for v in self.q)
        self.tardiness = sum(v.tard for v in self.q)
        self.cost = sum(v.cost for v in self.q)
        self.batches = sum(v.n for v in self.q)
        self.max_tardiness = sum(max(0, self.horizon - c.deadline) for c in consts)

    def _int(self, lo: int, hi: int, name: str) -> Any:
        var = self.model.new_int_var(lo, hi, name)
        self.vars.append(var)
        return var

    def _bool(self, name: str) -> Any:
        var = self.model.new_bool_var(name)
        self.vars.append(var)
        return var

    def _query(self, c: _Const) -> _QVars:
        m, H, N, K, name = self.model, self.horizon, c.n, c.K, c.query.name
        v = _QVars()
        for i in range(K):
            used = self._bool(f"{name}.used{i}")
            x = self._int(0, N, f"{name}.x{i}")
            cum = self._int(0, N, f"{name}.c{i}")
            s = self._int(0, H, f"{name}.s{i}")
            e = self._int(0, H, f"{name}.e{i}")
            d = self._int(0, c.dur[N], f"{name}.d{i}")
            if c.lin is not None:  # an interval's size must be one variable: d = S'·used + R'·x
                m.add(d == c.lin[0] * used + c.lin[1] * x)
            else:
                m.add_element(x, c.dur, d)
            v.d.append(d)
            v.intervals.append(m.new_optional_interval_var(s, d, e, used, f"{name}.batch{i}"))
            if c.sizes is not None:
                m.add(used == 1)
                m.add(x == c.sizes[i])
            elif c.last is not None:
                m.add(used == 1)
                if i == K - 1:
                    m.add(x == c.last)
            m.add(x >= used)
            m.add(x <= N * used)
            m.add(cum == (v.cum[-1] + x if v.cum else x))
            m.add(s == 0).only_enforce_if(~used)
            m.add(e == 0).only_enforce_if(~used)
            if c.rate is not None:
                scale, a, b = c.rate
                m.add(scale * s >= a * cum + b).only_enforce_if(used)
            else:
                r = self._int(0, c.release[N], f"{name}.r{i}")
                m.add_element(cum, c.release, r)
                m.add(s >= r).only_enforce_if(used)
                v.r.append(r)
            if i == 0:
                m.add(used == 1)
            else:
                m.add(used <= v.used[-1])
                m.add(s >= v.e[-1]).only_enforce_if(used)
            v.used.append(used)
            v.x.append(x)
            v.cum.append(cum)
            v.s.append(s)
            v.e.append(e)
        m.add(v.cum[-1] == N)
        v.f = self._int(0, H, f"{name}.f")
        for i in range(K):
            last = self._bool(f"{name}.last{i}")
            m.add(last == (v.used[i] - v.used[i + 1] if i + 1 < K else v.used[i]))
            m.add(v.f == v.e[i]).only_enforce_if(last)
            m.add(v.s[i] >= c.release[N]).only_enforce_if(last)  # redundant: the last batch holds tuple N
            v.last.append(last)
        v.n = self._int(1, K, f"{name}.n")
        m.add(v.n == sum(v.used))
        if K >= 2:
            v.g = self._int(0, max(c.agg), f"{name}.g")
            m.add_element(v.n, c.agg, v.g)
        else:
            v.g = self._int(0, 0, f"{name}.g")
        v.comp = self._int(0, H, f"{name}.completion")
        m.add(v.comp == v.f + v.g)
        if K >= 2:
            v.intervals.append(m.new_optional_interval_var(v.f, v.g, v.comp, v.used[1], f"{name}.aggregate"))
        v.late = self._bool(f"{name}.late")
        v.tard = self._int(0, H, f"{name}.tardiness")
        m.add(v.comp <= c.deadline).only_enforce_if(~v.late)
        m.add(v.comp >= c.deadline + 1).only_enforce_if(v.late)
        m.add(v.tard >= v.comp - c.deadline)
        if c.lin is not None:
            v.cost = c.lin[0] * v.n + c.lin[1] * N + v.g
        else:
            v.cost = sum(v.d) + v.g
        if c.cap is not None:
            m.add(v.cost <= c.cap)
        return v

    # -- hints -------------------------------------------------------------------------------

    def hint_plan(self, plan: BatchPlan | None) -> None:
        """Hint a complete assignment from ``plan``: its sizes and grid starts, every derived
        variable as the model computes it. Queries with more batches than slots stay unhinted;
        ``self.seed`` keeps the plan's values when every query is hinted."""
        self.seed = None
        if plan is None or plan.status != "ok" or not plan.steps:
            return
        starts = snapped_starts(self.qs, self.consts, plan)
        seed: dict[str, _Solution] = {}
        for c, v in zip(self.consts, self.q):
            mine = sorted((s for s in plan.steps_of(c.query.name) if s.kind == "batch"), key=lambda s: s.first)
            sizes = [s.size for s in mine]
            if not mine or len(mine) > c.K or sum(sizes) != c.n:
                continue
            if c.sizes is not None and tuple(sizes) != c.sizes:
                continue
            values, solution = self._assignment(c, v, sizes, starts[c.query.name])
            for var, value in values:
                self.model.add_hint(var, value)
            seed[c.query.name] = solution
        if len(seed) == len(self.consts):
            self.seed = seed

    def _assignment(self, c: _Const, v: _QVars, sizes: list[int],
                    starts: list[int]) -> tuple[list[tuple[Any, int]], _Solution]:
        """Every variable of one query for batches of ``sizes`` starting at ``starts`` (grid)."""
        n = len(sizes)
        out: list[tuple[Any, int]] = []
        total, ends = 0, []
        for i in range(c.K):
            used = i < n
            x = sizes[i] if used else 0
            total += x
            s = starts[i] if used else 0
            e = s + c.dur[x] if used else 0
            ends.append(e)
            out += [(v.used[i], int(used)), (v.x[i], x), (v.cum[i], total), (v.s[i], s), (v.e[i], e),
                    (v.d[i], c.dur[x]), (v.last[i], int(i == n - 1))]
            if v.r:
                out.append((v.r[i], c.release[total]))
        f, g = ends[n - 1], c.agg[n]
        comp = f + g
        out += [(v.n, n), (v.g, g), (v.f, f), (v.comp, comp), (v.late, int(comp > c.deadline)),
                (v.tard, max(0, comp - c.deadline))]
        return out, _Solution(batches=[(starts[i], ends[i], sizes[i]) for i in range(n)], f=f, g=g)

    def hint_seed(self) -> None:
        """Hint the seed plan again (phase 2, when it beats phase 1's solution)."""
        self.model.clear_hints()
        for c, v in zip(self.consts, self.q):
            sol = self.seed[c.query.name]
            values, _ = self._assignment(c, v, [x for _, _, x in sol.batches], [s for s, _, _ in sol.batches])
            for var, value in values:
                self.model.add_hint(var, value)

    def hint_solution(self, solver: cp_model.CpSolver) -> None:
        self.model.clear_hints()
        for var in self.vars:
            self.model.add_hint(var, solver.value(var))

    def read(self, solver: cp_model.CpSolver) -> dict[str, _Solution]:
        out = {}
        for c, v in zip(self.consts, self.q):
            n = solver.value(v.n)
            batches = [(solver.value(v.s[i]), solver.value(v.e[i]), solver.value(v.x[i])) for i in range(n)]
            out[c.query.name] = _Solution(batches=batches, f=solver.value(v.f), g=solver.value(v.g))
        return out


def snapped_starts(qs: QuerySet, consts: list[_Const], plan: BatchPlan) -> dict[str, list[int]]:
    """Grid starts of ``plan``'s batches per query (in tuple order) that keep it feasible on
    the grid: each step, in the plan's order, starts at its own start rounded up, or later
    when the rounded-up durations before it on its executor or in its query still run; a
    final aggregation follows its last batch at once, as the model requires. Rounding starts
    alone would let a rounded-up batch overlap the next one (plans off the grid, such as
    Algorithm 1's, would then hint nothing feasible)."""
    unit = qs.time_unit
    by_name = {c.query.name: c for c in consts}
    executor_free: dict[int, int] = {}
    query_free: dict[str, int] = {}
    starts: dict[str, list[int]] = {name: [] for name in by_name}
    batches: dict[str, int] = {name: 0 for name in by_name}
    for step in plan.steps:  # ordered by start
        c = by_name[step.query]
        ready = query_free.get(step.query, 0)
        if step.kind == "batch":
            if step.size > c.n:
                continue
            begin = max(_ceil(step.start, unit), executor_free.get(step.executor, 0), ready)
            end = begin + c.dur[step.size]
            starts[step.query].append(begin)
            batches[step.query] += 1
        else:
            end = ready + c.agg[min(batches[step.query], len(c.agg) - 1)]
        executor_free[step.executor] = max(executor_free.get(step.executor, 0), end)
        query_free[step.query] = end
    return starts



# -- solving ------------------------------------------------------------------------------------


@dataclass
class _Budget:
    time_limit: float
    workers: int
    deterministic: float | None
    started: float = field(default_factory=time.perf_counter)

    @property
    def total(self) -> float:
        """The whole call's wall-clock budget: two phases' worth."""
        return 2 * self.time_limit

    def left(self) -> float:
        return self.total - (time.perf_counter() - self.started)

    def room(self) -> bool:
        """Whether a further stage may start: more than ``MIN_ROUND_SHARE`` of the budget left on
        the wall clock; always in deterministic mode, whose stages are counted instead, so that
        what runs does not depend on the machine's load."""
        return self.deterministic is not None or self.left() > MIN_ROUND_SHARE * self.total

    def solve(self, model: cp_model.CpModel, reserve: float = 0.0) -> tuple[cp_model.CpSolver, int, dict[str, Any]]:
        """One CP-SAT solve within the phase's limit and the call's budget, ``reserve`` seconds of
        it kept for what follows (wall clock only)."""
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.num_workers = self.workers
        params.random_seed = SEED
        limit = None
        if self.deterministic is not None:
            params.max_deterministic_time = self.deterministic
            params.interleave_search = True
        else:
            limit = max(0.01, min(self.time_limit, self.left() - reserve))
            params.max_time_in_seconds = limit
        began = time.perf_counter()
        status = solve(solver, model)
        info = {"seconds": round(time.perf_counter() - began, 4), "workers": self.workers,
                "time_limit": None if limit is None else round(limit, 4),
                "deterministic_time": self.deterministic}
        return solver, status, info


def _phase(name: str, round_no: int, status: int, solver: cp_model.CpSolver, info: dict[str, Any],
           scale: Fraction, divide: int = 1) -> dict[str, Any]:
    """A phase's report; objective and bound in the phase's units (``divide`` undoes weights)."""
    record: dict[str, Any] = {"round": round_no, "phase": name, "status": _STATUS.get(status, str(status)),
                              "objective": None, "bound": None, "gap": None}
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        obj = int(round(solver.objective_value)) // divide
        bound_raw = solver.best_objective_bound
        bound = math.ceil(bound_raw - 1e-6) // divide if math.isfinite(bound_raw) else 0
        obj_v, bound_v = float(obj * scale), float(bound * scale)
        record.update(objective=obj_v, bound=bound_v, gap=(obj_v - bound_v) / max(1.0, abs(obj_v)))
    record.update(info)
    return record


def _solve_round(qs: QuerySet, consts: list[_Const], objective: str, seed: BatchPlan | None,
                 budget: _Budget, round_no: int, *, fixed_cost: bool = False, bar: int | None = None,
                 fewest: int = 0) -> _Round:
    """Phase 1, then phase 2 of the slot model over ``consts``. With ``fixed_cost`` (every size
    fixed, or linear costs with the batch counts fixed: cost and batches are then fixed, and phase
    2 only orders late queries by tardiness) phase 2 runs only when phase 1 left a miss and no
    more than ``bar`` misses (a plan with more cannot beat the caller's). ``fewest``: misses no
    plan goes below (:func:`_misses_floor`), a constraint of phase 1, which is then proven as soon
    as it finds a plan with that many."""
    built = _Model(qs, consts)
    model = built.model
    unit = qs.time_unit
    K = {c.query.name: c.K for c in consts}
    built.hint_plan(seed)
    first = built.misses if objective == "misses" else built.tardiness
    if fewest and objective == "misses":
        model.add(first >= fewest)
    model.minimize(first)
    solver, status, info = budget.solve(model)
    phases = [_phase(objective, round_no, status, solver, info, Fraction(1) if objective == "misses" else unit)]
    result = _Round(K=K, phases=phases, status1=_STATUS.get(status, str(status)))
    if status == cp_model.MODEL_INVALID:
        raise RuntimeError(f"CP-SAT rejected the model: {model.validate()}")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        if built.seed is not None and all(c.cap is None for c in consts):
            # the snapped hint satisfies every constraint but the cost cap: an incumbent, unproven
            result.solution = built.seed
            result.key = _key(consts, built.seed, objective)
            result.value1 = result.key[0]
        return result
    value = int(round(solver.objective_value))
    result.value1 = value
    fallback = built.read(solver)
    if fixed_cost and (objective != "misses" or value == 0 or (bar is not None and value > bar)):
        result.solution, result.key = fallback, _key(consts, fallback, objective)
        return result
    # phase 2: fix (or bound) phase 1, then cost, batches, tardiness by weights
    if status == cp_model.OPTIMAL:
        model.add(first == value)
    else:
        model.add(first <= value)
    w_tard = 1 if (objective == "misses" and value > 0) else 0
    w_batches = w_tard * built.max_tardiness + 1
    w_cost = w_batches * sum(c.K for c in consts) + w_tard * built.max_tardiness + 1
    second = w_cost * built.cost + w_batches * built.batches + (w_tard * built.tardiness if w_tard else 0)
    # seed phase 2 with phase 1's solution, or with the hint plan when it is admissible and better
    mine = _key(consts, fallback, objective)
    seed_key = None if built.seed is None else _key(consts, built.seed, objective)
    if (seed_key is not None and seed_key[1:] < mine[1:]
            and (seed_key[0] == value if status == cp_model.OPTIMAL else seed_key[0] <= value)):
        built.hint_seed()
    else:
        built.hint_solution(solver)
    model.minimize(second)
    solver2, status2, info2 = budget.solve(model)
    phases.append(_phase("cost", round_no, status2, solver2, info2, unit, divide=w_cost))
    result.status2 = _STATUS.get(status2, str(status2))
    result.solution = fallback
    if status2 in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        second_solution = built.read(solver2)
        if _key(consts, second_solution, objective) <= mine or status2 == cp_model.OPTIMAL:
            result.solution = second_solution
    result.key = _key(consts, result.solution, objective)
    return result


def _key(consts: list[_Const], solution: dict[str, _Solution], objective: str) -> tuple[int, int, int, int]:
    """``(phase-1 value, cost, batches, tardiness)`` of a solution, grid units (smaller is better)."""
    misses = cost = batches = tard = 0
    for c in consts:
        sol = solution[c.query.name]
        cost += sum(e - s for s, e, _ in sol.batches) + sol.g
        batches += len(sol.batches)
        late = sol.f + sol.g - c.deadline
        misses += late > 0
        tard += max(0, late)
    return (misses if objective == "misses" else tard, cost, batches, tard)


# -- the K certificate ------------------------------------------------------------------------


def _split_costs(dur: list[int], n: int, parts: int) -> tuple[int, int]:
    """``(least, least_more)``: the least Σ dur over splits of the N tuples into any number of
    batches (:func:`~staleness_lab.optimize.decomposition.least_splits`), and into more than
    ``parts`` batches (a min-plus DP in numpy: ``parts`` batches on a prefix, then one or more on
    the rest)."""
    inf = np.iinfo(np.int64).max // 4
    d = np.array(dur, dtype=np.int64)
    idx = np.arange(n + 1)
    least = least_splits(dur)                        # >= 1 batch; least[0] = 0 for the recursion
    diff = idx[:, None] - idx[None, :]               # c - p
    step = np.where(diff >= 1, d[np.clip(diff, 0, n)], inf)
    exact = np.full(n + 1, inf, dtype=np.int64)      # exactly j batches, j = 0..parts
    exact[0] = 0
    for _ in range(parts):
        exact = np.min(np.minimum(exact[None, :] + step, inf), axis=1)
    rest = least[n - idx[:n]]                        # >= 1 batch on tuples p+1..N, p = 0..N-1
    more = np.min(np.minimum(exact[:n] + rest, inf))
    return int(least[n]), int(more)


def _bounds(c: _Const, K: int) -> tuple[int, int]:
    """``(cheapest split of q, cheapest split of q into more than K batches)``, grid units, time
    ignored (AggCost is non-decreasing from n = 2 on, so more than K batches cost >= AggCost(K+1))."""
    n = c.n
    agg_more = _ceil(c.query.agg_cost(K + 1), c.unit)
    if c.lin is not None:
        s_, r_ = c.lin
        return s_ + r_ * n, s_ * (K + 1) + r_ * n + agg_more
    if (K + 2) * n * n <= DP_LIMIT:
        least, more = _split_costs(c.dur, n, K)
        return least, more + agg_more
    low = min(c.dur[1:])
    return low, (K + 1) * low + agg_more


def _uncertified(consts: list[_Const], result: _Round, fewest: int = 0) -> list[str]:
    """Queries whose slot cap may have bound ``result`` (module docstring, "Slot cap K").
    ``fewest``: misses no plan goes below (:func:`_misses_floor`); a result with no more misses
    than that (or none) is certified by its cost alone, since no plan has fewer misses."""
    open_ = [c for c in consts if c.sizes is None and c.K < c.n]
    if not open_:
        return []
    if result.solution is None or result.key[0] > fewest:
        return [c.query.name for c in open_]
    _, best_cost, best_batches, _ = result.key
    cheapest = {c.query.name: _bounds(c, c.K)[0] if c.sizes is None else c.work(list(c.sizes)) for c in consts}
    out = []
    for c in open_:
        others = sum(v for k, v in cheapest.items() if k != c.query.name)
        more = _bounds(c, c.K)[1] + others
        fewest = c.K + 1 + (len(consts) - 1)
        if more > best_cost or (more == best_cost and fewest >= best_batches):
            continue
        out.append(c.query.name)
    return out


# -- the plan -----------------------------------------------------------------------------------


def _assign(items: list[tuple[int, int]], m: int) -> list[int]:
    """Executors for intervals (start, end) whose overlap never exceeds m: by start, the lowest
    executor free at the start."""
    out = [0] * len(items)
    if m == 1:
        return out
    free: list[int | None] = [None] * m
    for k in sorted(range(len(items)), key=lambda k: (items[k][0], items[k][1], k)):
        s, e = items[k]
        choice = next((j for j in range(m) if free[j] is None or free[j] <= s), None)
        if choice is None:  # impossible under the cumulative constraint; keep the plan checkable
            choice = min(range(m), key=lambda j: free[j])
        out[k] = choice
        free[choice] = e if free[choice] is None else max(e, free[choice])
    return out


def _steps(qs: QuerySet, solution: dict[str, _Solution], unit: Fraction | None = None) -> tuple[Step, ...]:
    """The plan's steps from a solution in units of ``unit`` (the planner's grid by default)."""
    unit = qs.time_unit if unit is None else unit
    raw: list[tuple[str, int, int, int, int, int]] = []   # query, start, end, first, last, merged(-1 batch)
    for query in qs.queries:
        sol = solution[query.name]
        done = 0
        for s, e, x in sol.batches:
            raw.append((query.name, s, e, done + 1, done + x, -1))
            done += x
        if len(sol.batches) >= 2:
            raw.append((query.name, sol.f, sol.f + sol.g, 0, 0, len(sol.batches)))
    executors = _assign([(r[1], r[2]) for r in raw], min(qs.executors, max(1, len(raw))))  # the lowest free first: never more
    steps = []
    for (name, s, e, first, last, merged), ex in zip(raw, executors):
        start, end = s * unit, e * unit
        if merged < 0:
            steps.append(batch(name, ex, start, end, first, last))
        else:
            steps.append(aggregate(name, ex, start, end, merged))
    return tuple(steps)


def _initial_k(qs: QuerySet, query: Query, hint: BatchPlan | None, limit: int) -> int:
    if hint is not None and hint.status == "ok":
        count = sum(1 for s in hint.steps_of(query.name) if s.kind == "batch")
        if count:
            return min(limit, count + 3)
    size = find_min_batch(query, qs.delta_rsf, qs.c_max).size
    return max(1, min(limit, -(-query.n // size)))


def _fixed(qs: QuerySet, fixed_sizes: Mapping[str, int] | None) -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    for name, x in (fixed_sizes or {}).items():
        if name not in qs.names:
            raise InputError(f"fixed_sizes.{name}", f"unknown query {name!r}")
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise InputError(f"fixed_sizes.{name}", f"must be an integer >= 1, got {x!r}")
        n = qs.query(name).n
        count = -(-n // x)
        out[name] = tuple([x] * (count - 1) + [n - (count - 1) * x])
    return out


def model_terms(consts: list[_Const]) -> int:
    """The size of one round's model, counted before it is built: per query, ``K`` slots of
    :data:`SLOT_TERMS` plus the tables each slot reads with ``AddElement`` -- ``N + 1`` entries
    of ``Cost(x)`` unless the cost is linear on the grid, ``N + 1`` release times unless the
    arrivals come at a fixed rate -- and the ``K + 1`` entries of ``AggCost(n)``. CP-SAT expands
    each table entry into literals when it solves: measured on the 13-query TPC-H set (2 workers,
    tables on both cost curves), about 1.35 KB per term on top of 0.25 GB, so 1.17 million terms
    (K = 20 for every query) took 1.8 GB and 2.35 million (K = 40) 3.4 GB. The executors add one
    constraint over every interval, whatever their number."""
    total = 0
    for c in consts:
        tables = (0 if c.lin is not None else c.n + 1) + (0 if c.rate is not None else c.n + 1)
        total += c.K * (SLOT_TERMS + tables) + c.K + 1
    return total


def check_model_terms(consts: list[_Const], max_terms: int) -> None:
    """Refuse a first round whose model (:func:`model_terms`) passes ``max_terms``: the estimate,
    the limit and the option that raises it, in one line, before anything is built."""
    terms = model_terms(consts)
    if terms > max_terms:
        largest = max(range(len(consts)), key=lambda k: model_terms([consts[k]]))
        c = consts[largest]
        raise InputError("queries", f"the CP-SAT model would hold about {terms:,} terms ({len(consts)} queries, "
                                    f"{sum(x.K for x in consts):,} batch slots; the largest, {c.query.name!r}, "
                                    f"{c.K} slots over N = {c.n}), above the limit of {max_terms:,} (about "
                                    f"{_model_gib(terms)} to solve; raise it with {MODEL_TERMS_FLAG}, or plan "
                                    "fewer queries)")


def _model_gib(terms: int) -> str:
    return f"{(0.25 * 2**30 + 1400 * terms) / 2**30:.1f} GiB"


def check_max_terms(value: Any) -> int:
    """``value`` if it is a valid ``max_terms`` (an integer >= 1), else an :class:`InputError`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(MODEL_TERMS_FLAG, f"must be an integer >= 1, got {value!r}")
    return value


def check_model_size(qs: QuerySet) -> None:
    """Refuse a model CP-SAT cannot hold: more than :data:`MAX_TUPLES` tuples in a query (its
    per-size tables), or a horizon past :data:`MAX_UNITS` grid units (a ``time_unit`` too fine).
    :func:`~staleness_lab.intermittent.schemes.make_plan` checks it before building the hint."""
    for k, query in enumerate(qs.queries):
        if query.n > MAX_TUPLES:
            raise InputError(f"queries[{k}].arrivals.N",
                             f"the CP-SAT planner takes at most {MAX_TUPLES} tuples per query, got {query.n}")
    span = max(max(q.we, q.deadline) for q in qs.queries) + sum((q.total_cost([q.n]) for q in qs.queries), Fraction(0))
    if span / qs.time_unit > MAX_UNITS:
        raise InputError("time_unit", f"{show(qs.time_unit)} s makes the planning horizon {float(span / qs.time_unit):.3g} "
                                      f"grid units, more than CP-SAT's limit here of {MAX_UNITS:.0e}: choose a coarser unit")


def optimal_plan(qs: QuerySet, *, objective: str = "misses", time_limit: float = 10.0, workers: int = 2,
                 hint: BatchPlan | None = None, deterministic_time: float | None = None,
                 fixed_sizes: Mapping[str, int] | None = None, cost_cap: bool = False,
                 max_slots: int | None = None, max_terms: int | None = MAX_MODEL_TERMS,
                 method: str = "auto", split_search: bool = True) -> BatchPlan:
    """The CP-SAT plan of ``qs`` on its time grid (module docstring): phase 1 minimises misses
    (or tardiness), phase 2 the total cost, then batches, then tardiness. Scheme ``"optimal"``.

    What is proven: each returned phase's ``bound`` is a lower bound on that phase's value of the
    true optimum (at the cost model's durations, whatever the grid: for the cost, among plans with
    the optimum's phase-1 value), its ``objective`` the returned plan's value at those durations;
    ``solver["status"] == "optimal"`` means that plan is the true optimum (module docstring, "What
    is proven"). Off the grid the plan itself lies on the grid with rounded-up durations, unless
    the hint or an exact DP (queries on executors of their own) gave a better one.

    ``max_terms`` bounds every round's model (:func:`model_terms`): a first round above it is
    refused (:class:`InputError` naming ``--max-model-terms``) before anything is built, and K
    grows in later rounds only as far as the model stays within it (the cap is then reported
    as possibly binding). ``None`` sets no limit: the papers' experiments, whose sizes their
    profiles fix, plan as they did before the rule (the rule guards input a user hands ``plan``).

    ``method``: ``"auto"`` (the default: :func:`~staleness_lab.intermittent.plan.chosen_method`
    picks one of the other two; the slot model then starts from the misses the release-time LP
    proves, :func:`_misses_floor`), ``"monolithic"`` (the slot model above, the reference) or ``"decomposition"`` (per-query columns
    and a relaxed master, :mod:`~staleness_lab.optimize.decomposition`, then a repair towards its
    columns, falling back to the slot model with the time left when they cannot close the gap;
    queries on executors of their own are planned exactly by DP,
    :mod:`~staleness_lab.optimize.one_query` or, off the grid,
    :func:`~staleness_lab.intermittent.single.exact`, without CP-SAT). The decomposition takes no
    ``fixed_sizes``, ``cost_cap`` or ``max_slots``: with one of them the slot model plans, and
    ``solver["method"]`` says so.

    ``split_search`` (the default): on one executor, the search of
    :mod:`~staleness_lab.optimize.split_search` plans first (fixed iterations, about 0.05-2 s
    outside CP-SAT's limits) and every method starts from the better of its plan and ``hint``;
    False plans from ``hint`` alone (to see what the split search adds). For the fewest misses
    the start is then improved by the choice among the release LP's columns (:func:`_column_plan`).
    ``solver["start"]`` says which it started from: ``"split search"``, ``"release LP columns"``,
    ``"hint"`` or None."""
    began = time.perf_counter()   # the budget counts the whole call, its tables included
    if method not in METHODS:
        raise InputError("method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    if objective not in OBJECTIVES:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    check_workers(workers, "workers")
    if not time_limit > 0:
        raise InputError("time_limit", f"must be > 0, got {time_limit!r}")
    if deterministic_time is not None and not deterministic_time > 0:
        raise InputError("deterministic_time", f"must be > 0, got {deterministic_time!r}")
    if max_slots is not None and (isinstance(max_slots, bool) or not isinstance(max_slots, int) or max_slots < 1):
        raise InputError("max_slots", f"must be an integer >= 1, got {max_slots!r}")
    check_model_size(qs)
    if max_terms is not None:
        max_terms = check_max_terms(max_terms)
    fixed = _fixed(qs, fixed_sizes)
    off_grid = _off_grid(qs)
    budget = _Budget(time_limit=float(time_limit), workers=workers,
                     deterministic=None if deterministic_time is None else float(deterministic_time), started=began)
    start = None if hint is None else "hint"
    from_columns = None
    grids = _BoundGrids(qs)
    if split_search and qs.executors == 1 and len(qs.queries) >= 2 and not (fixed or cost_cap or max_slots):
        tables = split_tables(qs)
        better = split_plan(qs, hint, objective, tables)
        start, hint = ("hint" if better is hint else "split search"), better
        if objective == "misses":
            better, from_columns = _column_plan(qs, hint, budget, grids, off_grid, tables)
            start, hint = (start if better is hint else "release LP columns"), better
    used = chosen_method(method, qs)
    if used == "decomposition" and not (fixed or cost_cap or max_slots):
        plan = _decomposed(qs, objective, budget, hint, off_grid, max_terms, grids)
        if method == "auto":  # the decomposition's own note kept (it may say the slot model closed it)
            plan.solver["method"] += " (auto: every query has an executor of its own)"
        plan.solver["start"] = start
        if from_columns is not None:
            plan.solver["start_columns"] = from_columns
        return plan
    # off the grid, a share of the budget is kept for the true bounds
    rounds = budget if not off_grid else _Budget(time_limit=budget.time_limit * (1 - TRUE_BOUND_SHARE),
                                                 workers=workers, deterministic=budget.deterministic,
                                                 started=budget.started)
    plan = _monolithic(qs, objective, rounds, hint, off_grid, fixed, cost_cap, max_slots, max_terms, grids,
                       release_floor=method == "auto")
    note = ("monolithic (the decomposition takes no fixed_sizes, cost_cap or max_slots)" if used == "decomposition"
            else "monolithic (auto: queries share an executor)" if method == "auto" else "monolithic")
    plan.solver["method"] = note
    if off_grid:
        plan = _true_result(qs, objective, budget, plan, hint, off_grid, bool(fixed or cost_cap), grids)
    plan.solver["start"] = start
    if from_columns is not None:
        plan.solver["start_columns"] = from_columns
    return plan


def split_tables(qs: QuerySet) -> Tables:
    """The split search's :class:`~staleness_lab.optimize.split_search.Tables` of ``qs``: every
    query on the planner's grid (durations and releases rounded up), padded to the longest."""
    consts = [_const(qs, q, MAX_CUTS + 1, None, False) for q in qs.queries]
    width = max(c.n for c in consts) + 1
    dur, release = np.zeros((len(consts), width), np.int64), np.zeros((len(consts), width), np.int64)
    for k, c in enumerate(consts):
        dur[k, :c.n + 1], release[k, :c.n + 1] = c.dur, c.release
    return Tables(dur=dur, agg=np.array([c.agg for c in consts], np.int64), release=release,
                  deadline=np.array([c.deadline for c in consts], np.int64), n=np.array([c.n for c in consts], np.int64))


def realize(qs: QuerySet, tables: Tables, found: Found) -> BatchPlan:
    """The plan of ``found`` (each query's non-final boundaries, kept or late) in the split form's
    list schedule (:func:`~staleness_lab.optimize.split_search.schedule`) on ``tables``, the
    planner's grid of ``qs`` (:func:`split_tables`)."""
    return _plan_of(qs, {q.name: _Solution(batches=batches, f=f, g=g)
                         for q, (batches, f, g) in zip(qs.queries, schedule(tables, found))})


def split_plan(qs: QuerySet, hint: BatchPlan | None = None, objective: str = "misses",
               tables: Tables | None = None) -> BatchPlan:
    """The better (misses or total tardiness, then cost) of ``hint`` and the split-form search's
    plan (:mod:`~staleness_lab.optimize.split_search`) on the planner's grid (``tables``, built
    when not given: :func:`split_tables`), for queries sharing one executor: :func:`optimal_plan`
    starts from it, and a plan on time proves phase 1 at once."""
    tables = split_tables(qs) if tables is None else tables
    found = realize(qs, tables, search(tables, give_up=objective == "misses"))

    def key(plan: BatchPlan) -> tuple[Fraction, Fraction]:
        return (Fraction(plan.misses) if objective == "misses" else plan.total_tardiness), plan.total_cost

    return found if hint is None or hint.status != "ok" or key(found) < key(hint) else hint


def _column_plan(qs: QuerySet, start: BatchPlan, budget: _Budget, grids: _BoundGrids,
                 off_grid: list[str], tables: Tables) -> tuple[BatchPlan, dict[str, Any]]:
    """The better (misses, then cost) of ``start`` and the plan chosen among the release LP's
    columns (:mod:`~staleness_lab.optimize.pool_master`): the LP's least cost at ``start``'s misses
    on the bound grid of ``off_grid`` (the decomposition's, which then serves it again),
    seeded with its batch sizes, within :data:`RELEASE_LP_SHARE` of the budget, then one column per
    query (or up to that many queries late) by CP-SAT within :data:`POOL_SHARE` of it (of the
    deterministic time, in deterministic mode), realized on ``tables``; and what they
    did (the LP's record, and under ``"choice"`` its status, seconds, and the plan's misses and cost)."""
    sizes = [None if q.name in start.late else _sizes(start, q.name) for q in qs.queries]
    found, _ = _least_cost_lp(grids.get("misses", off_grid), qs.executors, start.misses,
                              [[] if s is None else [s] for s in sizes], _lp_stop(budget, RELEASE_LP_SHARE * budget.total))
    model, read = pool_model(tables, found.plans, sizes, start.misses)
    pick = _Budget(time_limit=max(0.01, min(budget.time_limit, POOL_SHARE * budget.total, budget.left())),
                   workers=budget.workers, deterministic=None if budget.deterministic is None
                   else POOL_SHARE * budget.deterministic)
    solver, status, info = pick.solve(model)
    choice: dict[str, Any] = {"status": _STATUS.get(status, str(status)), "seconds": info["seconds"]}
    record = {**_lp_record("cost", found), "choice": choice}
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return start, record
    plan = realize(qs, tables, read(solver))
    choice.update(misses=plan.misses, cost=float(plan.total_cost))
    return (plan if (plan.misses, plan.total_cost) < (start.misses, start.total_cost) else start), record


def _misses_floor(qs: QuerySet, objective: str, seed: BatchPlan | None, off_grid: list[str],
                  budget: _Budget, grids: _BoundGrids) -> tuple[int, dict[str, Any] | None]:
    """The fewest misses any plan can have, as the release-time LP
    (:mod:`~staleness_lab.optimize.release_lp`) proves it, for the slot model to start from: 0
    (nothing proven) unless the objective is misses, the data lie on the grid (which is then the
    bound grid too), queries share executors and the hint misses a deadline; and the LP's record
    (None when it did not run). Within :data:`RELEASE_LP_SHARE` of the budget.
    The slot model alone proves no miss on A5 sets of 4 queries at ρ = 0.2: its bound stays at 0
    for the whole limit, while the LP proves the hint's one miss in about a second; the cost phase
    at that miss is then certified by the cost argument that certifies a plan on time
    (:func:`_uncertified`)."""
    if (objective != "misses" or off_grid or seed is None or seed.misses == 0
            or len(qs.queries) <= qs.executors):
        return 0, None
    bounds = grids.get(objective, [])
    found = release_bound(bounds.grids, qs.executors, phase="misses", misses=bounds.value1, floors=bounds.floors,
                          seeds=[[_sizes(seed, q.name)] for q in qs.queries], target=seed.misses,
                          stop=_lp_stop(budget, RELEASE_LP_SHARE * budget.total))
    fewest = max(bounds.value1, found.bound)
    return fewest, {**_lp_record("misses", found), "bound": fewest}


def _tighten_cost_bound(qs: QuerySet, best: _Round, phases: list[dict[str, Any]], budget: _Budget,
                        grids: _BoundGrids) -> dict[str, Any]:
    """Raise the bound of ``best``'s unproven cost phase to the release-time LP's least cost among
    plans with at most ``best.value1`` misses (:mod:`~staleness_lab.optimize.release_lp`), when
    higher: the true optimum misses no more, so it costs at least that, whatever the slot caps
    (on A5 sets of 8 queries at ρ = 0.2 the slot model's bound stays 11-15 % under its plan, the
    LP's 3-5 %). Within :data:`RELEASE_LP_SHARE` of the budget and what is left of it (the LP
    keeps the bound of its last round when stopped; one converged at these misses before, for the
    start's choice of columns, is not solved again); the LP's record is returned."""
    seeds = [[tuple(x for _, _, x in best.solution[q.name].batches)] for q in qs.queries]
    found, again = _least_cost_lp(grids.get("misses", []), qs.executors, int(best.value1), seeds,
                                  _lp_stop(budget, min(RELEASE_LP_SHARE * budget.total, budget.left())))
    for phase in phases:
        if phase["round"] == best.number and phase["phase"] == "cost" and phase["objective"] is not None:
            lp = min(float(found.bound * qs.time_unit), phase["objective"])
            if lp > phase["bound"]:
                phase.update(bound=lp, gap=(phase["objective"] - lp) / max(1.0, abs(phase["objective"])),
                             bound_by="release LP")
    return _lp_record("cost", found, again)


def _lp_stop(budget: _Budget, room: float) -> Callable[[], bool]:
    """The release LP's ``stop``: once ``room`` seconds have passed from now (never, in
    deterministic mode)."""
    began = time.perf_counter()
    return lambda: budget.deterministic is None and time.perf_counter() - began >= room


def _lp_record(phase: str, found: ReleaseBound, again: bool = False) -> dict[str, Any]:
    """What the planner's report keeps of a release LP's answer; ``again``: an answer of this call
    served again (:func:`_least_cost_lp`), which took no time here."""
    record = {"phase": phase, "bound": found.bound, "lp": round(found.lp, 6), "rounds": found.rounds,
              "columns": found.columns, "converged": found.converged, "seconds": 0.0 if again else found.seconds}
    return {**record, "served_again": True} if again else record


def _monolithic(qs: QuerySet, objective: str, budget: _Budget, hint: BatchPlan | None, off_grid: list[str],
                fixed: dict[str, tuple[int, ...]], cost_cap: bool, max_slots: int | None,
                max_terms: int | None, grids: _BoundGrids, *, release_floor: bool = False) -> BatchPlan:
    """The slot model's rounds of K doubling (module docstring); with ``release_floor`` (the
    ``auto`` method) starting from the misses the release-time LP proves
    (:func:`_misses_floor`). Without it this is the reference the other methods are checked
    against."""
    limit = {q.name: len(fixed[q.name]) if q.name in fixed else min(q.n, max_slots or q.n) for q in qs.queries}
    K = {q.name: limit[q.name] if q.name in fixed else _initial_k(qs, q, hint, limit[q.name]) for q in qs.queries}
    seed = hint if hint is not None and hint.status == "ok" and hint.steps else None

    def consts_for(caps: dict[str, int]) -> list[_Const]:
        return [_const(qs, q, caps[q.name], fixed.get(q.name), cost_cap) for q in qs.queries]

    phases: list[dict[str, Any]] = []
    fewest, release_lp = _misses_floor(qs, objective, seed, off_grid, budget, grids) if release_floor else (0, None)
    best: _Round | None = None
    best_consts: list[_Const] = []
    last: _Round | None = None
    last_consts: list[_Const] = []
    round_no = 0
    while True:
        round_no += 1
        consts = consts_for(K)
        if round_no == 1 and max_terms is not None:
            check_model_terms(consts, max_terms)
        result = _solve_round(qs, consts, objective, seed, budget, round_no, fewest=fewest)
        result.number = round_no
        for phase in result.phases:  # the issue's per-phase report: K, the grid and whether it is exact
            phase.update(K=dict(K), time_unit=float(qs.time_unit), on_grid=not off_grid)
        phases.extend(result.phases)
        last, last_consts = result, consts
        if result.solution is not None and (
                best is None or result.key < best.key or (result.key == best.key and (result.proven or not best.proven))):
            best, best_consts = result, consts
            seed = BatchPlan(queryset=qs, scheme=SCHEME, steps=_steps(qs, result.solution))
        if result.solution is None:
            grow = ([name for name in K if K[name] < limit[name]] if result.status1 == "infeasible" else [])
        elif result.proven:
            grow = [name for name in _uncertified(consts, result, fewest) if K[name] < limit[name]]
        else:
            grow = []
        more_time = budget.room() and (budget.deterministic is None or round_no < DET_ROUNDS)
        grown = {**K, **{name: min(limit[name], 2 * K[name]) for name in grow}}
        if not grow or not more_time or (max_terms is not None and model_terms(consts_for(grown)) > max_terms):
            break
        K = grown

    report: dict[str, Any] = {
        "phases": phases, "time_unit": float(qs.time_unit), "on_grid": not off_grid, "off_grid": off_grid,
        "objective": objective, "rounds": round_no, "K_tried": dict(K),
    }
    if release_lp is not None:
        report["release_lp"] = release_lp
    minbatch = {name: sizes[0] for name, sizes in fixed.items()}
    # a proof under the variants covers the restricted model only
    restrictions = [r for r, on in (("the fixed batch sizes", bool(fixed)), ("the cost cap (1 + δRSF)·Cost(N)", cost_cap))
                    if on]
    variant = f" under {' and '.join(restrictions)}" if restrictions else ""
    grid_note = "" if not off_grid else f" (on the grid of {show(qs.time_unit)}: off the grid are {'; '.join(off_grid)})"
    if best is None:
        full = all(c.sizes is not None or c.K >= c.n for c in last_consts)
        report.update(K={c.query.name: c.K for c in last_consts}, K_bound=not full, status=last.status1,
                      deadlines="unknown")
        if last.status1 == "infeasible" and full and not off_grid:
            status, reason = "infeasible", "CP-SAT proved no plan satisfies the constraints (K = N for every query)" + variant
        elif last.status1 == "infeasible":
            status = "unknown"
            reason = ("CP-SAT found the model infeasible, which proves nothing: "
                      + ("the slot cap K < N for some query" if not full else "the data are off the grid")
                      + f" (K = {report['K']})")
        else:
            status, reason = "unknown", f"CP-SAT found no plan within the limit (phase 1 {last.status1})"
        return BatchPlan(queryset=qs, scheme=SCHEME, steps=(), status=status, reason=reason, minbatch=minbatch,
                         solver=report)

    if release_floor and objective == "misses" and not off_grid and not best.proven and best.value1 is not None:
        report["release_lp_cost"] = _tighten_cost_bound(qs, best, phases, budget, grids)
    uncertified = _uncertified(best_consts, best, fewest) if best.proven else [
        c.query.name for c in best_consts if c.sizes is None and c.K < c.n]
    k_bound = bool(uncertified)
    optimal = best.proven and not k_bound
    full = all(c.sizes is not None or c.K >= c.n for c in best_consts)
    on_time = _key(best_consts, best.solution, "misses")[0] == 0
    if on_time:
        deadlines = "met"
    elif fewest > 0 or (best.status1 == "optimal" and full and not off_grid):
        deadlines = "infeasible"
    else:
        deadlines = "unknown"
    report.update(K={c.query.name: c.K for c in best_consts}, K_bound=k_bound, K_uncertified=uncertified,
                  status="optimal" if optimal else "feasible", deadlines=deadlines,
                  optimal_for_K=best.proven, value=best.value1, round=best.number)
    reasons = []
    if not best.proven:
        reasons.append(f"not proven optimal within the limit (phase 1 {best.status1}, cost phase {best.status2})")
    if k_bound:
        reasons.append(f"the slot cap K may bind for {', '.join(uncertified)} (K = {report['K']})")
    if deadlines == "unknown":
        reasons.append("a deadline is missed; whether every deadline can be met is unknown (needs K = N and a proof)")
    elif deadlines == "infeasible" and fewest > 0:
        reasons.append(f"no plan misses fewer than {fewest} deadline{'s' if fewest > 1 else ''} "
                       "(proven by the release-time LP)")
    elif deadlines == "infeasible":
        reasons.append("no plan meets every deadline (proven with K = N for every query)" + variant)
    reason = "; ".join(reasons) + grid_note if reasons or grid_note else ""
    return BatchPlan(queryset=qs, scheme=SCHEME, steps=_steps(qs, best.solution), status="ok",
                     reason=reason.lstrip(" "), minbatch=minbatch, solver=report)


# -- the decomposition (staleness_lab.optimize.decomposition) --------------------------------------


def _grid(c: _Const) -> QueryGrid:
    return QueryGrid(name=c.query.name, n=c.n, dur=c.dur, agg=c.agg, release=c.release, deadline=c.deadline)


def _hint_round(qs: QuerySet, consts: list[_Const], plan: BatchPlan | None, objective: str) -> _Round | None:
    """``plan`` snapped onto the grid as an (unproven) incumbent, None when it plans no query fully."""
    if plan is None or plan.status != "ok" or not plan.steps:
        return None
    starts = snapped_starts(qs, consts, plan)
    solution: dict[str, _Solution] = {}
    for c in consts:
        sizes = [s.size for s in sorted((s for s in plan.steps_of(c.query.name) if s.kind == "batch"),
                                        key=lambda s: s.first)]
        mine = starts[c.query.name]
        if not sizes or sum(sizes) != c.n or len(mine) != len(sizes):
            return None
        batches = [(mine[i], mine[i] + c.dur[x], x) for i, x in enumerate(sizes)]
        solution[c.query.name] = _Solution(batches=batches, f=batches[-1][1], g=c.agg[len(sizes)])
    return _Round(K={}, phases=[], status1="hint", solution=solution, key=_key(consts, solution, objective))


@dataclass
class _Master:
    """One solve of the relaxed master: its phase-1 status, value and bound, and (phase 2) the
    chosen column per query, its key and whether that key is proven."""

    status1: str
    bound1: int | None = None
    value1: int | None = None
    chosen: list[int] | None = None
    key: tuple[int, int, int, int] | None = None
    proven: bool = False
    cost_bound: int | None = None       # phase 2's bound on cost, for plans of phase-1 value ``value1``
    #: per query, the batch sizes of the chosen column (its head, or the cheapest head of its batch
    #: count and last size on the bound grid when it has none), None for a wide column
    sizes: list[tuple[int, ...] | None] | None = None


def _solve_master(grids: list[QueryGrid], cols: list[list[Any]], qs: QuerySet, objective: str, budget: _Budget,
                  stages: list[dict[str, Any]], round_no: int, unit: Fraction, *, on_time: bool = False,
                  reserve: float = 0.0) -> _Master:
    """Both phases of the relaxed master on the grid of ``unit`` (its records go to ``stages``),
    each solve keeping ``reserve`` seconds of the budget for what follows. With ``on_time`` (a plan
    that is on time is known, and it maps onto the columns) phase 1's optimum is 0, nothing being
    below it: it is fixed without a solve."""
    relax = relaxation(grids, cols, qs.executors)
    model = relax.model
    first = relax.misses if objective == "misses" else relax.tardiness
    if on_time:
        status, solver = cp_model.OPTIMAL, None
        stages.append({"stage": "master", "round": round_no, "phase": objective, "status": "optimal",
                       "objective": 0.0, "bound": 0.0, "gap": 0.0, "seconds": 0.0,
                       "note": "a plan on time is known: 0 is the least, no solve"})
    else:
        model.minimize(first)
        solver, status, info = budget.solve(model, reserve)
        scale = Fraction(1) if objective == "misses" else unit
        stages.append({"stage": "master", **_phase(objective, round_no, status, solver, info, scale)})
    out = _Master(status1=_STATUS.get(status, str(status)))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return out
    value = 0 if solver is None else int(round(solver.objective_value))
    out.value1 = value
    out.bound1 = value if status == cp_model.OPTIMAL else math.ceil(solver.best_objective_bound - 1e-6)
    model.add(first == value) if status == cp_model.OPTIMAL else model.add(first <= value)
    w_tard = 1 if (objective == "misses" and value > 0) else 0
    w_batches = w_tard * relax.max_tardiness + 1
    w_cost = w_batches * relax.max_batches + w_tard * relax.max_tardiness + 1
    model.minimize(w_cost * relax.cost + w_batches * relax.batches + (w_tard * relax.tardiness if w_tard else 0))
    if solver is not None:
        for var in relax.index:
            model.add_hint(var, solver.value(var))
    solver2, status2, info2 = budget.solve(model, reserve)
    stages.append({"stage": "master", **_phase("cost", round_no, status2, solver2, info2, unit, divide=w_cost)})
    if status2 not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return out
    if status == cp_model.OPTIMAL and math.isfinite(solver2.best_objective_bound):
        out.cost_bound = math.ceil(solver2.best_objective_bound - 1e-6) // w_cost
    out.chosen = [solver2.value(v) for v in relax.index]
    out.key = (value, solver2.value(relax.cost), solver2.value(relax.batches), solver2.value(relax.tardiness))
    out.proven = status == cp_model.OPTIMAL and status2 == cp_model.OPTIMAL
    return out


@dataclass
class _Bounds:
    """The bound grid of one call (:mod:`~staleness_lab.optimize.true_bounds`): its unit, whether
    it is exact, each query on it, and the lower bounds proven so far in its units: the phase-1
    value, the cost whatever the phase-1 value, and ``cost_at`` = (v, the cost among plans whose
    phase-1 value is v); ``refs``: keys of proven optima of relaxations (no plan's key is below);
    ``cost_lp`` = (m, the release LP's converged least cost among plans with at most m late),
    served again by :func:`_least_cost_lp`."""

    unit: Fraction
    exact: bool
    consts: list[_Const]
    grids: list[QueryGrid]
    value1: int
    cost: int
    floors: list[int]
    cost_at: tuple[int, int] | None = None
    refs: list[TrueKey] = field(default_factory=list)
    cost_lp: tuple[int, ReleaseBound] | None = None

    def raise_cost_at(self, value1: int, cost: int) -> None:
        """A cost bound among plans whose phase-1 value is ``value1``: kept with the one known at
        that value, the higher of the two."""
        if self.cost_at is not None and self.cost_at[0] == value1:
            cost = max(cost, self.cost_at[1])
        self.cost_at = (value1, cost)

    def scale1(self, objective: str) -> Fraction:
        return Fraction(1) if objective == "misses" else self.unit

    def add_ref(self, key: tuple[int, int, int, int], objective: str) -> None:
        """A proven optimum of a relaxation on this grid: its key in seconds (or misses)."""
        value, cost, batches, tardiness = key
        self.refs.append((value * self.scale1(objective), cost * self.unit, batches, tardiness * self.unit))

    def true_bound(self, objective: str, value1: Fraction) -> tuple[Fraction, Fraction]:
        """The phase-1 bound and the cost bound (for the lexicographic optimum, whose phase-1
        value is at most ``value1``, the plan's), in seconds or misses."""
        bound1 = self.value1 * self.scale1(objective)
        cost = self.cost
        if self.cost_at is not None and self.cost_at[0] * self.scale1(objective) == value1 == bound1:
            cost = max(cost, self.cost_at[1])
        return bound1, cost * self.unit


class _BoundGrids:
    """The bound grids of one :func:`optimal_plan` call (:func:`_bound_grid`), each built once
    and shared by the stages that bound on it: a bound one stage proves holds for the next, and
    the release LP's converged least cost (``_Bounds.cost_lp``) is not solved twice."""

    def __init__(self, qs: QuerySet) -> None:
        self.qs = qs
        self._built: dict[tuple[str, tuple[str, ...]], _Bounds] = {}

    def get(self, objective: str, off_grid: list[str]) -> _Bounds:
        key = (objective, tuple(off_grid))
        if key not in self._built:
            self._built[key] = _bound_grid(self.qs, objective, off_grid)
        return self._built[key]


def _least_cost_lp(bounds: _Bounds, executors: int, misses: int, seeds: list[list[tuple[int, ...]]],
                   stop: Callable[[], bool], target: int | None = None) -> tuple[ReleaseBound, bool]:
    """The release LP's least cost on ``bounds``' grid among plans with at most ``misses`` late
    (:func:`~staleness_lab.optimize.release_lp.release_bound`, phase ``"cost"``), and whether it
    was served again: a converged answer is kept in ``bounds`` and served at the same misses, since
    its bound is the LP's optimum whatever the seeds, target or limit of a later call."""
    if bounds.cost_lp is not None and bounds.cost_lp[0] == misses:
        return bounds.cost_lp[1], True
    found = release_bound(bounds.grids, executors, phase="cost", misses=misses, floors=bounds.floors,
                          seeds=seeds, stop=stop, target=target)
    if found.converged:
        bounds.cost_lp = (misses, found)
    return found, False


def _bound_grid(qs: QuerySet, objective: str, off_grid: list[str]) -> _Bounds:
    unit, exact = bound_unit(qs, not off_grid)
    consts = [_const(qs, q, q.n, None, False, unit=unit, down=True, objective=objective) for q in qs.queries]
    grids = [_grid(c) for c in consts]
    splits = [least_splits(g.dur) for g in grids]
    floors = [int(s[-1]) for s in splits]  # each query's cheapest split of all its tuples
    return _Bounds(unit=unit, exact=exact, consts=consts, grids=grids,
                   value1=floor_bounds(grids, objective, qs.executors, splits),
                   cost=sum(floors), floors=floors)


def _stop(budget: _Budget) -> Any:
    """Whether the call's wall-clock budget is spent (never, in deterministic mode)."""
    return lambda: budget.deterministic is None and budget.left() <= 0


def _relax(qs: QuerySet, bounds: _Bounds, inc: Incumbent, objective: str, budget: _Budget,
           stages: list[dict[str, Any]], reserve: float = 0.0) -> tuple[_Master | None, list[list[Column]]]:
    """Columns on the bound grid and the relaxed master over them, rounds of wider columns while
    the master takes a wide one and time is left; its bounds go into ``bounds``. (None, []) when
    the budget runs out while columns are built. Each master solve keeps ``reserve`` seconds of
    the budget for what follows."""
    began = time.perf_counter()
    grids, unit, floors = bounds.grids, bounds.unit, bounds.floors
    on_time = inc.key is not None and inc.key[0] == 0
    # the optimum is on time too and its image on the bound grid costs at most floor(cost / v)
    ceiling = _floor(inc.key[1], unit) if on_time else 0
    limits = [ceiling - sum(floors) + floors[k] if on_time else None for k in range(len(grids))]
    layers = [HeadLayers(g.dur, g.release) for g in grids]
    most = [FIRST_COUNTS] * len(grids)
    stop = _stop(budget)

    def generate(k: int, count: int) -> list[Column]:
        return columns(grids[k], max_cost=limits[k], on_time=on_time, most=count, layers=layers[k], stop=stop)

    try:
        cols = [generate(k, most[k]) for k in range(len(grids))]
    except OutOfTime as err:
        stages.append({"stage": "columns", "seconds": round(time.perf_counter() - began, 4),
                       "stopped": f"the time limit ran out at query {err}"})
        return None, []
    stages.append({"stage": "columns", "seconds": round(time.perf_counter() - began, 4),
                   "columns": {g.name: len(mine) for g, mine in zip(grids, cols)}, "priced": on_time})
    # a plan on time settles the misses: the LP's least cost goes first, while its share is left
    lp_first = objective == "misses" and on_time and len(grids) > qs.executors
    if lp_first:
        _release_bounds(qs, bounds, inc, budget, stages, reserve)
    round_no = 1
    while True:
        master = _solve_master(grids, cols, qs, objective, budget, stages, round_no, unit, on_time=on_time,
                               reserve=reserve)
        wider = [k for k, i in enumerate(master.chosen or []) if cols[k][i].last == 0]
        if not wider or not budget.room():
            break
        began, round_no = time.perf_counter(), round_no + 1
        try:  # the master took a wide column: more batch counts of that query, priced alike
            fresh = {k: generate(k, 2 * most[k]) for k in wider}
        except OutOfTime:
            break          # the last master's columns still stand: its bounds hold
        for k, mine in fresh.items():
            most[k], cols[k] = 2 * most[k], mine
        stages.append({"stage": "columns", "round": round_no, "seconds": round(time.perf_counter() - began, 4),
                       "columns": {grids[k].name: len(cols[k]) for k in wider}, "priced": on_time})
    if master.bound1 is not None:
        bounds.value1 = max(bounds.value1, master.bound1)
    if master.cost_bound is not None and master.value1 is not None:
        bounds.raise_cost_at(master.value1, master.cost_bound)
    if master.proven and master.key is not None:
        bounds.add_ref(master.key, objective)
    if (objective == "misses" and inc.plan is not None and len(grids) > qs.executors and not lp_first
            and (inc.key[0] > bounds.value1 or not _proven(inc, bounds, objective))):
        _release_bounds(qs, bounds, inc, budget, stages, reserve)
    if master.chosen is not None:
        picked = [(k, cols[k][i]) for k, i in enumerate(master.chosen)]
        master.sizes = [None if c.last == 0 else (c.head if c.head is not None else
                                                  layers[k].split(c.n - 1, grids[k].n - c.last)) + (c.last,)
                        for k, c in picked]
        if any(c.last == 0 for _, c in picked):
            master.chosen = None   # a wide column is a bound, no plan to realize
    return master, cols


def _release_bounds(qs: QuerySet, bounds: _Bounds, inc: Incumbent, budget: _Budget, stages: list[dict[str, Any]],
                    reserve: float) -> None:
    """The release-time LP's bounds (:mod:`~staleness_lab.optimize.release_lp`) where the master
    leaves the fewest misses open: the fewest misses, and when that rises, the least cost at it;
    where the incumbent's misses are proven and its cost is not, that least cost alone (on the
    13-query set at ρ = 0.4 the master's cost bound is 2.8 % under the plan, the LP's 1.3 %). Each
    is seeded with the incumbent's batch sizes, together within :data:`RELEASE_LP_SHARE` of the
    budget and leaving ``reserve``; both go into ``bounds``."""
    stop = _lp_stop(budget, min(RELEASE_LP_SHARE * budget.total, budget.left() - reserve))
    seeds = [[_sizes(inc.plan, q.name)] for q in qs.queries]
    if inc.key[0] > bounds.value1:
        found = release_bound(bounds.grids, qs.executors, phase="misses", misses=bounds.value1, floors=bounds.floors,
                              seeds=seeds, stop=stop, target=int(inc.key[0]))
        stages.append({"stage": "release LP", **_lp_record("misses", found)})
        if found.bound <= bounds.value1:
            return
        bounds.value1 = found.bound
    settled = inc.key[0] == bounds.value1   # the incumbent's cost, once reached, proves it
    found, again = _least_cost_lp(bounds, qs.executors, bounds.value1, seeds, stop,
                                  target=_floor(inc.key[1], bounds.unit) if settled else None)
    stages.append({"stage": "release LP", **_lp_record("cost", found, again)})
    bounds.raise_cost_at(bounds.value1, found.bound)


def _decomposed(qs: QuerySet, objective: str, budget: _Budget, hint: BatchPlan | None, off_grid: list[str],
                max_terms: int | None, grids: _BoundGrids) -> BatchPlan:
    """The decomposition (module :mod:`~staleness_lab.optimize.decomposition`): columns and the
    relaxed master on the bound grid (its bounds hold for the true costs), realization of its
    columns by the slot model on the planner's grid, and the slot model on the full problem with
    the time left when the gap stays open; the plan returned is the best by its true key of the
    hint and every plan found."""
    consts = [_const(qs, q, q.n, None, False) for q in qs.queries]
    bounds = grids.get(objective, off_grid)
    report = _report(qs, [], objective, off_grid, bounds)
    stages = report["stages"]
    inc = Incumbent(objective)
    seed = hint if hint is not None and hint.status == "ok" and hint.steps else None
    if qs.executors >= len(consts):
        began = time.perf_counter()
        exact_each = _exact_alone(qs)
        if inc.offer(exact_each):
            bounds.refs.append(inc.key)   # every query on time alone, off any grid: the optimum
        each = None if exact_each is not None else _separately(qs, bounds, objective, _stop(budget))
        if each is not None:  # exact: the plan; else a bound, and the plan on the planner's grid
            inc.offer(each if bounds.exact else _separately(qs, _bound_grid_up(consts), objective, _stop(budget)))
        stages.append({"stage": "separate executors", "proven": _proven(inc, bounds, objective),
                       "seconds": round(time.perf_counter() - began, 4), "workers": budget.workers})
        if _proven(inc, bounds, objective):
            return _finish(qs, objective, inc, bounds, report, budget)
    inc.offer(seed)
    snapped = _hint_round(qs, consts, seed, objective)
    if snapped is not None:
        inc.offer(_plan_of(qs, snapped.solution))
    master, cols = _relax(qs, bounds, inc, objective, budget, stages, REALIZE_SHARE * budget.total)
    if master is not None and master.chosen is not None and budget.room():
        picked = [cols[k][i] for k, i in enumerate(master.chosen)]
        linear = all(c.lin is not None and c.rate is not None for c in consts)
        realized = [_const(qs, q, col.n, None, False, last=col.last) if linear or col.head is None
                    else _const(qs, q, col.n, col.head + (col.last,), False) for q, col in zip(qs.queries, picked)]
        result = _solve_round(qs, realized, objective, inc.plan, _share(budget, 2), 1, fixed_cost=True,
                              bar=_bar(inc, objective))
        stages.extend({"stage": "realize", **phase} for phase in result.phases)
        if result.solution is not None:
            inc.offer(_plan_of(qs, result.solution))
    if master is not None and master.sizes is not None and not _proven(inc, bounds, objective):
        _repair(qs, consts, master.sizes, inc, seed, objective, budget, stages)
    if not _proven(inc, bounds, objective) and budget.room():
        fallback = _fallback(qs, objective, budget, inc.plan, off_grid, max_terms, report, grids)
        if fallback is not None and fallback.solver["status"] == "optimal" and not off_grid:
            return fallback   # on the grid its proof is a true one
        inc.offer(fallback)
    return _finish(qs, objective, inc, bounds, report, budget)


def _sizes(plan: BatchPlan, name: str) -> tuple[int, ...]:
    """The batch sizes of query ``name`` in ``plan``, in tuple order."""
    return tuple(s.size for s in sorted((s for s in plan.steps_of(name) if s.kind == "batch"), key=lambda s: s.first))


def _repair(qs: QuerySet, consts: list[_Const], targets: list[tuple[int, ...] | None], inc: Incumbent,
            seed: BatchPlan | None, objective: str, budget: _Budget, stages: list[dict[str, Any]]) -> None:
    """Move a plan towards the master's columns one query at a time; what beats the incumbent
    joins it. ``targets``: per query the batch sizes of its chosen column (None: none). The plan
    moved is the incumbent, or the ``seed`` when the incumbent already has every target (the
    master's columns realized together). For each query whose target is cheaper on the planner's
    grid than its batches in the plan (every query whose target differs, while the plan is late),
    late queries first, then most saving first, the plan's sizes with that query's replaced are
    sequenced by the slot model (every size fixed, times free: the cost is then fixed), hinted
    with the plan, and the result replaces the plan when its true key is better. Passes repeat
    while one replaces it. The master's columns together are often late (its head bounds are
    loose); one at a time they fit where the rest leaves room. The time left, bar the last share,
    is split between the trials."""
    starts = [p for p in (inc.plan, seed) if p is not None
              and any(t is not None and t != _sizes(p, c.query.name) for c, t in zip(consts, targets))]
    if not starts:
        return
    began = time.perf_counter()
    cur = Incumbent(objective)
    cur.offer(starts[0])
    sizes = {c.query.name: _sizes(starts[0], c.query.name) for c in consts}
    tried = kept = 0
    while cur.plan is not None:
        late = at_model_costs(cur.plan).late
        trials = []
        for c, mine in zip(consts, targets):
            if mine is not None and mine != sizes[c.query.name]:
                saving = plan_cost(c.dur, c.agg, sizes[c.query.name]) - plan_cost(c.dur, c.agg, mine)
                if saving > 0 or late:
                    trials.append((c.query.name in late, saving, c.query.name, mine))
        trials.sort(reverse=True)
        before = kept
        for k, (_, _, name, mine) in enumerate(trials):
            if not budget.room():
                break
            fixed = {**sizes, name: mine}
            chosen = [_const(qs, c.query, len(fixed[c.query.name]), fixed[c.query.name], False) for c in consts]
            result = _solve_round(qs, chosen, objective, cur.plan, _share(budget, len(trials) - k), 1,
                                  fixed_cost=True, bar=_bar(cur, objective))
            tried += 1
            plan = None if result.solution is None else _plan_of(qs, result.solution)
            if cur.offer(plan):
                sizes, kept = fixed, kept + 1
                inc.offer(plan)
        if kept == before or budget.deterministic is not None:
            break
    misses = None if cur.plan is None else len(at_model_costs(cur.plan).late)  # None: its start was not sound
    stages.append({"stage": "repair", "trials": tried, "kept": kept, "misses": misses,
                   "seconds": round(time.perf_counter() - began, 4)})


def _share(budget: _Budget, parts: int) -> _Budget:
    """A budget for one of ``parts`` rounds (two phases each) sharing what is left of ``budget``
    (bar the last share); in deterministic mode, ``parts``-th of its deterministic time."""
    if budget.deterministic is not None:
        return _Budget(time_limit=budget.time_limit, workers=budget.workers, deterministic=budget.deterministic / parts)
    left = budget.left() - MIN_ROUND_SHARE * budget.total
    return _Budget(time_limit=max(0.01, min(budget.time_limit, left / (2 * parts))), workers=budget.workers,
                   deterministic=None)


def _bar(inc: Incumbent, objective: str) -> int | None:
    """The incumbent's misses (a plan with more cannot beat it), None for tardiness or none."""
    return int(inc.key[0]) if objective == "misses" and inc.key is not None else None


def _plan_of(qs: QuerySet, solution: dict[str, _Solution], unit: Fraction | None = None) -> BatchPlan:
    return BatchPlan(queryset=qs, scheme=SCHEME, steps=_steps(qs, solution, unit))


def _bound_grid_up(consts: list[_Const]) -> _Bounds:
    """The planner's own grid as a :class:`_Bounds` (to plan on it alike; its numbers bound nothing)."""
    return _Bounds(unit=consts[0].unit, exact=False, consts=consts, grids=[_grid(c) for c in consts], value1=0, cost=0,
                   floors=[])


def _proven(inc: Incumbent, bounds: _Bounds, objective: str) -> bool:
    """Whether the incumbent's true key reaches a proven relaxation optimum's."""
    return inc.key is not None and any(inc.key <= ref for ref in bounds.refs)


def _report(qs: QuerySet, stages: list[dict[str, Any]], objective: str, off_grid: list[str],
            bounds: _Bounds) -> dict[str, Any]:
    return {"method": "decomposition", "stages": stages, "rounds": 1, "time_unit": float(qs.time_unit),
            "on_grid": not off_grid, "off_grid": off_grid, "objective": objective,
            "bound_unit": float(bounds.unit), "bound_exact": bounds.exact}


def _separately(qs: QuerySet, bounds: _Bounds, objective: str, stop: Any) -> BatchPlan | None:
    """Queries that never share an executor (no more queries than executors): each one's exact
    optimum on the grid of ``bounds`` (:func:`~staleness_lab.optimize.one_query.alone`), each
    batch as early as its tuples and the batch before allow. The sum of their keys is that grid's
    optimum: it joins ``bounds`` (as a bound when the grid rounds down). The plan, or None when a
    query's search gives up."""
    solution: dict[str, _Solution] = {}
    for c, g in zip(bounds.consts, bounds.grids):
        best = alone(g, objective, stop=stop)
        if best is None:
            return None
        batches, free, done = [], None, 0
        for x in best.sizes:
            done += x
            begin = c.release[done] if free is None else max(free, c.release[done])
            free = begin + c.dur[x]
            batches.append((begin, free, x))
        solution[c.query.name] = _Solution(batches=batches, f=free, g=c.agg[len(best.sizes)])
    key = _key(bounds.consts, solution, objective)
    bounds.value1, bounds.cost_at = max(bounds.value1, key[0]), (key[0], key[1])
    bounds.add_ref(key, objective)
    return _plan_of(qs, solution, bounds.unit)


def _exact_alone(qs: QuerySet) -> BatchPlan | None:
    """Each query's exact optimum off any grid (:func:`~staleness_lab.intermittent.single.exact`,
    the suffix DP on the query's own exact grid) on an executor of its own, when every query can
    meet its deadline alone: then that plan is the optimum (no miss, no tardiness, each query
    cheapest, then fewest batches), whatever the time grid. None otherwise."""
    steps: list[Step] = []
    for k, query in enumerate(qs.queries):
        if query.n > EXACT_MAX_TUPLES:
            return None
        one = exact(replace(qs, queries=(query,)))
        if one.status != "ok":
            return None
        steps += [replace(step, executor=k) for step in one.steps]
    return BatchPlan(queryset=qs, scheme=SCHEME, steps=tuple(sorted(steps, key=lambda s: (s.start, s.executor))))


def _fallback(qs: QuerySet, objective: str, budget: _Budget, seed: BatchPlan | None, off_grid: list[str],
              max_terms: int | None, report: dict[str, Any], grids: _BoundGrids) -> BatchPlan | None:
    """The slot model on the full problem with the time left, seeded with the best plan (None when
    its model is too large); only a proof of its is taken as one (its bounds hold for its caps)."""
    try:
        plan = _monolithic(qs, objective, budget, seed, off_grid, {}, False, None, max_terms, grids)
    except InputError as err:
        report["fallback"] = f"not run: {err.rule}"
        return None
    report["fallback"] = plan.solver.get("status") if plan.solver else plan.status
    report["stages"].extend({"stage": "monolithic", **phase} for phase in (plan.solver or {}).get("phases", []))
    if plan.status == "ok" and plan.solver["status"] == "optimal":
        plan.solver.update(method="decomposition, closed by the monolithic model", stages=report["stages"])
    return plan if plan.status == "ok" else None


def _finish(qs: QuerySet, objective: str, inc: Incumbent, bounds: _Bounds, report: dict[str, Any],
            budget: _Budget, keep: bool = False) -> BatchPlan:
    """The incumbent as the result, with the contract's two phase records: the plan's true
    phase-1 value and cost (at the cost model's durations) against the true lower bounds of
    ``bounds``; ``status`` is ``"optimal"`` only when the plan's true key reaches a proven
    relaxation optimum. With ``keep`` (the slot model's report), its rounds' records stay and the
    two are a last round, the one returned."""
    if inc.plan is None:
        report.update(phases=[] if not keep else report.get("phases", []), K={q.name: q.n for q in qs.queries},
                      K_bound=False, status="unknown", deadlines="unknown")
        return BatchPlan(queryset=qs, scheme=SCHEME, steps=(), status="unknown",
                         reason="no plan was found within the limit", solver=report)
    value1, cost, _, _ = inc.key
    bound1, cost_bound = bounds.true_bound(objective, value1)
    proven = _proven(inc, bounds, objective)
    proven1 = proven or value1 == 0 or value1 <= bound1
    bound1 = value1 if proven1 else min(value1, bound1)
    cost_bound = cost if proven else min(cost, cost_bound)
    seconds = round(time.perf_counter() - budget.started, 4)
    round_no = report.get("rounds", 1) + (1 if keep else 0)

    def record(name: str, obj: Fraction, low: Fraction, done: bool) -> dict[str, Any]:
        gap = float((obj - low) / max(Fraction(1), abs(obj)))
        return {"round": round_no, "phase": name, "status": "optimal" if done else "feasible",
                "objective": float(obj), "bound": float(low), "gap": gap, "seconds": seconds,
                "workers": budget.workers, "time_limit": None, "deterministic_time": budget.deterministic}

    phases = [record(objective, value1, bound1, proven1), record("cost", cost, cost_bound, proven)]
    misses = true_key(inc.plan, "misses")[0]
    deadlines = "met" if misses == 0 else ("infeasible" if proven1 else "unknown")
    batches = {q.name: sum(1 for s in inc.plan.steps_of(q.name) if s.kind == "batch") for q in qs.queries}
    report.update(phases=(report.get("phases", []) if keep else []) + phases, K=batches, K_bound=False,
                  status="optimal" if proven else "feasible", deadlines=deadlines, value=float(value1),
                  round=round_no, rounds=round_no)
    reasons = [] if proven else ["not proven optimal within the limit (the plan's true cost and phase-1 value "
                                 "against the bounds of the relaxation, durations rounded down)"]
    if deadlines == "infeasible":
        reasons.append("no plan meets every deadline (proven for the true costs)")
    elif deadlines == "unknown":
        reasons.append("a deadline is missed; whether every deadline can be met is unknown")
    if qs.time_unit != bounds.unit or not bounds.exact:
        reasons.append(f"planned on the grid of {show(qs.time_unit)} (durations rounded up), bounded on the grid "
                       f"of {show(bounds.unit)} ({'exact' if bounds.exact else 'durations rounded down'})")
    return BatchPlan(queryset=qs, scheme=SCHEME, steps=inc.plan.steps, status="ok", reason="; ".join(reasons),
                     minbatch=inc.plan.minbatch if keep else {}, solver=report)


def _true_result(qs: QuerySet, objective: str, budget: _Budget, plan: BatchPlan, hint: BatchPlan | None,
                 off_grid: list[str], variant: bool, grids: _BoundGrids) -> BatchPlan:
    """The slot model's result off its grid: the better by true key of its plan and the hint (not
    under a variant, which the hint need not satisfy), against the true bounds of the relaxed
    master on the bound grid with the time left (:func:`_finish`, the slot model's rounds kept)."""
    inc = Incumbent(objective)
    inc.offer(plan)
    if not variant:
        inc.offer(hint)
    if inc.plan is None:
        return plan
    bounds = grids.get(objective, off_grid)
    report = {**plan.solver, "grid_status": plan.solver.get("status"), "bound_unit": float(bounds.unit),
              "bound_exact": bounds.exact}
    report.setdefault("stages", [])
    _relax(qs, bounds, inc, objective, budget, report["stages"])
    return _finish(qs, objective, inc, bounds, report, budget, keep=True)
