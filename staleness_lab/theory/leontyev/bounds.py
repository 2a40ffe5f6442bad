"""Leontyev, Johnson and Anderson's closed-form results for AUS, as pure functions of a task set.

Digest ``specs/leontyev-aus.md`` Sec. 3 (its Corrections override its body); paper sections in
brackets. All arithmetic is exact (:class:`~fractions.Fraction`, see :mod:`.tasks`); results are
Fractions (:mod:`.table` converts them to floats).

* Theorem 1 [Sec. IV] tardiness bound Y_i (:func:`tardiness_bounds`, terms in
  :func:`tardiness_terms`), digest Sec. 3.1 [P/R];
* Lemma 1 [Sec. IV] response-time bound Theta_k = p_k + Y_k (:func:`response_time_bounds`),
  digest Sec. 3.2 [P];
* Definition 13 / Theorems 2-3 [Sec. V] staleness bound A(V_k), recursive over the view DAG
  (:func:`staleness_bounds`), digest Sec. 3.4 [P];
* Theorem 4 [Sec. VI] recovery time x_k(lambda) (:func:`recovery_time`, :func:`recovery_time_bound`),
  digest Sec. 3.5 [P/R] and correction 2;
* eq. 7 (Rule A) and the "all at once" rule (Rule B) [Sec. III] for recovery periods
  (:func:`rule_a_recovery_periods`, :func:`rule_b_recovery_periods`), digest Sec. 2.6 [R];
* eq. 6 [Sec. III, rules RN/NR] the capacity condition (:func:`total_share`, :func:`eq6_lhs`,
  :func:`admissible`) and OPT's arbitration (:func:`arbitrate`), digest Sec. 2.4 [P/R/D].

One tidy row per task of all of them: :func:`staleness_lab.theory.leontyev.table.bounds_table`.

Functions whose formula would divide by zero or turn negative outside a precondition raise
:class:`~staleness_lab.errors.InputError` naming the field; the theorems' other preconditions (U_sum
<= m, WCETs respected, healthy feeds) are the checks' business (:func:`preconditions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable, Sequence


from staleness_lab.errors import InputError
from staleness_lab.theory.leontyev.tasks import Number, Task, TaskSet, exact, show
from staleness_lab.theory.records import Precondition

#: Absolute tolerance of the eq.-6 comparison ``share <= m + ADMIT_TOL`` (digest Sec. 2.4 [D] and
#: correction 6). Exact inputs do not need it (E6's U_sum + increment is exactly m), but inputs
#: that went through float arithmetic before reaching the task set may land a hair above m.
ADMIT_TOL = Fraction(1, 10**9)


# -- Theorem 1: tardiness ------------------------------------------------------------------------

@dataclass(frozen=True)
class TardinessTerms:
    """The pieces of Theorem 1's bound, common to every task.

    ``E`` / ``X`` are the indices of E(tau, m) (the min(n, m) largest e) and X(tau, m-1) (the
    min(n, m-1) largest W), ties by index; ``sum_e`` = sum of e over E, ``e_min`` = min e over all
    tasks (digest A3), ``sum_w`` = sum of W over X, ``slack`` = (sum_e - e_min)/(m - sum_w), so that
    Y_i = e_i + slack.
    """

    E: tuple[int, ...]
    X: tuple[int, ...]
    sum_e: Fraction
    e_min: Fraction
    sum_w: Fraction
    slack: Fraction


def tardiness_terms(ts: TaskSet, scheduler: str) -> TardinessTerms:
    """Theorem 1's common term (Leontyev et al. Sec. IV, proved in Block [4]; digest Sec. 3.1):

    ``slack = (sum_{E(tau,m)} e_z - e_min) / (m - sum_{X(tau,m-1)} W(T_z))``

    exactly in this most pessimistic form (m cost terms, m - 1 weight terms), no rounding. The
    printed "min(e_z)" is read as e_min over all of tau (digest A3 [R]). W per
    :meth:`TaskSet.W` (``"aus"``: e/p^[r]; ``"gedf-np"``: e/p). Since every W <= 1 (Def. 10), the
    denominator is >= 1; the guard below is for safety only.
    """
    w = ts.W(scheduler)
    e = ts.e
    E = tuple(sorted(range(ts.n), key=lambda k: (-e[k], k))[: min(ts.n, ts.m)])
    X = tuple(sorted(range(ts.n), key=lambda k: (-w[k], k))[: min(ts.n, ts.m - 1)])
    sum_e = sum((e[k] for k in E), Fraction(0))
    e_min = min(e)
    sum_w = sum((w[k] for k in X), Fraction(0))
    denominator = ts.m - sum_w
    if denominator <= 0:
        raise InputError("utilization", f"Theorem 1 needs m - sum of the m-1 largest W > 0, got {show(denominator)}")
    return TardinessTerms(E=E, X=X, sum_e=sum_e, e_min=e_min, sum_w=sum_w, slack=(sum_e - e_min) / denominator)


def tardiness_bounds(ts: TaskSet, scheduler: str) -> tuple[Fraction, ...]:
    """Y_i = e_i + slack for every task (Theorem 1, Sec. IV; digest Sec. 3.1 [P/R]).

    Valid (as a bound) when sum_i e_i/p(T_i, t) <= m at all t (AUS keeps this by eq. 6 when U_sum
    <= m) and no job runs longer than e_i. m = 1 gives Y_i = e_i + e_max - e_min. E5: (1,1) on one
    processor gives 1; (6, 7, 9) and (3, 4) for its other two systems.

    Not monotone in m or in every e_k: more processors add a cost term to the numerator (e = (1, 1),
    p = (4, 4) gives 1 on m = 1 but 11/7 on m = 2), and raising the unique smallest e raises e_min
    (m = 1, e = (1, 5) gives Y_2 = 9, but 7 with e_1 = 3).
    """
    slack = tardiness_terms(ts, scheduler).slack
    return tuple(e + slack for e in ts.e)


# -- Lemma 1: response time ----------------------------------------------------------------------

def response_time_bounds(ts: TaskSet, scheduler: str) -> tuple[Fraction, ...]:
    """Theta_k = p_k + Y_k: every job finishes by r + Theta_k (eq. 5; Lemma 1, Sec. IV; digest
    Sec. 3.2 [P]). It uses the nominal p_k in both modes, as d - r <= p_k either way."""
    return tuple(p + y for p, y in zip(ts.p, tardiness_bounds(ts, scheduler)))


# -- Definition 13, Theorems 2 and 3: staleness --------------------------------------------------

def staleness_bounds(ts: TaskSet, scheduler: str) -> tuple[Fraction, ...]:
    """A(V_k) for every table (Def. 13, Sec. V; Theorems 2 (base) and 3 (derived); digest Sec. 3.4 [P]):

    * base: A = Theta_k + p_k + max(phi_k, p_k + J_k + kappa_k);
    * derived: A = Theta_k + p_k + max over V_i in pred(V_k) of A(V_i), recursively over the DAG.

    E5: Theta = 4, p = 3, phi = 1 gives 10. The bound holds from a completion that leaves V_k
    fresh, while the feed is healthy (base) or every source is A(V_i)-healthy (derived).
    """
    return staleness_from_response(ts, response_time_bounds(ts, scheduler))


def staleness_from_response(ts: TaskSet, theta: Sequence[Fraction]) -> tuple[Fraction, ...]:
    """Def. 13's recursion over the view DAG given the response-time bounds ``theta`` (one per
    task): what :func:`staleness_bounds` computes from Lemma 1, and what the lag budgets
    (:mod:`.budget`) evaluate at other track counts, where only Theorem 1's slack changes."""
    return dag_staleness(ts, theta, lambda t: t.p + max(t.phi, t.p + t.J + t.kappa))  # type: ignore[operator]


