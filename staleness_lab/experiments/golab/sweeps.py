"""Golab, Johnson and Shkapenyuk, "Scalable Scheduling of Updates in Streaming Data Warehouses"
(IEEE TKDE 24(6), 2012): one named experiment per figure of Sec. 5 (``golab-fig4`` ...
``golab-fig11``).

Every experiment returns one row per (curve, utilization, seed): the relative lateness of one
scheduler on one seeded workload, i.e. its priority-weighted staleness over ``[0, horizon]``
divided by that of the same workload with unlimited tracks (``simulate(..., relative=True)``,
computed in closed form by :func:`~staleness_lab.sim.ideal.ideal_summary`).
Each row also carries the point's ``merging_limit``
(:func:`~staleness_lab.experiments.golab.generators.merging_limit`): above it the tracks fall behind
for good, staleness grows without bound and relative lateness grows with the horizon, so the
profiles agree there on the ordering of the curves, not on their level.

Common setup (the spec digest's Sec. 5.0, with its design choices):

* Table 2 defaults: 30 base tables (or 30 chains), period 100, ``alpha = 1``, ``beta = 0.1``,
  cost variability ``b = 0.5`` (actual cost uniform on ``[0.5 E, 1.5 E]``), 4 tracks, priority
  1, phases uniform in ``[0, P)`` drawn from the seed.
* The x-axis is the offered load per track, ``U_tot = m * sum_i E_i(P_i) / P_i / N``, with ``m``
  the slowdown's long-run work-rate multiplier
  (:func:`~staleness_lab.experiments.golab.generators.work_rate_multiplier`); a point reaches its
  target by multiplying every alpha and beta by one factor
  (:func:`~staleness_lab.experiments.golab.generators.scale_to_utilization`). Partitioners see the
  point's nominal ``E_i(P_i)`` (no slowdown, no randomness).
* Type-2 slowdown ("alternating normal and slow periods", every figure but Fig. 6): a job
  starting in a slow period costs ``S`` times more. The paper tunes the period lengths "so that
  the mean execution time is double the normal one"; we read that as the tracks getting
  through half their nominal work per unit time, for every ``S``: normal periods last 1000 time
  units and slow ones ``1000 * S / (S - 2)``, so ``m = 2`` and ``U_tot = 1`` is saturation for
  every ``S``. (The spec digest's reading, a slow share of time of ``1 / (S - 1)``, makes the
  *time average* of the multiplier 2 but leaves the tracks ``(S - 1) / S`` of their speed:
  2/3 at ``S = 3``, 4/5 at ``S = 5``. Its x-axis then overstates the load by 1.33x at ``S = 3``,
  so a sweep to 1.2 never saturates, and at equal x a small ``S`` is the heavier load, which
  reverses Fig. 4's ordering for a reason that has nothing to do with burstiness.) ``S = 2`` is
  slow all the time; ``S = 3`` unless the figure varies it.
* Which reading of the paper each figure takes is in its experiment's docstring.

A point a partitioner cannot run (EDF-Partitioned's packing needs more tracks than there are)
is a row with ``status = "infeasible"``, the scheduler's reason and NaN lateness, so a chart
shows a gap there, never a zero.

Profiles (:data:`~staleness_lab.sweeps.named.PROFILES`, :func:`grid`): ``full`` runs at the
paper's scale (each scheduled run sees at least :func:`events_per_point` ``("full")`` = 10^6
events, the unlimited-track run comes on top); ``standard`` keeps every point and every curve
at a shorter horizon (what ``make run`` renders); ``quick`` is a few points over a short
horizon, for tests. The horizon of a figure is long enough for its profile's event target in
data arrivals alone (see :data:`SIZING`), so the target is met at every point, however
overloaded. The figures are :data:`SWEEPS`; ``figure(name).run(profile, ...)`` runs one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.api import simulate
from staleness_lab.errors import Infeasible, InputError
from staleness_lab.experiments.golab.generators import (
    chains,
    identical_tables,
    merging_limit,
    offered_utilization,
    scale_to_utilization,
    two_classes,
)
from staleness_lab.model import Slowdown, Workload
from staleness_lab.model.workload import MAX_SEED, MAX_TRACKS
from staleness_lab.sim import ideal_summary, relative_lateness
from staleness_lab.sim.trace import table_time_order
from staleness_lab.sweeps.named import NamedSweep, check_profile
from staleness_lab.sweeps.registry import Param, experiment

#: Table 2 of the paper.
N_TABLES = 30
PERIOD = 100.0
#: The long class of Figs. 9-10 (its short class has PERIOD).
LONG_PERIOD = 10_000.0
ALPHA = 1.0
BETA = 0.1
VARIABILITY = 0.5
TRACKS = 4
#: The slowdown factor of every type-2 figure after Fig. 4.
S_DEFAULT = 3.0
#: Length of a normal period in the type-2 slowdown (the paper gives none).
NORMAL_PERIOD = 1000.0

#: Events each scheduled run should see, per profile (the unlimited-track run comes on top).
EVENTS_PER_POINT = {"quick": 4_000, "standard": 60_000, "full": 1_000_000}

#: Seeds per profile (the spec asks for at least 3 per point).
SEEDS = {"quick": [0, 1, 2], "standard": [0, 1, 2], "full": [0, 1, 2]}

#: The utilization axis: 0.5 to 1.2 in steps of 0.05 (Fig. 6 goes on to 1.3, "above 100 %").
U_SWEEP = [round(0.5 + 0.05 * k, 2) for k in range(15)]
U_SWEEP_FIG6 = [round(0.5 + 0.05 * k, 2) for k in range(17)]
#: The quick profile's few points: enough for every acceptance check to be computable.
U_QUICK = [0.6, 0.8, 0.9, 1.05, 1.2]


#: Per figure: the data arrivals per unit of time of its workload (30 feeds of period 100, or
#: for Figs. 9-10 15 of period 100 and 15 of period 10 000), and the shortest horizon worth
#: running (several slow periods; for Figs. 9-10 several periods of the long class). Every
#: arrival is an event, so a horizon of (target + feeds) / arrival rate meets the event target
#: at every point, whatever the load: overloaded points merge their data into ever fewer,
#: larger jobs, so completions can be few, and at the top of the sweeps a run sees only 1-7 %
#: more events than it has arrivals.
SIZING: dict[str, tuple[float, float]] = {
    "fig4": (N_TABLES / PERIOD, 10_000.0),
    "fig5": (N_TABLES / PERIOD, 10_000.0),
    "fig6": (N_TABLES / PERIOD, 5_000.0),
    "fig7": (N_TABLES / PERIOD, 10_000.0),
    "fig8": (N_TABLES / PERIOD, 10_000.0),
    "fig9": (N_TABLES / 2 / PERIOD + N_TABLES / 2 / LONG_PERIOD, 40_000.0),
    "fig10": (N_TABLES / 2 / PERIOD + N_TABLES / 2 / LONG_PERIOD, 40_000.0),
    "fig11": (N_TABLES / PERIOD, 10_000.0),
}


def _figure_key(name: str | int) -> str:
    key = str(name).removeprefix("golab-")
    if not key.startswith("fig"):
        key = f"fig{key}"
    if key not in SIZING:
        raise InputError("figure", f"unknown figure {name!r} (known: {', '.join(SIZING)})")
    return key


def events_per_point(profile: str) -> int:
    """The number of events (data arrivals plus job completions) each scheduled run of the
    profile is sized for; the unlimited-track reference run comes on top."""
    check_profile(profile)
    return EVENTS_PER_POINT[profile]


def horizon(name: str, profile: str) -> float:
    """The figure's horizon at the profile: enough time for the profile's event target in data
    arrivals alone (a feed whose phase falls late may arrive once less than ``horizon / P``,
    hence the ``N_TABLES`` on top), rounded up to a multiple of 1000, and at least the figure's
    minimum horizon."""
    key = _figure_key(name)
    rate, shortest = SIZING[key]
    h = (events_per_point(profile) + N_TABLES) / rate
    return float(max(shortest, 1000.0 * math.ceil(h / 1000.0)))


def type2_slowdown(S: float) -> Slowdown | None:
    """Alternating normal (1000) and slow (``1000 * S / (S - 2)``) periods: the tracks do half
    their nominal work per unit time over a cycle (work-rate multiplier 2) for every ``S``, so
    ``S`` changes only how bursty the slowdown is. ``S = 2`` is slow all the time; ``S = 1``
    means no slowdown."""
    if S == 1.0:
        return None
    if S < 2.0:
        raise InputError("S", f"the type-2 slowdown needs S >= 2 (work-rate multiplier 2) or S = 1 (none), got {S}")
    if S == 2.0:
        return Slowdown(factor=2.0, normal=0.0, slow=NORMAL_PERIOD)
    return Slowdown(factor=S, normal=NORMAL_PERIOD, slow=NORMAL_PERIOD * S / (S - 2.0))


# -- one point -------------------------------------------------------------------------------

#: The observation columns every experiment returns, in order.
OBSERVATIONS = [
    "offered_utilization", "merging_limit", "relative_lateness", "status", "reason", "events", "ideal_events", "jobs",
    "weighted_staleness", "ideal_weighted_staleness", "staleness_first_half", "staleness_second_half",
]


def half_staleness(trace: Any) -> tuple[float, float]:
    """Priority-weighted staleness of a run over the first and the second half of
    ``[warmup, horizon]``, exact (F_i is a step function, S_i = t - F_i)."""
    w = trace.workload
    a0, b1 = w.warmup, w.horizon
    mid = (a0 + b1) / 2.0
    n = len(w.tables)
    cols = trace.columns
    pos = np.concatenate([np.arange(n), cols["table"]])
    start = np.concatenate([np.zeros(n), cols["finish"]])
    fresh = np.concatenate([[t.initial_freshness for t in w.tables], cols["data_to"]])
    order = table_time_order(pos, start)
    pos, start, fresh = pos[order], start[order], fresh[order]
    end = np.append(start[1:], b1)
    end[np.append(pos[1:] != pos[:-1], True)] = b1  # each table's last step lasts to the horizon
    prio = np.array([t.priority for t in w.tables], dtype=float)

    def area(a: float, b: float) -> float:
        overlap = np.clip(np.minimum(end, b) - np.maximum(start, a), 0.0, None)
        f_int = np.bincount(pos, weights=fresh * overlap, minlength=n)
        return float(np.sum(prio * ((b * b - a * a) / 2.0 - f_int)))

    return area(a0, mid), area(mid, b1)


def run_point(workload: Workload, utilization: float, policy: str, options: dict[str, Any] | None = None) -> pd.DataFrame:
    """One row: ``workload`` scaled to ``utilization``, run under ``policy`` and under no
    contention. An :class:`~staleness_lab.errors.Infeasible` scheduler gives a row with status
    ``infeasible``, its reason and NaN lateness.

    The no-contention side is :func:`~staleness_lab.sim.ideal.ideal_summary`, the unlimited-track
    run in closed form: the row is the one ``simulate(..., relative=True)`` gives, bit for bit."""
    w = scale_to_utilization(workload, utilization)
    offered = offered_utilization(w)
    limit = merging_limit(w)
    try:
        result = simulate(w, policy, options=options)
    except Infeasible as err:
        return pd.DataFrame(
            {
                "offered_utilization": [offered], "merging_limit": [limit], "relative_lateness": [math.nan],
                "status": ["infeasible"],
                "reason": [err.reason], "events": [0], "ideal_events": [0], "jobs": [0],
                "weighted_staleness": [math.nan], "ideal_weighted_staleness": [math.nan],
                "staleness_first_half": [math.nan], "staleness_second_half": [math.nan],
            }
        )
    ideal = ideal_summary(w)
    total = relative_lateness(result.trace, ideal).iloc[-1]
    first, second = half_staleness(result.trace)
    return pd.DataFrame(
        {
            "offered_utilization": [offered],
            "merging_limit": [limit],
            "relative_lateness": [float(total["relative_lateness"])],
            "status": ["ok"],
            "reason": [""],
            "events": [int(result.trace.events)],
            "ideal_events": [int(ideal.events)],
            "jobs": [int(result.trace.n_jobs)],
            "weighted_staleness": [float(total["weighted_staleness_area"])],
            "ideal_weighted_staleness": [float(total["ideal_weighted_staleness_area"])],
            "staleness_first_half": [first],
            "staleness_second_half": [second],
        }
    )


# -- the figures ----------------------------------------------------------------------------

_U = Param("utilization", float, 0.9, "offered utilization per track, m * sum_i E_i(P_i)/P_i / N", gt=0)
_SEED = Param("seed", int, 0, "seed of the phases and of the random costs", ge=0, le=MAX_SEED)
#: The longest horizon a row may ask for, as a multiple of the figure's ``full`` horizon (10^6
#: events per scheduled run): ten times that is ~10^7 events, minutes of simulation per row.
HORIZON_CAP = 10


def _horizon_param(figure: str) -> Param:
    return Param("horizon", float, horizon(figure, "standard"),
                 "simulated time (both runs integrate over [0, horizon])", gt=0, le=HORIZON_CAP * horizon(figure, "full"))


def _tracks_param(default: int, doc: str) -> Param:
    return Param("tracks", int, default, doc, ge=1, le=MAX_TRACKS)


def _s_param() -> Param:
    # S = 1 (no slowdown) or S >= 2; S in (1, 2) is refused by type2_slowdown (one line naming S)
    return Param("S", float, S_DEFAULT, "slowdown factor of the slow periods (type 2: work-rate multiplier 2)", ge=1)


FIG5_POLICIES = ["edf-p", "max-benefit"]
FIG6_POLICIES = ["max-benefit", "random", "edf-partitioned", "proportional"]
FIG7_POLICIES = ["max-benefit", "edf", "random", "edf-p", "max-benefit-lookahead"]
FIG8_INHERITANCE = ["none", "max", "sum", "max-plus"]
FIG9_POLICIES = ["max-benefit", "edf-partitioned", "proportional"]
#: Fig. 9's partitioners: non-aggressive; Proportional with k = 1 and M = ceil(U)/U.
FIG9_OPTIONS: dict[str, dict[str, Any]] = {
    "max-benefit": {},
    "edf-partitioned": {"basic": "max-benefit", "aggressive": False},
    "proportional": {"basic": "max-benefit", "k": 1.0, "tracks_mode": "basic", "aggressive": False},
}
FIG10_VARIANTS: dict[str, dict[str, Any]] = {
    "basic": {"k": 1.0, "tracks_mode": "basic", "aggressive": False},
    "all": {"k": 1.0, "tracks_mode": "all", "aggressive": False},
    "all, aggressive": {"k": 1.0, "tracks_mode": "all", "aggressive": True},
}
#: Fig. 11: (chop factor or None, inheritance mode) per curve.
FIG11_VARIANTS: dict[str, tuple[bool, str]] = {
    "no chopping": (False, "none"),
    "chopping": (True, "none"),
    "no chopping, max inheritance": (False, "max"),
    "chopping, max inheritance": (True, "max"),
}


@experiment(
    "golab-fig4",
    Param("S", float, 3.0, "slowdown factor of the slow periods (type 2: 1000 normal, 1000*S/(S-2) slow)", ge=1),
    _U, _SEED, _horizon_param("fig4"),
    _tracks_param(TRACKS, "number of tracks (the global queue runs over all of them)"),
)
def fig4(S: float, utilization: float, seed: int, horizon: float, tracks: int) -> pd.DataFrame:
    """Fig. 4: Max Benefit on 30 identical Table-2 tables, one curve per slowdown factor S.

    The work-rate multiplier is 2 for every S, so at one utilization the tables carry the same
    load against the same long-run capacity and only the burstiness of the slow periods differs. The paper's "local" Max
    Benefit is read as one global queue over the tracks (spec Sec. 6, item 8)."""
    w = identical_tables(N_TABLES, period=PERIOD, alpha=ALPHA, beta=BETA, tracks=tracks, horizon=horizon, seed=seed,
                         variability=VARIABILITY, slowdown=type2_slowdown(S))
    return run_point(w, utilization, "max-benefit")


@experiment("golab-fig5", Param("policy", str, "max-benefit", "edf-p or max-benefit", choices=tuple(FIG5_POLICIES)),
            _U, _SEED, _horizon_param("fig5"), _s_param())
def fig5(policy: str, utilization: float, seed: int, horizon: float, S: float) -> pd.DataFrame:
    """Fig. 5: EDF-P against Max Benefit on two classes of 15 tables, beta 0.1 and beta 0.01.

    Classes differ only in beta (the text's "ten times faster" is read as the beta = 0.01
    class, spec Sec. 6 item 9); alpha 1, period 100, priority 1; type-2 slowdown."""
    w = two_classes(N_TABLES // 2, {"beta": 0.1}, {"beta": 0.01}, tracks=TRACKS, horizon=horizon, seed=seed,
                    variability=VARIABILITY, slowdown=type2_slowdown(S))
    return run_point(w, utilization, policy)


@experiment("golab-fig6", Param("policy", str, "max-benefit", ", ".join(FIG6_POLICIES), choices=tuple(FIG6_POLICIES)),
            _U, _SEED, _horizon_param("fig6"), _tracks_param(5, "number of tracks (the paper: 5)"))
def fig6(policy: str, utilization: float, seed: int, horizon: float, tracks: int) -> pd.DataFrame:
    """Fig. 6: global Max Benefit, Random, EDF-Partitioned and Proportional on 30 identical
    tables, no slowdown, 5 tracks.

    Partitioners use the default options (Max Benefit basic algorithm, non-aggressive,
    Proportional with k = 1 and all tracks). Above U = 6/7 the EDF packing needs 6 tracks:
    those points are infeasible rows."""
    w = identical_tables(N_TABLES, period=PERIOD, alpha=ALPHA, beta=BETA, tracks=tracks, horizon=horizon, seed=seed,
                         variability=VARIABILITY)
    return run_point(w, utilization, policy)


@experiment("golab-fig7", Param("policy", str, "max-benefit", ", ".join(FIG7_POLICIES), choices=tuple(FIG7_POLICIES)),
            _U, _SEED, _horizon_param("fig7"), _s_param())
def fig7(policy: str, utilization: float, seed: int, horizon: float, S: float) -> pd.DataFrame:
    """Fig. 7: Max Benefit against EDF and Random on two classes of 15 Table-2 tables, priority
    1 and priority 10; type-2 slowdown.

    EDF-P and Max Benefit with Lookahead run too: the paper reports that they did not differ
    measurably from Max Benefit (acceptance check 15)."""
    w = two_classes(N_TABLES // 2, {"priority": 1.0}, {"priority": 10.0}, tracks=TRACKS, horizon=horizon, seed=seed,
                    variability=VARIABILITY, slowdown=type2_slowdown(S))
    return run_point(w, utilization, policy)


@experiment("golab-fig8",
            Param("inheritance", str, "none", ", ".join(FIG8_INHERITANCE), choices=tuple(FIG8_INHERITANCE)),
            _U, _SEED, _horizon_param("fig8"), _s_param(),
            Param("plus", float, 2.0, "factor K of max-plus inheritance", gt=1))
def fig8(inheritance: str, utilization: float, seed: int, horizon: float, S: float, plus: float) -> pd.DataFrame:
    """Fig. 8: Max Benefit with each priority inheritance mode on 30 chains of depth 3.

    Base table priority 0.001, middle view 1, top view 1, 10 or 100 (ten chains each); every
    table alpha 1, beta 0.1, a view's period that of its base (100). 30 chains rather than
    "30 jobs" so that the three top priorities come in equal numbers (spec Sec. 6 item 7);
    max-plus is the recursive reading with K = ``plus`` (item 6); type-2 slowdown."""
    w = chains(N_TABLES, 3, priorities=((0.001,), (1.0,), (1.0, 10.0, 100.0)), period=PERIOD, alpha=ALPHA, beta=BETA,
               tracks=TRACKS, horizon=horizon, seed=seed, variability=VARIABILITY, slowdown=type2_slowdown(S))
    options: dict[str, Any] = {"inheritance": inheritance}
    if inheritance == "max-plus":
        options["plus"] = plus
    return run_point(w, utilization, "max-benefit", options)


def _fig9_workload(horizon: float, seed: int, S: float) -> Workload:
    return two_classes(N_TABLES // 2, {"period": PERIOD, "priority": 100.0}, {"period": LONG_PERIOD, "priority": 1.0},
                       tracks=TRACKS, horizon=horizon, seed=seed, variability=VARIABILITY, slowdown=type2_slowdown(S))


@experiment("golab-fig9", Param("policy", str, "max-benefit", ", ".join(FIG9_POLICIES), choices=tuple(FIG9_POLICIES)),
            _U, _SEED, _horizon_param("fig9"), _s_param())
def fig9(policy: str, utilization: float, seed: int, horizon: float, S: float) -> pd.DataFrame:
    """Fig. 9: global Max Benefit, EDF-Partitioned and Proportional on 15 short tables (period
    100, priority 100) and 15 long ones (period 10 000, priority 1); type-2 slowdown.

    Both partitioners are non-aggressive with Max Benefit as basic algorithm; Proportional
    clusters with k = 1 (period rule) and uses M = ceil(U)/U ("basic")."""
    return run_point(_fig9_workload(horizon, seed, S), utilization, policy, FIG9_OPTIONS[policy])


@experiment("golab-fig10", Param("variant", str, "all", ", ".join(FIG10_VARIANTS), choices=tuple(FIG10_VARIANTS)),
            _U, _SEED, _horizon_param("fig10"), _s_param())
def fig10(variant: str, utilization: float, seed: int, horizon: float, S: float) -> pd.DataFrame:
    """Fig. 10: Proportional on the Fig. 9 workload: "basic" (M = ceil(U)/U, non-aggressive),
    "all" (M = N/U, non-aggressive) and "all, aggressive"; k = 1, Max Benefit basic algorithm."""
    return run_point(_fig9_workload(horizon, seed, S), utilization, "proportional", FIG10_VARIANTS[variant])


@experiment("golab-fig11", Param("variant", str, "chopping", ", ".join(FIG11_VARIANTS), choices=tuple(FIG11_VARIANTS)),
            _U, _SEED, _horizon_param("fig11"), _s_param(),
            Param("chop", float, 3.0, "chopping factor c (a job loads <= c periods)", ge=1))
def fig11(variant: str, utilization: float, seed: int, horizon: float, S: float, chop: float) -> pd.DataFrame:
    """Fig. 11: Max Benefit with and without update chopping (c = 3) on 30 chains of depth 2
    (base priority 1, view priority 10); type-2 slowdown.

    The paper does not say whether inheritance was on; the plain curves have none, the two
    extra curves repeat them with Max inheritance (spec Sec. 6 item 12)."""
    chopped, inheritance = FIG11_VARIANTS[variant]
    w = chains(N_TABLES, 2, priorities=((1.0,), (10.0,)), period=PERIOD, alpha=ALPHA, beta=BETA, tracks=TRACKS,
               horizon=horizon, seed=seed, variability=VARIABILITY, slowdown=type2_slowdown(S),
               chop=chop if chopped else None)
    return run_point(w, utilization, "max-benefit", {"inheritance": inheritance})


# -- a small partitioned schedule to look at ---------------------------------------------------


def sec44_workload(tracks: int = 2, **overrides: Any) -> Workload:
    """The jobs of the paper's Sec. 3.2.4 example (spec Sec. 4.4-4.5): J1 (P 4, E 1), J2 (4, 1),
    J3 (8, 2), J4 (10, 1.25) as periodic tables with alpha = E and beta = 0."""
    from staleness_lab.model import Table

    specs = [("J1", 4.0, 1.0), ("J2", 4.0, 1.0), ("J3", 8.0, 2.0), ("J4", 10.0, 1.25)]
    tables = tuple(Table(name=n, period=p, alpha=e, beta=0.0, priority=1.0) for n, p, e in specs)
    return Workload(tables=tables, tracks=tracks, horizon=100.0).with_overrides(**overrides)


def partitioned_demo(horizon: float = 80.0, seed: int = 0, basic: str = "edf") -> tuple[Any, pd.DataFrame, pd.DataFrame]:
    """A short EDF-Partitioned run on the Sec. 3.2.4 jobs (2 tracks, cost variability 0.5):
    ``(result, packing, jobs)``. ``packing``: per track its home tables, U_r, Emax_r, Pmin_r;
    ``jobs``: the run's jobs with each table's ``home`` track and ``placement`` ("home",
    "free" or "promoted")."""
    from staleness_lab.policies import partitioned

    w = sec44_workload(horizon=horizon, seed=seed, variability=VARIABILITY)
    packing = partitioned.pack(w)
    names = [t.name for t in w.tables]
    promo = partitioned.promotable(packing, w)
    table = pd.DataFrame(
        {
            "track": range(packing.needed),
            "home tables": [", ".join(names[i] for i in members) for members in packing.tracks],
            "U_r": packing.utilization,
            "Emax_r": packing.emax,
            "Pmin_r": packing.pmin,
            "may take by promotion": [
                ", ".join(names[i] for i, r in sorted(promo) if r == track) or "-" for track in range(packing.needed)
            ],
        }
    )
    result = simulate(w, "edf-partitioned", options={"basic": basic})
    jobs = result.jobs.copy()
    jobs["home"] = [packing.home[w.index[n]] for n in jobs["table"]]
    free = set(packing.free)
    jobs["placement"] = [
        "home" if t == h else ("free" if t in free else "promoted") for t, h in zip(jobs["track"], jobs["home"])
    ]
    return result, table, jobs


# -- the figures' descriptions and grids ---------------------------------------------------


#: The utilization points of each figure at the standard and full profiles.
UTILIZATIONS = {**dict.fromkeys(SIZING, U_SWEEP), "fig6": U_SWEEP_FIG6}


def _grid(name: str) -> Callable[[str], dict[str, Any]]:
    """The sweep grid of a figure at a profile, for :func:`~staleness_lab.sweeps.runner.run_grid`:
    every curve, the profile's utilizations and seeds, the horizon fixed."""

    def grid(profile: str) -> dict[str, Any]:
        fig = SWEEPS[name]
        return {
            fig.curve: list(fig.curves),
            "utilization": utilizations(name, profile),
            "seed": list(SEEDS[profile]),
            "fixed": {"horizon": horizon(name, profile)},
        }

    return grid


