"""The batch planner's decomposition: per-query columns and a relaxed master over the executors.

A query's own batching is easy (one query, one executor: a DP); what is hard is queries sharing
executors. :func:`optimal_plan(..., method="decomposition")
<staleness_lab.optimize.batch_plan.optimal_plan>` splits the problem along that line. This module
holds the two pure pieces; :mod:`~staleness_lab.optimize.batch_plan` runs the loop.

**Columns.** On the planner's grid (every number in units of ``u``), a query's plan with ``n``
batches whose last batch holds ``L`` tuples has a *tail*: the last batch and the final aggregation,
which starts when it ends, one block of ``t = dur[L] + agg[n]`` units starting no earlier than the
last tuple's release ``W``, ending at the query's completion. Everything before it (the *head*,
``n - 1`` batches of the other ``N - L`` tuples) costs at least ``split[n-1][N-L]``, the cheapest
split of ``N - L`` tuples into exactly ``n - 1`` batches (a min-plus DP, :func:`split_layers`,
ignoring time). The column ``(n, L)`` carries ``(tail t, cost split + t, batches n)``; a column
no worse in all three than another makes the other useless (:func:`columns`).

Which columns are generated (nothing cheaper can be left out, so the relaxation stays a bound):

* when a plan is known that meets every deadline (phase 1 at 0, on the grid), every optimal plan
  meets them too and costs no more; so a column is kept only if its tail fits before the deadline
  (``t <= D - W``) and its cost leaves room for the other queries' cheapest columns
  (``cost <= UB - Σ_other min``): this is the pricing argument, exact because the bound on each
  query's cost is;
* otherwise every column, batch counts ``n = 1, 2, ...`` until a column already found dominates
  every column of any larger count (each batch lasts at least ``dur[1]``, ``agg`` never falls).

**The relaxed master** (:func:`relaxation`): one column per query (an index read by
``AddElement``), its tail an interval starting at ``s >= W`` under ``NoOverlap`` (one executor)
or ``Cumulative`` (m), late when it ends after D; and an energy cut per query: the heads of every
query whose tail starts no later than ``s_q`` (and, on one executor, those tails) run between the
first release and ``s_q``, so their work is at most ``m·(s_q - r0)``. Every plan maps onto a
solution of this model with the same misses, tardiness and batches and no more cost, so its
optimum is a lower bound on the full problem's (lexicographic: phase-1 value, cost, batches,
tardiness). Identical executors need no symmetry breaking: the master never names an executor.

**Realization** (in ``batch_plan``): the master's columns fixed, times free, solved by the
monolithic model restricted to them (head sizes free for linear costs at a fixed rate, the
column's cheapest split otherwise); when it reaches the master's key the plan is optimal for the
full problem. When it does not, the slot model takes the full problem with the time left, seeded
with the best plan. (A logic-based Benders cut on the combination would be valid only over every
column, dominated ones included; measured on A5 sets, that many columns made the master slower
than the slot model, so no cuts are made.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

#: "No split" in the min-plus tables.
_INF = np.iinfo(np.int64).max // 4


@dataclass(frozen=True)
class Column:
    """One query's plan shape: ``n`` batches, the last of ``last`` tuples; its tail (last batch and
    aggregation) lasts ``tail`` units and the whole plan costs at least ``cost`` (head ``head``
    sizes, the cheapest split)."""

    n: int
    last: int
    tail: int
    cost: int
    head: tuple[int, ...]


@dataclass(frozen=True)
class QueryGrid:
    """One query on the grid (units of ``u``): ``dur[x]``, ``agg[n]`` (n = 0..N), ``release``
    of its last tuple and of its first, and its deadline."""

    name: str
    n: int
    dur: list[int]
    agg: list[int]
    last_release: int
    first_release: int
    deadline: int


class SplitLayers:
    """``least(k)[r]``: the cheapest ``Σ dur`` of ``r`` tuples in exactly ``k`` batches, built
    layer by layer on demand (each layer O(N^2) in numpy), with the arguments to recover a split."""

    def __init__(self, dur: list[int], n: int) -> None:
        self.dur = np.array(dur, dtype=np.int64)
        self.n = n
        zero = np.full(n + 1, _INF, dtype=np.int64)
        zero[0] = 0
        self.layers: list[np.ndarray] = [zero]
        self.args: list[np.ndarray] = [np.zeros(n + 1, dtype=np.int64)]

    def least(self, k: int) -> np.ndarray:
        while len(self.layers) <= k:
            prev = self.layers[-1]
            layer = np.full(self.n + 1, _INF, dtype=np.int64)
            arg = np.zeros(self.n + 1, dtype=np.int64)
            j = len(self.layers)
            for r in range(j, self.n + 1):
                # the last batch of the r tuples holds x = r - p, p = j-1 .. r-1
                cand = prev[j - 1:r] + self.dur[r - np.arange(j - 1, r)]
                best = int(np.argmin(cand))
                layer[r], arg[r] = cand[best], best + j - 1
            self.layers.append(layer)
            self.args.append(arg)
        return self.layers[k]

    def split(self, k: int, r: int) -> tuple[int, ...]:
        """The sizes of a cheapest split of ``r`` tuples into ``k`` batches, in order."""
        sizes = []
        for j in range(k, 0, -1):
            p = int(self.args[j][r])
            sizes.append(r - p)
            r = p
        return tuple(reversed(sizes))


def columns(g: QueryGrid, *, max_cost: int | None, on_time: bool) -> list[Column]:
    """The undominated columns of one query (module docstring, "Columns"): with ``on_time`` only
    tails that fit before the deadline, with ``max_cost`` only columns costing no more."""
    n_tuples, dur, agg = g.n, g.dur, g.agg
    room = g.deadline - g.last_release
    layers = SplitLayers(dur, n_tuples)
    merges = subadditive(dur)
    found: list[tuple[int, int, int, int]] = []   # (tail, cost, n, last)
    for n in range(1, n_tuples + 1):
        least = floor_cost(layers, merges, n, dur, agg)  # no plan of n or more batches costs less ...
        if (max_cost is not None and least > max_cost) or (on_time and dur[1] + agg[n] > room):
            break                                      # ... nor has a shorter tail
        if n == 1:
            found.append((dur[n_tuples], dur[n_tuples], 1, n_tuples))
        else:
            heads = layers.least(n - 1)
            for last in range(1, n_tuples - n + 2):
                tail = dur[last] + agg[n]
                cost = int(heads[n_tuples - last]) + tail
                if (on_time and tail > room) or (max_cost is not None and cost > max_cost):
                    continue
                found.append((tail, cost, n, last))
        if n < n_tuples and _covers(found, dur[1] + agg[n + 1], floor_cost(layers, merges, n + 1, dur, agg)):
            break
    kept = _pareto(found)
    out = []
    for tail, cost, n, last in kept:
        head = layers.split(n - 1, n_tuples - last) if n > 1 else ()
        out.append(Column(n=n, last=last, tail=tail, cost=cost, head=head))
    return out


def subadditive(dur: list[int]) -> bool:
    """Whether ``dur[a + b] <= dur[a] + dur[b]`` for all sizes (true of every concave cost with
    S >= 0, and kept by rounding up: then merging two batches never costs more)."""
    d = np.array(dur, dtype=np.int64)
    n = len(dur) - 1
    return all(bool(np.all(d[a + a:n + 1] <= d[a] + d[a:n + 1 - a])) for a in range(1, n // 2 + 1))


def floor_cost(layers: SplitLayers, merges: bool, n: int, dur: list[int], agg: list[int]) -> int:
    """A lower bound on the cost of every plan with ``n`` or more batches: ``agg[n]`` plus, when
    merging never costs more, the cheapest split into exactly n (it grows with n), else ``n·dur[1]``."""
    if merges:
        return int(layers.least(n)[len(dur) - 1]) + agg[n]
    return n * dur[1] + agg[n]


def _covers(found: list[tuple[int, int, int, int]], tail: int, cost: int) -> bool:
    """Whether a column found so far has a tail of at most ``tail`` and costs at most ``cost``
    (it then dominates every column with more batches than those generated)."""
    return any(t <= tail and c <= cost for t, c, _, _ in found)


def _pareto(found: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """The columns no other one beats in tail, cost and batches (ties keep the first in order)."""
    found = sorted(found, key=lambda c: (c[0], c[1], c[2], c[3]))
    kept: list[tuple[int, int, int, int]] = []
    best: dict[int, int] = {}                     # batches -> least cost kept so far
    for col in found:
        _, cost, n, _ = col
        if any(m <= n and c <= cost for m, c in best.items()):
            continue
        kept.append(col)
        best[n] = min(cost, best.get(n, cost))
    return kept


@dataclass
class Relaxation:
    """The relaxed master's model and variables (module docstring)."""

    model: Any
    index: list[Any]
    start: list[Any]
    misses: Any
    tardiness: Any
    cost: Any
    batches: Any
    max_tardiness: int
    max_batches: int


