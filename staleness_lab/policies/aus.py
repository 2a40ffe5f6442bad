"""AUS, the adaptive update scheduler of Leontyev, Johnson and Anderson (digest Sec. 2.2-2.6).

Two modes per task, normal (N, period p_k) and recovery (R, period p_k^[r]); a monitor that
sees every arrival and completion; OPT, which first applies recovery->normal switches (rule RN)
and then admits normal->recovery switches within eq. 6; the reweighting rules (i)-(vii) that
place a task's first release after its switch; and the GEDF-NP dispatcher of
:mod:`staleness_lab.policies.gedf`, all on the sporadic job model of
:mod:`staleness_lab.sim.sporadic`.

At one instant t (after the engine's completions, timers and arrivals, Sec. 2.2's order):

1. for each job completed at t, in table order (Sec. 2.1 steps 2-4): a task in recovery whose
   table is fresh (the instant's arrivals count, A11) switches back at t_sw = max(f, d) and
   releases at its first non-fresh instant >= t_sw (rule RN, Sec. 2.3; it keeps its recovery
   share until t_sw); else a rule (v)-(vii) attached at admission, or a release deferred by rule
   (ii)/(iii), is planned (FIXED); else the engine's eq.-4 plan stands;
2. R->N switches due at t;
3. ADMIT (eq. 6): eligible are the tasks in normal mode just before t (correction 5: not one
   that left recovery at t) whose gap TE - F exceeds Delta F; tried in increasing increment
   e/p^[r] - u, ties by index (A13, correction 4), each admitted while the total share stays
   <= m (relative tolerance 1e-9, correction 6); refused tasks do not stop smaller ones;
4. reweighting at each admission t_c (Sec. 2.5): never released -> (i) r = t_c; last job
   pending or finished -> (ii) d <= t_c: r = t_c, (iii) d <= t_c + p^[r]: r = d, (iv) else the
   job itself is re-dated to r = t_c (pending: re-keyed; finished: only the next eq.-4 base
   moves); releases for a pending job wait for its completion (A8); executing -> decided at its
   completion f: (v) d <= t_c: r = t_c, (vi) f >= d: r = d, (vii) else r = f(1 - p^[r]/p) +
   r_j p^[r]/p + p^[r] (with f, not t_c: A10). Every rule-derived release still needs a
   non-fresh table (A9): a table fresh when its pending or executing job completes takes rule
   RN instead (step 1), and the mode log still names the rule (ii), (iii) or (v)-(vii).

Per instant AUS looks only at the tables an arrival or completion touched, the tasks due to
switch and, when some table is eligible, the eligible set. Eq. 6 is summed in exact fractions.
"""

from __future__ import annotations

import bisect
from fractions import Fraction

import numpy as np
import pandas as pd

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.policies.options import Configurable, Option
from staleness_lab.policies.registry import register
from staleness_lab.theory.leontyev.bounds import ADMIT_TOL, recovery_thresholds
from staleness_lab.theory.leontyev.workloads import from_workload

NORMAL, RECOVERY = "N", "R"


@register
class Aus(Configurable):
    """AUS (Leontyev et al., Sec. III): GEDF-NP on sporadic update jobs with per-task recovery
    modes admitted by eq. 6, switched back by rule RN and re-paced by rules (i)-(vii).

    Budgets, recovery periods and thresholds come from the tables (``budget``,
    ``recovery_period``, ``recovery_threshold``) or their defaults: e_k from the workload's
    provisioning, p^[r] by Rule A (``recovery_rule=single``) or Rule B (``all``), Delta F = A(V_k).
    """

    name = "aus"
    OPTIONS = (
        Option("recovery_rule", str, "single", "default recovery periods: single = Rule A (fastest single "
               "recovery, eq. 7), all = Rule B (every task may recover at once)", choices=("single", "all")),
    )

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        return _AusRun(workload, self.options["recovery_rule"]).bound()


