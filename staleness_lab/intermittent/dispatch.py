"""The dynamic schedulers: LLF (the paper's Algorithm 2), EDF, SJF and RR on one skeleton
(Chandrasekaran & Sudarshan §4.2-4.4; digest §2 A4, corrections 2 and 4, §8 reading 2).

One small event-driven dispatcher over ``qs.executors`` executors (one executor is the paper's
model; ``m > 1`` is this project's extension, correction 2). Every query gets its MinBatch ``x_q``
(:func:`~staleness_lab.intermittent.minbatch.find_min_batch`, digest A3) when it is added.

**Skeleton.** Scheduling is non-preemptive at batch granularity. A *decision point* is any time
an executor is idle [R: event driven; the paper's CQS also wakes every C_max, which changes
nothing here because readiness only changes at arrivals and time triggers]. At a decision point
``t``, with ``p_q`` tuples of ``q`` already processed and ``cur = A_q(t) - p_q``, a query is ready
when it is live (``t >= ws``), not finished, not running a batch on another executor, and::

    cur >= x_q                                   # its MinBatch has arrived
    or (A_q(t) == N_q and cur > 0)               # all tuples arrived: the last, partial batch
    or (time trigger and t >= τ_q and cur > 0)   # §4.4: the MinBatch's expected time τ_q

The policy picks among the ready queries; the job takes ``min(cur, x_q)`` tuples (so every batch
costs at most ``Cost(x_q) <= C_max``, C5); when it holds the last tuple and the query has run
``n >= 2`` batches, the final aggregation follows on the same executor as part of the same job
(no aggregation after a single batch: ``AggCost(1) = 0``). Idle executors are filled lowest
index first, each with the policy's best remaining ready query. With no ready query the clock
jumps to the next time something can change: an executor finishing, or a query's next ready time.
Readiness is monotone between a query's jobs, so each query's ready time ``min(InputTime(min(p+x,
N)), max(τ_q, InputTime(p+1)))`` is computed once per job (no per-arrival stepping: the paper's
scale, 13 queries × 4500 tuples, runs in well under a second with MinBatch). Waiting queries sit
in a heap by that time, busy executors by their free time and ready queries in a structure per
policy (:class:`_Ready`), so a decision costs O(log Q) in the number of queries Q, not a scan of
all of them (3,000 queries of 10 tuples took over a minute with the scans).

**Keys** (the smallest wins; ties by deadline, then by the query's position in the set [R]):

* ``llf`` (eq. 9): laxity ``D_q - t - RemCost_q``, where RemCost is the cost of the ``N - p``
  unprocessed tuples in batches of ``x_q`` (the last may be smaller) plus
  ``AggCost(b_q + new batches)`` [D: correction 4], ``b_q`` the batches already run. Laxity is
  only computed for ready queries (the others are LARGE_NUMBER in Algorithm 2, i.e. skipped).
* ``edf``: ``D_q``.
* ``sjf`` [R]: the duration of the job it would run now, ``Cost(min(cur, x_q))`` plus the
  aggregation if this job holds the last tuple.
* ``rr`` [R]: cyclic over queries in set order, starting after the query served last; queries
  that are not ready are skipped.

The keys are computed from the cost models (calling a runner to rank queries would execute the
batch on Spark); every step's **duration** comes only from ``runner.run_batch(query, first,
last, start)`` and ``runner.run_aggregate(query, n, start)``.

**Variants**

* ``minbatch=False``: the No-MinBatch baseline of Fig. 8: ``x_q = 1`` and each batch takes all of
  ``cur``; LLF's RemCost then assumes the rest runs as one batch, ``Cost(N - p) + AggCost(b + 1)``
  [D: correction 4]. ``plan.minbatch`` is then empty and the scheme is e.g. ``edf-nominbatch``.
* ``unknown_n=True`` (§4.4 last paragraph, correction 4): the scheduler does not know ``N``. Every
  query with ``cur > 0`` is ready whatever its MinBatch readiness, the job takes
  ``min(cur, x_q)`` tuples (capped at MinBatch, correction 4, so no batch exceeds C_max), and LLF
  uses an estimate ``N̂`` for RemCost. [D] What the scheduler does know: the window's end time
  ``we`` (Table 1's windEndTime, a query attribute), so from ``t >= we`` on ``A(t)`` is the whole
  window and the last batch is recognised as in the known-N mode; and MinBatch is computed at
  submission from the planned window size ``N``. [D] The estimator: ``N̂ = A(t) +
  floor(λ̂·(we - t))`` with the observed rate ``λ̂ = (A(t) - 1)/(t - ws)`` for ``ws < t < we``
  (``N̂ = A(t)`` at ``t = ws`` and from ``we`` on). The scheme gets the suffix ``-unknown-n``.
* ``time_triggers`` (§4.4, Figs. 10-11): ``None`` turns them on for queries whose arrivals are a
  :class:`~staleness_lab.intermittent.arrivals.StepProfile` (the variable-rate profiles) and off
  for :class:`~staleness_lab.intermittent.arrivals.FixedRate` ones (where ``τ_q`` coincides with
  the MinBatch arrival anyway); ``True``/``False`` force them for every query. [R] §4.4 says the
  expected time at which the MinBatch "will mature as per the input rate" is estimated when the
  batch size is determined. We read it per batch: the first MinBatch is due at its nominal
  arrival ``ws + (x_q - 1)/λ``, each later one a MinBatch's worth of nominal arrivals, ``x_q/λ``,
  after the previous batch started (λ the planned rate). Reading it as the absolute nominal
  schedule ``InputTime(p_q + x_q)`` instead makes a slow feed, once behind, trigger on every new
  tuple: at the paper's scale VR3 and VR4 then ran 2,000-2,700 batches where the paper reports
  410 under VR4 against 329 under FR.

A query's batches never run concurrently on two executors (batch ``i+1`` starts after batch ``i``
and its aggregation end), so every plan passes :func:`~staleness_lab.intermittent.plan.check_plan`
under the cost-model runner.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass
from fractions import Fraction

from staleness_lab.errors import InputError
from staleness_lab.intermittent.arrivals import StepProfile
from staleness_lab.intermittent.minbatch import FLAG, find_min_batch
from staleness_lab.intermittent.model import Query, QuerySet
from staleness_lab.intermittent.numbers import exact
from staleness_lab.intermittent.plan import BatchPlan, Step, aggregate, batch
from staleness_lab.intermittent.runner import COST_MODEL, Runner

POLICIES = ("llf", "edf", "sjf", "rr")


@dataclass
class _Live:
    """A query's dispatch state."""

    pos: int
    query: Query
    x: int                     # batch cap: MinBatch, or N without MinBatch (a batch takes all cur)
    triggers: bool
    p: int = 0                 # tuples processed
    b: int = 0                 # batches run
    free_at: Fraction = Fraction(0)   # end of its running job
    ready_at: Fraction = Fraction(0)  # when it becomes ready (given p)
    last_start: Fraction = Fraction(0)  # start of its latest batch (the time trigger counts from it)
    done: bool = False

    @property
    def eligible_at(self) -> Fraction:
        return max(self.free_at, self.ready_at)


