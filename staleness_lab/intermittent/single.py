"""One query on one executor: the paper's heuristic (Algorithm 1) and an exact reference.

Chandrasekaran & Sudarshan, "Scheduling of Intermittent Query Processing", §3.1 (eqs. 2-4,
Function 1 ``ScheduleWithoutAggCost`` and the aggregation loop after eq. 4); digest
``shared/specs/chandrasekaran-intermittent.md`` §1, §2 A1/A2, §4 E1-E4 and correction 1.

:func:`algorithm1` is the paper's scheme, kept as the heuristic it is. :func:`exact` is the
exhaustive reference correction 1 asks for: the cheapest schedule, or a proof that none meets
the deadline.

Readings taken where the paper's formulas are garbled or silent (the digest's **[R]**):

* Arrivals: tuple ``k`` arrives at ``InputTime(k)`` (``ws + (k-1)/λ`` for a fixed rate, the
  table for a step profile); a batch may hold only tuples that arrived by its start.
* ``Est(d)`` (EstimateTuplesProcessed) is the largest ``x`` with ``Cost(x) <= d``
  (:func:`~staleness_lab.intermittent.costs.est`), capped by the tuples still pending.
* Eq. (2) ``slack = D - we - Cost(N)``; eq. (3): when ``slack >= 0``, one batch from
  ``D - Cost(N)`` to ``D`` and no final aggregation. Eq. (4): ``D_last = D - AggCost(k)``.
* Function 1 (A1) walks back from ``D_last``: the last batch runs from ``we`` and holds
  ``Est(D_last - we)`` tuples; each earlier batch must end by the time ``tp`` where the next one
  starts, the pending tuples are all present from ``ip = InputTime(pending)``, and the batch holds
  ``Est(tp - ip)`` of them and starts at ``ip``, or, when all the pending tuples fit, holds them
  all and starts at ``tp - Cost(pending)``. A batch lasts exactly ``Cost(size)``, so one that
  does not fill ``[ip, tp]`` ends before ``tp`` (the paper never says which end it is pinned to;
  starting at the time A1 computes keeps its cost equal to the cost model).
* The paper's loop never ends when ``Est`` returns 0 (digest §8.5), and its aggregation loop
  "increases" k without a bound. Here both stop: A1 fails when a batch cannot hold one tuple,
  and A2 steps ``k = |B|`` (strictly increasing while AggCost is non-decreasing, so at most N
  rounds). Either failure gives status ``"no-plan"``, never ``"infeasible"``: correction 1 shows
  Algorithm 1 fails on instances that have schedules (and that it is not optimal).
* The final aggregation starts when the last batch ends.

The exact reference minimises ``Σ Cost(x_i) + AggCost(n)`` over every split of the N tuples
into n ordered batches run back to back on one executor, each starting at
``max(previous end, InputTime(last tuple))`` (as early as possible, which is never worse for
meeting D), with the aggregation after the last batch, subject to completion ``<= D``. Ties go to
the fewest batches, then the earliest completion. Three methods, all on exact integers (every
time and cost scaled by one common denominator):

* linear cost: the cost is ``R·N + S·n + AggCost(n)``, non-decreasing in n, so the answer is the
  smallest n whose earliest finish ``E_n(N)`` meets D, with correction 1's recursion
  ``E_n(p) = min_q max(E_{n-1}(q), InputTime(p)) + Cost(p - q)``. ``E_{n-1}`` is non-decreasing
  in q (drop a tuple from the last batch with two or more, shifting the single-tuple batches
  after it down by one), so the q with ``E_{n-1}(q) <= InputTime(p)`` form a prefix and the rest
  is a sliding-window minimum: O(N) per n.
* any other non-decreasing cost, ``method="suffix"`` (the default): per batch count, a backward
  DP over suffixes with one pair (duration, latest end) per state, exact because a plan of n
  batches meets D exactly when each batch's release plus the work from it on does
  (:mod:`~staleness_lab.intermittent.suffix`): O(N^2) numpy per layer, n - 2 layers for n
  batches, and the counts stop at a cost floor. Measured (one core): 0.07-0.13 s for each of
  Fig. 6's 78 cases at N = 4,500, the exact grid included (``benchmarks/bench_single.py``).
* any other non-decreasing cost, ``method="pareto"`` (the reference it is tested against): per
  tuples done p, a Pareto set of states (batches j, finish, cost); fewer batches, an earlier
  finish and a lower cost each dominate (AggCost is non-decreasing in n, and each batch beyond
  two adds at least its least step). Every batch of every state is tried from every earlier p,
  so the work is O(N^2) pairs times the Pareto set size. Only provably useless states are
  dropped: those that cannot meet D (backward latest-finish tables per batch count, exact for
  the first counts and relaxed beyond), and those whose cost plus a lower bound on the rest
  exceeds a known plan's cost (Algorithm 1's, or a narrow beam search's run first). When one
  batch meets D and no split is cheaper, it is the answer.

Hence the size limits: ``exact`` refuses ``N > max_tuples`` with an
:class:`~staleness_lab.errors.InputError`, by default :data:`MAX_TUPLES` (20,000) and
:data:`PARETO_MAX_TUPLES` (2,000) for the Pareto search, whose O(N^2 · n) states take under 0.1 s
at N = 100, mostly under a second at N = 500 (the worst seen, an irregular random cost table,
about 5 s) and 10-15 s at N = 2000. A linear cost takes about 0.05 s at N = 4,500, mostly the exact grid.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from fractions import Fraction

import numpy as np

from staleness_lab.errors import InputError
from staleness_lab.intermittent.costs import LinearCost, est
from staleness_lab.intermittent.model import Query, QuerySet
from staleness_lab.intermittent.numbers import show
from staleness_lab.intermittent.plan import BatchPlan, Step, aggregate, batch
from staleness_lab.intermittent.suffix import optimum_sizes

#: Executor every single-query plan runs on.
EXECUTOR = 0
#: Default largest N :func:`exact` accepts (the suffix DP: O(N^2) per layer).
MAX_TUPLES = 20_000
#: Default largest N of ``exact(..., method="pareto")`` (O(N^2 · n) states).
PARETO_MAX_TUPLES = 2000
#: The methods of :func:`exact` for costs other than linear (module docstring).
METHODS = ("suffix", "pareto")

# one batch: (first tuple, last tuple, start, end), 1-based tuples
_Batch = tuple[int, int, Fraction, Fraction]


def _single(qs: QuerySet, scheme: str) -> Query:
    if len(qs.queries) != 1:
        raise InputError("queries", f"{scheme} plans one query, got {len(qs.queries)}")
    return qs.queries[0]


def _steps(query: Query, batches: list[_Batch]) -> tuple[Step, ...]:
    """The batches, then (when there are two or more) the final aggregation from the last end."""
    steps = [batch(query.name, EXECUTOR, s, e, first, last) for first, last, s, e in batches]
    n = len(batches)
    if n >= 2:
        end = batches[-1][3]
        steps.append(aggregate(query.name, EXECUTOR, end, end + query.agg_cost(n), n))
    return tuple(steps)


# -- Algorithm 1 (the paper's heuristic) -----------------------------------------------------


def schedule_without_agg_cost(query: Query, d_last: Fraction) -> tuple[list[_Batch] | None, str]:
    """Function 1 (digest §2 A1): batches meeting ``d_last`` in chronological order, or
    ``(None, reason)`` when a batch cannot hold even one tuple (the paper would loop forever)."""
    n, we, cost = query.n, query.we, query.cost
    if we + cost(n) <= d_last:  # eq. (3)
        return [(1, n, d_last - cost(n), d_last)], ""
    n_last = est(cost, d_last - we, n)
    if n_last == 0:
        return None, (f"no tuple fits between the window end {show(we)} and D_last {show(d_last)} "
                      f"(Cost(1) = {show(cost(1))})")
    out: list[_Batch] = [(n - n_last + 1, n, we, we + cost(n_last))]
    pending, tp = n - n_last, we
    while pending > 0:
        ip = query.arrivals.input_time(pending)
        k = est(cost, tp - ip, pending)
        if k <= 0:
            return None, (f"{pending} tuples pending, all arrived at {show(ip)}, must end by {show(tp)}: "
                          f"not one tuple fits (Cost(1) = {show(cost(1))})")
        start = tp - cost(pending) if k >= pending else ip
        out.append((pending - k + 1, pending, start, start + cost(k)))
        pending, tp = pending - k, start
    out.reverse()
    return out, ""


def algorithm1(qs: QuerySet) -> BatchPlan:
    """The paper's single-query scheme (eqs. 2-4, Function 1 and the aggregation loop) for the
    one query of ``qs`` on executor 0. Status ``"ok"`` or ``"no-plan"`` (proves nothing)."""
    query = _single(qs, "algorithm1")
    n, deadline, agg = query.n, query.deadline, query.agg_cost

    def plan(batches: list[_Batch] | None, reason: str = "") -> BatchPlan:
        if batches is None:
            return BatchPlan(queryset=qs, scheme="algorithm1", steps=(), status="no-plan", reason=reason, minbatch={})
        return BatchPlan(queryset=qs, scheme="algorithm1", steps=_steps(query, batches), minbatch={})

    if deadline - query.we - query.min_cost >= 0:  # eq. (2) slack >= 0: eq. (3), no aggregation
        return plan(schedule_without_agg_cost(query, deadline)[0])
    k = 2
    for _ in range(n + 1):  # k strictly increases while AggCost is non-decreasing: <= N rounds
        batches, reason = schedule_without_agg_cost(query, deadline - agg(k))
        if batches is None:
            return plan(None, f"Algorithm 1 with AggCost({k}) = {show(agg(k))}: {reason}")
        m = len(batches)
        if agg(m) <= agg(k):
            return plan(batches)
        if m <= k:  # only with a decreasing AggCost, which the cost models rule out
            break
        k = m
        if k > n:
            return plan(None, f"the aggregation loop needs more than N = {n} batches")
    return plan(None, "the aggregation loop did not settle")


# -- the exact reference -------------------------------------------------------------------


def exact(qs: QuerySet, *, max_tuples: int | None = None, method: str = "suffix") -> BatchPlan:
    """The cheapest single-query plan meeting the deadline (module docstring): status ``"ok"``
    with the optimum (ties: fewest batches, then earliest completion), or ``"infeasible"``, a
    proof that no schedule meets D. ``method``: ``"suffix"`` (fast) or ``"pareto"`` (the
    reference) for costs other than linear. Refuses ``N > max_tuples`` (default: the method's
    limit, :data:`MAX_TUPLES` or :data:`PARETO_MAX_TUPLES`)."""
    query = _single(qs, "exact")
    if method not in METHODS:
        raise InputError("method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    if max_tuples is None:
        max_tuples = MAX_TUPLES if method == "suffix" else PARETO_MAX_TUPLES
    if isinstance(max_tuples, bool) or not isinstance(max_tuples, int) or max_tuples < 1:
        raise InputError("max_tuples", f"must be an integer >= 1, got {max_tuples!r}")
    n = query.n
    if n > max_tuples:
        raise InputError("queries[0].arrivals.N", (
            f"the exact DP ({method}) plans at most max_tuples = {max_tuples} tuples (its O(N^2) work per "
            f"layer or state would take too long), got N = {n}"))
    grid = _Grid(query)
    if isinstance(query.cost, LinearCost):
        sizes = _linear(grid)
    elif method == "suffix":
        sizes = optimum_sizes(grid.time, grid.cost, grid.agg, grid.deadline, wide=not grid.fits)
    else:
        sizes = _general(grid, algorithm1(qs))
    if sizes is None:
        return BatchPlan(queryset=qs, scheme="exact", steps=(), status="infeasible", minbatch={}, reason=(
            f"no split of the N = {n} tuples into batches meets D = {show(query.deadline)} "
            "(exhaustive dynamic program)"))
    return BatchPlan(queryset=qs, scheme="exact", steps=_steps(query, earliest(query, sizes)), minbatch={})


def earliest(query: Query, sizes: list[int]) -> list[_Batch]:
    """Batches of these sizes, in order, each starting as early as possible:
    ``max(previous end, InputTime(its last tuple))``."""
    out: list[_Batch] = []
    done, free = 0, None
    for x in sizes:
        first, last = done + 1, done + x
        start = query.arrivals.input_time(last)
        if free is not None and free > start:
            start = free
        free = start + query.cost(x)
        out.append((first, last, start, free))
        done = last
    return out


class _Grid:
    """The query's times and costs as integers on one common grid (``value * scale``)."""

    def __init__(self, query: Query) -> None:
        n = query.n
        times = [Fraction(0)] + [query.arrivals.input_time(p) for p in range(1, n + 1)]
        costs = [Fraction(0)] + [query.cost(x) for x in range(1, n + 1)]
        aggs = [Fraction(0)] + [query.agg_cost(j) for j in range(1, n + 2)]
        values = times + costs + aggs + [query.deadline]
        scale = 1
        for v in values:
            scale = math.lcm(scale, v.denominator)
        self.n = n
        self.scale = scale
        self.time = [int(v * scale) for v in times]    # time[p] = InputTime(p)
        self.cost = [int(v * scale) for v in costs]    # cost[x] = Cost(x), cost[0] = 0
        self.agg = [int(v * scale) for v in aggs]      # agg[j] = AggCost(j), j = 0..N+1
        self.deadline = int(query.deadline * scale)
        # every sum the vectorised tables form stays far inside int64
        largest = max(abs(v) for v in values) * scale
        self.fits = 8 * (largest + 1) < (1 << 62) and all(v >= 0 for v in times)
        if self.fits:
            self.time_np = np.array(self.time, dtype=np.int64)
            self.cost_np = np.array(self.cost, dtype=np.int64)


