"""The discrete-event engine: feeds, tracks, the ready set and non-preemptive update jobs.

Semantics (the foundation's model; Golab et al., Sec. 2):

* A feed arrival at ``t`` makes data up to ``t`` available (up to ``data_to`` for a replayed
  feed). A derived table's available data ends at its trailing edge, the minimum freshness of
  its sources. Staleness is ``S_i(t) = t - F_i(t)``.
* A table's **release** is the instant its unclaimed data (available beyond what is loaded or
  being loaded) went from none to some, delayed to ``previous release + min_separation`` when
  that is later. A table is **ready** when it is released and has no job in flight (at most one
  job per table).
* A job loads everything available when it starts (with ``chop``: at most ``chop`` periods, a
  base table's load ending at an arrival boundary, at least one batch), runs non-preemptively
  for ``E(n) = alpha + beta*n`` (times the variability draw and the slowdown factor at its
  start) on one track and sets ``F_i`` when it completes. If chopping leaves data unclaimed, the
  table keeps its release (its unclaimed data never went back to none).
* Event order: at each instant the engine applies every job completion (and the derived
  releases they cause) in table order, then deferred (``min_separation``) releases, then every
  feed arrival (by table position), and only then consults the policy and dispatches until no free track can take a ready table.
  The policy is consulted at every arrival and completion instant (and at time 0).
* Timers: a placement may ask to be consulted again at a later instant with
  :meth:`EngineView.wake_at` (non-eager policies such as Bateni et al.'s periodic polling). A
  timer is processed with the completions, after them and the deferred releases of its instant
  and before the feed arrivals; then the policy is consulted as at any other event, even if
  nothing else happens at that instant. Timers are not counted as events.
* Horizon rule: events at ``t <= horizon`` are processed; a job still running at the horizon
  is not completed and does not raise ``F``.

The hot loop follows PERFORMANCE.md: staleness areas are integrated lazily (closed form, only
when a table's freshness changes and once at the horizon), the ready set is a heap keyed by the
policy with lazy invalidation by version stamps, and arrivals come in sorted chunks merged with
a small heap holding at most one completion per track.

This loop is the reference. The built-in order-only policies run by default in the compiled core
(:mod:`staleness_lab.sim.compiled`), which repeats it bit for bit; ``run(..., engine="python")``
forces this one.
"""

from __future__ import annotations

import bisect
import gc
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from heapq import heappop, heappush

from staleness_lab.errors import InputError
from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy, Policy
from staleness_lab.sim import compiled
from staleness_lab.sim.arrivals import arrival_chunks, next_chunk
from staleness_lab.sim.costs import DRAW_BLOCK as _DRAW_BLOCK
from staleness_lab.sim.costs import cost_stream, noise_range, policy_stream
from staleness_lab.sim.placement import RuleDispatch
from staleness_lab.sim.size import check_run_size
from staleness_lab.sim.sporadic import SporadicRun
from staleness_lab.sim.trace import Trace, close_at_horizon

_INF = float("inf")


#: Which loop runs a simulation: the compiled core where the policy declares a compiled order
#: (``auto``), this module's Python loop (``python``, the reference), or the compiled core,
#: refusing a policy it lacks (``compiled``).
ENGINES = ("auto", "python", "compiled")


