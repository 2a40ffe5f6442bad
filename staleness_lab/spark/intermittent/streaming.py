"""The catalogue's queries on Spark Structured Streaming, over the same Parquet parts (digest §5-6).

Chandrasekaran & Sudarshan compare their batch scheduler with Spark Structured Streaming:

* Fig. 5: each query streamed at the default trigger (a micro-batch as soon as data arrives),
  at batch intervals of 5, 10, 30 and 40 minutes and one-shot, as a multiple of the single-batch
  cost. ``stream_rows(names, data, TRIGGERS)`` gives the streaming side of that figure; the
  single batch is :func:`staleness_lab.spark.intermittent.steps.run_partial` + ``run_final``.
* Table 2, file-based row: CQ1-CQ4 streamed default and one-shot (the Kafka rows: N/A here).
* The multi-query runs (60x at the default interval, 12x at 10 minutes against CQS with LLF):
  the paper runs each group of queries concurrently in one Spark context; here each query runs on
  its own, one after another, and a group's streaming cost is the sum of its queries' costs.

How a query streams:

* Input: a per-run directory under a temporary run directory holds symlinks to the parts of
  each stream the query reads (Spark's file source follows them). The source lists files oldest
  first *by the modification time of the link's target*, so the parts must be in order: when the
  targets' times (milliseconds, as Spark reads them) do not increase strictly with the part
  number, the parts are copied instead, with increasing times set. The source reads them with
  the explicit schema, ``maxFilesPerTrigger`` = the trigger's files (per stream; none for
  one-shot) and ``trigger(availableNow=True)``: every micro-batch runs back to back, nothing
  sleeps.
* Triggers (:func:`files_per_trigger`): ``default`` = 1 file per trigger (one arrival); the
  paper's 5/10/30/40-minute intervals of its 4500-file, 4500-second window = ``P * seconds / 4500``
  files for P parts, rounded to the nearest integer (exact arithmetic; no whole P gives a tie),
  at least 1; ``one-shot`` = no limit (one micro-batch for everything).
* Formulation: the catalogue's reference text (:class:`~.catalogue.SqlReference`),
  its stream placeholders bound to streaming DataFrames and its static ones to the cached static
  tables. No third copy of any query.
* Stream-only and stream-static queries (Q1, Q6, Q14, Q19, CQ1-CQ4): complete output mode.
  Spark 4 accepts their ORDER BY and LIMIT after the aggregation in complete mode, so the text
  runs unchanged.
* Stream-stream queries (Q3, Q4, Q9, Q10, Q12): Spark allows an aggregation after a
  stream-stream join only in append mode, with an event-time column among the grouping keys.
  The streams' ``arrival_ts`` become ``o_arrival_ts`` and ``l_arrival_ts``, each with a
  watermark of :data:`WATERMARK_SECONDS`; the catalogue's stream markers become the paper's join
  time bound (``o_arrival_ts`` within :data:`JOIN_BOUND_SECONDS` of ``l_arrival_ts``) and ONE
  tumbling event-time window on ``o_arrival_ts`` covering exactly the parts' arrivals
  ``[first, last + 1 s)``. Spark refuses sorting in append mode, so the text's final ORDER BY
  (and LIMIT) is cut off and applied, as batch SQL, to the collected result; the window is a
  grouping key only and never in the result.
* Sentinel: the window is emitted only once the watermark passes its end, i.e. once an event
  past it arrives. Each stream's input gets one extra file after the last part whose rows arrive
  at window end + watermark + join bound + 1 s (the join's output watermark lags the inputs' by
  the bound). Spark pushes a query's single-table filters below the watermark (even into the
  Parquet scan), and rows filtered there do not move it, so the sentinel rows pass the stream-side
  filters of all five queries (:data:`SENTINEL_ROWS`) while their keys (negative order keys,
  customer/part/supplier key -1; TPC-H keys are positive) match no row of the other stream and
  no static row: they change no result. A run whose watermark never reached the sentinel's is
  ``failed`` (the window would not have closed), never an empty result passed off as one.
* Refusals and failures: an ``AnalysisException`` (Spark refuses the formulation, e.g. an
  ``EXISTS`` subquery over a stream, which is why Q4's text is a left semi join) makes the run
  ``unsupported``; any other Spark error (a ``StreamingQueryException``, out of memory)
  ``failed``; the reason is the first line of Spark's message and cost, batches and result stay
  empty.
* Sink: the memory sink under a unique query name (complete mode: the table is the last full
  result; append mode: the emitted rows accumulate), dropped once collected; the checkpoint is
  under the run directory, which is removed afterwards. The query is always stopped.

Readings (:class:`StreamRun`): ``cost_seconds`` = the sum of ``durationMs["triggerExecution"]``
over every micro-batch, collected by a ``StreamingQueryListener`` registered for the run (events
filtered by the query's id), because ``recentProgress`` keeps only the last
``spark.sql.streaming.numRecentProgressUpdates`` (100) updates; ``micro_batches`` = the progress
events, one per executed micro-batch including the no-data batch Spark runs after the last data
to advance the watermark and close the window (it does work, so its time is part of the cost;
availableNow posts no idle events); ``progress_retained`` = what ``recentProgress`` still held.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from math import floor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from staleness_lab.errors import InputError
from staleness_lab.spark.intermittent.catalogue import CATALOGUE, CatalogueQuery, TpchData, compare_results, stream_schema

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd
    from pyspark.sql import DataFrame

#: The paper's window: 4500 files arriving at 1 file per second.
PAPER_WINDOW_SECONDS = 4500
#: The paper's batch intervals (Fig. 5), in seconds of its window.
INTERVALS: dict[str, int] = {"5min": 300, "10min": 600, "30min": 1800, "40min": 2400}
#: The named triggers, in Fig. 5's order.
TRIGGERS = ("default", "5min", "10min", "30min", "40min", "one-shot")
#: The paper's watermark delay and join time bound (Fig. 5: 2 s each).
WATERMARK_SECONDS = 2
JOIN_BOUND_SECONDS = 2
#: How long to wait for the listener's termination event (it follows the last progress event).
LISTENER_WAIT_SECONDS = 60.0

_D = date.fromisoformat
#: The sentinel part's rows (besides ``arrival_ts``). Orders: o_orderdate 1993-08-01 passes the
#: orders filters of Q3, Q4, Q9 and Q12, 1993-11-01 those of Q3 (and Q9, Q12) and Q10. Lineitem:
#: the 1994 row passes Q4, Q9, Q10 and Q12 (MAIL, ship < commit < receipt in 1994, flag R), the
#: 1995-06 row Q3 (ship date after 1995-03-15), Q4, Q9 and Q10. Every column is non-null (Spark
#: infers IS NOT NULL filters from join keys and pushes them down too); the order keys differ
#: between the streams and from every real key, so no sentinel row finds a join partner.
SENTINEL_ROWS: dict[str, tuple[dict[str, Any], ...]] = {
    "orders": tuple(
        {"o_orderkey": key, "o_custkey": -1, "o_orderstatus": "O", "o_totalprice": Decimal("0.00"),
         "o_orderdate": _D(day), "o_orderpriority": "5-LOW", "o_clerk": "sentinel", "o_shippriority": 0,
         "o_comment": "sentinel"}
        for key, day in ((-1, "1993-08-01"), (-2, "1993-11-01"))),
    "lineitem": tuple(
        {"l_orderkey": key, "l_partkey": -1, "l_suppkey": -1, "l_linenumber": 1, "l_quantity": Decimal("0.00"),
         "l_extendedprice": Decimal("0.00"), "l_discount": Decimal("0.00"), "l_tax": Decimal("0.00"),
         "l_returnflag": "R", "l_linestatus": "F", "l_shipdate": _D(ship), "l_commitdate": _D(commit),
         "l_receiptdate": _D(receipt), "l_shipinstruct": "NONE", "l_shipmode": "MAIL", "l_comment": "sentinel"}
        for key, ship, commit, receipt in ((-3, "1994-03-01", "1994-03-02", "1994-03-03"),
                                           (-4, "1995-06-01", "1995-06-02", "1995-06-03"))),
}

@dataclass(frozen=True)
class StreamRun:
    """One query streamed at one trigger (see the module docstring for each reading)."""

    query: str
    kind: str
    #: The trigger's name (``default``, ``5min``, ..., ``one-shot``) or ``"<n> files"``.
    trigger: str
    #: Files per trigger and stream (None: no limit).
    files_per_trigger: int | None
    output_mode: str
    status: str
    #: Why the run is not ``ok``: the first line of Spark's message (empty when ok).
    reason: str
    #: Σ triggerExecution over every micro-batch, in seconds (None unless ok).
    cost_seconds: float | None
    micro_batches: int
    #: How many progress updates ``recentProgress`` still held at the end.
    progress_retained: int
    #: The final result (None unless ok).
    result: pd.DataFrame | None


def _check_parts(n_parts: Any) -> int:
    if isinstance(n_parts, bool) or not isinstance(n_parts, int) or n_parts < 1:
        raise InputError("parts", f"must be a positive integer, got {n_parts!r}")
    return n_parts


def files_per_trigger(trigger: str | int | None, n_parts: int) -> int | None:
    """Files per trigger for ``trigger`` over ``n_parts`` parts: ``default`` 1, ``one-shot`` None
    (no limit), an interval of :data:`INTERVALS` ``P * seconds / 4500`` rounded to the nearest
    integer (it is never a half for whole P), at least 1; an integer >= 1 is taken as it is,
    None as no limit."""
    n_parts = _check_parts(n_parts)
    if trigger is None:
        return None
    if isinstance(trigger, bool):
        raise InputError("trigger", f"not a trigger: {trigger!r}")
    if isinstance(trigger, int):
        if trigger < 1:
            raise InputError("trigger", f"files per trigger must be >= 1, got {trigger}")
        return trigger
    if trigger == "default":
        return 1
    if trigger == "one-shot":
        return None
    if trigger in INTERVALS:
        exact = Fraction(n_parts * INTERVALS[trigger], PAPER_WINDOW_SECONDS)
        return max(1, floor(exact + Fraction(1, 2)))
    raise InputError("trigger", f"unknown trigger {trigger!r} (triggers: {', '.join(TRIGGERS)}, "
                                "a number of files >= 1, or None)")


def trigger_label(trigger: str | int | None) -> str:
    """The name a run reports for ``trigger``."""
    if trigger is None:
        return "one-shot"
    if isinstance(trigger, int) and not isinstance(trigger, bool):
        return f"{trigger} files"
    return str(trigger)


# --- input --------------------------------------------------------------------------------------

def _arrivals(data: TpchData) -> tuple[datetime, datetime]:
    """The first part's arrival and one second after the last one's: the window of parts."""
    times = [datetime.fromisoformat(f["arrival_ts"]) for f in data.manifest["files"] if f["part"] is not None]
    return min(times), max(times) + timedelta(seconds=1)


def _millis(path: Path) -> int:
    return path.stat().st_mtime_ns // 1_000_000


def _stage(data: TpchData, table: str, directory: Path, sentinel_at: datetime | None) -> Path:
    """``directory`` holding stream ``table``'s parts in arrival order (module docstring), plus
    the sentinel file arriving at ``sentinel_at`` when given."""
    directory.mkdir(parents=True)
    sources = data.part_paths(table, 1, data.n_parts)
    stamps = [_millis(p) for p in sources]
    linked = all(a < b for a, b in zip(stamps, stamps[1:]))
    for k, source in enumerate(sources, start=1):
        target = directory / source.name
        if linked:
            target.symlink_to(source.resolve())
        else:
            shutil.copyfile(source, target)
            stamp = (max(stamps) + 1000 * k) * 1_000_000
            os.utime(target, ns=(stamp, stamp))
    if sentinel_at is not None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = [dict(row, arrival_ts=sentinel_at) for row in SENTINEL_ROWS[table]]
        target = directory / f"{table}.sentinel.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(sources[0])), target)
        last = max(_millis(p) for p in directory.iterdir() if p != target)
        stamp = (last + 1000) * 1_000_000
        os.utime(target, ns=(stamp, stamp))
    return directory


# --- formulation --------------------------------------------------------------------------------

_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)


def split_order(text: str) -> tuple[str, str]:
    """``text`` cut before its final top-level ORDER BY: (body, ``order by ... [limit n]``), or
    (text, "") when it has none."""
    for match in reversed(list(_ORDER_BY.finditer(text))):
        head = text[:match.start()]
        if head.count("(") == head.count(")"):
            return head.rstrip(), text[match.start():].strip()
    return text, ""


def _window_sql(start: datetime, end: datetime) -> str:
    """One tumbling window on ``o_arrival_ts`` that is exactly [start, end)."""
    length = int((end - start).total_seconds())
    offset = int(start.timestamp()) % length
    return f"window(o_arrival_ts, '{length} seconds', '{length} seconds', '{offset} seconds')"


def stream_stream_sql(query: CatalogueQuery, start: datetime, end: datetime) -> str:
    """The query's reference text with its stream markers filled in (module docstring); its final
    ORDER BY stays (see :func:`split_order`)."""
    text = query.sql
    for marker in ("/*within*/", "/*window*/"):
        if marker not in text:
            raise InputError("query", f"{query.name}: its text lacks the stream marker {marker}")
    bound = JOIN_BOUND_SECONDS
    return (text.replace("/*within*/", f"and o_arrival_ts between l_arrival_ts - interval {bound} seconds "
                                       f"and l_arrival_ts + interval {bound} seconds")
                .replace("/*window*/", f"{_window_sql(start, end)},")
                .replace("/*arrival*/", "o_arrival_ts,"))


def _stream(data: TpchData, table: str, directory: Path, files: int | None, watermarked: bool) -> DataFrame:
    reader = data.spark.readStream.schema(stream_schema(table))
    if files is not None:
        reader = reader.option("maxFilesPerTrigger", files)
    frame = reader.parquet(str(directory))
    if watermarked:
        column = f"{table[0]}_arrival_ts"
        frame = frame.withColumnRenamed("arrival_ts", column).withWatermark(column, f"{WATERMARK_SECONDS} seconds")
    return frame


# --- the run ------------------------------------------------------------------------------------

def _make_listener() -> Any:
    """A StreamingQueryListener that keeps every progress event and termination, by query id."""
    from pyspark.sql.streaming import StreamingQueryListener

    class CostListener(StreamingQueryListener):
        def __init__(self) -> None:
            self.progress: dict[str, list[Any]] = defaultdict(list)
            self.terminated: set[str] = set()
            self.changed = threading.Condition()

        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            with self.changed:
                self.progress[str(event.progress.id)].append(event.progress)

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            with self.changed:
                self.terminated.add(str(event.id))
                self.changed.notify_all()

        def wait_terminated(self, query_id: str, timeout: float) -> bool:
            with self.changed:
                return self.changed.wait_for(lambda: query_id in self.terminated, timeout)

    return CostListener()


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


def _watermark(progress: Any) -> datetime | None:
    value = (progress.eventTime or {}).get("watermark")
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def stream_query(query: CatalogueQuery | str, data: TpchData, trigger: str | int | None = "default") -> StreamRun:
    """Stream ``query`` over every part of ``data`` at ``trigger`` (a name of :data:`TRIGGERS`,
    files per trigger, or None for no limit) and read cost, micro-batches and the result."""
    from py4j.protocol import Py4JError
    from pyspark.errors import AnalysisException
    from pyspark.errors.exceptions.captured import CapturedException

    q = CATALOGUE[query] if isinstance(query, str) and query in CATALOGUE else query
    if not isinstance(q, CatalogueQuery):
        raise InputError("query", f"unknown query {query!r} (queries: {', '.join(CATALOGUE)})")
    files = files_per_trigger(trigger, data.n_parts)
    joined = q.kind == "stream-stream"
    mode = "append" if joined else "complete"
    spark = data.spark
    name = f"stream_{q.name.lower()}_{uuid.uuid4().hex[:12]}"
    run_dir = Path(tempfile.mkdtemp(prefix="staleness-lab-stream-"))
    listener = _make_listener()
    spark.streams.addListener(listener)
    handle = None
    status, reason, result, retained = "ok", "", None, 0
    try:
        start, end = _arrivals(data)
        sentinel_at = end + timedelta(seconds=WATERMARK_SECONDS + JOIN_BOUND_SECONDS + 1) if joined else None
        frames: dict[str, DataFrame] = {}
        for table in q.tables:
            if table in q.streams:
                directory = _stage(data, table, run_dir / "input" / table, sentinel_at)
                frames[table] = _stream(data, table, directory, files, joined)
            else:
                frames[table] = data.static(table)
        text, tail = split_order(stream_stream_sql(q, start, end)) if joined else (q.sql, "")
        try:
            frame = spark.sql(text, **frames)
            handle = (frame.writeStream.outputMode(mode).format("memory").queryName(name)
                      .option("checkpointLocation", str(run_dir / "checkpoint"))
                      .trigger(availableNow=True).start())
            handle.awaitTermination()
        except AnalysisException as err:
            status, reason = "unsupported", _first_line(err)
        except (CapturedException, Py4JError) as err:
            status, reason = "failed", _first_line(err)
        if handle is not None:
            retained = len(handle.recentProgress)
            if not listener.wait_terminated(str(handle.id), LISTENER_WAIT_SECONDS) and status == "ok":
                status, reason = "failed", f"no termination event within {LISTENER_WAIT_SECONDS:g} s: cost incomplete"
        events = sorted(listener.progress[str(handle.id)] if handle is not None else [], key=lambda p: p.batchId)
        if status == "ok" and joined:
            marks = [w for w in map(_watermark, events) if w is not None]
            wanted = sentinel_at - timedelta(seconds=WATERMARK_SECONDS)
            if not marks or max(marks) < wanted:
                status = "failed"
                reason = (f"the event-time window never closed: the watermark reached "
                          f"{max(marks).isoformat() if marks else 'nothing'}, not {wanted.isoformat()}")
        if status == "ok":
            table = spark.table(name)
            result = (spark.sql(f"select * from {{result}} {tail}", result=table) if tail else table).toPandas()
        return StreamRun(q.name, q.kind, trigger_label(trigger), files, mode, status, reason,
                         sum(p.durationMs.get("triggerExecution", 0) for p in events) / 1000 if status == "ok" else None,
                         len(events) if status == "ok" else 0, retained, result)
    finally:
        if handle is not None and handle.isActive:
            handle.stop()
        spark.streams.removeListener(listener)
        spark.catalog.dropTempView(name)
        shutil.rmtree(run_dir, ignore_errors=True)


def compare_to_batch(run: StreamRun, data: TpchData) -> str | None:
    """None when ``run``'s result equals the query's batch reference on all parts
    (``data.reference_result``), else the first difference in words (:func:`compare_results`)."""
    if run.status != "ok" or run.result is None:
        return f"no streaming result ({run.status}: {run.reason})"
    return compare_results(run.query, run.result, data.reference_result(run.query))


def stream_rows(names: Iterable[str], data: TpchData, triggers: Sequence[str | int | None] = TRIGGERS,
                *, progress: bool = False) -> pd.DataFrame:
    """One row per query x trigger: query, kind, trigger, files_per_trigger, status, reason,
    cost_seconds, micro_batches, equal_to_batch (None when there is no result) and the first
    difference from the batch reference (``difference``)."""
    import pandas as pd

    names = list(names)
    for name in names:
        if name not in CATALOGUE:
            raise InputError("names", f"unknown query {name!r} (queries: {', '.join(CATALOGUE)})")
    steps: Iterable[tuple[str, Any]] = [(name, trigger) for name in names for trigger in triggers]
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc="streaming runs", unit="run")
    rows = []
    for name, trigger in steps:
        run = stream_query(name, data, trigger)
        difference = compare_to_batch(run, data) if run.status == "ok" else None
        rows.append({"query": run.query, "kind": run.kind, "trigger": run.trigger,
                     "files_per_trigger": run.files_per_trigger, "status": run.status, "reason": run.reason,
                     "cost_seconds": run.cost_seconds, "micro_batches": run.micro_batches,
                     "equal_to_batch": None if run.status != "ok" else difference is None,
                     "difference": difference})
    frame = pd.DataFrame(rows, columns=["query", "kind", "trigger", "files_per_trigger", "status", "reason",
                                        "cost_seconds", "micro_batches", "equal_to_batch", "difference"])
    return frame.astype({"files_per_trigger": "Int64"})  # None (no limit) stays missing, not NaN
