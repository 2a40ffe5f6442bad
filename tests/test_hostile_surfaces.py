"""The hostile-input fuzz of tests/test_hostile_inputs.py extended to the newer surfaces: query
sets (``plan``), workflows (``workflow validate`` and a memory-mode ``workflow run``), sweep grids
(``sweep --grid``) and TPC-H generations (``tpch run --data``, ``tpch generate --out`` on a
mutated manifest).

Each surface starts from valid documents, mutates them with the mutation families of
tests/hostile_strategies.py (types, huge and tiny numbers, deep nesting, YAML aliases and merge
keys, duplicate keys, unicode, long names, path-like names) and runs every input twice over:
in process through the API, and -- a smaller sample, drawn separately so the two parts do not
repeat each other -- through the real command line, one process per input, two at a time. The
contract is the
simulator's: every input runs, or is refused (``InputError`` in process; exit 2 with exactly
one line on stderr from the command), never a traceback or a hang. Each test prints its counts
per surface (inputs, refused, ran, tracebacks), and a failing input is reported, not lost.

The examples are a fixed sequence (Hypothesis, derandomized; HOSTILE_FUZZ_RANDOM=1 for fresh
ones). Sizes are bounded by the surfaces' own limits, lowered here so the whole file stays
within about a minute on two cores: plans take at most 200 tuples per query, workflow runs
2,000 arrivals, grids run on the command line only up to 20 rows (larger valid grids are
counted as expanded, not run) and a TPC-H generation's data are linked, not copied. A manifest
that ``tpch run`` would accept is not run there (that starts Spark): it is counted as accepted,
and ``tpch generate`` (which regenerates a damaged generation of this program's) takes a few.
"""

from __future__ import annotations

import collections
import itertools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hostile_strategies import Document, documents
from staleness_lab.errors import MAX_MESSAGE, InputError
from staleness_lab.experiments import get_experiment
from staleness_lab.intermittent import load_queryset, tpch
from staleness_lab.intermittent.planfiles import plan_json
from staleness_lab.intermittent.schemes import make_plan
from staleness_lab.intermittent.size import PlanLimits
from staleness_lab.jsonout import dumps
from staleness_lab.sweeps.registry import expand_grid
from staleness_lab.sweeps.runner import run_sweep
from staleness_lab.sweeps.sweep import load_grid
from staleness_lab.workflows.load import load_workflow
from staleness_lab.workflows.propagate import bounds_report
from staleness_lab.workflows.sim import RunConfig, run
from staleness_lab.workflows.size import WorkflowLimits
from test_hostile_inputs import FUZZ_TIME_LIMIT, HEALTH, RANDOM_FUZZ, _on_alarm, _signature, run_cli, strict_json

DATA = Path(__file__).resolve().parents[1] / "data"
EXPERIMENT = "baseline-utilization"
CLI_TIMEOUT = 60  # seconds for one command
CLI_EXAMPLES = 12  # inputs per surface through the command line (two processes at a time)


# --------------------------------------------------------------------------------------------
# valid starting points
# --------------------------------------------------------------------------------------------
def _q(name: str, **keys: Any) -> dict[str, Any]:
    return {"name": name, "arrivals": {"ws": 1, "rate": 1, "N": 20}, "deadline": 40,
            "cost": {"kind": "linear", "S": 2, "R": 0.2}, **keys}


QUERY_SETS: list[dict[str, Any]] = [
    {"executors": 1, "delta_rsf": 0.5, "c_max": 10, "time_unit": 0.1, "queries": [
        _q("A", agg_cost={"kind": "linear", "a0": 0.5, "a1": 0.5}),
        _q("B", deadline=44.5, cost={"kind": "linear", "S": 1, "R": 0.1})]},
    {"executors": 2, "queries": [
        _q("Q1", arrivals={"profile": [[1, 3], [2, 5], [4, 9]]}, deadline=30,
           cost={"kind": "piecewise", "S": 0.4, "points": [[0, 0], [5, 1.5], [9, 2.1]]},
           agg_cost={"kind": "table", "values": [0.2, 0.3]}),
        _q("Q2", arrivals={"ws": 0.5, "rate": 2, "N": 8}, deadline=12.5,
           cost={"kind": "table", "values": [1, 1.5, 2, 2.4, 2.8, 3.1, 3.4, 3.6]})]},
    {"queries": [_q("solo", arrivals={"ws": 2, "rate": 0.5, "N": 12}, deadline=60)]},
]
#: Heuristic schemes in process (the CP-SAT planner is sampled on the command line).
SCHEMES = ["algorithm1", "exact", "llf", "edf", "sjf", "rr"]
PLAN_LIMITS = PlanLimits(max_queries=50, max_tuples=200, max_batches=2_000)
PLAN_FLAGS = ("--max-queries", "50", "--max-tuples", "200", "--max-batches", "2000")


