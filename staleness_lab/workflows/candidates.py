"""``blockGen`` of Algorithm 1: every block one invocation away from a newly optimized block
and blocks already optimized (digest §3 [P]; the variants of the table in §2 "Signatures").

For a block ``b`` on channel C this yields, for each converter on C and each variant of each
operator reading C in which ``b`` fills a slot (or a part of one), every assignment of the other
slots from the optimized pool whose signature holds (types, exact abutting, order, ``cons``) and
whose inputs are readable, as ``(output block, invocation)``. A hyperedge is generated when its
last input is optimized, so exactly once. The outputs' sizes and the invocation's cost are the
estimates of :mod:`staleness_lab.workflows.costs`; their channel checks are the planner's.

Variants (``L``, ``R`` the left and right inputs):

* stateless, split: ``B(T) -> B(T)``, ``delta(T1>T2) -> delta(T1>T2)`` (one per output; a
  stateless fn whose output channel declares a weak kind writes that kind from a delta);
* join, union -- batch: ``B(T1); B(T2); cons(T1+T2) -> B(T1+T2)``; incremental (sync):
  ``B(T1), delta(T1>T2); B(T3), delta(T3>T4); cons both -> delta(T1+T3 > T2+T4)`` (one side's
  delta may be empty, not both; a union needs no bases [D]); join asynchronous left
  ``delta(T1>T2); B(T3) -> delta(T1+T3 > T2+T3)`` and right ``B(T1); delta(T3>T4) ->
  delta(T1+T3 > T1+T4)``; union asynchronous ``delta`` from one side only, the other's elements
  empty. An asynchronous side is offered only where digest correction 3 allows it;
* count: ``B -> B`` of (key, n), ``delta -> increment``; distinct: ``B -> B``, ``delta -> delta``
  on its internal count [D];
* opaque (crawl selectors): one base per input, ``cons -> B(+)``;
* converters on a channel: chains of abutting same-kind deltas (cost 0), ``c^{delta B}`` (exact,
  or relaxed where the channel allows it: correction 3), ``c^{B delta}`` between ordered bases,
  and a weak kind's ``c^{weak B}`` and ``c^{weak delta}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import product

from staleness_lab.workflows import costs
from staleness_lab.workflows.blocks import BASE, DELTA, Block, Invocation
from staleness_lab.workflows.context import PlanContext
from staleness_lab.workflows.heuristics import chain
from staleness_lab.workflows.provenance import EMPTY, Provenance, applicable, apply, concat, precedes

Candidate = tuple[Block, Invocation]


@dataclass(frozen=True, slots=True)
class OpView:
    """What the planner needs of an operator (a widget counts once: its variants are here)."""

    name: str
    widget: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    sigma: float
    rates: costs.Rates
    async_ok: tuple[bool, ...]  # per input: may an asynchronous variant take a delta there


@dataclass
class Pool:
    """The optimized blocks, indexed by channel (insertion order kept: deterministic plans)."""

    bases: dict[str, dict[Provenance, Block]] = field(default_factory=dict)
    from_: dict[tuple[str, str, Provenance], list[Block]] = field(default_factory=dict)
    to_: dict[tuple[str, str, Provenance], list[Block]] = field(default_factory=dict)

    def add(self, b: Block) -> None:
        if b.is_base:
            self.bases.setdefault(b.channel, {})[b.to] = b
        else:
            assert b.frm is not None
            self.from_.setdefault((b.channel, b.kind, b.frm), []).append(b)
            self.to_.setdefault((b.channel, b.kind, b.to), []).append(b)

    def bases_on(self, channel: str) -> list[Block]:
        return list(self.bases.get(channel, {}).values())

    def base_at(self, channel: str, p: Provenance) -> Block | None:
        return self.bases.get(channel, {}).get(p)

    def starting(self, channel: str, kind: str, p: Provenance) -> list[Block]:
        return list(self.from_.get((channel, kind, p), ()))

    def ending(self, channel: str, kind: str, p: Provenance) -> list[Block]:
        return list(self.to_.get((channel, kind, p), ()))

    def deltas_on(self, channel: str, kind: str) -> list[Block]:
        return [b for (c, k, _), bs in self.from_.items() if c == channel and k == kind for b in bs]


class BlockGen:
    """The generator of one scheduler call (module docstring)."""

    def __init__(self, ctx: PlanContext, ops: list[OpView], weak: dict[str, str | None],
                 converter_rates: costs.Rates = costs.Rates(), relation_rows: Mapping[str, float] | None = None) -> None:
        self.ctx = ctx
        # n(B_R) of an asynchronous right join's fanout: the materialized relation
        # (:func:`relation_rows`), so that an estimate depends neither on the order in which
        # the search optimizes blocks nor on what else a re-estimate's pool holds
        self.relation_rows = relation_rows or {}
        self.weak = weak  # channel -> the weak kind it holds, if any
        self.readers: dict[str, list[tuple[OpView, int]]] = {}
        for op in ops:
            for k, name in enumerate(op.inputs):
                self.readers.setdefault(name, []).append((op, k))
        self.io_rates = converter_rates  # converters and their chains: the workflow's cost model

    def __call__(self, b: Block, pool: Pool) -> Iterator[Candidate]:
        yield from self._converters(b, pool)
        for op, k in self.readers.get(b.channel, ()):
            if op.widget in ("join", "union"):
                yield from self._binary(op, k, b, pool)
            elif op.widget == "opaque":
                yield from self._opaque(op, k, b, pool)
            else:
                yield from self._unary(op, b)

    # -- converters on a channel --------------------------------------------------------------
    def _converters(self, b: Block, pool: Pool) -> Iterator[Candidate]:
        ch = b.channel
        if b.is_base:
            for d in pool.deltas_on(ch, DELTA):
                yield from self._to_base(b, d)
            if self.ctx.holds(ch, DELTA):
                for other in pool.bases_on(ch):
                    if precedes(other.to, b.to):
                        yield self._c_b_delta(other, b)
                    elif precedes(b.to, other.to):
                        yield self._c_b_delta(b, other)
            weak = self.weak.get(ch)
            if weak is not None:
                for w in pool.starting(ch, weak, b.to):
                    yield from self._weak_converters(b, w)
            return
        assert b.frm is not None
        for before in pool.ending(ch, b.kind, b.frm):
            yield chain(before, b)
        for after in pool.starting(ch, b.kind, b.to):
            yield chain(b, after)
        if b.kind == DELTA:
            for base in pool.bases_on(ch):
                yield from self._to_base(base, b)
        else:
            base = pool.base_at(ch, b.frm)
            if base is not None:
                yield from self._weak_converters(base, b)

    def _to_base(self, base: Block, d: Block) -> Iterator[Candidate]:
        """``c^{delta B}``: exact, or relaxed when the delta is insert-only or the channel keyed
        (digest correction 3: a delta with deletions on a base of another provenance is refused)."""
        assert d.frm is not None
        relaxed = self.ctx.keyed[base.channel] or d.deletes == 0
        if base.to != d.frm and not (relaxed and applicable(base.to, d.frm, d.to)):
            return
        to = apply(base.to, d.frm, d.to)
        if to == base.to:
            return
        rows = max(0.0, base.rows + d.rows - 2 * d.deletes)
        out = Block(base.channel, BASE, to, rows=rows)
        cost = costs.to_base(self.io_rates, base.rows, d.rows, rows)
        yield out, Invocation(f"{base.channel}.convert", "delta->B", (base, d), (out,), cost)

    def _c_b_delta(self, old: Block, new: Block) -> Candidate:
        """``c^{B delta}`` between two ordered bases [D: |n(B2) - n(B1)| rows]."""
        rows = abs(new.rows - old.rows)
        out = Block(old.channel, DELTA, new.to, old.to, rows=rows, deletes=max(0.0, old.rows - new.rows))
        cost = costs.to_delta(self.io_rates, old.rows, new.rows, rows)
        return out, Invocation(f"{old.channel}.convert", "B->delta", (old, new), (out,), cost)

    def _weak_converters(self, base: Block, w: Block) -> Iterator[Candidate]:
        """``c^{weak B}`` (the new base, ``n(B) + n(weak)`` rows at most [D]) and
        ``c^{weak delta}`` from a base and the weak delta starting at it."""
        new_rows = base.rows + w.rows
        out = Block(base.channel, BASE, w.to, rows=new_rows)
        yield out, Invocation(f"{base.channel}.convert", f"{w.kind}->B", (base, w), (out,),
                              costs.to_base(self.io_rates, base.rows, w.rows, new_rows))
        if self.ctx.holds(base.channel, DELTA):
            cost, rows = costs.weak_to_delta(self.io_rates, w.rows)
            d = Block(base.channel, DELTA, w.to, base.to, rows=rows, deletes=rows / 2)
            yield d, Invocation(f"{base.channel}.convert", f"{w.kind}->delta", (base, w), (d,), cost)

    # -- operators --------------------------------------------------------------------------
    def _unary(self, op: OpView, b: Block) -> Iterator[Candidate]:
        if not self.ctx.readable(b) or b.kind not in (BASE, DELTA):
            return
        r, sigma = op.rates, op.sigma
        if op.widget == "count":
            kind = BASE if b.is_base else "increment"
            cost, rows = (costs.count_batch if b.is_base else costs.count_incremental)(r, b.rows, sigma)
        elif op.widget == "distinct":
            kind = b.kind
            cost, rows = (costs.count_batch if b.is_base else costs.distinct_incremental)(r, b.rows, sigma)
        else:
            # a stateless fn on a channel declaring a weak kind emits it from a delta (links:
            # each fetched source's link set upserted, digest §5 CS)
            weak = self.weak.get(op.outputs[0]) if op.widget == "stateless" else None
            kind = weak if weak is not None and not b.is_base else b.kind
            cost, rows = costs.stateless(r, b.rows, sigma)
        if not all(self.ctx.holds(o, kind) for o in op.outputs):
            return
        shares = (sigma, 1.0 - sigma) if op.widget == "split" and len(op.outputs) == 2 else (sigma,) * len(op.outputs)
        if op.widget == "split":
            cost, _ = costs.stateless(r, b.rows, 1.0)
        outs = tuple(Block(o, kind, b.to, b.frm, rows=(b.rows * s if op.widget == "split" else rows),
                           deletes=b.deletes * (s if op.widget == "split" else sigma))
                     for o, s in zip(op.outputs, shares))
        inv = Invocation(op.name, "batch" if b.is_base else "incremental", (b,), outs, cost)
        for out in outs:
            yield out, inv

    def _opaque(self, op: OpView, k: int, b: Block, pool: Pool) -> Iterator[Candidate]:
        """An opaque batch operator (crawl selectors): one readable base per input, ``cons``."""
        if not b.is_base or not self.ctx.readable(b):
            return
        choices = [[b] if j == k else [x for x in pool.bases_on(name) if self.ctx.readable(x)]
                   for j, name in enumerate(op.inputs)]
        out_channel = op.outputs[0]
        for inputs in product(*choices):
            to = concat(*(x.to for x in inputs))
            if not self.ctx.cons(out_channel, to):
                continue
            cost, rows = costs.stateless(op.rates, sum(x.rows for x in inputs), op.sigma)
            out = Block(out_channel, BASE, to, rows=min(rows, op.sigma * inputs[0].rows))
            yield out, Invocation(op.name, "batch", tuple(inputs), (out,), cost)

    def _binary(self, op: OpView, k: int, b: Block, pool: Pool) -> Iterator[Candidate]:
        if b.kind not in (BASE, DELTA):
            return
        other = 1 - k
        if b.is_base:
            if self.ctx.readable(b):
                for ob in pool.bases_on(op.inputs[other]):
                    yield from self._batch(op, _ordered(k, b, ob))
                if op.widget == "join" and op.async_ok[other]:
                    for od in pool.deltas_on(op.inputs[other], DELTA):
                        yield from self._async(op, other, od, b, pool)
            for dk in [None, *pool.starting(b.channel, DELTA, b.to)]:
                yield from self._incremental_with(op, k, b, dk, pool)
            return
        if op.async_ok[k]:
            if op.widget == "union":
                yield from self._async(op, k, b, None, pool)
            else:
                for ob in pool.bases_on(op.inputs[other]):
                    yield from self._async(op, k, b, ob, pool)
        assert b.frm is not None
        base = pool.base_at(b.channel, b.frm)
        if base is not None:
            yield from self._incremental_with(op, k, base, b, pool)
        elif op.widget == "union":
            yield from self._incremental_with(op, k, None, b, pool)

    def _incremental_with(
        self, op: OpView, k: int, base: Block | None, d: Block | None, pool: Pool
    ) -> Iterator[Candidate]:
        """Every synchronous incremental invocation with side ``k`` fixed to ``(base, d)``."""
        other = op.inputs[1 - k]
        if op.widget == "union":
            if d is None:
                return
            for od in pool.deltas_on(other, DELTA):
                yield from self._incremental(op, _ordered(k, (None, d), (None, od)))
            return
        assert base is not None
        for ob in pool.bases_on(other):
            for od in [None, *pool.starting(other, DELTA, ob.to)]:
                if d is None and od is None:
                    continue
                yield from self._incremental(op, _ordered(k, (base, d), (ob, od)))

    def _batch(self, op: OpView, inputs: tuple[Block, Block]) -> Iterator[Candidate]:
        left, right = inputs
        out_channel = op.outputs[0]
        if not self.ctx.holds(out_channel, BASE) or not self.ctx.readable(left) or not self.ctx.readable(right):
            return
        to = concat(left.to, right.to)
        if not self.ctx.cons(out_channel, to):
            return
        if op.widget == "join":
            cost, rows = costs.batch_join(op.rates, left.rows, right.rows, op.sigma)
        else:
            cost, rows = costs.union(op.rates, left.rows, right.rows)
        out = Block(out_channel, BASE, to, rows=rows)
        yield out, Invocation(op.name, "batch", inputs, (out,), cost)

    def _async(self, op: OpView, k: int, d: Block, base: Block | None, pool: Pool) -> Iterator[Candidate]:
        """Join: ``d`` on side ``k`` against a base on the other side; union: ``d`` alone."""
        out_channel = op.outputs[0]
        if not self.ctx.holds(out_channel, DELTA) or not self.ctx.readable(d):
            return
        assert d.frm is not None
        variant = "async-left" if k == 0 else "async-right"
        if base is None:  # union: the other side's elements stay empty
            width = len(self.ctx.layouts[op.inputs[1 - k]])
            blank: Provenance = (EMPTY,) * width
            frm, to = (concat(d.frm, blank), concat(d.to, blank)) if k == 0 else (concat(blank, d.frm), concat(blank, d.to))
            cost, rows = costs.stateless(op.rates, d.rows, 1.0)
            out = Block(out_channel, DELTA, to, frm, rows=rows, deletes=d.deletes)
            yield out, Invocation(op.name, variant, (d,), (out,), cost)
            return
        if not self.ctx.readable(base):
            return
        if k == 0:
            frm, to = concat(d.frm, base.to), concat(d.to, base.to)
            cost, rows = costs.async_left_join(op.rates, d.rows, base.rows, op.sigma)
            inputs = (d, base)
        else:
            frm, to = concat(base.to, d.frm), concat(base.to, d.to)
            n_right = self.relation_rows.get(d.channel, d.rows)
            cost, rows = costs.async_right_join(op.rates, base.rows, d.rows, n_right, op.sigma)
            inputs = (base, d)
        share = d.deletes / d.rows if d.rows else 0.0
        out = Block(out_channel, DELTA, to, frm, rows=rows, deletes=rows * share)
        yield out, Invocation(op.name, variant, inputs, (out,), cost)

    def _incremental(
        self, op: OpView, sides: tuple[tuple[Block | None, Block | None], tuple[Block | None, Block | None]]
    ) -> Iterator[Candidate]:
        (lb, ld), (rb, rd) = sides
        out_channel = op.outputs[0]
        if not self.ctx.holds(out_channel, DELTA):
            return
        if any(x is not None and not self.ctx.readable(x) for x in (ld, rd)):
            return  # the old-state bases are exempt
        if op.widget == "union":
            assert ld is not None and rd is not None and ld.frm is not None and rd.frm is not None
            frm, to = concat(ld.frm, rd.frm), concat(ld.to, rd.to)
            cost, rows = costs.union(op.rates, ld.rows, rd.rows)
            deletes = ld.deletes + rd.deletes
            inputs: tuple[Block, ...] = (ld, rd)
        else:
            assert lb is not None and rb is not None
            frm = concat(lb.to, rb.to)
            to = concat(ld.to if ld is not None else lb.to, rd.to if rd is not None else rb.to)
            n_dl = ld.rows if ld is not None else 0.0
            n_dr = rd.rows if rd is not None else 0.0
            cost, rows = costs.sync_incremental_join(op.rates, lb.rows, n_dl, rb.rows, n_dr, op.sigma)
            n_d = n_dl + n_dr
            deletes = rows * ((ld.deletes if ld else 0.0) + (rd.deletes if rd else 0.0)) / n_d if n_d else 0.0
            inputs = tuple(x for x in (lb, ld, rb, rd) if x is not None)
        if not (self.ctx.cons(out_channel, frm) and self.ctx.cons(out_channel, to)):
            return
        out = Block(out_channel, DELTA, to, frm, rows=rows, deletes=deletes)
        yield out, Invocation(op.name, "incremental", inputs, (out,), cost)


def _ordered(k: int, mine, theirs):  # type: ignore[no-untyped-def]
    """``(left, right)`` with ``mine`` on side ``k``."""
    return (mine, theirs) if k == 0 else (theirs, mine)


def reestimate(gen: BlockGen, planned: Invocation, inputs: tuple[Block, ...]) -> Invocation | None:
    """``planned`` estimated again on ``inputs`` (the same blocks as its inputs, with other
    sizes: those actually made, or made by another producer): the invocation ``gen`` offers with
    the same operator, variant, inputs and outputs, or None when those inputs no longer admit
    the variant (a delta with deletions refusing the relaxed ``c^{delta B}``, correction 3)."""
    pool = Pool()
    for b in inputs:
        pool.add(b)
    return next((inv for _, inv in gen(inputs[-1], pool)
                 if inv.operator == planned.operator and inv.variant == planned.variant
                 and inv.inputs == planned.inputs and inv.outputs == planned.outputs), None)


def relation_rows(blocks: Iterable[Block]) -> dict[str, float]:
    """Each channel's relation size as the estimates read it: the rows of its largest
    materialized base (a channel without one falls back, in :class:`BlockGen`, to the delta's
    own rows)."""
    rows: dict[str, float] = {}
    for b in blocks:
        if b.is_base:
            rows[b.channel] = max(rows.get(b.channel, 0.0), b.rows)
    return rows
