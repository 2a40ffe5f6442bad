"""Certified lag budgets: which freshness targets Leontyev et al.'s staleness bound guarantees.

A table's target (``target_lag``, resolved through the view DAG by :mod:`staleness_lab.model.
targets`) bounds its staleness S(V_k, t) = t - F(V_k, t) end to end, which is exactly what
Def. 13's A(V_k) bounds (Theorems 2 and 3, digest Sec. 3.4): A(V_k) = Theta_k + p_k + max(phi_k,
p_k + J_k + kappa_k) for a base table, Theta_k + p_k + max A(V_i) over its sources for a derived one,
with Theta_k = p_k + Y_k (Lemma 1) and Y_k = e_k + slack (Theorem 1) under the chosen scheduler
(``gedf-np`` or ``aus``). Everything is exact (Fractions), as the bounds are.

The verdict per table: ``guaranteed`` (bound <= target), ``not guaranteed`` (bound > target, by
``bound - target``) or ``unknown`` (a precondition of the bound is unmet; they are decided from
the workload alone, before any run, so they hold for every seed):

* ``scheduler``: the bound is the chosen scheduler's, for runs under it;
* ``task-utilization`` and ``utilization``: u_k <= 1 and U_sum <= m (Def. 9);
* ``budgets``: no job can cost more than e_k: the largest cost multiplier (``cost_noise`` or
  ``variability``'s upper end, times the slowdown factor) times alpha + beta * L_max <= e_k (an
  average-case budget makes the bound "expected, not guaranteed", digest A18);
* ``feed-healthy`` (base): Def. 2 holds on [0, horizon]: no outage, every file on its slot, and
  the feed does not end early (a jittered periodic feed is healthy for every seed by construction);
* ``fresh-at-start``: F(V_k, 0) = 0, so Theorems 2-3's window starts at time 0;
* ``sources`` (derived): every source meets its own preconditions, so it is A(V_i)-healthy
  (Theorem 3's premise).

``bound="slot"`` (gedf-np only) certifies with the slot bound of :mod:`.slot` instead of Def. 13's
A(V_k): p_k lower on a base table, the same Theta_k, and one more precondition per base table,
``files-on-slot`` (every file on its nominal slot), which the derived tables' ``sources`` carry.

Only ``utilization`` and Theorem 1's slack depend on the track count m, which is what makes
:func:`min_tracks` a search over one number (:func:`slack_curve`). :func:`blame` finds the fewest
tables whose targets, relaxed (dropped), leave every other target guaranteed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from staleness_lab.errors import Infeasible, InputError
from staleness_lab.model import Workload
from staleness_lab.model.table import DOWNSTREAM
from staleness_lab.theory.leontyev.bounds import rule_a_recovery_periods, staleness_from_response, tardiness_terms
from staleness_lab.theory.leontyev.checks import feed, nominal_task_set, unhealthy
from staleness_lab.theory.leontyev.slot import SLOT, on_slot, slot_staleness_from_response
from staleness_lab.theory.leontyev.tasks import SCHEDULERS, TaskSet, exact, show
from staleness_lab.theory.leontyev.workloads import from_workload, max_load, noise_bounds
from staleness_lab.theory.records import Precondition

GUARANTEED = "guaranteed"
NOT_GUARANTEED = "not guaranteed"
UNKNOWN = "unknown"
#: The largest number of relaxation sets :func:`blame` tries before it settles for an upper bound.
MAX_BLAME_SETS = 20_000
#: The bounds a budget can certify with: Def. 13's A(V_k) (Theorems 2-3) and the slot bound.
LEONTYEV = "leontyev"
BOUND_KINDS = (LEONTYEV, SLOT)


def check_policy(policy: object) -> str:
    """``policy`` if a budget can be certified for it (:data:`SCHEDULERS`), else an InputError."""
    if policy not in SCHEDULERS:
        raise InputError("policy", f"must be one of {', '.join(SCHEDULERS)} (the schedulers Leontyev et al.'s bounds "
                                   f"are stated for), got {policy!r}")
    return policy  # type: ignore[return-value]


def check_bound(bound: object, policy: str) -> str:
    """``bound`` if it is one of :data:`BOUND_KINDS` and stated for ``policy`` (the slot bound is
    GEDF-NP's only: AUS's recovery releases can lie a period past a file's slot), else an InputError."""
    if bound not in BOUND_KINDS:
        raise InputError("bound", f"must be one of {', '.join(BOUND_KINDS)}, got {bound!r}")
    if bound == SLOT and policy != "gedf-np":
        raise InputError("bound", f"the slot bound is proved for gedf-np only (AUS's recovery releases can lie a "
                                  f"period past a file's slot), got policy {policy!r}")
    return bound  # type: ignore[return-value]


@dataclass(frozen=True)
class TableBudget:
    """One table's certificate: its resolved ``target``, the ``bound`` A(V_k) (None without a task
    set), every precondition of the bound, and the verdict they give."""

    table: str
    target: Fraction
    bound: Fraction | None
    preconditions: tuple[Precondition, ...]

    @property
    def unmet(self) -> list[str]:
        return [p.name for p in self.preconditions if not p.met]

    @property
    def verdict(self) -> str:
        if self.unmet or self.bound is None:
            return UNKNOWN
        return GUARANTEED if self.bound <= self.target else NOT_GUARANTEED

    @property
    def excess(self) -> Fraction | None:
        """bound - target when ``not guaranteed`` (by how much), else None."""
        return self.bound - self.target if self.verdict == NOT_GUARANTEED else None  # type: ignore[operator]


@dataclass(frozen=True)
class Certificate:
    """The lag budget of a workload under ``policy`` on ``tracks`` tracks: one
    :class:`TableBudget` per table with a target (file order), ``min_tracks`` (None with
    ``min_tracks_reason``), ``blame`` (None when every target is guaranteed) and how it was found."""

    policy: str
    tracks: int
    tables: tuple[TableBudget, ...]
    min_tracks: int | None
    min_tracks_reason: str | None
    blame: tuple[str, ...] | None
    blame_method: str
    bound_kind: str = LEONTYEV


# -- the task set and its slack at any m -------------------------------------------------------

def base_task_set(workload: Workload, policy: str) -> TaskSet | None:
    """The workload's task set on its tracks with p_k^[r] = p_k (budgets, periods and feeds as
    :func:`.workloads.from_workload` maps them; its bad-input errors surface here), or None when
    some u_k > 1 (no task set, Def. 9)."""
    try:
        ts = from_workload(workload, policy)
    except Infeasible:
        return nominal_task_set(workload, "gedf-np")
    return ts.with_recovery_periods(ts.p)


def task_set_at(workload: Workload, base: TaskSet, policy: str, m: int) -> TaskSet:
    """``base`` on m tracks with the recovery periods AUS would use there: a table's given
    ``recovery_period``, else Rule A at m (Rule A needs U_sum <= m; above it, p_k)."""
    ts = base.with_m(m)
    if policy != "aus":
        return ts
    rule = rule_a_recovery_periods(ts) if ts.U_sum <= m else ts.p
    given = [t.recovery_period for t in workload.tables]
    return ts.with_recovery_periods([r if g is None else exact(g, "recovery_period") for g, r in zip(given, rule)])


def slack_curve(workload: Workload, base: TaskSet, policy: str) -> Callable[[int], Fraction]:
    """m -> Theorem 1's slack (sum_{E(tau,m)} e - e_min) / (m - sum_{X(tau,m-1)} W) on m tracks.

    Under gedf-np W = u does not depend on m, so one sort and two prefix sums give every m in
    O(1) (the same numbers as :func:`.bounds.tardiness_terms`, tested); under aus W follows the
    recovery periods of :func:`task_set_at`, recomputed per m."""
    if policy == "aus":
        return lambda m: tardiness_terms(task_set_at(workload, base, policy, m), policy).slack
    e_sum = list(itertools.accumulate(sorted(base.e, reverse=True), initial=Fraction(0)))
    w_sum = list(itertools.accumulate(sorted(base.u, reverse=True), initial=Fraction(0)))
    e_min, n = min(base.e), base.n
    return lambda m: (e_sum[min(n, m)] - e_min) / (m - w_sum[min(n, m - 1)])


def bounds_at_slack(base: TaskSet, slack: Fraction, bound: str = LEONTYEV) -> tuple[Fraction, ...]:
    """A(V_k) (or, with ``bound="slot"``, A^slot(V_k)) for every table when Theorem 1's slack is
    ``slack``: Theta_k = p_k + e_k + slack."""
    compose = slot_staleness_from_response if bound == SLOT else staleness_from_response
    return compose(base, [p + e + slack for p, e in zip(base.p, base.e)])


# -- preconditions -----------------------------------------------------------------------------

def budget_precondition(workload: Workload, k: int, e: Fraction, p: Fraction) -> Precondition:
    """``budgets``: the costliest job table k can run (largest multiplier times alpha + beta * L_max)
    fits its budget ``e`` (p: its period p_k, which caps a view's load)."""
    table = workload.tables[k]
    _, hi = noise_bounds(workload)
    factor = exact(workload.slowdown.factor, "slowdown.factor") if workload.slowdown is not None else Fraction(1)
    worst = hi * max(Fraction(1), factor) * (exact(table.alpha, "alpha")
                                             + exact(table.beta, "beta") * max_load(workload, k, p))
    met = worst <= e
    why = f"the costliest job costs {show(worst)} {'<=' if met else '>'} e_k = {show(e)}"
    if not met and workload.provisioning == "average" and table.budget is None:
        why = f"expected, not guaranteed (average-case budget): {why}"
    return Precondition("budgets", met, why)


def feed_precondition(workload: Workload, k: int) -> Precondition:
    """``feed-healthy``: Def. 2 holds all through [0, horizon] (:func:`.checks.unhealthy`)."""
    if workload.tables[k].outages:
        start, end = workload.tables[k].outages[0]  # type: ignore[index]
        return Precondition("feed-healthy", False, f"an outage on [{start:g}, {end:g}) leaves D_k unhealthy (Def. 2)")
    gaps = unhealthy(feed(workload, k), workload.horizon)
    if gaps:
        a, b = gaps[0]
        return Precondition("feed-healthy", False, f"D_k is unhealthy on ({a:g}, {b:g}) (Def. 2: no file on its slot "
                                                   f"within p + J)")
    return Precondition("feed-healthy", True, f"every file on its slot through the horizon {workload.horizon:g} (Def. 2)")


def static_preconditions(workload: Workload, ts: TaskSet | None, policy: str, bound: str = LEONTYEV
                         ) -> list[tuple[Precondition, ...]]:
    """Per table (file order) the preconditions that do not depend on the track count (with the
    slot bound, ``files-on-slot`` on every base table too)."""
    if ts is None:
        why = "some u_k = e_k / p_k > 1: no task set (Def. 9)"
        return [(Precondition("task-utilization", False, why),) for _ in workload.tables]
    u, e, p = ts.u, ts.e, ts.p
    common = (Precondition("scheduler", True, f"the bound is {policy}'s (Theorem 1): it holds for runs under {policy}"),
              Precondition("task-utilization", True, f"max u_k = {show(max(u))} <= 1 (Def. 9)"))
    out: list[tuple[Precondition, ...]] = [()] * ts.n
    for k in ts.topological_order:
        table = workload.tables[k]
        start = Precondition("fresh-at-start", table.initial_freshness == 0,
                             f"F(V_k, 0) = {table.initial_freshness:g} (Theorems 2-3 cover [0, horizon] from F = 0)")
        own = [budget_precondition(workload, k, e[k], p[k]), start]
        if table.is_base:
            own.insert(1, feed_precondition(workload, k))
            if bound == SLOT:
                own.insert(2, on_slot(workload, k))
        else:
            bad = [(ts.name_of(s), p) for s in ts.tasks[k].sources for p in out[s] if not p.met]
            why = (f"source {bad[0][0]!r}: {bad[0][1].name} unmet, so it is not A(V_i)-healthy" if bad
                   else "every source meets its bound's preconditions (A(V_i)-healthy, Theorem 3)")
            own.append(Precondition("sources", not bad, why))
        out[k] = (*common, *own)
    return out


def utilization_precondition(ts: TaskSet | None, m: int) -> tuple[Precondition, ...]:
    """``utilization``: U_sum <= m (Def. 9); nothing when there is no task set."""
    if ts is None:
        return ()
    ok = ts.U_sum <= m
    return (Precondition("utilization", ok, f"U_sum = {show(ts.U_sum)} {'<=' if ok else '>'} m = {m}"),)


# -- the certificate ---------------------------------------------------------------------------

def certify(workload: Workload, policy: str = "gedf-np", bound: str = LEONTYEV) -> Certificate:
    """The lag budget of ``workload`` on its ``tracks`` under ``policy`` (``gedf-np`` or ``aus``)
    with ``bound`` (:data:`BOUND_KINDS`). Raises InputError naming ``policy`` for another
    scheduler, ``bound`` for another bound or the slot bound under aus, and ``target_lag`` when no
    table has a target."""
    policy = check_policy(policy)
    bound = check_bound(bound, policy)
    targeted = [k for k, t in enumerate(workload.target_lags) if t is not None]
    if not targeted:
        raise InputError("target_lag", "no table has a target_lag: a budget certifies targets, give at least one")
    base = base_task_set(workload, policy)
    static = static_preconditions(workload, base, policy, bound)
    m = workload.tracks
    bounds = None if base is None else bounds_at_slack(base, slack_curve(workload, base, policy)(m), bound)
    total = utilization_precondition(base, m)
    pre = [(*static[k], *total) for k in range(len(workload.tables))]
    targets = [None if t is None else exact(t, "target_lag") for t in workload.target_lags]
    tables = tuple(TableBudget(workload.tables[k].name, targets[k], None if bounds is None else bounds[k],  # type: ignore[arg-type]
                               pre[k]) for k in targeted)
    fewest, reason = min_tracks(workload, base, policy, static, targets, bound)
    found, method = blame(workload, [all(p.met for p in pre[k]) for k in range(len(pre))], bounds)
    return Certificate(policy, m, tables, fewest, reason, found, method, bound)


def min_tracks(workload: Workload, base: TaskSet | None, policy: str, static: Sequence[tuple[Precondition, ...]],
               targets: Sequence[Fraction | None], bound: str = LEONTYEV) -> tuple[int | None, str | None]:
    """The smallest m under which every target is guaranteed, or (None, why).

    The track-independent preconditions must hold (else no m helps). From m_lo = max(1,
    ceil(U_sum)) every m up to n + 1 is tried in turn (Theorem 1's slack is not monotone in m
    there, :func:`.bounds.tardiness_bounds`); beyond n + 1 both E and X hold every task, so the
    slack falls strictly with m towards 0, every A(V_k) with it, and an exponential then binary
    search finds the first m. A target at or below A(V_k) at slack 0 is never reached (n > 1)."""
    targeted = [k for k, t in enumerate(targets) if t is not None]
    for k in targeted:
        unmet = next((p for p in static[k] if not p.met), None)
        if unmet is not None:
            return None, f"table {workload.tables[k].name!r}: {unmet.name} unmet at any track count ({unmet.why})"
    assert base is not None  # task-utilization is among the static preconditions
    slack = slack_curve(workload, base, policy)

    def passes(m: int) -> bool:
        a = bounds_at_slack(base, slack(m), bound)
        return all(a[k] <= targets[k] for k in targeted)  # type: ignore[operator]

    n = base.n
    limit = bounds_at_slack(base, Fraction(0), bound)
    short = [k for k in targeted if (limit[k] >= targets[k] if n > 1 else limit[k] > targets[k])]  # type: ignore[operator]
    if short:
        k = short[0]
        return None, (f"table {workload.tables[k].name!r}: even on unlimited tracks its bound only falls to "
                      f"{show(limit[k])} (Theorem 1's slack -> 0), which does not get below its target {show(targets[k])}")  # type: ignore[arg-type]
    low = max(1, math.ceil(base.U_sum))
    for m in range(low, n + 2):
        if passes(m):
            return m, None
    fail, step = n + 1, 1
    while not passes(fail + step):
        fail, step = fail + step, step * 2
    hi = fail + step
    while hi - fail > 1:
        mid = (fail + hi) // 2
        fail, hi = (fail, mid) if passes(mid) else (mid, hi)
    return hi, None


# -- blame -------------------------------------------------------------------------------------

def resolved_targets(workload: Workload, relaxed: frozenset[int]) -> list[Fraction | None]:
    """The targets after dropping those of the ``relaxed`` tables: ``downstream`` re-resolved as
    the tightest remaining target of the tables reading it (None when none is left)."""
    out: list[Fraction | None] = [None] * len(workload.tables)
    for k in reversed(_order(workload)):
        declared = workload.tables[k].target_lag
        if k in relaxed or declared is None:
            continue
        if declared == DOWNSTREAM:
            below = [out[c] for c in workload.children[k] if out[c] is not None]
            out[k] = min(below) if below else None  # type: ignore[type-var]
        else:
            out[k] = exact(declared, "target_lag")
    return out


def _order(workload: Workload) -> list[int]:
    from staleness_lab.model.dag import topological_order

    return [workload.index[name] for name in topological_order([t.name for t in workload.tables], workload.source_map)]


def blame(workload: Workload, met: Sequence[bool], bounds: Sequence[Fraction] | None
          ) -> tuple[tuple[str, ...] | None, str]:
    """The fewest tables whose targets, relaxed (dropped, ``downstream`` tables re-resolving
    without them), leave every remaining target guaranteed; None when all already are.

    "Fewest" is cardinality. A bound does not depend on any target, so relaxing only ever raises
    or removes targets and the property is monotone: a table whose own numeric target fails must
    be in every answer (nothing else moves its target); the rest is an exhaustive search over the
    other tables with a declared target, in increasing size, so the first set found is a smallest
    one. Past :data:`MAX_BLAME_SETS` tries it returns every still-failing table instead, which
    always works, and says it is an upper bound."""
    def failing(relaxed: frozenset[int]) -> list[int]:
        targets = resolved_targets(workload, relaxed)
        return [k for k, t in enumerate(targets) if t is not None and not (met[k] and bounds is not None and bounds[k] <= t)]

    names = [t.name for t in workload.tables]
    first = failing(frozenset())
    if not first:
        return None, "every target is guaranteed"
    forced = frozenset(k for k in first if workload.tables[k].target_lag != DOWNSTREAM)
    method = ("fewest tables (cardinality): the tables whose own numeric target fails, then an exhaustive search "
              "in increasing size over the other tables with a target")
    rest = failing(forced)
    if not rest:
        return tuple(names[k] for k in sorted(forced)), method
    candidates = sorted(k for k, t in enumerate(workload.tables) if t.target_lag is not None and k not in forced)
    tried = 0
    for size in range(1, len(rest)):
        for extra in itertools.combinations(candidates, size):
            tried += 1
            if tried > MAX_BLAME_SETS:
                return (tuple(names[k] for k in sorted(forced | set(rest))),
                        f"an upper bound: every failing table (more than {MAX_BLAME_SETS} sets to search)")
            if not failing(forced | frozenset(extra)):
                return tuple(names[k] for k in sorted(forced | set(extra))), method
    return tuple(names[k] for k in sorted(forced | set(rest))), method


# -- the guarantee curve -----------------------------------------------------------------------

def guaranteed_by_tracks(workload: Workload, policy: str, tracks: Sequence[int]) -> list[tuple[int, tuple[str, ...]]]:
    """Per track count m of ``tracks``, the tables with a target that :func:`certify` would call
    ``guaranteed`` on m tracks (file order): the ``min_tracks`` curve, one task set and one
    slack function for every m (only U_sum <= m and Theorem 1's slack depend on m)."""
    policy = check_policy(policy)
    base = base_task_set(workload, policy)
    static = static_preconditions(workload, base, policy)
    targets = [None if t is None else exact(t, "target_lag") for t in workload.target_lags]
    names = [t.name for t in workload.tables]
    if base is None:
        return [(m, ()) for m in tracks]
    slack = slack_curve(workload, base, policy)
    out = []
    for m in tracks:
        if base.U_sum > m:
            out.append((m, ()))
            continue
        a = bounds_at_slack(base, slack(m))
        out.append((m, tuple(names[k] for k, t in enumerate(targets)
                             if t is not None and all(p.met for p in static[k]) and a[k] <= t)))
    return out
