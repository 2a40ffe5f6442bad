"""A :class:`~staleness_lab.sim.trace.Trace` of a schedule computed outside the engine (an exact
optimum, a brute-force schedule), measured as the engine measures its own runs.

The engine's rules (:mod:`staleness_lab.sim.engine`) are applied to the given jobs: a job
finishing at or before the horizon is completed and sets its table's freshness to its
``data_to`` at its finish; a job started at or before the horizon and finishing after it is in
flight and raises nothing; a job starting after the horizon never ran. Staleness areas are the
engine's closed-form trapezoids over ``[warmup, horizon]``, computed here in exact Fractions
(every number of a job is read exactly: a float as its binary value, a Fraction as itself) and
stored as floats; ``max_staleness`` follows the engine's rule (the staleness just before each
completion inside the window, and at the horizon).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from staleness_lab.model import Workload
from staleness_lab.sim.arrivals import arrival_chunks
from staleness_lab.sim.trace import Trace

Number = float | int | Fraction


def trace_from_schedule(workload: Workload, jobs: Sequence[tuple[Number, ...]], policy_name: str) -> Trace:
    """The trace of ``jobs`` on ``workload`` over ``[0, horizon]``.

    ``jobs`` are engine records ``(table_pos, track, release, start, data_from, data_to, cost)``
    (:data:`~staleness_lab.sim.trace.RECORD_FIELDS`), one per job, in any order; a job's finish
    is start + cost. The trace's records hold floats; ``events`` counts the feed arrivals at or
    before the horizon plus the completed jobs, as the engine does.
    """
    horizon = Fraction(workload.horizon)
    warmup = Fraction(workload.warmup)
    exact = [tuple(Fraction(v) for v in job) for job in jobs]
    finished = sorted((job for job in exact if job[3] + job[6] <= horizon), key=lambda job: (job[3] + job[6], job[0]))
    running = sorted((job for job in exact if job[3] <= horizon < job[3] + job[6]), key=lambda job: job[0])

    tables = workload.tables
    fresh = [Fraction(t.initial_freshness) for t in tables]
    last_change = [Fraction(0)] * len(tables)
    area = [Fraction(0)] * len(tables)
    peak: list[Fraction | None] = [None] * len(tables)

    def integrate(i: int, until: Fraction) -> None:
        begin = max(last_change[i], warmup)
        if until > begin:
            area[i] += (until - begin) * ((until + begin) / 2 - fresh[i])
            if peak[i] is None or until - fresh[i] > peak[i]:
                peak[i] = until - fresh[i]

    for job in finished:
        i = int(job[0])
        finish = job[3] + job[6]
        integrate(i, finish)
        fresh[i] = job[5]
        last_change[i] = finish
    for i in range(len(tables)):
        begin = max(last_change[i], warmup)
        area[i] += (horizon - begin) * ((horizon + begin) / 2 - fresh[i])
        if peak[i] is None or horizon - fresh[i] > peak[i]:
            peak[i] = horizon - fresh[i]

    return Trace(
        workload=workload,
        policy=policy_name,
        events=sum(len(times) for times, _, _ in arrival_chunks(workload)) + len(finished),
        jobs_done=[_record(job) for job in finished],
        in_flight=[_record(job) for job in running],
        staleness_area=[float(a) for a in area],
        max_staleness=[float(m) for m in peak],  # type: ignore[arg-type]
    )


def _record(job: tuple[Fraction, ...]) -> tuple:
    """An engine record: table and track as ints, every time as a float."""
    table, track, *times = job
    return (int(table), int(track), *(float(v) for v in times))
