"""The ``staleness-lab`` console script, run as a real process on real files.

Bad input of every kind must end with exit status 2 and exactly one line on stderr that names
the field (and the table, where one is at fault) and the rule it breaks -- never a traceback,
and nothing written under ``--trace-out``.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

import staleness_lab
from staleness_lab import load_workload
import cli_fork
from example_workloads import BASE, EXAMPLE_YAML

CLI = Path(sys.executable).parent / "staleness-lab"

POLICIES = ["fifo", "random", "edf", "edf-p", "max-benefit"]

SUMMARY_KEYS = {"policy", "horizon", "seed", "events", "jobs", "total_weighted_staleness", "version", "tables"}
TABLE_KEYS = {"table", "priority", "staleness_area", "mean_staleness", "max_staleness", "updates"}

#: Costs vary with the seed here, so the seed visibly changes the results.
NOISY: dict[str, Any] = {
    "tracks": 2,
    "horizon": 200,
    "seed": 1,
    "variability": 0.5,
    "tables": [
        {"name": "orders", "period": 10, "alpha": 2, "beta": 0.5, "priority": 1},
        {"name": "stock", "period": 7, "phase": 3, "alpha": 1, "beta": 0.4, "priority": 3},
        {"name": "report", "sources": ["orders", "stock"], "alpha": 1.5, "beta": 0.3, "priority": 2},
    ],
}


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return cli_fork.run_cli(args, cwd=cwd)


def write_workload(path: Path, data: dict[str, Any] | str) -> Path:
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    elif path.suffix == ".json":
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def simulate_json(path: Path, *extra: str) -> dict[str, Any]:
    proc = run_cli("simulate", path, "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def with_changes(base: dict[str, Any], **top: Any) -> dict[str, Any]:
    data = copy.deepcopy(base)
    data.update(top)
    return data


def numbers_in(text: str) -> list[float]:
    return [float(m) for m in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------
Mutation = Callable[[dict[str, Any]], None]


@dataclass
class Bad:
    """One bad-input case.

    ``content``: raw file text or bytes, or a mutation applied to a copy of BASE (None: no file at all).
    ``field``: text that must appear in the error line (the key at fault); ``table``: the table
    at fault (matched as a word); ``rule``: fragments of the rule; ``names``: further table
    names that must appear as words (e.g. every table on a cycle).
    """

    id: str
    content: str | bytes | Mutation | None
    field: str
    rule: list[str]
    table: str | None = None
    names: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    suffix: str = ".yaml"
    policy: str = "fifo"

    def param(self) -> Any:
        return pytest.param(self, id=self.id)


def top(**changes: Any) -> Mutation:
    def apply(w: dict[str, Any]) -> None:
        w.update(changes)

    return apply


def drop_top(key: str) -> Mutation:
    def apply(w: dict[str, Any]) -> None:
        del w[key]

    return apply


def tab(k: int, **changes: Any) -> Mutation:
    def apply(w: dict[str, Any]) -> None:
        w["tables"][k].update(changes)

    return apply


def drop(k: int, *keys: str) -> Mutation:
    def apply(w: dict[str, Any]) -> None:
        for key in keys:
            del w["tables"][k][key]

    return apply


def tables(*items: dict[str, Any]) -> Mutation:
    def apply(w: dict[str, Any]) -> None:
        w["tables"] = list(items)

    return apply


def chain(*mutations: Mutation) -> Mutation:
    def apply(w: dict[str, Any]) -> None:
        for m in mutations:
            m(w)

    return apply


def _base_text(**replace: str) -> str:
    """BASE as YAML text with some top-level lines replaced verbatim (for YAML literals)."""
    lines = [f"tracks: {replace.pop('tracks', '2')}", f"horizon: {replace.pop('horizon', '100')}", "seed: 0"]
    lines += [f"{k}: {v}" for k, v in replace.items()]
    body = yaml.safe_dump({"tables": BASE["tables"]}, sort_keys=False)
    return "\n".join(lines) + "\n" + body


def _table_text(**replace: str) -> str:
    """BASE as YAML text with some keys of table 'orders' spelled verbatim."""
    orders = {"name": "orders", "period": "10", "alpha": "1", "beta": "0.1", "priority": "1", **replace}
    inline = ", ".join(f"{k}: {v}" for k, v in orders.items())
    rest = yaml.safe_dump(BASE["tables"][1:], sort_keys=False, default_flow_style=True, width=10**6).strip()
    rest_items = rest[1:-1]
    return f"tracks: 2\nhorizon: 100\nseed: 0\ntables: [{{{inline}}}, {rest_items}]\n"


ORDERS = {"name": "orders", "period": 10, "alpha": 1, "beta": 0.1, "priority": 1}


def view(name: str, *sources: str) -> dict[str, Any]:
    return {"name": name, "sources": list(sources), "alpha": 1, "beta": 0.1, "priority": 1}


JSON_BASE = json.dumps(BASE)

BAD: list[Bad] = [
    # -- the file itself ------------------------------------------------------------------
    Bad("missing-file", None, "no-such-workload.yaml", ["no such"]),
    Bad("unparseable-yaml", "tracks: [1, 2\nhorizon: 3\n", "workload.yaml", ["parse"]),
    Bad("unparseable-yaml-bad-indent", "tracks: 2\n  horizon: 3\n tables: x\n", "workload.yaml", ["parse"]),
    Bad("unparseable-json", '{"tracks": 2, "horizon": ', "workload.json", ["parse"], suffix=".json"),
    Bad("empty-file", "", "workload.yaml", ["empty"]),
    Bad("whitespace-only-file", "  \n\n   \n", "workload.yaml", ["empty"]),
    Bad("comment-only-file", "# nothing here\n", "workload.yaml", ["empty"]),
    Bad("empty-json-file", "", "workload.json", ["empty"], suffix=".json"),
    Bad("not-utf8-file", b"\xff\xfe\x00tracks: 2\n", "workload.yaml", ["utf"]),
    Bad("yaml-python-tag", "tracks: !!python/object:os.system x\n", "workload.yaml", ["parse"]),
    Bad("yaml-unhashable-key", "? [a, b]\n: 1\n", "workload.yaml", ["parse"]),
    Bad("not-a-mapping-list", "- 1\n- 2\n", "workload.yaml", ["mapping"]),
    Bad("not-a-mapping-scalar-int", "42\n", "workload.yaml", ["mapping"]),
    Bad("not-a-mapping-scalar-str", "hello\n", "workload.yaml", ["mapping"]),
    Bad("not-a-mapping-json-list", "[1, 2, 3]", "workload.json", ["mapping"], suffix=".json"),
    # -- missing fields -------------------------------------------------------------------
    Bad("missing-tracks", drop_top("tracks"), "tracks", ["missing"]),
    Bad("missing-horizon", drop_top("horizon"), "horizon", ["missing"]),
    Bad("missing-tables", drop_top("tables"), "tables", ["missing"]),
    Bad("table-missing-name", drop(0, "name"), "name", ["missing"]),
    Bad("table-missing-alpha", drop(0, "alpha"), "alpha", ["missing"], table="orders"),
    Bad("table-missing-beta", drop(1, "beta"), "beta", ["missing"], table="clicks"),
    Bad("table-missing-priority", drop(2, "priority"), "priority", ["missing"], table="summary"),
    Bad("slowdown-missing-slow", top(slowdown={"factor": 2, "normal": 10}), "slow", ["missing"]),
    # -- unknown fields -------------------------------------------------------------------
    Bad("unknown-top-level-field", top(colour="red"), "colour", ["unknown"]),
    Bad("unknown-field-with-a-newline", top(**{"col\nour": 1}), "col", ["unknown"]),
    Bad("unknown-table-field", tab(0, colour="red"), "colour", ["unknown"], table="orders"),
    Bad("unknown-table-field-derived", tab(2, periodd=5), "periodd", ["unknown"], table="summary"),
    Bad(
        "unknown-slowdown-field",
        top(slowdown={"factor": 2, "normal": 10, "slow": 5, "colour": 1}),
        "colour",
        ["unknown"],
        names=["slowdown"],
    ),
    # -- wrong types ----------------------------------------------------------------------
    Bad("tracks-true", _base_text(tracks="true"), "tracks", ["integer"]),
    Bad("tracks-quoted-string", _base_text(tracks='"2"'), "tracks", ["integer"]),
    Bad("tracks-yes", _base_text(tracks="yes"), "tracks", ["integer"]),
    Bad("tracks-float", _base_text(tracks="2.5"), "tracks", ["integer"]),
    Bad("tracks-null", _base_text(tracks="null"), "tracks", ["integer"]),
    Bad("seed-string", top(seed="0"), "seed", ["integer"]),
    Bad("period-quoted-string", _table_text(period='"10"'), "period", ["number"], table="orders"),
    Bad("horizon-list", _base_text(horizon="[1]"), "horizon", ["number"]),
    Bad("horizon-string", _base_text(horizon="soon"), "horizon", ["number"]),
    Bad("alpha-bool", tab(0, alpha=True), "alpha", ["number"], table="orders"),
    Bad("priority-null", tab(2, priority=None), "priority", ["number"], table="summary"),
    Bad("name-not-a-string", tab(0, name=5), "name", ["string"]),
    Bad("table-not-a-mapping", tables(5), "tables[0]", ["mapping"]),
    Bad("sources-not-a-list", tab(2, sources="orders"), "sources", ["list"], table="summary"),
    Bad("slowdown-not-a-mapping", top(slowdown=3), "slowdown", ["mapping"]),
    # -- NaN and infinities ---------------------------------------------------------------
    Bad("horizon-yaml-nan", _base_text(horizon=".nan"), "horizon", ["finite"]),
    Bad("horizon-yaml-inf", _base_text(horizon=".inf"), "horizon", ["finite"]),
    Bad("horizon-yaml-minus-inf", _base_text(horizon="-.inf"), "horizon", ["finite"]),
    Bad("alpha-yaml-minus-inf", _table_text(alpha="-.inf"), "alpha", ["finite"], table="orders"),
    Bad("period-yaml-nan", _table_text(period=".nan"), "period", ["finite"], table="orders"),
    Bad("priority-yaml-inf", _table_text(priority=".inf"), "priority", ["finite"], table="orders"),
    Bad("variability-yaml-nan", _base_text(variability=".nan"), "variability", ["finite"]),
    Bad("tracks-yaml-nan", _base_text(tracks=".nan"), "tracks", ["integer"]),
    Bad("horizon-json-nan", JSON_BASE.replace('"horizon": 100', '"horizon": NaN'), "horizon", ["finite"], suffix=".json"),
    Bad(
        "period-json-infinity",
        JSON_BASE.replace('"period": 10', '"period": Infinity'),
        "period",
        ["finite"],
        table="orders",
        suffix=".json",
    ),
    Bad(
        "beta-json-nan",
        JSON_BASE.replace('"beta": 0.2', '"beta": NaN'),
        "beta",
        ["finite"],
        table="clicks",
        suffix=".json",
    ),
    # -- the tables list ------------------------------------------------------------------
    Bad("tables-not-a-list-mapping", top(tables={"name": "orders"}), "tables", ["list"]),
    Bad("tables-not-a-list-string", top(tables="orders"), "tables", ["list"]),
    Bad("tables-null", top(tables=None), "tables", ["list"]),
    Bad("tables-empty", top(tables=[]), "tables", ["empty"]),
    Bad("duplicate-table-names", tab(1, name="orders"), "name", ["duplicate"], table="orders"),
    # -- exactly one of period / arrivals / sources ---------------------------------------
    Bad("no-period-arrivals-or-sources", drop(0, "period"), "period", ["exactly one"], table="orders"),
    Bad("period-and-arrivals", tab(0, arrivals=[[1, 1]]), "arrivals", ["more than one"], table="orders"),
    Bad("period-and-sources", tab(0, sources=["clicks"]), "sources", ["more than one"], table="orders"),
    Bad("arrivals-and-sources", tab(1, sources=["orders"]), "sources", ["more than one"], table="clicks"),
    Bad(
        "period-arrivals-and-sources",
        tab(0, arrivals=[[1, 1]], sources=["clicks"]),
        "period",
        ["more than one"],
        table="orders",
    ),
    # -- per-table ranges -----------------------------------------------------------------
    Bad("period-zero", tab(0, period=0), "period", ["> 0"], table="orders"),
    Bad("period-negative", tab(0, period=-1), "period", ["> 0"], table="orders"),
    Bad("phase-negative", tab(0, phase=-1), "phase", [">= 0"], table="orders"),
    Bad("phase-on-derived-table", tab(2, phase=3), "phase", ["period"], table="summary"),
    Bad("alpha-negative", tab(0, alpha=-1), "alpha", [">= 0"], table="orders"),
    Bad("beta-negative", tab(1, beta=-0.5), "beta", [">= 0"], table="clicks"),
    Bad("alpha-and-beta-both-zero", tab(2, alpha=0, beta=0), "alpha", ["both", "beta"], table="summary"),
    Bad("priority-zero", tab(0, priority=0), "priority", ["> 0"], table="orders"),
    Bad("priority-negative", tab(1, priority=-2), "priority", ["> 0"], table="clicks"),
    Bad("chop-table-below-one", tab(0, chop=0.5), "chop", [">= 1"], table="orders"),
    Bad("chop-table-zero", tab(1, chop=0), "chop", [">= 1"], table="clicks"),
    Bad("min-separation-negative", tab(0, min_separation=-1), "min_separation", [">= 0"], table="orders"),
    Bad("initial-freshness-positive", tab(0, initial_freshness=1), "initial_freshness", ["<= 0"], table="orders"),
    Bad(
        "initial-freshness-derived-ahead-of-sources",
        chain(tab(0, initial_freshness=-10), tab(1, initial_freshness=-5), tab(2, initial_freshness=-2)),
        "initial_freshness",
        ["<= ", "-10"],
        table="summary",
    ),
    Bad("nominal-period-zero", tab(1, nominal_period=0), "nominal_period", ["> 0"], table="clicks"),
    Bad("nominal-period-negative", tab(1, nominal_period=-8), "nominal_period", ["> 0"], table="clicks"),
    Bad("nominal-period-on-periodic-table", tab(0, nominal_period=5), "nominal_period", ["arrivals"], table="orders"),
    # -- replayed arrivals ----------------------------------------------------------------
    Bad("arrivals-decreasing-times", tab(1, arrivals=[[5, 5], [3, 3]]), "arrivals", ["increase"], table="clicks"),
    Bad("arrivals-repeated-time", tab(1, arrivals=[[5, 5], [5, 5]]), "arrivals", ["increase"], table="clicks"),
    Bad("arrivals-data-to-after-time", tab(1, arrivals=[[5, 6]]), "arrivals", ["<= 5"], table="clicks"),
    Bad("arrivals-decreasing-data-to", tab(1, arrivals=[[5, 5], [10, 4]]), "arrivals", ["decrease"], table="clicks"),
    Bad("arrivals-negative-time", tab(1, arrivals=[[-1, -2]]), "arrivals", [">= 0"], table="clicks"),
    Bad("arrivals-pair-too-short", tab(1, arrivals=[[5]]), "arrivals", ["pair"], table="clicks"),
    Bad("arrivals-pair-too-long", tab(1, arrivals=[[5, 5, 5]]), "arrivals", ["pair"], table="clicks"),
    Bad("arrivals-neither-time-nor-pair", tab(1, arrivals=["soon"]), "arrivals", ["pair"], table="clicks"),
    Bad("arrivals-pair-of-strings", tab(1, arrivals=[["a", 1]]), "arrivals", ["number"], table="clicks"),
    Bad("arrivals-not-a-list", tab(1, arrivals="often"), "arrivals", ["list"], table="clicks"),
    Bad("arrivals-empty", tab(1, arrivals=[]), "arrivals", ["empty"], table="clicks"),
    # -- the view DAG ---------------------------------------------------------------------
    Bad("unknown-source", tab(2, sources=["orders", "nowhere"]), "sources", ["unknown", "nowhere"], table="summary"),
    Bad("source-listed-twice", tab(2, sources=["orders", "orders"]), "sources", ["more than once"], table="summary"),
    Bad(
        "cycle-of-two",
        tables(ORDERS, view("view_p", "orders", "view_q"), view("view_q", "view_p")),
        "sources",
        ["cycle"],
        names=["view_p", "view_q"],
    ),
    Bad(
        "cycle-of-three",
        tables(ORDERS, view("view_p", "view_r"), view("view_q", "view_p"), view("view_r", "orders", "view_q")),
        "sources",
        ["cycle"],
        names=["view_p", "view_q", "view_r"],
    ),
    Bad("cycle-self-loop", tables(ORDERS, view("v", "v")), "sources", ["cycle"], table="v"),
    Bad("cycle-table-name-with-a-newline", tables(ORDERS, view("x\ny", "x\ny")), "sources", ["cycle"]),
    # -- global ranges --------------------------------------------------------------------
    Bad("tracks-zero", top(tracks=0), "tracks", [">= 1"]),
    Bad("tracks-negative", top(tracks=-3), "tracks", [">= 1"]),
    Bad("tracks-option-zero", lambda w: None, "tracks", [">= 1"], args=["--tracks", "0"]),
    Bad("tracks-option-negative", lambda w: None, "tracks", [">= 1"], args=["--tracks", "-1"]),
    Bad("horizon-zero", top(horizon=0), "horizon", ["> 0"]),
    Bad("horizon-negative", top(horizon=-5), "horizon", ["> 0"]),
    Bad("horizon-option-zero", lambda w: None, "horizon", ["> 0"], args=["--horizon", "0"]),
    Bad("horizon-option-negative", lambda w: None, "horizon", ["> 0"], args=["--horizon", "-1"]),
    Bad("horizon-option-nan", lambda w: None, "horizon", ["finite"], args=["--horizon", "nan"]),
    Bad("horizon-option-inf", lambda w: None, "horizon", ["finite"], args=["--horizon", "inf"]),
    Bad("seed-negative", top(seed=-1), "seed", [">= 0"]),
    Bad("seed-option-negative", lambda w: None, "seed", [">= 0"], args=["--seed", "-1"]),
    Bad("warmup-equal-to-horizon", top(warmup=100), "warmup", ["< 100"]),
    Bad("warmup-beyond-horizon", top(warmup=150), "warmup", ["< 100"]),
    Bad("warmup-negative", top(warmup=-1), "warmup", [">= 0"]),
    Bad("warmup-beyond-overridden-horizon", top(warmup=50), "warmup", ["< 40"], args=["--horizon", "40"]),
    Bad("variability-negative", top(variability=-0.1), "variability", [">= 0"]),
    Bad("chop-global-below-one", top(chop=0.5), "chop", [">= 1"]),
    Bad("chop-global-zero", top(chop=0), "chop", [">= 1"]),
    Bad("slowdown-factor-zero", top(slowdown={"factor": 0, "normal": 10, "slow": 5}), "factor", ["> 0"]),
    Bad("slowdown-factor-negative", top(slowdown={"factor": -2, "normal": 10, "slow": 5}), "factor", ["> 0"]),
    Bad("slowdown-normal-negative", top(slowdown={"factor": 2, "normal": -1, "slow": 5}), "normal", [">= 0"]),
    Bad("slowdown-slow-negative", top(slowdown={"factor": 2, "normal": 10, "slow": -5}), "slow", [">= 0"]),
    Bad("slowdown-normal-and-slow-zero", top(slowdown={"factor": 2, "normal": 0, "slow": 0}), "slowdown", ["both"]),
    # -- policies -------------------------------------------------------------------------
    Bad("unknown-policy", lambda w: None, "policy", ["unknown", "nope"], policy="nope"),
    Bad(
        "edf-needs-nominal-period",
        drop(1, "nominal_period"),
        "nominal_period",
        ["edf", "period"],
        table="clicks",
        policy="edf",
    ),
    Bad(
        "chop-needs-nominal-period",
        chain(drop(1, "nominal_period"), top(chop=2)),
        "chop",
        ["period"],
        table="clicks",
    ),
    # -- command-line options -------------------------------------------------------------
    Bad("tracks-option-not-an-int", lambda w: None, "--tracks", ["invalid"], args=["--tracks", "two"]),
    Bad("seed-option-not-an-int", lambda w: None, "--seed", ["invalid"], args=["--seed", "1.5"]),
    Bad("horizon-option-not-a-number", lambda w: None, "--horizon", ["invalid"], args=["--horizon", "later"]),
]


def _materialise(case: Bad, tmp_path: Path) -> Path:
    path = tmp_path / ("no-such-workload.yaml" if case.content is None else f"workload{case.suffix}")
    if case.content is None:
        return path
    if isinstance(case.content, bytes):
        path.write_bytes(case.content)
        return path
    if isinstance(case.content, str):
        return write_workload(path, case.content)
    data = copy.deepcopy(BASE)
    case.content(data)
    return write_workload(path, data)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], case: Bad) -> str:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    assert proc.returncode == 2, f"exit {proc.returncode}, stderr: {proc.stderr!r}"
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}: {proc.stderr!r}"
    line = lines[0]
    assert case.field in line, f"field {case.field!r} not named in {line!r}"
    if case.table is not None:
        assert has_word(line, case.table), f"table {case.table!r} not named in {line!r}"
    for name in case.names:
        assert has_word(line, name), f"{name!r} not named in {line!r}"
    for fragment in case.rule:
        assert fragment.lower() in line.lower(), f"rule fragment {fragment!r} not in {line!r}"
    return line


@dataclass
class BadRun:
    proc: subprocess.CompletedProcess[str]
    trace_out: Path | None


def _run_bad(case: Bad, command: str, where: Path) -> BadRun:
    path = _materialise(case, where)
    if command == "validate":
        return BadRun(run_cli("validate", path), None)
    out = where / "trace-out"
    return BadRun(run_cli("simulate", path, "--policy", case.policy, *case.args, "--trace-out", out), out)


@pytest.fixture(scope="module")
def bad_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], BadRun]:
    """Every selected bad-input run, started up front a few at a time (each is a real process
    on real files; running them side by side only saves wall-clock time)."""
    wanted = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or getattr(item, "originalname", "") not in _BAD_TESTS:
            continue
        wanted.append((_BAD_TESTS[item.originalname], callspec.params["case"]))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        futures = {
            (command, case.id): pool.submit(_run_bad, case, command, tmp_path_factory.mktemp(f"{command}-{case.id}"))
            for command, case in wanted
        }
        return {key: future.result() for key, future in futures.items()}


@pytest.mark.parametrize("case", [c.param() for c in BAD])
def test_simulate_rejects_bad_input(case: Bad, bad_runs: dict[tuple[str, str], BadRun]) -> None:
    run = bad_runs[("simulate", case.id)]
    assert_one_line_error(run.proc, case)
    out = run.trace_out
    assert out is not None
    assert not out.exists() or not any(out.iterdir()), f"files written under --trace-out: {list(out.iterdir())}"
    assert run.proc.stdout == ""


#: Workload-file faults must be reported the same way by ``validate``.
VALIDATE_IDS = {
    "missing-file", "unparseable-yaml", "not-utf8-file", "unknown-field-with-a-newline", "empty-file", "not-a-mapping-list", "not-a-mapping-scalar-int",
    "missing-tracks", "table-missing-name", "unknown-table-field", "unknown-slowdown-field", "tracks-true",
    "period-quoted-string", "horizon-yaml-nan", "horizon-json-nan", "tables-empty", "duplicate-table-names",
    "period-and-sources", "period-zero", "alpha-and-beta-both-zero", "unknown-source", "cycle-of-three",
    "cycle-self-loop", "tracks-zero", "warmup-equal-to-horizon", "arrivals-decreasing-data-to",
    "initial-freshness-derived-ahead-of-sources", "slowdown-factor-zero",
}


@pytest.mark.parametrize("case", [c.param() for c in BAD if c.id in VALIDATE_IDS])
def test_validate_rejects_bad_input(case: Bad, bad_runs: dict[tuple[str, str], BadRun]) -> None:
    run = bad_runs[("validate", case.id)]
    assert_one_line_error(run.proc, case)
    assert run.proc.stdout == ""


_BAD_TESTS = {"test_simulate_rejects_bad_input": "simulate", "test_validate_rejects_bad_input": "validate"}


def test_bad_input_cases_are_all_distinct() -> None:
    ids = [c.id for c in BAD]
    assert len(ids) == len(set(ids))
    assert VALIDATE_IDS <= set(ids)


def test_the_base_workload_itself_is_valid(tmp_path: Path) -> None:
    """Guards the bad-input cases: each one breaks a valid workload in exactly one place."""
    path = write_workload(tmp_path / "workload.yaml", BASE)
    for text in (_base_text(), _table_text()):
        other = write_workload(tmp_path / "text.yaml", text)
        assert load_workload(other) == load_workload(path)
    json_path = write_workload(tmp_path / "workload.json", JSON_BASE)
    assert load_workload(json_path) == load_workload(path)
    proc = run_cli("simulate", path, "--policy", "fifo", "--trace-out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------------------------
# simulate --json
# --------------------------------------------------------------------------------------------
@pytest.fixture
def example(tmp_path: Path) -> Path:
    return write_workload(tmp_path / "example.yaml", EXAMPLE_YAML)


@pytest.mark.parametrize("policy", POLICIES)
def test_simulate_json_has_the_documented_keys(policy: str, tmp_path: Path) -> None:
    path = write_workload(tmp_path / "base.yaml", BASE)
    proc = run_cli("simulate", path, "--policy", policy, "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, "--json prints one JSON object on one line"
    summary = json.loads(lines[0])
    assert isinstance(summary, dict)
    assert SUMMARY_KEYS <= set(summary)
    assert summary["policy"] == policy
    assert summary["horizon"] == 100
    assert summary["seed"] == 0
    assert summary["version"] == staleness_lab.__version__
    assert isinstance(summary["jobs"], int) and not isinstance(summary["jobs"], bool)
    assert summary["jobs"] > 0
    assert isinstance(summary["events"], int) and summary["events"] > 0
    assert math.isfinite(summary["total_weighted_staleness"])
    assert [t["table"] for t in summary["tables"]] == ["orders", "clicks", "summary"]
    for row in summary["tables"]:
        assert TABLE_KEYS <= set(row)
        assert isinstance(row["updates"], int)
        assert row["max_staleness"] >= row["mean_staleness"] >= 0
    assert [t["priority"] for t in summary["tables"]] == [1, 2, 1]


def test_simulate_json_is_deterministic(tmp_path: Path) -> None:
    path = write_workload(tmp_path / "noisy.yaml", NOISY)
    for policy in ("random", "max-benefit"):
        first = run_cli("simulate", path, "--policy", policy, "--json")
        second = run_cli("simulate", path, "--policy", policy, "--json")
        assert first.returncode == second.returncode == 0, first.stderr + second.stderr
        assert first.stdout == second.stdout
        json.loads(first.stdout)


def test_simulate_json_for_the_issue_example(example: Path) -> None:
    summary = simulate_json(example, "--policy", "fifo")
    assert summary["horizon"] == 100 and summary["seed"] == 0
    assert [t["table"] for t in summary["tables"]] == ["a", "v"]
    assert summary["jobs"] == sum(t["updates"] for t in summary["tables"])


def test_a_json_workload_file_simulates_like_the_yaml_one(tmp_path: Path) -> None:
    yaml_path = write_workload(tmp_path / "w.yaml", BASE)
    json_path = write_workload(tmp_path / "w.json", BASE)
    assert simulate_json(yaml_path, "--policy", "edf") == simulate_json(json_path, "--policy", "edf")


@pytest.mark.parametrize(
    ("option", "key", "value"),
    [
        pytest.param("--tracks", "tracks", 1, id="tracks"),
        pytest.param("--horizon", "horizon", 60, id="horizon"),
        pytest.param("--seed", "seed", 7, id="seed"),
    ],
)
def test_options_override_the_file(option: str, key: str, value: int, tmp_path: Path) -> None:
    path = write_workload(tmp_path / "noisy.yaml", NOISY)
    edited = write_workload(tmp_path / "edited.yaml", with_changes(NOISY, **{key: value}))
    overridden = simulate_json(path, "--policy", "random", option, str(value))
    assert overridden[key] == value
    # the override gives exactly the run of a file that says so ...
    assert overridden == simulate_json(edited, "--policy", "random")
    # ... which is not the run of the file as it stands
    assert overridden != simulate_json(path, "--policy", "random")


def test_all_options_override_together(tmp_path: Path) -> None:
    path = write_workload(tmp_path / "noisy.yaml", NOISY)
    edited = write_workload(tmp_path / "edited.yaml", with_changes(NOISY, tracks=3, horizon=150, seed=11))
    overridden = simulate_json(path, "--policy", "max-benefit", "--tracks", "3", "--horizon", "150", "--seed", "11")
    assert (overridden["tracks"], overridden["horizon"], overridden["seed"]) == (3, 150, 11)
    assert overridden == simulate_json(edited, "--policy", "max-benefit")


def test_a_shorter_horizon_runs_fewer_jobs(example: Path) -> None:
    full = simulate_json(example, "--policy", "fifo")
    short = simulate_json(example, "--policy", "fifo", "--horizon", "50")
    assert short["horizon"] == 50
    assert short["jobs"] < full["jobs"]


# --------------------------------------------------------------------------------------------
# --trace-out
# --------------------------------------------------------------------------------------------
def _metadata(path: Path) -> dict[str, str]:
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if k.startswith(b"staleness_lab.")}


@pytest.mark.parametrize(
    ("extra", "overrides"),
    [
        pytest.param([], {}, id="as-in-file"),
        pytest.param(["--seed", "5", "--tracks", "3", "--horizon", "120"], {"seed": 5, "tracks": 3, "horizon": 120}, id="overridden"),
    ],
)
def test_trace_out_writes_parquet_with_provenance(extra: list[str], overrides: dict[str, Any], tmp_path: Path) -> None:
    path = write_workload(tmp_path / "noisy.yaml", NOISY)
    out = tmp_path / "traces" / "run1"
    proc = run_cli("simulate", path, "--policy", "random", "--json", "--trace-out", out, *extra)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)

    assert sorted(p.name for p in out.iterdir()) == ["freshness.parquet", "jobs.parquet"]
    jobs = pd.read_parquet(out / "jobs.parquet")
    freshness = pd.read_parquet(out / "freshness.parquet")
    assert len(jobs) == summary["jobs"]
    assert len(freshness) > 0
    assert set(jobs["table"].astype(str)) <= {t["name"] for t in NOISY["tables"]}

    expected_digest = load_workload(path).with_overrides(**overrides).digest()
    seed = overrides.get("seed", NOISY["seed"])
    for name in ("jobs.parquet", "freshness.parquet"):
        meta = _metadata(out / name)
        assert meta.get("staleness_lab.workload_sha256") == expected_digest, name
        assert re.fullmatch(r"[0-9a-f]{64}", meta["staleness_lab.workload_sha256"])
        assert meta.get("staleness_lab.seed") == str(seed), name
        assert meta.get("staleness_lab.version") == staleness_lab.__version__, name
    if overrides:
        assert expected_digest != load_workload(path).digest()


@pytest.mark.parametrize("target", ["existing-file", "existing-file/sub"], ids=["is-a-file", "under-a-file"])
def test_trace_out_that_cannot_be_a_directory_is_bad_input(target: str, tmp_path: Path) -> None:
    path = write_workload(tmp_path / "base.yaml", BASE)
    blocker = tmp_path / "existing-file"
    blocker.write_text("keep me", encoding="utf-8")
    proc = run_cli("simulate", path, "--policy", "fifo", "--trace-out", tmp_path / target)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "trace-out" in lines[0] or "existing-file" in lines[0]
    assert blocker.read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.yaml", "existing-file"]


def test_trace_out_is_deterministic(tmp_path: Path) -> None:
    path = write_workload(tmp_path / "noisy.yaml", NOISY)
    frames = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        proc = run_cli("simulate", path, "--policy", "random", "--trace-out", out)
        assert proc.returncode == 0, proc.stderr
        frames.append((pd.read_parquet(out / "jobs.parquet"), pd.read_parquet(out / "freshness.parquet")))
    pd.testing.assert_frame_equal(frames[0][0], frames[1][0])
    pd.testing.assert_frame_equal(frames[0][1], frames[1][1])


# --------------------------------------------------------------------------------------------
# readable output, validate, policies
# --------------------------------------------------------------------------------------------
def test_readable_output_names_every_table(tmp_path: Path) -> None:
    path = write_workload(tmp_path / "base.yaml", BASE)
    proc = run_cli("simulate", path, "--policy", "edf-p")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    for name in ("orders", "clicks", "summary"):
        assert has_word(proc.stdout, name)
    assert "edf-p" in proc.stdout
    with pytest.raises(json.JSONDecodeError):
        json.loads(proc.stdout)


def _line_for(output: str, table: str) -> str:
    lines = [line for line in output.splitlines() if has_word(line, table)]
    assert len(lines) == 1, f"expected one line for table {table!r} in:\n{output}"
    return lines[0]


def _total_line(output: str) -> str:
    lines = [line for line in output.splitlines() if "total" in line.lower()]
    assert len(lines) == 1, f"expected one total line in:\n{output}"
    return lines[0]


def _mentions(line: str, value: float) -> bool:
    return any(math.isclose(n, value, abs_tol=5e-4) for n in numbers_in(line))


def test_validate_prints_per_table_utilization_for_the_example(example: Path) -> None:
    proc = run_cli("validate", example)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    # a: E(10)/10 = (1 + 0.1*10)/10 = 0.2; v: derived, period 10 from a, so also 0.2
    assert _mentions(_line_for(proc.stdout, "a"), 0.2)
    assert _mentions(_line_for(proc.stdout, "v"), 0.2)
    total = _total_line(proc.stdout)
    assert _mentions(total, 0.4)
    assert "track" in total and _mentions(total, 2)


def test_validate_prints_per_table_utilization_for_every_kind(tmp_path: Path) -> None:
    path = write_workload(tmp_path / "base.yaml", BASE)
    proc = run_cli("validate", path)
    assert proc.returncode == 0, proc.stderr
    expected = {
        "orders": (1 + 0.1 * 10) / 10,  # periodic
        "clicks": (0.5 + 0.2 * 8) / 8,  # replayed, nominal period 8
        "summary": (1 + 0.1 * 10) / 10,  # derived: largest ancestor period, 10
    }
    for name, util in expected.items():
        assert _mentions(_line_for(proc.stdout, name), util), (name, util)
    assert _mentions(_total_line(proc.stdout), sum(expected.values()))


def test_validate_accepts_a_replayed_table_without_a_period(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    del data["tables"][1]["nominal_period"]
    proc = run_cli("validate", write_workload(tmp_path / "w.yaml", data))
    assert proc.returncode == 0, proc.stderr
    assert _mentions(_line_for(proc.stdout, "orders"), 0.2)
    assert _total_line(proc.stdout)


def test_validate_reads_json(tmp_path: Path) -> None:
    proc = run_cli("validate", write_workload(tmp_path / "w.json", BASE))
    assert proc.returncode == 0, proc.stderr
    assert _mentions(_line_for(proc.stdout, "clicks"), 0.2625)


def test_policies_lists_the_baselines() -> None:
    proc = run_cli("policies")
    assert proc.returncode == 0, proc.stderr
    listed = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    assert set(POLICIES) <= listed


def test_every_listed_policy_simulates(tmp_path: Path) -> None:
    """Every policy runs the example workload, given a freshness target on one table (target-lag
    refreshes only toward targets; the others ignore them)."""
    proc = run_cli("policies")
    workload = copy.deepcopy(BASE)
    workload["tables"][0]["target_lag"] = 30
    path = write_workload(tmp_path / "base.yaml", workload)
    for name in (line.split()[0] for line in proc.stdout.splitlines() if line.strip() and not line[0].isspace()):
        result = run_cli("simulate", path, "--policy", name, "--json")
        assert result.returncode == 0, (name, result.stderr)
        assert json.loads(result.stdout)["policy"] == name


def test_bench_passes_its_options_through() -> None:
    """``staleness-lab bench --out F`` reaches the benchmark's own parser (a leading option used to
    be taken for the CLI's and refused); a bad one is refused there, before any case runs."""
    done = subprocess.run([str(CLI), "bench", "--repeats", "0"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--repeats must be at least 1" in done.stderr
    assert "unrecognized arguments" not in done.stderr
