"""Part 1's plans executed on Spark, batch by batch, in virtual time (digest §6, hybrid mode).

Part 1 (:mod:`staleness_lab.intermittent`) decides and Spark executes; nothing here schedules.
:class:`SparkRunner` implements part 1's :class:`~staleness_lab.intermittent.runner.Runner`
contract: ``run_batch`` runs the catalogue query's partial over parts ``first..last`` and writes
``partials/<query>/<batch>.parquet``; ``run_aggregate`` merges a query's partials into
``results/<query>.parquet``. Each returns the measured wall time of its action, the write
included (:mod:`.steps`), which becomes the step's duration. A query planned as one batch
(tuples ``1..N``) runs as the whole query, ``final(partial)``, written straight to its result:
that is the single-batch cost the paper normalizes by, and ``AggCost(1) = 0``.

**Time is virtual.** Tuple ``k`` of a query's window is part ``k`` of its streams (the paper's
files); it arrives at the query's ``InputTime(k)`` (``ws + (k-1)/λ`` at a fixed rate), nothing
sleeps, and a step's start is a virtual time from which its measured duration runs.

* :func:`execute` runs an offline plan (Algorithm 1, the exact DP, the CP-SAT optimum, or any
  :class:`~staleness_lab.intermittent.BatchPlan`): a data batch starts at the later of its
  planned start and its executor's free time (its tuples arrive by the planned start); a final
  merge starts when its query's last batch ends, or when its executor frees if later, never at
  its planned start (paper sec. 6.1: the final aggregation is invoked once all batches have been
  processed; digest, third-round correction 1), so batches that finish early pass their slack to
  the merge. A batch slower than its model delays what follows; ``planned_start``/``planned_end``
  keep the plan's times next to the realized ones. Steps run in realized-start order.
* :func:`dispatch` runs an online scheme (``llf``, ``edf``, ``sjf``, ``rr``, with the suffixes
  ``-nominbatch`` and ``-unknown-n``) through part 1's dispatcher with this runner, so its
  decisions see the measured durations.

Both return a :class:`SparkRun`: the realized :class:`BatchPlan` (it passes
:func:`~staleness_lab.intermittent.plan.check_measured_plan`), its batches frame with
``modeled_cost`` (the query's ``Cost(size)`` or ``AggCost(n)``) and ``measured_seconds``, and each
query's final result.

**All or nothing.** Before any Spark job the manifest and every file the run needs are checked
(an offline plan: each batch's parts; an online one: parts ``1..N`` of every query); a missing one
is an :class:`~staleness_lab.errors.InputError` naming the file, and the batch and query that
need it. Partials and results go to a hidden temporary sibling of the run directory, renamed
into place on success and removed on failure, so a failed run leaves nothing that looks complete.
Query names are catalogue names (``Q1``, ..., ``CQ4``), or ``catalogue`` maps them to one.

The measured experiments drive Spark from the driver, one step at a time: run them one at a
time (a parallel job distorts every timing).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab.intermittent.dispatch import POLICIES
from staleness_lab.intermittent.dispatch import dispatch as dispatch_plan
from staleness_lab.intermittent.model import Query, QuerySet
from staleness_lab.intermittent.plan import BATCH, BatchPlan, Step, check_measured_plan
from staleness_lab.provenance import building_directory
from staleness_lab.spark.intermittent.catalogue import CATALOGUE, CatalogueQuery, TpchData
from staleness_lab.spark.intermittent.steps import run_final, run_partial, run_whole

#: The columns :class:`SparkRun` adds to the plan's batches frame.
RUN_COLUMNS = ["modeled_cost", "measured_seconds", "planned_start", "planned_end"]


@dataclass(frozen=True)
class SparkRun:
    """One plan executed on Spark: the realized plan, its batches with modeled and measured
    costs, each query's final result, and the run directory holding partials and results."""

    plan: BatchPlan
    batches: pd.DataFrame
    results: dict[str, pd.DataFrame]
    directory: Path

    @property
    def violations(self) -> list[str]:
        """Part 1's plan invariants broken by the realized plan (measured durations): ``[]``."""
        return check_measured_plan(self.plan.queryset, self.plan)


