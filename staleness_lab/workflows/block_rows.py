"""Where a data mode keeps the rows of its blocks: the one seam between the run loop and the
``memory`` and ``spark`` modes (the issue: "one loop and scheduler" for every mode).

:class:`BlockRows` is what :mod:`.sim` asks of a mode: the frames of input arrivals, the frames
an invocation makes (sized by the rows they actually hold), and pandas copies of output rows.
:class:`MemoryRows` keeps pandas frames in the process;
:class:`staleness_lab.spark.workflows.executor.SparkRows` commits every block to the Parquet
block store and hands back frames read from it. Both run the same
:class:`~staleness_lab.workflows.execute.Executor` on their algebra, so the two modes make the
same decisions (Spark seconds are recorded, never fed back: digest correction 8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pandas as pd

from staleness_lab.workflows.algebra import Algebra
from staleness_lab.workflows.blocks import Block, Invocation
from staleness_lab.workflows.execute import Frame, frame_rows
from staleness_lab.workflows.pandas_rows import PANDAS

#: Runs an invocation on its inputs' frames, one frame per output (lazy for Spark).
Compute = Callable[[], Sequence[Frame]]


class BlockRows(Protocol):
    """The rows of a data mode's blocks (module docstring)."""

    algebra: Algebra

    def arrival(self, block: Block, frame: pd.DataFrame, at: float) -> Frame:
        """Keep an input arrival's rows (a delta or a delivered base) made at ``at``."""

    def made(self, inv: Invocation, producer: str, at: float, compute: Compute) -> tuple[tuple[Block, ...], tuple[Frame, ...]]:
        """The outputs of ``inv`` started at ``at`` (``producer``: its place in the run), sized
        by the rows they hold, and their frames."""

    def from_pandas(self, frame: pd.DataFrame) -> Frame:
        """A pandas frame (an input snapshot) as a frame of this mode."""

    def to_pandas(self, frame: Frame) -> pd.DataFrame:
        """A frame of this mode as pandas (an output's rows)."""

    def summary(self) -> dict[str, Any]:
        """What the mode adds to a run's summary."""


class MemoryRows:
    """The ``memory`` mode: pandas frames in the process."""

    algebra = PANDAS

    def arrival(self, block: Block, frame: pd.DataFrame, at: float) -> pd.DataFrame:
        return frame

    def made(self, inv: Invocation, producer: str, at: float, compute: Compute) -> tuple[tuple[Block, ...], tuple[pd.DataFrame, ...]]:
        frames = tuple(compute())
        made = tuple(Block(b.channel, b.kind, b.to, b.frm, *frame_rows(f)) for b, f in zip(inv.outputs, frames))
        return made, frames

    def from_pandas(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame

    def to_pandas(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame

    def summary(self) -> dict[str, Any]:
        return {}
