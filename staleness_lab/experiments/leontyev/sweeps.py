"""Leontyev, Johnson and Anderson, "An Adaptive Scheme for Overload Handling in Active Data
Warehouses" (AUS): the paper's one quantitative evaluation, Fig. 9 (``leontyev-fig9``), and a
sweep of the bounds over random task sets (``leontyev-bounds``). References are to the digest
``shared/specs/leontyev-aus.md``; its "Corrections" override its body.

Experiments:

* ``leontyev-fig9`` (digest §5.1-5.4): 14 base tables, V1..V7 with period 300 and V8..V14 with
  period 900, S = alpha = 0.01 p, R = beta = 0.1, costs (S + R L) x U[0.8, 1.2], m = 2 tracks,
  horizon 30,000; the feeds of V1..V4 deliver nothing during the outage [5000, 10000) and the
  held-back files land at 10,000 (correction 1). One row per table: the gap G = TE - F on
  [0, 5000], after 10,000 and over the run, when G last exceeded one period, when the table was
  caught up after the outage, AUS's recovery switches, and the largest staleness over the
  staleness bound A(V_k). ``policy`` is ``aus`` (Rule-A recovery periods, Delta F = A(V_k), §5.1)
  or ``prp`` (the paper's baseline, §2.7: aggressive promotion); ``provisioning`` sizes AUS's
  budgets (``average``: e_k = S + R p, ``worst``: 1.2 (S + R p); PRP does not use them, but the
  row's A(V_k) does); ``phases`` is ``random`` (φ_k uniform in (0, p_k] from the seed, the
  digest's default, A14) or ``synchronous`` (φ_k = p_k).
* ``leontyev-bounds`` (digest §7, checks 5-7): a seeded random workload meeting the theorems'
  preconditions (worst-case budgets, so no job exceeds e_k; U_sum <= m; Rule-A recovery periods
  in [e_k, p_k]), run under ``aus`` or ``gedf-np`` and judged by the ``leontyev`` check suite
  (:func:`staleness_lab.check`): one row per record.

Profiles (:data:`~staleness_lab.sweeps.named.PROFILES`, :func:`grid`): ``quick`` (tests: Fig. 9
at seeds 0-2, 12 bounds workloads), ``standard`` (Fig. 9 at 10 seeds, 384 bounds workloads) and
``full`` (30 seeds, 3,072); the sweeps are :data:`SWEEPS`.
The verdicts are :mod:`staleness_lab.experiments.leontyev.verdicts`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.api import check, simulate
from staleness_lab.model import Table, Workload
from staleness_lab.model.workload import MAX_SEED, PROVISIONING
from staleness_lab.sim.trace import Trace
from staleness_lab.sweeps.named import NamedSweep
from staleness_lab.sweeps.registry import Param, check_choice, experiment
from staleness_lab.theory.leontyev.table import bounds_table
from staleness_lab.theory.leontyev.checks import Step, observe
from staleness_lab.theory.leontyev.tasks import SCHEDULERS
from staleness_lab.theory.leontyev.workloads import first_arrival
from staleness_lab.theory.records import within

# -- Fig. 9 (digest §5.1) --------------------------------------------------------------------------

#: Nominal periods of V1..V14: cluster C1 (300) and C2 (900).
FIG9_PERIODS = (300.0,) * 7 + (900.0,) * 7
#: The tables whose feeds break (V1..V4) and the outage [start, end) on them.
LATE_TABLES = 4
LATE = tuple(f"V{k}" for k in range(1, LATE_TABLES + 1))
OUTAGE = (5000.0, 10_000.0)
#: Fig. 9(b)'s on-time tables of period 900, and the two PRP starves after the outage (§5.3).
WATCHED = ("V8", "V9", "V10", "V11")
STARVED = ("V8", "V9")
FIG9_HORIZON = 30_000.0
FIG9_TRACKS = 2
#: S_k = ALPHA_SHARE * p_k, R_k = BETA; actual costs (S + R L) x U[0.8, 1.2].
ALPHA_SHARE = 0.01
BETA = 0.1
COST_NOISE = (0.8, 1.2)
FIG9_POLICIES = ("aus", "prp")
PHASES = ("random", "synchronous")
#: Random phases lie on a grid of 1/1024 time units, so every arrival phi + j p and every gap
#: between two of them is exact in binary floating point (the budgets come out exactly S + R p).
PHASE_GRID = 1024
#: The third key of the phase stream, apart from the engine's cost streams ([seed, crc32(name)]).
PHASE_TAG = 0x70686173  # "phas"


def fig9_phases(seed: int) -> list[float]:
    """φ_k of V1..V14, uniform in (0, p_k] from ``seed`` (digest §5.1 [D]), on the 1/1024 grid."""
    rng = np.random.default_rng([seed, PHASE_TAG])
    draws = 1.0 - rng.random(len(FIG9_PERIODS))  # (0, 1]
    return [math.ceil(u * p * PHASE_GRID) / PHASE_GRID for u, p in zip(draws, FIG9_PERIODS)]


def fig9_workload(seed: int = 0, provisioning: str = "average", phases: str = "random") -> Workload:
    """The Fig. 9 workload (digest §5.1, E6).

    ``random``: each table is a *replayed* feed with files at φ_k + (j - 1) p_k, timestamp =
    arrival, ``nominal_period`` p_k, F(0) = 0, so its first job loads φ_k <= p_k and every later
    one exactly p_k. A periodic feed with phase φ would make its first file span φ + p of data,
    so L_max = φ + p would inflate the default budgets; here L_max = p_k and the model's default
    budgets are the paper's S + R p (``average``) and 1.2 (S + R p) (``worst``): 33 / 99 and 39.6 /
    118.8 (E6), no ``budget`` key needed. ``synchronous``: periodic feeds with phase 0 (first
    file at p_k, again L_max = p_k). Outage [5000, 10000) on V1..V4; ``seed`` also seeds the
    costs."""
    check_choice(provisioning, PROVISIONING, "provisioning")
    check_choice(phases, PHASES, "phases")
    firsts = fig9_phases(seed) if phases == "random" else None
    tables = []
    for k, p in enumerate(FIG9_PERIODS):
        keys: dict[str, Any] = {"alpha": ALPHA_SHARE * p, "beta": BETA}
        if k < LATE_TABLES:
            keys["outages"] = [list(OUTAGE)]
        if firsts is None:
            keys.update(period=p, phase=0.0)
        else:
            count = math.floor((FIG9_HORIZON - firsts[k]) / p) + 1
            keys.update(arrivals=[[firsts[k] + j * p] * 2 for j in range(count)], nominal_period=p)
        tables.append(Table(f"V{k + 1}", **keys))
    return Workload(tables=tuple(tables), tracks=FIG9_TRACKS, horizon=FIG9_HORIZON, seed=seed,
                    cost_noise=COST_NOISE, provisioning=provisioning)


@dataclass(frozen=True)
class Gap:
    """G(V_k, t) = TE - F (digest §1.3, the Fig. 9 metric) as a right-continuous step function:
    ``values[i]`` holds on [times[i], times[i+1]) up to the horizon."""

    times: np.ndarray
    values: np.ndarray
    horizon: float

    @classmethod
    def of(cls, te: Step, f: Step, horizon: float) -> Gap:
        times = np.unique(np.r_[te.times, f.times])
        times = times[times <= horizon]
        return cls(times, np.asarray(te.at(times) - f.at(times), dtype=float), horizon)

    def max_on(self, start: float, end: float) -> float:
        """max G over [start, end]."""
        lo = int(np.searchsorted(self.times, start, side="right")) - 1
        hi = int(np.searchsorted(self.times, end, side="right"))
        return float(self.values[lo:hi].max())

    def last_over(self, limit: float) -> float:
        """The end of the last stretch with G > ``limit`` (when G falls back to <= limit for good;
        the horizon if it never does), NaN if G never exceeds it (relative tolerance 1e-9)."""
        over = np.flatnonzero([not within(g, limit) for g in self.values])
        if not len(over):
            return math.nan
        i = int(over[-1])
        return float(self.times[i + 1]) if i + 1 < len(self.times) else self.horizon

    def caught_up(self, limit: float, after: float) -> float:
        """The first instant >= ``after`` from which G <= ``limit`` holds to the horizon, NaN if
        G exceeds ``limit`` at the horizon (PRP's catch-up time, digest §5.2)."""
        last = self.last_over(limit)
        if last == self.horizon and not within(float(self.values[-1]), limit):
            return math.nan
        return after if math.isnan(last) else max(after, last)


def gap_frame(trace: Trace, tables: list[str] | None = None) -> pd.DataFrame:
    """Fig. 9's curves, tidy: (table, time, gap) with G(V_k, t) = TE - F as a step function per
    table (each value holds from its time to the next), for ``tables`` (default all) of a run
    under AUS or PRP."""
    run = observe(trace)
    names = run.names if tables is None else tables
    parts = []
    for name in names:
        k = run.names.index(name)
        gap = Gap.of(run.TE[k], run.F[k], run.horizon)
        parts.append(pd.DataFrame({"table": name, "time": np.r_[gap.times, run.horizon],
                                   "gap": np.r_[gap.values, gap.values[-1]]}))
    return pd.concat(parts, ignore_index=True)


def mode_summary(modes: pd.DataFrame, names: list[str]) -> tuple[dict[str, tuple[float, float, int]], int]:
    """From AUS's mode log (``trace.frames["modes"]``): per table (first N->R time, last R->N
    time, number of N->R switches), NaN where there is none, and the most tables in recovery at
    once (the log lists an instant's R->N switches before its admissions, Sec. 2.2)."""
    per: dict[str, tuple[float, float, int]] = {}
    for name in names:
        own = modes[modes["table"] == name]
        enter = own.loc[own["mode_to"] == "R", "time"]
        leave = own.loc[own["mode_to"] == "N", "time"]
        per[name] = (float(enter.min()) if len(enter) else math.nan, float(leave.max()) if len(leave) else math.nan,
                     len(enter))
    steps = np.where(modes["mode_to"].to_numpy() == "R", 1, -1)
    return per, int(np.cumsum(steps).max()) if len(steps) else 0


#: The observation columns of ``leontyev-fig9``, in order.
FIG9_COLUMNS = [
    "table", "period", "late", "phase", "budget", "A", "max_gap_before", "max_gap_after", "max_gap",
    "last_over_period", "caught_up", "recovery_start", "recovery_end", "recoveries", "max_in_recovery",
    "max_staleness", "staleness_ratio",
]


def fig9_rows(workload: Workload, trace: Trace) -> pd.DataFrame:
    """The Fig. 9 observations of one run, a row per table (columns :data:`FIG9_COLUMNS`):

    * ``phase`` φ_k (first arrival), ``budget`` e_k and ``A`` = A(V_k) of the task set AUS binds
      to (:func:`~staleness_lab.theory.leontyev.bounds.bounds_table`; PRP's rows carry the same
      A for comparison);
    * ``max_gap_before`` max G on [0, 5000], ``max_gap_after`` on [10,000, horizon], ``max_gap``
      over the run (G = TE - F: TE from the ``trailing_edge`` frame under AUS, from the files
      under PRP, whose Golab-model trace has none);
    * ``last_over_period`` when G last fell back to <= p_k (NaN: never above), ``caught_up`` the
      first instant >= 10,000 from which G <= p_k stays (NaN: above at the horizon);
    * AUS only (NaN under PRP, which has no modes): ``recovery_start`` (first N->R),
      ``recovery_end`` (last R->N), ``recoveries`` (N->R switches) and, for the whole run,
      ``max_in_recovery`` (most tables in recovery at once);
    * ``max_staleness`` sup_t S(V_k, t) over [0, horizon] and ``staleness_ratio`` = it / A(V_k).
    """
    names = [t.name for t in workload.tables]
    bounds = bounds_table(workload, "aus")
    run = observe(trace)  # TE recorded (AUS) or rebuilt from the files (PRP)
    fresh, edges = run.F, run.TE
    modes = trace.frames.get("modes")
    per, most = mode_summary(modes, names) if modes is not None else ({}, None)
    rows = []
    for k, name in enumerate(names):
        p = float(workload.periods[k])  # type: ignore[arg-type]
        gap = Gap.of(edges[k], fresh[k], workload.horizon)
        start, end, count = per.get(name, (math.nan, math.nan, math.nan))
        stale = fresh[k].sup_gap(0.0, workload.horizon)[0]
        a = float(bounds.loc[k, "A"])
        rows.append({
            "table": name, "period": p, "late": k < LATE_TABLES, "phase": float(first_arrival(workload, k)),
            "budget": float(bounds.loc[k, "e"]), "A": a,
            "max_gap_before": gap.max_on(0.0, OUTAGE[0]), "max_gap_after": gap.max_on(OUTAGE[1], workload.horizon),
            "max_gap": gap.max_on(0.0, workload.horizon), "last_over_period": gap.last_over(p),
            "caught_up": gap.caught_up(p, OUTAGE[1]), "recovery_start": start, "recovery_end": end,
            "recoveries": count, "max_in_recovery": math.nan if most is None else most,
            "max_staleness": stale, "staleness_ratio": stale / a,
        })
    return pd.DataFrame(rows, columns=FIG9_COLUMNS)


_SEED = Param("seed", int, 0, "seed of the phases (random), the costs and the random workload", ge=0, le=MAX_SEED)


@experiment(
    "leontyev-fig9",
    Param("policy", str, "aus", "aus (the paper's scheduler) or prp (its baseline)", choices=FIG9_POLICIES),
    Param("provisioning", str, "average", "AUS's budgets: average (S + R p) or worst (1.2 (S + R p))",
          choices=PROVISIONING),
    _SEED,
    Param("phases", str, "random", "random (phi uniform in (0, p], replayed feeds) or synchronous (phase 0)",
          choices=PHASES),
)
def fig9(policy: str, provisioning: str, seed: int, phases: str) -> pd.DataFrame:
    """Fig. 9 (digest §5.2-5.4): one run of AUS or PRP on the 14-table workload with the outage
    on V1..V4, a row per table (:func:`fig9_rows`).

    Digest correction 3 says what the paper supports: on [0, 5000] G <= p for V1..V4; PRP
    recovers all late tables together during [10,000, 12,500]; AUS recovers one table at a time
    and finishes a little later (about 15,000, average-case); AUS keeps V8..V11 within one period
    of gap all run; under PRP V8 and V9 fall behind after 10,000 (V8 restored about 15,000). The
    worst-case variant ("25,000 vs 15,000") is reported, not asserted."""
    w = fig9_workload(seed, provisioning, phases)
    return fig9_rows(w, simulate(w, policy).trace)


# -- the bounds over random task sets (digest §7, checks 5-7) ----------------------------------------

#: Nominal periods of the random workloads, their horizon, and the most tracks and tables.
BOUNDS_PERIODS = (2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
BOUNDS_HORIZON = 200.0
MAX_BOUNDS_TRACKS = 4
MIN_TABLES, MAX_TABLES = 2, 12
#: The largest u_k of a random table (Def. 9 needs u_k <= 1).
MAX_TASK_UTILIZATION = 0.9
#: The third key of the random workloads' stream.
BOUNDS_TAG = 0x626F756E  # "boun"
#: The columns of a ``leontyev-bounds`` row (one per check record).
BOUNDS_COLUMNS = ["claim", "theorem", "table", "bound", "observed", "ratio", "holds", "preconditions_met", "unmet"]


def _below(value: float) -> float:
    """``value`` rounded down to 6 decimals, strictly below it (so budgets built from it stay under
    the target utilization whatever the float rounding)."""
    return math.floor((value - 1e-9) * 1e6) / 1e6


def bounds_workload(seed: int, tracks: int, tables: int, utilization: float, derived: bool, outages: bool,
                    noise: float) -> Workload:
    """A random workload meeting the preconditions of Theorems 1-4 (digest §7, checks 5-7).

    ``tables`` tables on ``tracks`` processors, of which ``max(1, tables // 3)`` are derived (each
    over one or two earlier tables) when ``derived``; the rest periodic base tables with a period
    from :data:`BOUNDS_PERIODS`, a phase in [0, p), an arrival jitter J (p/4 or p/2) on two in
    five and a timestamp jitter kappa (p/4) on one in five. The u_k share ``utilization * tracks``
    in random proportions, each at most 0.9, so U_sum <= m; actual costs are (alpha + beta L) x
    U[1 - noise, 1 + noise] and the budgets are the default worst-case ones, (1 + noise)(alpha +
    beta L_max) <= u_k p_k, so no job exceeds e_k; recovery periods by Rule A (in [e_k, p_k]
    since U_sum <= m). With ``outages`` about half the base feeds break once, for 1.5 to 6
    periods plus the jitter (an outage in Def. 2's sense). About half the tables get a recovery
    threshold of 0.5 to 3 periods (below A(V_k), so AUS does recover). The draws come from a
    stream keyed by (seed, tracks, tables) and are all made whatever the flags, so
    ``utilization`` and ``noise`` only scale the costs and ``derived`` and ``outages`` change
    only what they name (and both policies see the same workload)."""
    rng = np.random.default_rng([seed, BOUNDS_TAG, tracks, tables])
    n_derived = max(1, tables // 3) if derived else 0
    n_base = tables - n_derived
    weights = rng.uniform(0.2, 1.0, tables)
    shares = np.minimum(MAX_TASK_UTILIZATION, utilization * tracks * weights / weights.sum())
    scale = 1.0 + noise  # worst-case provisioning: e_k = hi (alpha + beta L_max)
    periods: list[float] = []
    rows: list[Table] = []
    for k in range(tables):
        p = float(rng.choice(BOUNDS_PERIODS))
        phase = round(float(rng.uniform(0.0, p)), 3)
        jitter = p * float(rng.choice([0.0, 0.0, 0.0, 0.25, 0.5]))
        kappa = p * float(rng.choice([0.0, 0.0, 0.0, 0.0, 0.25]))
        beta = float(rng.choice([0.0, 0.02, 0.05]))
        start = round(float(rng.uniform(0.1, 0.6)) * BOUNDS_HORIZON, 3)
        length = round(float(rng.uniform(1.5, 6.0)) * p + jitter, 3)
        breaks = rng.random() < 0.5
        threshold = round(float(rng.uniform(0.5, 3.0)) * p, 3) if rng.random() < 0.5 else None
        picks = rng.permutation(max(k, 1))[: 1 + int(rng.random() < 0.5)]
        if k >= n_base:
            p = max(periods[i] for i in picks)
            span = p
            keys: dict[str, Any] = {"sources": [rows[i].name for i in sorted(picks)]}
        else:
            span = max(phase + p, p + jitter + kappa)  # L_max of a periodic feed from F(0) = 0
            keys = {"period": p, "phase": phase, "arrival_jitter": jitter, "timestamp_jitter": kappa}
            if outages and breaks:
                keys["outages"] = [[start, start + length]]
        target = float(shares[k]) * p / scale
        alpha = _below(target - beta * span)
        if alpha < 0.01:
            alpha, beta = _below(target), 0.0
        periods.append(p)
        rows.append(Table(f"{'D' if k >= n_base else 'B'}{k}", alpha=alpha, beta=beta, recovery_threshold=threshold,
                          **keys))
    return Workload(tables=tuple(rows), tracks=tracks, horizon=BOUNDS_HORIZON, seed=seed,
                    cost_noise=(1.0 - noise, 1.0 + noise) if noise else None)


@experiment(
    "leontyev-bounds",
    _SEED,
    Param("tracks", int, 2, "processors m", ge=1, le=MAX_BOUNDS_TRACKS),
    Param("tables", int, 6, "tables (base and derived)", ge=MIN_TABLES, le=MAX_TABLES),
    Param("utilization", float, 0.8, "target U_sum / m (each u_k at most 0.9)", ge=0.05, le=1.0),
    Param("policy", str, "aus", "aus or gedf-np", choices=SCHEDULERS),
    Param("derived", bool, False, "a third of the tables derived (at least one)"),
    Param("outages", bool, False, "about half the base feeds break once"),
    Param("noise", float, 0.2, "actual costs vary on [1 - noise, 1 + noise] x (alpha + beta L)", ge=0.0, le=1.0),
)
def bounds(seed: int, tracks: int, tables: int, utilization: float, policy: str, derived: bool, outages: bool,
           noise: float) -> pd.DataFrame:
    """Theorems 1-4 and eq. 6 on a random workload meeting their preconditions
    (:func:`bounds_workload`; digest §7, checks 4-7): one row per record of the ``leontyev``
    suite (columns :data:`BOUNDS_COLUMNS`; ``unmet`` joins the unmet preconditions' names).
    Where every precondition is met the record must hold; a broken feed leaves its staleness
    record undecided (Def. 2), which is no violation."""
    w = bounds_workload(seed, tracks, tables, utilization, derived, outages, noise)
    return check(w, policy).frame[BOUNDS_COLUMNS]


# -- grids and profiles ----------------------------------------------------------------------------

#: Fig. 9's seeds per profile (the verdicts ask for a majority of them).
FIG9_SEEDS = {"quick": 3, "standard": 10, "full": 30}
#: Fig. 9's runs per seed and phase setting: AUS under both provisionings, PRP once (it does not
#: use budgets, so its worst-case run would repeat the average-case one).
FIG9_RUNS = (("aus", "average"), ("aus", "worst"), ("prp", "average"))
#: The bounds sweep's axes, per seed 192 workloads (12 draws of (tracks, tables), each with every
#: utilization, policy and flag); costs vary by Fig. 9's 20 %.
BOUNDS_AXES: dict[str, tuple[Any, ...]] = {
    "tracks": (1, 2, 3, 4), "tables": (2, 5, 12), "utilization": (0.5, 1.0), "policy": SCHEDULERS,
    "derived": (False, True), "outages": (False, True),
}
#: Seeds of the bounds sweep per profile: 384 workloads standard, 3,072 full (quick: 12 rows).
BOUNDS_SEEDS = {"quick": 1, "standard": 2, "full": 16}


def _fig9_rows(profile: str) -> list[dict[str, Any]]:
    return [{"policy": policy, "provisioning": provisioning, "seed": seed, "phases": phases}
            for phases in PHASES for seed in range(FIG9_SEEDS[profile]) for policy, provisioning in FIG9_RUNS]


def _bounds_rows(profile: str) -> list[dict[str, Any]]:
    if profile == "quick":
        return [{"seed": 0, "tracks": m, "tables": 5, "utilization": 1.0, "policy": policy, "derived": flag,
                 "outages": flag, "noise": 0.2} for m in (1, 2, 4) for policy in SCHEDULERS for flag in (False, True)]
    keys = list(BOUNDS_AXES)
    return [{"seed": seed, **dict(zip(keys, combo)), "noise": 0.2}
            for seed in range(BOUNDS_SEEDS[profile]) for combo in itertools.product(*BOUNDS_AXES.values())]


#: The sweeps by name: Fig. 9 (digest §5.1-5.4) and the bounds over random workloads (§7).
SWEEPS: dict[str, NamedSweep] = {
    s.name: s for s in [
        NamedSweep("fig9", "leontyev-fig9", "Fig. 9: AUS and PRP through an outage of V1..V4's feeds",
                   "Both keep V1..V4 within a period before the outage; PRP catches them up first, while AUS recovers "
                   "one table at a time and keeps V8..V11 within a period, which PRP does not.", _fig9_rows),
        NamedSweep("bounds", "leontyev-bounds", "The bounds over random task sets",
                   "No record whose preconditions are all met exceeds its bound (tardiness, response time, "
                   "staleness A(V_k), recovery x_k).", _bounds_rows),
    ]
}


def grid(name: str, profile: str) -> list[dict[str, Any]]:
    """The explicit parameter rows of a sweep (``fig9`` or ``bounds``) at a profile, for
    :func:`~staleness_lab.sweeps.runner.run_grid`. ``fig9``: both phase settings, the
    profile's seeds (3, 10, 30) and the runs of :data:`FIG9_RUNS`; ``bounds``: every combination
    of :data:`BOUNDS_AXES` per seed of :data:`BOUNDS_SEEDS` (384 workloads standard, 3,072 full),
    12 at ``quick`` (tracks 1, 2 and 4, both policies, with and without derived tables and
    outages)."""
    check_choice(name, SWEEPS, "sweep")
    return SWEEPS[name].grid(profile)  # type: ignore[return-value]


# -- summaries for the report ----------------------------------------------------------------------

#: Per Fig. 9 run (:func:`fig9_summary`), its columns.
SUMMARY_COLUMNS = [
    "phases", "seed", "policy", "provisioning", "late_max_gap_before", "late_max_gap_after", "late_caught_up",
    "last_recovery_end", "admission_order", "max_in_recovery", "c2_max_gap", "v8_v9_last_over",
]


def fig9_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per Fig. 9 run (phases, seed, policy, provisioning) with what the figure's panels
    show (digest §5.2-5.4): over the late tables V1..V4 the largest gap on [0, 5000] and after
    10,000 and the latest catch-up (G <= p for good); AUS's last R->N switch among them and the
    order of their first admissions (e.g. ``V1 V2 V3 V4``; empty under PRP), the most tables in
    recovery at once (NaN under PRP); the largest gap of V8..V11 over the run (``c2_max_gap``)
    and the last instant with G > 900 on V8 or V9 (NaN: never)."""
    rows = []
    for (phases, seed, policy, provisioning), part in frame.groupby(["phases", "seed", "policy", "provisioning"],
                                                                    sort=False):
        late = part[part["late"].astype(bool)]
        admitted = late.dropna(subset=["recovery_start"]).sort_values("recovery_start")
        watched = part[part["table"].isin(WATCHED)]
        starved = part.loc[part["table"].isin(STARVED), "last_over_period"]
        rows.append({
            "phases": phases, "seed": seed, "policy": policy, "provisioning": provisioning,
            "late_max_gap_before": late["max_gap_before"].max(), "late_max_gap_after": late["max_gap_after"].max(),
            "late_caught_up": late["caught_up"].max(skipna=False), "last_recovery_end": late["recovery_end"].max(),
            "admission_order": " ".join(admitted["table"]), "max_in_recovery": part["max_in_recovery"].iloc[0],
            "c2_max_gap": watched["max_gap"].max(), "v8_v9_last_over": starved.max(),
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def bounds_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, claim) of the bounds sweep: records, how many were decided (every
    precondition met), held and failed, the largest observed/bound among the decided, and the
    undecided ones by their unmet preconditions (``unmet_counts``, e.g. ``windows: 12``)."""
    rows = []
    for (policy, claim), part in frame.groupby(["policy", "claim"], sort=False):
        met = part[part["preconditions_met"].astype(bool)]
        undecided = part.loc[~part["preconditions_met"].astype(bool), "unmet"].value_counts()
        rows.append({
            "policy": policy, "claim": claim, "records": len(part), "decided": len(met),
            "held": int((met["holds"] == True).sum()), "failed": int((met["holds"] == False).sum()),  # noqa: E712
            "max_ratio": float(met["ratio"].max()) if len(met) else math.nan,
            "unmet_counts": "; ".join(f"{why}: {n}" for why, n in undecided.items()),
        })
    return pd.DataFrame(rows, columns=["policy", "claim", "records", "decided", "held", "failed", "max_ratio",
                                       "unmet_counts"])
