"""The batch planner's decomposition: per-query columns and a relaxed master over the executors.

A query's own batching is easy (one query, one executor: a DP); what is hard is queries sharing
executors. :func:`optimal_plan(..., method="decomposition")
<staleness_lab.optimize.batch_plan.optimal_plan>` splits the problem along that line. This module
holds the two pure pieces; :mod:`~staleness_lab.optimize.batch_plan` runs the loop.

**Columns.** On the planner's grid (every number in units of ``u``), a query's plan with ``n``
batches whose last batch holds ``L`` tuples has a *tail*: the last batch and the final aggregation,
which starts when it ends, one block of ``t = dur[L] + agg[n]`` units starting no earlier than the
last tuple's release ``W``, ending at the query's completion. Everything before it (the *head*,
``n - 1`` batches of the other ``N - L`` tuples, each as early as its last tuple's release and the
batch before allow) costs at least the cheapest split of ``N - L`` tuples into ``n - 1`` batches
and ends no sooner than the earliest such split can (:class:`HeadLayers`: a min-plus DP over
(cost, end) and one over (end, cost), exact because a batch's end never falls with the end before
it). A column ``(n, L)`` carries its tail, its cost bound and ``ready``, the earliest its tail can
start (the later of W and the head's end): the cheapest head with its end (a plan: the column is
*exact*), and, when a head ending sooner exists, a second column ready then and costing one unit
more (every head that ends sooner costs more; a plan when the sooner head costs exactly that).
The head's last batch starts no sooner than tuple ``N - L``'s release and lasts at least
``dur[N - L]`` (n = 2) or ``dur[1]``. A column no worse in tail, cost, batches and readiness than
another takes the other's place, with the least of both heads' bounds (:func:`columns`).

Which columns are generated (nothing cheaper can be left out, so the relaxation stays a bound):

* when a plan is known that meets every deadline (phase 1 at 0, on the grid), every optimal plan
  meets them too and costs no more; so a column is kept only if its tail can end by the deadline
  (``ready + t <= D``) and its cost leaves room for the other queries' cheapest columns
  (``cost <= UB - Σ_other min``): this is the pricing argument, exact because the bound on each
  query's cost is;
* otherwise every column, batch counts ``n = 1, 2, ...`` until a column already found beats every
  column of any larger count (each batch lasts at least ``dur[1]``, ``agg`` never falls), save in
  its head, which is then bounded by what those heads take at least: their work, and a last
  batch that starts at tuple n's release and lasts ``dur[1]``.

**The relaxed master** (:func:`relaxation`): one column per query (an index read by
``AddElement``), its tail an interval starting at ``s >= ready`` and the head's last batch an
optional interval before it (from its release, at least its length, ending no sooner than the
head can), all under ``NoOverlap`` (one executor) or ``Cumulative`` (m); a query is late when its
tail ends after D; and an energy cut per query: the heads of every query whose tail starts no
later than ``s_q`` (and, on one executor, those tails) run between the first release and ``s_q``,
so their work is at most ``m·(s_q - r0)``. Every plan maps onto a solution of this model with the
same misses, tardiness and batches and no more cost, so its optimum is a lower bound on the full
problem's (lexicographic: phase-1 value, cost, batches, tardiness). Identical executors need no
symmetry breaking: the master never names an executor.

**Which grid.** ``batch_plan`` builds the columns and the master on the *bound grid*
(:mod:`~staleness_lab.optimize.true_bounds`: durations and releases rounded down, or exact), so
the master's bounds hold for the true costs; its plans are realized on the planner's grid
(rounded up). Nothing here depends on the rounding: every argument above holds on any grid whose
durations never fall with the batch size and whose aggregation never falls from n = 2 on, which
both roundings keep. The column DPs ask a ``stop`` callback between batch counts and give up
(:class:`OutOfTime`) when the call's budget is spent.

**Queries on executors of their own** (no more queries than executors, one query in particular):
nothing is shared, so :mod:`~staleness_lab.optimize.one_query` plans each query exactly by DP and
the sum is the optimum, proven without CP-SAT.

**Realization** (in ``batch_plan``): the master's columns fixed, times free, solved by the
monolithic model restricted to them on the planner's grid (head sizes free for linear costs at a
fixed rate, the column's cheapest split otherwise); when the plan's true key reaches the master's
the plan is optimal for the full problem. The master's solves leave a quarter of the budget for
this. When a plan on time is known the master's phase 1 is 0 without a solve (nothing is below
0, and that plan maps onto the columns).

**Repair.** The master's columns together are often late: its head bounds are loose (merged
columns keep the least of their heads' bounds), so it lets heads share the window's last
minutes. One at a time they often fit: starting from the incumbent (or the hint, when the
incumbent already is the columns together), each query in turn gets its column's batch sizes
(the column's head, else the cheapest head of its batch count and last size), late queries
first, then the largest saving; the slot model sequences the fixed sizes, and a plan better by
its true key is kept. Measured on A5 sets at ρ = 0.4, this found plans with no miss where the
heuristics, the columns together and 60 s of the slot model had one.

When the gap stays open, the slot model takes the full problem with the time left, seeded
with the best plan. (A logic-based Benders cut on the combination would be valid only over every
column, dominated ones included; measured on A5 sets, that many columns made the master slower
than the slot model, so no cuts are made.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from ortools.sat.python import cp_model

#: "No split" in the min-plus tables.
_INF = np.iinfo(np.int64).max // 4
#: "Free from the start": below every time on the grid.
_NEVER = -(1 << 40)
#: Columns per query kept whole; past it, beaten ones are merged (:func:`_pareto`).
COLUMN_CAP = 40


class OutOfTime(Exception):
    """The call's wall-clock budget ran out while columns were built (they are then incomplete,
    so no relaxation may be built on them)."""


@dataclass(frozen=True)
class Column:
    """One query's plan shape: ``n`` batches, the last of ``last`` tuples; its tail (last batch and
    aggregation) lasts ``tail`` units, the whole plan costs at least ``cost``, and the head (the
    other batches) ends no sooner than ``head_end``, so the tail starts no sooner than ``ready``
    (the later of that and the last release). ``head`` is a head of exactly that cost and end
    (then the bounds are a plan: the column is *exact*), or None when they are only bounds.
    ``head_release`` and ``head_last``: the head's last batch starts no sooner than the former
    and lasts at least the latter (``n >= 2``); ``work``: the head runs at least this long (its
    cost, or less where columns were merged)."""

    n: int
    last: int
    tail: int
    cost: int
    head: tuple[int, ...] | None
    ready: int = 0
    head_end: int = _NEVER
    head_release: int = 0
    head_last: int = 0
    work: int = -1

    def __post_init__(self) -> None:
        if self.work < 0:  # the least work of the head before the tail: its cost, unless lowered
            object.__setattr__(self, "work", self.cost - self.tail)


@dataclass(frozen=True)
class QueryGrid:
    """One query on the grid (units of ``u``): ``dur[x]``, ``agg[n]`` (n = 0..N), the release
    ``release[c]`` of tuple c (c = 1..N; ``release[0]`` unused) and its deadline."""

    name: str
    n: int
    dur: list[int]
    agg: list[int]
    release: list[int]
    deadline: int

    @property
    def last_release(self) -> int:
        return self.release[self.n]

    @property
    def first_release(self) -> int:
        return self.release[1]


class HeadLayers:
    """Per batch count ``k``, over the first ``r`` tuples of one query (all on the grid), built
    layer by layer on demand (each layer O(N^2), compiled):

    * ``cheap(k)``: ``(least, finish, arg)``: ``least[r]`` the cheapest ``Σ dur`` of ``r`` tuples
      in exactly ``k`` batches and ``finish[r]`` the earliest a split of that cost ends when every
      batch starts as early as its last tuple's release and the batch before allow (lexicographic
      (cost, finish): the cost adds up and the finish never falls with an earlier one before it,
      so the DP is exact);
    * ``soon(k)``: ``(earliest, cost, arg)``: the earliest any split into ``k`` batches ends so,
      and the least cost of such a split (lexicographic (finish, cost)).

    :meth:`split` gives either split's sizes from the arguments."""

    def __init__(self, dur: list[int], release: list[int]) -> None:
        self.dur = np.array(dur, dtype=np.int64)
        self.release = np.array(release, dtype=np.int64)
        self.n = len(dur) - 1
        size = self.n + 1
        cost0 = np.full(size, _INF, dtype=np.int64)
        cost0[0] = 0
        finish0 = np.full(size, _INF, dtype=np.int64)
        finish0[0] = _NEVER
        zero = np.zeros(size, dtype=np.int64)
        self.cheaps: list[tuple[np.ndarray, ...]] = [(cost0, finish0, zero)]
        self.soons: list[tuple[np.ndarray, ...]] = [(finish0, cost0, zero)]
        self.plains: list[np.ndarray] = [cost0]

    def cheap(self, k: int) -> tuple[np.ndarray, ...]:
        while len(self.cheaps) <= k:
            self.cheaps.append(self._next(self.cheaps[-1], len(self.cheaps), by_cost=True))
        return self.cheaps[k]

    def soon(self, k: int) -> tuple[np.ndarray, ...]:
        while len(self.soons) <= k:
            self.soons.append(self._next(self.soons[-1], len(self.soons), by_cost=False))
        return self.soons[k]

    @property
    def built(self) -> int:
        """Layers built so far (the work done)."""
        return len(self.cheaps) + len(self.soons) + len(self.plains) - 3

    def _next(self, prev: tuple[np.ndarray, ...], j: int, *, by_cost: bool) -> tuple[np.ndarray, ...]:
        """Layer ``j`` from layer ``j - 1``: cost first (``by_cost``) or finish first."""
        cost_prev, finish_prev = (prev[0], prev[1]) if by_cost else (prev[1], prev[0])
        return _layer(self.dur, self.release, cost_prev, finish_prev, j, by_cost)

    def least_at(self, k: int, r: int) -> int:
        """``least(k)[r]`` from layer ``k - 1`` alone (no layer ``k`` built)."""
        if k == 0:
            return 0 if r == 0 else _INF
        if r < k:
            return _INF
        prev = self.cheaps[k - 1][0] if len(self.cheaps) >= k else self._plain(k - 1)
        return int((prev[k - 1:r] + self.dur[r - np.arange(k - 1, r)]).min())

    def _plain(self, k: int) -> np.ndarray:
        """``least`` of layer ``k`` alone (no finish, no arguments): the cheaper floor of a count."""
        while len(self.plains) <= k:
            self.plains.append(_plain_layer(self.dur, self.plains[-1], len(self.plains)))
        return self.plains[k]

    def split(self, k: int, r: int, *, soonest: bool = False) -> tuple[int, ...]:
        """The sizes of the cheapest split of ``r`` tuples into ``k`` batches (with ``soonest``,
        of the earliest-ending one), in order."""
        sizes = []
        for j in range(k, 0, -1):
            p = int((self.soon(j) if soonest else self.cheap(j))[2][r])
            sizes.append(r - p)
            r = p
        return tuple(reversed(sizes))


