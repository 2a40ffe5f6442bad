"""A tighter staleness bound for GEDF-NP: Theorem 2 with every release at or before its file's slot.

Leontyev et al.'s base-table bound (Def. 13, Theorem 2, appendix) is
A(V_k) = Theta_k + p_k + max(phi_k, p_k + J_k + kappa_k). Its proof (Case 2) bounds the freshness
left by job h through h's own release, F(V_k, f_{k,h}) >= r_{k,h} - p_k - J_k - kappa_k (Lemma A3),
and then pays one more period to reach the next release, r_{k,h+1} = d_{k,h} <= r_{k,h} + p_k. It
must: after an outage or a mode change the release of job h can lie a full period past its file's
slot (Lemma A2 only gives r_{k,h} <= phi_k + h p_k).

Under GEDF-NP from time 0 on a feed whose every file is on its slot, the period is not needed.
Write a*_h = phi_k + (h - 1) p_k for the slot of file h (the h-th file carrying data). Then

**Slot lemma.** r_{k,h} <= a*_h for every job h >= 1 (job h loads file h, one file per job).
By induction over eq. 4: job 1 is released at the first non-fresh instant after the dummy job 0
(r = d = f = 0), which is file 1's arrival <= a*_1 (Def. 2: files arrive up to J early, never
late). Job h + 1 is released either at d_{k,h} = r_{k,h} + p_k <= a*_h + p_k = a*_{h+1}, or, when
V_k is fresh at max(d_{k,h}, f_{k,h}), at the first later non-fresh instant, file h + 1's arrival
<= a*_{h+1} (Claim A6). GEDF-NP has one period, so d = r + p_k always (AUS's recovery releases,
rules (i)-(vii), break the induction; so does a file off its slot).

**Bound.** A^slot(V_k) = Theta_k + max(phi_k, p_k + J_k + kappa_k) (:func:`slot_staleness_bounds`).
At t with V_k fresh, F >= TE >= t - max(phi_k, p_k + J_k + kappa_k) (Claim A1). Otherwise let job h
be the last to complete by t (f_{k,0} = 0) and job h + 1 the one loading the next file, so
t < f_{k,h+1} <= r_{k,h+1} + Theta_k (eq. 5, Lemma 1). For h = 0, F(V_k, t) = 0 and r_{k,1} <=
a*_1 = phi_k, so S(V_k, t) < phi_k + Theta_k. For h >= 1, F(V_k, t) >= ts(file h) >= a*_h - J_k -
kappa_k (Claim A4) = a*_{h+1} - p_k - J_k - kappa_k >= r_{k,h+1} - p_k - J_k - kappa_k (slot lemma),
so S(V_k, t) < Theta_k + p_k + J_k + kappa_k. The horizon adds nothing: a job still running there
has f > horizon. Derived tables compose as Theorem 3 does (Lemma A4 with B the largest source
bound, :func:`.bounds.dag_staleness`), over their sources' slot bounds, so a view gains what its
deepest base gains.

Preconditions, on top of Theorem 2's (U_sum <= m, budgets respected, F(V_k, 0) = 0, the feed
healthy through the horizon): the scheduler is GEDF-NP, and ``files-on-slot`` (:func:`on_slot`):
every file carrying data arrives in [a*_h - J_k, a*_h] with its timestamp in [arr - kappa_k, arr]
(Def. 2 asks that only of *some* file in every window of length p + J, which is too weak here).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.theory.leontyev.bounds import dag_staleness, response_time_bounds
from staleness_lab.theory.leontyev.checks import feed, files_and_slots
from staleness_lab.theory.leontyev.tasks import Task, TaskSet
from staleness_lab.theory.records import Precondition

#: The bound's name where a caller chooses between it and Leontyev et al.'s (``budget --bound``).
SLOT = "slot"


def slot_base_lag(task: Task) -> Fraction:
    """max(phi_k, p_k + J_k + kappa_k): what a base table adds to Theta_k under the slot bound."""
    return max(task.phi, task.p + task.J + task.kappa)  # type: ignore[type-var,operator,return-value]


def slot_staleness_from_response(ts: TaskSet, theta: Sequence[Fraction]) -> tuple[Fraction, ...]:
    """A^slot(V_k) for every table given response-time bounds ``theta`` (module docstring):
    Theta_k + max(phi_k, p_k + J_k + kappa_k) for a base table, Theta_k + p_k + the largest source
    bound for a derived one. Exactly p_k below Def. 13's A(V_k) on a base table."""
    return dag_staleness(ts, theta, slot_base_lag)


def slot_staleness_bounds(ts: TaskSet) -> tuple[Fraction, ...]:
    """A^slot(V_k) with GEDF-NP's Theta_k = p_k + Y_k (Lemma 1, Theorem 1): valid for runs under
    gedf-np only, with the preconditions of the module docstring. E5's system (e = 1, p = 3,
    phi = 1, m = 1, Theta = 4) gives 4 + 3 = 7 where Def. 13 gives 10."""
    return slot_staleness_from_response(ts, response_time_bounds(ts, "gedf-np"))


def on_slot(workload: Workload, k: int) -> Precondition:
    """``files-on-slot``: every file of base table ``k`` that carries data and arrives by the
    horizon is on its nominal slot (arrival in [a* - J, a*], timestamp in [arr - kappa, arr])."""
    f = feed(workload, k)
    counted = files_and_slots(workload, k)[3]
    off = np.flatnonzero(counted & ~f.on_time & (f.arrival <= workload.horizon))
    if len(off):
        j = int(off[0])
        return Precondition("files-on-slot", False,
                            f"file {j + 1} arrives at {f.arrival[j]:g} (ts {f.timestamp[j]:g}) off its slot "
                            f"{f.slot[j]:g} (needs arr in [a* - J, a*], ts in [arr - kappa, arr]): the slot bound "
                            f"needs every release at or before its file's slot")
    return Precondition("files-on-slot", True, "every file carrying data arrives on its slot (r_h <= a*_h for every job)")
