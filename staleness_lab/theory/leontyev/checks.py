"""Leontyev, Johnson and Anderson's claims about AUS and GEDF-NP, checked on a sporadic trace.

Pure functions of a trace, its workload and the task set (digest ``specs/leontyev-aus.md``; its
corrections override its body). One record per table for the first three claims, one per N->R
switch of a base table, one for the capacity:

* ``tardiness``: max(0, f - d) <= Y_i (Theorem 1, digest Sec. 3.1);
* ``response-time``: f - r <= Theta_i = p_i + Y_i (Lemma 1, eq. 5, digest Sec. 3.2);
* ``staleness``: S(V_k, t) <= A(V_k) (Definition 13, Theorems 2 and 3, digest Sec. 1.6, 3.4);
* ``recovery-time``: BL(V_k, .) empty by t_0 + x_k(lambda) (Theorem 4, digest Sec. 3.5 and
  correction 2);
* ``capacity``: sum_k e_k / p(T_k, t) <= m at every t (eq. 6, digest Sec. 2.4), with the rules
  that keep it (RN at max(f, d) of a job leaving V_k fresh, NR only past Delta F: acceptance
  check 4).

An unfinished job counts as finishing at the horizon (its tardiness and response time are at
least that), so a run cut at the horizon can show a violation but never hide one. Checks cover
[0, horizon] whatever the workload's ``warmup``. Comparisons use :func:`~staleness_lab.theory.
records.within` (relative tolerance 1e-9, correction 6).

The claims are stated for GEDF-NP on adaptable sporadic jobs: under any other policy the
``scheduler`` precondition is unmet (the records are kept, undecided), and a trace without
deadlines (the Golab job model) has tardiness observed None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

from staleness_lab.errors import Infeasible
from staleness_lab.model import Workload
from staleness_lab.sim.trace import Trace
from staleness_lab.theory.leontyev.bounds import (preconditions, recovery_thresholds, recovery_time_bound,
                                                  response_time_bounds, staleness_bounds, tardiness_bounds,
                                                  tardiness_terms, total_share)
from staleness_lab.theory.leontyev.tasks import SCHEDULERS, TaskSet
from staleness_lab.theory.leontyev.workloads import first_arrival, from_workload
from staleness_lab.theory.records import REL_TOL, CheckRecord, Precondition, equal, within

T1 = "Leontyev et al., Theorem 1"
L1 = "Leontyev et al., Lemma 1"
T2 = "Leontyev et al., Theorem 2"
T3 = "Leontyev et al., Theorem 3"
T4 = "Leontyev et al., Theorem 4"
EQ6 = "Leontyev et al., eq. 6"
#: How many intervals a record lists in its terms (the count is given beside them).
LISTED = 10
#: Recovery mode in AUS's mode log (``trace.frames["modes"]``; normal mode is ``N``).
RECOVERY = "R"

Interval = tuple[float, float]


# -- the task set the theorems are stated for --------------------------------------------------

@dataclass(frozen=True)
class Model:
    """What the claims are judged against: the ``policy`` run, the ``scheduler`` whose task model
    the bounds use (``aus`` or ``gedf-np``; gedf-np's for any other policy), the task set ``ts``
    (None when some u_k > 1: Def. 9 admits no task set), Def. 9's two preconditions and the
    bounds Y, Theta, A (floats per table; None without a task set)."""

    policy: str
    scheduler: str
    ts: TaskSet | None
    utilization: tuple[Precondition, Precondition]  # task-utilization, utilization
    Y: tuple[float, ...] | None
    theta: tuple[float, ...] | None
    A: tuple[float, ...] | None


def task_model(workload: Workload, policy: str, recovery_rule: str = "single") -> Model:
    """The task set of ``workload`` under ``policy`` (:func:`.workloads.from_workload`) with its
    bounds. When the workload is infeasible (Def. 9) the records are still produced: for U_sum > m
    from the nominal task set (:func:`nominal_task_set`, ``utilization`` unmet), for some u_k > 1
    without bounds (``task-utilization`` unmet)."""
    scheduler = policy if policy in SCHEDULERS else "gedf-np"
    try:
        ts = from_workload(workload, scheduler, recovery_rule=recovery_rule)
    except Infeasible as err:
        ts = nominal_task_set(workload, scheduler)
        if ts is None:
            unmet = (Precondition("task-utilization", False, err.reason),
                     Precondition("utilization", False, f"U_sum is not defined: {err.reason}"))
            return Model(policy, scheduler, None, unmet, None, None, None)
    return Model(policy, scheduler, ts, preconditions(ts), _floats(tardiness_bounds(ts, scheduler)),
                 _floats(response_time_bounds(ts, scheduler)), _floats(staleness_bounds(ts, scheduler)))


def _floats(values: Sequence[Fraction]) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def nominal_task_set(workload: Workload, scheduler: str) -> TaskSet | None:
    """The task set of a workload with U_sum > m, for bounds beside the unmet ``utilization``:
    budgets, periods and feeds mapped as :func:`.workloads.from_workload` does (it runs on one
    processor per table, where U_sum <= m), then back on the workload's m; p_k^[r] is the table's
    ``recovery_period`` or p_k under ``aus`` (Rules A and B need U_sum <= m). None when some
    u_k > 1."""
    try:
        wide = from_workload(workload.with_overrides(tracks=max(workload.tracks, len(workload.tables))), "gedf-np")
    except Infeasible:
        return None
    ts = wide.with_m(workload.tracks)
    if scheduler != "aus":
        return ts
    given = [t.recovery_period for t in workload.tables]
    return ts.with_recovery_periods([p if g is None else g for g, p in zip(given, ts.p)])


# -- what the trace shows ----------------------------------------------------------------------

@dataclass(frozen=True)
class Jobs:
    """Every released job of a run, completed or not (digest Sec. 1.4-1.5), as aligned arrays:
    table position, effective release (after any rule-(iv) re-dating, Lemma 1 [D]), deadline
    (NaN without deadlines), start and cost (NaN for a job not started), ``end`` (the finish, or
    the horizon for a job unfinished at it) and ``finished``."""

    table: np.ndarray
    release: np.ndarray
    deadline: np.ndarray
    start: np.ndarray
    cost: np.ndarray
    end: np.ndarray
    finished: np.ndarray
    has_deadlines: bool

    @property
    def tardiness(self) -> np.ndarray:
        """max(0, f - d) per job (Def. 11), horizon - d for an unfinished one."""
        return np.maximum(0.0, self.end - self.deadline)

    @property
    def response(self) -> np.ndarray:
        """f - r per job (Def. 11), horizon - r for an unfinished one."""
        return self.end - self.release


def run_jobs(trace: Trace) -> Jobs:
    """The completed, in-flight and released-but-unstarted jobs of ``trace`` (:class:`Jobs`)."""
    horizon = trace.workload.horizon
    cols = trace.columns
    done, flight = trace.n_jobs, np.array(trace.in_flight, dtype=float).reshape(-1, 7)
    waiting = np.array(trace.unstarted, dtype=float).reshape(-1, 4)
    sporadic = trace.job_model == "sporadic"

    def deadlines(pairs: list[tuple[float, float]], count: int) -> np.ndarray:
        return np.array(pairs, dtype=float).reshape(-1, 2)[:, 0] if sporadic else np.full(count, np.nan)

    nan = np.full(len(waiting), np.nan)
    return Jobs(
        table=np.concatenate([cols["table"], flight[:, 0], waiting[:, 0]]).astype(np.int64),
        release=np.concatenate([cols["release"], flight[:, 2], waiting[:, 1]]),
        deadline=np.concatenate([deadlines(trace.deadlines, done), deadlines(trace.in_flight_deadlines, len(flight)),
                                 waiting[:, 2]]),
        start=np.concatenate([cols["start"], flight[:, 3], nan]),
        cost=np.concatenate([cols["cost"], flight[:, 6], nan]),
        end=np.concatenate([cols["finish"], np.full(len(flight) + len(waiting), horizon)]),
        finished=np.concatenate([np.ones(done, dtype=bool), np.zeros(len(flight) + len(waiting), dtype=bool)]),
        has_deadlines=sporadic,
    )


def worst_per_table(table: np.ndarray, values: np.ndarray, n: int) -> list[int | None]:
    """Per table position, the index of the job with the largest ``values`` (the earliest such
    job on ties; NaNs ignored), None for a table without one."""
    keep = np.flatnonzero(~np.isnan(values))
    out: list[int | None] = [None] * n
    if len(keep):
        order = keep[np.lexsort((-keep, values[keep], table[keep]))]
        last = np.r_[table[order][1:] != table[order][:-1], True]
        for idx in order[last]:
            out[int(table[idx])] = int(idx)
    return out


@dataclass(frozen=True)
class Step:
    """A right-continuous step function from time 0: ``values[i]`` holds on [times[i], times[i+1])
    (F and TE, digest Sec. 1.3; events at an instant all count at it, A11)."""

    times: np.ndarray
    values: np.ndarray

    def at(self, t: float | np.ndarray) -> float | np.ndarray:
        return self.values[np.searchsorted(self.times, t, side="right") - 1]

    def sup_gap(self, start: float, end: float) -> tuple[float, float]:
        """sup of t - value(t) over [start, end] and where it is approached: t - F grows between
        steps, so just before each step inside the window, or at ``end`` (acceptance check 6)."""
        i0 = int(np.searchsorted(self.times, start, side="right")) - 1
        i1 = int(np.searchsorted(self.times, end, side="right")) - 1
        at = np.r_[self.times[i0 + 1:i1 + 1], end]
        gaps = at - self.values[i0:i1 + 1]
        best = int(np.argmax(gaps))
        return float(gaps[best]), float(at[best])


def step_functions(frame: pd.DataFrame, column: str, names: Sequence[str]) -> list[Step]:
    """Per table (in ``names`` order) the step function of a tidy (table, time, ``column``)
    frame ordered by time within each table (``trace.freshness``, the ``trailing_edge`` frame)."""
    groups = {name: g for name, g in frame.groupby("table", sort=False)}
    return [Step(groups[n]["time"].to_numpy(dtype=float), groups[n][column].to_numpy(dtype=float)) for n in names]


@dataclass(frozen=True)
class Feed:
    """Base table V_k's files (arrival, timestamp) with each one's nominal slot a*_j and whether it
    is well-behaved (Def. 2: arr in [a*_j - J, a*_j], ts in [arr - kappa, arr]); phi, p, J, kappa
    as the task set maps them (:mod:`.tasks`)."""

    arrival: np.ndarray
    timestamp: np.ndarray
    slot: np.ndarray
    on_time: np.ndarray
    phi: float
    p: float
    J: float
    kappa: float


@dataclass(frozen=True)
class Run:
    """One trace's facts the checks share: its workload (at the run's horizon), jobs, F and TE
    step functions per table, and AUS's mode log (empty under other policies)."""

    workload: Workload
    jobs: Jobs
    F: list[Step]
    TE: list[Step]
    modes: pd.DataFrame
    feeds: dict[int, Feed] = field(default_factory=dict)

    def feed(self, k: int) -> Feed:
        """Base table V_k's feed (:func:`feed`), built once."""
        if k not in self.feeds:
            self.feeds[k] = feed(self.workload, k)
        return self.feeds[k]

    def completed(self, k: int) -> np.ndarray:
        """The indices of T_k's completed jobs, in completion order (finish non-decreasing)."""
        return np.flatnonzero((self.jobs.table == k) & self.jobs.finished)

    @property
    def horizon(self) -> float:
        return self.workload.horizon

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.workload.tables]

    def fresh_completions(self, k: int) -> np.ndarray:
        """The completions of T_k after which V_k is fresh, TE <= F, arrivals at the instant
        counting (digest Sec. 1.3, A11): the starts of Theorems 2-3's windows."""
        times = self.F[k].times[1:]
        return times[self.TE[k].at(times) <= self.F[k].at(times)]


