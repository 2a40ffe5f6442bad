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

    def blockers(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Batches blocking batch ``k`` and the arc weights (overlap of their execution with
        k's wait interval, over their duration)."""
        before = np.arange(np.searchsorted(self.start, self.start[k], side="left"))
        overlap = np.minimum(self.finish[before], self.start[k]) - np.maximum(self.start[before], self.arrival[k])
        hit = overlap > 0
        return before[hit], overlap[hit] / self.cost[before[hit]]


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


def claim_3_5(batches: Batches, alpha: float, tables: int, tracks: int, x: float, beta_tardy: float) -> Diagnostic | None:
    """The tardy batch with the smallest ``sum (w b)^2 / (p^2 d^2 (1-x)^2 / (3 t alpha^2))``;
    None when no batch is tardy."""
    tardy = np.flatnonzero(batches.tardy(beta_tardy))
    worst: Diagnostic | None = None
    for k in tardy:
        kids, weight = batches.blockers(k)
        lhs = float(np.sum((weight * batches.b[kids]) ** 2))
        rhs = tracks**2 * batches.d[k] ** 2 * (1 - x) ** 2 / (3 * tables * alpha**2)
        if worst is None or lhs * worst.rhs < worst.lhs * rhs:
            own = bool(np.any(batches.table[kids] == batches.table[k]))
            worst = Diagnostic(lhs=lhs, rhs=float(rhs), batch=int(k), table=int(batches.table[k]),
                               start=float(batches.start[k]), own_table_wait=own, tardy_batches=len(tardy))
    return worst


def lemma_3_4(batches: Batches, alpha: float, tables: int, tracks: int, x: float, beta_tardy: float) -> Diagnostic | None:
    """The tardy batch with the largest ``(c+d)^2 / sum_j v_ij b_j^2``; None when none is tardy."""
    tardy = batches.tardy(beta_tardy)
    g = gamma(alpha, tables, tracks, beta_tardy, x)
    reach = np.where(tardy, 0.0, batches.b**2 / beta_tardy**2)
    worst: Diagnostic | None = None
    for k in np.flatnonzero(tardy):  # start order is topological: blockers come first
        kids, weight = batches.blockers(k)
        reach[k] = float(np.sum(g * weight**2 * reach[kids]))
        lhs = float((batches.c[k] + batches.d[k]) ** 2)
        if worst is None or lhs * worst.rhs > worst.lhs * reach[k]:
            own = bool(np.any(batches.table[kids] == batches.table[k]))
            worst = Diagnostic(lhs=lhs, rhs=float(reach[k]), batch=int(k), table=int(batches.table[k]),
                               start=float(batches.start[k]), own_table_wait=own, tardy_batches=int(tardy.sum()))
    return worst


def blocking_dag(batches: Batches, beta_tardy: float = BETA_TARDY) -> list[tuple[int, int, float]]:
    """The blocking DAG's arcs ``(tardy batch, blocker, weight)``, batches by position in start
    order (punctual batches are sinks)."""
    arcs = []
    for k in np.flatnonzero(batches.tardy(beta_tardy)):
        kids, weight = batches.blockers(k)
        arcs.extend((int(k), int(c), float(wt)) for c, wt in zip(kids, weight))
    return arcs
