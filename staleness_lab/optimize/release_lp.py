"""A lower bound for queries sharing executors that sees when their tuples arrive: the batch
planner's Dantzig-Wolfe relaxation with release-time energy rows (this project's addition to the
decomposition of :mod:`staleness_lab.optimize.decomposition`, Chandrasekaran & Sudarshan §4's
planning problem).

**Why.** The relaxed master bounds each query's plan by its tail and the work of its head, so it
lets the executors be busy from the first release on; no plan can be, since every batch waits for
its last tuple. On A5 sets of 6 queries at ρ = 0.4 its phase-1 bound is 0 where every plan found
misses one deadline; this bound proves that miss on seeds 0-2 (0.9-1.7 s each, one core).

**The relaxation.** A batch holding tuples up to ``j`` starts no sooner than ``j``'s release
``r_j``. So for a plan ``p`` of query q and a time ``a``, the work ``w_p(a)`` of its batches whose
last tuple is released at ``a`` or later (and its final aggregation, after its last batch, when
``a`` is at most its last release) runs in ``[a, D_q]`` when q is on time. For every ``a`` and
every deadline ``D_k``, the queries on time with ``D_q <= D_k`` therefore fit

    Σ_q Σ_p λ_qp · w_p(a) <= m · (D_k - a)

on ``m`` executors (Horn's condition for preemptive scheduling with releases and deadlines,
1974), where ``λ_qp`` picks q's plan, ``Σ_p λ_qp + z_q = 1`` and ``z_q`` is q late (its work then
counts nowhere, a relaxation). Phase 1 minimizes ``Σ z_q``; the cost phase minimizes the plans'
cost (a late query's at least its cheapest split) with ``Σ z_q`` at most the phase-1 value. Any
subset of the rows is still a relaxation.

**Columns.** The LP over every plan is solved by column generation: a plan's reduced cost is a sum
over its batches of ``dur[size] · (c + Φ_q(r_last))`` plus its aggregation, ``Φ_q(t)`` the duals
of the rows at ``a <= t`` whose deadline is at least q's, so the cheapest plan is a shortest path
over tuple positions, O(N²) per query (:func:`_price`, compiled). The aggregation ``agg[n]`` is
taken at an affine minorant ``α + β·n`` (n >= 2), exact for the affine aggregation costs of the
paper's model. The LP keeps each query's work after each instant as a variable defined by
differences, so a plan's column has a coefficient only where one of its batches is released.
Rows sit at the release instants (at most :data:`MAX_INSTANTS` of them) times the deadlines.

**The bound is certified in integers.** The LP is solved in floating point (CLP), but its duals
only choose the multipliers: for any ``ρ >= 0`` on the rows (and ``η >= 0`` on the cost phase's
row of misses), the Lagrangian

    L(ρ) = Σ_q min(late_q, min_p [c_p + Σ ρ w_p]) - Σ ρ · capacity (- η · misses)

is a lower bound on the relaxation's optimum, hence on every plan's. The duals are scaled to
integers and ``L`` is evaluated exactly (the pricing DP in int64, the sums in Python integers), so
no rounding of the LP solver enters the bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit
from ortools.linear_solver import pywraplp

from staleness_lab.optimize.decomposition import QueryGrid

#: The duals are scaled by this and rounded down to integers for the certified bound.
SCALE = 1 << 24
#: At most this many release instants ``a`` carry rows (evenly spaced by rank, and every query's
#: last release); fewer rows are still a relaxation.
MAX_INSTANTS = 240
#: The cost phase's LP takes a miss past its limit at this many times the dearest cheapest split.
EXCESS_PRICE = 1000
#: Column generation stops after this many LP solves (its bound holds at every one).
MAX_ROUNDS = 200
#: The LP solver (column generation re-solves after each round of columns).
LP_SOLVER = "CLP"
#: A column enters when its reduced cost is below minus this (in units of the scaled duals).
ENTER = 1


@dataclass(frozen=True)
class ReleaseBound:
    """The certified bound (misses, or cost in grid units), the LP's last value, the column
    generation's rounds and columns, whether it converged (no column prices out) and its seconds;
    ``plans``: per query the plans (batch sizes) that entered as columns."""

    bound: int
    lp: float
    rounds: int
    columns: int
    converged: bool
    seconds: float
    plans: tuple[tuple[tuple[int, ...], ...], ...] = ()


def instants(grids: Sequence[QueryGrid], most: int = MAX_INSTANTS) -> np.ndarray:
    """The release instants that carry rows: every distinct release when there are at most
    ``most``, else ``most`` of them evenly spaced by rank; every query's last release always."""
    times = sorted({r for g in grids for r in g.release[1:]})
    if len(times) > most:
        step = (len(times) - 1) / (most - 1)
        times = [times[round(k * step)] for k in range(most)]
    return np.array(sorted(set(times) | {g.last_release for g in grids}), dtype=np.int64)


