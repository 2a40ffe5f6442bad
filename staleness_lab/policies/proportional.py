"""Proportional partitioning (Golab et al., Sec. 3.2.3).

Tables are grouped into clusters of similar jobs, each cluster gets a share of the tracks in
proportion to its utilization, and jobs of shorter clusters may borrow the tracks of longer ones.
Nominal quantities as in :mod:`staleness_lab.policies.partitioned`: ``E_i = E_i(P_i)``,
``u_i = E_i / P_i`` (no variability, no slowdown).

**Clustering** (parameter k > 0). Tables sorted by ``E_i`` ascending (ties: period, then file
position); the first opens cluster 0; each next table J joins the current cluster when it is
"close" to it, else opens a new cluster that becomes current. Closeness (option ``clustering``):

* ``period`` (default): ``P_J <= k * (smallest period in the current cluster)``. The printed
  rule compares an execution time with a period, which contradicts the paper's own k = 2 example
  (Sec. 3.2.4: it would put all four jobs in one cluster, not {J1, J2} and {J3, J4}), its remark
  that k = 10 separates 5-minute, hourly and daily feeds, and the two clusters its Fig. 9
  workload has at k = 1. The period rule agrees with all three.
* ``cost``: the rule as printed, ``E_J < k * (smallest period in the current cluster)``.

**Allocation** (clusters numbered in creation order, so the last holds the longest jobs).
``UC_j = sum of u_i over cluster j``, ``U_tot = sum_j UC_j`` (the printed "sum C_j" is read as
the sum of the UC_j). The factor M makes ``M * U_tot`` a whole number of tracks:

* ``tracks_mode=basic``: ``M = ceil(U_tot) / U_tot`` (tracks beyond ``ceil(U_tot)`` stay free);
* ``tracks_mode=all``: ``M = N / U_tot`` (every track is allocated).

When ``U_tot > N`` both modes use ``M = N / U_tot``: the paper asks for ``M >= 1`` and says
nothing of that case, and there are no more tracks to give. The last cluster gets the interval
``[0, M * UC_c)`` and each earlier cluster the interval right above its successor's, so long
jobs sit on low track numbers and short jobs on high ones.

**Integer tracks.** Track r is the interval ``[r, r + 1)``. A cluster with interval
``[lo, hi)`` has the *bottom* track ``floor(lo)`` (possibly shared with the cluster below) and
the *upper* tracks ``floor(lo) + 1 .. ceil(hi) - 1`` (its own). Tracks from ``M * U_tot`` up
are free. The paper's example labels ("C_0 receives tracks 1 and 2, C_1 track 2") do not match
its allocation loop; we follow the loop, and the example's structure holds: the short cluster
is homed on two tracks, the long one on a single track that it shares.

**Dispatch** (the paper's steps 2b-2f), walking the ready tables in the basic algorithm's order
while a track is idle, for a table of cluster j: (a) its lowest idle upper track; (b) else its
bottom track if idle; (c) else the lowest idle free track; (d) else an idle track below its
bottom track (a longer cluster's), lowest first: the aggressive variant takes any, the
non-aggressive one only a track that steps (a)-(b) would not give to a table later in the order,
i.e. one that is neither an upper nor the bottom track of a later table's cluster; (e) else the
table waits. Long jobs never borrow short clusters' tracks.

The basic algorithm (option ``basic``) and priority inheritance work as in EDF-Partitioned.

**Cost.** Placement walks the ready list once per decision (plus one pass over it the first time
the non-aggressive test is needed). Like every policy with a placement, it is consulted through
the engine's placement path, which hands it the whole ready list: on the Table 2 workload that
path runs at about half the events per second of an order-only policy, and Proportional adds
little to it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from staleness_lab.errors import InputError
from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy, PlacementRule
from staleness_lab.policies.inheritance import INHERITANCE_OPTIONS
from staleness_lab.policies.options import Option
from staleness_lab.policies.partitioned import BASIC_OPTION, LaterTables, _Partitioner, first_free, nominal
from staleness_lab.policies.registry import register

RULES = ("period", "cost")
MODES = ("basic", "all")
#: Rounding slack when turning track intervals into whole tracks.
SLACK = 1e-9


def clusters(workload: Workload, k: float = 1.0, rule: str = "period") -> list[list[int]]:
    """The clusters of table positions, in creation order (module docstring)."""
    if rule not in RULES:
        raise InputError("clustering", f"must be one of {', '.join(RULES)}, got {rule!r}")
    if not k > 0:
        raise InputError("k", f"must be > 0, got {k!r}")
    nom = nominal(workload, "proportional")
    order = sorted(range(len(workload.tables)), key=lambda i: (nom.cost[i], nom.period[i], i))
    out: list[list[int]] = []
    pmin = math.inf
    for i in order:
        measure = nom.period[i] if rule == "period" else nom.cost[i]
        close = measure <= k * pmin if rule == "period" else measure < k * pmin
        if out and close:
            out[-1].append(i)
            pmin = min(pmin, nom.period[i])
        else:
            out.append([i])
            pmin = nom.period[i]
    return out


@dataclass(frozen=True)
class Allocation:
    """The result of :func:`allocate`. Per cluster j (creation order): ``utilization[j]`` =
    UC_j, ``lo[j]``/``hi[j]`` its track interval, ``bottom[j]`` and ``upper[j]`` its whole
    tracks. ``free``: tracks allocated to no cluster; ``M`` the adjustment factor;
    ``used`` = M * U_tot, the number of allocated tracks."""

    clusters: tuple[tuple[int, ...], ...]
    utilization: tuple[float, ...]
    total_utilization: float
    M: float
    used: int
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    bottom: tuple[int, ...]
    upper: tuple[tuple[int, ...], ...]
    free: tuple[int, ...]
    tracks: int

    @property
    def cluster_of(self) -> list[int]:
        """Per table position, its cluster."""
        out = [0] * sum(len(c) for c in self.clusters)
        for j, members in enumerate(self.clusters):
            for i in members:
                out[i] = j
        return out

    def home_tracks(self, j: int) -> tuple[int, ...]:
        """The tracks cluster j runs on by steps (a)-(b): its upper tracks and its bottom."""
        return (*self.upper[j], self.bottom[j])


def allocate(
    workload: Workload,
    groups: Sequence[Sequence[int]] | None = None,
    *,
    k: float = 1.0,
    rule: str = "period",
    mode: str = "all",
    tracks: int | None = None,
) -> Allocation:
    """Track allocation for ``groups`` (default: :func:`clusters` with ``k`` and ``rule``) on
    ``tracks`` tracks (default: the workload's), ``mode`` = ``basic`` or ``all``."""
    if mode not in MODES:
        raise InputError("tracks_mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    n_tracks = workload.tracks if tracks is None else tracks
    groups = clusters(workload, k, rule) if groups is None else groups
    nom = nominal(workload, "proportional")
    uc = [sum(nom.utilization[i] for i in g) for g in groups]
    u_tot = sum(uc)
    if mode == "all" or u_tot > n_tracks:
        used = n_tracks
    else:
        used = max(1, math.ceil(u_tot - SLACK))
    m = used / u_tot
    c = len(groups)
    lo = [0.0] * c
    hi = [0.0] * c
    top = 0.0
    for j in range(c - 1, -1, -1):
        lo[j] = top
        top = top + m * uc[j]
        hi[j] = top
    hi[0] = float(used)  # the sum is M * U_tot = used up to rounding
    bottom = [min(math.floor(lo[j] + SLACK), used - 1) for j in range(c)]
    upper = [tuple(range(bottom[j] + 1, min(math.ceil(hi[j] - SLACK), used))) for j in range(c)]
    return Allocation(
        clusters=tuple(tuple(g) for g in groups),
        utilization=tuple(uc),
        total_utilization=u_tot,
        M=m,
        used=used,
        lo=tuple(lo),
        hi=tuple(hi),
        bottom=tuple(bottom),
        upper=tuple(upper),
        free=tuple(range(used, n_tracks)),
        tracks=n_tracks,
    )


def allowed_tracks(alloc: Allocation) -> list[set[int]]:
    """Per table, every track a job of it may ever run on: its cluster's tracks, free tracks
    and every track below its cluster's bottom."""
    out: list[set[int]] = []
    for j in alloc.cluster_of:
        out.append({*alloc.home_tracks(j), *alloc.free, *range(alloc.bottom[j])})
    return out


def make_place(alloc: Allocation, aggressive: bool):
    """The dispatch rule (module docstring) as a placement function for the engine."""
    cluster_of = alloc.cluster_of
    in_cluster = [(j,) for j in cluster_of]
    upper = alloc.upper
    bottom = alloc.bottom
    free_set = frozenset(alloc.free)
    n_clusters = len(alloc.clusters)
    # per track, the clusters that would take it by steps (a)-(b)
    homed_here: list[list[int]] = [[] for _ in range(alloc.tracks)]
    for j in range(n_clusters):
        for r in alloc.home_tracks(j):
            homed_here[r].append(j)

    def place(order: list[int], idle: list[int], now: float, view: Any) -> list[tuple[int, int]]:
        avail = set(idle)
        out: list[tuple[int, int]] = []
        later = LaterTables(order, in_cluster, n_clusters)  # per cluster: later ready tables
        for pos, i in enumerate(order):
            j = cluster_of[i]
            track = -1
            for r in upper[j]:
                if r in avail:
                    track = r
                    break
            if track < 0:
                b = bottom[j]
                if b in avail:
                    track = b
                else:
                    track = first_free(idle, avail, free_set)
                    if track < 0:
                        for r in idle:
                            if r >= b:
                                break
                            if r not in avail:
                                continue
                            if not aggressive and any(later.after(pos)[c] for c in homed_here[r]):
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


def placement_rule(alloc: Allocation, aggressive: bool) -> PlacementRule:
    """:func:`make_place`'s rule as data: per table its cluster's upper tracks, its bottom track,
    the free tracks, then (borrowed) the tracks below its bottom; it claims its cluster's tracks."""
    candidates, borrowed, claims = [], [], []
    for j in alloc.cluster_of:
        own = (*alloc.upper[j], alloc.bottom[j], *alloc.free)
        candidates.append((*own, *range(alloc.bottom[j])))
        borrowed.append((False,) * len(own) + (True,) * alloc.bottom[j])
        claims.append(alloc.home_tracks(j))
    return PlacementRule(tuple(candidates), tuple(borrowed), tuple(claims), aggressive)


@register
class Proportional(_Partitioner):
    """Proportional partitioning (Golab et al., Sec. 3.2.3): clusters of similar jobs get track
    shares proportional to their utilization; shorter clusters may borrow longer ones' tracks.

    See :mod:`staleness_lab.policies.proportional` for the clustering (default: the period rule,
    our reading of the garbled printed rule, which stays available as ``clustering=cost``), the
    allocation, the integer-track reading and the dispatch rule. Needs a period for every table;
    unlike EDF-Partitioned it can run on any number of tracks.
    """

    name = "proportional"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option("k", float, 1.0, "clustering constant: a table joins a cluster within k times its smallest period", above=0.0),
        Option("tracks_mode", str, "all", "M = ceil(U)/U (basic: may leave free tracks) or N/U (all tracks)", choices=MODES),
        Option("aggressive", bool, False, "borrow any idle longer-cluster track, not only one no later ready table needs"),
        Option(
            "clustering", str, "period", "closeness rule: P_J <= k*Pmin (period) or the printed E_J < k*Pmin (cost)",
            choices=RULES,
        ),
        BASIC_OPTION,
        *INHERITANCE_OPTIONS,
    )

    def allocation(self, workload: Workload) -> Allocation:
        """This configuration's allocation for ``workload``."""
        o = self.options
        return allocate(workload, k=o["k"], rule=o["clustering"], mode=o["tracks_mode"])

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        workload.require_periods(self.name)
        alloc = self.allocation(workload)
        basic = self.basic_bound(workload, rng)
        aggressive = self.options["aggressive"]
        return BoundPolicy(
            key=basic.key, rekey_on_data=basic.rekey_on_data, place=make_place(alloc, aggressive),
            compiled=basic.compiled, place_rule=placement_rule(alloc, aggressive),
        )