class _AusRun:
    """AUS's state for one run (see the module docstring for the order of its steps)."""

    def __init__(self, workload: Workload, recovery_rule: str) -> None:
        ts = from_workload(workload, "aus", recovery_rule=recovery_rule)
        self.w = workload
        self.n = n = ts.n
        self.m = ts.m
        self.p = [float(v) for v in ts.p]
        self.p_r = [float(v) for v in ts.p_r]
        self.u = ts.u
        self.share = tuple(ts.recovery_share(k) for k in range(n))
        self.increment = tuple(s - u for s, u in zip(self.share, self.u))
        self.limit = ts.m * (1 + Fraction(ADMIT_TOL))
        self.delta_f = [float(v) for v in recovery_thresholds(ts)]
        self.children = workload.children
        self.mode = [NORMAL] * n
        self.switch_times: list[list[float]] = [[] for _ in range(n)]  # per task, the instants its mode flipped
        self.total = sum(self.u, Fraction(0))
        self.log: list[tuple[float, int, str, str, str]] = []
        self.touched: set[int] = set()
        self.completed: list[int] = []
        self.eligible: set[int] = set()
        self.rn_at: dict[int, float] = {}  # task -> its scheduled R->N switch
        self.deferred: dict[int, float] = {}  # task -> r* of rule (ii)/(iii), for its pending job
        self.executing_at: dict[int, float] = {}  # task -> t_c, admitted while its job executed

    def bound(self) -> BoundPolicy:
        return BoundPolicy(
            key=self.key, jobs="sporadic", period_at=self.period_at, on_arrival=self.on_arrival,
            on_completion=self.on_completion, on_instant=self.on_instant, annotations=self.annotations,
            key_is_deadline=True,
        )

    # -- what the engine asks --------------------------------------------------------------------
    def period_at(self, i: int, t: float) -> float:
        """p(T_i, t): p^[r] while T_i is in recovery at t, else p_i (mode history; a mode switched
        at t is in force at t)."""
        times = self.switch_times[i]
        if not times:
            return self.p[i]
        return self.p_r[i] if bisect.bisect_right(times, t) % 2 else self.p[i]

    def key(self, i: int, now: float, release: float, n: float) -> tuple[float, float]:
        """GEDF-NP: (deadline, release), ties by table position (A13)."""
        return (release + self.period_at(i, release), release)

    def on_arrival(self, i: int, now: float) -> None:
        self.touched.add(i)

    def on_completion(self, i: int, now: float) -> None:
        self.completed.append(i)
        self.touched.add(i)
        self.touched.update(self.children[i])

    # -- the monitor and OPT -------------------------------------------------------------------
    def on_instant(self, now: float, view) -> None:  # noqa: ANN001 - a SporadicView
        if self.completed:
            for i in sorted(self.completed):
                self._completed(i, now, view)
            self.completed.clear()
        leaving = [k for k, t in self.rn_at.items() if t == now] if self.rn_at else []
        for i in leaving:
            del self.rn_at[i]
            self._switch(i, now, NORMAL, "RN")
        mode, delta_f, eligible = self.mode, self.delta_f, self.eligible
        for i in self.touched:
            if mode[i] == NORMAL and view.trailing_edge(i) - view.freshness(i) > delta_f[i] and i not in leaving:
                eligible.add(i)
            else:
                eligible.discard(i)
        self.touched.clear()
        self.touched.update(leaving)  # eligible from the next instant on (correction 5)
        if self.eligible:
            self._admit(now, view)

    def _completed(self, i: int, now: float, view) -> None:  # noqa: ANN001
        """Sec. 2.1 steps 2-4 for the job of T_i that completed at ``now``."""
        job = view.last_job(i)
        t_c = self.executing_at.pop(i, None)
        r_star = self.deferred.pop(i, None)
        if t_c is not None:  # admitted at t_c while this job executed: its rule is decided now, at f
            f, d, p, p_r = now, job.deadline, self.p[i], self.p_r[i]
            if d <= t_c:
                r_star, rule = t_c, "v"
            elif f >= d:
                r_star, rule = d, "vi"
            else:
                r_star, rule = f * (1 - p_r / p) + job.release * p_r / p + p_r, "vii"
            self._note_rule(i, rule)  # named even when RN below takes precedence, as (ii)/(iii) are
        if self.mode[i] == RECOVERY and view.fresh(i):  # rule RN before any rule's r* (Sec. 2.1, A9)
            t_sw = max(now, job.deadline)
            view.plan_release(i, first_nonfresh_from=t_sw)
            self.rn_at[i] = t_sw
            if t_sw > now:
                view.wake_at(t_sw)
            return
        if r_star is not None:
            view.plan_release(i, at=r_star)

    def _admit(self, now: float, view) -> None:  # noqa: ANN001
        """ADMIT(t) (Sec. 2.4) over the eligible tasks, then rules (i)-(vii) for each admitted."""
        for i in sorted(self.eligible, key=lambda k: (self.increment[k], k)):
            if self.total + self.increment[i] <= self.limit:
                self.eligible.discard(i)
                self._switch(i, now, RECOVERY, "NR")
                self._reweight(i, now, view)

    def _reweight(self, i: int, t_c: float, view) -> None:  # noqa: ANN001
        """Rules (i)-(iv) now, or (v)-(vii) at the completion of an executing job (Sec. 2.5)."""
        job = view.last_job(i)
        if job is None:
            view.plan_release(i, at=t_c)
            return self._note_rule(i, "i")
        if job.started and not job.finished:
            self.executing_at[i] = t_c
            return None
        if job.deadline <= t_c:
            r_star, rule = t_c, "ii"
        elif job.deadline <= t_c + self.p_r[i]:
            r_star, rule = job.deadline, "iii"
        else:
            view.redate(i, t_c)
            return self._note_rule(i, "iv")
        if job.finished:
            view.plan_release(i, at=r_star)
        else:
            self.deferred[i] = r_star
        return self._note_rule(i, rule)

    def _switch(self, i: int, now: float, mode: str, rule: str) -> None:
        old = self.mode[i]
        self.mode[i] = mode
        self.switch_times[i].append(now)
        self.total += self.increment[i] if mode == RECOVERY else -self.increment[i]
        self.log.append((now, i, old, mode, rule))

    def _note_rule(self, i: int, rule: str) -> None:
        """Attach the reweighting rule to the last N->R entry of T_i's log."""
        for k in range(len(self.log) - 1, -1, -1):
            if self.log[k][1] == i and self.log[k][3] == RECOVERY:
                self.log[k] = (*self.log[k][:4], f"NR/{rule}")
                return

    def annotations(self) -> dict[str, pd.DataFrame]:
        """The mode log, tidy: time, table, mode_from, mode_to, rule (``RN``, or ``NR/<rule>``
        naming the reweighting rule (i)-(vii) of Sec. 2.5 whose case the switch falls under; a
        table fresh when the job pending or executing at the switch completes releases by rule
        RN instead of the rule's r* (Sec. 2.1 step 2, A9), and keeps the rule's name), and the
        total share sum_k e_k/p(T_k, t) after the switch (eq. 6's left side)."""
        names = [t.name for t in self.w.tables]
        share, rows = sum(self.u, Fraction(0)), []
        for time, i, old, new, rule in self.log:
            share += self.increment[i] if new == RECOVERY else -self.increment[i]
            rows.append((time, names[i], old, new, rule, float(share)))
        frame = pd.DataFrame(rows, columns=["time", "table", "mode_from", "mode_to", "rule", "total_share"])
        frame["table"] = frame["table"].astype("string")
        return {"modes": frame}

