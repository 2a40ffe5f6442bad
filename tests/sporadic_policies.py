"""Test-only policies on the sporadic job model."""

from __future__ import annotations

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy


class FixedPriority:
    """Non-preemptive fixed priority by table position on sporadic jobs, with per-table periods
    p(T_k) (the digest's A6: Examples 4-6 are fixed priority T_1 > T_2, not EDF)."""

    name = "fixed-priority"

    def __init__(self, periods: list[float]) -> None:
        self.periods = periods

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        periods = self.periods
        return BoundPolicy(key=lambda i, now, release, n: i, jobs="sporadic", period_at=lambda i, t: periods[i])