def _linear(g: _Grid) -> list[int] | None:
    """Batch sizes for a linear cost: the smallest n with ``E_n(N) + AggCost(n) <= D``."""
    n_tuples, time, cost, agg, deadline = g.n, g.time, g.cost, g.agg, g.deadline
    r = cost[2] - cost[1] if n_tuples >= 2 else 0  # R on the grid (Cost(x) = S + R·x)
    prev = [None] * (n_tuples + 1)                 # E_{n-1}(q), None where undefined
    backs: list[list[int]] = []                    # backs[n-1][p] = q of the last batch
    for n in range(1, n_tuples + 1):
        row: list[int | None] = [None] * (n_tuples + 1)
        back = [-1] * (n_tuples + 1)
        if n == 1:
            for p in range(1, n_tuples + 1):
                row[p], back[p] = time[p] + cost[p], 0
        else:
            # q in [n-1, p-1]; prev is non-decreasing there. Prefix: prev[q] <= time[p] (take the
            # largest such q); the rest: min of prev[q] - r*q over a sliding window (deque).
            window: deque[int] = deque()
            a = n - 2  # largest q with prev[q] <= time[p] (n-2: none yet)
            for p in range(n, n_tuples + 1):
                q_new = p - 1
                while window and prev[window[-1]] - r * window[-1] >= prev[q_new] - r * q_new:
                    window.pop()
                window.append(q_new)
                while a + 1 <= p - 1 and prev[a + 1] <= time[p]:
                    a += 1
                while window and window[0] <= a:
                    window.popleft()
                best, arg = None, -1
                if a >= n - 1:
                    best, arg = time[p] - r * a, a
                if window:
                    q = window[0]
                    value = prev[q] - r * q
                    if best is None or value < best:
                        best, arg = value, q
                row[p] = best + r * p + cost[1] - r  # + S + R·p, with S = cost[1] - r
                back[p] = arg
        backs.append(back)
        if row[n_tuples] + agg[n] <= deadline:
            sizes: list[int] = []
            p = n_tuples
            for j in range(n, 0, -1):
                q = backs[j - 1][p]
                sizes.append(p - q)
                p = q
            sizes.reverse()
            return sizes
        # every later n completes at >= we + Cost(1) + AggCost(n + 1)
        if time[n_tuples] + cost[1] + agg[min(n + 1, n_tuples + 1)] > deadline:
            return None
        prev = row
    return None


