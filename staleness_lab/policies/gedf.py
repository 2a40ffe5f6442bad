"""Non-preemptive global EDF on Leontyev et al.'s adaptable sporadic jobs (digest Sec. 1.5)."""

from __future__ import annotations

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.policies.options import Configurable
from staleness_lab.policies.registry import register


@register
class GedfNp(Configurable):
    """Non-preemptive global EDF (GEDF-NP) on sporadic update jobs (Leontyev et al., Sec. V).

    Whenever a track is idle and a job is ready, the ready job with the earliest deadline
    d = r + p_k starts and runs to completion; ties by release, then table position (A13). Jobs
    follow the sporadic model of :mod:`staleness_lab.sim.sporadic` (one file, or one period of a
    derived table's data, per job; releases by eq. 4). Periods are the workload's: a replayed
    feed needs a ``nominal_period``; a derived table takes its ``nominal_period`` or the largest
    period of its base ancestors.
    """

    name = "gedf-np"

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        period = workload.require_periods(self.name)
        return BoundPolicy(key=lambda i, now, release, n: (release + period[i], release), jobs="sporadic",
                           key_is_deadline=True)
