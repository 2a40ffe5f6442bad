"""PRP, the baseline of Leontyev et al.'s Fig. 9: Golab et al.'s Proportional with the paper's
priorities (digest Sec. 2.7).

What the paper says (four sentences, line 309 of the seed; correction 9): tasks with shorter
nominal periods get higher priority; ties go to the larger ratio of freshness gained to
worst-case execution time; tasks are clustered by period; a job may be promoted to any
available processor; update lengths are unbounded, so all pending data loads as one job.

Everything else is a design choice of this project, marked [D]:

* [D] clusters are the groups of *equal* nominal period, ordered by period, so the
  longest-period cluster sits on the lowest tracks (Fig. 9: C2 = {p = 900} on track 0,
  C1 = {p = 300} on track 1);
* [D] tracks by Proportional's ``all`` allocation (M = m / U_tot) and its dispatch rule
  (:mod:`staleness_lab.policies.proportional`), on nominal costs E_k(p_k);
* [D] the ratio's worst-case execution time is hi * (S + R * L), hi the upper end of the cost
  noise (1 + b for ``variability`` b, 1 without noise), L the data the job would load now; the
  key is re-computed whenever pending data grows;
* [D] promotion is aggressive by default (a short-period job may take any idle track of a
  longer-period cluster; long jobs never borrow short clusters' tracks): in the digest's
  prototype the non-aggressive variant never delayed C2, contradicting Fig. 9(b).

No deadlines, no modes: PRP runs on the foundation's (Golab) job model.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.policies.options import Configurable, Option
from staleness_lab.policies.proportional import allocate, make_place
from staleness_lab.policies.registry import register
from staleness_lab.theory.leontyev.workloads import noise_bounds


def period_clusters(periods: tuple[float, ...]) -> list[list[int]]:
    """Table positions grouped by equal period, shortest period first (positions ascending)."""
    groups: dict[float, list[int]] = {}
    for i, p in enumerate(periods):
        groups.setdefault(p, []).append(i)
    return [groups[p] for p in sorted(groups)]


@register
class Prp(Configurable):
    """PRP (Leontyev et al., Sec. VII; digest Sec. 2.7): shortest nominal period first, ties by
    the larger freshness gain per worst-case cost, on period clusters with Proportional's track
    allocation and promotion; every job loads all pending data (Golab job model)."""

    name = "prp"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option("aggressive", bool, True, "a short-period job may take any idle track of a longer-period cluster"),
    )

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        periods = workload.require_periods(self.name)
        alloc = allocate(workload, period_clusters(periods), mode="all")
        hi = float(noise_bounds(workload)[1])
        alpha = [t.alpha for t in workload.tables]
        beta = [t.beta for t in workload.tables]

        def key(i: int, now: float, release: float, n: float) -> tuple[float, float]:
            return (periods[i], -n / (hi * (alpha[i] + beta[i] * n)))

        return BoundPolicy(key=key, rekey_on_data=True, place=make_place(alloc, self.options["aggressive"]))
