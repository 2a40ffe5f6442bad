"""Experiment deadlines (digest §2 A5) and the C7 necessary condition (digest §3 C7, correction 3).

**A5, the deadline generator (paper §7.4)** [R]. The paper calls the factor δ; the digest (and this
module) calls it ρ, and Fig. 7's "xD" labels are ρ = x. Take the queries in an order (a seeded
random permutation unless given: the first query is random) and chain them::

    D_1 = we_1 + ρ·Cost_1(N_1) + C_max
    D_i = we_i + ρ·Cost_i(N_i) + C_max     if we_i > D_{i-1}
        = D_{i-1} + ρ·Cost_i(N_i)          otherwise              (i = 2..n)

* [D] The deadlines come back in the queries' own order (not the generation order).
* [D] ``order[i]`` is the position (in ``queries``) of the ``i``-th query to receive a deadline;
  the seeded permutation is ``numpy.random.default_rng(seed).permutation(n)``.
* [D] :func:`with_deadlines` takes C_max from the query set; a set without one uses 0. A
  deadline that does not fall after the window end (``Query`` requires ``D > we``: only possible
  with ρ·Cost(N) + C_max = 0) raises :class:`InputError` naming ``queries[k].deadline``.

**C7, a necessary condition for meeting every deadline** (paper line 477, digest C7). With the last
batches fixed as in MinBatch plans, the last batch of a query cannot start before its window end:
it holds the ``N - (n-1)·x`` tuples left by ``n - 1`` MinBatches of ``x`` tuples, followed by the
final aggregation. So, for queries sharing the window end ``we`` on one executor,
``Σ_q lastWork_q <= max_q D_q - we`` with ``lastWork_q = Cost(N - (n-1)·x) + AggCost(n)``.
(Correction 3: this shows a MinBatch plan cannot meet every deadline, not that no plan can.)

* [D] Different window ends: every last batch of a query with ``we_q >= T`` runs inside
  ``[T, max D]`` of those queries, so for each threshold ``T`` in the set of window ends the
  condition is checked over the group ``{q : we_q >= T}``:
  ``Σ_group lastWork <= m·(max_group D - T)``. With one common window end this is exactly the
  digest's condition; the group with the latest ``we`` is one of those checked.
* [D] ``m`` executors (our extension) multiply the available time by ``m`` (the total work
  in the interval is at most ``m`` times its length); with one executor it is the paper's form.
* [D] The result reports the tightest group: the most violated one, or, when every group holds,
  the one with the smallest margin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from staleness_lab.errors import InputError
from staleness_lab.intermittent.minbatch import find_min_batch
from staleness_lab.intermittent.model import Query, QuerySet
from staleness_lab.intermittent.numbers import exact, show


def _order(count: int, order: Sequence[int] | None, seed: int) -> list[int]:
    if order is None:
        return [int(k) for k in np.random.default_rng(seed).permutation(count)]
    chosen = [int(k) for k in order]
    if sorted(chosen) != list(range(count)):
        raise InputError("order", f"must be a permutation of 0..{count - 1}, got {list(order)!r}")
    return chosen


def a5_deadlines(queries: Sequence[Query], rho: Fraction | float, c_max: Fraction | float | None,
                 order: Sequence[int] | None = None, seed: int = 0) -> list[Fraction]:
    """A5's deadline for each query, in the queries' order (module docstring); ``c_max = None``
    counts as 0."""
    factor = exact(rho, "rho", ge=0)
    slack = Fraction(0) if c_max is None else exact(c_max, "c_max", ge=0)
    deadlines: list[Fraction | None] = [None] * len(queries)
    previous: Fraction | None = None
    for k in _order(len(queries), order, seed):
        query = queries[k]
        work = factor * query.min_cost
        if previous is None or query.we > previous:
            current = query.we + work + slack
        else:
            current = previous + work
        deadlines[k] = current
        previous = current
    return [d for d in deadlines if d is not None]


def with_deadlines(qs: QuerySet, rho: Fraction | float, order: Sequence[int] | None = None, seed: int = 0) -> QuerySet:
    """A copy of ``qs`` whose deadlines come from A5 (C_max from ``qs``, 0 when unset)."""
    deadlines = a5_deadlines(qs.queries, rho, qs.c_max, order, seed)
    queries = []
    for k, (query, deadline) in enumerate(zip(qs.queries, deadlines)):
        try:
            queries.append(replace(query, deadline=deadline))
        except InputError as err:
            raise InputError(f"queries[{k}].{err.field}", err.rule) from None
    return qs.with_overrides(queries=tuple(queries))


@dataclass(frozen=True)
class C7Result:
    """The C7 check: ``holds`` when ``last_work <= available`` for every group; ``last_work`` and
    ``available`` are those of the tightest group, which ``detail`` names."""

    holds: bool
    last_work: Fraction
    available: Fraction
    detail: str


def last_work(query: Query, size: int) -> Fraction:
    """The work after the window end in a MinBatch plan of batches of ``size``: the last batch,
    ``N - (n-1)·size`` tuples with ``n = ceil(N/size)``, plus ``AggCost(n)``."""
    if size < 1:
        raise InputError("minbatch", f"{query.name}: MinBatch must be >= 1, got {size}")
    size = min(size, query.n)
    n = -(-query.n // size)
    return query.cost(query.n - (n - 1) * size) + query.agg_cost(n)


def c7(qs: QuerySet, minbatch: Mapping[str, int] | None = None) -> C7Result:
    """C7 (module docstring) over ``qs`` with these MinBatch sizes (default: A3's, from the set's
    δRSF and C_max)."""
    sizes: dict[str, int] = {}
    for query in qs.queries:
        if minbatch is not None and query.name in minbatch:
            sizes[query.name] = int(minbatch[query.name])
        else:
            sizes[query.name] = find_min_batch(query, qs.delta_rsf, qs.c_max).size
    work = {q.name: last_work(q, sizes[q.name]) for q in qs.queries}
    best: tuple[Fraction, Fraction, Fraction, str] | None = None  # (margin, work, available, detail)
    for threshold in sorted({q.we for q in qs.queries}):
        group = [q for q in qs.queries if q.we >= threshold]
        total = sum((work[q.name] for q in group), Fraction(0))
        latest = max(q.deadline for q in group)
        available = qs.executors * (latest - threshold)
        margin = available - total
        terms = " + ".join(f"{q.name} {show(work[q.name])}" for q in group)
        scale = f"{qs.executors}·" if qs.executors > 1 else ""
        detail = (f"last work {terms} = {show(total)} {'<=' if margin >= 0 else '>'} "
                  f"{scale}(max D {show(latest)} - we {show(threshold)}) = {show(available)}")
        if best is None or margin < best[0]:
            best = (margin, total, available, detail)
    assert best is not None
    margin, total, available, detail = best
    return C7Result(holds=margin >= 0, last_work=total, available=available, detail=detail)