def dag_staleness(ts: TaskSet, theta: Sequence[Fraction], base_lag: Callable[[Task], Fraction]
                  ) -> tuple[Fraction, ...]:
    """A staleness bound per table over the view DAG: Theta_k + ``base_lag(T_k)`` for a base table,
    Theta_k + p_k + max over V_i in pred(V_k) of the sources' bounds for a derived one. The derived
    step is Lemma A4 (appendix) with B = the largest source bound, which needs only that every
    source V_i stays within its own bound (Theorem 3); so any sound base bound composes through it."""
    out: list[Fraction | None] = [None] * ts.n
    for k in ts.topological_order:
        t = ts.tasks[k]
        lag = base_lag(t) if t.is_base else t.p + max(out[s] for s in t.sources)  # type: ignore[operator,type-var]
        out[k] = theta[k] + lag
    return tuple(out)  # type: ignore[arg-type]


def recovery_thresholds(ts: TaskSet) -> tuple[Fraction, ...]:
    """Delta F(V_k) per task: the given ``delta_f``, else A(V_k) under AUS, the paper's
    recommendation (Sec. V; digest Sec. 2.4 [P]): a table that keeps its guarantee never recovers."""
    a = staleness_bounds(ts, "aus")
    return tuple(a[k] if t.delta_f is None else t.delta_f for k, t in enumerate(ts.tasks))  # type: ignore[misc]