@njit(cache=True)
def _layer(dur: np.ndarray, release: np.ndarray, cost_prev: np.ndarray, finish_prev: np.ndarray, j: int,
           by_cost: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """:meth:`HeadLayers._next`'s layer ``j``: per r >= j, over the last batch's first tuple q + 1
    (q = j-1 .. r-1), the least (cost, finish) (or, without ``by_cost``, (finish, cost)) of layer
    j - 1 at q plus a batch of r - q tuples started at max(finish, release[r]), the first q of
    the least; in O(N^2) compiled (a layer of a paper-scale query in about 30 ms, not 0.1 s)."""
    n = dur.shape[0] - 1
    first = np.full(n + 1, _INF, dtype=np.int64)
    second = np.full(n + 1, _INF, dtype=np.int64)
    arg = np.full(n + 1, _INF, dtype=np.int64)
    for r in range(j, n + 1):
        best_a, best_b, pick = 0, 0, -1
        for q in range(j - 1, r):
            d = dur[r - q]
            cost = cost_prev[q] + d
            finish = max(finish_prev[q], release[r]) + d
            a, b = (cost, finish) if by_cost else (finish, cost)
            if pick < 0 or a < best_a or (a == best_a and b < best_b):
                best_a, best_b, pick = a, b, q
        first[r], second[r], arg[r] = best_a, best_b, pick
    return first, second, arg


@njit(cache=True)
def _plain_layer(dur: np.ndarray, prev: np.ndarray, j: int) -> np.ndarray:  # pragma: no cover - compiled
    """:meth:`HeadLayers._plain`'s layer ``j``: per r >= j the least ``prev[q] + dur[r - q]``
    over q = j-1 .. r-1."""
    n = dur.shape[0] - 1
    layer = np.full(n + 1, _INF, dtype=np.int64)
    for r in range(j, n + 1):
        best = prev[j - 1] + dur[r - j + 1]
        for q in range(j, r):
            here = prev[q] + dur[r - q]
            if here < best:
                best = here
        layer[r] = best
    return layer


def compile_tables() -> None:
    """Compile (or load from their cache) the compiled parts of a query's columns (the least
    splits, the head layers, the Pareto sieve) on a two-tuple query, so no planner call pays
    their compilation (about 7 s) inside its time limit (``make setup`` calls it through
    :func:`staleness_lab.api.warm`)."""
    layers = HeadLayers([0, 1, 2], [0, 1, 2])
    layers.cheap(1)
    layers.soon(1)
    layers._plain(1)
    least_splits([0, 1, 2])
    _pareto([Column(n=1, last=2, tail=2, cost=2, head=()), Column(n=2, last=1, tail=1, cost=2, head=(1,))], cap=1)


def columns(g: QueryGrid, *, max_cost: int | None, on_time: bool, most: int | None = None,
            layers: HeadLayers | None = None, stop: Callable[[], bool] | None = None) -> list[Column]:
    """The undominated columns of one query (module docstring, "Columns"): with ``on_time`` only
    tails that can end by the deadline, with ``max_cost`` only columns costing no more; with
    ``most``, columns of at most that many batches and one *wide* column (``last = 0``, a bound,
    never a plan) standing for every plan of more (:func:`wide`). ``layers``: the query's DP
    tables, kept between calls. ``stop`` is asked before each batch count (each costs one or two
    DP layers): when it says so, :class:`OutOfTime` is raised."""
    n_tuples, dur, agg, release = g.n, g.dur, g.agg, g.release
    top, room = g.last_release, g.deadline - g.last_release
    layers = layers if layers is not None else HeadLayers(dur, release)
    merges = subadditive(dur)
    found: list[Column] = []
    for n in range(1, n_tuples + 1):
        if stop is not None and stop():
            raise OutOfTime(g.name)
        least = floor_cost(layers, merges, n, dur, agg)  # no plan of n or more batches costs less ...
        if (max_cost is not None and least > max_cost) or (on_time and dur[1] + agg[n] > room):
            break                                      # ... nor has a shorter tail
        if most is not None and n > most:
            found.append(wide(g, n, least, merges))
            break
        if n == 1:
            found.append(Column(n=1, last=n_tuples, tail=dur[n_tuples], cost=dur[n_tuples], head=(), ready=top))
        else:
            found += _shapes(g, layers, n, max_cost, on_time)
        beyond = wide(g, n + 1, floor_cost(layers, merges, n + 1, dur, agg), merges) if n < n_tuples else None
        if beyond is not None and any(_beats(c, beyond) for c in found):
            # every plan of more batches (``beyond`` bounds them all) is beaten, save in its head:
            # bound the heads by theirs (work, and for the columns that beat them the last batch too)
            found = [_lowered(c, beyond, last_batch=_beats(c, beyond)) for c in found]
            break
    return _pareto(found)


def _least_head(g: QueryGrid, n: int, merges: bool) -> int:
    """The least work of a head of ``n`` or more batches (so of at least n tuples)."""
    return g.dur[n] if merges else n * g.dur[1]


def wide(g: QueryGrid, n: int, least: int, merges: bool) -> Column:
    """The bound on every plan of ``n`` or more batches (``least``: no such plan costs less): its
    tail is at least ``dur[1] + agg[n]``, its head's last batch starts no sooner than tuple
    ``n - 1``'s release and lasts at least ``dur[1]``, and the head works at least
    ``_least_head(n - 1)``."""
    return Column(n=n, last=0, tail=g.dur[1] + g.agg[n], cost=least, head=None, ready=g.last_release,
                  head_release=g.release[n - 1], head_last=g.dur[1], work=_least_head(g, n - 1, merges))


def _shapes(g: QueryGrid, layers: HeadLayers, n: int, max_cost: int | None, on_time: bool) -> list[Column]:
    """The columns of ``n >= 2`` batches, one or two per last size (module docstring)."""
    n_tuples, dur, agg, release = g.n, g.dur, g.agg, g.release
    top = g.last_release
    cheap, cheap_end, _ = layers.cheap(n - 1)
    # a sooner head matters only where the cheapest one ends after the last release (never with one batch)
    later = n > 2 and bool((cheap_end[n - 1:n_tuples] > top).any())
    soon_end, soon_cost, _ = layers.soon(n - 1) if later else (cheap_end, cheap, None)
    out = []
    for last in range(1, n_tuples - n + 2):
        rest = n_tuples - last
        tail = dur[last] + agg[n]
        cost, end = int(cheap[rest]) + tail, int(cheap_end[rest])
        if ((max_cost is not None and cost > max_cost)
                or (on_time and max(top, min(end, int(soon_end[rest]))) + tail > g.deadline)):
            continue   # both shapes would go
        base = dict(n=n, last=last, tail=tail, head_release=release[rest],
                    head_last=dur[rest] if n == 2 else dur[1])
        shapes = [Column(cost=cost, head_end=end, ready=max(top, end), head=layers.split(n - 1, rest), **base)]
        first = int(soon_end[rest])
        if max(top, first) < max(top, end):  # a head ending sooner costs more: a bound (or that head)
            exact = int(soon_cost[rest]) + tail == cost + 1
            shapes.append(Column(cost=cost + 1, head_end=first, ready=max(top, first),
                                 head=layers.split(n - 1, rest, soonest=True) if exact else None, **base))
        out += [c for c in shapes if (max_cost is None or c.cost <= max_cost)
                and not (on_time and c.ready + c.tail > g.deadline)]
    return out


def _lowered(c: Column, bound: Column, *, last_batch: bool) -> Column:
    """``c`` with its head's work bound lowered to ``bound``'s and, with ``last_batch``, its head's
    last batch allowed to start at ``bound``'s release and last ``bound``'s length (ending no
    sooner than both allow): a bound, no longer a plan, unless nothing is lower."""
    work, head_release, head_last, head_end = min(c.work, bound.work), c.head_release, c.head_last, c.head_end
    if last_batch:
        head_release, head_last = min(head_release, bound.head_release), min(head_last, bound.head_last)
        head_end = min(head_end, bound.head_release + bound.head_last)
    if (work, head_release, head_last, head_end) == (c.work, c.head_release, c.head_last, c.head_end):
        return c
    return Column(n=c.n, last=c.last, tail=c.tail, cost=c.cost, head=None, ready=c.ready, head_end=head_end,
                  head_release=head_release, head_last=head_last, work=work)


def subadditive(dur: list[int]) -> bool:
    """Whether ``dur[a + b] <= dur[a] + dur[b]`` for all sizes (true of every concave cost with
    S >= 0, and kept by rounding up: then merging two batches never costs more)."""
    d = np.array(dur, dtype=np.int64)
    n = len(dur) - 1
    return all(bool(np.all(d[a + a:n + 1] <= d[a] + d[a:n + 1 - a])) for a in range(1, n // 2 + 1))


def floor_cost(layers: HeadLayers, merges: bool, n: int, dur: list[int], agg: list[int]) -> int:
    """A lower bound on the cost of every plan with ``n`` or more batches: ``agg[n]`` plus, when
    merging never costs more, the cheapest split into exactly n (it grows with n), else ``n·dur[1]``."""
    if merges:
        return layers.least_at(n, len(dur) - 1) + agg[n]
    return n * dur[1] + agg[n]


def _beats(c: Column, bound: Column) -> bool:
    """Whether ``c`` has a tail no longer, a cost no higher and a readiness no later than
    ``bound``, the wide column of the batch counts not generated (it then dominates every plan
    of those counts, save in its head)."""
    return c.tail <= bound.tail and c.cost <= bound.cost and c.ready <= bound.ready


def _pareto(found: list[Column], cap: int = COLUMN_CAP) -> list[Column]:
    """The columns no other one beats in tail, cost, batches, readiness and every head bound (head
    work, end, last batch's release and length). Past ``cap`` columns, one beaten in the first four
    only is merged into the one beating it with the latest head release, which then carries the
    least of both heads' bounds, so every plan of either still maps onto it (it is then a bound, no
    longer a plan, unless nothing changed)."""
    found = sorted(found, key=lambda c: (c.tail, c.cost, c.n, c.ready, c.head is None, c.last))
    keys = np.array([(c.tail, c.cost, c.n, c.ready) for c in found], dtype=np.int64).reshape(-1, 4)
    heads = np.array([(c.work, c.head_end, c.head_release, c.head_last) for c in found], dtype=np.int64).reshape(-1, 4)
    plans = np.array([c.head is not None for c in found], dtype=np.bool_)
    source, bounds, merged = _sieve(keys, heads, plans, cap)
    kept = []
    for k, (i, (work, head_end, head_release, head_last)) in enumerate(zip(source.tolist(), bounds.tolist())):
        a = found[i]
        kept.append(a if not merged[k] else Column(n=a.n, last=a.last, tail=a.tail, cost=a.cost, head=None,
                                                   ready=a.ready, head_end=head_end, head_release=head_release,
                                                   head_last=head_last, work=work))
    return kept


@njit(cache=True)
def _later(a: np.ndarray, b: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Whether head bounds ``a`` come after ``b`` in (head release, head last, work)."""
    if a[2] != b[2]:
        return a[2] > b[2]
    if a[3] != b[3]:
        return a[3] > b[3]
    return a[0] > b[0]


@njit(cache=True)
def _sieve(keys: np.ndarray, heads: np.ndarray, plans: np.ndarray,
           cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """:func:`_pareto` on arrays, the columns in its order: per column its (tail, cost, n, ready),
    its head bounds (work, head end, head release, head last) and whether it is a plan. A column
    is dropped when a kept one beaten by it in the first four has every head bound at most its own
    and is a plan whenever it is; else it is kept, or past ``cap`` merged into the beaten one with
    the latest (head release, head last, work), the first of them, which takes the least of both
    head bounds and is a plan no longer. Returns the kept columns' indices, their head bounds and
    whether each was merged."""
    total = keys.shape[0]
    source = np.empty(total, dtype=np.int64)
    bounds = np.empty((total, 4), dtype=np.int64)
    plan = np.empty(total, dtype=np.bool_)
    merged = np.zeros(total, dtype=np.bool_)
    size = 0
    for i in range(total):
        dropped, at, beaten = False, -1, False
        for k in range(size):
            c = source[k]
            if not (keys[c, 0] <= keys[i, 0] and keys[c, 1] <= keys[i, 1] and keys[c, 2] <= keys[i, 2]
                    and keys[c, 3] <= keys[i, 3]):
                continue
            beaten = True
            if (bounds[k, 0] <= heads[i, 0] and bounds[k, 1] <= heads[i, 1] and bounds[k, 2] <= heads[i, 2]
                    and bounds[k, 3] <= heads[i, 3] and (plan[k] or not plans[i])):
                dropped = True
                break
            if at < 0 or _later(bounds[k], bounds[at]):
                at = k
        if dropped:
            continue
        if not beaten or size < cap:
            source[size], plan[size] = i, plans[i]
            bounds[size] = heads[i]
            size += 1
        else:
            for j in range(4):
                bounds[at, j] = min(bounds[at, j], heads[i, j])
            plan[at], merged[at] = False, True
    return source[:size], bounds[:size], merged[:size]


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
    index, start, tails, heads, lates, tards, costs, counts = [], [], [], [], [], [], [], []
    intervals = []
    for g, mine in zip(grids, cols):
        idx = m.new_int_var(0, len(mine) - 1, f"{g.name}.column")
        tail, cost, count, ready, head = (_pick(m, idx, [getattr(c, key) for c in mine], f"{g.name}.{key}")
                                          for key in ("tail", "cost", "n", "ready", "work"))
        s = m.new_int_var(min(c.ready for c in mine), horizon, f"{g.name}.s")
        m.add(s >= ready)
        e = m.new_int_var(0, horizon, f"{g.name}.e")
        intervals.append(m.new_interval_var(s, tail, e, f"{g.name}.tail_block"))
        intervals += _head_block(m, g, idx, mine, s, horizon)
        late = m.new_bool_var(f"{g.name}.late")
        m.add(e <= g.deadline).only_enforce_if(~late)
        m.add(e >= g.deadline + 1).only_enforce_if(late)
        tard = m.new_int_var(0, horizon, f"{g.name}.tardiness")
        m.add(tard >= e - g.deadline)
        index.append(idx)
        start.append(s)
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


def _pick(m: Any, idx: Any, values: list[int], name: str) -> Any:
    """A variable equal to ``values[idx]``."""
    var = m.new_int_var(min(values), max(values), name)
    m.add_element(idx, values, var)
    return var


def _head_block(m: Any, g: QueryGrid, idx: Any, mine: list[Column], s: Any, horizon: int) -> list[Any]:
    """The head's last batch as an interval (when the column has a head): it starts no sooner than
    its last tuple's release, lasts at least the column's ``head_last``, ends no sooner than the
    head can and no later than the tail starts."""
    if all(c.n == 1 for c in mine):
        return []
    present = m.new_bool_var(f"{g.name}.headed")
    m.add_element(idx, [int(c.n >= 2) for c in mine], present)
    release = _pick(m, idx, [c.head_release for c in mine], f"{g.name}.head_release")
    shortest = _pick(m, idx, [c.head_last for c in mine], f"{g.name}.head_last")
    end_at = _pick(m, idx, [max(c.head_end, 0) for c in mine], f"{g.name}.head_end")
    hs = m.new_int_var(0, horizon, f"{g.name}.hs")
    he = m.new_int_var(0, horizon, f"{g.name}.he")
    size = m.new_int_var(0, horizon, f"{g.name}.hsize")
    m.add(hs >= release).only_enforce_if(present)
    m.add(size >= shortest).only_enforce_if(present)
    m.add(he >= end_at).only_enforce_if(present)
    m.add(he <= s).only_enforce_if(present)
    return [m.new_optional_interval_var(hs, size, he, present, f"{g.name}.head_block")]


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


def least_splits(dur: list[int]) -> np.ndarray:
    """Per count ``c`` = 0..N, the cheapest ``Σ dur`` of ``c`` tuples in any number of batches,
    time and aggregation ignored."""
    return _least_splits(np.array(dur, dtype=np.int64))


@njit(cache=True)
def _least_splits(dur: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """:func:`least_splits`' min-plus recursion ``least[c] = min over p < c of least[p] + dur[c - p]``,
    O(N^2) compiled (a paper-scale query, N = 4,500, in about 3 ms where numpy's row per count
    took 0.1 s)."""
    n = dur.shape[0] - 1
    least = np.zeros(n + 1, dtype=np.int64)
    for c in range(1, n + 1):
        best = least[0] + dur[c]
        for p in range(1, c):
            here = least[p] + dur[c - p]
            if here < best:
                best = here
        least[c] = best
    return least
