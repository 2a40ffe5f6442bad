"""Experiment rows on Spark executors (the Spark half of ``run_grid(..., runner="spark")``).

The rows go out as one job. Each task runs its rows one after the other with the row function
the caller hands in (:func:`staleness_lab.sweeps.runner.run_sweep` passes
:func:`staleness_lab.sweeps.runner.execute_row` bound to the experiment), which writes each row's
cache file on the executor as soon as the row finishes and returns its frame, or an error
record, to the driver. This module imports nothing of the sweep machinery or the experiments:
it receives the rows and the row function, and returns the outcomes sorted by their ``index``.

Tasks: one per row while there are at most :data:`TASKS_PER_CORE` rows per core
(``defaultParallelism``); beyond that, ``TASKS_PER_CORE`` tasks per core with the rows dealt
round-robin (so neighbouring, similar rows spread over the cores). A Python task costs tens of
milliseconds of Spark overhead here, more than a short simulation: measured on the 120-row
quickstart sweep on ``local[2]``, one task per row took ~3x the local loop's time.

The job runs in a helper thread so the driver can follow it through Spark's status tracker and
move the progress bar as tasks finish; interrupting the driver (Ctrl-C) cancels the job.

The row function, and with it the experiment object, is shipped with the tasks (cloudpickle),
so an experiment defined in a notebook runs too, as long as the executors can import what it
uses.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession


class Indexed(Protocol):
    """What this module needs of a row's outcome: the row's position in the grid."""

    @property
    def index(self) -> int: ...


#: A row as the caller describes it (opaque here: it goes to the row function as it came).
RowTask = TypeVar("RowTask")
#: A row's outcome as the row function returns it.
RowOutcome = TypeVar("RowOutcome", bound=Indexed)

POLL_SECONDS = 0.25
#: Tasks per core (``defaultParallelism``) beyond which rows share tasks.
TASKS_PER_CORE = 8


def plan_chunks(tasks: list[RowTask], parallelism: int) -> list[list[RowTask]]:
    """The rows of each Spark task: one row per task up to ``TASKS_PER_CORE`` per core, else
    that many tasks with the rows dealt round-robin."""
    n = min(len(tasks), max(1, TASKS_PER_CORE * max(1, parallelism)))
    return [tasks[k::n] for k in range(n)] if n else []


def _chunk_function(run_row: Callable[[RowTask], RowOutcome]) -> Callable[[list[RowTask]], list[RowOutcome]]:
    def run(chunk: list[RowTask]) -> list[RowOutcome]:
        return [run_row(task) for task in chunk]

    return run


def _completed_tasks(spark: SparkSession, group: str) -> int:
    tracker = spark.sparkContext.statusTracker()
    done = 0
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        if job is None:
            continue
        for stage_id in job.stageIds:
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                done += stage.numCompletedTasks
    return done


def run_rows(
    spark: SparkSession,
    run_row: Callable[[RowTask], RowOutcome],
    tasks: list[RowTask],
    *,
    description: str = "sweep",
    on_progress: Callable[[int], Any] | None = None,
) -> list[RowOutcome]:
    """Run ``run_row(task)`` for each of ``tasks`` on the session's executors; outcomes in row
    order. ``run_row`` must not raise (a failing row comes back as an outcome with an error
    record) and must pickle (cloudpickle) to the executors.

    ``description`` names the Spark job (``<description>: <n> rows``); ``on_progress(n)`` is
    called on the driver with the number of rows newly finished."""
    if not tasks:
        return []
    from pyspark import InheritableThread

    sc = spark.sparkContext
    chunks = plan_chunks(tasks, sc.defaultParallelism)
    group = f"staleness-lab-{uuid.uuid4().hex[:12]}"
    box: dict[str, Any] = {}

    def job() -> None:
        try:
            sc.setJobGroup(group, f"{description}: {len(tasks)} rows", interruptOnCancel=True)
            box["result"] = sc.parallelize(chunks, numSlices=len(chunks)).flatMap(_chunk_function(run_row)).collect()
        except BaseException as err:  # noqa: BLE001 - re-raised on the calling thread
            box["error"] = err

    thread = InheritableThread(target=job, name=group, daemon=True)
    reported = 0

    def report(done: int) -> None:
        nonlocal reported
        done = min(done, len(tasks))
        if on_progress is not None and done > reported:
            on_progress(done - reported)
        reported = max(reported, done)

    thread.start()
    try:
        while thread.is_alive():
            thread.join(POLL_SECONDS)
            if thread.is_alive():
                try:
                    report(_completed_tasks(spark, group) * len(tasks) // len(chunks))
                except Exception:  # noqa: BLE001 - progress is best effort
                    pass
    except BaseException:
        sc.cancelJobGroup(group)
        thread.join(30)
        raise
    if "error" in box:
        raise box["error"]
    report(len(tasks))
    return sorted(box["result"], key=lambda outcome: outcome.index)
