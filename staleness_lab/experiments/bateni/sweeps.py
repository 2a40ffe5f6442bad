"""Bateni, Golab, Hajiaghayi and Karloff (staleness and stretch of batched warehouse updates):
the digest's proposed experiments X1-X5 and the exact optimum's frontier (digest §5; the paper
has no experiments). References are to ``shared/specs/bateni-staleness-stretch.md``; its
"Corrections" override its body.

Every row is one seeded instance (:mod:`staleness_lab.experiments.bateni.generators`) and
returns one row per (instance, policy) where policies are compared. Runs are drained (every
update applied, digest A2) and judged by the ``bateni`` check suite
(:func:`staleness_lab.check`), so a bound is decided only where its preconditions hold; the
exact optimum is :func:`staleness_lab.optimize.staleness_optimum.optimum` (CP-SAT, digest §5
and correction 7), run with one worker and a wall-clock limit, one optimum per row (a task on
Spark). Durations are deterministic (``u = 1``, correction 6), the same for ALG and OPT.

Experiments:

* ``bateni-x1``: every eager policy and the non-eager baselines on one instance; penalty/LOW,
  X/(LOW/2) and S*/(LOW/2) against R* = (1+α)² G(x) (Theorem 3.1), decided only for
  0 <= x < (√3−1)/2 (correction 2: x = 1 and 1.2 are outside the theorem, not counterexamples);
  Claim 3.5 and Lemma 3.4 as diagnostics (erratum A1).
* ``bateni-x2``: the same policies against the exact optimum: X(ALG)/X(OPT), X(OPT)/(LOW/2)
  and whether a policy attains OPT (E2: eager is not optimal).
* ``bateni-x3``: seeded hill-climbing of releases and α_i (one restart per row) maximizing
  penalty/LOW over R* or X(ALG)/X(OPT); a bound broken with its preconditions met is saved.
* ``bateni-x4``: stretch of GROUPANDRUN, MYOPIC on all p and the other eager policies on
  B-quasiperiodic groups (and E3-/E4-style inputs) against 3, 2.625 and 1 + (1+7α)/3
  (Theorem 4.3), and ω/B, θ/B against 1/6 (Lemma 4.2).
* ``bateni-x5``: weighted staleness with Zipf weights: GROUPANDRUN and weighted max-benefit
  against wLOW/2 and the weighted optimum (Theorem 5.1: 4.5, derived (16/9)(1+α)²).
* ``bateni-frontier``: whether the optimum is proven within the limit on a random instance;
  :func:`frontier_sizes` reads, per x and p, the largest t × n with 9 of 10 proven.

Profiles (:data:`~staleness_lab.sweeps.named.PROFILES`, :func:`grid`): ``quick`` (tests,
seconds), ``standard`` (``make run``) and ``full`` (ten times the standard instances: seeds for
X1-X5, 100 instances per size with 90 proven for the frontier, whose standard profile covers p
in {1, 2} and full p in {1, 2, 4}). The sweeps are :data:`SWEEPS`; ``SWEEPS[name].run(profile,
...)`` runs one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.api import CheckReport, check
from staleness_lab.errors import Infeasible, InputError
from staleness_lab.experiments.bateni import generators as gen
from staleness_lab.model import dump_workload, parse_workload
from staleness_lab.model.workload import MAX_SEED
from staleness_lab.sweeps.named import Grid, NamedSweep
from staleness_lab.sweeps.registry import Param, check_choice, experiment
from staleness_lab.theory.bateni.bounds import (STRETCH_BOUND, STRETCH_PAPER_FIGURE, WEIGHTED_FACTOR,
                                                in_theorem_range, stretch_derived,
                                                weighted_factor_derived)
from staleness_lab.theory.bateni.metrics import measures
from staleness_lab.theory.bateni.updates import table_updates
from staleness_lab.theory.bateni.waits import update_waits
from staleness_lab.theory.records import within

#: The eager policies of digest §2 (``fifo`` is MYOPIC's trace, so it is left out).
EAGER = ("myopic", "random", "largest-first", "newest-first", "max-benefit", "round-robin")
#: The non-eager baselines of digest §2 with their option, in units of the instance's scale
#: (the mean gap): threshold batching waits for two mean gaps of data, polling polls every gap.
BASELINES = {"threshold": {"min_delta": 2.0}, "polling": {"interval": 1.0}}
POLICIES = EAGER + tuple(BASELINES)
GROUP_AND_RUN = "group-and-run"
#: X4's policies: GROUPANDRUN, MYOPIC on all p and the other eager ones (digest §5, X4).
X4_POLICIES = (GROUP_AND_RUN, *EAGER)
#: X5's policies: GROUPANDRUN against weighted max-benefit, MYOPIC for reference.
X5_POLICIES = (GROUP_AND_RUN, "max-benefit", "myopic")
#: X3's objectives: penalty/LOW over R* (Theorem 3.1) or X(ALG)/X(OPT).
OBJECTIVES = ("penalty", "alg-opt")
#: X4's input kinds.
X4_KINDS = ("quasiperiodic", "e3", "e4")
#: Where X3 saves a bound breaker (``bateni-found-*.yaml``).
FOUND_DIR = "data/workloads"

#: Parameter bounds. X1 and X4 (no optimum) take up to MAX_TABLES tables of MAX_RELEASES
#: releases (about 5 * 10^5 updates, minutes through every policy and the check suite); the
#: exact optimum takes at most 5000 updates in all
#: (:data:`staleness_lab.optimize.staleness_optimum.MAX_UPDATES`), so its experiments (and X3,
#: whose alg-opt search solves it at every step) take t and n up to OPT_UPDATES each.
MAX_TABLES = 256
MAX_RELEASES = 2000
OPT_UPDATES = 5000
#: Group k of X4/X5 has B_k = 4^k B: six groups reach 4^5 = 1024 B.
MAX_GROUPS = 6
MAX_B = 1e6
MAX_STEPS = 1000
#: The optimum's wall-clock limit per solve (the profiles use 1-10 s).
MAX_TIME_LIMIT = 600.0


def policy_options(policy: str) -> dict[str, Any]:
    """The options a policy runs with here (the baselines' of :data:`BASELINES`, else none)."""
    return dict(BASELINES.get(policy, {}))


def judged(data: dict[str, Any], policy: str) -> CheckReport:
    """The drained run of ``policy`` on ``data`` with every Bateni claim checked."""
    return check(data, policy, options=policy_options(policy))


def _records(report: CheckReport) -> dict[str, Any]:
    return {r.claim: r for r in report.records}


def _eager(report: CheckReport) -> bool:
    pre = next(p for p in _records(report)["penalty-ratio"].preconditions if p.name == "eager")
    return bool(pre.met)


def _diagnostic(record: Any) -> tuple[bool | None, bool]:
    """A diagnostic's verdict (None: undecided or no tardy batch) and whether its worst batch
    waited on its own table."""
    if record is None or record.observed is None:
        return None, False
    return record.holds, bool(record.terms.get("own_table_wait", False))


def theorem_3_1_row(report: CheckReport) -> dict[str, Any]:
    """What X1 reads from one judged run (digest §2.2, Theorem 3.1, Claim 3.5, Lemma 3.4)."""
    rec = _records(report)
    sandwich, penalty = rec["staleness-sandwich"], rec["penalty-ratio"]
    low, x_val, s_star, pen = (sandwich.terms[k] for k in ("LOW", "X", "S_star", "penalty"))
    claim, claim_own = _diagnostic(rec.get("claim-3.5"))
    lemma, lemma_own = _diagnostic(rec.get("lemma-3.4"))
    bound = float(penalty.bound)
    return {
        "eager": _eager(report), "alpha": float(penalty.terms["alpha"]), "load": float(penalty.terms["x"]),
        "LOW": low, "X": x_val, "S_star": s_star, "penalty": pen,
        "penalty_low": pen / low, "X_low2": x_val / (low / 2), "S_star_low2": s_star / (low / 2),
        "R_star": bound if math.isfinite(bound) else math.nan, "in_range": in_theorem_range(float(penalty.terms["x"])),
        "preconditions_met": penalty.preconditions_met, "holds": penalty.holds,
        "sandwich": bool(sandwich.holds_if_met), "max_stretch": measures(report.trace).max_stretch,
        "claim_3_5": claim, "claim_3_5_own_wait": claim_own, "lemma_3_4": lemma, "lemma_3_4_own_wait": lemma_own,
    }


def _check_instance(t: int, p: int, x: float, alphas: str, kind: str, n: int) -> None:
    if not 1 <= p <= t:
        raise InputError("p", f"must satisfy 1 <= p <= t = {t}, got {p}")
    if n < 1:
        raise InputError("n", f"must be >= 1, got {n}")
    if not x > 0:
        raise InputError("x", f"must be > 0, got {x}")


# -- X1 ------------------------------------------------------------------------------------------

_SEED = Param("seed", int, 0, "seed of the instance", ge=0, le=MAX_SEED)
_TIME_LIMIT = Param("time_limit", float, 10.0, "the optimum's wall-clock limit (s)", gt=0, le=MAX_TIME_LIMIT)
_INSTANCE = (
    Param("t", int, 4, "tables", ge=1, le=MAX_TABLES),
    Param("p", int, 1, "processors (tracks), 1 <= p <= t", ge=1, le=MAX_TABLES),
    Param("x", float, 0.1, "load factor x = alpha t / p, alpha = max alpha_i", gt=0),
    Param("alphas", str, "equal", "equal (every alpha_i = alpha) or uniform (U(0, alpha] beside one table at alpha)",
          choices=gen.ALPHA_MODES),
    Param("kind", str, "poisson", "arrivals: poisson, periodic, bursty, big-then-tiny or quasiperiodic", choices=gen.KINDS),
    Param("n", int, 12, "releases per table", ge=1, le=MAX_RELEASES),
    _SEED,
)
#: X2's instance: as X1's, sized for the exact optimum (t n <= 200 updates).
_OPT_INSTANCE = (
    Param("t", int, 4, "tables", ge=1, le=OPT_UPDATES),
    Param("p", int, 1, "processors (tracks), 1 <= p <= t", ge=1, le=OPT_UPDATES),
    *_INSTANCE[2:5],
    Param("n", int, 4, "releases per table", ge=1, le=OPT_UPDATES),
    _SEED,
)


@experiment("bateni-x1", *_INSTANCE)
def x1(t: int, p: int, x: float, alphas: str, kind: str, n: int, seed: int) -> pd.DataFrame:
    """X1 (digest §5): every eager policy and the non-eager baselines on one instance:
    penalty/LOW, X/(LOW/2), S*/(LOW/2) against R* (Theorem 3.1, decided only inside its range
    and for eager runs), the sandwich, the stretch and the Claim 3.5 / Lemma 3.4 diagnostics."""
    _check_instance(t, p, x, alphas, kind, n)
    data = gen.instance(kind, t, p, n, x, alphas, seed, decimals=6)
    return pd.DataFrame([{"policy": policy, "eager_policy": policy in EAGER, **theorem_3_1_row(judged(data, policy))}
                         for policy in POLICIES])


# -- the exact optimum ------------------------------------------------------------------------------


def solve(data: dict[str, Any], time_limit: float) -> Any:
    """The exact optimum of an instance (one CP-SAT worker, ``time_limit`` seconds of wall time)."""
    from staleness_lab.optimize.staleness_optimum import optimum

    return optimum(parse_workload(data), time_limit=time_limit, workers=1)


def _value(value: Any) -> float:
    return math.nan if value is None else float(value)


def optimum_row(opt: Any) -> dict[str, Any]:
    """The optimum's status, X_w, best bound, gap, exactness and wall time as row columns."""
    return {"opt_status": str(opt.status), "opt_X": _value(opt.objective_X), "opt_bound": _value(opt.bound),
            "opt_gap": _value(opt.gap), "opt_exact": bool(opt.exact), "opt_wall_s": float(opt.wall_s)}


#: Relative tolerance when asking whether a schedule attains the optimum.
OPT_TOL = 1e-9


def float_ties(report: CheckReport) -> int:
    """Batches of a run that start less than 1e-9 (relative) before a release they leave out.

    The engine adds float durations, so a finish that is exactly a release time in exact
    arithmetic can land an ulp early (2.32 + 0.8·0.95 = 3.0799999999999996 < 3.08): the next
    batch then starts before the release and leaves it out, a schedule the exact optimum's
    model (every batch takes all updates released by its start, digest §1) does not contain.
    A policy can then beat the exact OPT by a hair; check 13 excuses exactly these runs."""
    ties = 0
    for u in table_updates(report.trace):
        following = u.last + 1
        mask = following < len(u.arrival)
        gap = u.arrival[following[mask]] - u.start[mask]
        ties += int(np.sum((gap > 0) & (gap <= 1e-9 * np.maximum(1.0, np.abs(u.start[mask])))))
    return ties


@experiment("bateni-x2", *_OPT_INSTANCE, _TIME_LIMIT)
def x2(t: int, p: int, x: float, alphas: str, kind: str, n: int, seed: int, time_limit: float) -> pd.DataFrame:
    """X2 (digest §5): every policy of X1 against the exact optimum on one small instance:
    X(ALG)/X(OPT), X(OPT)/(LOW/2) and whether the policy attains OPT (decided when proven)."""
    _check_instance(t, p, x, alphas, kind, n)
    data = gen.instance(kind, t, p, n, x, alphas, seed)
    opt = optimum_row(solve(data, time_limit))
    rows = []
    for policy in POLICIES:
        report = judged(data, policy)
        penalty = _records(report)["penalty-ratio"]
        low, alg = float(penalty.terms["LOW"]), float(report.X)
        proven = opt["opt_status"] == "optimal"
        rows.append({
            "policy": policy, "eager_policy": policy in EAGER, "eager": _eager(report), "LOW": low, "X_alg": alg,
            **opt, "ratio": alg / opt["opt_X"], "opt_low2": opt["opt_X"] / (low / 2),
            "attains_opt": bool(alg <= opt["opt_X"] * (1 + OPT_TOL)) if proven else None,
            "float_ties": float_ties(report),
            "R_star": float(penalty.bound) if math.isfinite(float(penalty.bound)) else math.nan,
            "in_range": in_theorem_range(float(penalty.terms["x"])),
        })
    return pd.DataFrame(rows)


# -- X3: adversarial search ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    """One candidate of the search: the instance, its score, the bound it is judged against
    (NaN outside the theorem), whether that bound's preconditions hold, and what it measured."""

    data: dict[str, Any]
    score: float
    bound: float
    preconditions_met: bool
    measured: dict[str, Any]

    @property
    def broken(self) -> bool:
        """A bound with its preconditions met is exceeded (never expected)."""
        return self.preconditions_met and math.isfinite(self.bound) and not within(self.score, self.bound)


def _score(data: dict[str, Any], objective: str, policy: str, time_limit: float) -> Scored:
    """penalty: penalty/LOW against R*; alg-opt: X(ALG)/X(OPT) against R* (Theorem 3.1 gives
    X_ALG <= S*_ALG <= penalty/2 <= R* LOW/2 <= R* OPT); both need Theorem 3.1's preconditions,
    the run's eagerness among them."""
    report = judged(data, policy)
    penalty = _records(report)["penalty-ratio"]
    bound = float(penalty.bound) if math.isfinite(float(penalty.bound)) else math.nan
    measured: dict[str, Any] = {"penalty_low": float(penalty.observed), "X_alg": float(report.X),
                                "alpha": float(penalty.terms["alpha"]), "load": float(penalty.terms["x"])}
    if objective == "penalty":
        score = float(penalty.observed)
    else:
        opt = optimum_row(solve(data, time_limit))
        measured.update(opt)
        score = float(report.X) / opt["opt_X"] if math.isfinite(opt["opt_X"]) else math.nan
    return Scored(data, score, bound, penalty.preconditions_met, measured)


def _fitness(s: Scored) -> float:
    """What the search maximizes: the score over its bound inside the theorem, else the score."""
    if math.isnan(s.score):
        return -math.inf
    return s.score / s.bound if math.isfinite(s.bound) else s.score


def mutate(data: dict[str, Any], rng: np.random.Generator, alpha_cap: float) -> dict[str, Any]:
    """One move of the search: with probability 0.7 a release of a random table moves to a
    uniform grid point strictly between its neighbours (the last one up to 3 time units after
    its predecessor), else a random table's α_i is multiplied by e^U(-1,1), capped at
    ``alpha_cap`` and rounded to 0.001 (at least 0.001)."""
    tables = [dict(t, arrivals=list(t["arrivals"])) for t in data["tables"]]
    k = int(rng.integers(len(tables)))
    table = tables[k]
    if rng.random() < 0.7:
        ticks = [int(round(a * gen.GRID)) for a in table["arrivals"]]
        j = int(rng.integers(len(ticks)))
        low = ticks[j - 1] + 1 if j else 1
        high = ticks[j + 1] - 1 if j + 1 < len(ticks) else low + 3 * gen.GRID
        if low <= high:
            ticks[j] = int(rng.integers(low, high + 1))
        table["arrivals"] = [round(v / gen.GRID, 2) for v in ticks]
    else:
        table["beta"] = max(0.001, round(min(alpha_cap, table["beta"] * math.exp(rng.uniform(-1, 1))), 3))
    return gen.workload(tables, data["tracks"], data["seed"])


def save_breaker(s: Scored, objective: str, policy: str, seed: int) -> str:
    """Write a bound breaker to ``data/workloads/bateni-found-<objective>-<policy>-t..-p..-s...yaml``
    and return its path relative to the checkout."""
    from staleness_lab.notebook_params import repo_file

    folder = repo_file(FOUND_DIR)
    name = f"bateni-found-{objective}-{policy}-t{len(s.data['tables'])}-p{s.data['tracks']}-s{seed}.yaml"
    dump_workload(parse_workload(s.data), folder / name)
    return str(Path(FOUND_DIR) / name)


@experiment(
    "bateni-x3",
    Param("objective", str, "penalty", "penalty (penalty/LOW over R*) or alg-opt (X(ALG)/X(OPT))", choices=OBJECTIVES),
    Param("policy", str, "myopic", "the eager policy searched against", choices=EAGER),
    Param("t", int, 3, "tables", ge=1, le=OPT_UPDATES),
    Param("p", int, 1, "processors (tracks), 1 <= p <= t; p = t gives lock waits (digest A1)", ge=1, le=OPT_UPDATES),
    Param("n", int, 4, "releases per table", ge=1, le=OPT_UPDATES),
    Param("x", float, 0.3, "the load cap: every alpha_i <= x p / t", gt=0),
    Param("steps", int, 40, "hill-climbing steps of this restart", ge=0, le=MAX_STEPS),
    Param("seed", int, 0, "seed of the start instance and of the moves", ge=0, le=MAX_SEED),
    Param("time_limit", float, 10.0, "the optimum's wall-clock limit (s), alg-opt only", gt=0, le=MAX_TIME_LIMIT),
)
def x3(objective: str, policy: str, t: int, p: int, n: int, x: float, steps: int, seed: int,
       time_limit: float) -> pd.DataFrame:
    """X3 (digest §5): one seeded hill-climbing restart over releases and α_i maximizing
    penalty/LOW / R* or X(ALG)/X(OPT) / R* (the score alone outside Theorem 3.1's range).

    A candidate is accepted when its fitness is at least the current one. An instance that
    breaks a bound whose preconditions are all met (eager run, 0 <= x < (√3−1)/2, p <= t,
    α <= 1) is saved as ``data/workloads/bateni-found-*.yaml`` (:func:`save_breaker`); none is
    expected, since Theorem 3.1 is proved (its errata concern proof steps, not the statement)."""
    # kept beside the Params' choices: a direct call would otherwise fail on OBJECTIVES.index or
    # search against a non-eager policy
    check_choice(objective, OBJECTIVES, "objective")
    check_choice(policy, EAGER, "policy")
    _check_instance(t, p, x, "uniform", "poisson", n)
    if steps < 0:
        raise InputError("steps", f"must be >= 0, got {steps}")
    rng = np.random.default_rng([seed, t, p, n, OBJECTIVES.index(objective), 3])
    current = _score(gen.instance("poisson", t, p, n, x, "uniform", seed), objective, policy, time_limit)
    start, accepted, breakers = current, 0, []
    for _ in range(steps):
        candidate = _score(mutate(current.data, rng, x * p / t), objective, policy, time_limit)
        if candidate.broken:
            breakers.append(save_breaker(candidate, objective, policy, seed))
        if _fitness(candidate) >= _fitness(current):
            current, accepted = candidate, accepted + 1
    return pd.DataFrame([{
        "start_score": start.score, "best_score": current.score, "bound": current.bound,
        "best_fitness": _fitness(current), "preconditions_met": current.preconditions_met,
        "broken": bool(breakers), "saved": ";".join(breakers), "accepted": accepted,
        "optima": (steps + 1) if objective == "alg-opt" else 0,
        **{f"best_{k}": v for k, v in current.measured.items()},
        "instance": json.dumps(current.data["tables"]),
    }])


# -- X4: stretch ------------------------------------------------------------------------------------


def x4_instance(kind: str, g: int, B: float, per_group: int, p: int, factor: float, n: int, seed: int
                ) -> dict[str, Any]:
    """X4's instance: ``g`` groups of ``per_group`` B-quasiperiodic tables, group k with
    ``B_k = 4^k B`` (so groups never merge), declared ``length_range [B_k/2, B_k]``, distinct
    releases, every α_i = factor × min((p−g)/(8t), 1/8) (Theorem 4.3's precondition at 1)
    rounded down to 4 places (so the optimum's scale stays exact and factor 1 still meets the
    precondition); or an E3-/E4-style input (:func:`~staleness_lab.experiments.bateni.generators.e3_style`)."""
    rng = np.random.default_rng([seed, g, per_group, p, X4_KINDS.index(kind), 4])
    if kind == "e3":
        return gen.e3_style(rng, B)
    if kind == "e4":
        return gen.e4_style(rng, B)
    t = g * per_group
    times, ranges = gen.quasiperiodic_groups([per_group] * g, [B * 4**k for k in range(g)], n, rng)
    alpha = max(1e-4, math.floor(factor * min((p - g) / (8 * t), 1 / 8) * 1e4) / 1e4)
    return gen.workload(gen.tables(times, [alpha] * t, length_ranges=ranges), p, seed)


def stretch_row(report: CheckReport) -> dict[str, Any]:
    """Max stretch, max ω/B (B: each table's declared Lmax) and, for GROUPANDRUN, max θ/B and
    the verdicts of Lemma 4.2 and Theorem 4.3 (digest §3, A4)."""
    w = report.workload
    lmax = {t.name: t.declared_lengths()[1] for t in w.tables}
    waits = [float(np.max(update_waits(u))) / lmax[u.name] for u in table_updates(report.trace) if u.applied.any()]
    rec = _records(report)
    alpha = max(t.beta for t in w.tables)
    row: dict[str, Any] = {"status": "ok", "alpha": alpha, "max_stretch": measures(report.trace).max_stretch,
                           "max_wait_B": max(waits, default=math.nan), "max_theta_B": math.nan,
                           "derived_bound": stretch_derived(alpha), "preconditions_met": None, "wait_holds": None}
    if "stretch" in rec:
        group_waits = [r for r in report.records if r.claim == "wait"]
        row["max_theta_B"] = max(r.terms["theta"] / r.terms["B"] for r in group_waits)
        row["max_wait_B"] = max(r.terms["omega"] / r.terms["B"] for r in group_waits)
        row["preconditions_met"] = rec["stretch"].preconditions_met
        decided = [r.holds for r in group_waits]
        row["wait_holds"] = None if None in decided else all(decided)
    return row


@experiment(
    "bateni-x4",
    Param("kind", str, "quasiperiodic", "quasiperiodic (g groups), e3 (one table: a long then a tiny update) "
          "or e4 (p = 1 < g = 2: a periodic table and one long update)", choices=X4_KINDS),
    Param("g", int, 2, "groups (quasiperiodic)", ge=1, le=MAX_GROUPS),
    # B >= 0.02: two steps of the 0.01 release grid, so that [B/2, B] holds a length
    Param("B", float, 1.0, "group 0's B; group k's is 4^k B (e3/e4: their time scale)", ge=0.02, le=MAX_B),
    Param("per_group", int, 4, "tables per group (quasiperiodic)", ge=1, le=MAX_TABLES),
    Param("p", int, 4, "processors (quasiperiodic; e3 and e4 use 1)", ge=1, le=MAX_TABLES),
    Param("factor", float, 1.0, "alpha as a multiple of min((p-g)/(8t), 1/8) (quasiperiodic)", gt=0),
    Param("n", int, 12, "releases per table (quasiperiodic)", ge=1, le=MAX_RELEASES),
    _SEED,
)
def x4(kind: str, g: int, B: float, per_group: int, p: int, factor: float, n: int, seed: int) -> pd.DataFrame:
    """X4 (digest §5): stretch of GROUPANDRUN, MYOPIC on all p and the other eager policies:
    max stretch against 3, 2.625 and 1 + (1+7α)/3 (Theorem 4.3), ω/B and θ/B against 1/6
    (Lemma 4.2); GROUPANDRUN's row says ``infeasible`` (p <= g) or ``refused`` (a table
    quasiperiodic for no B) where it cannot run."""
    check_choice(kind, X4_KINDS, "kind")  # kept beside the Param's choices: x4_instance needs X4_KINDS.index
    if kind == "quasiperiodic" and (g < 1 or per_group < 1 or p <= g or n < 1 or not factor > 0):
        raise InputError("p", f"needs g, per_group, n >= 1, factor > 0 and p > g; got g = {g}, per_group = {per_group}, "
                              f"p = {p}, n = {n}, factor = {factor}")
    data = x4_instance(kind, g, B, per_group, p, factor, n, seed)
    rows = []
    for policy in X4_POLICIES:
        try:
            row = stretch_row(judged(data, policy))
        except (Infeasible, InputError) as why:
            if policy != GROUP_AND_RUN:
                raise
            row = {"status": "infeasible" if isinstance(why, Infeasible) else "refused", "reason": str(why)}
        rows.append({"policy": policy, "reason": "", **row})
    frame = pd.DataFrame(rows)
    frame["stretch_bound"], frame["paper_figure"] = STRETCH_BOUND, STRETCH_PAPER_FIGURE
    return frame


# -- X5: weighted staleness -----------------------------------------------------------------------------


@experiment(
    "bateni-x5",
    Param("g", int, 1, "groups", ge=1, le=MAX_GROUPS),
    Param("per_group", int, 2, "tables per group", ge=1, le=OPT_UPDATES),
    Param("p", int, 2, "processors, p > g", ge=1, le=OPT_UPDATES),
    Param("n", int, 4, "releases per table", ge=1, le=OPT_UPDATES),
    Param("factor", float, 1.0, "alpha as a multiple of min((p-g)/(8t), 1/8)", gt=0),
    Param("zipf_s", float, 1.0, "Zipf exponent of the weights", ge=0),
    _SEED,
    _TIME_LIMIT,
)
def x5(g: int, per_group: int, p: int, n: int, factor: float, zipf_s: float, seed: int, time_limit: float) -> pd.DataFrame:
    """X5 (digest §5): GROUPANDRUN against weighted max-benefit (and MYOPIC) with Zipf weights:
    X_w/(wLOW/2) against Theorem 5.1's 4.5 and the derived (16/9)(1+α)², X_w over the weighted
    optimum against 4.5."""
    if g < 1 or per_group < 1 or p <= g or n < 1 or not factor > 0:
        raise InputError("p", f"needs g, per_group, n >= 1, factor > 0 and p > g; got g = {g}, p = {p}")
    t = g * per_group
    with np.errstate(over="ignore"):
        lightest = round(float(1.0 / np.int64(t) ** zipf_s), 4)  # the weight of rank t, as zipf_weights rounds it
    if not lightest > 0:
        raise InputError("zipf_s", f"gives the lightest of the t = g * per_group = {t} tables weight 1/{t}^{zipf_s:g}, "
                                   f"0 at 4 decimal places: needs {t}^zipf_s <= 20000, got {zipf_s:g}")
    data = x4_instance("quasiperiodic", g, 1.0, per_group, p, factor, n, seed)
    rng = np.random.default_rng([seed, g, per_group, 5])
    weights = gen.zipf_weights(len(data["tables"]), rng, zipf_s)
    data = {**data, "tables": [{**t, "priority": w} for t, w in zip(data["tables"], weights)]}
    opt = optimum_row(solve(data, time_limit))
    rows = []
    for policy in X5_POLICIES:
        report = judged(data, policy)
        m = measures(report.trace)
        w_low = m.total("LOW", weighted=True)
        alpha = max(t["beta"] for t in data["tables"])
        weighted = _records(report).get("weighted-staleness")
        rows.append({
            "policy": policy, "alpha": alpha, "X_w": m.X_w, "wLOW": w_low, "X_w_wlow2": m.X_w / (w_low / 2),
            **opt, "ratio": m.X_w / opt["opt_X"], "derived_factor": weighted_factor_derived(alpha),
            "weighted_factor": WEIGHTED_FACTOR, "max_stretch": m.max_stretch,
            "preconditions_met": None if weighted is None else weighted.preconditions_met,
        })
    return pd.DataFrame(rows)


# -- the optimum's frontier -------------------------------------------------------------------------------


@experiment(
    "bateni-frontier",
    Param("x", float, 0.5, "load factor", gt=0),
    Param("p", int, 1, "processors", ge=1, le=OPT_UPDATES),
    Param("t", int, 2, "tables", ge=1, le=OPT_UPDATES),
    Param("n", int, 4, "releases per table", ge=1, le=OPT_UPDATES),
    Param("seed", int, 0, "seed of the instance (poisson arrivals, uniform alpha_i)", ge=0, le=MAX_SEED),
    _TIME_LIMIT,
)
def frontier(x: float, p: int, t: int, n: int, seed: int, time_limit: float) -> pd.DataFrame:
    """The optimum on one random instance of t tables × n releases: proven or not within the
    limit (one worker), its gap and wall time; :func:`frontier_sizes` reads the frontier."""
    _check_instance(t, p, x, "uniform", "poisson", n)
    opt = optimum_row(solve(gen.instance("poisson", t, p, n, x, "uniform", seed), time_limit))
    return pd.DataFrame([{"size": t * n, "proven": opt["opt_status"] == "optimal", **opt}])


#: The share of a size's instances that must be proven for the size to be on the frontier.
FRONTIER_SHARE = 0.9


def frontier_needed(seeds: int) -> int:
    """How many of ``seeds`` instances of a size must be proven: 9 of 10 (``ceil(0.9 seeds)``)."""
    return math.ceil(FRONTIER_SHARE * seeds - 1e-9)


def frontier_sizes(frame: pd.DataFrame, seeds: int) -> pd.DataFrame:
    """Per (x, p): the largest t × n such that it and every smaller size run had at least
    :func:`frontier_needed` of its ``seeds`` instances proven optimal (a size whose second half
    was not run, its first half having failed too often, is off the frontier), with the proven
    count per size (``t×n: proven/run``) and the median wall time."""
    rows = []
    for (x, p), part in frame.groupby(["x", "p"], sort=True):
        counts = part.groupby(["size", "t", "n"], sort=True)["proven"].agg(["sum", "count"]).reset_index()
        largest: tuple[int, int] | None = None
        for row in counts.itertuples():
            if row.count < seeds or row.sum < frontier_needed(seeds):
                break
            largest = (int(row.t), int(row.n))
        rows.append({"x": x, "p": p, "largest_t": largest[0] if largest else None,
                     "largest_n": largest[1] if largest else None,
                     "largest_size": largest[0] * largest[1] if largest else None,
                     "median_wall_s": float(part["opt_wall_s"].median()),
                     "proven_per_size": ", ".join(f"{r.t}×{r.n}: {int(r.sum)}/{int(r.count)}" for r in counts.itertuples())})
    return pd.DataFrame(rows)


# -- grids and profiles ------------------------------------------------------------------------------


def _seeds(profile: str, standard: int) -> list[int]:
    return list(range({"quick": 1, "standard": standard, "full": 10 * standard}[profile]))


def tp_pairs(ts: tuple[int, ...]) -> list[tuple[int, int]]:
    """X1's (t, p) with p in {1, t/4, t/2, t} where that is a whole number (digest §5)."""
    return [(t, p) for t in ts for p in sorted({1, t} | {t // d for d in (2, 4) if t % d == 0 and t >= d})]


X1_LOADS = (0.05, 0.1, 0.2, 0.3, 0.36, 0.5, 0.8, 1.0, 1.2)


def _x1_rows(profile: str) -> list[dict[str, Any]]:
    if profile == "quick":
        return [{"t": t, "p": p, "x": x, "alphas": "uniform", "kind": kind, "seed": 0}
                for t, p in tp_pairs((2, 4)) for x in (0.1, 0.36, 1.0) for kind in ("poisson", "big-then-tiny")]
    return [{"t": t, "p": p, "x": x, "alphas": mode, "kind": kind, "seed": seed}
            for seed in _seeds(profile, 1) for t, p in tp_pairs((1, 2, 4, 8, 16)) for x in X1_LOADS
            for mode in gen.ALPHA_MODES for kind in gen.X1_KINDS]


#: X2's goal sizes (t, n, p, x): the optimum must handle them; the last two, 168 and 384
#: updates, are beyond one CP-SAT model and proven block by block (the optimum's "Blocks").
X2_GOALS = ((4, 8, 2, 0.8), (8, 10, 4, 0.5), (12, 14, 1, 0.8), (16, 24, 1, 0.5))


def _x2_rows(profile: str) -> list[dict[str, Any]]:
    limit = 2.0 if profile == "quick" else 10.0
    if profile == "quick":
        return [{"t": t, "p": p, "n": 3, "x": x, "alphas": "uniform", "kind": "poisson", "seed": 0, "time_limit": limit}
                for t, p in ((2, 1), (2, 2)) for x in (0.5, 1.2)]
    small = [{"t": t, "p": p, "n": n, "x": x, "alphas": mode, "kind": kind, "seed": seed, "time_limit": limit}
             for seed in _seeds(profile, 1) for t, p in ((1, 1), (2, 1), (2, 2), (3, 1), (3, 2)) for n in (3, 5)
             for x in (0.3, 0.5, 0.8, 1.2) for mode in gen.ALPHA_MODES for kind in gen.X1_KINDS[:2]]
    goals = [{"t": t, "p": p, "n": n, "x": x, "alphas": "uniform", "kind": kind, "seed": seed, "time_limit": limit}
             for seed in _seeds(profile, 2) for t, n, p, x in X2_GOALS for kind in gen.X1_KINDS]
    return small + goals


def _x3_rows(profile: str) -> list[dict[str, Any]]:
    if profile == "quick":
        return [{"objective": "penalty", "policy": "myopic", "t": 2, "p": 2, "x": 0.3, "steps": 10, "seed": 0},
                {"objective": "alg-opt", "policy": "myopic", "t": 2, "p": 1, "n": 3, "x": 0.8, "steps": 3, "seed": 0,
                 "time_limit": 2.0}]
    rows = [{"objective": "penalty", "policy": policy, "t": t, "p": p, "x": x, "steps": 100, "seed": seed}
            for seed in _seeds(profile, 2) for policy in ("myopic", "largest-first", "newest-first", "round-robin")
            for t, p in ((2, 1), (3, 1), (3, 3), (4, 4)) for x in (0.1, 0.3)]
    rows += [{"objective": "alg-opt", "policy": policy, "t": t, "p": p, "n": 3, "x": x, "steps": 15, "seed": seed}
             for seed in _seeds(profile, 2) for policy in ("myopic", "largest-first")
             for t, p in ((2, 1), (3, 1), (2, 2)) for x in (0.3, 0.8)]
    return rows


def _x4_rows(profile: str) -> list[dict[str, Any]]:
    if profile == "quick":
        return ([{"g": g, "p": 2 * g, "factor": f, "seed": 0} for g in (1, 2) for f in (1.0, 4.0)]
                + [{"kind": kind, "seed": 0} for kind in ("e3", "e4")])
    rows = [{"g": g, "B": b, "p": p, "factor": f, "seed": seed}
            for seed in _seeds(profile, 2) for g in (1, 2, 3) for b in (1.0, 60.0, 1440.0) for p in (2 * g, 3 * g)
            for f in (0.25, 0.5, 1.0, 2.0, 4.0)]
    rows += [{"kind": kind, "B": b, "seed": seed} for seed in _seeds(profile, 5) for kind in ("e3", "e4")
             for b in (1.0, 60.0, 1440.0)]
    return rows


def _x5_rows(profile: str) -> list[dict[str, Any]]:
    limit = 2.0 if profile == "quick" else 10.0
    if profile == "quick":
        return [{"g": 1, "per_group": 2, "p": 2, "n": 3, "seed": 0, "time_limit": limit}]
    return [{"g": g, "per_group": k, "p": p, "n": 4, "factor": f, "seed": seed, "time_limit": limit}
            for seed in _seeds(profile, 5) for g, k, p in ((1, 2, 2), (1, 3, 2), (1, 3, 3), (2, 2, 4))
            for f in (1.0, 4.0)]


#: The frontier's ladder of (t, n), smallest first, up to 24 × 34 = 816 updates (the ladder of
#: ``benchmarks/bench_optimum.py`` up to its fourfold of the monolithic model's frontier).
FRONTIER_LADDER = ((2, 3), (2, 5), (3, 5), (4, 6), (4, 8), (6, 8), (8, 10), (8, 14), (12, 14), (14, 14), (16, 16),
                   (16, 24), (20, 28), (24, 34))
FRONTIER_LOADS = (0.3, 0.5, 0.8)
FRONTIER_TRACKS = (1, 2, 4)
#: A size whose slowest solve took at most this share of the limit lets the next run in one go.
FAST_SHARE = 0.1


def frontier_seeds(profile: str) -> int:
    """Instances per size: 10 ("9 of 10 proven"), 2 in the quick profile, 100 in full (90 of 100)."""
    return {"quick": 2, "standard": 10, "full": 100}[profile]


def frontier_ladder(profile: str) -> tuple[tuple[int, int], ...]:
    """The sizes tried: the whole ladder, its first three in the quick profile."""
    return FRONTIER_LADDER[:3] if profile == "quick" else FRONTIER_LADDER


def _frontier_series(profile: str) -> list[tuple[float, int]]:
    """The (x, p) series: x in {.3, .5, .8} with p in {1, 2} (standard; its 10 s solves are
    most of the profile's time) or {1, 2, 4} (full); one series in the quick profile."""
    if profile == "quick":
        return [(0.5, 1)]
    return [(x, p) for x in FRONTIER_LOADS for p in (FRONTIER_TRACKS if profile == "full" else FRONTIER_TRACKS[:2])]


def frontier_limit(profile: str) -> float:
    """The optimum's wall-clock limit per frontier instance: 10 s (1 s in the quick profile)."""
    return 1.0 if profile == "quick" else 10.0


def _frontier_rows(profile: str, series: list[tuple[float, int]], t: int, n: int, seeds: range) -> list[dict[str, Any]]:
    return [{"x": x, "p": p, "t": t, "n": n, "seed": seed, "time_limit": frontier_limit(profile)}
            for x, p in series if p <= t for seed in seeds]


def _frontier_all(profile: str) -> list[dict[str, Any]]:
    """Every size of the frontier's ladder (:func:`_run_frontier` stops each series at its first
    failing size)."""
    return [row for size in frontier_ladder(profile)
            for row in _frontier_rows(profile, _frontier_series(profile), *size, range(frontier_seeds(profile)))]


def _run_frontier(profile: str, run_rows: Callable[[Grid], pd.DataFrame]) -> pd.DataFrame:
    """The frontier, size by size: each size one grid (``run_rows``) over the (x, p) series still
    on the frontier, in two halves of its seeds once the previous size had a solve slower than a
    tenth of the limit; a series leaves after more failures at a size than
    :func:`frontier_needed` allows, so the sizes beyond its frontier (and the second half of a
    size already lost), which would mostly time out, are not run."""
    seeds = frontier_seeds(profile)
    allowed = seeds - frontier_needed(seeds)
    alive, parts, fast = _frontier_series(profile), [], True
    for t, n in frontier_ladder(profile):
        failed = dict.fromkeys(alive, 0)
        halves = [range(seeds)] if fast else [range(seeds // 2), range(seeds // 2, seeds)]
        slowest = 0.0
        for half in halves:
            rows = _frontier_rows(profile, alive, t, n, half)
            if not rows:
                continue
            part = run_rows(rows)
            parts.append(part)
            slowest = max(slowest, float(part["opt_wall_s"].max()))
            for (x, p), lost in (~part["proven"]).groupby([part["x"], part["p"]]).sum().items():
                failed[(x, p)] += int(lost)
            alive = [s for s in alive if failed[s] <= allowed]
        fast = slowest <= FAST_SHARE * frontier_limit(profile)
    return pd.concat(parts, ignore_index=True)


#: The sweeps by name, each a grid of one experiment per profile and what it reports against.
SWEEPS: dict[str, NamedSweep] = {
    s.name: s for s in [
        NamedSweep("x1", "bateni-x1", "X1: eager penalty/LOW against Theorem 3.1's R*",
                   "penalty <= R* LOW for every eager run with 0 <= x < (√3−1)/2 (Theorem 3.1, correction 2).",
                   _x1_rows),
        NamedSweep("x2", "bateni-x2", "X2: every policy against the exact optimum",
                   "LOW/2 <= OPT <= X(ALG) for every policy; X(ALG)/X(OPT) <= R* inside the theorem.", _x2_rows),
        NamedSweep("x3", "bateni-x3", "X3: adversarial hill-climbing of releases and α_i",
                   "No instance breaks penalty <= R* LOW or X(ALG) <= R* X(OPT) with the preconditions met.",
                   _x3_rows),
        NamedSweep("x4", "bateni-x4", "X4: stretch against Theorem 4.3 and Lemma 4.2",
                   "GROUPANDRUN under its preconditions: ω, θ <= B/6 and stretch <= 1 + (1+7α)/3 <= 2.625 < 3.",
                   _x4_rows),
        NamedSweep("x5", "bateni-x5", "X5: weighted staleness against Theorem 5.1",
                   "GROUPANDRUN under its preconditions: X_w <= (16/9)(1+α)² wLOW/2 and X_w <= 4.5 X_w(OPT).", _x5_rows),
        NamedSweep("frontier", "bateni-frontier", "The optimum's frontier",
                   "Per x and p, the largest t × n with 9 of 10 instances proven optimal within the limit.",
                   _frontier_all, stepwise=_run_frontier),
    ]
}


def grid(name: str, profile: str) -> list[dict[str, Any]]:
    """The explicit parameter rows of a sweep at a profile (for ``run_grid``); the frontier's
    are every size of its ladder (its :meth:`~staleness_lab.sweeps.named.NamedSweep.run` stops
    each series at its first failing size)."""
    if name not in SWEEPS:
        raise InputError("sweep", f"must be one of {', '.join(SWEEPS)}, got {name!r}")
    return SWEEPS[name].grid(profile)  # type: ignore[return-value]
