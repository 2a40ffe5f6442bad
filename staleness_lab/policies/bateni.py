"""The schedulers of Bateni, Golab, Hajiaghayi and Karloff (staleness and stretch of batched
warehouse updates): MYOPIC and GROUPANDRUN (Sec. 2, Fig. 2), the other eager orders the digest
ships (largest-first, newest-first, round-robin) and two non-eager baselines (threshold
batching, periodic polling). References are to the digest,
``shared/specs/bateni-staleness-stretch.md``.

Model mapping: a Bateni table is ``alpha: 0, beta: alpha_i`` with replayed ``arrivals``, weight
``priority`` and ``p = tracks``. The engine already batches as the paper does: a job takes every
update released by its start (arrivals at an instant come before the dispatch at that instant),
at most one job per table, and free tracks are handed out lowest index first (digest A7). The
``release`` the engine passes to ``key`` is the release time of the table's earliest pending
update; ``n`` is its pending data span, the batch length b.

All of them also run Golab-model workloads (periodic feeds, ``alpha > 0``, derived tables,
``chop``, ``min_separation``) except GROUPANDRUN on derived tables; each docstring says what they
do there. No theorem of the paper applies when ``alpha > 0`` (digest, Corrections 1).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from staleness_lab.errors import InputError
from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.policies.options import Configurable, Option
from staleness_lab.policies.registry import register
from staleness_lab.theory.bateni.grouping import allocate, parse_groups, stab_groups, track_ranges


def _earliest_release(i: int, now: float, release: float, n: float) -> float:
    """MYOPIC's key: the release of the table's earliest pending update (ties: position)."""
    return release


@register
class Myopic(Configurable):
    """MYOPIC (Bateni et al., Sec. 2): the ready table whose earliest pending update was
    released first runs first, on the lowest free track; ties go to the lower table position.

    The key is the *release* time, not the update's start time (digest, Sec. 2). This is the
    engine's release, so MYOPIC gives exactly ``fifo``'s trace on every workload. On Golab-model
    workloads the release is the engine's: delayed by ``min_separation``, and kept by a table
    whose chopped job left data unclaimed (then earlier than its earliest unclaimed arrival).
    """

    name = "myopic"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        return BoundPolicy(key=_earliest_release)


@register
class LargestFirst(Configurable):
    """Largest batch first, an eager policy (Bateni et al., Sec. 2: Theorem 3.1 covers every
    eager policy; digest E6): the ready table with the most pending data runs first; ties go to
    the lower table position.

    The key is ``-n``, re-keyed whenever a waiting table's data grows. ``n`` is what the job
    would load now: after chopping on Golab-model workloads, and a derived table's data up to its
    trailing edge. The fixed cost ``alpha`` plays no part.
    """

    name = "largest-first"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        return BoundPolicy(key=lambda i, now, release, n: -n, rekey_on_data=True)


@register
class NewestFirst(Configurable):
    """Newest first, an eager policy (Bateni et al., Sec. 2: Theorem 3.1 covers every eager
    policy): the latest release runs first; ties go to the lower table position.

    Reading: "release" is the engine's release, the release time of the table's *earliest*
    pending update, so this is MYOPIC reversed (the table that has waited least goes first),
    and a table's key does not change while it waits, even if newer updates arrive. On
    Golab-model workloads the release is the engine's (see ``myopic``).
    """

    name = "newest-first"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        return BoundPolicy(key=lambda i, now, release, n: -release)


@register
class RoundRobin(Configurable):
    """Round-robin, an eager policy (Bateni et al., Sec. 2: Theorem 3.1 covers every eager
    policy): the ready table at the next table position after the last one started, cyclically
    (the first decision starts from position 0); with several free tracks, the next ones in the
    same cycle go to the next tracks in index order.

    A key cannot express "next after the last started" (keys are computed when a table becomes
    ready), so this is a placement: at each decision it sorts the ready tables by their cyclic
    distance from the last started position + 1. Table kinds do not matter: it runs
    Golab-model workloads unchanged.
    """

    name = "round-robin"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        n = len(workload.tables)
        last = [-1]

        def place(order: list[int], idle: list[int], now: float, view: Any) -> list[tuple[int, int]]:
            start = last[0] + 1
            return list(zip(sorted(order, key=lambda i: (i - start) % n), idle))

        def on_start(i: int, track: int, now: float) -> None:
            last[0] = i

        return BoundPolicy(key=lambda i, now, release, pending: 0.0, place=place, on_start=on_start)


@register
class Threshold(Configurable):
    """Threshold batching, a non-eager baseline against Bateni et al.'s eager algorithms (Sec. 2;
    digest Sec. 2 and Sec. 7 check 2): a ready table starts only when its pending data is at
    least ``min_delta``, or when no later feed arrival can add to it; eligible tables run in
    MYOPIC order on the lowest free tracks.

    * Pending data is all the table's unclaimed available data, before chopping (so a
      ``min_delta`` above ``chop`` periods still lets a table start).
    * "No later arrival": :meth:`~staleness_lab.sim.engine.EngineView.next_arrival` is None for
      the table (a replayed feed past its last arrival) or, for a derived table, for every one of
      its base ancestors. A periodic feed always has a later arrival, so its tables wait for
      ``min_delta``. The last update of a replayed feed therefore starts even below
      ``min_delta``, and no data is held back forever.
    * Held tables stay ready and are reconsidered at every later event (the engine consults the
      placement at every arrival and completion instant while a track is free), in particular
      whenever their data grows.

    With ``min_delta = 0`` every ready table is eligible and the trace is MYOPIC's.
    """

    name = "threshold"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option(
            "min_delta", float, 0.0,
            "the pending data a table needs before it may start (its last update starts regardless)", minimum=0,
        ),
    )

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        min_delta = self.options["min_delta"]
        tables = workload.tables
        # per table, the feeds whose later arrivals can add to it: itself, or a view's base ancestors
        feeds = [
            (k,) if table.is_base else tuple(a for a in sorted(workload.ancestor_sets[k]) if tables[a].is_base)
            for k, table in enumerate(tables)
        ]

        def place(order: list[int], idle: list[int], now: float, view: Any) -> list[tuple[int, int]]:
            eligible = (
                i for i in order
                if view.available(i) - view.freshness(i) >= min_delta
                or all(view.next_arrival(b, now) is None for b in feeds[i])
            )
            return list(zip(eligible, idle))

        return BoundPolicy(key=_earliest_release, place=place)


@register
class Polling(Configurable):
    """Periodic polling, a non-eager baseline against Bateni et al.'s eager algorithms (Sec. 2;
    digest Sec. 2): ready tables start only at the polling instants ``k * interval``
    (k = 0, 1, ...), in MYOPIC order on the lowest free tracks.

    A table that becomes ready, or finds a track free, between polls waits for the next poll:
    the policy asks the engine for a timer there (:meth:`EngineView.wake_at`), so the poll
    happens even when no arrival or completion falls on it. Polling instants are the floats
    ``k * interval`` exactly; an arrival or completion at such an instant is a poll too. Table
    kinds do not matter: it runs Golab-model workloads unchanged.
    """

    name = "polling"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option("interval", float, 1.0, "the time between polls: ready tables start only at multiples of it", above=0),
    )

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        interval = self.options["interval"]
        asked = [-math.inf]  # the last wake-up asked for

        def place(order: list[int], idle: list[int], now: float, view: Any) -> list[tuple[int, int]]:
            if round(now / interval) * interval == now:
                return list(zip(order, idle))
            k = math.floor(now / interval) + 1
            poll = k * interval
            if poll <= now:  # rounding put k * interval at or before now
                poll = (k + 1) * interval
            if poll != asked[0]:
                asked[0] = poll
                view.wake_at(poll)
            return []

        return BoundPolicy(key=_earliest_release, place=place)


def declared_lengths(workload: Workload) -> list[tuple[float, float]]:
    """Every table's ``(Lmin, Lmax)`` for grouping (Bateni et al., Sec. 2): a base table's
    :meth:`~staleness_lab.model.Table.declared_lengths`, a derived table's
    ``(max Lmin, max Lmax)`` over its base ancestors (see :class:`GroupAndRun`).

    Raises :class:`InputError` naming ``tables[k].length_range`` for a replayed feed that adds
    no data (it has no lengths to group by)."""
    tables = workload.tables
    base: dict[int, tuple[float, float]] = {}
    for k, table in enumerate(tables):
        if table.is_base:
            declared = table.declared_lengths()
            if declared is None:
                raise InputError(
                    f"tables[{k}].length_range",
                    "the feed adds no data, so it has no update lengths to group by: declare length_range",
                    table=table.name,
                )
            base[k] = declared
    out: list[tuple[float, float]] = []
    for k, table in enumerate(tables):
        if table.is_base:
            out.append(base[k])
        else:
            ancestors = [base[a] for a in workload.ancestor_sets[k] if a in base]
            out.append((max(lmin for lmin, _ in ancestors), max(lmax for _, lmax in ancestors)))
    return out


@register
class GroupAndRun(Configurable):
    """GROUPANDRUN (Bateni et al., Sec. 2, Fig. 2; digest A8): the tables are split into g
    B-quasiperiodic groups, group k gets ``p_k = ceil((p - g)|T_k|/t)`` consecutive tracks (in
    group order), and MYOPIC runs each group on its own tracks.

    * Groups: by default the minimum number, by greedy stabbing of each table's feasible
      ``[Lmax, 2*Lmin]`` from :meth:`~staleness_lab.model.Table.declared_lengths`
      (``length_range``, else a replayed feed's listed update lengths, else a periodic feed's
      period); option ``groups`` gives them instead (``"a,b;c"``: every table exactly once, each
      group B-quasiperiodic). See :mod:`staleness_lab.theory.bateni.grouping`.
    * ``p <= g`` raises :class:`~staleness_lab.errors.Infeasible` (a result, not an error).
    * Dispatch (a placement): the ready tables in MYOPIC order, each on the lowest free track of
      its group. The ``p - sum p_k`` leftover tracks stay idle, as in the paper, unless
      ``use_leftover`` (non-paper).
    * Golab-model workloads: periodic feeds group by their period. A derived table has no
      declared lengths of its own (its data advances with its sources' completions); it is
      grouped with those of its slowest base ancestors, ``(max Lmin, max Lmax)`` over them, as a
      view's period is its largest ancestor period (:attr:`~staleness_lab.model.Workload.periods`).
      That interval is never empty, but the view's actual update lengths are not bounded by it,
      so no theorem of the paper covers it.
    """

    name = "group-and-run"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option(
            "groups", str, "",
            "the groups as table names, ',' within and ';' between groups (e.g. 'a,b;c'); empty: stab on declared lengths",
        ),
        Option(
            "use_leftover", bool, False,
            "non-paper: the leftover tracks take any group's ready tables in MYOPIC order (the paper leaves them idle)",
        ),
    )

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        names = [t.name for t in workload.tables]
        lengths = declared_lengths(workload)
        text = self.options["groups"]
        groups = parse_groups(text, names, lengths) if text else stab_groups(lengths, names)
        tracks = track_ranges(allocate([len(g) for g in groups], workload.tracks))
        group_of = [0] * len(names)
        for k, members in enumerate(groups):
            for i in members:
                group_of[i] = k
        leftover = len(groups)  # the pool of leftover tracks, after the groups' pools
        pool_of = [leftover] * workload.tracks
        for k, owned in enumerate(tracks):
            for r in owned:
                pool_of[r] = k
        use_leftover = self.options["use_leftover"]

        def place(order: list[int], idle: list[int], now: float, view: Any) -> list[tuple[int, int]]:
            free: list[list[int]] = [[] for _ in range(leftover + 1)]  # free tracks per pool, descending
            for r in reversed(idle):
                if pool_of[r] != leftover or use_leftover:
                    free[pool_of[r]].append(r)
            left = sum(len(pool) for pool in free)
            out: list[tuple[int, int]] = []
            for i in order:  # MYOPIC order
                if not left:
                    break
                pool = free[group_of[i]] or free[leftover]
                if pool:
                    out.append((i, pool.pop()))
                    left -= 1
            return out

        return BoundPolicy(key=_earliest_release, place=place)
