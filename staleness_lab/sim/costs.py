"""The random streams of a run: per-table cost draws and the policy's own stream.

Streams are keyed by the workload's seed and the table's name, so policies (and both job models)
compared on one seed meet the same random costs (common random numbers).
"""

from __future__ import annotations

import zlib

import numpy as np

from staleness_lab.model import Workload

#: Uniform draws fetched per table at a time for the cost noise.
DRAW_BLOCK = 512


def cost_stream(seed: int, table_name: str) -> np.random.Generator:
    """The random stream of one table's cost draws: keyed by seed and table name, so policies
    compared on one seed meet the same random costs (common random numbers)."""
    return np.random.default_rng([seed, zlib.crc32(table_name.encode())])


def policy_stream(seed: int) -> np.random.Generator:
    """The random stream a policy may use (Random), independent of the cost streams."""
    return np.random.default_rng([seed, 0x706F6C69])


def noise_range(workload: Workload) -> tuple[float, float] | None:
    """``(lo, span)``: each job's cost is E(n) * (lo + span * U[0, 1)) -- ``variability`` b is
    [b, 1 + b] (Golab et al., Sec. 5), ``cost_noise`` [lo, hi] is Leontyev et al.'s U[lo, hi]
    (Sec. VII); None for exact costs."""
    if workload.variability is not None:
        return (workload.variability, 1.0)
    if workload.cost_noise is not None:
        lo, hi = workload.cost_noise
        return (lo, hi - lo)
    return None
