"""Running a named experiment over a parameter grid, locally or on Spark, resumably.

:func:`run_grid` expands the grid into complete parameter rows, runs ``experiment.run(**row)``
for every row not already in the cache and returns one tidy DataFrame: the parameter columns
(in the experiment's parameter order), then ``row`` (the row's position in the grid), then the
experiment's observations; rows concatenated in grid order, index ``0..n-1``.

* ``runner="local"``: a plain Python loop in this process (small grids, no Java needed).
* ``runner="spark"``: the missing rows go out as one Spark job (one task per row, or a few
  rows per task once there are many more rows than cores: see :mod:`staleness_lab.spark.grid`);
  each executor runs its rows, writes each row's cache file as soon as the row finishes and
  returns the frames to the driver. The session comes from
  :func:`staleness_lab.spark.get_spark` (``master`` or ``SPARK_MASTER`` or the embedded
  ``local[*]``). Spark is not started when every row is cached.

Both runners give identical DataFrames for the same grid: a row's result depends only on its
parameters (seeds included), and every row's frame goes through the same Arrow conversion as
the cache (so a fresh row, a cached row and a row computed on an executor look alike).

A row that raises names itself: :class:`SweepError` ``row 3 {policy: 'x', ...}: <message>``
(also an :class:`~staleness_lab.errors.InputError` when the original was one, so the CLI prints
it as one line and exits 2). The local runner stops at the first failing row; the Spark runner
finishes the other rows of the job (they stay cached) and raises for the first failing one.

The cache is described in :mod:`staleness_lab.sweeps.cache`. A cache entry that exists but
must not be served (it does not parse, was written for another key, has no checksum or its data
do not match it) is recomputed like a missing one and rewritten; the sweep then prints one line
per such entry on stderr, ``recomputed: corrupt cache entry <path>``, once its row has been
recomputed (a missing entry is a plain miss, without a message).
"""

from __future__ import annotations

import functools
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from staleness_lab.errors import InputError, one_line
from staleness_lab.sweeps.cache import (
    CorruptCacheEntry,
    cache_key,
    cache_path,
    code_identity,
    default_cache_dir,
    read_cached,
    write_cached,
)
from staleness_lab.sweeps.registry import Experiment, expand_grid, get_experiment

RUNNERS = ("local", "spark")
ROW_COLUMN = "row"


class _Default:
    """The default cache directory (see :func:`staleness_lab.sweeps.cache.default_cache_dir`)."""

    def __repr__(self) -> str:
        return "DEFAULT"


#: ``cache_dir=DEFAULT``: the default cache directory; ``cache_dir=None``: no cache at all.
DEFAULT: Any = _Default()


def format_params(params: Mapping[str, Any]) -> str:
    """``{policy: 'edf', utilization: 0.5}``: a parameter row as error messages show it."""
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in params.items()) + "}"


