"""The adaptable sporadic task set of Leontyev, Johnson and Anderson (AUS), exact and immutable.

One update task T_k per table V_k (digest Sec. 1.1, 1.4): WCET ``e`` (e_k), nominal period ``p``
(p_k), recovery period ``p_r`` (p_k^[r] in [e_k, p_k], Def. 10), recovery threshold ``delta_f``
(Delta F(V_k), rule NR, Sec. 2.4), feed phase ``phi``, arrival jitter ``J`` and timestamp jitter
``kappa`` (Def. 2), and the view DAG as ``sources`` (indices of pred(V_k); empty for a base table).
The task set adds ``m``, the number of identical processors.

Every number is held as an exact :class:`~fractions.Fraction`: the paper's worked examples are exact
rationals (E4, E5: 1.5, 2/3; E6: U_sum + increment = m exactly), and exact arithmetic keeps the
bounds free of summation-order noise (digest correction 6). A ``float`` is read as the decimal it
prints as (``0.1`` -> 1/10, via ``repr``), which is what a workload author means.

How a workload maps onto a task set (:func:`.workloads.from_workload`):

* cost model: the paper's S_k + R_k * L (Sec. VII) is the workload's ``alpha + beta * n``, so
  S = ``alpha``, R = ``beta`` and L = the freshness delta a job loads;
* p_k = the table's ``period`` (periodic feed), else its ``nominal_period`` (replayed feed, or a
  derived table that gives one), else the derived default of
  :attr:`staleness_lab.model.Workload.periods` (largest base-ancestor period);
* phi_k = the first nominal arrival: ``phase + period`` for a periodic feed (the model's arrivals
  are at ``phase + j*period``, j >= 1, and Def. 2's slot of file 1 is phi_k), the first listed
  arrival adding data for a replayed feed;
* J_k, kappa_k = ``arrival_jitter``, ``timestamp_jitter``; m = ``tracks``; ``sources`` = the
  positions of the table's sources in the workload; lo, hi = the cost noise range (``cost_noise``,
  or ``variability`` b as [b, 1 + b]; [1, 1] without noise);
* e_k = the table's ``budget``, else :func:`default_budget` ``c * (alpha + beta * L_max)`` with
  L_max the largest span one job can load (base periodic: max(phi_k - F_k(0), p_k + J_k + kappa_k);
  replayed: the largest timestamp gap from F(0); derived: p_k) and c = hi * max(1, slowdown
  factor) under ``provisioning: worst``, (lo + hi)/2 under ``average`` (Sec. VII's worst- and
  average-case provisioning);
* p_k^[r] = the table's ``recovery_period``, else Rule A (``recovery_rule="single"``) or Rule B
  (``"all"``) of :mod:`.bounds`; Delta F(V_k) = ``recovery_threshold``, else A(V_k) (Sec. 2.4's
  recommendation, :func:`.bounds.recovery_thresholds`).

Note that Def. 10 (e_k <= p_k^[r] <= p_k) already implies u_k <= 1 (Def. 9), so every task set
satisfies that precondition by construction; U_sum <= m is *not* enforced here (it is a
precondition for the checks to report, :func:`.bounds.preconditions`).

The module also holds the pure reference forms of Def. 6 (trailing edge), Def. 3 (backlog) and
Def. 8 (update length) that the digest's examples E1 and E2 exercise.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property
from typing import Any, Iterable, Sequence

from staleness_lab.errors import InputError

#: The schedulers a task set's weights are defined for (Theorem 1's W under each).
SCHEDULERS = ("gedf-np", "aus")

Number = int | float | Fraction


def exact(value: Any, field_name: str, *, table: str | None = None) -> Fraction:
    """``value`` as an exact Fraction: ints, Fractions and other rationals as they are, floats (and
    other reals) as the decimal they print as. Bools, NaN, infinities and non-numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(field_name, f"must be a number, got {value!r} ({type(value).__name__})", table=table)
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    number = float(value)
    if not math.isfinite(number):
        raise InputError(field_name, f"must be a finite number, got {value!r}", table=table)
    return Fraction(repr(number))


def show(value: Fraction) -> str:
    """A short human form of an exact value for messages (``3``, ``1.5``, ``0.333333``)."""
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.6g}"