def run(workload: Workload, policy: Policy, policy_name: str, *, max_events: int | None = None,
        engine: str = "auto") -> Trace:
    """Simulate ``workload`` under ``policy`` over ``[0, horizon]`` and return the trace.

    A run whose estimated events pass ``max_events`` (default: :func:`size.default_max_events`)
    is refused before it starts, with an :class:`InputError` naming the key that drives it.
    ``engine`` is one of :data:`ENGINES`; both loops give the same trace bit for bit, so the
    choice changes the speed, never the results."""
    if engine not in ENGINES:
        raise InputError("engine", f"must be one of {', '.join(ENGINES)}, got {engine!r}")
    size = check_run_size(workload, max_events)
    bound = policy.bind(workload, policy_stream(workload.seed))
    if not isinstance(bound, BoundPolicy):
        raise InputError("policy", f"bind() must return a BoundPolicy, got {type(bound).__name__}")
    if bound.jobs == "sporadic":
        if engine == "compiled":
            raise InputError("engine", f"the compiled core has no sporadic job model ({policy_name}): use auto or python")
        with _gc_paused():
            return _run_sporadic(workload, bound, policy_name)
    state = _Run(workload, bound)
    if engine != "python" and compiled.supports(bound):
        return compiled.run_compiled(workload, bound, policy_name, state.chop_limit, sum(size.jobs))
    if engine == "compiled":
        raise InputError("engine", f"the compiled core has no order for {policy_name} (placement or hooks): "
                         "use auto or python")
    with _gc_paused():
        return state.execute(policy_name)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a run (then back as it was): the loop makes no
    cycles, only short-lived tuples and the job records it keeps, which the collector would
    scan again and again as they accumulate (4-10 % of a run's time on Table 2).

    Every object made while the collector was off is still in its youngest generation, so the
    first collection after the run would scan all the kept records at once (8-10 % of a Table 2
    run, a third of a task-set run). ``gc.freeze()`` then ``gc.unfreeze()`` (two list splices)
    moves them to the oldest generation instead, where long-lived objects wait for the rare
    full collections."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def _run_sporadic(workload: Workload, bound: BoundPolicy, policy_name: str) -> Trace:
    """A run under Leontyev et al.'s sporadic job model (:mod:`.sporadic`): ``chop`` and
    ``min_separation`` contradict Def. 8 and eq. 4, so they are bad input there; the model's
    dispatch is order-only (GEDF-NP and its adaptive variants)."""
    for k, table in enumerate(workload.tables):
        if workload.chop_of(k) is not None:
            field = f"tables[{k}].chop" if table.chop is not None else "chop"
            raise InputError(field, f"does not apply under {policy_name}'s sporadic job model (Def. 8 fixes what a job loads)",
                             table=table.name if table.chop is not None else None)
        if table.min_separation:
            raise InputError(f"tables[{k}].min_separation", f"does not apply under {policy_name}'s sporadic job model "
                             "(eq. 4 fixes the releases)", table=table.name)
    if bound.place is not None or bound.rekey_on_data:
        raise InputError("policy", "the sporadic job model dispatches by key only (no place, no rekey_on_data)")
    noise = noise_range(workload)
    streams = [cost_stream(workload.seed, t.name) for t in workload.tables] if noise is not None else None
    return SporadicRun(workload, bound, streams).execute(policy_name, noise)


class EngineView:
    """What a placement policy may read of the engine's state at a decision (read-only), and
    its one request to the engine: :meth:`wake_at`.

    Golab et al.'s Max Benefit with Lookahead needs each table's freshness, pending data and
    next feed arrival; partitioned schedulers need none of it; non-eager policies (Bateni et
    al.'s threshold and polling baselines) need the pending data and timers.
    """

    def __init__(self, run: "_Run", freshness: list[float], avail: list[float], running: list[bool]) -> None:
        self._run = run
        self._freshness = freshness
        self._avail = avail
        self._running = running
        self._now = 0.0  # the instant of the current decision, set before each placement
        self._timers: list[float] = []  # wake-ups asked for during the current placement

    def wake_at(self, t: float) -> None:
        """Consult the policy again at time ``t`` (a timer event; see the module docstring).

        Call it from ``place``. Ignored unless ``now < t < inf``. The policy is consulted once
        per instant however many timers fall on it, but each request is a heap entry until then,
        so a policy asking at every decision should remember what it already asked for.
        """
        if self._now < t < _INF:
            self._timers.append(t)

    def state(self) -> tuple[Sequence[float], Sequence[float], Sequence[bool]]:
        """Every table's freshness, available data and whether a job is in flight, as the
        engine's live per-table lists (what :meth:`freshness`, :meth:`available` and
        :meth:`running` read one at a time): for a placement that scans many tables per
        decision. Read them during the decision only and never write to them."""
        return self._freshness, self._avail, self._running

    def freshness(self, i: int) -> float:
        """F_i now."""
        return self._freshness[i]

    def available(self, i: int) -> float:
        """The end of the data available to table ``i`` (a derived table's trailing edge)."""
        return self._avail[i]

    def running(self, i: int) -> bool:
        """Whether table ``i`` has a job in flight."""
        return self._running[i]

    def pending(self, i: int) -> float:
        """The freshness delta a job of table ``i`` starting now would load (after chopping)."""
        f, avail = self._freshness[i], self._avail[i]
        if self._run.chop_limit[i] is not None and avail > f:
            return self._run._chopped_end(i, f, avail) - f
        return avail - f

    def next_arrival(self, i: int, now: float) -> tuple[float, float] | None:
        """The next feed arrival of base table ``i`` strictly after ``now``, as (time, data_to);
        None for a derived table or a replayed or compiled feed with no more files (of several
        files landing at once, the first)."""
        times = self._run.arrival_times[i]
        if times is not None:
            k = bisect.bisect_right(times, now)
            return self._run.w.files[i][k] if k < len(times) else None
        table = self._run.w.tables[i]
        if table.period is not None:
            k = max(1, math.floor((now - table.phase) / table.period) + 1)
            time = table.phase + k * table.period
            if time <= now:
                time = table.phase + (k + 1) * table.period
            return time, time
        return None


class _Run:
    """One simulation's state. Lists indexed by table position; see :func:`run`."""

    def __init__(self, workload: Workload, bound: BoundPolicy) -> None:
        self.w = workload
        self.bound = bound
        tables = workload.tables
        n = len(tables)
        self.n = n
        self.freshness = [t.initial_freshness for t in tables]
        self.avail = list(self.freshness)
        self.chop_limit = self._chop_limits()
        files = workload.files  # None: a plain periodic feed or a derived table
        self.batch_ends = [None if f is None else [d for _, d in f] for f in files]
        self.arrival_times = [None if f is None else [a for a, _ in f] for f in files]

    def _chop_limits(self) -> list[float | None]:
        """Per table, the most data one job may load (chop * period), or None."""
        limits: list[float | None] = []
        for k, table in enumerate(self.w.tables):
            c = self.w.chop_of(k)
            if c is None:
                limits.append(None)
                continue
            period = self.w.periods[k]
            if period is None:
                raise InputError(
                    f"tables[{k}].chop", "chopping needs a period: give this replayed feed (or its ancestors) a nominal_period",
                    table=table.name,
                )
            limits.append(c * period)
        return limits

    def _chopped_end(self, i: int, f: float, avail: float) -> float:
        """Where a job of table ``i`` starting from freshness ``f`` stops loading under chopping.

        Base tables stop at the last arrival boundary within ``f + chop*period`` (at least one
        batch): a file's timestamp (replayed and compiled feeds), else ``phase + k*period``;
        derived tables at ``f + chop*period`` (Golab et al., Sec. 3.4, reading in the spec's
        Sec. 2.7).
        """
        cap = f + self.chop_limit[i]  # type: ignore[operator]
        if cap >= avail:
            return avail
        table = self.w.tables[i]
        if table.sources is not None:
            return cap
        ends = self.batch_ends[i]
        if ends is None:  # a plain periodic feed: boundaries phase + k*period, k >= 1
            period, phase = table.period, table.phase
            k_first = max(1, math.floor((f - phase) / period) + 1)
            if phase + k_first * period <= f:  # f sat on a boundary up to rounding
                k_first += 1
            k_cap = math.floor((cap - phase) / period)
            if phase + k_cap * period > cap:
                k_cap -= 1
            return min(phase + max(k_first, k_cap) * period, avail)
        k = bisect.bisect_right(ends, cap) - 1
        if k < 0 or ends[k] <= f:
            k = bisect.bisect_right(ends, f)
        return min(ends[k], avail)

    def execute(self, policy_name: str) -> Trace:  # noqa: C901 - the hot loop is one function on purpose
        w = self.w
        n = self.n
        horizon = w.horizon
        warmup = w.warmup
        tables = w.tables
        alpha = [t.alpha for t in tables]
        beta = [t.beta for t in tables]
        sep = [t.min_separation for t in tables]
        any_sep = any(sep)
        sources = [tuple(w.index[s] for s in (t.sources or ())) for t in tables]
        children = w.children
        chop_limit = self.chop_limit
        chopped_end = self._chopped_end
        any_chop = any(c is not None for c in chop_limit)

        key = self.bound.key
        rekey = self.bound.rekey_on_data
        place = self.bound.place
        lone_lowest = self.bound.lone_lowest
        rule = RuleDispatch(self.bound.place_rule, w.tracks) if self.bound.place_rule is not None else None
        # under a rule both lists are bags (sim/placement.py): entries are appended, not sifted
        push_ready_entry = heappush
        push_free = heappush
        if rule is not None:
            key = rule.watch(key)
            quiet = rule.quiet
            push_ready_entry = push_free = list.append
        on_arrival = self.bound.on_arrival
        on_completion = self.bound.on_completion
        on_start = self.bound.on_start

        F = self.freshness
        avail = self.avail
        claimed = list(F)
        running = [False] * n
        release: list[float | None] = [None] * n
        last_release = [-_INF] * n
        version = [0] * n

        # lazily integrated staleness: area since warmup, peak, time of the last change
        area = [0.0] * n
        peak = [-_INF] * n
        last_change = [0.0] * n

        # the job in flight per table, and the completed jobs (one record each, plus finish)
        job: list[tuple] = [()] * n  # (table, track, release, start, data_from, data_to, cost)
        done: list[tuple] = []  # finish = start + cost, the very sum that timed the completion

        noise = noise_range(w)  # cost *= lo + span * U[0, 1): variability b is (b, 1), cost_noise (lo, hi - lo)
        noise_lo, noise_span = noise if noise is not None else (0.0, 0.0)
        draws: list[list[float]] = [[] for _ in range(n)]
        streams = [cost_stream(w.seed, t.name) for t in tables] if noise is not None else []
        slowdown = w.slowdown
        sd_factor = slowdown.factor if slowdown else 1.0
        sd_normal = slowdown.normal if slowdown else 0.0
        sd_cycle = (slowdown.normal + slowdown.slow) if slowdown else 0.0

        view = EngineView(self, F, avail, running) if place is not None else None
        timers = view._timers if view is not None else []
        ready: list[tuple] = []  # (key, table, version): lazily invalidated by version
        # completions and timers: (time, code); code < n completes table ``code``, n <= code < 2n
        # releases table ``code - n`` (deferred by min_separation), code == 2n only wakes the
        # policy (at time 0, so it is consulted even when nothing happens then, and at the
        # instants a placement asked for with EngineView.wake_at)
        wake = 2 * n
        events: list[tuple[float, int]] = [(0.0, wake)]
        t_event = 0.0  # the time of events[0], _INF when empty: the loop reads it per instant
        # one job per table: an order-only policy takes the lowest free track, so tracks past the
        # n-th are never used and not allocated (the trace is the same); a placement sees them all
        free = list(range(w.tracks if place is not None else min(w.tracks, n)))

        def push_ready(i: int, now: float) -> None:
            v = version[i] + 1
            version[i] = v
            end = avail[i] if chop_limit[i] is None else chopped_end(i, F[i], avail[i])
            push_ready_entry(ready, (key(i, now, release[i], end - F[i]), i, v))

        def new_data(i: int, old: float, now: float) -> None:
            """Table i's available data grew from ``old`` at ``now``: release it or re-key it."""
            if release[i] is None:
                if claimed[i] < old:
                    return  # a deferred release is pending; its timer releases the table
                due = last_release[i] + sep[i]
                if now < due:
                    nonlocal t_event
                    heappush(events, (due, i + n))
                    if due < t_event:
                        t_event = due
                    return
                release[i] = now
                last_release[i] = now
                if not running[i]:
                    push_ready(i, now)
            elif rekey and not running[i]:
                push_ready(i, now)

        # time 0: derived tables whose sources are already fresher than they are
        for i in range(n):
            if sources[i]:
                edge = min(F[s] for s in sources[i])
                if edge > avail[i]:
                    old = avail[i]
                    avail[i] = edge
                    new_data(i, old, 0.0)

        chunks = arrival_chunks(w)
        at_t, at_i, at_d = next_chunk(chunks)
        p = 0
        arrivals_before = 0  # arrivals in chunks already consumed
        t_arr = at_t[0]

        while True:
            t = t_event if t_event < t_arr else t_arr
            if t > horizon:
                break
            # 1. completions (and deferred releases)
            while t_event == t:
                code = heappop(events)[1]
                t_event = events[0][0] if events else _INF
                if code >= n:
                    if code == wake:
                        continue
                    i = code - n  # deferred release (min_separation)
                    if release[i] is None and avail[i] > claimed[i]:
                        release[i] = t
                        last_release[i] = t
                        if not running[i]:
                            push_ready(i, t)
                    continue
                i = code
                old = F[i]
                a = last_change[i]
                if a < warmup:
                    a = warmup
                if t > a:
                    area[i] += (t - a) * ((t + a) * 0.5 - old)
                    if t - old > peak[i]:
                        peak[i] = t - old
                record = job[i]
                F[i] = record[5]
                last_change[i] = t
                running[i] = False
                push_free(free, record[1])
                done.append(record)
                if release[i] is not None:
                    push_ready(i, t)
                for c in children[i]:
                    edge = min([F[s] for s in sources[c]])
                    if edge > avail[c]:
                        old = avail[c]
                        avail[c] = edge
                        new_data(c, old, t)
                if on_completion is not None:
                    on_completion(i, t)
            # 2. feed arrivals (the release rule of new_data, inlined: this is the hottest path)
            while t_arr == t:
                i = at_i[p]
                d = at_d[p]
                p += 1
                old = avail[i]
                if d > old:
                    avail[i] = d
                    if release[i] is None:
                        if claimed[i] >= old:
                            if any_sep and t < last_release[i] + sep[i]:
                                heappush(events, (last_release[i] + sep[i], i + n))
                                if last_release[i] + sep[i] < t_event:
                                    t_event = last_release[i] + sep[i]
                            else:
                                release[i] = t
                                if any_sep:
                                    last_release[i] = t
                                if not running[i]:
                                    if chop_limit[i] is None:  # push_ready, inlined
                                        v = version[i] + 1
                                        version[i] = v
                                        push_ready_entry(ready, (key(i, t, t, d - F[i]), i, v))
                                    else:
                                        push_ready(i, t)
                    elif rekey and not running[i]:
                        push_ready(i, t)
                if on_arrival is not None:
                    on_arrival(i, t)
                t_arr = at_t[p]
                if t_arr == _INF:
                    arrivals_before += p
                    at_t, at_i, at_d = next_chunk(chunks)
                    p = 0
                    t_arr = at_t[0]
            # 3. dispatch: the policy's order (or placement) fills the free tracks
            if not (free and ready):
                continue
            if place is None or (lone_lowest and len(ready) == 1):  # both lists are heaps here
                placed = None
            elif rule is not None:
                if len(free) == quiet[0]:  # the last decision stands (RuleDispatch.quiet)
                    continue
                placed = rule.decide(ready, free, version)
                if not placed:
                    continue
                placed = iter(placed)
            else:
                placed = iter(self._placed(place, ready, free, version, t, view))
                if timers:  # wake-ups the placement asked for
                    for due in timers:
                        heappush(events, (due, wake))
                        if due < t_event:
                            t_event = due
                    timers.clear()
            while True:
                if placed is None:
                    if not (free and ready):
                        break
                    _, i, v = heappop(ready)
                    if v != version[i]:
                        continue
                    track = heappop(free)
                else:
                    choice = next(placed, None)
                    if choice is None:
                        break
                    i, track = choice
                f = F[i]
                end = avail[i]
                if any_chop and chop_limit[i] is not None:
                    end = chopped_end(i, f, end)
                cost = alpha[i] + beta[i] * (end - f)
                if noise is not None:
                    queue = draws[i]
                    if not queue:
                        queue.extend(streams[i].random(_DRAW_BLOCK)[::-1].tolist())
                    cost *= noise_lo + noise_span * queue.pop()
                if sd_cycle and (sd_normal == 0 or t % sd_cycle >= sd_normal):
                    cost *= sd_factor
                claimed[i] = end
                running[i] = True
                job[i] = (i, track, release[i], t, f, end, cost)
                if end >= avail[i]:
                    release[i] = None
                heappush(events, (t + cost, i))
                if t + cost < t_event:
                    t_event = t + cost
                if on_start is not None:
                    on_start(i, track, t)

        in_flight = [job[i] for i in range(n) if running[i]]
        close_at_horizon(area, peak, last_change, F, warmup, horizon)
        return Trace(
            workload=w,
            policy=policy_name,
            events=arrivals_before + p + len(done),
            jobs_done=done,
            in_flight=in_flight,
            staleness_area=area,
            max_staleness=peak,
        )

    @staticmethod
    def _placed(
        place, ready: list[tuple], free: list[int], version: list[int], now: float, view: EngineView
    ) -> list[tuple[int, int]]:
        """Ask a placement policy which ready tables run where; put the rest back.

        The valid entries leave the heap in key order, so the ones not chosen, kept in that
        order, already form a heap: O(R) per decision besides the sort of the R ready entries.
        """
        entries = sorted(e for e in ready if e[2] == version[e[1]])
        order = [e[1] for e in entries]
        tracks = sorted(free)
        view._now = now
        chosen = place(order, tracks, now, view)
        ready_set, free_set = set(order), set(tracks)
        taken_tables: set[int] = set()
        taken_tracks: set[int] = set()
        for i, track in chosen:
            if i not in ready_set or i in taken_tables:
                raise RuntimeError(f"placement chose table {i}, which is not ready or chosen twice")
            if track not in free_set or track in taken_tracks:
                raise RuntimeError(f"placement chose track {track}, which is not free or chosen twice")
            taken_tables.add(i)
            taken_tracks.add(track)
        ready[:] = [e for e in entries if e[1] not in taken_tables]
        free[:] = [track for track in tracks if track not in taken_tracks]
        return list(chosen)