def _general(g: _Grid, heuristic: BatchPlan) -> list[int] | None:
    """Batch sizes for any non-decreasing cost: a narrow beam search first finds a good plan, whose
    cost (or Algorithm 1's, if lower) bounds the exhaustive search that follows."""
    n, cost = g.n, g.cost
    if g.time[n] + cost[n] <= g.deadline:
        # one batch meets D (eq. 3); it is optimal (fewest batches) unless a split is cheaper
        least = [0] * (n + 1)
        for r in range(1, n):
            least[r] = min(cost[x] + least[r - x] for x in range(1, r + 1))
        if all(cost[n] <= cost[x] + least[n - x] + g.agg[2] for x in range(1, n)):
            return [n]
    lower = _Bounds(g)
    if not lower.possible():
        return None
    bounds = [int(heuristic.total_cost * g.scale)] if heuristic.status == "ok" else []
    for beam in BEAMS:
        quick = _pareto(g, lower, None, beam=beam)
        if quick is not None:
            bounds.append(quick[1])
            break
    found = _pareto(g, lower, min(bounds) if bounds else None, beam=None)
    return None if found is None else found[0]


#: States per tuple count the bounding passes keep (the cheapest and those with the most time to
#: spare), widening until one finds a plan.
BEAMS = (4, 32)