def dispatch(qs: QuerySet, policy: str, *, minbatch: bool = True, unknown_n: bool = False,
             time_triggers: bool | None = None, runner: Runner = COST_MODEL) -> BatchPlan:
    """Run ``policy`` (``llf``, ``edf``, ``sjf`` or ``rr``) over ``qs`` as the module docstring says."""
    if not isinstance(policy, str) or policy.lower() not in POLICIES:
        raise InputError("policy", f"must be one of {', '.join(POLICIES)}, got {policy!r}")
    policy = policy.lower()
    sizes: dict[str, int] = {}
    flagged: list[str] = []
    lives: list[_Live] = []
    for pos, query in enumerate(qs.queries):
        if minbatch:
            found = find_min_batch(query, qs.delta_rsf, qs.c_max)
            sizes[query.name] = found.size
            if found.flagged:
                flagged.append(query.name)
            cap = found.size
        else:
            cap = query.n
        triggers = isinstance(query.arrivals, StepProfile) if time_triggers is None else bool(time_triggers)
        live = _Live(pos=pos, query=query, x=cap, triggers=triggers)
        live.ready_at = _ready_time(live, minbatch, unknown_n)
        lives.append(live)

    steps: list[Step] = []
    # more executors than queries stay idle (a query's batches never overlap): do not use them
    executors = min(qs.executors, len(lives))
    t = min(live.eligible_at for live in lives)
    idle = list(range(executors))          # a min-heap: the lowest idle executor is filled first
    busy: list[tuple[Fraction, int]] = []  # (free at, executor) of the busy ones
    waiting = [(live.eligible_at, live.pos) for live in lives]  # not ready yet, by eligible time
    heapq.heapify(waiting)
    ready = _Ready(policy, lives, minbatch, unknown_n)
    pending = len(lives)
    while pending:
        while True:  # fill the idle executors at t (a zero-cost job frees its executor at once)
            while busy and busy[0][0] <= t:
                heapq.heappush(idle, heapq.heappop(busy)[1])
            while waiting and waiting[0][0] <= t:
                ready.add(lives[heapq.heappop(waiting)[1]], t)
            if not idle or not ready:
                break
            chosen = ready.pop(t)
            executor = heapq.heappop(idle)
            heapq.heappush(busy, (_run(chosen, executor, t, minbatch, unknown_n, runner, steps), executor))
            if chosen.done:
                pending -= 1
            else:
                heapq.heappush(waiting, (chosen.eligible_at, chosen.pos))
        if not pending:
            break
        t = min(heap[0][0] for heap in (busy, waiting) if heap)

    scheme = policy + ("" if minbatch else "-nominbatch") + ("-unknown-n" if unknown_n else "")
    reason = f"{FLAG}: {', '.join(flagged)}" if flagged else ""
    return BatchPlan(queryset=qs, scheme=scheme, steps=tuple(steps), status="ok", reason=reason,
                     minbatch=sizes)