# -- Theorem 4: recovery time --------------------------------------------------------------------

def recovery_time(theta: Number, p: Number, p_r: Number, lam: Number, J: Number = 0) -> Fraction:
    """x = (Theta p + (lambda + J + p) p^[r]) / (p - p^[r]) (Theorem 4, Sec. VI and appendix;
    digest Sec. 3.5 [P/R]). The proof writes L for lambda and x for x_k.

    x is the root of the counting inequality (24), ``(lambda + J + x)/p + 1 > (x - Theta)/p^[r]``:
    beyond it more recovery jobs finish than files can arrive. Needs p^[r] < p (else the
    denominator is <= 0: raises naming ``p_r``) and lambda >= 0 (naming ``lambda``).
    """
    th, pp, pr = exact(theta, "theta"), exact(p, "p"), exact(p_r, "p_r")
    lm, jit = exact(lam, "lambda"), exact(J, "J")
    if lm < 0:
        raise InputError("lambda", f"the outage length must be >= 0, got {show(lm)}")
    if pp <= 0 or pr <= 0 or th < 0 or jit < 0:
        raise InputError("p", "Theorem 4 needs p > 0, p^[r] > 0, Theta >= 0 and J >= 0")
    if not pr < pp:
        raise InputError("p_r", f"Theorem 4 needs p^[r] < p, got p^[r] = {show(pr)}, p = {show(pp)}")
    return (th * pp + (lm + jit + pp) * pr) / (pp - pr)


def recovery_time_bound(ts: TaskSet, k: int, lam: Number) -> Fraction:
    """x_k(lambda) for base table V_k under AUS (Theorem 4; digest Sec. 3.5 and correction 2).

    ``lam`` is the outage length lambda: no file arrives in [t_0 - lambda, t_0) and the held-back
    files land at t_0, the switch to recovery. For a task admitted late, the digest uses t_0 = its
    switch time and lambda = t_0 - (timestamp of the oldest pending file). Theta_k is AUS's.
    E5: lambda = 9 gives 20; E6 (lambda = 5000) about 1823.0 (average) and 5452.7 (worst case).
    Raises naming ``tasks[k].sources`` for a derived table, ``tasks[k].p_r`` when p^[r] = p.
    """
    _check_index(ts, k, "k")
    t = ts.tasks[k]
    if not t.is_base:
        raise InputError(f"tasks[{k}].sources", "Theorem 4 bounds the recovery of a base table", table=t.name)
    if not t.p_r < t.p:  # type: ignore[operator]
        raise InputError(f"tasks[{k}].p_r", f"Theorem 4 needs p_k^[r] < p_k, got p_k^[r] = p_k = {show(t.p)}",  # type: ignore[arg-type]
                         table=t.name)
    return recovery_time(response_time_bounds(ts, "aus")[k], t.p, t.p_r, lam, t.J)  # type: ignore[arg-type]


