"""The one policy protocol every scheduler implements.

A policy is bound to a workload once per run (``bind``) and returns a :class:`BoundPolicy`:

* ``key(table, now, release, n)``: the **order**. It is computed when a table becomes ready or,
  if ``rekey_on_data`` is set, when its pending data grows while it waits; the engine runs the
  ready table with the smallest key first, ties broken by the table's position in the file. ``n``
  is the freshness delta the job would load if started now (after chopping).
* ``place(ordered_ready, free_tracks, now, view)``: optional **placement**. Given the ready
  tables in key order, the free tracks (ascending) and a read-only
  :class:`~staleness_lab.sim.engine.EngineView` of the state, return ``(table, track)`` pairs to
  start now.
  Partitioned schedulers use it; order-only policies leave it ``None`` and the engine fills the
  lowest free track with the first table in order.
* ``on_arrival(table, now)``, ``on_start(table, track, now)``, ``on_completion(table, now)``:
  optional hooks for adaptive schedulers. They observe; they never touch the engine's clock or
  queues.

The **job model** is the policy's too: ``jobs = "golab"`` (the default) is the foundation's
(a job loads everything available, Golab et al., Sec. 2); ``jobs = "sporadic"`` is Leontyev et
al.'s adaptable sporadic task model (:mod:`staleness_lab.sim.sporadic`: one file or one period of
data per job, releases and deadlines by eq. 3-4). Under it a policy may also give

* ``period_at(table, t)``: the task period p(T_k, t) in force at ``t`` (deadline d = r + p(T_k,
  r), eq. 3); default the nominal period p_k;
* ``on_instant(now, view)``: called once per event instant after its completions, timers and
  arrivals and before releases and dispatch; the policy reads and requests through the
  :class:`~staleness_lab.sim.sporadic.SporadicView` (AUS's monitor and OPT, Fig. 6);
* ``annotations()``: extra tidy frames for the trace after the run (AUS's mode log);
* ``key_is_deadline``: the key is the job's (deadline, release) (GEDF-NP's order, A13), so the
  loop reads it off the job instead of calling ``key`` once per release (same order; the key
  stays callable and is tested equal).

A placement that gives a lone ready table the lowest idle track, and loses nothing when it is
not called (no timers, no state it must see at every decision), may say so with ``lone_lowest``:
the engine then starts a lone ready table itself, as the order-only path does (Max Benefit with
Lookahead: with no other ready job there is no alternative set, so it runs J_i).

A policy may also declare its order as ``compiled``, a :class:`CompiledOrder`: one of the built-in
key kinds with its per-table parameters. A placement may also be given as data, ``place_rule``, a
:class:`PlacementRule` (the partitioners' rule as tables of tracks): the Python engine then runs the
rule itself, skipping the decisions no ready table can use, instead of calling ``place`` at every
event. With both, the engine runs the policy in the compiled core
(:mod:`staleness_lab.sim.compiled`). Every path reproduces the reference trace bit for bit; ``key``
and ``place`` stay the reference and the path for every other policy.

:class:`ReleaseOrder` is the one order written here: the earliest release first, with no
placement and no hooks. It is FIFO's order (:class:`~staleness_lab.policies.baselines.Fifo` binds
to it) and the engine's neutral order where the order does not matter (the unlimited-track run of
:mod:`staleness_lab.sim.ideal`), so the engine runs it without knowing any scheduler.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from staleness_lab.model import Workload

KeyFunction = Callable[[int, float, float, float], Any]
PlaceFunction = Callable[[list[int], list[int], float, Any], list[tuple[int, int]]]
Hook = Callable[[int, float], None]
StartHook = Callable[[int, int, float], None]
PeriodFunction = Callable[[int, float], float]
InstantHook = Callable[[float, Any], None]
Annotations = Callable[[], dict[str, Any]]
#: The job models a policy may choose (see the module docstring).
JOB_MODELS = ("golab", "sporadic")


#: The order kinds the compiled core knows, and the key each stands for (``p1``, ``p2``: the
#: per-table parameters; ties go to the table's position, as for every key).
COMPILED_KINDS = {
    "release": "release",  # FIFO
    "deadline": "release + p1[i]",  # EDF
    "deadline-priority": "(release + p1[i], p2[i])",  # EDF with an inherited priority breaking ties
    "priority-deadline": "(p2[i], release + p1[i])",  # EDF-P
    "benefit": "-p1[i] * n / (alpha_i + beta_i * n), re-keyed on data",  # Max Benefit
    "random": "clock + Exp(1) from the policy's stream, clock = the started table's key",  # Random
}


@dataclass(frozen=True)
class CompiledOrder:
    """An order-only policy's key as a kind of :data:`COMPILED_KINDS` with its parameters.

    ``rng`` is the policy's stream (``random``), which the compiled core draws from in the same
    blocks and order as the Python key."""

    kind: str
    p1: tuple[float, ...] = ()
    p2: tuple[float, ...] = ()
    rng: np.random.Generator | None = None

    def __post_init__(self) -> None:
        if self.kind not in COMPILED_KINDS:
            raise ValueError(f"CompiledOrder.kind must be one of {', '.join(COMPILED_KINDS)}, got {self.kind!r}")


@dataclass(frozen=True)
class PlacementRule:
    """A partitioner's dispatch rule as data (Golab et al., Sec. 3.2.2-3.2.3), equal to its ``place``.

    Walking the ready tables in key order while a track is idle, table i takes the first idle
    track of ``candidates[i]`` (its preference order); a candidate with ``borrowed[i][k]`` set is
    skipped, unless ``aggressive``, while a table later in the order has that track in its
    ``claims`` (the tracks its own rule gives it first); a table with no such track waits."""

    candidates: tuple[tuple[int, ...], ...]
    borrowed: tuple[tuple[bool, ...], ...]
    claims: tuple[tuple[int, ...], ...]
    aggressive: bool

    def __post_init__(self) -> None:
        if [len(c) for c in self.candidates] != [len(b) for b in self.borrowed]:
            raise ValueError("PlacementRule: one borrowed flag per candidate track")


@dataclass(frozen=True)
class BoundPolicy:
    """A policy's decisions for one run (see the module docstring)."""

    key: KeyFunction
    rekey_on_data: bool = False
    place: PlaceFunction | None = None
    on_arrival: Hook | None = None
    on_start: StartHook | None = None
    on_completion: Hook | None = None
    jobs: str = "golab"
    period_at: PeriodFunction | None = None
    on_instant: InstantHook | None = None
    annotations: Annotations | None = None
    key_is_deadline: bool = False
    compiled: CompiledOrder | None = None
    place_rule: PlacementRule | None = None
    lone_lowest: bool = False

    def __post_init__(self) -> None:
        if self.jobs not in JOB_MODELS:
            raise ValueError(f"BoundPolicy.jobs must be one of {', '.join(JOB_MODELS)}, got {self.jobs!r}")
        if self.jobs == "golab" and (self.period_at or self.on_instant or self.annotations):
            raise ValueError("period_at, on_instant and annotations belong to the sporadic job model")
        if self.compiled is not None and (self.jobs != "golab" or self.on_arrival or self.on_completion):
            raise ValueError("a compiled order is for policies of the golab job model without hooks")
        if self.place_rule is not None and self.place is None:
            raise ValueError("a place_rule restates a place function, which stays the reference: give both")
        if self.lone_lowest and (self.place is None or self.place_rule is not None):
            raise ValueError("lone_lowest describes a place function without a place_rule")
        if self.compiled is not None and self.place is not None and self.place_rule is None:
            raise ValueError("a compiled policy with a placement gives it as a place_rule too")


class Policy(Protocol):
    """What the engine needs of a scheduler: a name and a way to bind to a workload."""

    name: str

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        """Precompute per-table constants for ``workload``; ``rng`` is the policy's own stream."""
        ...


def _by_release(i: int, now: float, release: float, n: float) -> float:
    """The release order's key: the table's release instant."""
    return release


class ReleaseOrder:
    """The earliest release first (ties to the table's file position, as for every key), with no
    placement and no hooks; compiled as the ``release`` kind. See the module docstring."""

    name = "release-order"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        """The same decisions for every workload; ``rng`` is not drawn from."""
        return BoundPolicy(key=_by_release, compiled=CompiledOrder("release"))
