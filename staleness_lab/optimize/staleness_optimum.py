"""The exact minimum of Bateni et al.'s X_w over all schedules, by CP-SAT (digest §5 "Exact OPT
(OR-Tools CP-SAT, faithful)" with corrections 7, 8 and 9; the digest is
``shared/specs/bateni-staleness-stretch.md``).

**Scope (digest §1, correction 8).** Every non-preemptive schedule of the workload's updates on
``p = tracks`` identical tracks in which each batch takes *all* pending updates of its table at
its start (forced batching), one batch per table at a time, a batch of updates a..b lasting
exactly ``alpha_i + beta_i·(d_ib − d_i,a−1)`` (schema alpha, beta: a Bateni table is ``alpha: 0,
beta: α_i``, correction 1), idling allowed (E2). Every engine trace is one such schedule, so no
policy beats the optimum, except where the engine's float sums put a decision an ulp before an
arrival it equals in exact numbers (0.7 + 0.35 + 0.55 < 1.6): the batch then leaves that update
out, a schedule only the relaxed bound covers. ``relaxed=True`` drops forced batching (a batch may leave later
updates for the next one): a lower bound, digest A9 (E1: relaxed 18.75, forced 19).

**Objective (digest §1, canonical X).** Update j of table i arrives at r_ij with data up to d_ij
(the workload's ``arrivals`` pairs ``[time, data_to]``; d_ij = r_ij in the paper), has length
L_ij = d_ij − d_i,j−1 (d_i0 = ``initial_freshness``) and completes at C_ij, the finish of its
batch: ``X_w = Σ_i w_i Σ_j [L_ij²/2 + L_ij (C_ij − d_ij)]`` with w = priority. Only arrivals that
add data are updates (:meth:`~staleness_lab.model.Table.updates`). Every listed update
counts, whatever the workload's horizon (X is horizon-free).

**Integers (correction 7).** Numbers are read as written (``Fraction(repr(x))``). Times (arrivals,
data ends) and every candidate duration are scaled to integers by S, the lcm of their
denominators, and the weights by W, the lcm of theirs; the objective is divided back by W·S².
When the objective could pass 2^62 (continuous random times make S huge), the times are rounded
to the finest decimal grid that fits (durations to the nearest grid step, at least one) and the
weights to multiples of 10^-6 when W > 10^6: the result then says ``exact = False`` and its
``note`` the grid; its X is the exact X_w of the returned schedule, whose batches and starts are
optimal on the rounded instance.

**Model (§5).** Per table i and updates a ≤ b (0-based), an optional fixed-size interval
(literal x_iab, duration D_iab) whose start lies in ``[r_ib, r_i,b+1 − 1]`` (the batch has all of
a..b and none of b+1; the last update's batches up to H), where H = last arrival +
Σ_i (n_i·alpha_i + beta_i·(d_i,last − d_i0)) bounds every left-shifted schedule's starts (after
the last arrival some batch always runs until the last finish). Left-shifted schedules start at
arrivals or finishes, integers on the grid, so integer starts lose nothing; starts are never
restricted to arrival instants (correction 7: E2's optimum starts A at a finish, 10.605). The
candidates ending at b share one start variable s_ib (at most one of them is present), each
``x_iab ⇒ lo_iab ≤ s_ib ≤ hi_iab`` for its own window. Windows are pruned by the earliest end of
any batch ending at a−1 (forward) and the latest start of any batch from b+1 (backward), to a
fixed point; a candidate with an empty window is dropped. Completion variables C_ij ≥ r_ij are
nondecreasing in j; ``x_iab ⇒ C_ib = s_ib + D_iab`` and ``C_i,a−1 ≤ s_ib``; a table's batch
boundary literal ``e_ij = Σ_a x_iaj`` gives ``¬e_ij ⇒ C_ij = C_i,j+1`` and
``e_ij ⇒ C_ij < C_i,j+1`` (durations are positive); exactly one candidate covers each update;
NoOverlap per table; Cumulative with unit demands and capacity p over all batches (NoOverlap
when p = 1; left out when p ≥ the number of tables, where the table NoOverlaps imply it).
Objective: minimise ``Σ W w_i · S L_ij · S C_ij``; then
``X_w = Σ_i w_i (½ Σ L² − Σ L·d) + objective / (W S²)``. Relaxed: the window tops become H (the
C chain orders a table's batches, the §5 ``x ∧ x' ⇒ end ≤ start``).

**Pieces (redundant; this project's addition for the proof of optimality).** The model above
bounds X_w by the unlimited-tracks optimum only, so contention is left to search. Each update j
also gets a mandatory interval, its *piece*, of size q_ij = floor(S·beta_i·L_ij), starting at or
after r_ij and ending at E_ij ≤ C_ij. In any schedule the pieces of a batch tile it in update
order, after its alpha (``e_ij ⇒ E_ij = C_ij``, ``¬e_ij ⇒ E_ij = start of piece j+1``), so they
obey the same Cumulative (capacity p) and per-table NoOverlap, and per table
``Σ_j q_j C_j = Σ_j q_j E_j + Σ_ab π_ab x_ab`` with ``π_ab = Σ_{a≤k<j≤b} q_k q_j`` (what batching
adds); the model states it as ``≥``. With ``linearization_level = 2`` CP-SAT's completion-time
(Queyranne) cuts on the pieces bound Σ q E, which is proportional to the objective when
w_i/beta_i is equal across tables (X1's instances): the root bound then sits within about 0.01 %
of the optimum instead of the unlimited-tracks bound. CP-SAT's generic cuts
(:data:`GENERIC_CUTS`) are switched off: they slow every node and add nothing here.

**Pruning.** With U the hint's objective (below) and lb_ij the earliest completion of update j
over its candidates, a candidate starting at s makes the objective at least
``Σ coef·lb + Σ_{j in it} coef_j (s + D − lb_j)``; candidates that pass U at their earliest
start are dropped and window tops are cut where they would, then the windows go back to their
fixed point, until stable. Every schedule at least as good as the hint survives, the hint
included, so the optimum and the solver's bound are unaffected.

**Hint.** The schedule of ``myopic`` (``fifo`` if myopic is not registered; they give the same
trace), simulated to a drained horizon, is replayed exactly on the grid (per track, in the
engine's order, each job starting when its track, its table and its first pending update allow
and taking every update arrived by then) and hinted: every literal, and every batch's start,
completions and pieces. The replay's times can differ from the engine's (off an exact grid by
the rounding; on one where the engine's float sums break a tie with an arrival otherwise), so a
replayed batch may take updates the engine left to its table's next job. A job is therefore
replayed only when its table's next update had arrived by its start (within a grid step), else
skipped: replayed anyway, it would hold its track idle until that arrival and delay every job
behind it (on a 28-table instance of 1,120 updates at load .5 this made the hint's X_w six
times myopic's).

**Blocks** (``method="blocks"``, the default; this project's addition). The instance is cut in
time at every arrival instant at which the hint's schedule is empty
(:mod:`staleness_lab.optimize.time_blocks`: OPT is at least the sum of the parts' optima, and
equals it when each part's optimum ends by its cut). The blocks are solved in two passes: left
to right, each by its completion floor and beam search alone (at most :data:`FIRST_PASS`
seconds), then the unproven ones in full, smallest first, sharing what is left of
``time_limit`` (a block solved left to right with all the time left could take it all and leave
the blocks after it their completion floors). A block whose proven optimum runs past its cut is
merged with the next and solved again; one whose unproven schedule runs past it keeps the hint's part
(which ends by the cut) with the solver's bound. A block of more than :data:`MAX_BLOCK` updates
(the model's former limit) is not modelled: it keeps the hint, bounded by each update's
earliest end. Each block is proven, in this order, by its
completion floor meeting the hint (the hint is optimal), by the exact labelling search of
:mod:`staleness_lab.optimize.block_dp` (within :data:`SEARCH_BUDGET` labels), or by the model
above. Each run of the search is preceded by its beam search (:data:`DIVE_BEAM` labels a layer),
whose schedule, when better, becomes the search's upper bound: the exact search's time grows
steeply with how far that bound lies above the optimum. A beam search that cut no layer was
exact, and proves the block itself. An exact search that gives up still bounds its block (by
its open labels), and the block keeps the larger of that bound and the model's.
``method="monolithic"`` is the reference: one block, the model alone.

**Result.** Tracks are assigned greedily by start (lowest free track). ``status`` is
``"optimal"`` (every block proven) or ``"feasible"`` (a schedule, not proven: at worst the hint,
so there is always one; ``"timeout"``, none within the limit, no longer arises). ``bound`` is the
sum of the blocks' lower bounds (the solver's, or the completion floor of a block left unsolved
when time ran out) as X_w (the objective when optimal),
``gap = (objective − bound) / max(1, |objective|)``. Solver: ``num_workers = workers``
(1 to 64, :func:`staleness_lab.cpsat.check_workers`), ``random_seed = 1``,
``max_time_in_seconds`` what is left of ``time_limit`` (as :mod:`staleness_lab.optimize.batch_plan`), run by
:func:`staleness_lab.cpsat.solve` so that Ctrl-C and SIGTERM stop it at once.

**Refused** (:class:`~staleness_lab.errors.InputError`): periodic or derived tables, per-table
``chop`` or ``min_separation``, and the workload's ``variability``, ``slowdown``, ``chop`` or
``warmup`` (the model has deterministic durations, correction 6, and plain releases), and more
than :data:`MAX_UPDATES` updates in total.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_left
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, NamedTuple

import pandas as pd
from ortools.sat.python import cp_model

from staleness_lab.cpsat import check_workers, solve
from staleness_lab.errors import InputError
from staleness_lab.model import Workload
from staleness_lab.optimize.block_dp import dive, search
from staleness_lab.optimize.time_blocks import cuts as block_cuts
from staleness_lab.optimize.time_blocks import spans as block_spans
from staleness_lab.sim.metrics import total_weighted_staleness
from staleness_lab.sim.schedule_trace import trace_from_schedule
from staleness_lab.sim.trace import Trace

#: CP-SAT's random seed (as batch_plan).
SEED = 1
#: The most updates (all tables together) the optimum takes.
MAX_UPDATES = 5000
#: The most updates of one block (module docstring, "Blocks") that is modelled and searched; a
#: larger one keeps the hint's schedule, with each update's earliest end as its bound.
MAX_BLOCK = 200
#: The objective (and every variable) must stay below this.
OBJECTIVE_LIMIT = 2**62
#: Weights are rounded to multiples of 1/this when their common denominator is larger.
WEIGHT_GRID = 10**6
#: Decimal grids tried, finest first, when the exact scale overflows: 10^-k for k from 12 to -6.
GRID_EXPONENTS = range(12, -7, -1)
#: The policy name recorded in the trace.
POLICY = "optimum"
#: How :func:`optimum` solves: cut in time into blocks (module docstring, "Blocks"), or one model.
METHODS = ("blocks", "monolithic")
#: Labels the exact search of a block may make before it gives up (its memory: about 200 bytes a
#: label on 12 tables, so 1 GB; compiled, about 10 µs a label, so most of a minute).
SEARCH_BUDGET = 5_000_000
#: On at most SEARCH_LEADS tracks the search takes SEARCH_SHARE of a block's time, CP-SAT the rest
#: (:func:`_solve`): on Bateni's 12 x 14 instances at load .8 on two tracks, leading proved the
#: same 3 of 10 as CP-SAT leading, each 2-4 times sooner (more tracks: not measured, CP-SAT leads).
SEARCH_LEADS = 2
SEARCH_SHARE = 0.8
#: On several tracks (:func:`_solve`): the first stage takes FIRST_SHARE of a block's time (at
#: most FIRST_CAP seconds), the second SECOND_SHARE of what is left, the first again the rest.
FIRST_SHARE = 0.2
FIRST_CAP = 0.5
SECOND_SHARE = 0.5
#: On several tracks the search first probes a block for at most this many seconds.
PROBE_CAP = 0.05

#: Each block's time for its beam search in the first pass (:func:`_solve_blocks`); the unproven
#: blocks then share the rest. The beam search of a 60-update block at load .8 takes about 0.8 s.
FIRST_PASS = 1.0
#: A block the second pass left unproven is solved again when its share of the time left is more
#: than this many times what it had (the search starts over, deepening from the bound it left).
RETRY = 1.0
#: A deepening search's first step: this fraction of the gap between its bound and its hint
#: (:func:`_solve`). On a 30-update block of a 20 x 28 instance at load .8 on one track (seed 9),
#: whose search had given up 2 units below the optimum and 3.4e-5 below the hint, the first step
#: found the optimum in 1.0 s; the search below the hint takes 6.8 s.
DEEPEN_STEPS = 64

#: The labels per layer the beam search (:func:`~staleness_lab.optimize.block_dp.dive`) keeps
#: before the exact search. On a 34-update block of a 12 x 14 instance at load .8 on two tracks it
#: brought the upper bound from 0.096 % above the optimum to 0.013 % in 0.36 s; the exact search
#: took 96 s below the first and 14 s below the second (9.5 s below the optimum itself).
DIVE_BEAM = 1000

#: CP-SAT's generic cuts, switched off: the LP's strength here is its scheduling cuts on the pieces.
GENERIC_CUTS = ("add_mir_cuts", "add_cg_cuts", "add_zero_half_cuts", "add_clique_cuts")

_STATUS = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible", cp_model.UNKNOWN: "timeout"}


def exact_number(value: float | int) -> Fraction:
    """A number as written (correction 7): ``Fraction(repr(x))``, so 0.1 is 1/10."""
    return Fraction(repr(float(value))) if not isinstance(value, int) else Fraction(value)


@dataclass(frozen=True)
class ExactTable:
    """One replayed base table's updates in exact numbers (digest §1): ``arrival`` r_ij and
    ``data_to`` d_ij of every arrival that adds data, j = 0, 1, ... (0-based), and ``initial``
    d_i0; ``weight`` is the priority, ``alpha``/``beta`` the schema's cost (correction 1)."""

    name: str
    weight: Fraction
    alpha: Fraction
    beta: Fraction
    initial: Fraction
    arrival: tuple[Fraction, ...]
    data_to: tuple[Fraction, ...]

    @property
    def n(self) -> int:
        return len(self.arrival)

    def data_from(self, j: int) -> Fraction:
        """d_i,j−1: where update j's data starts."""
        return self.data_to[j - 1] if j > 0 else self.initial

    def length(self, j: int) -> Fraction:
        """L_ij = d_ij − d_i,j−1."""
        return self.data_to[j] - self.data_from(j)

    def duration(self, first: int, last: int) -> Fraction:
        """The batch of updates first..last: alpha + beta · (its data span)."""
        return self.alpha + self.beta * (self.data_to[last] - self.data_from(first))

    def x_part(self, completion: list[Fraction]) -> Fraction:
        """Σ_j [L²/2 + L (C_j − d_j)] for completion times C_j (unweighted X_i)."""
        return sum((self.length(j) ** 2 / 2 + self.length(j) * (completion[j] - self.data_to[j])
                    for j in range(self.n)), Fraction(0))


