"""The proof objects of Theorem 3.1 as diagnostics: tardy batches, the blocking DAG, Claim 3.5
and Lemma 3.4 (digest Sec. 2 "Proof objects" and Sec. 3).

* A batch is *tardy* when ``c < beta (c + d)`` (beta is the proof parameter, ``beta_tardy``
  here; the schema's ``beta`` is a cost), else *punctual*.
* Batch B *blocks* B' when B's execution interval ``[start, finish]`` meets B''s wait interval
  ``(first arrival, start]`` in positive length; arcs go from each tardy batch to its blockers,
  weighted by the fraction of the blocker's execution inside the wait interval. Blockers start
  earlier, so the graph is acyclic and start order is a topological order.
* Claim 3.5: for a tardy B_0, ``sum_j (w_0j b_j)^2 >= p^2 d_0^2 (1-x)^2 / (3 t alpha^2)``.
* Lemma 3.4: ``(c_i + d_i)^2 <= sum_{j punctual} v_ij b_j^2`` with
  ``v_ij = (1/beta^2) sum_{paths i->j} prod_e gamma w_e^2`` (eq. 16) and
  ``gamma = (3 t alpha^2/p^2) / ((1-beta)(1-x))^2`` (eq. 15), computed by one pass in start order:
  ``S_i = b_i^2/beta^2`` for punctual i, ``S_i = sum_children gamma w^2 S_child`` for tardy i.

Both are erratum A1/E5: they ignore a tardy batch waiting for its own table's running batch while
tracks idle, so they may fail while Theorem 3.1 holds. The checks report them as diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from staleness_lab.theory.bateni.updates import TableUpdates

#: The proof parameter beta used by the diagnostics when none is given (the digest's E5).
BETA_TARDY = 0.6


@dataclass(frozen=True)
class Batches:
    """Every base-table batch of a trace, in start order: table position, start, finish, cost
    P, first update's arrival r, first length c, wait d, length b."""

    table: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    cost: np.ndarray
    arrival: np.ndarray
    c: np.ndarray
    d: np.ndarray
    b: np.ndarray

    @classmethod
    def of(cls, updates: list[TableUpdates]) -> "Batches":
        parts = {
            "table": [np.full(len(u.start), u.table, dtype=np.int64) for u in updates],
            "start": [u.start for u in updates],
            "finish": [u.finish for u in updates],
            "cost": [u.cost for u in updates],
            "arrival": [u.arrival[u.first] for u in updates],
            "c": [u.first_length for u in updates],
            "d": [u.wait for u in updates],
            "b": [u.span for u in updates],
        }
        joined = {k: np.concatenate(v) if v else np.empty(0) for k, v in parts.items()}
        order = np.argsort(joined["start"], kind="stable")
        return cls(**{k: v[order] for k, v in joined.items()})

    def tardy(self, beta_tardy: float) -> np.ndarray:
        return self.c < beta_tardy * (self.c + self.d)

    def arcs(self, beta_tardy: float) -> "Arcs":
        """The blocking DAG's arcs out of every tardy batch, found for all of them at once.

        Batch ``j`` blocks ``k`` when it starts before ``k`` and its execution overlaps ``k``'s
        wait interval ``(arrival, start]`` in positive length. Only the batches between the
        first one that can still run at ``k``'s arrival (a binary search on the running maximum
        of the finish times) and ``k`` itself are candidates, so the cost is the arcs plus a
        binary search per batch, not a scan of every earlier batch per batch."""
        tardy = np.flatnonzero(self.tardy(beta_tardy))
        finished_by = np.maximum.accumulate(self.finish)
        first = np.searchsorted(finished_by, self.arrival[tardy], side="right")
        count = np.maximum(np.searchsorted(self.start, self.start[tardy], side="left") - first, 0)
        owner = np.repeat(np.arange(len(tardy)), count)
        offset = np.cumsum(count) - count
        kid = np.arange(int(count.sum())) - np.repeat(offset - first, count)
        k = tardy[owner]
        overlap = np.minimum(self.finish[kid], self.start[k]) - np.maximum(self.start[kid], self.arrival[k])
        hit = overlap > 0
        owner, kid = owner[hit], kid[hit]
        return Arcs(batches=self, beta_tardy=beta_tardy, tardy=tardy, owner=owner, kid=kid,
                    weight=overlap[hit] / self.cost[kid])