def agg_minorant(agg: Sequence[int]) -> tuple[int, int]:
    """Integers ``(α, β)`` with ``α + β·n <= agg[n]`` for every n >= 2, equal at n = 2."""
    n_max = len(agg) - 1
    if n_max < 3:
        return (agg[2] if n_max >= 2 else 0), 0
    beta = min((agg[n] - agg[2]) // (n - 2) for n in range(3, n_max + 1))
    return agg[2] - 2 * beta, beta


def work_after(g: QueryGrid, sizes: Sequence[int], at: np.ndarray) -> np.ndarray:
    """``w_p(a)`` for each ``a`` of ``at``: the work of the batches of ``sizes`` (in tuple order)
    whose last tuple is released at ``a`` or later, and the aggregation when ``a <= `` the last
    release (module docstring)."""
    w = np.zeros(len(at), dtype=np.int64)
    end = 0
    for s in sizes:
        end += s
        w += g.dur[s] * (at <= g.release[end])
    w += g.agg[len(sizes)] * (at <= g.last_release)
    return w


def plan_cost(dur: Sequence[int], agg: Sequence[int], sizes: Sequence[int]) -> int:
    """A plan's cost on a grid whose batch of ``x`` tuples lasts ``dur[x]`` and whose aggregation
    over ``n`` partials ``agg[n]``: its batches of ``sizes`` and their aggregation."""
    return int(sum(dur[s] for s in sizes) + agg[len(sizes)])


@njit(cache=True)
def _price(dur: np.ndarray, weight: np.ndarray, agg_weight: int, agg1: int, alpha: int,
           beta: int) -> tuple[int, np.ndarray]:
    """The least ``Σ_b dur[size_b]·weight[last_b] + agg[n]·agg_weight`` over every split of the
    tuples ``1..N`` into batches (``agg[1] = agg1``, ``agg[n] >= alpha + beta·n`` from 2 on), and
    the sizes of a split that reaches it. int64 throughout: the caller keeps the values in range."""
    n = dur.shape[0] - 1
    best = np.empty(n + 1, dtype=np.int64)
    arg = np.zeros(n + 1, dtype=np.int64)
    best[0] = 0
    per_batch = beta * agg_weight
    for j in range(1, n + 1):
        w = weight[j]
        lo = best[0] + dur[j] * w + per_batch
        at = 0
        for i in range(1, j):
            v = best[i] + dur[j - i] * w + per_batch
            if v < lo:
                lo, at = v, i
        best[j] = lo
        arg[j] = at
    one = dur[n] * weight[n] + agg1 * agg_weight
    many = np.int64(0)               # a value may be negative (a falling minorant): no sentinel value
    last = 0                         # 0: no split of two or more batches (N = 1)
    w = weight[n]
    for i in range(1, n):            # at least two batches: the last starts after tuple i >= 1
        v = best[i] + dur[n - i] * w + per_batch + alpha * agg_weight
        if last == 0 or v < many:
            many, last = v, i
    if last == 0 or one <= many:
        return one, np.array([n], dtype=np.int64)
    sizes = [n - last]
    j = last
    while j > 0:
        sizes.append(j - arg[j])
        j = arg[j]
    return many, np.array(sizes[::-1], dtype=np.int64)


class _Pricer:
    """One query's pricing: its grid as arrays, the aggregation's minorant, and for each tuple the
    index of the last instant at or before its release."""

    def __init__(self, g: QueryGrid, at: np.ndarray) -> None:
        self.g = g
        self.dur = np.array(g.dur, dtype=np.int64)
        self.alpha, self.beta = agg_minorant(g.agg)
        self.agg1 = g.agg[1] if g.n >= 1 else 0
        # a bound on any partial value of the pricing DP per unit of weight (twice the dearest split)
        self.reach = 2 * (int(self.dur.max()) + max(g.agg) + abs(self.alpha) + abs(self.beta) * g.n) + 1
        self.upto = np.searchsorted(at, np.array(g.release, dtype=np.int64), side="right")  # instants a <= r_j

    def price(self, duals: np.ndarray, per_unit: int) -> tuple[int, tuple[int, ...]]:
        """The cheapest plan at integer ``duals`` (per instant, summed over the rows that apply to
        this query) with ``per_unit`` on its cost: the value and the sizes."""
        phi = np.concatenate(([0], np.cumsum(duals)))       # phi[k]: the duals of the first k instants
        weight = per_unit + phi[self.upto]
        value, sizes = _price(self.dur, weight, int(per_unit + phi[self.upto[self.g.n]]), self.agg1,
                              self.alpha, self.beta)
        return int(value), tuple(int(s) for s in sizes)


def release_bound(grids: Sequence[QueryGrid], executors: int, *, phase: str, misses: int = 0,
                  floors: Sequence[int] | None = None, seeds: Sequence[Sequence[tuple[int, ...]]] = (),
                  target: int | None = None, stop: Callable[[], bool] | None = None,
                  max_rounds: int = MAX_ROUNDS) -> ReleaseBound:
    """The certified bound of the relaxation (module docstring) for ``phase`` ``"misses"`` (the
    fewest late queries) or ``"cost"`` (the least cost on the grid among plans with at most
    ``misses`` late; ``floors``: each query's cheapest split, what a late one costs at least).
    ``seeds``: plans (batch sizes) per query to start from. Column generation stops when no column
    prices out, when the bound reaches ``target``, when ``stop()`` says so or after
    ``max_rounds``; the best certified bound of any round is returned."""
    began = time.perf_counter()
    cost_phase = phase == "cost"
    at = instants(grids)
    pricers = [_Pricer(g, at) for g in grids]
    # the multipliers' room in the pricing's int64 sums, at most: none past 2^60 / SCALE grid units
    room = (1 << 60) // max(pricer.reach for pricer in pricers) - SCALE
    if room <= 0:
        return ReleaseBound(bound=0, lp=float("nan"), rounds=0, columns=0, converged=False,
                            seconds=round(time.perf_counter() - began, 4))
    deadlines = sorted({g.deadline for g in grids})
    rows_of = [[k for k, d in enumerate(deadlines) if d >= g.deadline] for g in grids]
    solver = pywraplp.Solver.CreateSolver(LP_SOLVER)
    # past a deadline nothing of a query on time by it is left (what lasts 0 units adds nothing)
    capacity = {(i, k): executors * max(0, d - int(a)) for i, a in enumerate(at) for k, d in enumerate(deadlines)}
    rows = {key: solver.Constraint(-solver.infinity(), cap) for key, cap in capacity.items()}
    # y[q][i] = q's work after instant i, defined by differences so that a plan's column has a
    # coefficient only where one of its batches is released (the rows stay sparse)
    work = [[solver.NumVar(0, solver.infinity(), "") for _ in at] for _ in grids]
    steps = [[solver.Constraint(0, 0) for _ in at] for _ in grids]
    for q, g in enumerate(grids):
        for i in range(len(at)):
            steps[q][i].SetCoefficient(work[q][i], 1)
            if i + 1 < len(at):
                steps[q][i].SetCoefficient(work[q][i + 1], -1)
            for k in rows_of[q]:
                rows[(i, k)].SetCoefficient(work[q][i], 1)
    floors = list(floors) if floors is not None else [0] * len(grids)
    price = floors if cost_phase else [1] * len(grids)   # what a late query adds: its cheapest split, or a miss
    late = [solver.NumVar(0, 1, f"late{q}") for q in range(len(grids))]
    convex = [solver.Constraint(1, 1) for _ in grids]
    objective = solver.Objective()
    for q, var in enumerate(late):
        convex[q].SetCoefficient(var, 1)
        objective.SetCoefficient(var, price[q])
    misses_row = None
    if cost_phase:
        misses_row = solver.Constraint(-solver.infinity(), misses)
        for var in late:
            misses_row.SetCoefficient(var, 1)
        # more misses at a price, so the LP is feasible before columns on time enter (its duals
        # only pick multipliers: the bound is the Lagrangian's)
        excess = solver.NumVar(0, solver.infinity(), "excess")
        misses_row.SetCoefficient(excess, -1)
        objective.SetCoefficient(excess, EXCESS_PRICE * (1 + max(floors, default=0)))
    objective.SetMinimization()
    pool: list[set[tuple[int, ...]]] = [set() for _ in grids]

    def add(q: int, sizes: tuple[int, ...]) -> bool:
        if sizes in pool[q]:
            return False
        pool[q].add(sizes)
        g = grids[q]
        var = solver.NumVar(0, solver.infinity(), "")
        convex[q].SetCoefficient(var, 1)
        objective.SetCoefficient(var, plan_cost(g.dur, g.agg, sizes) if cost_phase else 0)
        after = work_after(g, sizes, at)
        for i, step in enumerate(after - np.append(after[1:], 0)):
            if step:
                steps[q][i].SetCoefficient(var, -int(step))
        return True

    for q, g in enumerate(grids):
        add(q, (g.n,))
        for sizes in (seeds[q] if q < len(seeds) else ()):
            add(q, tuple(sizes))
    afresh = pywraplp.MPSolverParameters()
    afresh.SetIntegerParam(afresh.INCREMENTALITY, afresh.INCREMENTALITY_OFF)
    best, lp, converged, rounds = None, float("nan"), False, 0
    for rounds in range(1, max_rounds + 1):
        # a warm start that ends without an optimum (GLOP did, ABNORMAL): that round afresh, once
        if solver.Solve() != pywraplp.Solver.OPTIMAL and solver.Solve(afresh) != pywraplp.Solver.OPTIMAL:
            break
        lp = objective.Value()
        rho = {key: max(0.0, -row.dual_value()) for key, row in rows.items()}
        eta = max(0.0, -misses_row.dual_value()) if misses_row is not None else 0.0
        value, columns = _certify(pricers, at, deadlines, capacity, rho, eta, price, misses, cost_phase, room)
        best = value if best is None else max(best, value)
        fresh = [add(q, sizes) for q, sizes in columns]
        if not any(fresh):
            converged = True
            break
        if (target is not None and best >= target) or (stop is not None and stop()):
            break
    return ReleaseBound(bound=max(best or 0, 0), lp=lp, rounds=rounds, columns=sum(map(len, pool)),
                        converged=converged, seconds=round(time.perf_counter() - began, 4),
                        plans=tuple(tuple(sorted(mine)) for mine in pool))


def _certify(pricers: list[_Pricer], at: np.ndarray, deadlines: list[int], capacity: dict[tuple[int, int], int],
             rho: dict[tuple[int, int], float], eta: float, price: list[int], misses: int,
             cost_phase: bool, room: int) -> tuple[int, list[tuple[int, tuple[int, ...]]]]:
    """The Lagrangian at the duals scaled to integers, exactly (module docstring), rounded up to an
    integer bound, and per query the cheapest plan at those duals when it prices below being late
    (the columns to add). ``price``: what a late query adds; ``room``: the most the scaled
    multipliers may sum to and keep the pricing's sums in int64."""
    scaled = {key: int(v * SCALE) for key, v in rho.items()}
    eta_scaled = int(eta * SCALE)
    # keep the pricing's sums in int64: scale the multipliers down when they would pass it
    spent = sum(scaled.values())
    if spent > room:
        scaled = {key: v * room // spent for key, v in scaled.items()}
    per_unit = SCALE if cost_phase else 0
    by_deadline = np.zeros((len(at), len(deadlines)), dtype=np.int64)
    for (i, k), v in scaled.items():
        by_deadline[i, k] = v
    # the duals of the rows whose deadline is at least D_q, per instant: a suffix sum over deadlines
    suffix = np.cumsum(by_deadline[:, ::-1], axis=1)[:, ::-1]
    total = -sum(v * capacity[key] for key, v in scaled.items()) - (eta_scaled * misses if cost_phase else 0)
    columns = []
    for q, pricer in enumerate(pricers):
        value, sizes = pricer.price(suffix[:, deadlines.index(pricer.g.deadline)], per_unit)
        late = price[q] * SCALE + eta_scaled
        if value < late - ENTER:
            columns.append((q, sizes))
        total += min(value, late)
    return -(-total // SCALE), columns
