"""FindMinBatchSize (Chandrasekaran & Sudarshan §4.1; digest §2 A3, §3 C5, §8 reading 1).

The dynamic schedulers (:mod:`staleness_lab.intermittent.dispatch`) run a query only once its
available tuples reach a *minimum batch size* ``x``: small enough that the total cost stays within
the resource slack ``(1 + δRSF)·Cost(N)``, and each batch costs at most ``C_max`` (so an urgent
query waits at most ``C_max`` for the non-preemptive executor).

Readings, marked as in the digest ([R] the digest's reading of the paper, [D] our decision):

* [R] The paper gives no pseudocode. The reported sizes (180 = 4500/25, 1125 = 4500/4) point to a
  scan over equal splits: for ``k = 1..N`` take ``x_k = ceil(N/k)``, ``n_k = ceil(N/x_k)`` batches
  (the last holding ``N - (n_k - 1)·x_k`` tuples), and
  ``Tot(k) = (n_k - 1)·Cost(x_k) + Cost(N - (n_k - 1)·x_k) + AggCost(n_k)``.
  ``k*`` is the largest ``k`` with ``Tot(k) <= (1 + δRSF)·Cost(N)`` and ``x = x_{k*}``.
* [R] The bound is ``(1 + δRSF)·Cost(N)``, not the paper's literal ``δRSF·Cost(N)``: at δRSF = 50 %
  the literal bound is below the single-batch cost and cannot be met; the reported normalized
  costs (1.5 at 50 %, 2 at 100 %) fix the multiplier.
* [R] The C_max conflict is not covered by the paper: if ``Cost(x) > C_max``, cap
  ``x = max{y : Cost(y) <= C_max}`` and flag "δRSF bound violated" (the capped split may cost
  more than the bound: E5's C, 53 > 51). If even ``Cost(1) > C_max``, use ``x = 1`` and flag.
  ``c_max = None`` means no cap.
* [D] Speed: ``Tot(k)`` depends on ``k`` only through ``x_k``, and a larger ``k`` gives a smaller
  (or equal) ``x_k``; so the largest qualifying ``k`` is the one with the smallest qualifying
  ``x_k``, and scanning the ``O(sqrt N)`` distinct values of ``ceil(N/k)`` gives exactly the
  full scan's answer (about 130 cost evaluations at N = 4500).
* [D] The paper's guideline "MinBatch >= 2 × the number of groups" (line 198) needs group counts,
  which the model does not carry; it is left to whoever builds the cost model.

C5: when the result is not flagged, batches of exactly ``size`` tuples cost ``total <=
(1 + δRSF)·Cost(N)`` and each costs ``<= C_max``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from staleness_lab.intermittent.costs import AggCost, BatchCost, est
from staleness_lab.intermittent.model import Query
from staleness_lab.intermittent.numbers import exact

#: The flag's meaning, for reports.
FLAG = "δRSF bound violated (MinBatch capped at c_max)"


@dataclass(frozen=True)
class MinBatch:
    """A query's MinBatch: ``size`` tuples, ``batches = ceil(N/size)`` equal splits, their
    ``total = Tot`` (cost of every batch plus ``AggCost(batches)``), and ``flagged`` when the
    C_max cap overrode the δRSF choice (:data:`FLAG`)."""

    size: int
    batches: int
    total: Fraction
    flagged: bool


def split_total(query: Query, size: int) -> tuple[int, Fraction]:
    """``(n, Tot)`` of ``query``'s ``N`` tuples in batches of ``size`` (the last one smaller):
    ``n = ceil(N/size)``, ``Tot = (n-1)·Cost(size) + Cost(N - (n-1)·size) + AggCost(n)``."""
    return _split_total(query.n, query.cost, query.agg_cost, size)


def _split_total(n_total: int, cost: BatchCost, agg_cost: AggCost, size: int) -> tuple[int, Fraction]:
    n = -(-n_total // size)
    return n, (n - 1) * cost(size) + cost(n_total - (n - 1) * size) + agg_cost(n)


def _split_sizes(n_total: int) -> list[int]:
    """The distinct values of ``ceil(N/k)`` for ``k = 1..N``, smallest first."""
    sizes: set[int] = set()
    k = 1
    while k <= n_total:
        x = -(-n_total // k)
        sizes.add(x)
        # the largest k' with ceil(N/k') == x is floor((N-1)/(x-1)) for x >= 2; x == 1 ends the scan
        k = n_total + 1 if x == 1 else (n_total - 1) // (x - 1) + 1
    return sorted(sizes)


def find_min_batch(query: Query, delta_rsf: Fraction | float, c_max: Fraction | float | None) -> MinBatch:
    """FindMinBatchSize(q, δRSF, C_max) as digest A3 (module docstring)."""
    delta = exact(delta_rsf, "delta_rsf", ge=0)
    cap = None if c_max is None else exact(c_max, "c_max", gt=0)
    return _min_batch(query.n, query.cost, query.agg_cost, delta, cap)


@lru_cache(maxsize=4096)
def _min_batch(n_total: int, cost: BatchCost, agg_cost: AggCost, delta: Fraction, cap: Fraction | None) -> MinBatch:
    """:func:`find_min_batch` on what it depends on, once per process: a MinBatch depends on a
    query's size and costs only, never on its arrivals or deadline, and every row of Figs. 7-11
    asks it again for the same 13 queries (about 130 cost evaluations each at N = 4500)."""
    bound = (1 + delta) * cost(n_total)
    chosen = n_total  # k = 1: one batch, Tot = Cost(N) <= bound always
    for size in _split_sizes(n_total):
        if _split_total(n_total, cost, agg_cost, size)[1] <= bound:
            chosen = size
            break
    flagged = False
    if cap is not None and cost(chosen) > cap:
        flagged = True
        chosen = max(1, est(cost, cap, n_total))
    n, total = _split_total(n_total, cost, agg_cost, chosen)
    return MinBatch(size=chosen, batches=n, total=total, flagged=flagged)