@dataclass(frozen=True)
class Arcs:
    """The blocking DAG of ``batches`` at ``beta_tardy``: arc ``i`` goes from tardy batch
    ``tardy[owner[i]]`` to its blocker ``kid[i]`` with weight ``weight[i]``; arcs are grouped by
    owner, owners in start order."""

    batches: Batches
    beta_tardy: float
    tardy: np.ndarray
    owner: np.ndarray
    kid: np.ndarray
    weight: np.ndarray

    def diagnostic(self, position: int, lhs: float, rhs: float) -> "Diagnostic":
        """The diagnostic's worst batch, tardy batch ``tardy[position]``, with its two sides."""
        k = int(self.tardy[position])
        table = self.batches.table
        own = bool(np.any(table[self.kid[self.owner == position]] == table[k]))
        return Diagnostic(lhs=float(lhs), rhs=float(rhs), batch=k, table=int(table[k]),
                          start=float(self.batches.start[k]), own_table_wait=own, tardy_batches=len(self.tardy))


def gamma(alpha: float, tables: int, tracks: int, beta_tardy: float, x: float) -> float:
    """gamma of eq. 15: (3 t alpha^2 / p^2) (1/((1-beta)(1-x)))^2."""
    return 3 * tables * alpha**2 / tracks**2 / ((1 - beta_tardy) * (1 - x)) ** 2


@dataclass(frozen=True)
class Diagnostic:
    """The worst batch of a diagnostic: ``lhs`` and ``rhs`` of the inequality it should satisfy
    (``lhs >= rhs`` for Claim 3.5, ``lhs <= rhs`` for Lemma 3.4), with the batch's position in
    start order, its table, start, and whether it waited on its own table's batch."""

    lhs: float
    rhs: float
    batch: int
    table: int
    start: float
    own_table_wait: bool
    tardy_batches: int


def claim_3_5(dag: Arcs, alpha: float, tables: int, tracks: int, x: float) -> Diagnostic | None:
    """The tardy batch with the smallest ``sum (w b)^2 / (p^2 d^2 (1-x)^2 / (3 t alpha^2))``;
    None when no batch is tardy."""
    if not len(dag.tardy):
        return None
    batches = dag.batches
    lhs = np.bincount(dag.owner, weights=(dag.weight * batches.b[dag.kid]) ** 2, minlength=len(dag.tardy))
    rhs = tracks**2 * batches.d[dag.tardy] ** 2 * (1 - x) ** 2 / (3 * tables * alpha**2)
    worst = int(np.argmin(lhs / rhs))  # rhs > 0: a tardy batch waited (d > 0), and alpha > 0, x < 1
    return dag.diagnostic(worst, lhs[worst], rhs[worst])


def lemma_3_4(dag: Arcs, alpha: float, tables: int, tracks: int, x: float) -> Diagnostic | None:
    """The tardy batch with the largest ``(c+d)^2 / sum_j v_ij b_j^2``; None when none is tardy.

    ``S_k`` of a tardy batch sums over its blockers, which start earlier: one pass in start order
    (a topological order) computes them all."""
    if not len(dag.tardy):
        return None
    batches, beta_tardy = dag.batches, dag.beta_tardy
    g = gamma(alpha, tables, tracks, beta_tardy, x)
    reach = np.where(batches.tardy(beta_tardy), 0.0, batches.b**2 / beta_tardy**2).tolist()
    step = (g * dag.weight**2).tolist()
    kids = dag.kid.tolist()
    ends = np.searchsorted(dag.owner, np.arange(len(dag.tardy)), side="right").tolist()
    lhs_all = ((batches.c + batches.d) ** 2).tolist()
    worst, worst_lhs, worst_rhs, arc = -1, 0.0, 0.0, 0
    for position, k in enumerate(dag.tardy.tolist()):
        total = 0.0
        for i in range(arc, ends[position]):
            total += step[i] * reach[kids[i]]
        arc = ends[position]
        reach[k] = total
        lhs = lhs_all[k]
        if worst < 0 or lhs * worst_rhs > worst_lhs * total:
            worst, worst_lhs, worst_rhs = position, lhs, total
    return dag.diagnostic(worst, worst_lhs, worst_rhs)