def observe(trace: Trace) -> Run:
    """The :class:`Run` of a trace: a sporadic one brings its trailing edges, a Golab-model one
    (PRP, the paper's baseline) gets them from its workload's files (:func:`trailing_edges`)."""
    names = [t.name for t in trace.workload.tables]
    modes = trace.frames.get("modes")
    if modes is None:
        modes = pd.DataFrame(columns=["time", "table", "mode_from", "mode_to", "rule", "total_share"])
    F = step_functions(trace.freshness, "freshness", names)
    edges = trace.frames.get("trailing_edge")
    TE = step_functions(edges, "trailing_edge", names) if edges is not None else trailing_edges(trace.workload, F)
    return Run(trace.workload, run_jobs(trace), F, TE, modes)


def trailing_edges(workload: Workload, F: Sequence[Step]) -> list[Step]:
    """TE(V_k, t) (Def. 6) on [0, horizon] from the workload alone and the freshness steps ``F``:
    for a base table the largest timestamp of the files arrived by t (arrivals at t count, A11),
    never below F(V_k, 0); for a derived table the least freshness of its sources. The same
    step functions the sporadic loop records, for a trace that records none."""
    horizon = workload.horizon
    out: list[Step] = []
    for k, table in enumerate(workload.tables):
        if table.is_base:
            arrival, timestamp, _, _ = files_and_slots(workload, k)
            keep = arrival <= horizon
            times = np.r_[0.0, arrival[keep]]
            values = np.maximum.accumulate(np.r_[table.initial_freshness, timestamp[keep]])
        else:
            sources = [F[workload.index[s]] for s in table.sources]  # type: ignore[union-attr]
            times = np.unique(np.concatenate([s.times for s in sources]))
            values = np.min([s.at(times) for s in sources], axis=0)
        last = np.r_[times[1:] != times[:-1], True]  # several files landing at once: the instant's last value
        times, values = times[last], values[last]
        rises = np.r_[True, values[1:] != values[:-1]]  # the sporadic loop records only raises
        out.append(Step(times[rises], values[rises]))
    return out