def exact_tables(workload: Workload, limit: int = MAX_UPDATES) -> list[ExactTable]:
    """Every table of ``workload`` as an :class:`ExactTable`, or :class:`InputError` naming the
    first key outside the model (module docstring, "Refused"), or more than ``limit`` updates."""
    for key in ("variability", "slowdown", "chop"):
        if getattr(workload, key) is not None:
            raise InputError(key, "the exact optimum takes deterministic durations alpha + beta·span (digest §1, "
                                  "correction 6): remove this key")
    if workload.warmup:
        raise InputError("warmup", "X is measured from time 0 (digest §1): remove the warmup")
    out = []
    for k, table in enumerate(workload.tables):
        if table.period is not None:
            raise InputError(f"tables[{k}].period", "a periodic feed never stops: the exact optimum needs the updates "
                                                    "listed as arrivals", table=table.name)
        if table.sources is not None:
            raise InputError(f"tables[{k}].sources", "a derived table has no updates of its own: the exact optimum "
                                                     "takes replayed base tables only", table=table.name)
        if table.chop is not None:
            raise InputError(f"tables[{k}].chop", "a batch takes every pending update (digest correction 8): "
                                                  "remove chop", table=table.name)
        if table.min_separation:
            raise InputError(f"tables[{k}].min_separation", "the exact optimum has no release delays: remove "
                                                            "min_separation", table=table.name)
        updates = table.updates()  # reading floats as written keeps their order, so the same updates
        out.append(ExactTable(name=table.name, weight=exact_number(table.priority), alpha=exact_number(table.alpha),
                              beta=exact_number(table.beta), initial=exact_number(table.initial_freshness),
                              arrival=tuple(exact_number(a) for a, _ in updates),
                              data_to=tuple(exact_number(d) for _, d in updates)))
    total = sum(t.n for t in out)
    if total > limit:
        raise InputError("tables", f"{total} updates in total (arrivals adding data); this exact solver takes at most "
                                   f"{limit}")
    return out


