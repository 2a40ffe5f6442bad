"""Workflow files: durations, every bad-input rule (the :class:`InputError` field and rule, and the
CLI's exit 2 with one line), and ``staleness-lab workflow validate`` on the data files.

Every rule goes through :func:`staleness_lab.cli.main` in this process (exit status, one line on
stderr); a few go through the installed console script as a real process, like
``tests/test_cli.py`` (each costs about a second of interpreter start-up).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from staleness_lab.cli import main
from staleness_lab.errors import InputError
from staleness_lab.workflows.durations import format_duration, parse_duration
from staleness_lab.workflows.load import load_workflow

from tests.workflows.test_model import DATA, FILES

CLI = Path(sys.executable).parent / "staleness-lab"

BASE: dict[str, Any] = {
    "name": "small", "horizon": "90h",
    "channels": {
        "digests": {"schema": {"url": "str", "digest": "str", "site": "str"}, "insert_only": True,
                    "input": {"replay": "digests.csv", "times": [15, 32]}},
        "scores": {"schema": {"site": "str", "score": "int"}, "key": ["site"],
                   "input": {"replay": "scores.csv", "times": [0, 25], "delivers": ["B", "delta"]}},
        "output": {"accepts": ["B", "delta"]},
    },
    "operators": [{"name": "join", "widget": "join", "on": ["site"], "inputs": ["digests", "scores"],
                   "output": "output"}],
    "constraints": [
        {"bound_staleness": {"channel": "output", "path": 0, "t": 0}},
        {"bound_staleness": {"channel": "scores", "path": 0, "t": "1d"}},
        {"bound_inconsistency": {"channel": "output", "t": "1d"}},
    ],
}
CSV = {"digests.csv": "time,_sign,url,digest,site\n32,1,a.com/x,d1,a.com\n", "scores.csv": "time,_sign,site,score\n",
       "bad.csv": "time,_sign,url,site,digest\n"}

Change = Callable[[dict[str, Any]], None]


def write_case(directory: Path, change: Change | str | None) -> Path:
    """The base workflow (or raw YAML text) with ``change`` applied, next to its replay files."""
    work = directory / "wf"
    work.mkdir(exist_ok=True)
    for name, text in CSV.items():
        (work / name).write_text(text, encoding="utf-8")
    (directory / "digests.csv").write_text(CSV["digests.csv"], encoding="utf-8")
    path = work / "workflow.yaml"
    if isinstance(change, str):
        path.write_text(change, encoding="utf-8")
        return path
    data = copy.deepcopy(BASE)
    if change is not None:
        change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _ops(data: dict[str, Any], *ops: dict[str, Any], **channels: dict[str, Any]) -> None:
    data["operators"].extend(ops)
    data["channels"].update(channels)


def _set(path: str, value: Any) -> Change:
    """Set (or with ``...``, delete) the value at a dotted path (``[k]`` for list items)."""
    def change(data: dict[str, Any]) -> None:
        parts = [int(p) if p.isdigit() else p for p in path.replace("[", ".").replace("]", "").split(".")]
        *head, last = parts
        node = data
        for part in head:
            node = node[part]
        if value is ...:
            del node[last]
        else:
            node[last] = value
    return change


@dataclass(frozen=True)
class Bad:
    id: str
    change: Change | str
    field: str
    rule: str


DUPLICATE_CHANNEL = """
name: dup
horizon: 1
channels:
  digests: {schema: {url: str}, input: {replay: digests.csv, times: [0]}}
  digests: {accepts: [B]}
