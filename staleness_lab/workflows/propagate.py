"""Constraint propagation, heuristic (c) of Algorithm 1 (digest §3 "Heuristics" (c) [P; details R/D]).

From each channel C to each feeder C′ (an input of C's producer): C's staleness bounds are
projected onto C′'s layout elements (through :meth:`Workflow.element_sources`) and C's
inconsistency bound is copied; they combine with C′'s own bounds and those coming from its
other consumers by per-element minimum [D]; finally staleness is clamped to at most the
inconsistency bound. Unbounded is None. Reproduces E9 (digest §4).

:func:`bounds_report` is the view ``staleness-lab workflow validate`` prints: per channel its
layout, own and propagated bounds, and the asynchronous variants withheld (Correction 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from staleness_lab.workflows.elements import StalenessBound
from staleness_lab.workflows.model import Workflow


@dataclass(frozen=True)
class EffectiveBounds:
    """A channel's bounds in hours: staleness per element of its layout, and inconsistency
    (None = unbounded)."""

    staleness: tuple[float | None, ...]
    inconsistency: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"staleness": list(self.staleness), "inconsistency": self.inconsistency}


def _min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def own_bounds(workflow: Workflow) -> dict[str, EffectiveBounds]:
    """Per channel, its own constraints (several on the same element: the smallest t)."""
    stale = {ch.name: [None] * len(workflow.layout(ch.name)) for ch in workflow.channels}
    inc: dict[str, float | None] = {ch.name: None for ch in workflow.channels}
    for bound in workflow.constraints:
        if isinstance(bound, StalenessBound):
            stale[bound.channel][bound.path] = _min(stale[bound.channel][bound.path], bound.t)
        else:
            inc[bound.channel] = _min(inc[bound.channel], bound.t)
    return {name: EffectiveBounds(tuple(stale[name]), inc[name]) for name in stale}


def _clamped(stale: list[float | None], inc: float | None) -> EffectiveBounds:
    return EffectiveBounds(tuple(_min(t, inc) if t is not None else None for t in stale), inc)


def propagate(workflow: Workflow) -> dict[str, EffectiveBounds]:
    """Per channel, its effective bounds: own bounds combined with those propagated from every
    channel it feeds (heuristic (c)). Operators are visited in reverse topological order, so a
    channel's bounds are final (and clamped) before they are projected onto its feeders."""
    own = own_bounds(workflow)
    stale = {name: list(b.staleness) for name, b in own.items()}
    inc = {name: b.inconsistency for name, b in own.items()}
    final: dict[str, EffectiveBounds] = {}
    for op in reversed(workflow.topological_operators()):
        for index, name in enumerate(op.outputs):
            final[name] = _clamped(stale[name], inc[name])
            for element, (i, j) in enumerate(workflow.element_sources(op, index)):
                feeder = op.inputs[i]
                stale[feeder][j] = _min(stale[feeder][j], final[name].staleness[element])
                inc[feeder] = _min(inc[feeder], final[name].inconsistency)
    for ch in workflow.inputs():
        final[ch.name] = _clamped(stale[ch.name], inc[ch.name])
    return {ch.name: final[ch.name] for ch in workflow.channels}


def bounds_report(workflow: Workflow) -> dict[str, Any]:
    """The validation view (JSON-ready): per channel its role, layout, key, insert-only flag,
    accepted types and own/propagated bounds; per join/union input whether the asynchronous
    variant reading a delta from it is offered, and why (Correction 3)."""
    own, effective = own_bounds(workflow), propagate(workflow)
    channels = [{
        "name": ch.name, "role": workflow.role(ch.name),
        "layout": [list(element) for element in workflow.layout(ch.name)],
        "key": list(ch.key), "insert_only": workflow.insert_only(ch.name), "holds": list(workflow.types_on(ch.name)),
        "accepts": sorted(ch.accepts) if ch.accepts is not None else None,
        "own": own[ch.name].to_dict(), "propagated": effective[ch.name].to_dict(),
    } for ch in workflow.channels]
    variants = []
    for k, op in enumerate(workflow.operators):
        for i, offered in workflow.async_offered(op).items():
            name = op.inputs[i]
            if workflow.insert_only(name):
                reason = "insert-only"
            elif offered:
                reason = f"may carry deletions, keyed by {', '.join(workflow.channel(name).key)}"
            else:
                reason = "may carry deletions and has no key"
            variants.append({"operator": op.name, "index": k, "widget": op.widget, "input": i, "channel": name,
                             "offered": offered, "reason": reason})
    return {"workflow": workflow.name, "sha256": workflow.sha256(), "horizon": workflow.horizon,
            "channels": channels, "async_variants": variants}
