"""The one plan format every scheme outputs, and the checker every plan must pass.

A :class:`BatchPlan` is a list of :class:`Step` records, exact (Fractions), and two tidy frames
built from them (floats):

``batches``: one row per batch or final aggregation::

    query, batch, executor, start, end, first, last, size, cost, kind

``batch`` numbers a query's steps from 1; a batch covers tuples ``first..last`` (1-based) and
``size = last - first + 1``; the final aggregation (``kind = "aggregate"``) is the step after the
last batch, has no tuples (``first``/``last`` null) and ``size`` = the partial aggregates it merges.
``cost`` is the step's duration, ``end - start``.

``queries``: one row per query::

    query, n_batches, completion, deadline, late, tardiness, cost, normalized_cost, minbatch

``completion`` is the end of the aggregation (or of the single batch), ``tardiness =
max(0, completion - deadline)``, ``cost`` the sum of the query's step costs and
``normalized_cost = cost / Cost(N)`` (the paper's y-axis in Figs. 6-11); ``minbatch`` the
MinBatch size the scheme used (null when it used none).

``status`` is ``ok`` (a plan), ``no-plan`` (a heuristic found none: this proves nothing),
``infeasible`` (proven: only the exact DP and CP-SAT with K = N may say so) or ``unknown``
(a solver stopped without a plan).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cached_property
from typing import Any

import pandas as pd

from staleness_lab.intermittent.model import QuerySet
from staleness_lab.intermittent.numbers import show
from staleness_lab.jsonout import strict

STATUSES = ("ok", "no-plan", "infeasible", "unknown")
#: The CP-SAT planner's phase-1 objectives (:func:`staleness_lab.optimize.batch_plan.optimal_plan`):
#: here, with the plan format both the schemes and the planner import, so that checking the
#: option needs neither OR-Tools nor the schemes.
OBJECTIVES = ("misses", "tardiness")
#: The CP-SAT planner's methods (``optimal_plan(method=...)``), here for the same reason.
#: ``auto``, the default, is the one of the other two that :func:`chosen_method` picks.
METHODS = ("auto", "monolithic", "decomposition")
BATCH = "batch"
AGGREGATE = "aggregate"
BATCH_COLUMNS = ["query", "batch", "executor", "start", "end", "first", "last", "size", "cost", "kind"]
QUERY_COLUMNS = ["query", "n_batches", "completion", "deadline", "late", "tardiness", "cost", "normalized_cost", "minbatch"]


@dataclass(frozen=True)
class Step:
    """One batch (tuples ``first..last``) or final aggregation (over ``merged`` partials) of a
    query on an executor, from ``start`` to ``end``."""

    query: str
    executor: int
    start: Fraction
    end: Fraction
    first: int | None = None
    last: int | None = None
    merged: int = 0

    @property
    def kind(self) -> str:
        return BATCH if self.first is not None else AGGREGATE

    @property
    def size(self) -> int:
        return self.last - self.first + 1 if self.first is not None and self.last is not None else self.merged

    @property
    def cost(self) -> Fraction:
        return self.end - self.start


def batch(query: str, executor: int, start: Fraction, end: Fraction, first: int, last: int) -> Step:
    return Step(query=query, executor=executor, start=start, end=end, first=first, last=last)


def aggregate(query: str, executor: int, start: Fraction, end: Fraction, merged: int) -> Step:
    return Step(query=query, executor=executor, start=start, end=end, merged=merged)


@dataclass(frozen=True)
class BatchPlan:
    """A scheme's plan for a query set: its steps, its status and, for solvers, their report."""

    queryset: QuerySet
    scheme: str
    steps: tuple[Step, ...]
    status: str = "ok"
    reason: str = ""
    minbatch: dict[str, int] = field(default_factory=dict)
    solver: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        order = {name: k for k, name in enumerate(self.queryset.names)}
        unknown = sorted({s.query for s in self.steps} - set(order))
        if unknown:
            raise ValueError(f"steps of queries not in the query set: {', '.join(map(repr, unknown))}")
        steps = sorted(self.steps, key=lambda s: (s.start, order[s.query], s.first is None, s.first or 0))
        object.__setattr__(self, "steps", tuple(steps))

    def steps_of(self, query: str) -> list[Step]:
        """The steps of ``query``, in the plan's order (grouped once: a per-query scan of every
        step made the frames of thousands of queries quadratic)."""
        return list(self._by_query.get(query, ()))

    @cached_property
    def _by_query(self) -> dict[str, list[Step]]:
        grouped: dict[str, list[Step]] = defaultdict(list)
        for step in self.steps:
            grouped[step.query].append(step)
        return dict(grouped)

    @cached_property
    def batches(self) -> pd.DataFrame:
        rows = []
        counter: dict[str, int] = defaultdict(int)
        for step in sorted(self.steps, key=lambda s: (self.queryset.names[s.query], s.first is None, s.start)):
            counter[step.query] += 1
            rows.append({
                "query": step.query, "batch": counter[step.query], "executor": step.executor,
                "start": float(step.start), "end": float(step.end), "first": step.first, "last": step.last,
                "size": step.size, "cost": float(step.cost), "kind": step.kind,
            })
        frame = pd.DataFrame(rows, columns=BATCH_COLUMNS)
        for column in ("first", "last"):
            frame[column] = frame[column].astype("Int64")
        return frame.sort_values(["start", "query"], kind="stable").reset_index(drop=True)

    @cached_property
    def queries(self) -> pd.DataFrame:
        rows = []
        for query in self.queryset.queries:
            mine = self.steps_of(query.name)
            done = bool(mine)
            completion = max(s.end for s in mine) if done else None
            cost = sum((s.cost for s in mine), Fraction(0))
            rows.append({
                "query": query.name,
                "n_batches": sum(1 for s in mine if s.kind == BATCH),
                "completion": float(completion) if done else math.nan,
                "deadline": float(query.deadline),
                "late": bool(completion > query.deadline) if done else pd.NA,
                "tardiness": float(max(Fraction(0), completion - query.deadline)) if done else math.nan,
                "cost": float(cost) if done else math.nan,
                "normalized_cost": float(cost / query.min_cost) if done else math.nan,
                "minbatch": self.minbatch.get(query.name),
            })
        frame = pd.DataFrame(rows, columns=QUERY_COLUMNS)
        frame["late"] = frame["late"].astype("boolean")
        frame["minbatch"] = frame["minbatch"].astype("Int64")
        return frame

    @property
    def misses(self) -> int:
        """Queries whose result is late (unplanned queries do not count)."""
        return int(self.queries["late"].sum()) if self.status == "ok" else 0

    @property
    def late(self) -> set[str]:
        """The names of the queries whose result is late (unplanned queries are not)."""
        frame = self.queries
        return set(frame.loc[frame["late"].fillna(False).astype(bool), "query"])

    @property
    def total_cost(self) -> Fraction:
        """Σ of every step's cost, exact."""
        return sum((s.cost for s in self.steps), Fraction(0))

    @property
    def total_tardiness(self) -> Fraction:
        total = Fraction(0)
        for query in self.queryset.queries:
            mine = self.steps_of(query.name)
            if mine:
                total += max(Fraction(0), max(s.end for s in mine) - query.deadline)
        return total

    def to_json(self) -> dict[str, Any]:
        """The plan as the ``plan --json`` object (without ``version``), strict JSON (:func:`strict`), and
        ``misses`` and ``total_cost`` null unless there is a plan (status ``ok``)."""

        return {
            "status": self.status, "scheme": self.scheme, "reason": self.reason or None,
            "batches": strict(self.batches.to_dict(orient="records")),
            "queries": strict(self.queries.to_dict(orient="records")),
            "misses": self.misses if self.status == "ok" else None,
            "total_cost": float(self.total_cost) if self.status == "ok" else None, "solver": self.solver,
        }