class SparkRunner:
    """Part 1's ``Runner`` on Spark: every step executed on its files and timed (module docstring).

    ``work`` is the (temporary) run directory; ``catalogue`` maps query names to catalogue names."""

    def __init__(self, data: TpchData, work: Path, catalogue: Mapping[str, str]) -> None:
        self.data = data
        self.work = Path(work)
        self.catalogue = dict(catalogue)
        self.partials: dict[str, list[Path]] = defaultdict(list)

    def _query(self, query: Query) -> CatalogueQuery:
        return CATALOGUE[self.catalogue[query.name]]

    def result_path(self, query: Query) -> Path:
        return self.work / "results" / f"{query.name}.parquet"

    def run_batch(self, query: Query, first: int, last: int, start: Fraction) -> Fraction:
        """Run tuples (parts) ``first..last`` of ``query``: its partial, or the whole query when
        the batch is the whole window; the measured seconds."""
        if first == 1 and last == query.n:
            return Fraction(run_whole(self._query(query), self.data, first, last, self.result_path(query)))
        mine = self.partials[query.name]
        path = self.work / "partials" / query.name / f"{len(mine) + 1}.parquet"
        seconds = run_partial(self._query(query), self.data, first, last, path)
        mine.append(path)
        return Fraction(seconds)

    def run_aggregate(self, query: Query, n: int, start: Fraction) -> Fraction:
        """Merge ``query``'s ``n`` partials into its result; the measured seconds."""
        mine = self.partials[query.name]
        if len(mine) != n:
            raise RuntimeError(f"{query.name}: asked to merge {n} partials, {len(mine)} were written")
        return Fraction(run_final(self._query(query), self.data, mine, self.result_path(query)))