#: Each figure: its experiment, the parameter that tells its curves apart and the curves, the
#: paper's claim; the horizon comes from :data:`SIZING`, the utilization axis from
#: :data:`UTILIZATIONS`.
SWEEPS: dict[str, NamedSweep] = {
    f.name: f
    for f in [
        NamedSweep(
            "fig4", "golab-fig4",
            "Fig. 4: Max Benefit under alternating slowdowns of factor S (30 identical tables, 4 tracks)",
            "At the same offered load, a harsher slowdown factor S makes lateness grow much more, while "
            "alpha, beta and the number of tracks matter little.",
            _grid("fig4"), curve="S", curves=(2.0, 2.5, 3.0, 4.0, 5.0),
        ),
        NamedSweep(
            "fig5", "golab-fig5",
            "Fig. 5: EDF-P vs Max Benefit, two classes (beta 0.1 and 0.01)",
            "EDF-P is slightly better where lateness first appears, Max Benefit is better once the load is "
            "high, so Max Benefit is the safer choice.",
            _grid("fig5"), curve="policy", curves=tuple(FIG5_POLICIES),
        ),
        NamedSweep(
            "fig6", "golab-fig6",
            "Fig. 6: 30 identical tables, no slowdown, 5 tracks",
            "Every scheduler stays near the ideal up to about full load and stays stable beyond it; "
            "EDF-Partitioned is the worst (worse than Random) because its full tracks leave no room for "
            "promotion, and Proportional matches global Max Benefit.",
            _grid("fig6"), curve="policy", curves=tuple(FIG6_POLICIES),
        ),
        NamedSweep(
            "fig7", "golab-fig7",
            "Fig. 7: two priority classes (1 and 10)",
            "Max Benefit, which weighs priorities, keeps lateness far below EDF and Random, which ignore them.",
            _grid("fig7"), curve="policy", curves=tuple(FIG7_POLICIES),
        ),
        NamedSweep(
            "fig8", "golab-fig8",
            "Fig. 8: Max Benefit with priority inheritance, 30 chains of depth 3",
            "Without inheritance lateness is poor because base tables feeding important views starve; the "
            "inheritance modes are close to each other, Max the best overall and Sum the worst.",
            _grid("fig8"), curve="inheritance", curves=tuple(FIG8_INHERITANCE),
        ),
        NamedSweep(
            "fig9", "golab-fig9",
            "Fig. 9: short important tables (period 100, p 100) and long ones (period 10 000, p 1)",
            "Global Max Benefit does badly because long jobs block short important ones; EDF-Partitioned is "
            "much better at low load but worse than global at high load; Proportional is best overall.",
            _grid("fig9"), curve="policy", curves=tuple(FIG9_POLICIES),
        ),
        NamedSweep(
            "fig10", "golab-fig10",
            "Fig. 10: Proportional variants on the Fig. 9 workload",
            "Spreading the clusters over all tracks beats the basic allocation at low load, and the "
            "aggressive all-tracks variant does well at every load.",
            _grid("fig10"), curve="variant", curves=tuple(FIG10_VARIANTS),
        ),
        NamedSweep(
            "fig11", "golab-fig11",
            "Fig. 11: Max Benefit with and without update chopping (c = 3), 30 chains of depth 2",
            "Chopping large overdue updates into pieces of at most three periods lowers lateness.",
            _grid("fig11"), curve="variant", curves=tuple(FIG11_VARIANTS),
        ),
    ]
}


