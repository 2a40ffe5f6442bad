"""The pandas row algebra: what :class:`~staleness_lab.workflows.execute.Executor` calls in the
``memory`` mode (digest §8 "Rows", "Converters"). The Spark twin,
:data:`staleness_lab.spark.workflows.rows.SPARK`, gives the same rows.

:class:`PandasAlgebra` binds the pandas primitives of :class:`~.algebra.Algebra`: bases and
strong deltas from :mod:`.rows`, the weak kinds and count/distinct from :mod:`.weak`;
:func:`stateless` and :func:`opaque` apply a registered ``fn`` (:mod:`.functions`), and
:func:`keep` settles an operator's internal state between invocations (nothing to do for pandas
frames). The composites (joins, upsert and increment converters, incremental distinct) are
:class:`~.algebra.Algebra`'s, shared with Spark.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from staleness_lab.workflows import rows, weak
from staleness_lab.workflows.algebra import Algebra
from staleness_lab.workflows.registry import FUNCTIONS


def stateless(fn: str, frame: pd.DataFrame, *, split: bool, outputs: int) -> tuple[pd.DataFrame, ...]:
    """A stateless widget's output frames: the map ``fn`` once per output, or for a split the
    predicate's True rows (first output) and False rows (second) (digest §2 "stateless f /
    split" [P])."""
    function = FUNCTIONS[fn]
    if split:
        keep = function(frame).to_numpy(dtype=bool)
        return tuple(frame[mask].reset_index(drop=True) for mask in (keep, ~keep))[:outputs]
    return tuple(function(frame).reset_index(drop=True) for _ in range(outputs))


def opaque(fn: str, frames: Sequence[pd.DataFrame], now: float) -> pd.DataFrame:
    """An opaque widget's output: the selector ``fn`` of one base per input and ``now``."""
    return FUNCTIONS[fn](*frames, now)


def keep(frame: pd.DataFrame) -> pd.DataFrame:
    """An operator's internal state as kept between invocations: the frame itself."""
    return frame


class PandasAlgebra(Algebra):
    """The row algebra on pandas frames (module docstring)."""

    apply_delta = staticmethod(rows.apply_delta)
    delta_between = staticmethod(rows.delta_between)
    chain = staticmethod(rows.chain)
    union = staticmethod(rows.union)
    signed = staticmethod(rows.signed)
    check_delta = staticmethod(rows.check_delta)
    merge = staticmethod(rows.merge)
    select = staticmethod(rows.select)
    key_in = staticmethod(weak.key_in)
    chain_upserts = staticmethod(weak.chain_upserts)
    records_to_upsert = staticmethod(weak.records_to_upsert)
    live = staticmethod(weak.live)
    sort_rows = staticmethod(weak.sort_rows)
    chain_increments = staticmethod(weak.chain_increments)
    apply_increment = staticmethod(weak.apply_increment)
    count = staticmethod(weak.count)
    count_delta = staticmethod(weak.count_delta)
    distinct = staticmethod(weak.distinct)
    stateless = staticmethod(stateless)
    opaque = staticmethod(opaque)
    keep = staticmethod(keep)


#: The pandas algebra (the ``memory`` mode's; the executor's default).
PANDAS = PandasAlgebra()
