"""Invocations on rows: what an operator variant, converter or chain writes (the data modes of
the run loop; digest §2 "Signatures", §8 "Rows" and "Converters").

:class:`Executor` maps one :class:`~staleness_lab.workflows.blocks.Invocation` and the frames of
its input blocks (in the invocation's order) to one frame per output block, with a row algebra
(:class:`~.algebra.Algebra`): :data:`.pandas_rows.PANDAS` (the ``memory`` mode: :mod:`.rows` for
bases and strong deltas with ``_sign``, :mod:`.weak` for increments with ``_inc`` and upserts with
``_seq`` and ``_tomb``) or its Spark twin :data:`staleness_lab.spark.workflows.rows.SPARK` (the
``spark`` mode), same operators, same rows:

* converters ``<channel>.convert``: ``delta->B`` (:func:`.rows.apply_delta`; the relaxed rule
  of correction 3 applies a delta to a base of another provenance, deletions of absent rows
  then clamped at none [D]), ``B->delta`` (:func:`.rows.delta_between`), ``increment->B``,
  ``increment->delta``, ``upsert->B``, ``upsert->delta``;
* chains ``<channel>.chain``: abutting deltas as one, every ± row kept (the issue: "chains keep
  ± rows"; increments summed per key, upserts newest per key);
* stateless ``fn`` (a :class:`~.functions.RowFunction` of kind ``map``, or any callable
  registered from Python), on a base or a delta; split (kind ``split``: a predicate, True rows
  to the first output); writing an upsert (a channel declaring ``delta_kind: upsert``), the
  fn's rows on the delta become their keys' records at ``_seq`` = the block's target time in
  milliseconds (:func:`upsert_seq`: later deltas of a chain write later records);
* join on ``on``: batch, asynchronous left / right (:meth:`~.algebra.Algebra.join_delta_base`),
  synchronous incremental (:meth:`~.algebra.Algebra.sync_incremental_join`, inputs in the order
  ``L_old, ΔL, R_old, ΔR`` with an absent chain left out);
* union: batch and incremental bag unions; asynchronous: the delta alone;
* count on ``key``: batch (key, n), incremental the increment per key;
* distinct on ``key``: batch, and incremental over the operator's internal count per key
  (:meth:`~.algebra.Algebra.distinct_delta`) [D]: the executor keeps that count at each provenance it
  reaches; a delta from a provenance it has not reached counts the input's base there
  (``base_of``);
* opaque (crawl selectors): the function of one base per input and ``now``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from staleness_lab.workflows import rows
from staleness_lab.workflows.algebra import Algebra, Frame
from staleness_lab.workflows.blocks import BASE, DELTA, Invocation
from staleness_lab.workflows.elements import Operator
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.pandas_rows import PANDAS
from staleness_lab.workflows.provenance import Provenance, hi

#: The count widget's count column (its output's schema is (key, n)).
COUNT = "n"
#: A base of ``channel`` at a provenance, or None where none can be had.
BaseOf = Callable[[str, Provenance], Frame | None]


class Executor:
    """Runs invocations of one workflow on the frames of ``algebra`` (module docstring)."""

    def __init__(self, workflow: Workflow, base_of: BaseOf, algebra: Algebra = PANDAS) -> None:
        self.operators = {op.name: op for op in workflow.operators}
        keys = {ch.name: ch.key for ch in workflow.channels}
        # a derived channel's weak kind comes with its producer's key (count: the counted key)
        self.weak_keys = {out: op.key or keys[out] for op in workflow.operators for out in op.outputs}
        self.base_of = base_of
        self.algebra = algebra
        self.counts: dict[tuple[str, Provenance], Frame] = {}  # distinct's internal counts

    def run(self, inv: Invocation, frames: Sequence[Frame], now: float) -> tuple[Frame, ...]:
        """One frame per output block of ``inv``; ``frames`` are its inputs' frames in order."""
        if len(frames) != len(inv.inputs):
            raise ValueError(f"{inv.label()}: {len(frames)} input frame(s) for {len(inv.inputs)} input(s)")
        if inv.operator.endswith(".chain"):
            return (self._chain(inv, frames),)
        if inv.operator.endswith(".convert"):
            return (self._convert(inv, frames),)
        op = self.operators[inv.operator]
        a = self.algebra
        if op.widget in ("stateless", "split"):
            # a stateless operator without fn is the identity (elements.Operator); a split has one
            out = (frames[0],) if op.fn is None and op.widget == "stateless" else \
                a.stateless(op.fn or "", frames[0], split=op.widget == "split", outputs=len(op.outputs))
            if inv.outputs[0].kind == "upsert":
                return tuple(a.records_to_upsert(f, upsert_seq(inv.outputs[0].to)) for f in out)
            return out
        if op.widget == "join":
            return (self._join(op, inv, frames),)
        if op.widget == "union":
            return (self._union(inv, frames),)
        if op.widget == "count":
            return (self._count(op, frames[0]),)
        if op.widget == "distinct":
            return (self._distinct(op, inv, frames[0]),)
        if op.widget == "opaque":
            assert op.fn is not None, f"{op.name} has no fn"
            return (a.opaque(op.fn, frames, now),)
        raise ValueError(f"{inv.label()}: no executor for widget {op.widget!r}")

    # -- converters and chains ----------------------------------------------------------------
    def _chain(self, inv: Invocation, frames: Sequence[Frame]) -> Frame:
        kind = inv.inputs[0].kind
        if kind == DELTA:
            return self.algebra.chain(frames, cancel=False)
        key = self.weak_keys[inv.inputs[0].channel]
        if kind == "increment":
            return self.algebra.chain_increments(frames, key)
        return self.algebra.chain_upserts(frames, key)

    def _convert(self, inv: Invocation, frames: Sequence[Frame]) -> Frame:
        (old, new), (a, b) = inv.inputs, frames
        variant, algebra = inv.variant, self.algebra
        if variant == "delta->B":
            return algebra.apply_delta(a, b, strict=old.to == new.frm)
        if variant == "B->delta":
            return algebra.delta_between(a, b)
        key = self.weak_keys[old.channel]
        if variant == "increment->B":
            return algebra.apply_increment(a, b, key, COUNT)
        if variant == "increment->delta":
            return algebra.increment_to_delta(a, b, key, COUNT)
        if variant == "upsert->B":
            return algebra.apply_upsert(a, b, key)
        if variant == "upsert->delta":
            return algebra.upsert_to_delta(a, b, key)
        raise ValueError(f"{inv.label()}: unknown converter {variant!r}")

    # -- operators ----------------------------------------------------------------------------
    def _join(self, op: Operator, inv: Invocation, frames: Sequence[Frame]) -> Frame:
        algebra = self.algebra
        if inv.variant == "batch":
            return algebra.join(frames[0], frames[1], op.on)
        if inv.variant == "async-left":
            return algebra.join_delta_base(frames[0], frames[1], op.on, side="left")
        if inv.variant == "async-right":
            return algebra.join_delta_base(frames[1], frames[0], op.on, side="right")
        left, right = op.inputs
        part = {(b.channel, b.kind): f for b, f in zip(inv.inputs, frames)}
        return algebra.sync_incremental_join(part[(left, BASE)], part.get((left, DELTA)),
                                             part[(right, BASE)], part.get((right, DELTA)), op.on)

    def _union(self, inv: Invocation, frames: Sequence[Frame]) -> Frame:
        if inv.variant.startswith("async"):
            return frames[0]
        return self.algebra.union(frames[0], frames[1])

    def _count(self, op: Operator, frame: Frame) -> Frame:
        if rows.SIGN in frame.columns:
            return self.algebra.count_delta(frame, op.key)
        return self.algebra.count(frame, op.key, COUNT)

    def _distinct(self, op: Operator, inv: Invocation, frame: Frame) -> Frame:
        (block,) = inv.inputs
        algebra = self.algebra
        if block.is_base:
            self.counts[(op.name, block.to)] = algebra.keep(algebra.count(frame, op.key, COUNT))
            return algebra.distinct(frame, op.key)
        assert block.frm is not None
        before = self._counts_at(op, block.channel, block.frm)
        out, after = algebra.distinct_delta(before, frame, op.key, COUNT)
        self.counts[(op.name, block.to)] = algebra.keep(after)
        return out

    def _counts_at(self, op: Operator, channel: str, p: Provenance) -> Frame:
        known = self.counts.get((op.name, p))
        if known is not None:
            return known
        base = self.base_of(channel, p)
        if base is None:
            raise RuntimeError(f"{op.name}: no internal count at {p} and no base of {channel} there (a bug)")
        return self.algebra.count(base, op.key, COUNT)


def upsert_seq(p: Provenance) -> int:
    """The ``_seq`` of an upsert written for target ``p``: ``hi(p)`` in whole milliseconds."""
    return round(hi(p) * 3_600_000)


def frame_rows(frame: pd.DataFrame) -> tuple[float, float]:
    """A block's (rows, deletions) as the run loop sizes it: every row, and those of sign -1."""
    deletes = int((frame[rows.SIGN] < 0).sum()) if rows.SIGN in frame.columns else 0
    return float(len(frame)), float(deletes)

