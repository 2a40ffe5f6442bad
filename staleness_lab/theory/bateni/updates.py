"""A trace seen as Bateni et al.'s updates and batches (Sec. 1 of the digest).

Update j of base table i arrives at r_ij with data up to d_ij (d_ij = r_ij in the paper; the
workload may give ``data_to <= time``); its length is L_ij = d_ij - d_i,j-1 with d_i0 the table's
``initial_freshness``, and only arrivals that add data are updates. C_ij is the finish of the job
whose data span ``(data_from, data_to]`` holds d_ij. Every completed job of a base table is a
*batch*: c_k the length of its first update, d_k its wait (start minus the first update's
arrival), b_k its length, P_k its duration, and flow_k = finish - (start time of its first
update) = finish - data_from. Derived tables have no updates of their own and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.sim.trace import Trace


@dataclass(frozen=True)
class TableUpdates:
    """One base table's updates up to the horizon, and the batches that applied them.

    Update arrays (index j = 0, 1, ...): ``arrival``, ``data_to``, ``length``, ``completion``
    (NaN while unapplied), ``batch`` (index into the batch arrays, -1 while unapplied).
    Batch arrays, in start order: ``start``, ``finish``, ``cost``, ``data_from``, ``data_to``
    (as ``batch_to``), ``first`` and ``last`` (update indices), ``track``.
    """

    table: int
    name: str
    weight: float
    initial: float
    arrival: np.ndarray
    data_to: np.ndarray
    length: np.ndarray
    completion: np.ndarray
    batch: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    cost: np.ndarray
    data_from: np.ndarray
    batch_to: np.ndarray
    first: np.ndarray
    last: np.ndarray
    track: np.ndarray

    @property
    def applied(self) -> np.ndarray:
        """Whether each update has been applied by a completed job."""
        return self.batch >= 0

    @property
    def first_length(self) -> np.ndarray:
        """c_k: the length of each batch's first update."""
        return self.length[self.first]

    @property
    def wait(self) -> np.ndarray:
        """d_k: each batch's start minus its first update's arrival (the wait interval's length)."""
        return self.start - self.arrival[self.first]

    @property
    def span(self) -> np.ndarray:
        """b_k: each batch's length in data time."""
        return self.batch_to - self.data_from

    @property
    def flow(self) -> np.ndarray:
        """flow_k = finish - data_from (= c_k + d_k + P_k when data ends at arrival)."""
        return self.finish - self.data_from


def feed_updates(workload: Workload, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Arrival times and data ends of base table ``k``'s updates at or before the horizon."""
    table = workload.tables[k]
    horizon = workload.horizon
    if table.period is not None:  # every periodic arrival adds data
        count = int(np.floor((horizon - table.phase) / table.period))
        times = table.phase + np.arange(1, max(count, 0) + 2) * table.period
        times = times[times <= horizon]
        return times, times.copy()
    pairs = np.array(table.updates(), dtype=float).reshape(-1, 2)
    pairs = pairs[pairs[:, 0] <= horizon]
    return pairs[:, 0], pairs[:, 1]


def table_updates(trace: Trace) -> list[TableUpdates]:
    """Each base table's updates and batches in ``trace`` (derived tables left out)."""
    w = trace.workload
    cols = trace.columns
    out = []
    for k, table in enumerate(w.tables):
        if not table.is_base:
            continue
        arrival, data_to = feed_updates(w, k)
        mine = np.flatnonzero(cols["table"] == k)
        mine = mine[np.argsort(cols["start"][mine], kind="stable")]
        batch_to = cols["data_to"][mine]
        data_from = cols["data_from"][mine]
        length = np.diff(np.concatenate([[table.initial_freshness], data_to]))
        batch = np.searchsorted(batch_to, data_to, side="left")
        applied = batch < len(mine)
        finish = cols["finish"][mine]
        completion = np.where(applied, finish[np.minimum(batch, max(len(mine) - 1, 0))] if len(mine) else np.nan, np.nan)
        batch = np.where(applied, batch, -1)
        first = np.searchsorted(data_to, data_from, side="right")
        last = np.searchsorted(data_to, batch_to, side="left")
        out.append(TableUpdates(
            table=k, name=table.name, weight=table.priority, initial=table.initial_freshness,
            arrival=arrival, data_to=data_to, length=length, completion=completion, batch=batch,
            start=cols["start"][mine], finish=finish, cost=cols["cost"][mine], data_from=data_from,
            batch_to=batch_to, first=first, last=last, track=cols["track"][mine],
        ))
    return out