def catalogue_names(qs: QuerySet, catalogue: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each query's catalogue name: ``catalogue[name]``, else the name itself; unknown ones refused."""
    names: dict[str, str] = {}
    for k, query in enumerate(qs.queries):
        name = (catalogue or {}).get(query.name, query.name)
        if name not in CATALOGUE:
            raise InputError(f"queries[{k}].name", f"{name!r} is not a catalogue query ({', '.join(CATALOGUE)}); "
                                                   "name it after one or map it with catalogue=")
        names[query.name] = name
    return names


def check_files(data: TpchData, qs: QuerySet, names: Mapping[str, str],
                ranges: Mapping[str, list[tuple[int, int]]] | None = None) -> None:
    """Every file the run needs exists: ``ranges[query]`` lists an offline plan's batches as
    (first, last) parts; without ``ranges`` each query needs parts ``1..N`` (an online scheme).
    Raises one :class:`InputError` naming the first missing file, and its batch and query."""
    for query in qs.queries:
        cat = CATALOGUE[names[query.name]]
        if ranges is None:
            needs = [(f"query {query.name} (its window, parts 1..{query.n})", 1, query.n)]
        else:
            needs = [(f"batch {b} of query {query.name}", first, last)
                     for b, (first, last) in enumerate(ranges[query.name], start=1)]
        for what, first, last in needs:
            if last > data.n_parts:
                raise InputError("data", f"{data.directory}: {what} needs part {last}, the data has "
                                         f"{data.n_parts} parts (generate more, or shorten the window N)")
            for table in cat.streams:
                for path in data.part_paths(table, first, last):
                    if not path.is_file():
                        raise InputError("data", f"missing file {path} (needed by {what})")
        for table in cat.static:
            if not data.path(table).exists():
                raise InputError("data", f"missing file {data.path(table)} (static {table}, needed by query {query.name})")


def execute(plan: BatchPlan, data: TpchData | str | Path, *, out: Path | None = None,
            catalogue: Mapping[str, str] | None = None, progress: bool = False) -> SparkRun:
    """Execute the offline ``plan`` on Spark (module docstring); the run goes to ``out``."""
    if plan.status != "ok":
        raise InputError("plan", f"has status {plan.status!r}: there is nothing to execute ({plan.reason})")
    data = _data(data)
    qs = plan.queryset
    names = catalogue_names(qs, catalogue)
    ranges = {q.name: [(s.first, s.last) for s in plan.steps_of(q.name) if s.kind == BATCH] for q in qs.queries}
    check_files(data, qs, names, ranges)

    def run(runner: SparkRunner) -> BatchPlan:
        steps = _realize(plan, runner, progress)
        return replace(plan, steps=tuple(steps))

    return _run(qs, plan.scheme, data, names, out, run, planned=plan)


def dispatch(query_set: QuerySet, scheme: str, data: TpchData | str | Path, *, out: Path | None = None,
             catalogue: Mapping[str, str] | None = None, time_triggers: bool | None = None) -> SparkRun:
    """Run the online ``scheme`` (``llf``/``edf``/``sjf``/``rr`` with the optional suffixes
    ``-nominbatch`` and ``-unknown-n``) over ``query_set`` with Spark measuring every step."""
    policy, minbatch, unknown_n = parse_scheme(scheme)
    data = _data(data)
    names = catalogue_names(query_set, catalogue)
    check_files(data, query_set, names)

    def run(runner: SparkRunner) -> BatchPlan:
        return dispatch_plan(query_set, policy, minbatch=minbatch, unknown_n=unknown_n,
                             time_triggers=time_triggers, runner=runner)

    return _run(query_set, scheme, data, names, out, run, planned=None)


def parse_scheme(scheme: str) -> tuple[str, bool, bool]:
    """``(policy, minbatch, unknown_n)`` of an online scheme name such as ``llf-nominbatch``."""
    if not isinstance(scheme, str):
        raise InputError("scheme", f"must be a string, got {scheme!r}")
    rest, unknown_n = (scheme[: -len("-unknown-n")], True) if scheme.endswith("-unknown-n") else (scheme, False)
    rest, minbatch = (rest[: -len("-nominbatch")], False) if rest.endswith("-nominbatch") else (rest, True)
    if rest not in POLICIES:
        raise InputError("scheme", f"must be one of {', '.join(POLICIES)}, optionally followed by -nominbatch "
                                   f"and -unknown-n, got {scheme!r}")
    return rest, minbatch, unknown_n


def default_run_dir(scheme: str) -> Path:
    """``data/runs/intermittent/<scheme>-<UTC time>`` under the data root."""
    from staleness_lab.paths import data_root

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    return data_root() / "data" / "runs" / "intermittent" / f"{scheme}-{stamp}"


def _data(data: TpchData | str | Path) -> TpchData:
    if isinstance(data, TpchData):
        return data
    if not Path(data).is_dir():
        raise InputError("data", f"{data}: no such directory (run `staleness-lab tpch generate`)")
    return TpchData(data)


def _run(qs: QuerySet, scheme: str, data: TpchData, names: Mapping[str, str], out: Path | None,
         run: Callable[[SparkRunner], BatchPlan], planned: BatchPlan | None) -> SparkRun:
    """Run ``run(runner)`` in a temporary sibling of ``out`` and put it in place on success."""
    target = Path(out) if out is not None else default_run_dir(scheme)
    with building_directory(target) as work:
        runner = SparkRunner(data, work, names)
        realized = run(runner)
        results = {q.name: pd.read_parquet(runner.result_path(q)) for q in qs.queries}
        frame = _batches_frame(realized, planned)
        frame.to_parquet(work / "batches.parquet", index=False)
        realized.queries.to_parquet(work / "queries.parquet", index=False)
    return SparkRun(plan=realized, batches=frame, results=results, directory=target)


def _realize(plan: BatchPlan, runner: SparkRunner, progress: bool) -> list[Step]:
    """Run ``plan``'s steps in realized-start order: a batch at the later of its planned start
    and its executor's free time, a merge at the later of its query's last batch end and its
    executor's free time (:func:`realized_start`)."""
    from tqdm.auto import tqdm

    qs = plan.queryset
    queues: dict[int, list[Step]] = defaultdict(list)
    for step in plan.steps:  # sorted by planned start
        queues[step.executor].append(step)
    free: dict[int, Fraction] = defaultdict(Fraction)
    batches_left = {q.name: sum(1 for s in plan.steps_of(q.name) if s.kind == BATCH) for q in qs.queries}
    batches_end: dict[str, Fraction] = defaultdict(Fraction)
    done: list[Step] = []
    bar = tqdm(total=len(plan.steps), desc=f"{plan.scheme} on Spark", unit="step", disable=not progress)
    while any(queues.values()):
        candidates = []
        for executor, queue in queues.items():
            if not queue:
                continue
            step = queue[0]
            if step.kind != BATCH and batches_left[step.query]:
                continue  # its query's batches (on other executors) are not all done
            candidates.append((realized_start(step, free[executor], batches_end[step.query]), executor))
        start, executor = min(candidates)
        step = queues[executor].pop(0)
        query = qs.query(step.query)
        if step.kind == BATCH:
            duration = runner.run_batch(query, step.first, step.last, start)
            batches_left[step.query] -= 1
        else:
            duration = runner.run_aggregate(query, step.merged, start)
        end = start + duration
        if step.kind == BATCH:
            batches_end[step.query] = max(batches_end[step.query], end)
        free[executor] = end
        done.append(replace(step, start=start, end=end))
        bar.update()
    bar.close()
    return done


def realized_start(step: Step, executor_free: Fraction, last_batch_end: Fraction) -> Fraction:
    """When an executed ``step`` starts: a data batch at the later of its planned start and its
    executor's free time; a final merge at the later of its query's last batch end and its
    executor's free time, whatever its planned start (module docstring)."""
    if step.kind == BATCH:
        return max(step.start, executor_free)
    return max(last_batch_end, executor_free)


def _batches_frame(realized: BatchPlan, planned: BatchPlan | None) -> pd.DataFrame:
    """The realized plan's batches with ``modeled_cost``, ``measured_seconds`` and, for an
    executed offline plan, the planned start and end of each step."""
    frame = realized.batches.copy()
    qs = realized.queryset
    frame["modeled_cost"] = [
        float(qs.query(q).cost(int(size)) if kind == BATCH else qs.query(q).agg_cost(int(size)))
        for q, size, kind in zip(frame["query"], frame["size"], frame["kind"])]
    frame["measured_seconds"] = frame["cost"]
    if planned is None:
        frame["planned_start"] = float("nan")
        frame["planned_end"] = float("nan")
    else:
        times = planned.batches.set_index(["query", "batch"])[["start", "end"]]
        keyed = times.reindex(pd.MultiIndex.from_arrays([frame["query"], frame["batch"]]))
        frame["planned_start"] = keyed["start"].to_numpy()
        frame["planned_end"] = keyed["end"].to_numpy()
    return frame