def relaxation(grids: list[QueryGrid], cols: list[list[Column]], executors: int) -> Relaxation:
    """The relaxed master over ``cols`` (one list per query) on ``executors`` executors."""
    m = cp_model.CpModel()
    horizon = (max(max(g.last_release for g in grids), max(g.deadline for g in grids) + 1)
               + sum(max(c.cost for c in mine) for mine in cols) + 1)
    r0 = min(g.first_release for g in grids)
    index, start, ends, tails, heads, lates, tards, costs, counts = [], [], [], [], [], [], [], [], []
    intervals = []
    for k, (g, mine) in enumerate(zip(grids, cols)):
        idx = m.new_int_var(0, len(mine) - 1, f"{g.name}.column")
        tail = m.new_int_var(min(c.tail for c in mine), max(c.tail for c in mine), f"{g.name}.tail")
        cost = m.new_int_var(min(c.cost for c in mine), max(c.cost for c in mine), f"{g.name}.cost")
        count = m.new_int_var(min(c.n for c in mine), max(c.n for c in mine), f"{g.name}.n")
        m.add_element(idx, [c.tail for c in mine], tail)
        m.add_element(idx, [c.cost for c in mine], cost)
        m.add_element(idx, [c.n for c in mine], count)
        head = m.new_int_var(0, max(c.cost - c.tail for c in mine), f"{g.name}.head")
        m.add(head == cost - tail)
        s = m.new_int_var(g.last_release, horizon, f"{g.name}.s")
        e = m.new_int_var(0, horizon, f"{g.name}.e")
        intervals.append(m.new_interval_var(s, tail, e, f"{g.name}.tail_block"))
        late = m.new_bool_var(f"{g.name}.late")
        m.add(e <= g.deadline).only_enforce_if(~late)
        m.add(e >= g.deadline + 1).only_enforce_if(late)
        tard = m.new_int_var(0, horizon, f"{g.name}.tardiness")
        m.add(tard >= e - g.deadline)
        index.append(idx)
        start.append(s)
        ends.append(e)
        tails.append(tail)
        heads.append(head)
        lates.append(late)
        tards.append(tard)
        costs.append(cost)
        counts.append(count)
    if executors == 1:
        m.add_no_overlap(intervals)
    else:
        m.add_cumulative(intervals, [1] * len(intervals), min(executors, len(intervals)))
    most = [max(c.cost for c in mine) for mine in cols]   # a head plus its tail is a column's cost
    _energy(m, grids, start, heads, tails, executors, r0, most)
    max_tardiness = sum(max(0, horizon - g.deadline) for g in grids)
    return Relaxation(model=m, index=index, start=start, misses=sum(lates), tardiness=sum(tards), cost=sum(costs),
                      batches=sum(counts), max_tardiness=max_tardiness, max_batches=sum(max(c.n for c in mine)
                                                                                     for mine in cols))