# -- feeds (Def. 2) --------------------------------------------------------------------------------

def feed(workload: Workload, k: int) -> Feed:
    """The files of base table ``k`` with their slots (:func:`files_and_slots`) and Def. 2's
    well-behavedness, with relative tolerance 1e-9."""
    table = workload.tables[k]
    arrival, timestamp, slot, counted = files_and_slots(workload, k)
    J, kappa = table.arrival_jitter, table.timestamp_jitter
    tol = REL_TOL * np.maximum(1.0, np.abs(slot))
    on_time = (counted & (arrival >= slot - J - tol) & (arrival <= slot + tol)
               & (timestamp >= arrival - kappa - tol) & (timestamp <= arrival + tol))
    return Feed(arrival, timestamp, slot, on_time, float(first_arrival(workload, k)),
                float(workload.periods[k]), J, kappa)  # type: ignore[arg-type]


def files_and_slots(workload: Workload, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Arrivals, timestamps and nominal slots a*_j of base table ``k``'s files, and which files
    count for Def. 2. Files: ``workload.files`` (replayed and compiled feeds, outages applied), or
    a plain periodic feed's at phase + j*period (j >= 1, timestamp = arrival) up to the horizon.
    Slots: phase + j*period for a periodic feed (jitter and outages keep file j's slot); phi +
    (j - j_1)*p_k for a replayed one, j_1 its first file adding data (the earlier ones carry none
    and do not count)."""
    table = workload.tables[k]
    files = workload.files[k]
    if files is None:
        j = np.arange(1, math.floor((workload.horizon - table.phase) / table.period) + 2)  # type: ignore[operator]
        arrival = table.phase + j * table.period
        arrival = arrival[arrival <= workload.horizon]
        return arrival, arrival, arrival, np.ones(len(arrival), dtype=bool)
    log = np.array(files, dtype=float).reshape(-1, 2)
    index = np.arange(len(log))
    if table.period is not None:
        return log[:, 0], log[:, 1], table.phase + (index + 1) * table.period, np.ones(len(log), dtype=bool)
    adds = np.flatnonzero(log[:, 1] > table.initial_freshness)
    first = int(adds[0]) if len(adds) else len(log)
    slot = float(first_arrival(workload, k)) + (index - first) * float(workload.periods[k])  # type: ignore[arg-type]
    return log[:, 0], log[:, 1], slot, index >= first


def unhealthy(f: Feed, horizon: float) -> list[Interval]:
    """The open stretches of [0, horizon] where the feed is unhealthy (Def. 2): no well-behaved
    file arrived in [t - p - J, t]. For t < phi_k nothing can have arrived and the feed counts
    as healthy (digest Sec. 1.2 [D]). An interval ending at the horizon runs to it."""
    good = f.arrival[f.on_time]
    starts, ends = np.r_[0.0, good], np.r_[f.phi, good + f.p + f.J]
    order = np.argsort(starts, kind="stable")
    starts, reach = starts[order], np.maximum.accumulate(ends[order])
    out = [(float(reach[i]), float(min(starts[i + 1], horizon)))
           for i in np.flatnonzero(starts[1:] > reach[:-1] + REL_TOL * np.maximum(1.0, reach[:-1]))
           if reach[i] < horizon]
    if not within(horizon, float(reach[-1])):
        out.append((float(reach[-1]), horizon))
    return out


def beyond(F: Step, bound: float, horizon: float) -> list[Interval]:
    """The open stretches of [0, horizon] where S = t - F(t) exceeds ``bound`` (a source that is
    not A(V_i)-healthy, Def. 12)."""
    nxt = np.r_[F.times[1:], horizon]
    over = np.array([not within(float(b - v), bound) for b, v in zip(nxt, F.values)], dtype=bool)
    starts = np.maximum(F.times, F.values + bound)[over]
    return [(float(a), float(b)) for a, b in zip(starts, nxt[over])]


def union(intervals: list[Interval]) -> list[Interval]:
    """Overlapping or touching intervals merged, sorted."""
    out: list[Interval] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


# -- preconditions ---------------------------------------------------------------------------------

def scheduler_precondition(model: Model, needs_aus: bool = False) -> Precondition:
    """``scheduler``: the claim is stated for GEDF-NP on adaptable sporadic jobs (Theorem 1), or
    for AUS alone (Theorem 4, eq. 6)."""
    wanted = ("aus",) if needs_aus else SCHEDULERS
    met = model.policy in wanted
    what = "AUS" if needs_aus else "GEDF-NP on adaptable sporadic jobs (aus, gedf-np)"
    return Precondition("scheduler", met, f"policy {model.policy} {'is' if met else 'is not'} {what}")


def no_task_set(name: str, model: Model) -> Precondition:
    """Precondition ``name`` unmet because no task set exists (some u_k > 1, Def. 9)."""
    return Precondition(name, False, f"no task set: {model.utilization[0].why}")


def budgets_precondition(model: Model, run: Run) -> Precondition:
    """``budgets``: no job ran longer than its WCET e_k (Theorem 1's premise; digest A18: an
    average-case budget makes the bounds "expected, not guaranteed")."""
    if model.ts is None:
        return no_task_set("budgets", model)
    jobs, names = run.jobs, run.names
    e = _floats(model.ts.e)
    worst = [i for i in worst_per_table(jobs.table, jobs.cost, len(e)) if i is not None]
    if not worst:
        return Precondition("budgets", True, "no job started")
    ratio = {i: jobs.cost[i] / e[jobs.table[i]] for i in worst}
    over = [i for i in worst if not within(float(jobs.cost[i]), e[jobs.table[i]])]
    if not over:
        top = max(worst, key=lambda i: ratio[i])
        return Precondition("budgets", True, f"every job's cost <= e_k (largest cost/e_k {ratio[top]:.6g}, "
                                             f"table {names[jobs.table[top]]!r})")
    i = max(over, key=lambda i: ratio[i])
    k = int(jobs.table[i])
    why = (f"table {names[k]!r}: the job started at {jobs.start[i]:g} costs {jobs.cost[i]:.6g} > e_k = {e[k]:.6g} "
           f"(cost/e_k {ratio[i]:.6g})")
    if run.workload.provisioning == "average" and run.workload.tables[k].budget is None:
        why = f"expected, not guaranteed (average-case budget): {why}"
    return Precondition("budgets", False, why)


def recovery_periods_precondition(model: Model, run: Run) -> Precondition:
    """``recovery-periods`` (AUS): p_k^[r] in [e_k, p_k] (Def. 10) and no job had a shorter
    period d - r than p_k^[r], so W(T_k) = e_k / p_k^[r] is the maximum weight of Theorem 1."""
    if model.ts is None:
        return no_task_set("recovery-periods", model)
    jobs = run.jobs
    p_r = _floats(model.ts.p_r)
    period = jobs.deadline - jobs.release
    shortest = worst_per_table(jobs.table, -period, len(p_r))
    for k, i in enumerate(shortest):
        if i is not None and not within(p_r[k], float(period[i])):
            return Precondition("recovery-periods", False, f"table {run.names[k]!r}: a job released at "
                                f"{jobs.release[i]:g} has d - r = {period[i]:.6g} < p_k^[r] = {p_r[k]:.6g}")
    return Precondition("recovery-periods", True, "p_k^[r] in [e_k, p_k] (Def. 10) and every job's d - r >= p_k^[r]")


def response_precondition(model: Model, run: Run, k: int, worst: int | None) -> Precondition:
    """``response-times``: every job of T_k finished within Theta_k (Lemma 1), as observed."""
    if model.theta is None:
        return no_task_set("response-times", model)
    if worst is None:
        return Precondition("response-times", True, "no job released")
    observed = float(run.jobs.response[worst])
    met = within(observed, model.theta[k])
    return Precondition("response-times", met, f"max f - r = {observed:.6g} {'<=' if met else '>'} "
                                               f"Theta_k = {model.theta[k]:.6g}")


# -- eq. 6 on the mode log -------------------------------------------------------------------------

@dataclass(frozen=True)
class Shares:
    """eq. 6's left side after every instant's switches in AUS's mode log: ``times`` (0 first),
    ``total`` (exact) and the ``recovery`` set in force from each time on."""

    times: list[float]
    total: list[Fraction]
    recovery: list[frozenset[int]]

    @property
    def peak(self) -> int:
        """The index of the largest total (the earliest on ties)."""
        return max(range(len(self.total)), key=lambda i: (self.total[i], -i))


def mode_shares(run: Run, ts: TaskSet) -> Shares:
    """Replay the mode log: sum_k e_k / p(T_k, t), p = p_k^[r] in recovery (eq. 6, digest
    Sec. 2.4), recomputed from the task set, not read from the log's ``total_share``."""
    index = {name: k for k, name in enumerate(run.names)}
    recovery: set[int] = set()
    times, total, sets = [0.0], [total_share(ts, ())], [frozenset()]
    for time, group in run.modes.groupby("time", sort=True):
        for name, mode in zip(group["table"], group["mode_to"]):
            (recovery.add if mode == RECOVERY else recovery.discard)(index[name])
        times.append(float(time))
        total.append(total_share(ts, recovery))
        sets.append(frozenset(recovery))
    return Shares(times, total, sets)


def capacity_precondition(model: Model, shares: Shares | None) -> Precondition:
    """``capacity`` (AUS): eq. 6 held after every switch of the mode log, so sum_i e_i/p(T_i, t)
    <= m at every t (Theorem 1's premise under reweighting)."""
    if shares is None or model.ts is None:
        return no_task_set("capacity", model)
    i = shares.peak
    peak = float(shares.total[i])
    met = within(peak, model.ts.m)
    return Precondition("capacity", met, f"max sum_k e_k/p(T_k, t) = {peak:.6g} at t = {shares.times[i]:g} "
                                         f"{'<=' if met else '>'} m = {model.ts.m}")


# -- records ---------------------------------------------------------------------------------------

def record(claim: str, theorem: str, table: str | None, observed: float | None, bound: float | None,
           pre: tuple[Precondition, ...], holds: bool | None = None, **extra: object) -> CheckRecord:
    """A record of ``observed <= bound`` (``holds`` overrides the comparison); undecided when
    either side is missing; ratio observed / bound."""
    if observed is None or bound is None:
        return CheckRecord(claim=claim, theorem=theorem, table=table, bound=bound, observed=observed,
                           preconditions=pre, holds_if_met=None, **extra)  # type: ignore[arg-type]
    ratio = observed / bound if bound > 0 and math.isfinite(bound) else None
    verdict = within(observed, bound) if holds is None else holds
    return CheckRecord(claim=claim, theorem=theorem, table=table, bound=bound, observed=observed, preconditions=pre,
                       holds_if_met=verdict, ratio=ratio, **extra)  # type: ignore[arg-type]


def theorem1_preconditions(model: Model, run: Run, shares: Shares | None) -> tuple[Precondition, ...]:
    """Theorem 1's (and Lemma 1's) hypotheses: the scheduler, U_sum <= m and u_k <= 1 (Def. 9),
    every job within its budget and, under AUS, the weights and eq. 6 of the reweighting."""
    task_utilization, utilization = model.utilization
    pre = [scheduler_precondition(model), utilization, task_utilization, budgets_precondition(model, run)]
    if model.scheduler == "aus":
        pre += [recovery_periods_precondition(model, run), capacity_precondition(model, shares)]
    return tuple(pre)


def _job_witness(run: Run, i: int | None) -> dict[str, object] | None:
    if i is None:
        return None
    jobs = run.jobs
    deadline = float(jobs.deadline[i])
    return {"release": float(jobs.release[i]), "deadline": None if math.isnan(deadline) else deadline,
            "finish": float(jobs.end[i]) if jobs.finished[i] else None, "unfinished": not bool(jobs.finished[i])}


def tardiness_records(model: Model, run: Run, pre: tuple[Precondition, ...]) -> list[CheckRecord]:
    """Theorem 1 (digest Sec. 3.1): every job of T_i has tardiness max(0, f - d) <= Y_i =
    e_i + (sum_{E(tau,m)} e_z - e_min) / (m - sum_{X(tau,m-1)} W(T_z)). Observed None without
    deadlines."""
    jobs = run.jobs
    tard = jobs.tardiness
    worst = worst_per_table(jobs.table, tard, len(run.names))
    terms: dict[str, object] = {}
    if model.ts is not None:
        t = tardiness_terms(model.ts, model.scheduler)
        terms = {"m": model.ts.m, "E": [run.names[k] for k in t.E], "X": [run.names[k] for k in t.X],
                 "sum_e": float(t.sum_e), "e_min": float(t.e_min), "sum_W": float(t.sum_w), "slack": float(t.slack)}
    out = []
    for k, name in enumerate(run.names):
        observed = (float(tard[worst[k]]) if worst[k] is not None else 0.0) if jobs.has_deadlines else None
        extra = {} if model.ts is None else {"e": float(model.ts.e[k])}
        out.append(record("tardiness", T1, name, observed, None if model.Y is None else model.Y[k], pre,
                          terms={**extra, **terms}, witness=_job_witness(run, worst[k])))
    return out


def response_time_records(model: Model, run: Run, pre: tuple[Precondition, ...],
                          worst: list[int | None]) -> list[CheckRecord]:
    """Lemma 1 (eq. 5, digest Sec. 3.2): every job of T_k finishes by r + Theta_k, Theta_k =
    p_k + Y_k; r is the effective release (after a rule-(iv) re-dating)."""
    out = []
    for k, name in enumerate(run.names):
        observed = float(run.jobs.response[worst[k]]) if worst[k] is not None else 0.0
        terms = {} if model.ts is None else {"p": float(model.ts.p[k]), "Y": model.Y[k]}  # type: ignore[index]
        out.append(record("response-time", L1, name, observed, None if model.theta is None else model.theta[k], pre,
                          terms=terms, witness=_job_witness(run, worst[k])))
    return out


@dataclass(frozen=True)
class Windows:
    """Where Theorems 2-3 apply to V_k: ``start`` (0 when F(V_k, 0) = 0, else the first completion
    leaving V_k fresh; None if neither), ``end`` (the horizon, or where the condition fails for
    good when ``terminal``: a finite feed's end, an outage running past the horizon), ``breaks``
    (the open stretches where the condition fails: the feed is unhealthy, or a source exceeds its
    A) and ``judged``, the windows Theorem 2 or 3 covers: in each stretch between breaks, from its
    first start to the stretch's end."""

    start: float | None
    end: float
    terminal: bool
    breaks: list[Interval]
    judged: list[Interval]

    @property
    def exists(self) -> bool:
        return self.start is not None and self.start <= self.end

    @property
    def inside(self) -> list[Interval]:
        """The breaks inside [start, end]."""
        if not self.exists:
            return []
        return [(a, b) for a, b in self.breaks if a < self.end and b > self.start]  # type: ignore[operator]


def windows(run: Run, k: int, breaks: list[Interval]) -> Windows:
    """Theorems 2-3's windows of V_k given the sorted, disjoint stretches where their condition
    fails (digest Sec. 1.6): each starts at a completion f_{k,g} leaving V_k fresh (g = 0: time 0
    with F = 0) and lasts while the condition holds."""
    horizon = run.horizon
    fresh = run.fresh_completions(k)
    zero = bool(run.F[k].values[0] == 0)

    def first_start(lo: float, hi: float) -> float | None:
        if lo == 0 and zero:
            return 0.0
        found = fresh[(fresh >= lo) & (fresh <= hi)]
        return float(found[0]) if len(found) else None

    terminal = bool(breaks) and breaks[-1][1] >= horizon
    stretches = zip([0.0, *(b for _, b in breaks)], [*(a for a, _ in breaks), horizon])
    judged = [(s, hi) for lo, hi in stretches if lo < hi and (s := first_start(lo, hi)) is not None]
    return Windows(first_start(0.0, horizon), breaks[-1][0] if terminal else horizon, terminal, breaks, judged)


def _listed(intervals: list[Interval]) -> list[list[float]]:
    return [[a, b] for a, b in intervals[:LISTED]]


def staleness_record(model: Model, run: Run, k: int, worst: int | None) -> CheckRecord:
    """Definition 13 with Theorem 2 (base) or 3 (derived), digest Sec. 1.6 and 3.4: if V_k is
    fresh at f_{k,g} (g = 0: time 0), the feed is healthy (base) or every source V_i is
    A(V_i)-healthy (derived) on [f_{k,g}, t_e], and every job of T_k has f - r <= Theta_k, then
    S(V_k, t) = t - F(V_k, t) <= A(V_k) on [f_{k,g}, t_e].

    The record covers [start, end] (see :class:`Windows`): ``windows`` is met when the condition
    holds all through it, and ``observed`` is the supremum of S over it (just before each F update
    and at the end), so a mid-run outage leaves the record undecided with the excess in ``ratio``.
    ``terms`` also judge Theorem 2 or 3 on the windows between breaks (``judged_*``).
    """
    table = run.workload.tables[k]
    theorem = T2 if table.is_base else T3
    ts = model.ts
    if table.is_base:
        f = run.feed(k)
        breaks = unhealthy(f, run.horizon)
        what, lag = "D_k unhealthy (Def. 2)", {"lag": max(f.phi, f.p + f.J + f.kappa), "phi": f.phi}
    elif model.A is not None:
        sources = [run.workload.index[s] for s in table.sources or ()]
        breaks = union([x for i in sources for x in beyond(run.F[i], model.A[i], run.horizon)])
        what, lag = "a source beyond its A (Def. 12)", {"lag": max(model.A[i] for i in sources),
                                                        "A_sources": {run.names[i]: model.A[i] for i in sources}}
    else:
        breaks, what, lag = [], "", {}
    w = windows(run, k, breaks)
    observed = at = None
    if w.exists:
        observed, at = run.F[k].sup_gap(w.start, w.end)  # type: ignore[arg-type]
    bound = None if model.A is None else model.A[k]
    judged = [run.F[k].sup_gap(s, e) for s, e in w.judged]
    judged_max = max((g for g, _ in judged), default=None)
    judged_holds = None if judged_max is None or bound is None else within(judged_max, bound)
    terms: dict[str, object] = {**lag, "breaks": _listed(w.inside), "breaks_count": len(w.inside),
                                "judged_windows": _listed(w.judged), "judged_count": len(w.judged),
                                "judged_max": judged_max, "judged_holds": judged_holds}
    if ts is not None:
        terms.update(theta=model.theta[k], p=float(ts.p[k]))  # type: ignore[index]
    pre = (scheduler_precondition(model), windows_precondition(model, table.is_base, w, what),
           response_precondition(model, run, k, worst))
    return record("staleness", theorem, table.name, observed, bound, pre, terms=terms,
                  window=None if observed is None else (w.start, w.end), witness=None if at is None else {"time": at})


def windows_precondition(model: Model, base: bool, w: Windows, what: str) -> Precondition:
    """``windows``: Theorems 2-3's window condition holds all through [start, end]."""
    if not base and model.A is None:
        return no_task_set("windows", model)
    if not w.exists:
        return Precondition("windows", False, "no window: V_k is never left fresh by a completion (nor F(V_k, 0) = 0) "
                                              "before the window condition fails for good")
    inside = w.inside
    if inside:
        a, b = inside[0]
        more = f" and {len(inside) - 1} more stretch(es)" if len(inside) > 1 else ""
        return Precondition("windows", False, f"{what} on ({a:g}, {b:g}){more} inside [{w.start:g}, {w.end:g}]: "
                                              f"Theorem {2 if base else 3} covers the judged windows only")
    cond = "D_k healthy" if base else "every source A(V_i)-healthy"
    ending = f" (it fails for good from {w.end:g})" if w.terminal else ""
    return Precondition("windows", True, f"V_k fresh at {w.start:g} and {cond} on [{w.start:g}, {w.end:g}]{ending}")


def first_empty(run: Run, k: int, t0: float) -> float | None:
    """The first instant >= ``t0`` at which BL(V_k, .) is empty, i.e. V_k is fresh (TE <= F; for
    a base table the same, digest Sec. 1.3): ``t0`` itself or a completion of T_k. None if the
    backlog is never empty by the horizon."""
    F, TE = run.F[k], run.TE[k]
    at = np.r_[t0, F.times[F.times > t0]]
    empty = TE.at(at) <= F.at(at)
    return float(at[np.argmax(empty)]) if empty.any() else None


def on_time_after(f: Feed, t0: float, t_end: float) -> Precondition:
    """``on-time-after``: every file arriving in (t_0, t_end] is well-behaved (Def. 2: not late,
    not early beyond J, timestamp within kappa), so D_k is healthy after t_0 (Theorem 4)."""
    late = np.flatnonzero((f.arrival > t0) & (f.arrival <= t_end) & ~f.on_time)
    if len(late):
        j = int(late[0])
        return Precondition("on-time-after", False, f"{len(late)} file(s) off their slot after t_0 = {t0:g}: the first "
                            f"arrives at {f.arrival[j]:g} (slot {f.slot[j]:g}, timestamp {f.timestamp[j]:g})")
    return Precondition("on-time-after", True, f"every file arriving in ({t0:g}, {t_end:g}] is on its slot (Def. 2)")


def recovery_faster(model: Model, k: int) -> Precondition:
    """``recovery-faster``: p_k^[r] < p_k (Theorem 4; x_k's denominator)."""
    if model.ts is None:
        return no_task_set("recovery-faster", model)
    p, p_r = float(model.ts.p[k]), float(model.ts.p_r[k])
    return Precondition("recovery-faster", p_r < p, f"p_k^[r] = {p_r:.6g} {'<' if p_r < p else '='} p_k = {p:.6g}")


def jitter_free(f: Feed) -> Precondition:
    """``jitter-free``: J_k = kappa_k = 0, which the oldest-pending reading of lambda needs
    (digest Sec. 3.5 [D], correction 2)."""
    return Precondition("jitter-free", f.J == 0 and f.kappa == 0,
                        f"J_k = {f.J:g}, kappa_k = {f.kappa:g} (the oldest-pending reading of lambda needs both 0)")


def observable(t0: float, x: float | None, cleared: float | None, horizon: float) -> Precondition:
    """``observable``: the backlog empties within the run, or t_0 + x_k <= horizon (so a backlog
    still there at the horizon refutes the bound)."""
    if cleared is not None:
        return Precondition("observable", True, f"the backlog empties at {cleared:g}")
    if x is not None and t0 + x <= horizon:
        return Precondition("observable", True, f"t_0 + x_k = {t0 + x:g} <= horizon {horizon:g}")
    due = "" if x is None else f" = {t0 + x:g}"
    return Precondition("observable", False,
                        f"the backlog is not empty at the horizon {horizon:g}, before t_0 + x_k{due}")


def recovery_record(model: Model, run: Run, k: int, t0: float, rule: str, worst: int | None) -> CheckRecord:
    """Theorem 4 (digest Sec. 3.5, correction 2) for base table V_k switched to recovery at t_0:
    BL(V_k, t) is empty at some t <= t_0 + x_k, x_k = (Theta_k p_k + (lambda + J_k + p_k)
    p_k^[r]) / (p_k - p_k^[r]), with lambda = t_0 - (timestamp of the oldest file pending at t_0),
    the reading of the counting argument that needs J = kappa = 0 (digest A15).

    Observed: the first instant >= t_0 with an empty backlog, minus t_0 (horizon - t_0 if it never
    empties: then the bound fails once t_0 + x_k <= horizon, else it is not ``observable``).
    """
    f = run.feed(k)
    level = float(run.F[k].at(t0))
    pending = f.timestamp[(f.arrival <= t0) & (f.timestamp > level)]
    oldest = float(pending.min()) if len(pending) else None
    lam = t0 - oldest if oldest is not None else 0.0
    cleared = first_empty(run, k, t0)
    faster = recovery_faster(model, k)
    x = float(recovery_time_bound(model.ts, k, lam)) if faster.met else None  # type: ignore[arg-type]
    end = run.horizon if cleared is None else cleared
    pre = (scheduler_precondition(model, needs_aus=True), response_precondition(model, run, k, worst), faster,
           on_time_after(f, t0, end), jitter_free(f), observable(t0, x, cleared, run.horizon))
    terms: dict[str, object] = {"t0": t0, "lambda": lam, "oldest_pending": oldest, "F_t0": level, "rule": rule,
                                "cleared": cleared is not None, "J": f.J, "p": f.p}
    if model.ts is not None:
        terms.update(theta=model.theta[k], p_r=float(model.ts.p_r[k]))  # type: ignore[index]
    verdict = cleared is not None and x is not None and within(end - t0, x)
    return record("recovery-time", T4, run.names[k], end - t0, x, pre, holds=verdict, terms=terms, window=(t0, end),
                  witness={"t0": t0, "cleared_at": cleared})


def recovery_records(model: Model, run: Run, worst: list[int | None]) -> list[CheckRecord]:
    """Theorem 4 for every N->R switch of a base table in AUS's mode log, in log order."""
    index = {name: k for k, name in enumerate(run.names)}
    rows = run.modes[run.modes["mode_to"] == RECOVERY]
    out = []
    for time, name, rule in zip(rows["time"], rows["table"], rows["rule"]):
        k = index[name]
        if run.workload.tables[k].is_base:
            out.append(recovery_record(model, run, k, float(time), str(rule), worst[k]))
    return out


def rule_violations(run: Run, delta_f: Sequence[float]) -> tuple[list[str], list[str]]:
    """Acceptance check 4's two rules on AUS's mode log: an R->N switch of T_k at t happens only
    at max(f, d) of T_k's last job completed by t, which left V_k fresh (rule RN, Sec. 2.3); an
    N->R switch only with TE - F > Delta F(V_k) (rule NR, Sec. 2.4)."""
    index = {name: k for k, name in enumerate(run.names)}
    jobs = run.jobs
    rn, nr = [], []
    for time, name, mode in zip(run.modes["time"], run.modes["table"], run.modes["mode_to"]):
        k, t = index[name], float(time)
        F, TE = run.F[k], run.TE[k]
        if mode == RECOVERY:
            gap = float(TE.at(t) - F.at(t))
            if not gap > delta_f[k]:
                nr.append(f"{name} admitted at {t:g} with TE - F = {gap:.6g} <= Delta F = {delta_f[k]:.6g}")
            continue
        done = run.completed(k)
        last = int(np.searchsorted(jobs.end[done], t, side="right")) - 1
        if last < 0:
            rn.append(f"{name} left recovery at {t:g} before any of its jobs completed")
            continue
        i = int(done[last])
        f, d = float(jobs.end[i]), float(jobs.deadline[i])
        if not (equal(max(f, d), t) and TE.at(f) <= F.at(f)):
            rn.append(f"{name} left recovery at {t:g}, not at max(f, d) = {max(f, d):g} of a job leaving it fresh")
    return rn, nr


def capacity_record(model: Model, run: Run, shares: Shares | None) -> CheckRecord:
    """eq. 6 (digest Sec. 2.4; acceptance check 4): AUS keeps sum_k e_k / p(T_k, t) <= m at every
    t (Theorem 1's premise under reweighting), leaves recovery only by rule RN and admits only
    past Delta F. Observed: the largest total share over the mode log; ``terms.relations`` the
    three parts of the verdict."""
    pre = (scheduler_precondition(model, needs_aus=True), model.utilization[1])
    if shares is None or model.ts is None:
        return record("capacity", EQ6, None, None, float(run.workload.tracks), pre)
    m = model.ts.m
    i = shares.peak
    peak = float(shares.total[i])
    rn, nr = rule_violations(run, _floats(recovery_thresholds(model.ts)))
    relations = {"sum_k e_k/p(T_k, t) <= m": within(peak, m), "R->N at max(f, d) of a job leaving V_k fresh": not rn,
                 "N->R only with TE - F > Delta F": not nr}
    return record("capacity", EQ6, None, peak, float(m), pre, holds=all(relations.values()),
                  terms={"U_sum": float(model.ts.U_sum), "switches": len(run.modes), "relations": relations,
                         "violations": (rn + nr)[:LISTED]},
                  witness={"time": shares.times[i], "recovery": sorted(run.names[k] for k in shares.recovery[i])})
