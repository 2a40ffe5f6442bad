"""An adversarial search against the slot bound (:mod:`staleness_lab.theory.leontyev.slot`).

Like Bateni's X3 (:func:`staleness_lab.experiments.bateni.sweeps.x3`), a seeded hill-climbing
restart over the inputs the theorem quantifies over, maximizing observed worst lag / bound under
gedf-np; a candidate whose ratio exceeds 1 (beyond :func:`~staleness_lab.theory.records.within`)
breaks the bound. Every candidate stays inside the slot bound's preconditions by construction:

* base tables are replayed feeds whose every file lies on its slot: file j arrives in
  [a*_j - J, a*_j] (a*_j = phi + (j - 1) p) with its timestamp in [arr - kappa, arr], arrivals and
  timestamps non-decreasing, up to the horizon. J and kappa are the instance's own (a replayed
  table declares no jitter, so the bound is computed from a task set carrying them);
* costs are exact (no noise), alpha + beta L, and each budget is the costliest job,
  alpha + beta max(phi, p + J + kappa) (a view: alpha, it loads at most p_k at a flat cost);
* U_sum <= m; F(0) = 0; sometimes one view over one or two base tables.

Moves: with probability 0.6 one file moves (arrival uniform within its slot window and between
its neighbours, then its timestamp within its window), else one table's utilization share is
scaled by e^U(-0.5, 0.5) (all shares scaled back under 0.99 m if the sum passes it). A candidate
is accepted when its ratio is at least the current one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Callable

import numpy as np

from staleness_lab.api import simulate
from staleness_lab.model import Table, Workload
from staleness_lab.theory.lagsplit import worst_lags
from staleness_lab.theory.leontyev.checks import observe
from staleness_lab.theory.leontyev.slot import slot_staleness_bounds
from staleness_lab.theory.leontyev.tasks import TaskSet, exact
from staleness_lab.theory.leontyev.workloads import from_workload
from staleness_lab.theory.records import within

HORIZON = 60.0
PERIODS = (2.0, 3.0, 4.0, 5.0)


@dataclass(frozen=True)
class Feed:
    """One base table of an instance: period, slot origin phi (= a*_1), jitters, cost terms and
    its files as (arrival, timestamp) lists."""

    p: float
    phi: float
    J: float
    kappa: float
    beta: float
    arrivals: tuple[float, ...]
    stamps: tuple[float, ...]

    def slot(self, j: int) -> float:
        return self.phi + j * self.p

    @property
    def lmax(self) -> float:
        return max(self.phi, self.p + self.J + self.kappa)


@dataclass(frozen=True)
class Instance:
    """A candidate: ``feeds``, utilization ``shares`` (one per feed, then the view's), the view's
    sources (empty: no view) and the track count."""

    feeds: tuple[Feed, ...]
    shares: tuple[float, ...]
    view: tuple[int, ...]
    tracks: int

    def workload(self) -> Workload:
        tables = []
        for k, f in enumerate(self.feeds):
            e = self.shares[k] * f.p
            alpha = e - f.beta * f.lmax
            tables.append(Table(f"B{k}", alpha=alpha, beta=f.beta, budget=e, nominal_period=f.p,
                                arrivals=[[a, s] for a, s in zip(f.arrivals, f.stamps)]))
        if self.view:
            p = max(self.feeds[i].p for i in self.view)
            e = self.shares[-1] * p
            tables.append(Table("V", alpha=e, beta=0.0, budget=e, sources=tuple(f"B{i}" for i in self.view)))
        return Workload(tables=tuple(tables), tracks=self.tracks, horizon=HORIZON, seed=0)

    def task_set(self, w: Workload) -> TaskSet:
        """The workload's gedf-np task set with each feed's own phi (its first slot), J and kappa."""
        ts = from_workload(w, "gedf-np")
        tasks = list(ts.tasks)
        for k, f in enumerate(self.feeds):
            tasks[k] = replace(tasks[k], phi=exact(f.phi, "phi"), J=exact(f.J, "J"), kappa=exact(f.kappa, "kappa"))
        return TaskSet(tasks=tuple(tasks), m=ts.m)


@dataclass(frozen=True)
class Scored:
    """An instance with, per table, the slot bound and the observed worst lag of one gedf-np run."""

    instance: Instance
    bounds: tuple[Fraction, ...]
    observed: tuple[float, ...]

    @property
    def ratio(self) -> float:
        return max(o / float(b) for o, b in zip(self.observed, self.bounds))

    @property
    def broken(self) -> bool:
        return any(not within(o, float(b)) for o, b in zip(self.observed, self.bounds))


def score(instance: Instance, bound: Callable[[TaskSet], tuple[Fraction, ...]] = slot_staleness_bounds) -> Scored:
    """The instance's ``bound`` per table (default the slot bound) and its observed worst lags."""
    w = instance.workload()
    bounds = bound(instance.task_set(w))
    lags = worst_lags(observe(simulate(w, "gedf-np").trace))
    return Scored(instance, bounds, tuple(until - since for since, until in lags))


def _file_window(f: Feed, j: int, arrivals: list[float], rng: np.random.Generator) -> float:
    lo = max(f.slot(j) - f.J, arrivals[j - 1] if j else 0.0)
    hi = min(f.slot(j), arrivals[j + 1] if j + 1 < len(arrivals) else math.inf)
    return float(rng.uniform(lo, hi))


def _stamp(f: Feed, arrival: float, j: int, stamps: list[float], rng: np.random.Generator) -> float:
    lo = max(arrival - f.kappa, stamps[j - 1] if j else 0.0)
    hi = min(arrival, stamps[j + 1] if j + 1 < len(stamps) else math.inf)
    return float(rng.uniform(lo, hi))


def start(seed: int, tracks: int, tables: int) -> Instance:
    """A random instance: ``tables`` replayed base feeds (half of them with jitter) and, on odd
    seeds, a view over one or two of them; U_sum between 50 % and 99 % of ``tracks``."""
    rng = np.random.default_rng([seed, tracks, tables, 0x736C6F74])  # "slot"
    feeds = []
    for _ in range(tables):
        p = float(rng.choice(PERIODS))
        J = p * float(rng.choice([0.0, 0.25, 0.5, 1.0]))
        kappa = p * float(rng.choice([0.0, 0.0, 0.25]))
        phi = J + kappa + 0.5 + float(rng.uniform(0.0, p))
        f = Feed(p, phi, J, kappa, float(rng.choice([0.0, 0.02, 0.05])), (), ())
        arrivals: list[float] = []
        stamps: list[float] = []
        j = 0
        while f.slot(j) <= HORIZON:
            arrivals.append(max(f.slot(j) - float(rng.uniform(0.0, J)), arrivals[-1] if arrivals else 0.0))
            stamps.append(max(arrivals[-1] - float(rng.uniform(0.0, kappa)), stamps[-1] if stamps else 0.0))
            j += 1
        feeds.append(replace(f, arrivals=tuple(arrivals), stamps=tuple(stamps)))
    view = tuple(sorted(rng.choice(tables, size=min(tables, int(rng.integers(1, 3))), replace=False).tolist())
                 ) if seed % 2 else ()
    weights = rng.uniform(0.2, 1.0, tables + bool(view))
    shares = _capped(weights / weights.sum() * float(rng.uniform(0.5, 0.99)) * tracks, tracks)
    return _feasible(Instance(tuple(feeds), shares, view, tracks))


def _capped(shares: np.ndarray, tracks: int) -> tuple[float, ...]:
    """Shares at most 0.9 each (and each budget covers a job's alpha) and summing under 0.99 m."""
    s = np.minimum(shares, 0.9)
    if s.sum() > 0.99 * tracks:
        s = s * (0.99 * tracks / s.sum())
    return tuple(float(v) for v in s)


def _feasible(inst: Instance) -> Instance:
    """Raise any share whose budget would not cover the beta term (alpha must stay > 0)."""
    shares = list(inst.shares)
    for k, f in enumerate(inst.feeds):
        shares[k] = max(shares[k], (f.beta * f.lmax + 0.01) / f.p)
    return replace(inst, shares=_capped(np.array(shares), inst.tracks))


def mutate(inst: Instance, rng: np.random.Generator) -> Instance:
    """One move (module docstring)."""
    if rng.random() < 0.6:
        k = int(rng.integers(len(inst.feeds)))
        f = inst.feeds[k]
        arrivals, stamps = list(f.arrivals), list(f.stamps)
        j = int(rng.integers(len(arrivals)))
        arrivals[j] = _file_window(f, j, arrivals, rng)
        stamps[j] = _stamp(f, arrivals[j], j, stamps, rng)
        feeds = list(inst.feeds)
        feeds[k] = replace(f, arrivals=tuple(arrivals), stamps=tuple(stamps))
        return replace(inst, feeds=tuple(feeds))
    shares = np.array(inst.shares)
    shares[int(rng.integers(len(shares)))] *= math.exp(rng.uniform(-0.5, 0.5))
    return _feasible(replace(inst, shares=_capped(shares, inst.tracks)))


@dataclass
class Search:
    """One restart's outcome: the start and best ratios, accepted moves, and every breaker."""

    start_ratio: float
    best: Scored
    accepted: int = 0
    breakers: list[Scored] = field(default_factory=list)


def search(seed: int, tracks: int = 2, tables: int = 3, steps: int = 40,
           bound: Callable[[TaskSet], tuple[Fraction, ...]] = slot_staleness_bounds) -> Search:
    """One seeded hill-climbing restart (module docstring) of ``steps`` moves against ``bound``
    (a function of the instance's task set; the slot bound unless a test hands another)."""
    rng = np.random.default_rng([seed, tracks, tables, steps])
    current = score(start(seed, tracks, tables), bound)
    out = Search(current.ratio, current)
    for _ in range(steps):
        candidate = score(mutate(current.instance, rng), bound)
        if candidate.broken:
            out.breakers.append(candidate)
        if candidate.ratio >= current.ratio:
            current, out.accepted = candidate, out.accepted + 1
    out.best = current
    return out
