"""The baseline schedulers of Golab et al. (Sec. 3.1 and the experiments of Sec. 5), plus FIFO.

Each order is a key ending, through the engine, in the table's file position as tie-break.
EDF, EDF-P and Max Benefit are the paper's *basic algorithms*: they take the priority
inheritance options of Sec. 3.3 (:mod:`staleness_lab.policies.inheritance`), computed once at
bind time, so their keys cost the same with or without inheritance. With ``inheritance=none``
each key is exactly the plain algorithm's.
"""

from __future__ import annotations

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy, CompiledOrder, ReleaseOrder
from staleness_lab.policies.inheritance import Inheriting
from staleness_lab.policies.options import Configurable
from staleness_lab.policies.registry import register


@register
class Fifo(Configurable):
    """First in, first out: the earliest release runs first (not in the paper; a reference)."""

    name = "fifo"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        return ReleaseOrder().bind(workload, rng)


@register
class Edf(Inheriting):
    """Earliest deadline first: deadline = release + period (Golab et al., Sec. 3.1, Fig. 7).

    A derived table's period is the largest among its ancestors' (Sec. 2.4); a replayed feed
    needs a ``nominal_period``.

    EDF is the paper's non-prioritized baseline, so priorities cannot change which deadline comes
    first. With an inheritance mode other than ``none`` the inherited priority breaks deadline
    ties (highest first, then file position): our reading of inheritance for the one basic
    algorithm that has no priority to replace (the paper pairs inheritance only with Max
    Benefit). Ties are common in view hierarchies, where sibling views are released by one
    completion and share their ancestors' period.
    """

    name = "edf"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        period = workload.require_periods(self.name)
        if not self.inherits:
            return BoundPolicy(key=lambda i, now, release, n: release + period[i],
                               compiled=CompiledOrder("deadline", tuple(period)))
        neg_ip = [-v for v in self.scheduling_priorities(workload)]
        return BoundPolicy(key=lambda i, now, release, n: (release + period[i], neg_ip[i]),
                           compiled=CompiledOrder("deadline-priority", tuple(period), tuple(neg_ip)))


@register
class EdfP(Inheriting):
    """Prioritized EDF (EDF-P, Golab et al., Sec. 3.1): highest priority first, then the
    earliest deadline release + period.

    With inheritance the priority is the inherited one (Sec. 3.3)."""

    name = "edf-p"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        period = workload.require_periods(self.name)
        neg_priority = [-v for v in self.scheduling_priorities(workload)]
        return BoundPolicy(key=lambda i, now, release, n: (neg_priority[i], release + period[i]),
                           compiled=CompiledOrder("priority-deadline", tuple(period), tuple(neg_priority)))


@register
class MaxBenefit(Inheriting):
    """Max Benefit (Golab et al., Sec. 3.1): the largest marginal benefit
    p_i * dF_i / E_i(dF_i) first, with dF_i the data the job would load now (chopped).

    The key changes whenever a waiting table's data grows, so the engine re-keys on data.
    With inheritance p_i is the inherited priority (Sec. 3.3).
    """

    name = "max-benefit"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        p = self.scheduling_priorities(workload)
        a = [t.alpha for t in workload.tables]
        b = [t.beta for t in workload.tables]
        return BoundPolicy(key=lambda i, now, release, n: -p[i] * n / (a[i] + b[i] * n), rekey_on_data=True,
                           compiled=CompiledOrder("benefit", tuple(p)))


@register
class Random(Configurable):
    """Random (Golab et al., Sec. 5): each dispatch runs a ready table drawn uniformly at random.

    Implemented as an exponential race with a virtual clock, so it stays an O(log n) heap order:
    a table becoming ready gets the key ``c + X`` with X ~ Exp(1) and ``c`` the key of the last
    table started. By memorylessness, every waiting table's key minus ``c`` is again an
    independent Exp(1) at each decision, so the smallest key is uniform over the ready set
    (a key drawn once per release without the clock would favour newly released tables).
    """

    name = "random"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        pool: list[float] = []
        keys = [0.0] * len(workload.tables)
        clock = [0.0]

        def key(i: int, now: float, release: float, n: float) -> float:
            if not pool:
                pool.extend(rng.standard_exponential(4096).tolist())
            keys[i] = clock[0] + pool.pop()
            return keys[i]

        def on_start(i: int, track: int, now: float) -> None:
            clock[0] = keys[i]

        return BoundPolicy(key=key, on_start=on_start, compiled=CompiledOrder("random", rng=rng))
