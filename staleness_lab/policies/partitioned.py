"""EDF-Partitioned with track promotion (Golab et al., Sec. 3.2.1 and 3.2.2).

The tables are packed onto tracks so that every track, scheduled alone by nonpreemptive EDF,
would load each batch before the next arrives; jobs then run on their home track, on a free
track, or, when the test below allows it, on another idle track ("promotion").

Per table, with nominal costs (no variability, no slowdown: the scheduler never sees them) and
the period P_i of :attr:`Workload.periods` (a view's is its largest ancestor period):
``E_i = E_i(P_i) = alpha_i + beta_i * P_i`` and ``u_i = E_i / P_i``. Per track r over the tables
homed there: ``U_r = sum u_i``, ``Emax_r = max E_i``, ``Pmin_r = min P_i``.

* **Single-track condition** (Sec. 3.2.1, the simplified form of the nonpreemptive EDF
  sufficient condition the paper cites): ``U_r <= 1 - Emax_r / Pmin_r``.
* **Fit test** ``fits(J, r)``: the condition for r's home set with J added,
  ``U_r + u_J <= 1 - max(Emax_r, E_J) / min(Pmin_r, P_J)``.
* **Packing** (Sec. 3.2.1, "sort by increasing period, open a new track whenever the condition
  would be violated"): greedy *next-fit*. Tables sorted by period (ties: file position); each
  goes on the current track if it fits there, else on a new track that becomes current. A table
  that opens a track is placed without the test (nothing else could hold it). Next-fit is the
  reading the Sec. 3.2.4 example requires: first-fit would put J4 back on track 0 with J1 and J2
  (0.625 <= 1 - 1.25/4). Tracks left over are *free*; a packing that needs more tracks than the
  workload has cannot run, and binding raises :class:`~staleness_lab.errors.Infeasible`.
* **Promotability** (Sec. 3.2.2): J may run on a track r that is neither its home nor free iff
  ``fits(J, r)`` against r's (static) home set. The printed inequality leaves ``u_J`` out of the
  left side; with it out, J1, J2 and J3 of the Sec. 3.2.4 example would be promotable too, while
  the text says only J4 is. We keep ``+ u_J``, which also makes promotion mirror packing.
* **Dispatch** (Sec. 3.2.2, the algorithm after the promotability condition), at every
  decision, walking the ready tables in the basic algorithm's order while a track is idle:
  (a) the home track if idle; (b) else the lowest idle free track; (c) else the idle tracks the
  table is promotable to, in index order: the aggressive variant takes the first, the
  non-aggressive one only a track that no table later in the order calls home; (d) else the
  table waits for the next decision. "Available" in the paper's step 2.c.i is an idle track (the
  engine hands the placement only idle tracks).

The basic algorithm (option ``basic``: ``edf``, ``edf-p`` or ``max-benefit``, the paper's
experiments use Max Benefit) supplies the order, with the priority inheritance options of
Sec. 3.3. Only with EDF does the per-track feasibility argument hold.

Fit tests allow a slack of 1e-9, so utilizations that are exact on paper (e.g. nine jobs of
u = 1/9) do not fail by rounding.

**Cost.** Packing and the promotability table are computed once, at bind time (O(n log n) and
O(n * tracks)). Ready tables often wait while their home track is busy and another track idles,
so a decision is due at nearly every event. The rule is therefore also given as data
(:class:`~staleness_lab.policies.base.PlacementRule`): the compiled core runs it by default, and
the Python engine (:mod:`staleness_lab.sim.placement`) skips with a bitmask test the decisions
in which no ready table has an idle candidate track, instead of sorting the ready list and
calling ``place``, which stays the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from staleness_lab.errors import Infeasible
from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy, PlacementRule
from staleness_lab.policies.inheritance import INHERITANCE_OPTIONS, Inheriting
from staleness_lab.policies.options import Option
from staleness_lab.policies.registry import get_policy, register

#: Slack of every fit test (see the module docstring).
SLACK = 1e-9

BASICS = ("edf", "edf-p", "max-benefit")

BASIC_OPTION = Option(
    "basic", str, "max-benefit", "the basic algorithm that orders the ready tables (Golab et al., Sec. 3.1)",
    choices=BASICS,
)


@dataclass(frozen=True)
class Nominal:
    """Per-table nominal quantities the partitioners use: period, E_i(P_i) and u_i."""

    period: tuple[float, ...]
    cost: tuple[float, ...]
    utilization: tuple[float, ...]


def nominal(workload: Workload, who: str = "edf-partitioned") -> Nominal:
    """P_i, E_i(P_i) = alpha_i + beta_i * P_i and u_i = E_i(P_i) / P_i for every table."""
    periods = workload.require_periods(who)
    costs = tuple(t.cost(p) for t, p in zip(workload.tables, periods))
    return Nominal(tuple(periods), costs, tuple(e / p for e, p in zip(costs, periods)))


def fits(u_r: float, emax_r: float, pmin_r: float, u: float, e: float, p: float) -> bool:
    """The fit test: a job (u, E, P) joins a track (U_r, Emax_r, Pmin_r) and the track still
    satisfies U <= 1 - Emax/Pmin. An empty track is (0, 0, inf)."""
    return u_r + u <= 1.0 - max(emax_r, e) / min(pmin_r, p) + SLACK


@dataclass(frozen=True)
class Packing:
    """The result of :func:`pack`.

    ``tracks[r]``: the tables homed on track r, in packing order; ``utilization[r]``,
    ``emax[r]``, ``pmin[r]``: U_r, Emax_r, Pmin_r; ``home[i]``: table i's home track;
    ``available``: the workload's number of tracks; ``free``: the tracks left over (empty
    when the packing does not fit).
    """

    tracks: tuple[tuple[int, ...], ...]
    utilization: tuple[float, ...]
    emax: tuple[float, ...]
    pmin: tuple[float, ...]
    home: tuple[int, ...]
    available: int

    @property
    def needed(self) -> int:
        """How many tracks the packing uses."""
        return len(self.tracks)

    @property
    def feasible(self) -> bool:
        return self.needed <= self.available

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(self.needed, self.available)) if self.feasible else ()

    def sizes(self) -> list[int]:
        """Number of tables per track."""
        return [len(t) for t in self.tracks]


def pack(workload: Workload, tracks: int | None = None) -> Packing:
    """Greedy next-fit packing by increasing period with the fit test (module docstring).

    ``tracks`` overrides the number of tracks available (default: the workload's); the packing
    itself does not depend on it, only which tracks are free and whether it is feasible.
    """
    nom = nominal(workload)
    order = sorted(range(len(workload.tables)), key=lambda i: (nom.period[i], i))
    homes: list[list[int]] = []
    u_r: list[float] = []
    emax: list[float] = []
    pmin: list[float] = []
    home = [0] * len(workload.tables)
    for i in order:
        u, e, p = nom.utilization[i], nom.cost[i], nom.period[i]
        if homes and fits(u_r[-1], emax[-1], pmin[-1], u, e, p):
            homes[-1].append(i)
            u_r[-1] += u
            emax[-1] = max(emax[-1], e)
            pmin[-1] = min(pmin[-1], p)
        else:
            homes.append([i])
            u_r.append(u)
            emax.append(e)
            pmin.append(p)
        home[i] = len(homes) - 1
    return Packing(
        tracks=tuple(tuple(h) for h in homes),
        utilization=tuple(u_r),
        emax=tuple(emax),
        pmin=tuple(pmin),
        home=tuple(home),
        available=workload.tracks if tracks is None else tracks,
    )


def promotable(packing: Packing, workload: Workload) -> set[tuple[int, int]]:
    """Every (table, track) pair such that the table may be promoted to that track: a packed
    track other than its home on which it passes the fit test against the track's home set."""
    nom = nominal(workload)
    out: set[tuple[int, int]] = set()
    for i in range(len(workload.tables)):
        for r in range(packing.needed):
            if r != packing.home[i] and fits(
                packing.utilization[r], packing.emax[r], packing.pmin[r],
                nom.utilization[i], nom.cost[i], nom.period[i],
            ):
                out.add((i, r))
    return out


def allowed_tracks(packing: Packing, workload: Workload) -> list[set[int]]:
    """Per table, every track a job of it may ever run on: home, free or promotable."""
    out = [{packing.home[i], *packing.free} for i in range(len(workload.tables))]
    for i, r in promotable(packing, workload):
        out[i].add(r)
    return out


class LaterTables:
    """For the non-aggressive rules: per group (a home track, a cluster, a claimed track), how
    many ready tables after position ``pos`` of the order belong to it (``groups_of[i]``: the
    groups of table i). Counted on first use, then updated incrementally as ``pos`` advances,
    so a decision stays linear in the ready list."""

    def __init__(self, order: Sequence[int], groups_of: Sequence[Sequence[int]], n_groups: int) -> None:
        self._order = order
        self._groups_of = groups_of
        self._n_groups = n_groups
        self._counts: list[int] | None = None
        self._counted = 0  # the counts cover order[self._counted:]

    def after(self, pos: int) -> list[int]:
        """Counts per group of the tables at positions > ``pos`` (``pos`` never decreases)."""
        if self._counts is None:
            self._counts = [0] * self._n_groups
            for q in self._order[pos + 1:]:
                for g in self._groups_of[q]:
                    self._counts[g] += 1
        else:
            for q in self._order[self._counted:pos + 1]:
                for g in self._groups_of[q]:
                    self._counts[g] -= 1
        self._counted = pos + 1
        return self._counts


def make_place(
    home: Sequence[int], free_tracks: Sequence[int], promo: Sequence[Sequence[int]], n_tracks: int, aggressive: bool
):
    """The dispatch rule (module docstring) as a placement function for the engine.

    ``promo[i]``: the tracks table i is promotable to, ascending; ``free_tracks`` ascending.
    """
    free_set = frozenset(free_tracks)
    home_of = [(h,) for h in home]

    def place(order: list[int], idle: list[int], now: float, view: Any) -> list[tuple[int, int]]:
        avail = set(idle)
        out: list[tuple[int, int]] = []
        later = LaterTables(order, home_of, n_tracks)  # per track: later tables homed there
        for pos, i in enumerate(order):
            track = home[i]
            if track not in avail:
                track = first_free(idle, avail, free_set)
                if track < 0:
                    for r in promo[i]:
                        if r not in avail:
                            continue
                        if not aggressive and later.after(pos)[r]:
                            continue
                        track = r
                        break
                    if track < 0:
                        continue
            avail.discard(track)
            out.append((i, track))
            if not avail:
                break
        return out

    return place


def first_free(idle: list[int], avail: set[int], free_set: frozenset[int]) -> int:
    """The lowest-index track that is still available in this round and free (homes no table),
    or -1: step b of both partitioners' dispatch."""
    if free_set:
        for r in idle:
            if r in avail and r in free_set:
                return r
    return -1


class _Partitioner(Inheriting):
    """What both partitioned schedulers share: the basic algorithm built from the options."""

    def basic_bound(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        return get_policy(self.options["basic"], **self.inheritance_options()).bind(workload, rng)


@register
class EdfPartitioned(_Partitioner):
    """EDF-Partitioned with track promotion (Golab et al., Sec. 3.2.1-3.2.2): tables packed onto
    tracks by period with the nonpreemptive EDF condition; jobs run on their home track, a free
    track, or a track they are promotable to.

    See :mod:`staleness_lab.policies.partitioned` for the packing, the fit test (read with
    ``+ u_J``), the dispatch rule and the readings taken. Needs a period for every table and
    raises :class:`~staleness_lab.errors.Infeasible` when the packing needs more tracks than the
    workload has.
    """

    name = "edf-partitioned"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        BASIC_OPTION,
        Option("aggressive", bool, False, "promote to any idle track, not only to one no later ready table calls home"),
        *INHERITANCE_OPTIONS,
    )

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        workload.require_periods(self.name)
        packing = pack(workload)
        if not packing.feasible:
            raise Infeasible(
                f"{self.name} needs {packing.needed} tracks to pack the {len(workload.tables)} tables "
                f"(next-fit by period with the EDF condition) but the workload has {workload.tracks}"
            )
        promo: list[list[int]] = [[] for _ in workload.tables]
        for i, r in sorted(promotable(packing, workload)):
            promo[i].append(r)
        basic = self.basic_bound(workload, rng)
        aggressive = self.options["aggressive"]
        place = make_place(packing.home, packing.free, promo, workload.tracks, aggressive)
        # the same rule as data: home, then the free tracks, then the promotable ones (borrowed)
        rule = PlacementRule(
            candidates=tuple((packing.home[i], *packing.free, *promo[i]) for i in range(len(promo))),
            borrowed=tuple((False,) * (1 + len(packing.free)) + (True,) * len(promo[i]) for i in range(len(promo))),
            claims=tuple((h,) for h in packing.home),
            aggressive=aggressive,
        )
        return BoundPolicy(key=basic.key, rekey_on_data=basic.rekey_on_data, place=place, compiled=basic.compiled,
                           place_rule=rule)