def _energy(m: Any, grids: list[QueryGrid], start: list[Any], heads: list[Any], tails: list[Any],
            executors: int, r0: int, most: list[int]) -> None:
    """The energy cuts: before query q's tail starts, the executors have run q's head and every
    query r's head whose tail starts no later (on one executor, r's tail too, which then ends
    first): ``head_q + Σ_r [s_r <= s_q]·(head_r (+ tail_r)) <= m·(s_q - r0)``; ``most[r]`` bounds
    ``head_r + tail_r``."""
    for q in range(len(grids)):
        terms = [heads[q]]
        for r in range(len(grids)):
            if r == q:
                continue
            before = m.new_bool_var(f"before.{r}.{q}")
            m.add(start[r] >= start[q] + 1).only_enforce_if(~before)
            work = heads[r] + tails[r] if executors == 1 else heads[r]
            w = m.new_int_var(0, most[r], f"work.{r}.{q}")
            m.add(w == work).only_enforce_if(before)
            m.add(w == 0).only_enforce_if(~before)
            terms.append(w)
        m.add(sum(terms) <= executors * (start[q] - r0))


def least_any(dur: list[int]) -> int:
    """The cheapest ``Σ dur`` of all N tuples in any number of batches, time and aggregation
    ignored: a lower bound on the query's cost in every plan."""
    d = np.array(dur, dtype=np.int64)
    n = len(dur) - 1
    least = np.zeros(n + 1, dtype=np.int64)
    for c in range(1, n + 1):
        least[c] = np.min(least[:c] + d[c - np.arange(c)])
    return int(least[n])