# -- recovery-period rules (Sec. III, "Selecting recovery periods") ------------------------------

def _require_capacity(ts: TaskSet, who: str) -> None:
    if ts.U_sum > ts.m:
        raise InputError("utilization", f"{who} needs U_sum <= m (Def. 9), got U_sum = {show(ts.U_sum)} > m = {ts.m}")


def rule_a_recovery_periods(ts: TaskSet) -> tuple[Fraction, ...]:
    """Rule A, "fastest single recovery" (eq. 7 read with min; digest Sec. 2.6 and A1 [R]):
    p_i^[r] = e_i / min(1, m - U_sum + u_i).

    The paper prints max(1, .), but calls it the smallest period that lets T_i alone enter
    recovery within eq. 6; only min does that (max gives p^[r] = e_i, whose increment never fits
    in Fig. 9) and only min reproduces the experiment's "about p/5". With it, T_i alone in recovery
    brings the total share to exactly m (or to U_sum - u_i + 1 when the min is 1). Needs U_sum <= m
    (else p^[r] > p: raises naming ``utilization``). E4: 1.5; E6: 57.89 / 173.68.
    """
    _require_capacity(ts, "Rule A")
    return tuple(e / min(Fraction(1), ts.m - ts.U_sum + u) for e, u in zip(ts.e, ts.u))


def rule_b_recovery_periods(ts: TaskSet) -> tuple[Fraction, ...]:
    """Rule B, "everyone may recover at once" (digest Sec. 2.6 and A2 [R]):
    p_i^[r] = max(e_i, p_i U_sum / m).

    The printed "(p_i - U_sum)/m" is not a time; scaling every period by U_sum/m makes the recovery
    shares sum to at most m, so all tasks fit in recovery together. Needs U_sum <= m (raises naming
    ``utilization``). E6 (average case): 231 / 693.
    """
    _require_capacity(ts, "Rule B")
    scale = ts.U_sum / ts.m
    return tuple(max(e, p * scale) for e, p in zip(ts.e, ts.p))


# -- eq. 6: the capacity condition ---------------------------------------------------------------

def _check_index(ts: TaskSet, k: object, field_name: str) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < ts.n:
        raise InputError(field_name, f"must be a task index in [0, {ts.n - 1}], got {k!r}")
    return k


def _index_set(ts: TaskSet, indices: Iterable[int], field_name: str) -> frozenset[int]:
    return frozenset(_check_index(ts, k, field_name) for k in indices)


def total_share(ts: TaskSet, recovery: Iterable[int]) -> Fraction:
    """sum over normal tasks of u_i + sum over ``recovery`` tasks of e_i/p_i^[r] (eq. 6's left side
    after the switches; digest Sec. 2.4)."""
    rec = _index_set(ts, recovery, "recovery")
    return sum((ts.recovery_share(k) if k in rec else ts.u[k] for k in range(ts.n)), Fraction(0))


