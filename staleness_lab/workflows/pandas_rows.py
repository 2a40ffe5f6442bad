"""The pandas row algebra as one namespace: what :class:`~staleness_lab.workflows.execute.Executor`
calls in the ``memory`` mode (digest §8 "Rows", "Converters"). The Spark twin,
:mod:`staleness_lab.spark.workflows.rows`, has the same names and gives the same rows.

The bases and strong deltas come from :mod:`.rows`, the weak kinds and count/distinct from
:mod:`.weak`; :func:`stateless` and :func:`opaque` apply a registered ``fn``
(:mod:`.functions`), and :func:`keep` settles an operator's internal state between invocations
(nothing to do for pandas frames).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from staleness_lab.workflows.registry import FUNCTIONS
from staleness_lab.workflows.rows import (
    apply_delta,
    chain,
    delta_between,
    join,
    join_delta_base,
    sync_incremental_join,
    union,
)
from staleness_lab.workflows.weak import (
    apply_increment,
    apply_upsert,
    chain_increments,
    chain_upserts,
    count,
    count_delta,
    distinct,
    distinct_delta,
    increment_to_delta,
    records_to_upsert,
    upsert_to_delta,
)

__all__ = [
    "apply_delta", "apply_increment", "apply_upsert", "chain", "chain_increments", "chain_upserts", "count",
    "count_delta", "delta_between", "distinct", "distinct_delta", "increment_to_delta", "join", "join_delta_base",
    "keep", "opaque", "records_to_upsert", "stateless", "sync_incremental_join", "union", "upsert_to_delta",
]


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
