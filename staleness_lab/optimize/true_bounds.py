"""Lower bounds of the batch planner that hold for the true (off-grid) costs, and a plan's true key.

The planner (:mod:`~staleness_lab.optimize.batch_plan`) plans on a grid of ``u = qs.time_unit``
that rounds every duration UP, so its plans are feasible for the true costs; but a proof on that
grid covers the rounded-up durations only, and off the grid a heuristic may beat its "optimum".
This module gives the other side, the *bound grid* of a unit ``v``: every duration rounded DOWN
(``floor(Cost(x)/v)``, ``floor(AggCost(n)/v)``), every release rounded down
(``floor(InputTime(c)/v)``), the deadline ``floor(D/v)`` for misses and ``ceil(D/v)`` for
tardiness. The problem is the planner's: batches of a query in tuple order, each holding only
tuples arrived at its start, the final aggregation (n >= 2) starting when its last batch ends,
at most ``m`` steps at a time (one executor: none overlapping).

**Why it bounds.** Map a true plan onto the bound grid by flooring every start. A batch starting
at ``s >= InputTime(c)`` starts at ``floor(s/v) >= floor(InputTime(c)/v)``; a step after another
(``s' >= s + d``) starts at ``floor(s'/v) >= floor(s/v) + floor(d/v)`` (``floor(a + b) >= floor(a)
+ floor(b)``); an aggregation that starts when its last batch ends starts, floored, no earlier than
that batch's floored end, so the aggregation is placed there (nothing else runs on its executor in
between, and on ``m`` executors a grid time ``t`` is covered by mapped steps only when their true
steps all cover ``t + 1 - ε``, so no more than ``m`` overlap). Completions only move earlier
(``<= floor(C/v)``), so an on-time query stays on time, and grid tardiness is at most the true
tardiness over ``v`` (against ``ceil(D/v)``); each step's grid cost is at most its true cost over
``v``. So every true plan has an image on the bound grid that is no worse in misses, tardiness and
cost, and any lower bound of the bound-grid problem, times ``v``, bounds the true optimum
(misses first, then cost among plans with the optimum's misses, or with at most as many).

**The unit.** :func:`bound_unit`: the planner's ``u`` when the data are on its grid (then both
roundings are exact and nothing changes); else the coarsest unit of which every number of the data
is a multiple (:func:`exact_unit`), when the horizon takes at most :data:`MAX_BOUND_UNITS` of it
(an *exact* bound grid: floors change nothing, so the bound is the relaxation's own); else the
finest ``u / 10^k`` (k >= 0) within that many units, with the floors: each batch then gives up
less than one unit of its cost to the bound, and data in round numbers (the synthetic set's
``Cost(N)``, 17.86 s or 68.79 s) lie on it exactly.

**True keys.** :func:`true_key` prices a plan at the cost model's durations
(:func:`~staleness_lab.intermittent.plan.at_model_costs`, each step kept where it starts): its
phase-1 value (misses, or tardiness in seconds), cost, batches and tardiness, exact. A grid plan's
true key is what the bounds are compared with.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from staleness_lab.intermittent.arrivals import FixedRate
from staleness_lab.intermittent.model import QuerySet
from staleness_lab.intermittent.plan import BATCH, BatchPlan, at_model_costs, check_plan
from staleness_lab.optimize.decomposition import QueryGrid, least_splits

#: The most units of an exact bound grid the planning horizon may take (past it the planner's
#: own unit serves, with every duration rounded down).
MAX_BOUND_UNITS = 10**7

TrueKey = tuple[Fraction, Fraction, int, Fraction]

#: The most release times :func:`late_together` tries (each a Moore-Hodgson pass over the queries).
LATE_TOGETHER_TIMES = 256


def _numbers(qs: QuerySet) -> Iterator[Fraction]:
    """Every number of the data: arrival times, costs, aggregation costs, deadlines."""
    for query in qs.queries:
        arrivals = query.arrivals
        if isinstance(arrivals, FixedRate):
            yield Fraction(arrivals.ws)
            yield 1 / Fraction(arrivals.rate)
        else:
            yield from (Fraction(t) for t in arrivals.times)
        yield Fraction(query.deadline)
        for x in range(1, query.n + 1):
            yield Fraction(query.cost(x))
        for j in range(2, query.n + 1):
            yield Fraction(query.agg_cost(j))


def horizon(qs: QuerySet) -> Fraction:
    """An upper end of every time a plan uses: the last arrival or deadline plus every query's
    largest one-batch work."""
    return max(max(q.we, q.deadline) for q in qs.queries) + sum((q.total_cost([q.n]) for q in qs.queries),
                                                                   Fraction(0))


def exact_unit(qs: QuerySet, max_units: int = MAX_BOUND_UNITS) -> Fraction | None:
    """The coarsest unit of which every number of the data is a multiple, or None when the
    horizon would take more than ``max_units`` of it; also None, without the rest of the data
    read, once their common denominator alone passes 64 times that (a cut-off that can only
    make the bound looser: the planner's unit then serves)."""
    span = horizon(qs)
    den = 1
    for value in _numbers(qs):
        den = math.lcm(den, value.denominator)
        if span * den > max_units * 64:
            return None
    common = 0
    for value in _numbers(qs):
        common = math.gcd(common, value.numerator * (den // value.denominator))
    unit = Fraction(max(common, 1), den)
    return unit if span / unit <= max_units else None


def bound_unit(qs: QuerySet, on_grid: bool, max_units: int = MAX_BOUND_UNITS) -> tuple[Fraction, bool]:
    """The bound grid's unit and whether it is exact (module docstring, "The unit")."""
    if on_grid:
        return qs.time_unit, True
    unit = exact_unit(qs, max_units)
    if unit is not None:
        return unit, True
    unit, span = qs.time_unit, horizon(qs)
    while span / (unit / 10) <= max_units:
        unit /= 10
    return unit, False


def true_key(plan: BatchPlan, objective: str) -> TrueKey:
    """``(phase-1 value, cost, batches, tardiness)`` of ``plan`` at the cost model's durations."""
    priced = at_model_costs(plan)
    tardiness = priced.total_tardiness
    value = Fraction(priced.misses) if objective == "misses" else tardiness
    batches = sum(1 for s in priced.steps if s.kind == BATCH)
    return value, priced.total_cost, batches, tardiness


def _alone(g: QueryGrid) -> int:
    """The least work of ``g`` after its last release: its last batch (at least ``dur[1]``)
    and then ``agg[n] >= agg[2]`` when n >= 2, or the whole query as one batch."""
    return g.dur[g.n] if g.n == 1 else min(g.dur[g.n], g.dur[1] + g.agg[2])


def floor_bounds(grids: list[QueryGrid], objective: str, executors: int = 1,
                 splits: list[np.ndarray] | None = None) -> int:
    """A time-free lower bound on the phase-1 value on one grid (units of the grid): a query
    whose last batch cannot end by its deadline even alone is late in every plan (the last batch
    starts no sooner than the last release and lasts at least ``dur[1]``, followed by ``agg[n] >=
    agg[2]`` when n >= 2, or is the whole query); for misses, add those the others' work makes
    late together on ``executors`` (:func:`late_together`). (The cost's is each query's cheapest
    split of all its tuples, the last of :func:`~staleness_lab.optimize.decomposition.least_splits`.)
    ``splits``: each grid's :func:`~staleness_lab.optimize.decomposition.least_splits`, when the
    caller has them."""
    late = [max(0, g.last_release + _alone(g) - g.deadline) for g in grids]
    if objective != "misses":
        return sum(late)
    splits = [least_splits(g.dur) for g in grids] if splits is None else splits
    on_time = [k for k, t in enumerate(late) if t == 0]
    return sum(t > 0 for t in late) + late_together([grids[k] for k in on_time], executors, [splits[k] for k in on_time])


def late_together(grids: list[QueryGrid], executors: int, splits: list[np.ndarray]) -> int:
    """A lower bound on how many of ``grids`` are late in every plan. From a time ``a`` on, a
    query does at least the work of its tuples released at ``a`` or later (no batch that starts
    before ``a`` holds them): their cheapest split (:func:`~staleness_lab.optimize.decomposition.least_splits`),
    then ``agg[2]`` when there are two batches or more, or the whole query as one batch; all of
    it within ``[a, deadline]`` when the query is on time. So the queries on time must fit that
    work, in deadline order, into ``executors`` times the time from ``a`` (a relaxation: the work
    splits freely over time and executors). The fewest late queries of that one-machine problem
    is Moore and Hodgson's (1968); the bound is its largest over the release times ``a`` (at most
    :data:`LATE_TOGETHER_TIMES` of them, evenly spaced with the first and last: any of them
    gives a bound). ``splits``: each grid's least splits, as :func:`floor_bounds` takes them."""
    if not grids:
        return 0
    times = sorted({r for g in grids for r in g.release[1:]})
    if len(times) > LATE_TOGETHER_TIMES:
        step = (len(times) - 1) / (LATE_TOGETHER_TIMES - 1)
        times = sorted({times[round(k * step)] for k in range(LATE_TOGETHER_TIMES)})
    most = 0
    for a in times:
        jobs = []
        for g, cheapest in zip(grids, splits):
            after = g.n + 1 - bisect.bisect_left(g.release, a, 1, g.n + 1)  # tuples released at a or later
            if after:
                work = g.dur[g.n] if g.n == 1 else min(g.dur[g.n], int(cheapest[after]) + g.agg[2])
                jobs.append(((g.deadline - a) * executors, work))
        most = max(most, _fewest_late(sorted(jobs)))
    return most


def _fewest_late(jobs: list[tuple[int, int]]) -> int:
    """Moore-Hodgson: the fewest late jobs on one machine, each ``(due, processing)``, in due
    order: take each in turn and, when the taken ones end past its due time, drop the longest."""
    taken: list[int] = []
    end = late = 0
    for due, processing in jobs:
        heapq.heappush(taken, -processing)
        end += processing
        if end > due:
            end += heapq.heappop(taken)
            late += 1
    return late


@dataclass
class Incumbent:
    """The best plan offered so far by its true key (smaller is better; ties keep the first)."""

    objective: str
    plan: BatchPlan | None = None
    key: TrueKey | None = None

    def offer(self, plan: BatchPlan | None) -> bool:
        """Keep ``plan`` when it is sound (:func:`~staleness_lab.intermittent.plan.check_plan`) and
        its true key beats the incumbent's."""
        if plan is None or plan.status != "ok" or not plan.steps or check_plan(plan.queryset, plan):
            return False
        key = true_key(plan, self.objective)
        if self.key is not None and key >= self.key:
            return False
        self.plan, self.key = plan, key
        return True
