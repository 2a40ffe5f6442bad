"""Queries and query sets (paper Table 1, digest §1), validated and immutable, with YAML/JSON I/O.

A query set file::

    executors: 1          # shared executors m (the paper: 1; m > 1 is this project's extension)
    delta_rsf: 0.5        # MinBatch's relative slack: total cost <= (1 + delta_rsf) * Cost(N) (A3)
    c_max: 10             # optional: the largest cost of one non-final batch (seconds)
    time_unit: 0.1        # the CP-SAT planner's time grid (seconds)
    queries:
      - name: A
        arrivals: {ws: 1, rate: 1, N: 100}       # or {profile: [[time, count], ...]} ending at N
        deadline: 118.8                           # D: the final result is due; must be > we
        cost: {kind: linear, S: 2, R: 0.2}        # staleness_lab.intermittent.costs
        agg_cost: {kind: linear, a0: 0.5, a1: 0.5}   # optional, default {kind: none}

Every rule broken raises :class:`~staleness_lab.errors.InputError` naming the field
(``queries[2].deadline``) and the rule; the CLI prints it as one line and exits 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.intermittent.arrivals import Arrivals, parse_arrivals
from staleness_lab.intermittent.costs import NO_AGG, AggCost, BatchCost, TableCost, parse_agg_cost, parse_cost
from staleness_lab.intermittent.numbers import exact, show
from staleness_lab.model.values import check_keys, require_mapping
from staleness_lab.paths import safe_name

QUERY_KEYS = {"name", "arrivals", "deadline", "cost", "agg_cost"}
QUERY_REQUIRED = {"name", "arrivals", "deadline", "cost"}
SET_KEYS = {"executors", "delta_rsf", "c_max", "time_unit", "queries"}
DEFAULT_DELTA_RSF = Fraction(1, 2)
DEFAULT_TIME_UNIT = Fraction(1, 10)


@dataclass(frozen=True)
class Query:
    """One intermittent query: its window's arrivals, deadline ``D``, ``Cost(x)`` and ``AggCost(n)``."""

    name: str
    arrivals: Arrivals
    deadline: Fraction
    cost: BatchCost
    agg_cost: AggCost = NO_AGG

    def __post_init__(self) -> None:
        safe_name(self.name, "name")  # a path component of a run's partials and results, and of cost models
        object.__setattr__(self, "deadline", exact(self.deadline, "deadline"))
        if self.deadline <= self.we:
            raise InputError("deadline", f"must be after the window end we = {show(self.we)}, got {show(self.deadline)}")
        if isinstance(self.cost, TableCost) and len(self.cost.values) < self.n:
            raise InputError("cost.values", f"must cover every batch size up to N = {self.n}, has {len(self.cost.values)}")
        if not self.cost(1) > 0:
            raise InputError("cost", "a batch must cost something: Cost(1) must be > 0 (the plans' normalized cost "
                             "divides by Cost(N), and a free batch has no place on an executor)")

    @property
    def n(self) -> int:
        """``N``: tuples in the window."""
        return self.arrivals.n

    @property
    def ws(self) -> Fraction:
        return self.arrivals.ws

    @property
    def we(self) -> Fraction:
        """The window end: the last tuple's arrival, ``InputTime(N)``."""
        return self.arrivals.we

    @property
    def min_cost(self) -> Fraction:
        """``Cost(N)``: one batch of the whole window (Table 1's minCompCost)."""
        return self.cost(self.n)

    def total_cost(self, sizes: list[int]) -> Fraction:
        """``Σ Cost(x_i) + AggCost(n)`` of batches of these sizes."""
        return sum((self.cost(x) for x in sizes), Fraction(0)) + self.agg_cost(len(sizes))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "arrivals": self.arrivals.to_dict(), "deadline": float(self.deadline),
            "cost": self.cost.to_dict(), "agg_cost": self.agg_cost.to_dict(),
        }


@dataclass(frozen=True)
class QuerySet:
    """Queries sharing ``executors`` executors, with MinBatch's ``delta_rsf`` and ``c_max`` and
    the CP-SAT grid ``time_unit``."""

    queries: tuple[Query, ...]
    executors: int = 1
    delta_rsf: Fraction = DEFAULT_DELTA_RSF
    c_max: Fraction | None = None
    time_unit: Fraction = DEFAULT_TIME_UNIT
    names: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.queries:
            raise InputError("queries", "must list at least one query")
        names: dict[str, int] = {}
        for k, query in enumerate(self.queries):
            if query.name in names:
                raise InputError(f"queries[{k}].name", f"duplicate query name {query.name!r}")
            names[query.name] = k
        object.__setattr__(self, "names", names)
        if isinstance(self.executors, bool) or not isinstance(self.executors, int) or self.executors < 1:
            raise InputError("executors", f"must be an integer >= 1, got {self.executors!r}")
        object.__setattr__(self, "delta_rsf", exact(self.delta_rsf, "delta_rsf", ge=0))
        if self.c_max is not None:
            object.__setattr__(self, "c_max", exact(self.c_max, "c_max", gt=0))
        object.__setattr__(self, "time_unit", exact(self.time_unit, "time_unit", gt=0))

    def query(self, name: str) -> Query:
        return self.queries[self.names[name]]

    def with_overrides(self, **changes: Any) -> QuerySet:
        """A copy with some fields replaced (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "executors": self.executors, "delta_rsf": float(self.delta_rsf), "time_unit": float(self.time_unit),
            "queries": [q.to_dict() for q in self.queries],
        }
        if self.c_max is not None:
            data["c_max"] = float(self.c_max)
        return data


def parse_query(data: Any, field: str) -> Query:
    """One query from its mapping; errors name ``field.<key>``."""
    check_keys(require_mapping(data, field), field, allowed=QUERY_KEYS, required=QUERY_REQUIRED)
    agg = parse_agg_cost(data["agg_cost"], f"{field}.agg_cost") if "agg_cost" in data else NO_AGG
    try:
        return Query(
            name=data["name"], arrivals=parse_arrivals(data["arrivals"], f"{field}.arrivals"),
            deadline=exact(data["deadline"], f"{field}.deadline", ge=0),
            cost=parse_cost(data["cost"], f"{field}.cost"), agg_cost=agg,
        )
    except InputError as err:
        if err.field.startswith(field):
            raise
        raise InputError(f"{field}.{err.field}", err.rule) from None


def parse_queryset(data: Any) -> QuerySet:
    """A :class:`QuerySet` from a mapping as found in a YAML/JSON file (module docstring)."""
    check_keys(require_mapping(data, "query set"), "", allowed=SET_KEYS, required=set())
    raw = data.get("queries")
    if not isinstance(raw, list) or not raw:
        raise InputError("queries", "must be a non-empty list of queries")
    queries = tuple(parse_query(q, f"queries[{k}]") for k, q in enumerate(raw))
    options: dict[str, Any] = {}
    for key in ("executors", "delta_rsf", "c_max", "time_unit"):
        if key in data and data[key] is not None:
            options[key] = data[key]
    return QuerySet(queries=queries, **options)


def load_queryset(path: str | Path) -> QuerySet:
    """Read and validate a query set file (``.json`` as JSON, anything else as YAML)."""
    from staleness_lab.model.io import read_document

    return parse_queryset(read_document(path, "query set"))