# -- the integer instance ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    """The instance in integers: times × ``scale`` (S), weights × ``wscale`` (W)."""

    tables: list[ExactTable]
    scale: Fraction
    wscale: int
    exact: bool  # times, data ends and durations exact (else rounded to the grid 1/scale)
    weights_exact: bool
    r: list[list[int]]
    d: list[list[int]]
    d0: list[int]
    w: list[int]
    horizon: int  # H: every left-shifted start is at or before it

    def dur(self, i: int, first: int, last: int) -> int:
        value = self.tables[i].duration(first, last) * self.scale
        return int(value) if self.exact else max(1, round(value))

    def length(self, i: int, j: int) -> int:
        return self.d[i][j] - (self.d[i][j - 1] if j > 0 else self.d0[i])

    def piece(self, i: int, j: int) -> int:
        """q_ij = floor(S·beta_i·L_ij): update j's share of any batch's duration (exact data)."""
        return math.floor(self.tables[i].beta * self.tables[i].length(j) * self.scale)

    def objective_bound(self) -> int:
        """The largest value the objective Σ W w · S L · S C could take."""
        longest = max((self.dur(i, 0, t.n - 1) for i, t in enumerate(self.tables) if t.n), default=0)
        top = self.horizon + longest
        return sum(self.w[i] * self.length(i, j) * top for i, t in enumerate(self.tables) for j in range(t.n))


def _lcm_den(values: list[Fraction]) -> int:
    return math.lcm(1, *(v.denominator for v in values))


def _grid(tables: list[ExactTable]) -> _Grid:
    """The integer instance: exact when the objective fits (module docstring, "Integers")."""
    wscale = _lcm_den([t.weight for t in tables])
    weights_exact = wscale <= WEIGHT_GRID
    if not weights_exact:
        wscale = WEIGHT_GRID
    w = [int(t.weight * wscale) if weights_exact else max(1, round(t.weight * wscale)) for t in tables]
    times = [v for t in tables for v in (t.initial, *t.arrival, *t.data_to)]
    spans = [t.alpha for t in tables] + [t.beta * (d - t.initial) for t in tables for d in t.data_to]
    exact_scale = Fraction(_lcm_den(times + spans))
    grid = _scaled(tables, exact_scale, wscale, w, True, weights_exact)
    if grid.objective_bound() < OBJECTIVE_LIMIT:
        return grid
    for k in GRID_EXPONENTS:
        grid = _scaled(tables, Fraction(10) ** k, wscale, w, False, weights_exact)
        if grid.objective_bound() < OBJECTIVE_LIMIT:
            return grid
    raise InputError("tables", "the instance is too large for 64-bit integers even on a grid of 10^6 time units")


