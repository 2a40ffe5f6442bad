"""A workload as Leontyev et al.'s adaptable sporadic task set (the mapping documented in
:mod:`.tasks`): what AUS binds to and what the bound checks judge a trace against."""

from __future__ import annotations

from fractions import Fraction

from staleness_lab.errors import Infeasible, InputError
from staleness_lab.model import Workload
from staleness_lab.theory.leontyev.bounds import rule_a_recovery_periods, rule_b_recovery_periods
from staleness_lab.theory.leontyev.tasks import Task, TaskSet, default_budget, exact, show

#: The recovery-period rules by their ``recovery_rule`` option value (digest Sec. 2.6).
RECOVERY_RULES = {"single": rule_a_recovery_periods, "all": rule_b_recovery_periods}


def noise_bounds(workload: Workload) -> tuple[Fraction, Fraction]:
    """(lo, hi) of the cost multiplier: ``cost_noise``, ``variability`` b as [b, 1 + b], or [1, 1]."""
    if workload.variability is not None:
        b = exact(workload.variability, "variability")
        return b, 1 + b
    if workload.cost_noise is not None:
        return exact(workload.cost_noise[0], "cost_noise[0]"), exact(workload.cost_noise[1], "cost_noise[1]")
    return Fraction(1), Fraction(1)


def provisioning_factor(workload: Workload) -> Fraction:
    """c of e_k = c (S + R L_max): hi * max(1, slowdown factor) under ``worst`` provisioning,
    (lo + hi)/2 under ``average`` (Sec. VII's worst- and average-case budgets)."""
    lo, hi = noise_bounds(workload)
    if workload.provisioning == "average":
        return (lo + hi) / 2
    factor = exact(workload.slowdown.factor, "slowdown.factor") if workload.slowdown is not None else Fraction(1)
    return hi * max(Fraction(1), factor)


def first_arrival(workload: Workload, k: int) -> Fraction:
    """phi_k: ``phase + period`` of a periodic feed, the first arrival adding data of a replayed
    one (0 for a derived table, whose phase no bound uses)."""
    table = workload.tables[k]
    if table.period is not None:
        return exact(table.phase, "phase") + exact(table.period, "period")
    if table.arrivals is not None:
        updates = table.updates()
        return exact(updates[0][0], "arrivals[0]") if updates else Fraction(0)
    return Fraction(0)


def max_load(workload: Workload, k: int, p: Fraction) -> Fraction:
    """L_max, the largest span one job of table ``k`` can load (Def. 8): base periodic
    max(phi_k - F_k(0), p_k + J_k + kappa_k); replayed the largest timestamp gap from F(0);
    derived p_k (its cap)."""
    table = workload.tables[k]
    if table.period is not None:
        lag = exact(table.arrival_jitter, "arrival_jitter") + exact(table.timestamp_jitter, "timestamp_jitter")
        return max(first_arrival(workload, k) - exact(table.initial_freshness, "initial_freshness"), p + lag)
    if table.arrivals is not None:
        gaps = table.update_lengths()
        return max((exact(g, "arrivals") for g in gaps), default=p)
    return p


def from_workload(workload: Workload, scheduler: str, *, recovery_rule: str = "single") -> TaskSet:
    """The task set of ``workload`` under ``scheduler`` (``aus`` or ``gedf-np``).

    Budgets are given or provisioned (:func:`provisioning_factor`); recovery periods are given
    or by Rule A/B under ``aus`` (p_k under ``gedf-np``, which has no modes). Bad input (exit 2):
    a ``recovery_period`` outside [e_k, p_k], naming ``tables[k].recovery_period``. Infeasible
    (Def. 9): some u_k > 1 or U_sum > m (exact: budgets and periods are exact fractions, so no
    summation order can tip U_sum over m; correction 6 concerns float sums).
    """
    if recovery_rule not in RECOVERY_RULES:
        raise InputError("recovery_rule", f"must be one of {', '.join(RECOVERY_RULES)}, got {recovery_rule!r}")
    periods = workload.require_periods(scheduler)
    c = provisioning_factor(workload)
    tasks = []
    for k, table in enumerate(workload.tables):
        p = exact(periods[k], "period", table=table.name)
        if table.budget is not None:
            e = exact(table.budget, f"tables[{k}].budget", table=table.name)
        else:
            e = default_budget(table.alpha, table.beta, max_load(workload, k, p), c)
        if e > p:
            raise Infeasible(f"{scheduler} needs u_k <= 1 (Def. 9): table {table.name!r} has e_k = {show(e)} "
                             f"> p_k = {show(p)}")
        p_r = None
        if table.recovery_period is not None and scheduler == "aus":
            p_r = exact(table.recovery_period, f"tables[{k}].recovery_period", table=table.name)
            if not e <= p_r <= p:
                raise InputError(f"tables[{k}].recovery_period", f"must lie in [e_k, p_k] = [{show(e)}, {show(p)}] "
                                 f"(Def. 10), got {show(p_r)}", table=table.name)
        sources = tuple(workload.index[s] for s in table.sources or ())
        tasks.append(Task(
            e=e, p=p, p_r=p_r, phi=first_arrival(workload, k), sources=sources, name=table.name,
            delta_f=None if table.recovery_threshold is None else exact(table.recovery_threshold, f"tables[{k}].recovery_threshold"),
            J=exact(table.arrival_jitter, "arrival_jitter"), kappa=exact(table.timestamp_jitter, "timestamp_jitter"),
        ))
    ts = TaskSet(tasks=tuple(tasks), m=workload.tracks)
    if ts.U_sum > ts.m:
        raise Infeasible(f"{scheduler} needs U_sum <= m (Def. 9): U_sum = {float(ts.U_sum):.6g} > m = {ts.m} tracks")
    if scheduler != "aus":
        return ts
    rule = RECOVERY_RULES[recovery_rule](ts)
    given = [t.p_r if workload.tables[k].recovery_period is not None else None for k, t in enumerate(ts.tasks)]
    return ts.with_recovery_periods([g if g is not None else r for g, r in zip(given, rule)])