def at_model_costs(plan: BatchPlan) -> BatchPlan:
    """``plan`` with every step lasting exactly its cost-model duration (``Cost(size)`` for a
    batch, ``AggCost(merged)`` for a final aggregation), each starting where it did.

    A solver on a time grid rounds each duration up (:mod:`staleness_lab.optimize.batch_plan`);
    shortening a step with its start kept frees its executor no later and ends its query no
    later, so the result passes :func:`check_plan` whenever ``plan`` does, misses no deadline
    ``plan`` meets, and its cost is what the heuristics' plans are priced in."""
    if plan.status != "ok":
        return plan
    qs = plan.queryset
    steps = []
    for step in plan.steps:
        query = qs.query(step.query)
        cost = query.cost(step.size) if step.kind == BATCH else query.agg_cost(step.merged)
        steps.append(replace(step, end=step.start + cost))
    return replace(plan, steps=tuple(steps))


def check_plan(qs: QuerySet, plan: BatchPlan) -> list[str]:
    """Every violation of the plan invariants (digest §9 check 9), as sentences; ``[]`` when the
    plan is sound. A plan with status other than ``ok`` must have no steps.

    * every step on an executor ``0 <= e < executors``, ``end >= start``, and no two steps
      overlapping on one executor (one batch at a time, non-preemptive);
    * a query's batches cover tuples ``1..N`` in order, each ending by the next one's start
      (eq. 6), and each holding only tuples arrived at its start: ``A(start) >= last`` (eq. 8);
    * a batch's duration is at least ``Cost(size)`` (a plan on a coarser grid may round it up;
      measured plans take whatever Spark took: :func:`check_measured_plan` skips this rule);
    * the final aggregation exactly when there are ``n >= 2`` batches, starting after the last one
      ends and lasting at least ``AggCost(n)``;
    * under MinBatch (``plan.minbatch`` set for the query) with ``c_max``: every non-final batch
      costs at most ``max(c_max, Cost(MinBatch))`` (A3 caps MinBatch at ``c_max`` unless even
      one tuple costs more).
    """
    return _violations(qs, plan, measured=False)