@dataclass(frozen=True)
class Task:
    """One update task T_k (digest Sec. 1.4); validated and made exact when placed in a TaskSet.

    ``p_r`` None means p_k (the task never speeds up); ``delta_f`` None means "use A(V_k)"
    (Sec. 2.4). ``phi``, ``J`` and ``kappa`` describe the base table's feed (Def. 2) and are
    ignored for a derived table. ``sources`` are indices into the task set (empty: base table).
    """

    e: Number
    p: Number
    p_r: Number | None = None
    delta_f: Number | None = None
    phi: Number = 0
    J: Number = 0
    kappa: Number = 0
    sources: tuple[int, ...] = ()
    name: str | None = None

    @property
    def is_base(self) -> bool:
        """Base table iff pred(V_k) is empty (Sec. 1.1)."""
        return not self.sources


@dataclass(frozen=True)
class TaskSet:
    """An immutable, validated adaptable sporadic task set on ``m`` processors (digest Sec. 1.4).

    Validation (each error names the field, e.g. ``tasks[2].p_r``; indices are 0-based, so the
    paper's T_1 is ``tasks[0]``): ``m`` an integer >= 1; at least one task; e_k > 0; p_k > 0;
    e_k <= p_k (u_k <= 1, Def. 9); p_k^[r] in [e_k, p_k] (Def. 10); Delta F >= 0; phi_k >= 0,
    J_k in [0, p_k], kappa_k >= 0 (Def. 2); sources valid indices, no self-loop, no duplicate,
    no cycle (the view DAG, Sec. 1.1).
    """

    tasks: tuple[Task, ...]
    m: int = 1

    def __post_init__(self) -> None:
        m = self.m
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
            raise InputError("m", f"must be an integer >= 1 (processors), got {m!r}")
        object.__setattr__(self, "m", int(m))
        if not isinstance(self.tasks, (tuple, list)) or not self.tasks:
            raise InputError("tasks", "must be a non-empty sequence of Task")
        tasks = tuple(_normalise(t, k, len(self.tasks)) for k, t in enumerate(self.tasks))
        object.__setattr__(self, "tasks", tasks)
        self._check_acyclic()

    # -- construction helpers ----------------------------------------------------------------
    @classmethod
    def from_columns(
        cls,
        m: int,
        e: Sequence[Number],
        p: Sequence[Number],
        p_r: Sequence[Number | None] | None = None,
        *,
        delta_f: Sequence[Number | None] | None = None,
        phi: Sequence[Number] | None = None,
        J: Sequence[Number] | None = None,
        kappa: Sequence[Number] | None = None,
        sources: Sequence[Iterable[int]] | None = None,
        names: Sequence[str] | None = None,
    ) -> TaskSet:
        """A task set from per-task columns (all of one length; omitted columns take defaults)."""
        n = len(e)
        cols = {"p": p, "p_r": p_r, "delta_f": delta_f, "phi": phi, "J": J, "kappa": kappa,
                "sources": sources, "names": names}
        for key, col in cols.items():
            if col is not None and len(col) != n:
                raise InputError(key, f"must have one entry per task ({n}), got {len(col)}")

        def at(col: Sequence[Any] | None, k: int, default: Any) -> Any:
            return default if col is None else col[k]

        tasks = tuple(
            Task(e=e[k], p=p[k], p_r=at(p_r, k, None), delta_f=at(delta_f, k, None), phi=at(phi, k, 0),
                 J=at(J, k, 0), kappa=at(kappa, k, 0), sources=tuple(at(sources, k, ())), name=at(names, k, None))
            for k in range(n))
        return cls(tasks=tasks, m=m)

    def with_recovery_periods(self, p_r: Sequence[Number]) -> TaskSet:
        """A copy with p_k^[r] replaced (e.g. by Rule A or B); validated like any task set."""
        if len(p_r) != self.n:
            raise InputError("p_r", f"must have one entry per task ({self.n}), got {len(p_r)}")
        return TaskSet(tasks=tuple(replace(t, p_r=v) for t, v in zip(self.tasks, p_r)), m=self.m)

    def with_m(self, m: int) -> TaskSet:
        """A copy on ``m`` processors."""
        return TaskSet(tasks=self.tasks, m=m)

    # -- per-task views ----------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.tasks)

    @property
    def e(self) -> tuple[Fraction, ...]:
        return tuple(t.e for t in self.tasks)  # type: ignore[misc]

    @property
    def p(self) -> tuple[Fraction, ...]:
        return tuple(t.p for t in self.tasks)  # type: ignore[misc]

    @property
    def p_r(self) -> tuple[Fraction, ...]:
        return tuple(t.p_r for t in self.tasks)  # type: ignore[misc]

    @property
    def u(self) -> tuple[Fraction, ...]:
        """Utilizations u_k = e_k / p_k (Def. 9)."""
        return tuple(t.e / t.p for t in self.tasks)  # type: ignore[operator]

    @property
    def U_sum(self) -> Fraction:
        """Total utilization U_sum = sum_k u_k (Def. 9)."""
        return sum(self.u, Fraction(0))

    def recovery_share(self, k: int) -> Fraction:
        """T_k's share in recovery mode, e_k / p_k^[r] = u_k p_k / p_k^[r] (eq. 6)."""
        t = self.tasks[k]
        return t.e / t.p_r  # type: ignore[operator]

    def W(self, scheduler: str) -> tuple[Fraction, ...]:
        """Maximum weights W(T_k) = e_k / min_t p(T_k, t) (Theorem 1), computed a priori (digest
        Sec. 1.4 [D]): ``"gedf-np"`` never changes periods, so W = e_k/p_k = u_k; under ``"aus"``
        every task may enter recovery, so W = e_k/p_k^[r] (equal to u_k when p_k^[r] = p_k)."""
        scheduler = check_scheduler(scheduler)
        if scheduler == "aus":
            return tuple(self.recovery_share(k) for k in range(self.n))
        return self.u

    def is_base(self, k: int) -> bool:
        return self.tasks[k].is_base

    def name_of(self, k: int) -> str:
        """The task's name, or the paper's label ``T{k+1}``."""
        name = self.tasks[k].name
        return name if name is not None else f"T{k + 1}"

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Task indices with every source before the tables it feeds (ties by index)."""
        order: list[int] = []
        done: set[int] = set()
        remaining = list(range(self.n))
        while remaining:
            ready = [k for k in remaining if all(s in done for s in self.tasks[k].sources)]
            order.extend(ready)
            done.update(ready)
            remaining = [k for k in remaining if k not in done]
        return tuple(order)

    def _check_acyclic(self) -> None:
        state = [0] * self.n  # 0 new, 1 on the stack, 2 done
        for root in range(self.n):
            if state[root]:
                continue
            stack = [(root, iter(self.tasks[root].sources))]
            state[root] = 1
            while stack:
                k, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[k] = 2
                    stack.pop()
                elif state[nxt] == 1:
                    raise InputError(f"tasks[{k}].sources", f"the view DAG has a cycle through tasks[{nxt}]",
                                     table=self.tasks[k].name)
                elif state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, iter(self.tasks[nxt].sources)))


def _normalise(task: Any, k: int, n: int) -> Task:
    """Task ``k`` checked and with exact numbers (errors name ``tasks[k].<field>``)."""
    if not isinstance(task, Task):
        raise InputError(f"tasks[{k}]", f"must be a Task, got {type(task).__name__}")
    name = task.name
    if name is not None and (not isinstance(name, str) or not name):
        raise InputError(f"tasks[{k}].name", f"must be a non-empty string, got {name!r}")
    where = f"tasks[{k}]"

    def num(key: str, value: Any) -> Fraction:
        return exact(value, f"{where}.{key}", table=name)

    def fail(key: str, rule: str) -> InputError:
        return InputError(f"{where}.{key}", rule, table=name)

    e, p = num("e", task.e), num("p", task.p)
    if e <= 0:
        raise fail("e", f"e_k must be > 0, got {show(e)}")
    if p <= 0:
        raise fail("p", f"p_k must be > 0, got {show(p)}")
    if e > p:
        raise fail("e", f"e_k = {show(e)} must not exceed p_k = {show(p)} (u_k <= 1, Def. 9)")
    p_r = p if task.p_r is None else num("p_r", task.p_r)
    if not e <= p_r <= p:
        raise fail("p_r", f"p_k^[r] must lie in [e_k, p_k] = [{show(e)}, {show(p)}] (Def. 10), got {show(p_r)}")
    delta_f = None if task.delta_f is None else num("delta_f", task.delta_f)
    if delta_f is not None and delta_f < 0:
        raise fail("delta_f", f"the recovery threshold must be >= 0, got {show(delta_f)}")
    phi, jit, kappa = num("phi", task.phi), num("J", task.J), num("kappa", task.kappa)
    if phi < 0:
        raise fail("phi", f"the phase must be >= 0 (Def. 2), got {show(phi)}")
    if not 0 <= jit <= p:
        raise fail("J", f"the arrival jitter must lie in [0, p_k] = [0, {show(p)}] (Def. 2), got {show(jit)}")
    if kappa < 0:
        raise fail("kappa", f"the timestamp jitter must be >= 0 (Def. 2), got {show(kappa)}")
    raw = task.sources
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
        raise fail("sources", f"must be a sequence of task indices, got {raw!r}")
    sources: list[int] = []
    for s in raw:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or not 0 <= s < n:
            raise fail("sources", f"must hold task indices in [0, {n - 1}], got {s!r}")
        if int(s) == k:
            raise fail("sources", "a table cannot be its own source")
        if int(s) in sources:
            raise fail("sources", f"index {int(s)} is listed twice")
        sources.append(int(s))
    return Task(e=e, p=p, p_r=p_r, delta_f=delta_f, phi=phi, J=jit, kappa=kappa, sources=tuple(sources), name=name)


def check_scheduler(scheduler: Any) -> str:
    """``scheduler`` if it is one of :data:`SCHEDULERS`, else an InputError naming ``scheduler``."""
    if scheduler not in SCHEDULERS:
        raise InputError("scheduler", f"must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
    return scheduler


# -- budgets (digest Sec. 1.4, Sec. VII of the paper) ---------------------------------------------

def max_update_length(p: Number, J: Number = 0, kappa: Number = 0) -> Fraction:
    """L_max, the most data one job of a healthy base table loads: p_k for strictly periodic
    timestamps (Sec. VII), p_k + J_k + kappa_k in general (digest Sec. 1.4 [D])."""
    values = [exact(p, "p"), exact(J, "J"), exact(kappa, "kappa")]
    if values[0] <= 0 or values[1] < 0 or values[2] < 0:
        raise InputError("p", "needs p > 0, J >= 0 and kappa >= 0")
    return sum(values, Fraction(0))


def default_budget(alpha: Number, beta: Number, L_max: Number, c: Number = 1) -> Fraction:
    """Provisioned WCET e_k = c * (S_k + R_k * L_max) with S = ``alpha``, R = ``beta`` (Sec. VII;
    digest Sec. 1.4): c = 1 is "average-case", c = 1 + b "worst-case" provisioning. E6: alpha = 3,
    beta = 0.1, L_max = 300 gives 33 (c = 1) and 39.6 (c = 1.2)."""
    a, b, length, scale = exact(alpha, "alpha"), exact(beta, "beta"), exact(L_max, "L_max"), exact(c, "c")
    for key, value in (("alpha", a), ("beta", b), ("L_max", length)):
        if value < 0:
            raise InputError(key, f"must be >= 0, got {show(value)}")
    if scale <= 0:
        raise InputError("c", f"must be > 0, got {show(scale)}")
    budget = scale * (a + b * length)
    if budget <= 0:
        raise InputError("alpha", "alpha + beta * L_max must be > 0 (a job must cost something)")
    return budget


# -- reference forms of Defs. 3, 6 and 8 (digest Sec. 1.2-1.4; examples E1, E2) -------------------

File = tuple[Number, Number]


def trailing_edge_base(files: Iterable[File], t: Number) -> Number:
    """TE(V_k, t) of a base table: the largest timestamp of a file with arr <= t (arrivals *at* t
    count), 0 when none has arrived (Def. 6; digest Sec. 1.3). ``files`` are ``(arr, ts)`` pairs."""
    return max((ts for arr, ts in files if arr <= t), default=0)


def trailing_edge_derived(source_freshness: Iterable[Number]) -> Number:
    """TE(V_k, t) of a derived table: min over V_i in pred(V_k) of F(V_i, t) (Def. 6)."""
    values = list(source_freshness)
    if not values:
        raise InputError("sources", "a derived table has at least one source")
    return min(values)


def backlog(files: Iterable[File], freshness: Number, t: Number) -> list[File]:
    """BL(V_k, t): the files that have arrived by t but are not loaded, sorted by timestamp
    (Def. 3). Files load in timestamp order, so "not loaded" means ts > F(V_k, t)."""
    return sorted(((arr, ts) for arr, ts in files if arr <= t and ts > freshness), key=lambda f: f[1])


def update_length_base(pending: Sequence[File], freshness: Number) -> Number:
    """L of a base-table job (Def. 8): the oldest pending file's timestamp minus F(V_k, s), so a
    job loads exactly one file. ``pending`` is BL(V_k, s), which a released job never finds empty."""
    if not pending:
        raise InputError("backlog", "a base-table job starts with a non-empty backlog (Def. 8)")
    return min(ts for _, ts in pending) - freshness


def update_length_derived(te: Number, freshness: Number, p: Number) -> Number:
    """L of a derived-table job (Def. 8): min(TE(V_k, s) - F(V_k, s), p_k); the cap is the nominal
    period p_k even in recovery mode (digest A16). E2: min(8 - 5, p_4) gives 3 (p_4 >= 3) or 2."""
    if te <= freshness:
        raise InputError("trailing_edge", "a derived-table job starts with TE > F (Def. 8)")
    return min(te - freshness, p)
