"""The adaptable sporadic job model of Leontyev, Johnson and Anderson (AUS), on the same feeds,
tracks, costs and staleness integrals as :mod:`staleness_lab.sim.engine`.

A policy chooses it with ``BoundPolicy.jobs = "sporadic"``; :func:`staleness_lab.sim.engine.run`
hands such runs here. What differs from the foundation's job model (digest Sec. 1.4, 2.1):

* **Files and freshness.** A base table's trailing edge TE is the largest timestamp of the files
  arrived so far (arrivals *at* t count, A11); a derived table's is the least freshness of its
  sources. V_k is fresh iff TE <= F. A file adding no data beyond TE is no work (it never leaves
  a table non-fresh) and is not queued.
* **Update length (Def. 8).** A base job loads exactly its oldest pending file; a derived job
  min(TE - F, p_k) (the cap stays p_k in recovery mode, A16). F only changes at completions.
* **Releases (eq. 3-4).** One incomplete job per task. At a completion of job j at f the next
  release is planned by eq. 4: at T0 = max(d_j, f), a non-fresh table releases with r = d_j
  (which may lie before f: retroactive, A12), a fresh one at its first later non-fresh instant
  (r = that instant). The first job is planned as eq. 4 after the dummy job 0 (r = d = f = 0).
  Every release gets the deadline d = r + p(T_k, r) (eq. 3), p from ``BoundPolicy.period_at``.
* **Policy requests** (AUS's reweighting rules, Sec. 2.5), through :class:`SporadicView` from
  ``on_instant``: :meth:`~SporadicView.plan_release` replaces the plan of a task with no
  incomplete job (FIXED(r*, f_prev) or WAIT_NONFRESH(t)), :meth:`~SporadicView.redate` re-dates
  the last job (rule iv), :meth:`~SporadicView.wake_at` asks for an instant.

Event order at one instant t (the issue's order; the digest's Sec. 2.2 lists arrivals first, and
the result is the same because every freshness test waits for step 4): 1. job completions (F
raised, derived trailing edges follow, the default eq.-4 plan set), plan timers and wake-ups;
2. file arrivals (TE raised); 3. ``on_instant(t, view)``; 4. due release plans, in table order:
freshness tests see the instant's arrivals (A11); 5. dispatch by the policy's key (GEDF-NP:
(d, r), ties by table position, A13) onto the lowest free tracks. Horizon rule as the
foundation's: events at t <= horizon are processed, a job running at the horizon does not
complete.

The engine never cuts a job at its budget e_k: checks test budgets on the trace.
"""

from __future__ import annotations

import math
from collections import deque
from heapq import heappop, heappush
from typing import NamedTuple

import numpy as np
import pandas as pd

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.sim.arrivals import arrival_chunks, next_chunk
from staleness_lab.sim.costs import DRAW_BLOCK
from staleness_lab.sim.trace import Trace, close_at_horizon, table_time_order

_INF = float("inf")
_NAN = float("nan")


class JobView(NamedTuple):
    """A read-only view of a task's last released job: times are NaN until they happen."""

    release: float
    deadline: float
    start: float
    finish: float

    @property
    def started(self) -> bool:
        return not math.isnan(self.start)

    @property
    def finished(self) -> bool:
        return not math.isnan(self.finish)


