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


@dataclass(frozen=True)
class BoundPolicy:
    """A policy's decisions for one run (see the module docstring)."""

    key: KeyFunction
    rekey_on_data: bool = False
    place: PlaceFunction | None = None
    on_arrival: Hook | None = None
    on_start: StartHook | None = None
    on_completion: Hook | None = None


class Policy(Protocol):
    """What the engine needs of a scheduler: a name and a way to bind to a workload."""

    name: str

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        """Precompute per-table constants for ``workload``; ``rng`` is the policy's own stream."""
        ...

