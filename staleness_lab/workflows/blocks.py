"""Blocks and invocations, the nodes and hyperedges of Olston's scheduling problem (§2.1, §3).

A block is identified by (channel, type, from, to) (Algorithm 1 [P]): ``B(T)`` holds the whole
relation at provenance ``T``; ``delta(T1 > T2)`` the signed rows turning ``B(T1)`` into ``B(T2)``;
a weak kind (``upsert``, ``increment``) any data that with ``B(T1)`` yields ``B(T2)``. Its
target ``tau`` is ``T`` or ``T2``. Row counts ride along (estimated for a planned block, actual
for a materialized one) without taking part in the identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from staleness_lab.workflows.provenance import Provenance, fmt

BASE = "B"
DELTA = "delta"


@dataclass(frozen=True, slots=True)
class Block:
    """``B(to)`` when ``kind`` is ``"B"`` (``frm`` None), else ``kind(frm > to)``."""

    channel: str
    kind: str
    to: Provenance
    frm: Provenance | None = None
    rows: float = field(default=0.0, compare=False)
    deletes: float = field(default=0.0, compare=False)  # rows of sign -1 (a delta's deletions)

    @property
    def target(self) -> Provenance:
        """``tau``: ``T`` of a base, ``T2`` of a delta (§2.2 [P])."""
        return self.to

    @property
    def is_base(self) -> bool:
        return self.kind == BASE

    def label(self) -> str:
        """``channel:B<86,73>`` or ``channel:delta(<65,49> > <86,73>)``."""
        if self.frm is None:
            return f"{self.channel}:B{fmt(self.to)}"
        return f"{self.channel}:{self.kind}({fmt(self.frm)} > {fmt(self.to)})"


@dataclass(frozen=True, slots=True)
class Invocation:
    """One run of an operator variant or converter: inputs read, outputs made, estimated cost
    (CPU-hours). Converters and chains name their channel's self-loop as ``operator``."""

    operator: str
    variant: str
    inputs: tuple[Block, ...]
    outputs: tuple[Block, ...]
    cost: float

    def label(self) -> str:
        ins = ", ".join(b.label() for b in self.inputs)
        outs = ", ".join(b.label() for b in self.outputs)
        return f"{self.operator}[{self.variant}]({ins}) -> {outs}"