def _workflow(name: str, **top: Any) -> dict[str, Any]:
    return {**yaml.safe_load((DATA / "workflows" / f"{name}.yaml").read_text(encoding="utf-8")), **top}


WORKFLOWS: list[dict[str, Any]] = [
    _workflow("olston-example"),  # replayed inputs (CSV files beside it)
    _workflow("search-preprocessing", horizon="6h"),
    _workflow("crawl-selection", horizon="3h"),
]
WORKFLOW_LIMITS = WorkflowLimits(arrivals=2_000, run_steps=5_000)
WORKFLOW_FLAGS = ("--max-arrivals", "2000")

GRIDS: list[Any] = [
    {"policy": ["fifo", "edf"], "seed": [0, 1], "fixed": {"horizon": 200.0, "n_tables": 3}},
    [{"policy": "fifo", "horizon": 200.0, "n_tables": 3},
     {"policy": "edf", "seed": 2, "horizon": 150.0, "n_tables": 4, "utilization": 0.5}],
    {"utilization": [0.5, 0.9], "tracks": 1, "fixed": {"horizon": 100.0, "n_tables": 2, "period_min": 5.0,
                                                      "period_max": 50.0}},
]
GRID_ROWS_RUN = 20  # the largest grid run (in process: 4 rows)

SCALE, PARTS = "0.01", "2"


# --------------------------------------------------------------------------------------------
# outcomes
# --------------------------------------------------------------------------------------------
@dataclass
class Counts:
    """One surface's outcomes, and the first input of every distinct failure."""

    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: dict[str, str] = field(default_factory=dict)

    def fail(self, signature: str, report: str) -> None:
        self.counts["tracebacks"] += 1
        self.failures.setdefault(signature, report)

    def line(self, surface: str, how: str, seconds: float) -> str:
        c = self.counts
        rest = ", ".join(f"{n} {k}" for k, n in sorted(c.items()) if k not in ("inputs", "refused", "ran", "tracebacks"))
        return (f"{how} fuzz {surface}: {c['inputs']} inputs, {c['refused']} refused, {c['ran']} ran, "
                f"{c['tracebacks']} tracebacks{f' ({rest})' if rest else ''} in {seconds:.0f} s")


def _refusal_is_one_line(err: InputError) -> None:
    text = str(err)
    assert "\n" not in text and "\r" not in text, text[:500]
    assert len(text) <= MAX_MESSAGE, f"a message of {len(text):,} characters: {text[:100]}"
    text.encode("utf-8")


def in_process(counts: Counts, doc: Document, what: str, call: Callable[[], str | None]) -> None:
    """``call()`` under the hang guard: its outcome counted (``ran``, or the label it returns),
    an :class:`InputError` (one printable line) counted as ``refused``, anything else a failure."""
    counts.counts["inputs"] += 1
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, FUZZ_TIME_LIMIT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            label = call()
        counts.counts[label or "ran"] += 1
    except InputError as err:
        try:
            _refusal_is_one_line(err)
            counts.counts["refused"] += 1
        except AssertionError as bad:
            counts.fail("refusal not one line", f"{bad}\n{what}, {doc!r}")
    except Exception as exc:  # noqa: BLE001 - every other exception is a failure, reported at the end
        counts.fail(_signature(exc), f"{type(exc).__name__}: {str(exc)[:300]}\n{what}, {doc!r}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Command:
    """One real command to run for ``doc``, and the check of its stdout on exit 0 (None: fine,
    else the problem)."""

    doc: Document
    args: tuple[Any, ...]
    cwd: Path
    check: Callable[[str], str | None] | None = None


def run_commands(counts: Counts, commands: list[Command]) -> None:
    """Every command, two processes at a time (each input is its own file, so they are
    independent), counted by :func:`through_cli`."""
    lock = threading.Lock()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda c: through_cli(counts, c, lock), commands))


