"""The baseline schedulers of Golab et al. (Sec. 3.1 and the experiments of Sec. 5), plus FIFO.

Each order is a key ending, through the engine, in the table's file position as tie-break.
"""

from __future__ import annotations

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.policies.registry import register


@register
class Fifo:
    """First in, first out: the earliest release runs first (not in the paper; a reference)."""

    name = "fifo"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        return BoundPolicy(key=lambda i, now, release, n: release)


@register
class Edf:
    """Earliest deadline first: deadline = release + period (Golab et al., Sec. 3.1, Fig. 7).

    A derived table's period is the largest among its ancestors' (Sec. 2.4); a replayed feed
    needs a ``nominal_period``.
    """

    name = "edf"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        period = workload.require_periods(self.name)
        return BoundPolicy(key=lambda i, now, release, n: release + period[i])


@register
class EdfP:
    """Prioritized EDF (EDF-P, Golab et al., Sec. 3.1): highest priority first, then the
    earliest deadline release + period."""

    name = "edf-p"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        period = workload.require_periods(self.name)
        neg_priority = [-t.priority for t in workload.tables]
        return BoundPolicy(key=lambda i, now, release, n: (neg_priority[i], release + period[i]))


@register
class MaxBenefit:
    """Max Benefit (Golab et al., Sec. 3.1): the largest marginal benefit
    p_i * dF_i / E_i(dF_i) first, with dF_i the data the job would load now (chopped).

    The key changes whenever a waiting table's data grows, so the engine re-keys on data.
    """

    name = "max-benefit"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        p = [t.priority for t in workload.tables]
        a = [t.alpha for t in workload.tables]
        b = [t.beta for t in workload.tables]
        return BoundPolicy(key=lambda i, now, release, n: -p[i] * n / (a[i] + b[i] * n), rekey_on_data=True)


@register
class Random:
    """Random (Golab et al., Sec. 5): at each decision, a uniformly random ready table, drawn
    from the run's seed. It places through the placement hook because a key drawn once per
    release would not be uniform over the ready set at later decisions."""

    name = "random"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        def place(ready: list[int], free: list[int], now: float) -> list[tuple[int, int]]:
            chosen = rng.permutation(len(ready))[: len(free)]
            return [(ready[int(k)], track) for k, track in zip(chosen, free)]

        return BoundPolicy(key=lambda i, now, release, n: 0, place=place)