#: Batch counts below which :class:`_Bounds` keeps an exact latest-finish table per count,
#: fewer for large N (each table is O(N^2): at most ``TABLE_BUDGET / N^2`` tables, at least 8).
EXACT_COUNTS = 64
TABLE_BUDGET = 64_000_000


class _Bounds:
    """Safe lower bounds on what is left after the batch ending with tuple p < N, j >= 1 batches.

    ``delta``: the least step of AggCost beyond two batches (``AggCost(n+1) - AggCost(n)``, n >= 2),
    so each further batch adds at least ``delta`` to the aggregation; ``work[r]``: the least
    ``Σ (Cost(x_i) + delta)`` over splits of r tuples. The rest then takes at least
    ``work[rest] - delta + AggCost(j + 1)`` more time and cost. ``most``: the most batches any
    plan meeting D can have (its last batch starts >= we and lasts >= Cost(1)).

    :meth:`limit` is the latest the state may finish and still meet D, from backward tables:

    * for j below ``min(most, EXACT_COUNTS)``, exact: ``L_j(p) = max over p' of
      L_{j+1}(p') - Cost(p' - p)`` where the batch fits (``InputTime(p') + Cost(p' - p) <=
      L_{j+1}(p')``), ``L_j(N) = D - AggCost(j + 1)`` for the last batch;
    * above, relaxed: lengthen every later batch by ``delta``; its i-th end moves by at most
      ``i·delta`` and the aggregation over ``j + m`` batches takes at least ``AggCost(j + 1) +
      (m - 1)·delta``, so a plan meeting D ends its lengthened batches by ``Y_j = D - AggCost(j + 1)
      + delta``; the table for ``Y_j0`` (j0 the power of two <= j; ``Y_j <= Y_j0 - (j - j0)·delta``,
      and a later start ends the rest no sooner than that much later) gives ``table[p] - (j -
      j0)·delta``. The exact tables start from the relaxed one at their top count."""

    def __init__(self, g: _Grid) -> None:
        n, cost, agg, time, deadline = g.n, g.cost, g.agg, g.time, g.deadline
        self.g = g
        self.delta = min((agg[k + 1] - agg[k] for k in range(2, n + 1)), default=0)
        work = [0] * (n + 1)
        for r in range(1, n + 1):
            work[r] = min(cost[x] + work[r - x] for x in range(1, r + 1)) + self.delta
        self.work = work
        self.most = max((m for m in range(1, n + 1) if time[n] + cost[1] + agg[m] <= deadline), default=0)
        self.relaxed: dict[int, list[int | None]] = {}
        self.exact: dict[int, list[int | None]] = {}
        top = min(self.most, EXACT_COUNTS, max(8, TABLE_BUDGET // (n * n + 1)))
        if top >= 2:
            below = self._relaxed(top)
            for j in range(top - 1, 0, -1):
                below = self.exact[j] = _latest_finish(g, deadline - agg[j + 1], 0, below)

    def _relaxed(self, j0: int) -> list[int | None]:
        if j0 not in self.relaxed:
            g = self.g
            self.relaxed[j0] = _latest_finish(g, g.deadline - g.agg[j0 + 1] + self.delta, self.delta, None)
        return self.relaxed[j0]

    def limit(self, p: int, j: int) -> int | None:
        if j >= self.most:
            return None  # the rest needs one batch more than any plan meeting D has
        if j in self.exact:
            return self.exact[j][p]
        j0 = 1 << (j.bit_length() - 1)
        value = self._relaxed(j0)[p]
        return None if value is None else value - (j - j0) * self.delta

    def possible(self) -> bool:
        """Whether some first batch leaves a state that can still meet D (False: infeasible)."""
        g = self.g
        if g.time[g.n] + g.cost[g.n] <= g.deadline:
            return True
        for p in range(1, g.n):
            limit = self.limit(p, 1)
            if limit is not None and g.time[p] + g.cost[p] <= limit:
                return True
        return False


def _latest_finish(g: _Grid, terminal: int, shift: int, after: list[int | None] | None) -> list[int | None]:
    """``latest[p]`` (p < N): the latest the executor may be free after tuples 1..p so that the
    next batch, lasting ``Cost(x) + shift``, ends by ``after[p']`` (its last tuple p' < N), or
    by ``terminal`` when it holds tuple N; ``after=None`` uses the table itself (any number of
    batches, each ending by ``terminal``). None when no time works. O(N^2), vectorised over the
    next batch's last tuple when the grid fits 64-bit integers."""
    n_tuples = g.n
    if g.fits:
        never = _NEVER
        latest = np.full(n_tuples + 1, never, dtype=np.int64)
        latest[n_tuples] = terminal
        if after is None:
            ends = latest
        else:
            ends = np.array([never if v is None else v for v in after], dtype=np.int64)
            ends[n_tuples] = terminal
        times, costs = g.time_np, g.cost_np
        for p in range(n_tuples - 1, -1, -1):
            dur = costs[1:n_tuples - p + 1] + shift
            limit = ends[p + 1:]
            fits = times[p + 1:] + dur <= limit  # never: below any arrival time, so never fits
            if fits.any():
                latest[p] = int((limit - dur)[fits].max())
        return [None if v == never else int(v) for v in latest.tolist()]
    time, cost = g.time, g.cost
    table: list[int | None] = [None] * (n_tuples + 1)
    table[n_tuples] = terminal
    nexts = table if after is None else after
    for p in range(n_tuples - 1, -1, -1):
        best = None
        for nxt in range(p + 1, n_tuples + 1):
            dur = cost[nxt - p] + shift
            ready = time[nxt] + dur  # the earliest the next batch (tuples p+1..nxt) can end
            if ready > terminal:
                break  # non-decreasing in nxt, and every limit is <= terminal
            limit = nexts[nxt] if nxt < n_tuples else terminal
            if limit is not None and ready <= limit and (best is None or limit - dur > best):
                best = limit - dur
        table[p] = best
    return table


#: "No time works" in the vectorised tables: below every time on the grid.
_NEVER = -(1 << 62)


# a state after the batch ending with tuple p: (batches j, finish, cost, q, index in fronts[q])
_State = tuple[int, int, int, int, int]


def _pareto(g: _Grid, lower: _Bounds, bound: int | None, *, beam: int | None) -> tuple[list[int], int] | None:
    """Forward over p = tuples done, keeping the states no other one dominates; with ``beam``, only
    the ``beam`` cheapest and the ``beam`` with the most time to spare per p, a heuristic. Returns the best plan's
    sizes and total cost (on the grid), or None. States whose lower bound exceeds ``bound`` go."""
    n_tuples, time, cost, agg, deadline = g.n, g.time, g.cost, g.agg, g.deadline
    we, delta, work = time[n_tuples], lower.delta, lower.work
    fronts: list[list[_State]] = [[(0, time[1], 0, -1, -1)]]  # free from the first arrival on
    best: tuple[tuple[int, int, int], int, int] | None = None  # ((total, n, completion), q, idx)
    for p in range(1, n_tuples + 1):
        rest = n_tuples - p
        t_p = time[p]
        limit = lower.limit(p, 1) if rest else deadline  # the latest any batch here may end
        candidates: list[_State] = []
        if limit is None:
            fronts.append(candidates)
            continue
        after = work[rest] - delta if rest else 0
        limits: dict[int, int | None] = {1: limit}
        for q in range(p - 1, -1, -1):
            dur = cost[p - q]
            if t_p + dur > limit:
                break  # smaller q only makes this batch longer
            for idx, (j, free, spent, _, _) in enumerate(fronts[q]):
                j1 = j + 1
                finish = (free if free > t_p else t_p) + dur
                total = spent + dur
                if rest:
                    tail = after + agg[j1 + 1]
                    if (finish + tail > deadline or we + cost[1] + agg[j1 + 1] > deadline
                            or (bound is not None and total + tail > bound)):
                        continue
                    if j1 not in limits:
                        limits[j1] = lower.limit(p, j1)
                    mine = limits[j1]
                    if mine is None or finish > mine:
                        continue
                    candidates.append((j1, finish, total, q, idx))
                else:
                    done = finish + agg[j1]
                    key = (total + agg[j1], j1, done)
                    if done <= deadline and (bound is None or key[0] <= bound) and (best is None or key < best[0]):
                        best = (key, q, idx)
        front = _prune(candidates, delta)
        if beam is not None and len(front) > beam:
            # the cheapest and those with the most time to spare survive
            cheap = sorted(range(len(front)), key=lambda i: (front[i][2] + delta * front[i][0], front[i][1]))
            margin = [_margin(lower, p, s) for s in front] if rest else [-s[1] for s in front]
            soon = sorted(range(len(front)), key=lambda i: (-margin[i], front[i][2]))
            front = [front[i] for i in sorted(set(cheap[:beam]) | set(soon[:beam]))]
        fronts.append(front)
    if best is None:
        return None
    (total, _, _), q, idx = best
    sizes = [n_tuples - q]
    p = q
    while p > 0:
        _, _, _, prev, prev_idx = fronts[p][idx]
        sizes.append(p - prev)
        p, idx = prev, prev_idx
    sizes.reverse()
    return sizes, total


def _margin(lower: _Bounds, p: int, state: _State) -> int:
    """How much later the state could finish and still meet D (its limit less its finish)."""
    limit = lower.limit(p, state[0])
    return -1 if limit is None else limit - state[1]


def _prune(candidates: list[_State], delta: int) -> list[_State]:
    """The states no other one dominates. With p < N tuples done (so n >= 2 in the end), a state
    (j', f', c') dominates (j, f, c) when j' <= j, f' <= f and c' + delta·j' <= c + delta·j: each
    extra batch adds at least ``delta`` to AggCost, so it ends no later, costs no more and has
    no more batches. Sorted by j, this is a 2-D staircase over (finish, c + delta·j)."""
    candidates.sort(key=lambda s: (s[0], s[1], s[2] + delta * s[0]))
    kept: list[_State] = []
    finishes: list[int] = []  # the staircase: finish increasing, adjusted cost decreasing
    prices: list[int] = []
    for cand in candidates:
        j, finish, spent, _, _ = cand
        price = spent + delta * j
        at = bisect.bisect_right(finishes, finish)
        if at and prices[at - 1] <= price:
            continue
        kept.append(cand)
        end = at
        while end < len(finishes) and prices[end] >= price:
            end += 1
        finishes[at:end] = [finish]
        prices[at:end] = [price]
    return kept