def through_cli(counts: Counts, command: Command, lock: threading.Lock) -> None:
    """One real command: exit 0 (its stdout passing the command's check) counts as ``ran``,
    exit 2 with exactly one ``staleness-lab: error:`` line as ``refused``; a traceback, a hang,
    another status or more lines is a failure."""
    doc, args = command.doc, command.args
    name = " ".join(str(c) for c in args[:2])
    try:
        proc = run_cli(*args, cwd=command.cwd, timeout=CLI_TIMEOUT)
    except subprocess.TimeoutExpired:
        with lock:
            counts.counts["inputs"] += 1
            counts.fail(f"hang in {name}", f"no exit within {CLI_TIMEOUT} s: {args}, {doc!r}")
        return
    with lock:
        counts.counts["inputs"] += 1
        _count_exit(counts, proc, name, command)


def _count_exit(counts: Counts, proc: subprocess.CompletedProcess[str], name: str, command: Command) -> None:
    doc, check = command.doc, command.check
    if "Traceback" in proc.stderr or "Traceback" in proc.stdout:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        counts.fail(f"traceback in {name}: {tail[:80]}", f"{proc.stderr[-1500:]}\n{command.args}, {doc!r}")
        return
    lines = proc.stderr.splitlines()
    problem = None
    if proc.returncode == 2:
        if proc.stdout or len(lines) != 1 or not lines[0].startswith("staleness-lab: error: "):
            problem = "exit 2 without exactly one error line"
        else:
            counts.counts["refused"] += 1
    elif proc.returncode == 0:
        problem = check(proc.stdout) if check is not None else None
        if problem is None:
            counts.counts["ran"] += 1
    else:
        problem = f"exit status {proc.returncode}"
    if problem is not None:
        counts.fail(f"{problem} in {name}", f"{proc.stderr[-1500:]}\n{proc.stdout[:500]}\n{command.args}, {doc!r}")


def _json_check(stdout: str) -> str | None:
    try:
        strict_json(stdout)
    except ValueError as err:
        return f"stdout is not strict JSON: {err}"
    return None


def fuzz(examples: int, *strategies: st.SearchStrategy[Any]) -> Callable[[Callable[..., None]], Callable[[], None]]:
    """Hypothesis with a fixed sequence of ``examples`` (derandomized unless HOSTILE_FUZZ_RANDOM)."""

    def wrap(body: Callable[..., None]) -> Callable[[], None]:
        return settings(max_examples=examples, deadline=None, database=None, derandomize=not RANDOM_FUZZ,
                        suppress_health_check=HEALTH)(given(*strategies)(body))

    return wrap


