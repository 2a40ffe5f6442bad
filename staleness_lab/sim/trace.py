"""What a simulation recorded: the completed jobs, freshness step functions and the staleness
integrals accumulated during the run. Tables are built once, columnar, on first access."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from operator import itemgetter

import numpy as np
import pandas as pd

from staleness_lab.model import Workload

#: Fields of the engine's job records, in order (finish is kept beside them).
RECORD_FIELDS = ("table", "track", "release", "start", "data_from", "data_to", "cost")
JOB_COLUMNS = ["table", "track", "release", "start", "finish", "data_from", "data_to", "cost"]
#: The sporadic job model's extra fields per job, aligned with the job records.
DEADLINE_FIELDS = ("deadline", "redated_from")
#: Fields of a sporadic job released but not started by the horizon.
UNSTARTED_FIELDS = ("table", "release", "deadline", "redated_from")


def close_at_horizon(area: list[float], peak: list[float], last_change: list[float], freshness: list[float],
                     warmup: float, horizon: float) -> None:
    """Close each table's lazily integrated staleness at the horizon (the engines' last step):
    add the area of t - F over [max(last change, warmup), horizon] and the staleness at the
    horizon to the peak. Lists are per table position and updated in place."""
    for i, f in enumerate(freshness):
        a = last_change[i] if last_change[i] > warmup else warmup
        area[i] += (horizon - a) * ((horizon + a) * 0.5 - f)
        if horizon - f > peak[i]:
            peak[i] = horizon - f


def table_time_order(pos: np.ndarray, time: np.ndarray) -> np.ndarray:
    """The stable permutation that orders steps by table position, then time
    (``np.lexsort((time, pos))``).

    Steps listed in time order (a trace's initial values at 0, then its jobs in finish order)
    need only a stable sort of the positions, which numpy does as a radix sort for 16-bit
    integers: 10x faster than the lexsort at 2 million jobs, and the same permutation. Anything
    else (times out of order, NaN, 2^15 tables or more) takes the lexsort."""
    if len(pos) and 0 <= pos.min() and pos.max() < 2**15 and bool(np.all(time[1:] >= time[:-1])):
        return np.argsort(pos.astype(np.int16), kind="stable")
    return np.lexsort((time, pos))


class JobColumns(Sequence):
    """Completed jobs held as numpy columns in :data:`RECORD_FIELDS` order (the compiled core's
    output): a read-only sequence of the engine's records, built as tuples only when a record is
    read, so a sweep that reads :attr:`Trace.columns` never pays for them."""

    def __init__(self, columns: Sequence[np.ndarray]) -> None:
        self.arrays = tuple(columns)

    @cached_property
    def _records(self) -> list[tuple]:
        table, track, *rest = self.arrays
        return list(zip(table.tolist(), track.tolist(), *(c.tolist() for c in rest)))

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, k):  # type: ignore[override]
        return self._records[k]

    def __iter__(self) -> Iterator[tuple]:
        return iter(self._records)

    def __add__(self, other: Sequence[tuple]) -> list[tuple]:
        return self._records + list(other)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._records == list(other)

    __hash__ = None  # type: ignore[assignment]


@dataclass(eq=False)
class Trace:
    """A run's record.

    ``jobs_done`` holds one record per completed job (fields :data:`RECORD_FIELDS`, table and
    track as positions; its finish is start + cost, the same float sum that timed the
    completion; a :class:`JobColumns` from the compiled core); ``in_flight`` the records of jobs still running at the horizon; ``staleness_area`` and
    ``max_staleness`` the exact per-table integrals over ``[warmup, horizon]`` accumulated by
    the engine.

    Under the sporadic job model (:mod:`staleness_lab.sim.sporadic`, ``job_model ==
    "sporadic"``) ``deadlines`` and ``in_flight_deadlines`` hold each job's (deadline,
    redated_from) beside its record (``redated_from`` is the release before a rule-(iv) re-dating,
    NaN if none), ``unstarted`` the jobs released but not started by the horizon (fields
    :data:`UNSTARTED_FIELDS`), and ``frames`` the trailing-edge steps and the policy's
    annotations (AUS's mode log).
    """

    workload: Workload
    policy: str
    events: int
    jobs_done: list[tuple]
    in_flight: list[tuple]
    staleness_area: list[float]
    max_staleness: list[float]
    job_model: str = "golab"
    deadlines: list[tuple[float, float]] = field(default_factory=list)
    in_flight_deadlines: list[tuple[float, float]] = field(default_factory=list)
    unstarted: list[tuple] = field(default_factory=list)
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def n_jobs(self) -> int:
        """Completed jobs (finished at or before the horizon)."""
        return len(self.jobs_done)

    @cached_property
    def job_tables(self) -> np.ndarray:
        """Table position of each completed job (cheaper than :attr:`columns` for counts)."""
        if isinstance(self.jobs_done, JobColumns):
            return self.jobs_done.arrays[0]
        return np.fromiter(map(itemgetter(0), self.jobs_done), dtype=np.int64, count=len(self.jobs_done))

    @cached_property
    def job_finish(self) -> np.ndarray:
        """Finish time of each completed job: start + cost, computed as the engine did."""
        if isinstance(self.jobs_done, JobColumns):
            return self.jobs_done.arrays[3] + self.jobs_done.arrays[6]
        start = np.fromiter(map(itemgetter(3), self.jobs_done), dtype=float, count=len(self.jobs_done))
        cost = np.fromiter(map(itemgetter(6), self.jobs_done), dtype=float, count=len(self.jobs_done))
        return start + cost

    @cached_property
    def columns(self) -> dict[str, np.ndarray]:
        """The completed jobs as numpy columns (table and track as int positions)."""
        if isinstance(self.jobs_done, JobColumns):
            cols = dict(zip(RECORD_FIELDS, self.jobs_done.arrays))
            cols["finish"] = self.job_finish
            return {name: cols[name] for name in JOB_COLUMNS}
        width = len(RECORD_FIELDS)
        flat = np.fromiter(chain.from_iterable(self.jobs_done), dtype=float, count=width * len(self.jobs_done))
        records = flat.reshape(-1, width)
        cols = {name: records[:, k] for k, name in enumerate(RECORD_FIELDS)}
        cols["table"] = self.job_tables
        cols["track"] = cols["track"].astype(np.int64)
        cols["finish"] = self.job_finish
        return {name: cols[name] for name in JOB_COLUMNS}

    @cached_property
    def jobs(self) -> pd.DataFrame:
        """One row per completed job: table (name), track, release, start, finish, data_from,
        data_to, cost, plus response = finish - release and stretch = response / cost."""
        names = np.array([t.name for t in self.workload.tables], dtype=object)
        cols = self.columns
        frame = pd.DataFrame({**cols, "table": pd.Series(names[cols["table"]], dtype="string")})
        frame["response"] = frame["finish"] - frame["release"]
        frame["stretch"] = frame["response"] / frame["cost"]
        if self.job_model == "sporadic":
            extra = np.array(self.deadlines, dtype=float).reshape(-1, len(DEADLINE_FIELDS))
            frame["deadline"] = extra[:, 0]
            frame["tardiness"] = np.maximum(0.0, frame["finish"].to_numpy() - extra[:, 0])
            frame["redated_from"] = extra[:, 1]
        return frame

    @cached_property
    def freshness(self) -> pd.DataFrame:
        """Freshness step functions, tidy: one row per (table, time) where F_i becomes
        ``freshness``, starting with F_i(0) at time 0, ordered by table position then time."""
        w = self.workload
        cols = self.columns
        pos = np.concatenate([np.arange(len(w.tables)), cols["table"]])
        time = np.concatenate([np.zeros(len(w.tables)), cols["finish"]])
        fresh = np.concatenate([[t.initial_freshness for t in w.tables], cols["data_to"]])
        order = table_time_order(pos, time)
        names = np.array([t.name for t in w.tables], dtype=object)
        return pd.DataFrame(
            {
                "table": pd.Series(names[pos[order]], dtype="string"),
                "time": time[order],
                "freshness": fresh[order],
            }
        )

    def staleness_at(self, table: str, times: np.ndarray) -> np.ndarray:
        """S_i(t) = t - F_i(t) at the given times (right-continuous: an update landing at t counts)."""
        steps = self.freshness[self.freshness["table"] == table]
        idx = np.searchsorted(steps["time"].to_numpy(), times, side="right") - 1
        return np.asarray(times, dtype=float) - steps["freshness"].to_numpy()[idx]
