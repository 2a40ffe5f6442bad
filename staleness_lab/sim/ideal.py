"""The unlimited-track ("ideal") run in closed form, for Golab et al.'s relative lateness.

Relative lateness (Golab et al., Sec. 5) divides a schedule's priority-weighted staleness by that
of the same workload on unlimited tracks: :func:`ideal_run` is that run on the engine (FIFO on
``max(tracks, tables)`` tracks), :func:`ideal_summary` computes what the sweeps need of it (per
table the staleness area over ``[warmup, horizon]``, its peak and the updates landing there, and
the run's event count) without the event loop, bit-identical to the engine's run.

Why it is a per-table recurrence: with a track per table no table ever waits for one, so the
engine dispatches every ready table at the end of the instant it becomes ready (after the
instant's completions, deferred releases and arrivals), and a table's jobs depend only on its own
feed, or for a derived table on its sources' freshness steps. Tables are computed in
topological order; each one is a list of **data steps** ``(t, avail)``, the instants where its
available data grows (a base table's arrivals at or before the horizon that add data, several
files landing at once taken together; a derived table's trailing edge, the minimum freshness of
its sources, after every completion instant of a source and at time 0), from which it runs the
engine's job rules (:mod:`staleness_lab.sim.engine`): a release at a step unless
``min_separation`` defers it to ``previous release + min_separation``; a job starting at the end
of its release instant (or at the completion of the job in flight, if later) with everything
available then (or what :meth:`~staleness_lab.sim.engine._Run._chopped_end` leaves under
``chop``: the engine's own rule, called here), cost ``E(n) = alpha + beta*n`` times the table's
next draw from its cost stream (``variability`` / ``cost_noise``, :mod:`.costs`) times the
slowdown factor at its start; a completion raising ``F`` at ``start + cost`` if that is at or
before the horizon. Floats are computed with the engine's operations in the engine's order: the
staleness area is accumulated per table in completion order (a sequential cumulative sum,
``numpy.cumsum``, which adds left to right as the engine's ``area +=`` does) and closed at the
horizon by the engine's own :func:`~staleness_lab.sim.trace.close_at_horizon`; the events are
the engine's count, data arrivals at or before the horizon (periodic arrival k at
``phase + k*period`` as :mod:`.arrivals` computes it) plus completed jobs.

Two paths per table, both exact: **vectorized** (numpy) when every job starts at its data step
and ends by the next one (no backlog: each step releases at once, chopping does not cut and
``min_separation`` does not defer) -- every table of the Golab figures at every load; otherwise
a **per-table loop** over the same rules, without a heap.

**Falls back to the engine** (:attr:`IdealSummary.fallback` says why) in one case only: a job of
zero duration, ``start + cost == start`` in floats (``alpha = 0`` with a tiny ``beta * n``, or a
cost draw near 0 under ``variability = 0`` or ``cost_noise`` from 0). The engine completes such
a job in a second round of the same instant, after that instant's arrivals and dispatch, so a
view fed by it is released later within the instant than the per-instant recurrence has it.
Everything else is computed here: periodic, replayed and compiled feeds (outages, jitter),
derived DAGs of any depth and fan-in, ``chop``, ``min_separation``, slowdown, ``variability`` /
``cost_noise`` and ``warmup``. The policy's hooks play no part: the ideal run is FIFO, and with
a track per table its order only picks tracks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.model.dag import topological_order
from staleness_lab.policies.base import ReleaseOrder
from staleness_lab.sim.costs import DRAW_BLOCK, cost_stream, noise_range, policy_stream
from staleness_lab.sim.engine import _Run, run
from staleness_lab.sim.size import check_run_size
from staleness_lab.sim.trace import Trace, close_at_horizon

_INF = math.inf


@dataclass(frozen=True, eq=False)
class IdealSummary:
    """What relative lateness needs of the unlimited-track run (Golab et al., Sec. 5), per table
    in file order: ``staleness_area`` (the integral of ``S_i`` over ``[warmup, horizon]``),
    ``max_staleness`` (its supremum there) and ``updates`` (jobs completed in that window), as
    :func:`~staleness_lab.sim.metrics.table_metrics` gives them for the engine's trace, and the
    run's ``events`` (data arrivals plus completed jobs). ``fallback`` is None when computed in
    closed form, else why the engine ran instead (see the module docstring)."""

    workload: Workload
    events: int
    staleness_area: np.ndarray
    max_staleness: np.ndarray
    updates: np.ndarray
    fallback: str | None = None

    @property
    def weighted_staleness_area(self) -> np.ndarray:
        """``p_i * integral S_i`` per table (Golab et al., Sec. 2.3), as ``table_metrics``
        computes it."""
        priority = np.array([t.priority for t in self.workload.tables], dtype=float)
        return priority * self.staleness_area

    @classmethod
    def from_trace(cls, trace: Trace, fallback: str | None = None) -> IdealSummary:
        """The summary of an engine run (:func:`ideal_run`), computed as ``table_metrics`` does."""
        w = trace.workload
        landed = trace.job_tables if w.warmup == 0 else trace.job_tables[trace.job_finish >= w.warmup]
        return cls(
            workload=w,
            events=trace.events,
            staleness_area=np.asarray(trace.staleness_area, dtype=float),
            max_staleness=np.asarray(trace.max_staleness, dtype=float),
            updates=np.bincount(landed, minlength=len(w.tables)).astype(np.int64),
            fallback=fallback,
        )


def ideal_run(workload: Workload, max_events: int | None = None) -> Trace:
    """The same workload with unlimited tracks, on the engine: FIFO on ``max(tracks, tables)``
    tracks, so every job starts when its table is released (Golab et al., Sec. 5: "relative
    lateness"). ``max_events`` as in :func:`~staleness_lab.sim.engine.run`. FIFO's order is the
    protocol's own :class:`~staleness_lab.policies.base.ReleaseOrder`, so the engine names no scheduler."""
    w = workload.with_overrides(tracks=max(workload.tracks, len(workload.tables)))
    return run(w, ReleaseOrder(), "ideal", max_events=max_events)


def ideal_summary(workload: Workload, max_events: int | None = None) -> IdealSummary:
    """:class:`IdealSummary` of :func:`ideal_run` in closed form (module docstring), equal to
    ``IdealSummary.from_trace(ideal_run(workload))`` bit for bit; the engine runs instead where
    the closed form does not apply. A run the engine would refuse for its size (``max_events``)
    is refused here too."""
    check_run_size(workload, max_events)
    try:
        return _closed_form(workload)
    except _ZeroDuration as err:
        summary = IdealSummary.from_trace(ideal_run(workload, max_events), fallback=str(err))
        return replace(summary, workload=workload)


class _ZeroDuration(Exception):
    """A job with ``start + cost == start``: the closed form does not apply (module docstring)."""


@dataclass(frozen=True)
class _JobRules:
    """One table's job rules as the engine applies them (see :func:`_jobs_loop`)."""

    name: str
    alpha: float
    beta: float
    min_separation: float
    chop_limit: float | None
    chopped_end: Callable[[float, float], float] | None
    noise: tuple[float, float] | None  # cost *= lo + span * U[0, 1), the table's stream
    seed: int
    slowdown: tuple[float, float, float] | None  # (factor, normal, normal + slow)

    def draws(self, count: int) -> np.ndarray:
        """The first ``count`` uniforms of the table's cost stream, fetched in the engine's
        blocks of :data:`DRAW_BLOCK`."""
        stream = cost_stream(self.seed, self.name)
        blocks = [stream.random(DRAW_BLOCK) for _ in range(-(-count // DRAW_BLOCK))]
        return np.concatenate(blocks)[:count] if blocks else np.empty(0)


@dataclass(frozen=True)
class _Completions:
    """One table's completed jobs in time order (finish, data_from, data_to), at or before the
    horizon."""

    finish: np.ndarray
    data_from: np.ndarray
    data_to: np.ndarray


def _closed_form(w: Workload) -> IdealSummary:
    """The summary table by table in topological order (module docstring); raises
    :class:`_ZeroDuration` where it does not apply."""
    n = len(w.tables)
    horizon, warmup = w.horizon, w.warmup
    noise = noise_range(w)
    s = w.slowdown
    slowdown = (s.factor, s.normal, s.normal + s.slow) if s is not None else None
    # chopping cuts where the engine's own rule says (its chop limits, its arrival boundaries)
    chopper = _Run(w, ReleaseOrder().bind(w, policy_stream(w.seed))) if any(
        w.chop_of(k) is not None for k in range(n)) else None
    files = w.files
    done: list[_Completions | None] = [None] * n
    arrivals = 0
    for name in topological_order([t.name for t in w.tables], w.source_map):
        i = w.index[name]
        table = w.tables[i]
        if table.sources is None:
            times, data, count = _feed(table.period, table.phase, files[i], horizon)
            arrivals += count
            steps_t, steps_v = _data_steps(times, data, table.initial_freshness)
        else:
            srcs = [w.index[src] for src in table.sources]
            steps_t, steps_v = _edge_steps([done[k] for k in srcs],  # type: ignore[misc]
                                           [w.tables[k].initial_freshness for k in srcs], table.initial_freshness)
        limit = None if chopper is None else chopper.chop_limit[i]
        cut = None if chopper is None or limit is None else partial(chopper._chopped_end, i)
        rules = _JobRules(
            name=table.name, alpha=table.alpha, beta=table.beta, min_separation=table.min_separation,
            chop_limit=limit, chopped_end=cut,
            noise=noise, seed=w.seed, slowdown=slowdown,
        )
        jobs = _jobs_vector(steps_t, steps_v, table.initial_freshness, rules, horizon)
        if jobs is None:
            jobs = _jobs_loop(steps_t.tolist(), steps_v.tolist(), table.initial_freshness, rules, horizon)
        done[i] = jobs
    area: list[float] = []
    peak: list[float] = []
    last_change: list[float] = []
    fresh: list[float] = []
    updates = np.zeros(n, dtype=np.int64)
    completed = 0
    for i, c in enumerate(done):
        assert c is not None
        a, p = _staleness(c.finish, c.data_from, warmup)
        area.append(a)
        peak.append(p)
        last_change.append(float(c.finish[-1]) if len(c.finish) else 0.0)
        fresh.append(float(c.data_to[-1]) if len(c.finish) else w.tables[i].initial_freshness)
        updates[i] = len(c.finish) if warmup == 0 else int(np.count_nonzero(c.finish >= warmup))
        completed += len(c.finish)
    close_at_horizon(area, peak, last_change, fresh, warmup, horizon)
    return IdealSummary(workload=w, events=arrivals + completed, staleness_area=np.array(area, dtype=float),
                        max_staleness=np.array(peak, dtype=float), updates=updates)


def _feed(period: float | None, phase: float, files: tuple[tuple[float, float], ...] | None,
          horizon: float) -> tuple[np.ndarray, np.ndarray, int]:
    """A base table's arrivals at or before the horizon, as (times, data_to, count): periodic
    arrival k (k >= 1) at ``phase + k*period``, computed as :func:`.arrivals.arrival_chunks`
    does, or the compiled or replayed files."""
    if files is None:
        assert period is not None
        last = math.floor((horizon - phase) / period) + 1  # one past the last arrival, up to rounding
        k = np.arange(1, max(last, 0) + 1, dtype=np.int64)
        times = phase + k * period
        times = times[times <= horizon]
        return times, times, len(times)
    log = np.array(files, dtype=float).reshape(-1, 2)
    log = log[log[:, 0] <= horizon]
    return log[:, 0], log[:, 1], len(log)


def _data_steps(times: np.ndarray, data: np.ndarray, initial: float) -> tuple[np.ndarray, np.ndarray]:
    """The instants where the available data grows and its value after each: per instant the
    last of the values landing then (several files at once), kept where it exceeds everything
    before it (``initial`` included)."""
    if len(times) == 0:
        return times, data
    last = np.append(times[1:] != times[:-1], True)
    times, data = times[last], data[last]
    before = np.maximum.accumulate(np.concatenate(([initial], data[:-1])))
    grows = data > before
    return times[grows], data[grows]


def _edge_steps(sources: list[_Completions], initial: list[float], own: float) -> tuple[np.ndarray, np.ndarray]:
    """A derived table's data steps: its trailing edge (the minimum freshness of its sources)
    at time 0 and after every instant a source completes a job, where it exceeds everything
    before it (the table's own ``initial_freshness`` included)."""
    if len(sources) == 1:
        times, edge = sources[0].finish, sources[0].data_to
    else:
        times = np.unique(np.concatenate([c.finish for c in sources]))
        edge = np.full(len(times), _INF)
        for c, f0 in zip(sources, initial):
            if len(c.finish) == 0:
                edge = np.minimum(edge, f0)
                continue
            at = np.searchsorted(c.finish, times, side="right") - 1
            edge = np.minimum(edge, np.where(at >= 0, c.data_to[np.maximum(at, 0)], f0))
    return _data_steps(np.concatenate(([0.0], times)), np.concatenate(([min(initial)], edge)), own)


def _costs(rules: _JobRules, start: np.ndarray, loaded: np.ndarray) -> np.ndarray:
    """The engine's job costs, vectorized: ``alpha + beta*n``, times the noise draw, times the
    slowdown factor where the job starts in a slow period."""
    cost = rules.alpha + rules.beta * loaded
    if rules.noise is not None:
        lo, span = rules.noise
        cost = cost * (lo + span * rules.draws(len(start)))
    if rules.slowdown is not None:
        factor, normal, cycle = rules.slowdown
        slow = np.ones(len(start), dtype=bool) if normal == 0 else np.remainder(start, cycle) >= normal
        cost = np.where(slow, cost * factor, cost)
    return cost


def _jobs_vector(steps_t: np.ndarray, steps_v: np.ndarray, initial: float, rules: _JobRules,
                 horizon: float) -> _Completions | None:
    """The table's jobs when each starts at its data step, loads all of it and ends by the next
    step; None when that does not hold (then :func:`_jobs_loop` computes them)."""
    if len(steps_t) == 0:
        return _Completions(steps_t, steps_v, steps_v)
    data_from = np.concatenate(([initial], steps_v[:-1]))
    if rules.chop_limit is not None and not np.all(data_from + rules.chop_limit >= steps_v):
        return None  # chopping would cut a job
    if rules.min_separation and np.any(steps_t[1:] < steps_t[:-1] + rules.min_separation):
        return None  # a release would be deferred
    finish = steps_t + _costs(rules, steps_t, steps_v - data_from)
    if np.any(finish[:-1] > steps_t[1:]):
        return None  # a job still runs at the next step
    if np.any(finish == steps_t):
        raise _ZeroDuration(f"table {rules.name!r} has a job of zero duration (start + cost == start)")
    done = int(np.searchsorted(finish, horizon, side="right"))
    return _Completions(finish[:done], data_from[:done], steps_v[:done])


def _jobs_loop(steps_t: list[float], steps_v: list[float], initial: float, rules: _JobRules,
               horizon: float) -> _Completions:
    """The table's jobs by the engine's rules, instant by instant: at each instant its
    completion, its deferred release, its data step, then a start if released and idle."""
    sep, chopped_end = rules.min_separation, rules.chopped_end
    alpha, beta = rules.alpha, rules.beta
    noise_lo, noise_span = rules.noise if rules.noise is not None else (0.0, 0.0)
    stream = cost_stream(rules.seed, rules.name) if rules.noise is not None else None
    queue: list[float] = []
    sd_factor, sd_normal, sd_cycle = rules.slowdown if rules.slowdown is not None else (1.0, 0.0, 0.0)
    fresh = avail = claimed = initial
    release: float | None = None
    last_release = -_INF
    pending = _INF  # a deferred release's instant
    finish = _INF  # the job in flight's completion, _INF when idle
    job_from = job_to = initial
    out_finish: list[float] = []
    out_from: list[float] = []
    out_to: list[float] = []
    steps_t = [*steps_t, _INF]
    j = 0
    while True:
        t = steps_t[j]
        if finish < t:
            t = finish
        if pending < t:
            t = pending
        if t > horizon:
            break
        if finish == t:
            out_finish.append(t)
            out_from.append(job_from)
            out_to.append(job_to)
            fresh = job_to
            finish = _INF
        if pending == t:
            pending = _INF
            if release is None and avail > claimed:
                release = last_release = t
        if steps_t[j] == t:
            old = avail
            avail = steps_v[j]
            j += 1
            if release is None and claimed >= old:
                due = last_release + sep
                if t < due:
                    pending = due
                else:
                    release = last_release = t
        if release is not None and finish == _INF:
            end = avail if chopped_end is None else chopped_end(fresh, avail)
            cost = alpha + beta * (end - fresh)
            if stream is not None:
                if not queue:
                    queue.extend(stream.random(DRAW_BLOCK)[::-1].tolist())
                cost *= noise_lo + noise_span * queue.pop()
            if sd_cycle and (sd_normal == 0 or t % sd_cycle >= sd_normal):
                cost *= sd_factor
            claimed = job_to = end
            job_from = fresh
            if end >= avail:
                release = None
            finish = t + cost
            if finish == t:
                raise _ZeroDuration(f"table {rules.name!r} has a job of zero duration (start + cost == start)")
    return _Completions(np.array(out_finish, dtype=float), np.array(out_from, dtype=float),
                        np.array(out_to, dtype=float))


def _staleness(finish: np.ndarray, old: np.ndarray, warmup: float) -> tuple[float, float]:
    """The staleness area and peak a table accumulates at its completions, before the horizon
    closes them: at a completion at ``t`` after ``a = max(previous change, warmup)``, the
    trapezoid ``(t - a) * ((t + a) / 2 - F)`` and the peak ``t - F`` (F the freshness before
    it), summed in completion order as the engine's ``area +=`` does."""
    last_change = np.concatenate(([0.0], finish[:-1]))
    a = np.where(last_change < warmup, warmup, last_change)
    inside = finish > a
    t, a, old = finish[inside], a[inside], old[inside]
    terms = (t - a) * ((t + a) * 0.5 - old)
    area = float(np.cumsum(np.concatenate(([0.0], terms)))[-1])
    peak = float(np.max(t - old)) if len(t) else -_INF
    return area, peak