def report(counts: Counts, surface: str, how: str, started: float, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\n{counts.line(surface, how, time.monotonic() - started)}", file=sys.stderr)
        for sig, text in counts.failures.items():
            print(f"  failure [{sig}]: {text[:700]}", file=sys.stderr)
    assert counts.counts["refused"] > 0, counts.counts  # the mutations reach the rules
    if how == "in-process":  # and the sample is large enough that some inputs stay valid
        assert counts.counts["ran"] > 0, counts.counts
    assert not counts.failures, "\n\n".join(f"[{s}]\n{t}" for s, t in counts.failures.items())


def write(doc: Document, directory: Path, stem: str) -> Path:
    path = directory / (stem + doc.suffix)
    path.write_bytes(doc.data)
    return path


# --------------------------------------------------------------------------------------------
# fixtures: a directory per test with what the documents refer to
# --------------------------------------------------------------------------------------------
@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A directory holding the olston-example replays (a mutated workflow names them relatively)."""
    shutil.copytree(DATA / "workflows" / "olston-example", tmp_path / "olston-example")
    return tmp_path


@pytest.fixture(scope="module")
def generation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TPC-H generation made by the command (SF 0.01, 2 parts)."""
    out = tmp_path_factory.mktemp("tpch") / "gen"
    proc = run_cli("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", out, cwd=out.parent, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


def manifests(generation: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads((generation / tpch.MANIFEST).read_text(encoding="utf-8"))]


def linked_copy(generation: Path, where: Path, doc: Document) -> Path:
    """The generation's files hard-linked under ``where`` with the mutated manifest beside them."""
    if where.exists():
        shutil.rmtree(where)
    shutil.copytree(generation, where, copy_function=os.link, ignore=shutil.ignore_patterns(tpch.MANIFEST))
    (where / tpch.MANIFEST).write_bytes(doc.data)
    return where


def queries_file(path: Path) -> Path:
    """A catalogue query set over the generation's parts (for ``tpch run``)."""
    path.write_text(yaml.safe_dump({"queries": [_q("Q6", arrivals={"ws": 1, "rate": 1, "N": int(PARTS)})]}),
                    encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# query sets: plan
# --------------------------------------------------------------------------------------------
def _plan(path: Path, scheme: str) -> str:
    qs = load_queryset(path)
    plan = make_plan(qs, scheme, limits=PLAN_LIMITS)
    strict_json(dumps(plan_json(plan, version="fuzz")))
    return "ran" if plan.status == "ok" else f"plan {plan.status}"


def test_fuzz_query_sets_in_process(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts, started = Counts(), time.monotonic()

    @fuzz(200, documents(bases=QUERY_SETS), st.sampled_from(SCHEMES))
    def body(doc: Document, scheme: str) -> None:
        path = write(doc, workdir, "qs")
        in_process(counts, doc, f"plan --scheme {scheme}", lambda: _plan(path, scheme))

    body()
    report(counts, "query sets (plan)", "in-process", started, capsys)


def test_fuzz_query_sets_through_the_cli(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts, started, commands = Counts(), time.monotonic(), []

    @fuzz(CLI_EXAMPLES, documents(bases=QUERY_SETS, most=1), st.sampled_from([*SCHEMES, "optimal"]), st.booleans())
    def body(doc: Document, scheme: str, out: bool) -> None:
        k = len(commands)
        path = write(doc, workdir, f"qs{k}")
        extra = ("--time-limit", "1", "--workers", "1") if scheme == "optimal" else ()
        where = ("--out", workdir / f"plan{k}") if out else ()
        commands.append(Command(doc, ("plan", path, "--scheme", scheme, "--json", *PLAN_FLAGS, *extra, *where),
                                workdir, _json_check))

    body()
    run_commands(counts, commands)
    report(counts, "query sets (plan)", "cli", started, capsys)


# --------------------------------------------------------------------------------------------
# workflows: validate, and a memory-mode run
# --------------------------------------------------------------------------------------------
def _workflow_run(path: Path, seed: int) -> str:
    workflow = load_workflow(path, limits=WORKFLOW_LIMITS)
    strict_json(dumps(bounds_report(workflow)))
    result = run(workflow, RunConfig(mode="memory", seed=seed, max_scheduler_s=5.0))
    strict_json(dumps(result.summary))
    return "ran" if result.summary["status"] == "ok" else f"run {result.summary['status']}"


def test_fuzz_workflows_in_process(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts, started = Counts(), time.monotonic()

    @fuzz(300, documents(bases=WORKFLOWS), st.integers(0, 3))
    def body(doc: Document, seed: int) -> None:
        path = write(doc, workdir, "wf")
        in_process(counts, doc, f"validate and run --mode memory --seed {seed}", lambda: _workflow_run(path, seed))

    body()
    report(counts, "workflows (validate, run --mode memory)", "in-process", started, capsys)


def test_fuzz_workflows_through_the_cli(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts, started, commands = Counts(), time.monotonic(), []

    @fuzz(CLI_EXAMPLES, documents(bases=WORKFLOWS, most=1), st.booleans())
    def body(doc: Document, validate: bool) -> None:
        path = write(doc, workdir, f"wf{len(commands)}")
        if validate:
            args: tuple[Any, ...] = ("workflow", "validate", path, "--json", *WORKFLOW_FLAGS)
        else:
            args = ("workflow", "run", path, "--mode", "memory", "--json", *WORKFLOW_FLAGS, "--max-run-steps", "5000")
        commands.append(Command(doc, args, workdir, _json_check))

    body()
    run_commands(counts, commands)
    report(counts, "workflows (validate, run --mode memory)", "cli", started, capsys)


# --------------------------------------------------------------------------------------------
# sweep grids
# --------------------------------------------------------------------------------------------
def _grid(path: Path) -> str:
    exp = get_experiment(EXPERIMENT)
    rows = expand_grid(exp, load_grid(path))
    if len(rows) > 4:
        return "expanded (not run)"
    frame = run_sweep(exp, rows, runner="local", cache_dir=None, progress=False).frame
    assert len(frame.drop_duplicates("row")) == len(rows)
    return "ran"


def test_fuzz_grids_in_process(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts, started = Counts(), time.monotonic()

    @fuzz(300, documents(bases=GRIDS))
    def body(doc: Document) -> None:
        path = write(doc, workdir, "grid")
        in_process(counts, doc, "expand (and run) the grid", lambda: _grid(path))

    body()
    report(counts, "grids (sweep --grid)", "in-process", started, capsys)


def test_fuzz_grids_through_the_cli(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts, started, commands = Counts(), time.monotonic(), []
    exp = get_experiment(EXPERIMENT)

    @fuzz(CLI_EXAMPLES, documents(bases=GRIDS, most=1))
    def body(doc: Document) -> None:
        k = len(commands)
        path = write(doc, workdir, f"grid{k}")
        try:
            if len(expand_grid(exp, load_grid(path))) > GRID_ROWS_RUN:
                counts.counts["inputs"] += 1
                counts.counts["large valid grids not run"] += 1
                return
        except InputError:
            pass  # refused: the command must refuse it too, in one line
        commands.append(Command(doc, ("sweep", EXPERIMENT, "--runner", "local", "--grid", path, "--out",
                                      workdir / f"out{k}.parquet", "--cache", workdir / f"cache{k}"), workdir))

    body()
    run_commands(counts, commands)
    report(counts, "grids (sweep --grid)", "cli", started, capsys)


# --------------------------------------------------------------------------------------------
# TPC-H generations: a mutated manifest
# --------------------------------------------------------------------------------------------
def _manifest(directory: Path, version: str) -> str:
    tpch.check_generation(directory, "--data")
    tpch.is_complete(directory, float(SCALE), int(PARTS), version)
    return "ran"


def test_fuzz_tpch_manifests_in_process(generation: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts, started = Counts(), time.monotonic()
    version = tpch.generator_version()

    @fuzz(150, documents(formats=("json",), bases=manifests(generation)))
    def body(doc: Document) -> None:
        data = linked_copy(generation, tmp_path / "gen", doc)
        in_process(counts, doc, "check_generation", lambda: _manifest(data, version))

    body()
    report(counts, "TPC-H manifests (check_generation)", "in-process", started, capsys)


def test_fuzz_tpch_manifests_through_the_cli(generation: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``tpch run --data`` on the manifests its check refuses (it must refuse them before Spark,
    in one line), ``tpch generate --out`` on the first few of each kind."""
    counts, started, commands = Counts(), time.monotonic(), []
    queries = queries_file(tmp_path / "qs.yaml")
    generated, numbers = collections.Counter[bool](), itertools.count()

    @fuzz(CLI_EXAMPLES, documents(formats=("json",), bases=manifests(generation), most=1))
    def body(doc: Document) -> None:
        k = next(numbers)
        data = linked_copy(generation, tmp_path / f"gen{k}", doc)  # one directory per input
        try:
            tpch.check_generation(data, "--data")
            accepted = True
        except InputError:
            accepted = False
        if accepted:
            counts.counts["accepted by tpch run's check (Spark not started)"] += 1
        else:
            commands.append(Command(doc, ("tpch", "run", queries, "--scheme", "llf", "--data", data, "--out",
                                          tmp_path / f"run{k}"), tmp_path, _json_check))
        if generated[accepted] < 2:  # run after tpch run (which only reads): it may replace the directory
            generated[accepted] += 1
            later.append(Command(doc, ("tpch", "generate", "--scale", SCALE, "--parts", PARTS, "--out", data),
                                 tmp_path))

    later: list[Command] = []
    body()
    run_commands(counts, commands)
    run_commands(counts, later)
    report(counts, "TPC-H manifests (tpch run --data, tpch generate --out)", "cli", started, capsys)