def check_measured_plan(qs: QuerySet, plan: BatchPlan) -> list[str]:
    """:func:`check_plan` without the cost-model duration rules (Spark's measured durations)."""
    return _violations(qs, plan, measured=True)


def _violations(qs: QuerySet, plan: BatchPlan, *, measured: bool) -> list[str]:
    out: list[str] = []
    if plan.status != "ok":
        return [f"status {plan.status!r} but {len(plan.steps)} steps"] if plan.steps else []
    by_executor: dict[int, list[Any]] = defaultdict(list)
    for step in plan.steps:
        if not 0 <= step.executor < qs.executors:
            out.append(f"{step.query}: executor {step.executor} outside 0..{qs.executors - 1}")
        if step.end < step.start:
            out.append(f"{step.query}: a step ends ({show(step.end)}) before it starts ({show(step.start)})")
        by_executor[step.executor].append(step)
    for executor, steps in by_executor.items():
        steps.sort(key=lambda s: (s.start, s.end))
        for a, b in zip(steps, steps[1:]):
            if b.start < a.end:
                out.append(f"executor {executor}: {a.query} [{show(a.start)}, {show(a.end)}) overlaps "
                           f"{b.query} [{show(b.start)}, {show(b.end)})")
    for query in qs.queries:
        mine = plan.steps_of(query.name)
        batches = sorted((s for s in mine if s.kind == BATCH), key=lambda s: s.first)
        aggs = [s for s in mine if s.kind == AGGREGATE]
        if not batches:
            out.append(f"{query.name}: no batches")
            continue
        expected = 1
        for k, step in enumerate(batches):
            if step.first != expected or step.last < step.first:
                out.append(f"{query.name}: batch {k + 1} covers tuples {step.first}..{step.last}, expected to start at {expected}")
            expected = step.last + 1
            arrived = query.arrivals.available(step.start)
            if arrived < step.last:
                out.append(f"{query.name}: batch {k + 1} starts at {show(step.start)} with tuples up to {step.last} "
                           f"but only {arrived} have arrived")
            if not measured and step.cost < query.cost(step.size):
                out.append(f"{query.name}: batch {k + 1} lasts {show(step.cost)} < Cost({step.size}) = {show(query.cost(step.size))}")
            if k + 1 < len(batches) and batches[k + 1].start < step.end:
                out.append(f"{query.name}: batch {k + 2} starts at {show(batches[k + 1].start)} before batch {k + 1} ends at {show(step.end)}")
            cap = plan.minbatch.get(query.name)
            if (cap is not None and qs.c_max is not None and not measured and k + 1 < len(batches)
                    and step.cost > max(qs.c_max, query.cost(cap))):
                out.append(f"{query.name}: non-final batch {k + 1} costs {show(step.cost)} > c_max {show(qs.c_max)}")
        if expected != query.n + 1:
            out.append(f"{query.name}: batches cover {expected - 1} tuples, N = {query.n}")
        n = len(batches)
        if n >= 2 and len(aggs) != 1:
            out.append(f"{query.name}: {n} batches need one final aggregation, found {len(aggs)}")
        if n == 1 and aggs:
            out.append(f"{query.name}: a single batch needs no final aggregation, found {len(aggs)}")
        for agg in aggs:
            last_end = max(s.end for s in batches)
            if agg.start < last_end:
                out.append(f"{query.name}: the aggregation starts at {show(agg.start)} before the last batch ends at {show(last_end)}")
            if agg.merged != n:
                out.append(f"{query.name}: the aggregation merges {agg.merged} partials, there are {n} batches")
            if not measured and agg.cost < query.agg_cost(n):
                out.append(f"{query.name}: the aggregation lasts {show(agg.cost)} < AggCost({n}) = {show(query.agg_cost(n))}")
    return out


def chosen_method(method: str, qs: QuerySet) -> str:
    """The planner's method that ``method`` names on ``qs``: ``auto`` is the decomposition when
    every query has an executor of its own (nothing is shared: each query is planned exactly by
    dynamic programming, proven in well under a second at the paper's N = 4,500, where the slot
    model ran out of 10 s unproven) and the slot model (``monolithic``) otherwise, where the
    decomposition is not always as good (on an A5 set of 6 queries at rho = 0.2 it kept 3 misses
    against the slot model's 2); any other name is itself."""
    if method != "auto":
        return method
    return "decomposition" if len(qs.queries) <= qs.executors else "monolithic"