def eq6_lhs(ts: TaskSet, recovery_before: Iterable[int], leaving: Iterable[int] = (),
            entering: Iterable[int] = ()) -> Fraction:
    """Eq. 6's left side term by term (Sec. III, rules RN and NR; digest Sec. 2.4 [P]):

    ``sum_{rho_N} u_i + sum_{rho_R} u_i p_i/p_i^[r] + sum_{rho_RN} (u_i - u_i p_i/p_i^[r])
    + sum_{rho_NR} (u_i p_i/p_i^[r] - u_i)``

    with rho_R = ``recovery_before`` (rho_N the rest), rho_RN = ``leaving`` (a subset of rho_R)
    and rho_NR = ``entering`` (a subset of rho_N). Equals :func:`total_share` of the modes after
    the switches. E4 at t = 17.5: 1/3 + 2/3 - 1/3 + 1/3 = 1.
    """
    rec = _index_set(ts, recovery_before, "recovery")
    rn = _index_set(ts, leaving, "leaving")
    nr = _index_set(ts, entering, "entering")
    if not rn <= rec:
        raise InputError("leaving", f"tasks {sorted(rn - rec)} are not in recovery mode (rho_RN must lie in rho_R)")
    if nr & rec:
        raise InputError("entering", f"tasks {sorted(nr & rec)} are already in recovery (rho_NR must lie in rho_N)")
    u = ts.u
    share = ts.recovery_share
    return (sum((u[k] for k in range(ts.n) if k not in rec), Fraction(0))
            + sum((share(k) for k in rec), Fraction(0))
            + sum((u[k] - share(k) for k in rn), Fraction(0))
            + sum((share(k) - u[k] for k in nr), Fraction(0)))


def admissible(ts: TaskSet, recovery: Iterable[int], tol: Number = ADMIT_TOL) -> bool:
    """Eq. 6 as a predicate on a mode assignment: ``total_share(recovery) <= m + tol`` (Sec. III;
    digest Sec. 2.4, correction 6 for the tolerance). E4: one of two tasks in recovery fits
    (2/3 + 1/3 = 1), both do not (4/3)."""
    return total_share(ts, recovery) <= ts.m + exact(tol, "tol")


def arbitrate(ts: TaskSet, recovery: Iterable[int], eligible: Iterable[int],
              tol: Number = ADMIT_TOL) -> tuple[int, ...]:
    """OPT's normal->recovery admission at one instant (ADMIT steps 1-3; digest Sec. 2.4 [P/R/D]).

    ``recovery`` is the recovery set after this instant's R->N switches, ``eligible`` the normal
    tasks whose gap exceeds Delta F. Eligible tasks are tried in increasing increment
    e/p^[r] - u [P], ties by index [D] (digest correction 4), and each is admitted if the total
    share stays <= m + tol; a refused task does not stop later, smaller ones. Returns the admitted
    indices in admission order. E4 at t = 10: both eligible, only T_1 (index 0) admitted.
    """
    rec = _index_set(ts, recovery, "recovery")
    cand = _index_set(ts, eligible, "eligible")
    if cand & rec:
        raise InputError("eligible", f"tasks {sorted(cand & rec)} are already in recovery")
    limit = ts.m + exact(tol, "tol")
    total = total_share(ts, rec)
    admitted: list[int] = []
    for k in sorted(cand, key=lambda k: (ts.recovery_share(k) - ts.u[k], k)):
        increment = ts.recovery_share(k) - ts.u[k]
        if total + increment <= limit:
            total += increment
            admitted.append(k)
    return tuple(admitted)


# -- preconditions and the table -----------------------------------------------------------------

def preconditions(ts: TaskSet) -> tuple[Precondition, ...]:
    """Def. 9's requirements: u_k <= 1 for every task (always met: Def. 10's e <= p^[r] <= p is
    enforced by the task set) and U_sum <= m (Theorem 1 through eq. 6)."""
    worst = max(range(ts.n), key=lambda k: (ts.u[k], -k))
    u_ok = Precondition("task-utilization", ts.u[worst] <= 1,
                        f"max u_k = u_{worst} = {show(ts.u[worst])} {'<=' if ts.u[worst] <= 1 else '>'} 1")
    ok = ts.U_sum <= ts.m
    total = Precondition("utilization", ok, f"U_sum = {show(ts.U_sum)} {'<=' if ok else '>'} m = {ts.m}")
    return (u_ok, total)