class SporadicView:
    """What a sporadic-model policy reads of the run at an instant, and what it may request."""

    def __init__(self, run: "SporadicRun") -> None:
        self._run = run

    @property
    def now(self) -> float:
        """The instant of the current ``on_instant`` call."""
        return self._run.now

    # -- reads -------------------------------------------------------------------------------
    def freshness(self, i: int) -> float:
        """F(V_i, now)."""
        return self._run.F[i]

    def trailing_edge(self, i: int) -> float:
        """TE(V_i, now) (Def. 6): the largest timestamp arrived (base), the least source
        freshness (derived)."""
        return self._run.te[i]

    def fresh(self, i: int) -> bool:
        """FRESH(V_i, now): TE <= F."""
        return self._run.te[i] <= self._run.F[i]

    def last_job(self, i: int) -> JobView | None:
        """The last released job of table ``i`` (None before its first release)."""
        run = self._run
        if math.isnan(run.release[i]):
            return None
        return JobView(run.release[i], run.deadline[i], run.start[i], run.finish[i])

    # -- requests ----------------------------------------------------------------------------
    def plan_release(self, i: int, *, at: float | None = None, first_nonfresh_from: float | None = None) -> None:
        """Replace the next-release plan of table ``i``, which must have no incomplete job.

        ``at=r*``: FIXED(r*, f_prev) (digest Sec. 2.1): at max(r*, f_prev) a non-fresh table
        releases with r = r*, a fresh one at its first later non-fresh instant.
        ``first_nonfresh_from=t``: WAIT_NONFRESH(t), a release at the first instant >= t at which
        the table is non-fresh (rule RN, Sec. 2.3). Exactly one of the two is given.
        """
        run = self._run
        if (at is None) == (first_nonfresh_from is None):
            raise ValueError("plan_release takes exactly one of at=, first_nonfresh_from=")
        if run.incomplete[i]:
            raise RuntimeError(f"plan_release: table {i} has an incomplete job; plan at its completion")
        if at is not None:
            f_prev = 0.0 if math.isnan(run.finish[i]) else run.finish[i]
            run.set_plan(i, max(at, f_prev, self.now), at)
        else:
            run.set_plan(i, max(first_nonfresh_from, self.now), None)  # type: ignore[type-var]

    def redate(self, i: int, release: float) -> None:
        """Rule (iv) (Sec. 2.5): re-assign the last job of table ``i`` the release ``release``
        and the deadline release + p(T_i, release). A pending job is re-keyed; for a finished
        job only the base of the next eq.-4 release moves (its record keeps its times)."""
        run = self._run
        if run.incomplete[i]:
            if not math.isnan(run.start[i]):
                raise RuntimeError(f"redate: table {i}'s job is executing (rules v-vii apply at its completion)")
            if math.isnan(run.redated_from[i]):
                run.redated_from[i] = run.release[i]
            run.release[i] = release
            run.deadline[i] = release + run.period_at(i, release)
            run.push_ready(i, self.now)
            return
        if math.isnan(run.release[i]):
            raise RuntimeError(f"redate: table {i} has released no job")
        deadline = release + run.period_at(i, release)
        run.set_plan(i, max(deadline, run.finish[i], self.now), deadline)

    def wake_at(self, t: float) -> None:
        """Make ``t`` an event instant (``on_instant`` is called then). Ignored unless now < t < inf."""
        if self.now < t < _INF:
            self._run.push_event(t, 2 * self._run.n)