def figure(name: str | int) -> NamedSweep:
    """The figure ``fig4`` ... ``fig11`` (``4`` and ``golab-fig4`` work too)."""
    return SWEEPS[_figure_key(name)]


def utilizations(name: str, profile: str) -> list[float]:
    """The utilization points of the figure at the profile (all of them but at ``quick``)."""
    key = _figure_key(name)
    check_profile(profile)
    if profile == "quick":
        return list(U_QUICK)
    return list(UTILIZATIONS[key])


def grid(name: str | int, profile: str) -> dict[str, Any]:
    """The sweep grid of a figure at a profile (:data:`SWEEPS`)."""
    return figure(name).grid(profile)  # type: ignore[return-value]


def points(profile: str) -> dict[str, int]:
    """Rows per figure at the profile."""
    out = {}
    for name in SWEEPS:
        g = grid(name, profile)
        out[name] = len(g[figure(name).curve]) * len(g["utilization"]) * len(g["seed"])
    return out


def summarize(frame: pd.DataFrame, name: str, column: str = "relative_lateness") -> pd.DataFrame:
    """Mean of ``column`` over seeds per (utilization, curve), one column per curve (in the
    figure's order); NaN where any seed is NaN (an infeasible point stays missing)."""
    curve = figure(name).curve
    mean = frame.groupby([curve, "utilization"], sort=False)[column].agg(
        lambda s: s.mean() if len(s) and s.notna().all() else math.nan
    )
    table = mean.unstack(curve)
    order = [c for c in figure(name).curves if c in table.columns]
    return table[order + [c for c in table.columns if c not in order]].sort_index()