class _Ready:
    """The ready queries, each policy's choice taken in O(log n) rather than by a scan.

    The choice is the module docstring's: the smallest key, ties by deadline and position (every
    key ends with the position, so it is unique). ``edf``'s key is fixed; ``llf``'s is
    ``D - t - RemCost`` with RemCost fixed while the query waits (known N), so the order of
    ``D - RemCost`` is the order of the keys at any ``t``; ``sjf``'s grows with ``t`` (more tuples
    have arrived: a larger, no cheaper job), so a stored key is a lower bound and the smallest is
    recomputed until it is current; ``rr`` takes the first ready position after the one served
    last, cyclically. LLF with unknown N (its estimate of N moves with ``t``) scans, as before."""

    def __init__(self, policy: str, lives: list[_Live], minbatch: bool, unknown_n: bool) -> None:
        self.policy, self.lives, self.minbatch, self.unknown_n = policy, lives, minbatch, unknown_n
        self.scan = policy == "llf" and unknown_n
        self.heap: list[tuple[tuple[Fraction, Fraction, int], int]] = []
        self.positions: list[int] = []  # rr (sorted) and the scan
        self.last_served = -1

    def __bool__(self) -> bool:
        return bool(self.positions if self.policy == "rr" or self.scan else self.heap)

    def add(self, live: _Live, t: Fraction) -> None:
        if self.policy == "rr" or self.scan:
            bisect.insort(self.positions, live.pos)
        elif self.policy == "llf":
            query = live.query
            remaining = _remaining_cost(live, t, self.minbatch, self.unknown_n)
            heapq.heappush(self.heap, ((query.deadline - remaining, query.deadline, live.pos), live.pos))
        else:
            heapq.heappush(self.heap, (_key(self.policy, live, t, self.minbatch, self.unknown_n), live.pos))

    def pop(self, t: Fraction) -> _Live:
        """Remove and return the ready query the policy runs next at ``t``."""
        if self.policy == "rr":
            k = bisect.bisect_right(self.positions, self.last_served)
            pos = self.positions.pop(k if k < len(self.positions) else 0)
        elif self.scan:
            pos = min(self.positions, key=lambda p: _key(self.policy, self.lives[p], t, self.minbatch, self.unknown_n))
            self.positions.remove(pos)
        elif self.policy == "sjf":
            while True:
                stored, pos = heapq.heappop(self.heap)
                current = _key(self.policy, self.lives[pos], t, self.minbatch, self.unknown_n)
                if current == stored:
                    break
                heapq.heappush(self.heap, (current, pos))
        else:
            pos = heapq.heappop(self.heap)[1]
        self.last_served = pos
        return self.lives[pos]