class SweepError(RuntimeError):
    """A row of a sweep failed: ``row <index> {<params>}: <original message>``.

    ``index`` is the row's position in the grid, ``params`` its parameters, ``original_type``
    the name of the exception the experiment raised and ``remote_traceback`` its formatted
    traceback (the original exception is chained as ``__cause__`` when the row ran locally)."""

    def __init__(self, index: int, params: Mapping[str, Any], message: str, *, original_type: str = "",
                 remote_traceback: str | None = None) -> None:
        self.index = index
        self.params = dict(params)
        self.original_message = message
        self.original_type = original_type
        self.remote_traceback = remote_traceback
        RuntimeError.__init__(self, f"row {index} {format_params(params)}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_sweep_error, (type(self), self.__dict__.copy(), str(self)))


class SweepInputError(SweepError, InputError):
    """A :class:`SweepError` whose original was bad input; ``field``/``rule``/``table`` are the
    original's, the message (one line, at most :data:`~staleness_lab.errors.MAX_MESSAGE`
    characters however long the row's values) names the row first."""

    def __init__(self, index: int, params: Mapping[str, Any], message: str, *, field: str, rule: str,
                 table: str | None = None, original_type: str = "InputError", remote_traceback: str | None = None) -> None:
        self.field = field
        self.rule = rule
        self.table = table
        SweepError.__init__(self, index, params, message, original_type=original_type, remote_traceback=remote_traceback)
        self.args = (one_line(str(self)),)  # line breaks escaped, cut past MAX_MESSAGE like any InputError

    def __str__(self) -> str:
        return self.args[0]


def _rebuild_sweep_error(cls: type, state: dict[str, Any], message: str) -> SweepError:
    err = cls.__new__(cls)
    err.__dict__.update(state)
    err.args = (message,)
    return err


# -- one row, wherever it runs ---------------------------------------------------------------


@dataclass(frozen=True)
class RowTask:
    """What an executor needs to run one row: its grid position, parameters and cache file."""

    index: int
    params: dict[str, Any]
    key: str
    cache_file: str | None


@dataclass
class RowOutcome:
    """One row's result: the experiment's frame (normalised) or an error record."""

    index: int
    frame: pd.DataFrame | None = None
    cached: bool = False
    error: dict[str, Any] | None = None
    seconds: float = 0.0
    exception: BaseException | None = field(default=None, repr=False)


def normalise(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as it reads back from the cache: through Arrow, index dropped (a named index
    becomes columns first), so fresh, cached and executor results are alike."""
    import pyarrow as pa

    if any(name is not None for name in frame.index.names):
        frame = frame.reset_index()
    return pa.Table.from_pandas(frame, preserve_index=False).to_pandas()


def _check_output(exp: Experiment, frame: Any) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"experiment {exp.name!r} returned {type(frame).__name__}, not a pandas DataFrame")
    taken = {p.name for p in exp.params} | {ROW_COLUMN}
    clash = [str(c) for c in frame.columns if c in taken]
    if clash:
        raise ValueError(f"experiment {exp.name!r} returned column(s) {', '.join(clash)} that clash with its parameters or {ROW_COLUMN!r}")
    return normalise(frame)


def execute_row(exp: Experiment, task: RowTask, *, keep_exception: bool = False) -> RowOutcome:
    """Run one row and write its cache file (when it has one); never raises for a failing
    experiment: the error comes back as a record (an executor cannot ship every exception)."""
    start = time.perf_counter()
    try:
        frame = _check_output(exp, exp.run(**task.params))
    except Exception as err:  # noqa: BLE001 - reported, with the row, by the driver
        record: dict[str, Any] = {
            "type": type(err).__name__,
            "message": error_message(err),
            "traceback": traceback.format_exc(),
        }
        if isinstance(err, InputError):
            record["input"] = {"field": err.field, "rule": err.rule, "table": err.table}
        return RowOutcome(task.index, error=record, seconds=time.perf_counter() - start,
                          exception=err if keep_exception else None)
    seconds = time.perf_counter() - start
    cached = False
    if task.cache_file is not None:
        try:
            write_cached(Path(task.cache_file), frame, experiment=exp.name, params=task.params, key=task.key)
            cached = True
        except OSError:  # e.g. an executor without the shared cache path: the driver writes it
            cached = False
    return RowOutcome(task.index, frame=frame, cached=cached, seconds=seconds)


def error_message(err: BaseException) -> str:
    """What a failed row reports of ``err``: its message, or for an error raised in Spark's JVM
    (py4j's ``An error occurred while calling o123.parquet.`` followed by the Java exception on
    the next line, then its stack) the Java exception first, so that a one-line report says
    what went wrong."""
    text = str(err) or type(err).__name__
    lines = text.splitlines()
    if getattr(err, "java_exception", None) is not None and len(lines) > 1 and lines[1].startswith(": "):
        return f"{lines[1][2:]} ({lines[0].rstrip('.')})"
    return text


def row_error(outcome: RowOutcome, params: Mapping[str, Any]) -> SweepError:
    """The driver-side exception for a failed row."""
    record = outcome.error or {}
    common = dict(original_type=record.get("type", ""), remote_traceback=record.get("traceback"))
    if "input" in record:
        info = record["input"]
        err: SweepError = SweepInputError(outcome.index, params, record["message"], field=info["field"],
                                          rule=info["rule"], table=info["table"], **common)
    else:
        err = SweepError(outcome.index, params, record.get("message", "failed"), **common)
    if outcome.exception is not None:
        err.__cause__ = outcome.exception
    return err


# -- the grid --------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """A sweep's frame and how it was obtained."""

    frame: pd.DataFrame
    experiment: str
    grid: Any
    rows: int
    computed: int
    from_cache: int
    seconds: float
    runner: str
    master: str | None = None
    spark_startup_seconds: float = 0.0
    cache_dir: Path | None = None
    params: list[dict[str, Any]] = field(default_factory=list, repr=False)
    #: Cache entries found corrupt whose rows were recomputed (and rewritten), in grid order.
    recomputed_corrupt: list[Path] = field(default_factory=list)

    def provenance_extra(self) -> dict[str, Any]:
        """Creation parameters for :func:`staleness_lab.provenance.provenance`: experiment,
        grid (as given), row count, the distinct seeds, runner and master."""
        seed_names = sorted({k for row in self.params for k in row if k == "seed" or k.endswith("_seed")})
        seeds = sorted({row[k] for row in self.params for k in seed_names}, key=repr)
        return {
            "experiment": self.experiment,
            "grid": self.grid,
            "rows": self.rows,
            "seeds": seeds,
            "runner": self.runner,
            "master": self.master,
        }


def _resolve_cache_dir(cache_dir: Any) -> Path | None:
    if cache_dir is None:
        return None
    path = default_cache_dir() if cache_dir is DEFAULT else Path(cache_dir)
    return path.expanduser().resolve()  # absolute: executors do not share our working directory


def _decorate(raw: pd.DataFrame, params: Mapping[str, Any], index: int) -> pd.DataFrame:
    out = raw.copy()
    for pos, (name, value) in enumerate(params.items()):
        out.insert(pos, name, value)
    out.insert(len(params), ROW_COLUMN, index)
    return out


def _combine(exp: Experiment, rows: list[dict[str, Any]], raw: dict[int, pd.DataFrame]) -> pd.DataFrame:
    parts = [_decorate(raw[i], row, i) for i, row in enumerate(rows)]
    if not parts:
        return pd.DataFrame(columns=[*(p.name for p in exp.params), ROW_COLUMN])
    return pd.concat(parts, ignore_index=True)


def run_sweep(
    experiment: str | Experiment,
    grid: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    *,
    runner: str = "local",
    master: str | None = None,
    cache_dir: Path | str | None = DEFAULT,
    use_cache: bool = True,
    progress: bool = True,
) -> SweepResult:
    """:func:`run_grid`, returning the frame with the sweep's counts and timings."""
    exp = experiment if isinstance(experiment, Experiment) else get_experiment(experiment)
    if runner not in RUNNERS:
        raise InputError("runner", f"must be one of {', '.join(RUNNERS)}, got {runner!r}")
    if master is not None and runner != "spark":
        raise InputError("master", "applies only to runner='spark'")
    rows = expand_grid(exp, grid)
    cache_root = _resolve_cache_dir(cache_dir)

    code = code_identity(exp.run.__module__)
    keys = [cache_key(exp.name, row, code) for row in rows]
    files = [cache_path(cache_root, exp.name, key) if cache_root is not None else None for key in keys]
    start = time.perf_counter()
    raw: dict[int, pd.DataFrame] = {}
    corrupt: dict[Path, str] = {}  # entries not served -> their keys
    if cache_root is not None and use_cache:
        for i, path in enumerate(files):
            try:
                frame = read_cached(path, keys[i])  # type: ignore[arg-type]
            except CorruptCacheEntry:
                corrupt[path] = keys[i]  # type: ignore[index]
                continue
            if frame is not None:
                raw[i] = frame
    from_cache = len(raw)
    # One computation per distinct key (a list of rows may repeat one); copies share it.
    first_of: dict[str, int] = {}
    for i in range(len(rows)):
        if i not in raw:
            first_of.setdefault(keys[i], i)
    tasks = [RowTask(i, rows[i], keys[i], None if files[i] is None else str(files[i])) for i in first_of.values()]
    if cache_root is not None and tasks:
        files[tasks[0].index].parent.mkdir(parents=True, exist_ok=True)  # type: ignore[union-attr]

    used_master = None
    startup = 0.0
    recomputed: list[Path] = []
    if tasks:
        from tqdm.auto import tqdm

        spark = None
        if runner == "spark":  # started before the bar, so the bar's rate is the rows' own
            from staleness_lab.spark import active_spark, get_spark, java_available

            t0 = time.perf_counter()
            was_active = active_spark()
            if was_active is None and not java_available():
                raise InputError("runner", "Spark needs Java and none was found (no java on PATH, JAVA_HOME unset): "
                                           "install a JDK 17+ or use the local runner (--runner local)")
            spark = get_spark(master)
            if spark is not was_active:
                startup = time.perf_counter() - t0
            used_master = spark.sparkContext.master
        bar = tqdm(total=len(rows), initial=from_cache, desc=exp.name, unit="row", disable=not progress, leave=True)
        try:
            if spark is None:
                outcomes = _run_local(exp, tasks, bar.update)
            else:
                from staleness_lab.spark.grid import run_rows

                outcomes = run_rows(spark, functools.partial(execute_row, exp), tasks,
                                    description=f"sweep {exp.name}", on_progress=bar.update)
            if len(outcomes) == len(tasks):  # rows repeating a computed one
                bar.update(len(rows) - from_cache - len(tasks))
        finally:
            bar.close()
        failed = []
        for outcome in sorted(outcomes, key=lambda o: o.index):
            if outcome.error is not None:
                failed.append(outcome)
                continue
            assert outcome.frame is not None
            path = files[outcome.index]
            if path is not None and not outcome.cached:
                write_cached(path, outcome.frame, experiment=exp.name, params=rows[outcome.index], key=keys[outcome.index])
            raw[outcome.index] = outcome.frame
        recomputed = [path for path, key in corrupt.items() if first_of[key] in raw]
        for path in recomputed:
            print(f"recomputed: corrupt cache entry {path}", file=sys.stderr)  # noqa: T201 - documented stderr line
        if failed:
            raise row_error(failed[0], rows[failed[0].index])
        for i in range(len(rows)):
            if i not in raw:
                raw[i] = raw[first_of[keys[i]]]
    frame = _combine(exp, rows, raw)
    return SweepResult(
        frame=frame, experiment=exp.name, grid=grid, rows=len(rows), computed=len(tasks), from_cache=from_cache,
        seconds=time.perf_counter() - start, runner=runner, master=used_master, spark_startup_seconds=startup,
        cache_dir=cache_root, params=rows, recomputed_corrupt=recomputed,
    )


def _run_local(exp: Experiment, tasks: list[RowTask], on_progress: Callable[[int], Any]) -> list[RowOutcome]:
    outcomes = []
    for task in tasks:
        outcome = execute_row(exp, task, keep_exception=True)
        outcomes.append(outcome)
        if outcome.error is not None:
            break  # stop at the first failing row; the caller raises for it
        on_progress(1)
    return outcomes


def run_grid(
    experiment: str | Experiment,
    grid: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    *,
    runner: str = "local",
    master: str | None = None,
    cache_dir: Path | str | None = DEFAULT,
    use_cache: bool = True,
    progress: bool = True,
) -> pd.DataFrame:
    """Run ``experiment`` (a registered name, or an :class:`Experiment`) over ``grid`` and
    return one tidy DataFrame (see the module docstring).

    ``grid``: a mapping parameter -> list of values (plus optional ``fixed:``), or a list of
    explicit parameter rows, or None (the defaults, one row). ``runner``: ``"local"`` or
    ``"spark"``; ``master`` (Spark only) as for :func:`staleness_lab.spark.get_spark`.
    ``cache_dir``: per-row cache (``DEFAULT``: ``data/cache`` of the project; None: no cache);
    ``use_cache=False`` recomputes every row and rewrites its cache entry. ``progress``: a
    tqdm bar (terminal or notebook).
    """
    return run_sweep(
        experiment, grid, runner=runner, master=master, cache_dir=cache_dir, use_cache=use_cache, progress=progress
    ).frame
