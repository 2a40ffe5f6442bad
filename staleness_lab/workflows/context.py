"""What one scheduler call knows: the instant, the bounds each channel must meet, the heads of
the outputs, the block types each channel may hold under a scenario, and the checks of
digest §3 "Checks while planning" [R/D] built on them.

* ``now = t_call + epsilon`` (:data:`EPSILON`; E8 uses t + 0.01).
* A candidate on channel C is checked against C's bounds (own, or propagated under heuristic
  (c)): a base on ``T``; a delta on a non-output channel on its target; a delta on an output on
  ``apply(head, b)``, refused when the relaxed rule does not apply.
* [D, option ``readable_across_channels``, off by default: the paper checks generated blocks
  only, §6.1] An input read across channels must pass its channel's checks (a delta on its
  target); converters and chains on their own channel and the old-state base of an incremental
  slot are exempt. Staleness skips empty elements.
* ``cons(X)`` of a synchronous variant [R]: ``inconsistency(X) < t_inc``, the bound of the
  operator's output channel (infinite when none); ``strict_sync_inputs`` (A3) makes it
  ``consistent(X)`` always.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from staleness_lab.workflows.blocks import BASE, DELTA, Block
from staleness_lab.workflows.provenance import Layout, Provenance, Validity, applicable, apply, consistent, hi

#: ``now`` is the call's instant plus this much (hours), so that an arrival at the call counts.
EPSILON = 0.01

SCENARIOS = ("async-incr", "sync-incr", "async-batch", "sync-batch")


class EffectiveBounds(Protocol):
    """A channel's bounds as the planner reads them (own, or propagated by heuristic (c))."""

    @property
    def staleness(self) -> tuple[float | None, ...]: ...  # per element of the layout; None: unbounded

    @property
    def inconsistency(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Options:
    """Algorithm 1's heuristics (§6.2 (a)-(d)) and long-term rule (§6.3 (e)), all on by default,
    and three readings the paper leaves open (digest, third-round corrections), each defaulting
    to the paper's:

    * ``empty_incomparable`` (correction 1): rule (e) compares an empty provenance element (an
      asynchronous union's untouched side) only with an empty one, so a one-sided delta and a
      two-sided delta of one channel do not dominate each other and compete on cost (§7.2: "just
      news-related searches" run). Off: the empty element reads ``hi = -inf`` and the one-sided
      delta is dominated.
    * ``reinvoke_until_fresh`` (correction 2): off, GREEDY and RANDOM return one single-operator
      plan per scheduler invocation (line 497), invoked on the DP's events (an arrival, an output
      bound breaking); on, they are re-invoked while an output bound is still violated.
    * ``readable_across_channels`` (correction 5): on, an input read across channels must meet
      its own channel's (propagated) bounds; off, only generated blocks are checked (§6.1).
    """

    prune_old: bool = True
    chains: bool = True
    propagate: bool = True
    overkill: bool = True
    longterm: bool = True
    empty_incomparable: bool = True
    reinvoke_until_fresh: bool = False
    readable_across_channels: bool = False


class PlanContext:
    """The checks of one scheduler call (module docstring)."""

    def __init__(
        self,
        *,
        layouts: Mapping[str, Layout],
        bounds: Mapping[str, EffectiveBounds],
        arrivals: Mapping[str, Sequence[float]],
        now: float,
        heads: Mapping[str, Provenance],
        kinds: Mapping[str, frozenset[str]],
        keyed: Mapping[str, bool],
        strict_sync_inputs: bool = False,
        readable_across_channels: bool = False,
    ) -> None:
        self.layouts = layouts
        self.bounds = bounds
        self.validity = Validity(arrivals, now)
        self.now = now
        self.heads = heads
        self.kinds = kinds
        self.keyed = keyed  # channels with a key: deletions apply by key (correction 3)
        self.strict_sync_inputs = strict_sync_inputs
        self.readable_across_channels = readable_across_channels

    def passes(self, channel: str, p: Provenance, bounds_of: Mapping[str, EffectiveBounds] | None = None) -> bool:
        """``p`` meets the channel's staleness bounds (``lo(T[i]) + t >= now``, empty elements
        skipped) and inconsistency bound (``hi(T) < lo(T) + t``): the effective ones, or those
        of ``bounds_of`` when given."""
        bounds = (self.bounds if bounds_of is None else bounds_of).get(channel)
        if bounds is None:
            return True
        layout = self.layouts[channel]
        for i, t in enumerate(bounds.staleness):
            if t is not None and p[i] and self.validity.lo_element(layout[i][0], p[i]) + t < self.now:
                return False
        if bounds.inconsistency is not None:
            return hi(p) < self.validity.lo(p, layout) + bounds.inconsistency
        return True

    def readable(self, block: Block) -> bool:
        """An input read across channels passes its own channel's checks (on its target); any
        input is readable with ``readable_across_channels`` off."""
        if not self.readable_across_channels:
            return True
        if block.channel in self.heads and not block.is_base:
            return self.candidate_ok(block)
        return self.passes(block.channel, block.to)

    def candidate_ok(self, block: Block) -> bool:
        """A candidate block passes its channel's checks (an output's delta on the head it
        would make, illegal when it does not apply)."""
        head = self.heads.get(block.channel)
        if head is None or block.frm is None:
            return self.passes(block.channel, block.to)
        if not applicable(head, block.frm, block.to):
            return False
        return self.passes(block.channel, apply(head, block.frm, block.to))

    def cons(self, output_channel: str, p: Provenance) -> bool:
        """The consistency requirement of a synchronous variant writing ``output_channel``."""
        layout = self.layouts[output_channel]
        if self.strict_sync_inputs:
            return consistent(p, layout, self.validity)
        bounds = self.bounds.get(output_channel)
        t_inc = math.inf if bounds is None or bounds.inconsistency is None else bounds.inconsistency
        return hi(p) - self.validity.lo(p, layout) < t_inc

    def holds(self, channel: str, kind: str) -> bool:
        """Whether the scenario lets ``channel`` hold blocks of ``kind``."""
        return kind in self.kinds[channel]


def channel_kinds(derived: Mapping[str, str | None], inputs: Sequence[str], scenario: str) -> dict[str, frozenset[str]]:
    """The block types each channel may hold (digest §3 "Scenarios" [P/D]): input channels hold
    bases and deltas; a derived channel bases, and under an incremental scenario also deltas and
    the weak kind its producer writes (``derived[channel]``, None if none). Batch scenarios give
    derived channels bases only (input deltas enter through ``c^{delta B}`` and chains)."""
    kinds = {name: frozenset({BASE, DELTA}) for name in inputs}
    incremental = scenario.endswith("-incr")
    for name, weak in derived.items():
        held = {BASE}
        if incremental:
            held.add(DELTA)
            if weak is not None:
                held.add(weak)
        kinds[name] = frozenset(held)
    return kinds