operators: []
"""

BAD = [
    Bad("unknown-input-channel", _set("operators[0].inputs[0]", "nope"), "operators[0] (join).inputs[0]",
        "unknown channel 'nope'"),
    Bad("unknown-output-channel", _set("operators[0].output", "nope"), "operators[0] (join).output",
        "unknown channel 'nope'"),
    Bad("unknown-fn", lambda d: _ops(d, {"name": "f", "widget": "stateless", "fn": "no-such-fn", "inputs": ["digests"],
                                         "output": "d2"}, d2={}), "operators[1] (f).fn", "unknown fn 'no-such-fn'"),
    Bad("unknown-generator", _set("channels.gen", {"schema": {"x": "int"}, "input": {"generator": "no-such-gen",
                                                                                     "every": "1h", "rows": 1}}),
        "channels.gen.input.generator", "unknown generator 'no-such-gen'"),
    Bad("cycle", lambda d: _ops(d, {"name": "op1", "widget": "stateless", "inputs": ["a"], "output": "b"},
                                {"name": "op2", "widget": "stateless", "inputs": ["b"], "output": "a"}, a={}, b={}),
        "operators[1] (op1).inputs[0]", "cycle: a -> op1 -> b -> op2 -> a"),
    Bad("self-loop", lambda d: _ops(d, {"name": "loop", "widget": "stateless", "inputs": ["a"], "output": "a"}, a={}),
        "operators[1] (loop).inputs[0]", "cycle: a -> loop -> a"),
    Bad("duplicate-channel", DUPLICATE_CHANNEL, "channels", "duplicate key 'digests'"),
    Bad("duplicate-operator", lambda d: _ops(d, {**d["operators"][0], "output": "o2"}, o2={}),
        "operators[1] (join).name", "duplicate operator name (also operators[0])"),
    Bad("negative-staleness-t", _set("constraints[0].bound_staleness.t", -1), "constraints[0].bound_staleness.t",
        "must be >= 0, got -1"),
    Bad("negative-inconsistency-t", _set("constraints[2].bound_inconsistency.t", "-2h"),
        "constraints[2].bound_inconsistency.t", "must be >= 0, got -2"),
    Bad("path-outside-layout", _set("constraints[1]", {"bound_staleness": {"channel": "output", "path": 3, "t": 1}}),
        "constraints[1].bound_staleness.path", "3 is outside the layout of output (2 elements)"),
    Bad("path-negative", _set("constraints[0].bound_staleness.path", -1), "constraints[0].bound_staleness.path",
        "must be >= 0"),
    Bad("staleness-unknown-channel", _set("constraints[0].bound_staleness.channel", "nope"),
        "constraints[0].bound_staleness.channel", "unknown channel 'nope'"),
    Bad("accepts-unproduced", _set("channels.output.accepts", ["increment"]), "channels.output.accepts",
        "'increment' is produced by nothing: output written by operators[0] (join) holds B, delta"),
    Bad("accepts-unknown-type", _set("channels.output.accepts", ["B", "Delta"]), "channels.output.accepts[1]",
        "unknown block type 'Delta'"),
    Bad("missing-join-key", _set("operators[0].on", ["url"]), "operators[0] (join).on[0]",
        "column 'url' is not in the schema of inputs[1] 'scores' (site, score)"),
    Bad("join-key-types", _set("channels.scores.schema.site", "int"), "operators[0] (join).on[0]",
        "column 'site' is str in 'digests' but int in 'scores'"),
    Bad("count-key", lambda d: _ops(d, {"name": "c", "widget": "count", "key": ["nope"], "inputs": ["digests"],
                                        "output": "c"}, c={}), "operators[1] (c).key[0]", "column 'nope' is not in"),
    Bad("two-producers", lambda d: _ops(d, {"name": "copy", "widget": "stateless", "inputs": ["digests"],
                                            "output": "output"}),
        "operators[1] (copy).output", "channel 'output' is already written by operators[0] (join)"),
    Bad("writes-input", lambda d: _ops(d, {"name": "copy", "widget": "stateless", "inputs": ["digests"],
                                           "output": "scores"}),
        "operators[1] (copy).output", "writes input channel 'scores'"),
    Bad("unknown-key-top", _set("colour", 1), "colour", "unknown field 'colour'"),
    Bad("unknown-key-channel", _set("channels.digests.colour", 1), "channels.digests.colour", "unknown field 'colour'"),
    Bad("unknown-key-input", _set("channels.digests.input.period", 1), "channels.digests.input.period",
        "unknown field 'period'"),
    Bad("unknown-key-operator", _set("operators[0].fnn", "x"), "operators[0] (join).fnn", "unknown field 'fnn'"),
    Bad("unknown-key-bound", _set("constraints[0].bound_staleness.when", 1), "constraints[0].bound_staleness.when",
        "unknown field 'when'"),
    Bad("unknown-constraint", _set("constraints[0]", {"bound_freshness": {"channel": "output", "t": 1}}),
        "constraints[0].bound_freshness", "unknown field 'bound_freshness'"),
    Bad("unknown-key-cost", _set("cost", {"delta": 1}), "cost.delta", "unknown field 'delta'"),
    Bad("unknown-widget", _set("operators[0].widget", "sort"), "operators[0] (join).widget", "unknown widget 'sort'"),
    Bad("bad-duration", _set("horizon", "1y"), "horizon", "must be a duration"),
    Bad("replay-outside-layout", _set("channels.digests.input.replay", "../digests.csv"),
        "channels.digests.input.replay", "is a path outside the layout"),
    Bad("replay-missing", _set("channels.digests.input.replay", "nope.csv"), "channels.digests.input.replay",
        "no such replay file"),
    Bad("replay-header", _set("channels.digests.input.replay", "bad.csv"), "channels.digests.input.replay",
        "header time,_sign,url,site,digest does not match time,_sign,url,digest,site"),
    Bad("times-decreasing", _set("channels.digests.input.times", [15, 10]), "channels.digests.input.times[1]",
        "non-decreasing"),
    Bad("replay-and-generator", _set("channels.digests.input.generator", "sp-crawl"), "channels.digests.input.replay",
        "either replay"),
    Bad("three-way-union", _set("operators[0]", {"name": "u", "widget": "union", "inputs": ["digests", "scores",
                                                                                           "digests"],
                                                 "output": "output"}),
        "operators[0] (u).inputs", "exactly 2 inputs, got 3 (a 3-way union is two cascaded unions)"),
    Bad("outputs-not-split", lambda d: d["operators"][0].update(outputs=["output"]) or d["operators"][0].pop("output"),
        "operators[0] (join).outputs", "only a split writes several channels"),
    Bad("input-without-schema", _set("channels.digests.schema", ...), "channels.digests.schema",
        "missing required field"),
    Bad("orphan-channel", _set("channels.lost", {}), "channels.lost", "no operator writes it"),
    Bad("insert-only-derived", _set("channels.output.insert_only", True), "channels.output.insert_only",
        "only an input channel declares it"),
    Bad("weak-kind-without-key", lambda d: _ops(d, {"name": "copy", "widget": "stateless", "inputs": ["digests"],
                                                    "output": "d2"}, d2={"delta_kind": "upsert"}),
        "channels.d2.key", "a channel holding upsert deltas needs a key"),
    Bad("weak-kind-on-join", _set("channels.output.delta_kind", "upsert"), "channels.output.delta_kind",
        "a join (operators[0] (join)) emits delta blocks, not upsert"),
    Bad("delivers-not-held", _set("channels.scores.input.delivers", ["upsert"]),
        "channels.scores.input.delivers[0]", "'upsert': scores holds B, delta"),
    Bad("fn-lacks-columns", lambda d: _ops(d, {"name": "shingle", "widget": "stateless", "fn": "shingle",
                                               "inputs": ["scores"], "output": "d2"}, d2={}),
        "operators[1] (shingle).fn", "lacks column(s) ['content', 'url']"),
    Bad("generator-schema", _set("channels.gen", {"schema": {"x": "int"}, "input": {"generator": "sp-crawl",
                                                                                    "every": "1h", "rows": 1}}),
        "channels.gen.schema", "differs from what generator sp-crawl writes"),
    Bad("empty-file", "", "workflow.yaml", "the workflow file is empty"),
]


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_input_names_field_and_rule(case: Bad, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_case(tmp_path, case.change)
    with pytest.raises(InputError) as err:
        load_workflow(path)
    assert case.field in err.value.field
    assert case.rule in err.value.rule, err.value.rule
    assert main(["workflow", "validate", str(path)]) == 2
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert out.out == "" and len(lines) == 1, out.err
    assert lines[0] == f"staleness-lab: error: {err.value}"


def test_the_base_case_is_valid(tmp_path: Path) -> None:
    """t = 0 is legal; YAML's bare `on` key (read as true) is the join's `on`."""
    workflow = load_workflow(write_case(tmp_path, None))
    assert workflow.constraints[0].t == 0.0
    text = (DATA / "olston-example.yaml").read_text(encoding="utf-8")
    assert "on: [site]" in text and load_workflow(DATA / "olston-example.yaml").operators[0].on == ("site",)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such workflow file"):
        load_workflow(tmp_path / "nope.yaml")


@pytest.mark.parametrize(("text", "hours"), [(2, 2.0), (0.5, 0.5), ("15min", 0.25), ("2h", 2.0), ("1d", 24.0),
                                              ("1w", 168.0), ("1.5d", 36.0)])
def test_durations(text: Any, hours: float) -> None:
    assert parse_duration(text, "t") == hours


@pytest.mark.parametrize("text", ["1y", "1 d", "d", "15", "1dd", True, None, float("nan"), "1e999h"])
def test_bad_durations_name_the_field(text: Any) -> None:
    with pytest.raises(InputError) as err:
        parse_duration(text, "channels.x.input.every")
    assert err.value.field == "channels.x.input.every"


def test_format_duration() -> None:
    assert [format_duration(h) for h in (0, 0.25, 4, 24, 168, 36)] == ["0", "15min", "4h", "1d", "1w", "36h"]


# -- the console script ------------------------------------------------------------------------
def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_workflow_validate_processes(tmp_path: Path) -> None:
    """Each data file validates (exit 0), ``--json`` is one JSON object, bad input is one line."""
    bad = write_case(tmp_path, BAD[0].change)
    runs = [("workflow", "validate", path) for path in FILES]
    runs += [("workflow", "validate", DATA / "crawl-selection.yaml", "--json"), ("workflow", "validate", bad)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        procs = list(pool.map(lambda args: _run(*args), runs))
    for path, proc in zip(FILES, procs):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"{path}: valid workflow {path.stem}")
    assert "WITHHELD" in procs[FILES.index(DATA / "crawl-selection.yaml")].stdout
    report = json.loads(procs[-2].stdout)
    assert report["status"] == "valid" and report["workflow"] == "crawl-selection"
    indegrees = next(c for c in report["channels"] if c["name"] == "indegrees")
    assert indegrees["propagated"] == {"staleness": [None], "inconsistency": 168.0}
    assert procs[-1].returncode == 2 and procs[-1].stdout == ""
    assert procs[-1].stderr.splitlines() == [
        "staleness-lab: error: operators[0] (join).inputs[0]: unknown channel 'nope' (channels: digests, scores, output)"]