class SporadicRun:
    """One simulation under the sporadic job model. Lists are indexed by table position."""

    def __init__(self, workload: Workload, bound: BoundPolicy, cost_streams: list[np.random.Generator] | None) -> None:
        w = workload
        self.w = w
        self.bound = bound
        self.n = n = len(w.tables)
        self.nominal = w.require_periods("the sporadic job model")
        self.period_at = bound.period_at or (lambda i, t: self.nominal[i])
        self.F = [t.initial_freshness for t in w.tables]
        self.te = list(self.F)
        self.queue: list[deque[float]] = [deque() for _ in range(n)]
        # each task's last released job (one incomplete job per task, eq. 4), one list per
        # field: times are NaN until they happen, ``incomplete`` until it finishes
        self.release = [_NAN] * n
        self.deadline = [_NAN] * n
        self.redated_from = [_NAN] * n
        self.track = [-1] * n
        self.start = [_NAN] * n
        self.finish = [_NAN] * n
        self.data_from = [_NAN] * n
        self.data_to = [_NAN] * n
        self.cost = [_NAN] * n
        self.incomplete = [False] * n
        # the next-release plan: (at, r) -- at ``at``, a non-fresh table releases with r (None:
        # r = the release instant), a fresh one waits and releases at its first non-fresh instant
        self.plan: list[tuple[float, float | None] | None] = [(0.0, 0.0)] * n
        self.due: set[int] = set(range(n))
        self.armed = [False] * n
        self.events: list[tuple[float, int]] = [(0.0, 2 * n)]
        self.ready: list[tuple] = []
        self.version = [0] * n
        self.now = 0.0
        self.streams = cost_streams
        self.draws: list[list[float]] = [[] for _ in range(n)]

    # -- bookkeeping the view uses -------------------------------------------------------------
    def push_event(self, t: float, code: int) -> None:
        heappush(self.events, (t, code))

    def set_plan(self, i: int, at: float, release: float | None) -> None:
        """Plan table ``i``'s next release (see :attr:`plan`): due now, or at ``at``.

        A table fresh until ``at`` cannot release at ``at``, so its timer is armed only once it
        turns non-fresh before then (:meth:`arm`): periodic feeds whose next file lands exactly at
        the deadline never need one. An unarmed plan whose table first turns non-fresh after
        ``at`` was fresh at ``at``: it releases then, with r = that instant (eq. 4's second case)."""
        self.plan[i] = (at, release)
        self.armed[i] = False
        if at <= self.now:
            self.due.add(i)
        elif self.te[i] > self.F[i]:
            self.arm(i, at)

    def arm(self, i: int, at: float) -> None:
        """A timer at ``at`` for table ``i``'s plan (once per plan)."""
        self.armed[i] = True
        heappush(self.events, (at, self.n + i))

    def push_ready(self, i: int, now: float) -> None:
        """(Re-)key table ``i``'s pending job in the ready heap (older entries go stale)."""
        v = self.version[i] + 1
        self.version[i] = v
        if self.bound.key_is_deadline:
            order = (self.deadline[i], self.release[i])
        else:
            order = self.bound.key(i, now, self.release[i], self.update_end(i) - self.F[i])
        heappush(self.ready, (order, i, v))

    def update_end(self, i: int) -> float:
        """Where a job of table ``i`` starting now stops loading (Def. 8): a base table's oldest
        pending file, a derived table's trailing edge capped at F + p_k (A16). The run's loop
        inlines this (a call per release and per start costs it about 12 % of its events/s)."""
        if self.w.tables[i].is_base:
            return self.queue[i][0]
        f, te, p = self.F[i], self.te[i], self.nominal[i]
        return te if te - f <= p else f + p

    def _noise(self, i: int, lo: float, span: float) -> float:
        """The next cost multiplier lo + span * U[0, 1) from table ``i``'s cost stream (the
        foundation engine's draws, in the same order)."""
        queue = self.draws[i]
        if not queue:
            queue.extend(self.streams[i].random(DRAW_BLOCK)[::-1].tolist())  # type: ignore[index]
        return lo + span * queue.pop()

    # -- the run -----------------------------------------------------------------------------
    def execute(self, policy_name: str, noise: tuple[float, float] | None) -> Trace:  # noqa: C901 - one loop on purpose
        w = self.w
        n = self.n
        horizon = w.horizon
        warmup = w.warmup
        tables = w.tables
        alpha = [t.alpha for t in tables]
        beta = [t.beta for t in tables]
        is_base = [t.is_base for t in tables]
        sources = [tuple(w.index[s] for s in (t.sources or ())) for t in tables]
        children = w.children
        custom_period = self.bound.period_at  # None: the nominal p_k, read without a call
        slowdown = w.slowdown
        key = self.bound.key
        by_deadline = self.bound.key_is_deadline
        on_arrival = self.bound.on_arrival
        on_start = self.bound.on_start
        on_completion = self.bound.on_completion
        on_instant = self.bound.on_instant
        view = SporadicView(self)

        F, te, queue, plan, due = self.F, self.te, self.queue, self.plan, self.due
        release, deadline, redated_from, incomplete = self.release, self.deadline, self.redated_from, self.incomplete
        job_track, job_start, job_finish = self.track, self.start, self.finish
        job_from, job_to, job_cost = self.data_from, self.data_to, self.cost
        events, ready, version = self.events, self.ready, self.version
        area = [0.0] * n
        peak = [-_INF] * n
        last_change = [0.0] * n
        done: list[tuple] = []
        deadlines: list[tuple[float, float]] = []
        te_steps: list[float] = [x for i in range(n) for x in (i, 0.0, te[i])]  # flat (table, time, TE) triples
        te_step = te_steps.extend
        free = list(range(min(w.tracks, n)))
        wake = 2 * n

        armed, arm = self.armed, self.arm
        nominal = self.nominal

        def raise_edge(c: int, edge: float, t: float) -> None:
            """TE(V_c) rose to ``edge`` at ``t``: a waiting plan releases now, a later one at its time."""
            te[c] = edge
            te_step((c, t, edge))
            planned = plan[c]
            if planned is not None:
                if planned[0] < t and not armed[c]:  # fresh at its time: r = this first non-fresh instant
                    plan[c] = (planned[0], None)
                if planned[0] <= t:
                    due.add(c)
                elif not armed[c]:
                    arm(c, planned[0])

        for c in range(n):  # derived tables whose sources start fresher than they do
            if sources[c]:
                edge = min(F[s] for s in sources[c])
                if edge > te[c]:
                    te[c] = edge
                    te_steps[3 * c + 2] = edge

        chunks = arrival_chunks(w)
        at_t, at_i, at_d = next_chunk(chunks)
        p = 0
        arrivals_before = 0
        t_arr = at_t[0]

        while True:
            t_event = events[0][0] if events else _INF
            t = t_event if t_event < t_arr else t_arr
            if t > horizon:
                break
            if on_instant is not None:  # the policy's requests read the instant
                self.now = t
            # 1. completions, plan timers, wake-ups
            while events and events[0][0] == t:
                code = heappop(events)[1]
                if code >= n:
                    if code < wake:
                        due.add(code - n)
                    continue
                i = code
                a = last_change[i] if last_change[i] > warmup else warmup
                if t > a:
                    area[i] += (t - a) * ((t + a) * 0.5 - F[i])
                    if t - F[i] > peak[i]:
                        peak[i] = t - F[i]
                F[i] = job_to[i]
                last_change[i] = t
                job_finish[i] = t
                incomplete[i] = False
                heappush(free, job_track[i])
                done.append((i, job_track[i], release[i], job_start[i], job_from[i], job_to[i], job_cost[i]))
                d = deadline[i]
                deadlines.append((d, redated_from[i]))
                plan[i] = (d if d > t else t, d)  # eq. 4's plan, T0 = max(d, f) (set_plan, inlined)
                armed[i] = False
                if d <= t:
                    due.add(i)
                elif te[i] > F[i]:
                    arm(i, d)
                for c in children[i]:
                    edge = min([F[s] for s in sources[c]])
                    if edge > te[c]:
                        raise_edge(c, edge, t)
                if on_completion is not None:
                    on_completion(i, t)
            # 2. file arrivals: a file beyond TE is work, queued in arrival order
            while t_arr == t:
                i = at_i[p]
                d = at_d[p]
                p += 1
                if d > te[i]:  # raise_edge, inlined: the hottest path
                    queue[i].append(d)
                    te[i] = d
                    te_step((i, t, d))
                    planned = plan[i]
                    if planned is not None:
                        if planned[0] < t and not armed[i]:  # fresh at its time: r = this first non-fresh instant
                            plan[i] = (planned[0], None)
                        if planned[0] <= t:
                            due.add(i)
                        elif not armed[i]:
                            arm(i, planned[0])
                if on_arrival is not None:
                    on_arrival(i, t)
                t_arr = at_t[p]
                if t_arr == _INF:
                    arrivals_before += p
                    at_t, at_i, at_d = next_chunk(chunks)
                    p = 0
                    t_arr = at_t[0]
            # 3. the policy's monitor
            if on_instant is not None:
                on_instant(t, view)
            # 4. release plans that are due (eq. 4), in table order
            if due:
                for i in sorted(due) if len(due) > 1 else due:
                    planned = plan[i]
                    if planned is None or incomplete[i] or planned[0] > t:
                        continue
                    if te[i] <= F[i]:
                        plan[i] = (planned[0], None)  # fresh: wait for the first non-fresh instant
                        continue
                    r = t if planned[1] is None else planned[1]
                    release[i] = r
                    deadline[i] = r + (nominal[i] if custom_period is None else custom_period(i, r))
                    redated_from[i] = job_start[i] = job_finish[i] = _NAN
                    incomplete[i] = True
                    plan[i] = None
                    v = version[i] + 1
                    version[i] = v
                    if by_deadline:
                        heappush(ready, ((deadline[i], r), i, v))
                        continue
                    if is_base[i]:  # update_end(i), inlined on the hot path
                        end = queue[i][0]
                    else:
                        f, e, cap = F[i], te[i], nominal[i]
                        end = e if e - f <= cap else f + cap
                    heappush(ready, (key(i, t, r, end - F[i]), i, v))
                due.clear()
            # 5. dispatch onto the lowest free tracks
            while free and ready:
                _, i, v = heappop(ready)
                if v != version[i]:
                    continue
                track = heappop(free)
                f = F[i]
                if is_base[i]:  # update_end(i), inlined on the hot path
                    end = queue[i].popleft()
                else:
                    e, cap = te[i], nominal[i]
                    end = e if e - f <= cap else f + cap
                cost = alpha[i] + beta[i] * (end - f)
                if noise is not None:
                    cost *= self._noise(i, *noise)
                if slowdown is not None:
                    cost *= slowdown.multiplier(t)
                job_track[i], job_start[i], job_from[i], job_to[i], job_cost[i] = track, t, f, end, cost
                heappush(events, (t + cost, i))
                if on_start is not None:
                    on_start(i, track, t)

        close_at_horizon(area, peak, last_change, F, warmup, horizon)
        running = [i for i in range(n) if incomplete[i] and not math.isnan(job_start[i])]
        waiting = [i for i in range(n) if incomplete[i] and math.isnan(job_start[i])]
        frames = {"trailing_edge": _trailing_edge_frame(w, te_steps)}
        if self.bound.annotations is not None:
            frames.update(self.bound.annotations())
        return Trace(
            workload=w,
            policy=policy_name,
            events=arrivals_before + p + len(done),
            jobs_done=done,
            in_flight=[(i, job_track[i], release[i], job_start[i], job_from[i], job_to[i], job_cost[i]) for i in running],
            staleness_area=area,
            max_staleness=peak,
            job_model="sporadic",
            deadlines=deadlines,
            in_flight_deadlines=[(deadline[i], redated_from[i]) for i in running],
            unstarted=[(i, release[i], deadline[i], redated_from[i]) for i in waiting],
            frames=frames,
        )


def _trailing_edge_frame(w: Workload, steps: list[float]) -> pd.DataFrame:
    """TE step functions from flat (table position, time, TE) triples, tidy: (table, time,
    trailing_edge) ordered by table position then time, starting with TE(V_k, 0)."""
    names = np.array([t.name for t in w.tables], dtype=object)
    columns = np.array(steps, dtype=float).reshape(-1, 3)  # positions are small ints, exact as floats
    pos, time, edge = columns[:, 0].astype(np.int64), columns[:, 1], columns[:, 2]
    order = table_time_order(pos, time)
    pos, time, edge = pos[order], time[order], edge[order]
    last = np.ones(len(pos), dtype=bool)  # several files landing at once: the instant's last step
    last[:-1] = (pos[1:] != pos[:-1]) | (time[1:] != time[:-1])
    return pd.DataFrame(
        {"table": pd.Series(names[pos[last]], dtype="string"), "time": time[last], "trailing_edge": edge[last]}
    )