def _ready_time(live: _Live, minbatch: bool, unknown_n: bool) -> Fraction:
    """The first time the query is ready, given ``p`` (readiness is monotone in ``t``)."""
    arrivals = live.query.arrivals
    first = arrivals.input_time(live.p + 1)          # cur > 0 from here
    if unknown_n or not minbatch:
        return first
    target = live.p + live.x
    ready = arrivals.input_time(min(target, live.query.n))   # cur >= x, or all N arrived
    if live.triggers:
        if live.b == 0:
            expected = arrivals.nominal_time(target)
        else:  # a MinBatch's worth of nominal arrivals after the previous batch took its tuples
            expected = live.last_start + arrivals.nominal_time(live.x + 1) - arrivals.nominal_time(1)
        ready = min(ready, max(expected, first))
    return ready


def _batch_size(live: _Live, t: Fraction, minbatch: bool) -> int:
    cur = live.query.arrivals.available(t) - live.p
    return min(cur, live.x) if minbatch else cur


def _key(policy: str, live: _Live, t: Fraction, minbatch: bool, unknown_n: bool) -> tuple[Fraction, Fraction, int]:
    query = live.query
    if policy == "edf":
        value = query.deadline
    elif policy == "sjf":
        size = _batch_size(live, t, minbatch)
        value = query.cost(size)
        if live.p + size == query.n and live.b + 1 >= 2:
            value += query.agg_cost(live.b + 1)
    else:  # llf
        value = query.deadline - t - _remaining_cost(live, t, minbatch, unknown_n)
    return value, query.deadline, live.pos


def _remaining_cost(live: _Live, t: Fraction, minbatch: bool, unknown_n: bool) -> Fraction:
    """RemCost of eq. 9: the unprocessed tuples in batches of ``x_q`` plus the aggregation over
    every batch; one batch for the No-MinBatch baseline; ``N̂`` for the unknown-N mode."""
    query = live.query
    total = _estimate_n(query, t) if unknown_n else query.n
    rest = max(total - live.p, 0)
    if rest == 0:
        return query.agg_cost(live.b)
    if not minbatch:
        return query.cost(rest) + query.agg_cost(live.b + 1)
    batches = -(-rest // live.x)
    return ((batches - 1) * query.cost(live.x) + query.cost(rest - (batches - 1) * live.x)
            + query.agg_cost(live.b + batches))


def _estimate_n(query: Query, t: Fraction) -> int:
    """``N̂`` from the observed rate (module docstring); exact once the window has closed."""
    arrivals = query.arrivals
    seen = arrivals.available(t)
    if t >= query.we or t <= query.ws or seen < 2:
        return seen
    rate = Fraction(seen - 1) / (t - query.ws)
    return seen + math.floor(rate * (query.we - t))


def _run(live: _Live, executor: int, t: Fraction, minbatch: bool, unknown_n: bool, runner: Runner,
         steps: list[Step]) -> Fraction:
    """Start ``live``'s next job at ``t`` on ``executor``; return when the executor is free."""
    query = live.query
    size = _batch_size(live, t, minbatch)
    first, last = live.p + 1, live.p + size
    duration = exact(runner.run_batch(query, first, last, t), f"run_batch({query.name})", ge=0)
    end = t + duration
    steps.append(batch(query.name, executor, t, end, first, last))
    live.p = last
    live.b += 1
    live.last_start = t
    if last == query.n:
        if live.b >= 2:
            merge = exact(runner.run_aggregate(query, live.b, end), f"run_aggregate({query.name})", ge=0)
            steps.append(aggregate(query.name, executor, end, end + merge, live.b))
            end += merge
        live.done = True
    else:
        live.ready_at = _ready_time(live, minbatch, unknown_n)
    live.free_at = end
    return end