def _scaled(tables: list[ExactTable], scale: Fraction, wscale: int, w: list[int], exact: bool,
            weights_exact: bool) -> _Grid:
    def to_int(v: Fraction) -> int:
        value = v * scale
        return int(value) if exact else round(value)

    r = [[to_int(v) for v in t.arrival] for t in tables]
    d = [[to_int(v) for v in t.data_to] for t in tables]
    d0 = [to_int(t.initial) for t in tables]
    return _Grid(tables=tables, scale=scale, wscale=wscale, exact=exact, weights_exact=weights_exact, r=r, d=d, d0=d0,
                 w=w, horizon=_horizon(tables, r, scale, exact))


def _horizon(tables: list[ExactTable], r: list[list[int]], scale: Fraction, exact: bool) -> int:
    """H (module docstring, "Model"): the last arrival plus all the work, in grid steps."""
    work = sum(((t.alpha * t.n + t.beta * (t.data_to[-1] - t.initial)) * scale for t in tables if t.n), Fraction(0))
    slack = 0 if exact else sum(t.n for t in tables)  # each rounded duration may add one step
    last = max((row[-1] for row in r if row), default=0)
    return last + math.ceil(work) + slack


def _sub_grid(grid: _Grid, spans: list[tuple[int, int]]) -> tuple[_Grid, list[int]]:
    """The part of ``grid`` holding updates ``first..stop−1`` of each table (``spans``, from
    :func:`~staleness_lab.optimize.time_blocks.spans`): a grid over the tables with updates in it
    (each starting from the data its earlier updates end with) and their positions in ``grid``."""
    keep = [i for i, (first, stop) in enumerate(spans) if stop > first]
    tables, r, d, d0 = [], [], [], []
    for i in keep:
        first, stop = spans[i]
        t = grid.tables[i]
        tables.append(replace(t, initial=t.data_from(first), arrival=t.arrival[first:stop],
                              data_to=t.data_to[first:stop]))
        r.append(grid.r[i][first:stop])
        d.append(grid.d[i][first:stop])
        d0.append(grid.d[i][first - 1] if first else grid.d0[i])
    return replace(grid, tables=tables, r=r, d=d, d0=d0, w=[grid.w[i] for i in keep],
                   horizon=_horizon(tables, r, grid.scale, grid.exact)), keep


# -- candidate batches -------------------------------------------------------------------------

_Windows = dict[tuple[int, int], tuple[int, int]]


def _windows(grid: _Grid, i: int, relaxed: bool) -> _Windows:
    """Start windows ``(first, last) -> (lo, hi)`` of table i's candidate batches (module
    docstring, "Model"), pruned to a fixed point by :func:`_fixed_point`."""
    r, n, H = grid.r[i], grid.tables[i].n, grid.horizon
    win = {(a, b): (r[b], H if relaxed or b == n - 1 else r[b + 1] - 1) for b in range(n) for a in range(b + 1)}
    return _fixed_point(grid, i, {key: lh for key, lh in win.items() if lh[0] <= lh[1]})


def _fixed_point(grid: _Grid, i: int, win: _Windows) -> _Windows:
    """Shrink windows until stable: a batch from update a starts no earlier than the earliest end
    of a batch ending at a−1 (forward), and ends no later than the latest start of a batch from
    b+1 (backward); a candidate whose window empties, or that no batch can precede or follow,
    is dropped."""
    n, H = grid.tables[i].n, grid.horizon
    dur = {key: grid.dur(i, *key) for key in win}
    win = dict(win)
    while True:
        before = dict(win)
        earliest_end: list[int | None] = [None] * n
        for b in range(n):
            for a in range(b + 1):
                if (a, b) not in win:
                    continue
                prev = earliest_end[a - 1] if a > 0 else 0
                lo, hi = win[(a, b)]
                if prev is None or max(lo, prev) > hi:
                    del win[(a, b)]
                    continue
                lo = max(lo, prev)
                win[(a, b)] = (lo, hi)
                end = lo + dur[(a, b)]
                earliest_end[b] = end if earliest_end[b] is None else min(earliest_end[b], end)
        latest_start: list[int | None] = [None] * n  # the latest start of a batch from update k
        for a in range(n - 1, -1, -1):
            for b in range(n - 1, a - 1, -1):
                if (a, b) not in win:
                    continue
                nxt = latest_start[b + 1] if b < n - 1 else H + dur[(a, b)]
                lo, hi = win[(a, b)]
                if nxt is None or min(hi, nxt - dur[(a, b)]) < lo:
                    del win[(a, b)]
                    continue
                hi = min(hi, nxt - dur[(a, b)])
                win[(a, b)] = (lo, hi)
                latest_start[a] = hi if latest_start[a] is None else max(latest_start[a], hi)
        if win == before:
            return win


def _completion_floor(grid: _Grid, wins: list[_Windows]) -> list[list[int]]:
    """The earliest completion of every update over its candidates' windows."""
    return [[min(win[k][0] + grid.dur(i, *k) for k in win if k[0] <= j <= k[1]) for j in range(t.n)]
            for i, (t, win) in enumerate(zip(grid.tables, wins))]


def _prune(grid: _Grid, wins: list[_Windows], ub: int) -> list[_Windows]:
    """Keep only what a schedule of objective <= ``ub`` can use (module docstring, "Pruning"):
    with lb_j the earliest completion of update j and LB = Σ coef_j lb_j, a candidate starting at
    s costs at least ``LB + Σ_{j in it} coef_j (s + D − lb_j)``; it is dropped when that exceeds
    ub at its earliest start, and its window top is cut where it does; then the windows are
    brought back to a fixed point, and all of it repeated until stable."""
    coef = [[grid.w[i] * grid.length(i, j) for j in range(t.n)] for i, t in enumerate(grid.tables)]
    wins = list(wins)
    while True:
        floor = _completion_floor(grid, wins)
        total = sum(c * f for row_c, row_f in zip(coef, floor) for c, f in zip(row_c, row_f))
        changed = False
        for i, win in enumerate(wins):
            kept: _Windows = {}
            for (a, b), (lo, hi) in win.items():
                weight = sum(coef[i][a:b + 1])
                slack = ub - total - sum(coef[i][j] * (lo + grid.dur(i, a, b) - floor[i][j]) for j in range(a, b + 1))
                top = hi if weight == 0 or slack < 0 else min(hi, lo + slack // weight)
                changed |= slack < 0 or top != hi
                if slack >= 0:
                    kept[(a, b)] = (lo, top)
            wins[i] = _fixed_point(grid, i, kept)
        if not changed:
            return wins


# -- the hint: a policy's schedule, replayed exactly on the grid --------------------------------


class _Batch(NamedTuple):
    """A batch on the grid: table position, updates first..last (0-based), start and end."""

    table: int
    first: int
    last: int
    start: int
    end: int


def _hint_schedule(workload: Workload, grid: _Grid) -> list[_Batch]:
    """``myopic``'s (else ``fifo``'s) drained schedule, replayed on the grid (module docstring)."""
    from staleness_lab.api import simulate
    from staleness_lab.policies import available_policies

    policy = "myopic" if "myopic" in available_policies() else "fifo"
    drain = float(2 * grid.horizon / grid.scale) + 1.0
    trace = simulate(workload, policy, horizon=max(drain, workload.horizon)).trace
    order = sorted(trace.jobs_done + trace.in_flight, key=lambda rec: (rec[3], rec[1]))
    n_tables = len(grid.tables)
    pending = [0] * n_tables
    table_free = [0] * n_tables
    track_free = [0] * workload.tracks
    out: list[_Batch] = []

    def place(i: int, track: int) -> None:
        a = pending[i]
        start = max(track_free[track], table_free[i], grid.r[i][a])
        b = a
        while b + 1 < grid.tables[i].n and grid.r[i][b + 1] <= start:
            b += 1
        end = start + grid.dur(i, a, b)
        out.append(_Batch(i, a, b, start, end))
        pending[i], table_free[i], track_free[track] = b + 1, end, end

    for rec in order:
        i = rec[0]
        # replayed only when its table's next update had arrived by the job's start (module docstring)
        if pending[i] < grid.tables[i].n and grid.r[i][pending[i]] <= math.ceil(Fraction(rec[3]) * grid.scale) + 1:
            place(i, rec[1])
    while True:  # updates the replay left over (float ties the grid broke differently)
        left = [i for i in range(n_tables) if pending[i] < grid.tables[i].n]
        if not left:
            return out
        i = min(left, key=lambda k: (grid.r[k][pending[k]], k))
        place(i, min(range(workload.tracks), key=lambda k: (track_free[k], k)))


# -- the model ---------------------------------------------------------------------------------


class _Model:
    """The model of one grid (module docstring, "Model" and "Pieces") over the windows ``wins``."""

    def __init__(self, grid: _Grid, tracks: int, wins: list[_Windows]) -> None:
        self.grid = grid
        m = self.model = cp_model.CpModel()
        self.x: list[dict[tuple[int, int], Any]] = []
        self.start: list[dict[int, Any]] = []  # per table: the start of the batch ending at b
        self.c: list[list[Any]] = []
        self.e: list[list[Any]] = []
        self.piece_start: list[list[Any]] = []
        batches: list[Any] = []
        pieces: list[Any] = []
        objective = []
        for i, (table, win) in enumerate(zip(grid.tables, wins)):
            n = table.n
            x = {key: m.new_bool_var(f"x{i}_{key[0]}_{key[1]}") for key in win}
            ending = {b: [key for key in win if key[1] == b] for b in range(n)}
            s = {b: m.new_int_var(min(win[k][0] for k in keys), max(win[k][1] for k in keys), f"s{i}_{b}")
                 for b, keys in ending.items() if keys}
            mine = [m.new_optional_fixed_size_interval_var(s[key[1]], grid.dur(i, *key), x[key],
                                                           f"batch{i}_{key[0]}_{key[1]}") for key in win]
            covers = [[key for key in win if key[0] <= j <= key[1]] for j in range(n)]
            c_top = [max(win[k][1] + grid.dur(i, *k) for k in covers[j]) for j in range(n)]
            c = [m.new_int_var(min(win[k][0] + grid.dur(i, *k) for k in covers[j]), c_top[j], f"C{i}_{j}")
                 for j in range(n)]
            e = [m.new_bool_var(f"e{i}_{j}") for j in range(n)]
            for j in range(n):
                m.add_exactly_one(x[key] for key in covers[j])
                m.add(e[j] == sum(x[key] for key in win if key[1] == j))
                if j + 1 < n:
                    m.add(c[j] <= c[j + 1])
                    m.add(c[j] == c[j + 1]).only_enforce_if(~e[j])
                    m.add(c[j] < c[j + 1]).only_enforce_if(e[j])
            for (a, b), lit in x.items():
                m.add(s[b] >= win[(a, b)][0]).only_enforce_if(lit)
                m.add(s[b] <= win[(a, b)][1]).only_enforce_if(lit)
                m.add(c[b] == s[b] + grid.dur(i, a, b)).only_enforce_if(lit)
                if a > 0:
                    m.add(c[a - 1] <= s[b]).only_enforce_if(lit)
            if len(mine) > 1:
                m.add_no_overlap(mine)
            batches += mine
            # pieces: update j's share q_j of its batch, tiled in update order (module docstring)
            q = [grid.piece(i, j) for j in range(n)]
            start = [m.new_int_var(grid.r[i][j], max(grid.r[i][j], c_top[j] - q[j]), f"p{i}_{j}") for j in range(n)]
            mine = [m.new_fixed_size_interval_var(start[j], q[j], f"piece{i}_{j}") for j in range(n)]
            for j in range(n):
                m.add(start[j] + q[j] <= c[j])
                m.add(start[j] + q[j] == c[j]).only_enforce_if(e[j])
                if j + 1 < n:
                    m.add(start[j] + q[j] == start[j + 1]).only_enforce_if(~e[j])
            m.add(sum(q[j] * c[j] for j in range(n)) >= sum(q[j] * (start[j] + q[j]) for j in range(n))
                  + sum(_penalty(q, a, b) * lit for (a, b), lit in x.items()))
            if n > 1:
                m.add_no_overlap(mine)
            pieces += mine
            objective += [grid.w[i] * grid.length(i, j) * c[j] for j in range(n)]
            self.x.append(x)
            self.start.append(s)
            self.c.append(c)
            self.e.append(e)
            self.piece_start.append(start)
        busy_tables = sum(1 for t in grid.tables if t.n)
        if tracks == 1 and busy_tables > 1:
            m.add_no_overlap(batches)
            m.add_no_overlap(pieces)
        elif tracks < busy_tables:
            m.add_cumulative(batches, [1] * len(batches), tracks)
            m.add_cumulative(pieces, [1] * len(pieces), tracks)
        m.minimize(sum(objective))

    def hint(self, batches: list[_Batch]) -> None:
        """Hint a schedule: every literal, and each batch's start, boundaries, completions and pieces."""
        chosen = {(b.table, b.first, b.last) for b in batches}
        for i, x in enumerate(self.x):
            for key, lit in x.items():
                self.model.add_hint(lit, (i, *key) in chosen)
        for batch in batches:
            self.model.add_hint(self.start[batch.table][batch.last], batch.start)
            end = batch.end
            for j in range(batch.last, batch.first - 1, -1):
                self.model.add_hint(self.c[batch.table][j], batch.end)
                self.model.add_hint(self.e[batch.table][j], j == batch.last)
                end -= self.grid.piece(batch.table, j)
                self.model.add_hint(self.piece_start[batch.table][j], end)

    def read(self, solver: cp_model.CpSolver) -> list[_Batch]:
        out = []
        for i, x in enumerate(self.x):
            for (a, b), lit in x.items():
                if solver.boolean_value(lit):
                    start = solver.value(self.start[i][b])
                    out.append(_Batch(i, a, b, start, start + self.grid.dur(i, a, b)))
        return out


def _penalty(q: list[int], first: int, last: int) -> int:
    """π = Σ_{first <= k < j <= last} q_k q_j: what one batch adds to Σ q C over its pieces' ends."""
    total = sum(q[first:last + 1])
    return (total * total - sum(v * v for v in q[first:last + 1])) // 2


def _objective(grid: _Grid, batches: list[_Batch]) -> int:
    """Σ W w · S L · S C of a grid schedule (the model's objective)."""
    return sum(grid.w[b.table] * grid.length(b.table, j) * b.end for b in batches for j in range(b.first, b.last + 1))


# -- the result --------------------------------------------------------------------------------


@dataclass(eq=False)
class StalenessOptimum:
    """The exact optimum of X_w (module docstring, "Result").

    ``batches``: one row per batch (table name, first and last 0-based update positions, start,
    end, track), by start; ``trace``: that schedule as a :class:`Trace` over the workload's
    horizon (:func:`~staleness_lab.sim.schedule_trace.trace_from_schedule`); ``objective`` the
    exact X_w of the schedule as a Fraction; ``time_unit`` the grid step 1/S; ``note`` why the
    result is not exact, if it is not.
    """

    workload: Workload
    status: str
    objective_X: float | None  # noqa: N815 - the paper's name
    bound: float | None
    gap: float | None
    batches: pd.DataFrame
    trace: Trace | None
    exact: bool
    wall_s: float
    relaxed: bool
    objective: Fraction | None
    time_unit: Fraction
    note: str

    @property
    def staleness(self) -> float | None:
        """Σ_i w_i ∫_0^horizon S_i of the schedule, as ``simulate`` counts it."""
        if self.trace is None:
            return None
        return total_weighted_staleness(self.trace)

    def to_json(self, version: str) -> dict[str, Any]:
        """The ``staleness-lab optimum --json`` object."""
        return {
            "status": self.status, "objective_X": self.objective_X, "bound": self.bound, "gap": self.gap,
            "staleness": self.staleness,
            "batches": [{"table": row.table, "first": int(row.first), "last": int(row.last), "start": float(row.start),
                         "end": float(row.end), "track": int(row.track)}
                        for row in self.batches.itertuples(index=False)],
            "exact": self.exact, "wall_s": self.wall_s,
            "workload_sha256": self.workload.digest(), "version": version,
        }


def assign_tracks(intervals: list[tuple[Fraction, Fraction]], tracks: int) -> list[int]:
    """Tracks for intervals ``(start, end)`` overlapping at most ``tracks`` at a time: by start,
    the lowest track free at the start."""
    free: list[Fraction | None] = [None] * tracks
    out = [0] * len(intervals)
    for k in sorted(range(len(intervals)), key=lambda k: intervals[k]):
        start, end = intervals[k]
        track = next(j for j in range(tracks) if free[j] is None or free[j] <= start)
        out[k] = track
        free[track] = end
    return out


def _schedule(workload: Workload, grid: _Grid, batches: list[_Batch]) -> tuple[pd.DataFrame, Trace, Fraction]:
    """The batch table, the trace and the exact X_w of a grid schedule."""
    batches = sorted(batches, key=lambda b: (b.start, b.table))
    times = [(Fraction(b.start) / grid.scale, Fraction(b.end) / grid.scale) for b in batches]
    tracks = assign_tracks(times, workload.tracks)
    completion = [[Fraction(0)] * t.n for t in grid.tables]
    jobs = []
    for batch, (start, end), track in zip(batches, times, tracks):
        table = grid.tables[batch.table]
        for j in range(batch.first, batch.last + 1):
            completion[batch.table][j] = end
        jobs.append((batch.table, track, table.arrival[batch.first], start, table.data_from(batch.first),
                     table.data_to[batch.last], end - start))
    frame = pd.DataFrame({
        "table": pd.Series([grid.tables[b.table].name for b in batches], dtype="string"),
        "first": [b.first for b in batches], "last": [b.last for b in batches],
        "start": [float(s) for s, _ in times], "end": [float(e) for _, e in times], "track": tracks,
    })
    x_w = sum((t.weight * t.x_part(completion[i]) for i, t in enumerate(grid.tables)), Fraction(0))
    return frame, trace_from_schedule(workload, jobs, POLICY), x_w


def _constant(grid: _Grid) -> Fraction:
    """Σ_i w_i (½ Σ L² − Σ L·d) on the grid, in original units (w as in the model)."""
    total = Fraction(0)
    for i, t in enumerate(grid.tables):
        part = sum((Fraction(grid.length(i, j) ** 2, 2) - grid.length(i, j) * grid.d[i][j] for j in range(t.n)),
                   Fraction(0))
        total += grid.w[i] * part
    return total / (grid.wscale * grid.scale**2)


def optimum(workload: Workload | Any, time_limit: float = 10, workers: int = 1,
            relaxed: bool = False, method: str = "blocks") -> StalenessOptimum:
    """The schedule minimising X_w (forced batching; ``relaxed=True``: the A9 lower bound), by
    CP-SAT within ``time_limit`` wall-clock seconds on ``workers`` workers (module docstring);
    ``method`` ``"blocks"`` cuts the instance in time (module docstring, "Blocks"),
    ``"monolithic"`` solves one model (the reference). ``workload`` is anything
    :func:`staleness_lab.api.as_workload` takes."""
    from staleness_lab.api import as_workload

    began = time.perf_counter()
    check_workers(workers, "workers")
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0:
        raise InputError("time_limit", f"must be a number > 0, got {time_limit!r}")
    if method not in METHODS:
        raise InputError("method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    w = as_workload(workload)
    grid = _grid(exact_tables(w))
    hint = _hint_schedule(w, grid)
    deadline = began + float(time_limit)
    proven, batches, lower = _solve_blocks(grid, w.tracks, relaxed, hint, method == "blocks", deadline, workers)
    frame, trace, x_w = _schedule(w, grid, batches)
    scale = grid.wscale * grid.scale**2
    on_grid = _constant(grid) + Fraction(_objective(grid, batches)) / scale
    bound = on_grid if proven else _constant(grid) + Fraction(lower) / scale
    return StalenessOptimum(workload=w, status="optimal" if proven else "feasible", objective_X=float(x_w),
                            bound=float(bound), gap=float((on_grid - bound) / max(1, abs(on_grid))), batches=frame,
                            trace=trace, exact=grid.exact and grid.weights_exact,
                            wall_s=round(time.perf_counter() - began, 4), relaxed=relaxed, objective=x_w,
                            time_unit=grid.scale**-1, note=_note(grid))


def _solve_blocks(grid: _Grid, tracks: int, relaxed: bool, hint: list[_Batch], cut: bool, deadline: float,
                  workers: int) -> tuple[bool, list[_Batch], int]:
    """Solve the blocks (module docstring, "Blocks"; when ``cut`` is False, one block by CP-SAT
    alone: the monolithic reference) in two passes, so that a hard block cannot take the time
    of the easy ones after it. First, left to right, each block's completion floor and beam
    search (at most :data:`FIRST_PASS` seconds each), which prove the small ones; then the
    unproven ones, smallest first, hinted with their beam search's schedule, each with an equal
    share of what is left (a share unused passes on); then, while time is left, again any whose
    share of it is more than :data:`RETRY` times what it had. One block gets the whole time at once.
    Whether every block is proven, the schedule, and a lower bound on its objective."""
    edges: list[int | None] = [None, *(block_cuts(grid.r, hint) if cut else []), None]
    ends = list(range(1, len(edges)))
    parts: list[_Part] = []
    while len(edges) > 2 and (not parts or parts[-1].last < len(edges) - 1):
        first = parts[-1].last if parts else 0
        until = min(deadline, time.perf_counter() + FIRST_PASS)
        parts.append(_settle(grid, tracks, relaxed, hint, edges, first, ends[first:], until, workers, cut, probe=True))
    if not parts:
        parts = [_Part(0, 1, False, hint, 0, False)]
    while True:
        left = deadline - time.perf_counter()
        waiting = [k for k, p in enumerate(parts) if not p.proven and not p.given]
        if waiting:
            share = left / len(waiting)
        else:  # every part tried: one whose share of what is left is much more than it had, again
            unproven = [k for k, p in enumerate(parts) if not p.proven]
            share = left / max(1, len(unproven))
            waiting = [k for k in unproven if share > RETRY * parts[k].given]
        if not waiting or left <= 0:
            break
        k = min(waiting, key=lambda k: sum(b.last - b.first + 1 for b in parts[k].batches))
        now = [b for p in parts for b in p.batches]
        lasts = [p.last for p in parts[k:]]
        again = _settle(grid, tracks, relaxed, now, edges, parts[k].first, lasts, time.perf_counter() + share,
                        workers, cut, dived=parts[k].dived, lower=parts[k].lower if parts[k].given else 0)
        stop = k + 1 + lasts.index(again.last)
        if not again.proven:  # the old schedules (its hint) bound the span too
            again = replace(again, lower=max(again.lower, sum(p.lower for p in parts[k:stop])))
        parts[k:stop] = [replace(again, given=share)]
    return all(p.proven for p in parts), [b for p in parts for b in p.batches], sum(p.lower for p in parts)


@dataclass(frozen=True)
class _Part:
    """A span of blocks solved together: the edges ``first``..``last`` it lies between, whether
    it is ``proven``, its ``batches`` (in the whole instance's tables and updates), a ``lower``
    bound on their objective, and whether they are a finished beam search's (``dived``)."""

    first: int
    last: int
    proven: bool
    batches: list[_Batch]
    lower: int
    dived: bool
    given: float = 0.0  # the seconds of its last full solve (0: none yet)


def _settle(grid: _Grid, tracks: int, relaxed: bool, hint: list[_Batch], edges: list[int | None], first: int,
            ends: list[int], until: float, workers: int, cut: bool, probe: bool = False,
            dived: bool = False, lower: int = 0) -> _Part:
    """The span from edge ``first`` to the first of ``ends`` (increasing edge indices), solved
    by ``until`` (:func:`_solve`, with ``probe``, ``dived`` and ``lower``) with the batches of ``hint`` (a
    whole schedule) that start in it as its hint; while its proven optimum runs past its last
    edge, merged with the span up to the next of ``ends`` and solved in full; an unproven
    schedule that runs past it is replaced by the hint's part (which ends by the cut), with the
    solver's bound."""
    arrival = sorted((grid.r[b.table][b.first], k) for k, b in enumerate(hint))
    for last in ends:
        spans = block_spans(grid.r, edges[first], edges[last])
        sub, keep = _sub_grid(grid, spans)
        lo = 0 if edges[first] is None else bisect_left(arrival, (edges[first], -1))
        hi = len(arrival) if edges[last] is None else bisect_left(arrival, (edges[last], -1))
        mine = [hint[k] for _, k in arrival[lo:hi]]  # the hint's batches whose first update is in the span
        local = [_Batch(keep.index(b.table), b.first - spans[b.table][0], b.last - spans[b.table][0], b.start, b.end)
                 for b in mine]
        solved = _solve(sub, tracks, relaxed, local, until - time.perf_counter(), workers, cut, probe, dived, lower)
        top = edges[last]
        if top is not None and any(b.end > top or b.start >= top for b in solved.batches):
            if solved.proven and last != ends[-1]:  # its optimum runs past the cut: solve it with the next span
                probe, dived, lower = False, False, 0
                continue
            solved = _Solved(False, local, solved.lower)  # the hint ends by the cut
        return _Part(first, last, solved.proven, [
            _Batch(keep[b.table], b.first + spans[keep[b.table]][0], b.last + spans[keep[b.table]][0], b.start, b.end)
            for b in solved.batches], solved.lower, solved.dived)
    raise AssertionError("the loop returns at its last span")


@dataclass(frozen=True)
class _Solved:
    """One block's answer: ``proven`` optimal, its ``batches``, a ``lower`` bound on their
    objective, and whether the batches are a finished beam search's (``dived``)."""

    proven: bool
    batches: list[_Batch]
    lower: int
    dived: bool = False


def _solve(grid: _Grid, tracks: int, relaxed: bool, hint: list[_Batch], seconds: float, workers: int,
           searching: bool, probe: bool = False, dived: bool = False, lower: int = 0) -> _Solved:
    """One block within ``seconds`` (module docstring, "Blocks"): the hint itself when the pruned
    windows' completion floor already meets it, or when time is out; then (``probe``: only)
    the beam search, unless the hint is already its answer (``dived``); then (``searching``)
    stages, each below the best schedule so far. Given a ``lower`` bound from an earlier solve,
    the labelling search deepens: it looks below ``lower`` plus 1/:data:`DEEPEN_STEPS` of the
    gap, then four times as far, and so on up to the hint (the search's time grows steeply with
    how far its upper bound lies above the optimum, and a search that gave up often leaves a
    bound much closer to the optimum than the hint is). On one track, the labelling search for
    :data:`SEARCH_SHARE` of the time, then CP-SAT, whose schedule and bound an unproven block
    keeps: compiled, the search proves what CP-SAT does not (it restarts, so one long run beats
    two halves). The same on two tracks (:data:`SEARCH_LEADS`). On more tracks, a probe by the
    search of at most :data:`PROBE_CAP` seconds, CP-SAT for :data:`FIRST_SHARE` of the time (at most
    :data:`FIRST_CAP` seconds), the search for :data:`SECOND_SHARE` of what is left, CP-SAT with
    the rest. CP-SAT alone when not ``searching``."""
    deadline = time.perf_counter() + seconds
    upper = _objective(grid, hint)
    if sum(t.n for t in grid.tables) > MAX_BLOCK:  # too large to model: the hint, each update's earliest end
        return _Solved(False, hint, sum(grid.w[i] * grid.length(i, j) * (grid.r[i][j] + grid.dur(i, j, j))
                                        for i, t in enumerate(grid.tables) for j in range(t.n)))
    wins = _prune(grid, [_windows(grid, i, relaxed) for i in range(len(grid.tables))], upper)
    floor = sum(grid.w[i] * grid.length(i, j) * c for i, row in enumerate(_completion_floor(grid, wins))
                for j, c in enumerate(row))
    if floor >= upper:
        return _Solved(True, hint, upper)
    if seconds <= 0:
        return _Solved(False, hint, floor)
    if not searching:
        return _cp_sat(grid, tracks, wins, hint, seconds, workers, floor)
    coef = [[grid.w[i] * grid.length(i, j) for j in range(t.n)] for i, t in enumerate(grid.tables)]
    pieces = [[grid.piece(i, j) for j in range(t.n)] for i, t in enumerate(grid.tables)]

    def by_dive(now: _Solved, until: float) -> _Solved:
        dived, exact = dive(grid.r, grid.dur, coef, pieces, tracks, not relaxed, _objective(grid, now.batches), DIVE_BEAM,
                            SEARCH_BUDGET, until)
        if dived:
            now = _Solved(False, [_Batch(*b) for b in dived], now.lower)
        if exact:
            return _Solved(True, now.batches, _objective(grid, now.batches))
        return replace(now, dived=dived is not None)

    def by_search(now: _Solved, until: float) -> _Solved:
        if not now.dived:
            now = by_dive(now, until)
            if now.proven:
                return now
        upper, low = _objective(grid, now.batches), now.lower
        step = max(1, (upper - low) // DEEPEN_STEPS) if lower else upper  # deepening (lower known) or not
        while True:
            below = min(upper, low + step)
            found = search(grid.r, grid.dur, coef, pieces, tracks, not relaxed, below, SEARCH_BUDGET, until)
            if found.batches is None:  # given up: its open labels still bound the block
                return replace(now, lower=max(low, found.lower))
            if found.batches or below == upper:  # the least schedule below `below`, and none is below `low`
                best = [_Batch(*b) for b in found.batches] or now.batches
                return _Solved(True, best, _objective(grid, best))
            low, step = below, 4 * step

    def by_cp_sat(now: _Solved, until: float) -> _Solved:
        solved = _cp_sat(grid, tracks, wins, now.batches, until - time.perf_counter(), workers, now.lower)
        return replace(solved, dived=now.dived and solved.batches is now.batches)  # kept: still the beam's answer

    now = _Solved(False, hint, max(floor, lower), dived)
    if probe:
        return now if dived else by_dive(now, deadline)
    if tracks <= SEARCH_LEADS:
        now = by_search(now, time.perf_counter() + SEARCH_SHARE * seconds)
        return now if now.proven else by_cp_sat(now, deadline)
    now = by_search(now, time.perf_counter() + min(PROBE_CAP, FIRST_SHARE * seconds))
    if now.proven:  # a small block is settled by the search at once, before CP-SAT's set-up
        return now
    now = by_cp_sat(now, time.perf_counter() + min(FIRST_CAP, FIRST_SHARE * (deadline - time.perf_counter())))
    if not now.proven:
        now = by_search(now, time.perf_counter() + SECOND_SHARE * (deadline - time.perf_counter()))
    return now if now.proven else by_cp_sat(now, deadline)


def _cp_sat(grid: _Grid, tracks: int, wins: list[_Windows], hint: list[_Batch], seconds: float, workers: int,
            lower: int) -> _Solved:
    """The model over ``wins`` by CP-SAT within ``seconds``, hinted: proven, or its best schedule
    (the hint if none better) with the larger of ``lower`` and the solver's bound."""
    built = _Model(grid, tracks, wins)
    built.hint(hint)
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.num_workers = workers
    params.random_seed = SEED
    params.max_time_in_seconds = max(0.01, seconds)
    params.linearization_level = 2
    for cuts in GENERIC_CUTS:
        setattr(params, cuts, False)
    status = solve(solver, built.model)
    if status not in _STATUS:
        raise RuntimeError(f"CP-SAT returned {solver.status_name(status)} on a model with a feasible hint: "
                           f"{built.model.validate()}")
    if status == cp_model.UNKNOWN:
        return _Solved(False, hint, lower)
    batches = built.read(solver)
    if status == cp_model.OPTIMAL:
        return _Solved(True, batches, _objective(grid, batches))
    lower = max(lower, math.ceil(solver.best_objective_bound - 1e-6))
    return _Solved(False, batches if _objective(grid, batches) <= _objective(grid, hint) else hint, lower)


def _note(grid: _Grid) -> str:
    """What was rounded ("" when the result is exact)."""
    rounded = []
    if not grid.exact:
        rounded.append(f"times to a grid of {float(grid.scale ** -1):g} (durations to the nearest step, at least one)")
    if not grid.weights_exact:
        rounded.append(f"weights to multiples of 1/{grid.wscale}")
    if not rounded:
        return ""
    return (f"rounded {' and '.join(rounded)} to keep the objective below 2^62: the schedule is optimal for the "
            "rounded instance; objective_X is its exact X_w, bound and gap refer to the rounded instance")
