"""The strict document loader: hostile YAML and JSON end in one InputError, fast and small.

Alias bombs, deep nesting, overlong integers, duplicate keys, lone surrogates, oversized files
and FIFOs -- each through the API and, for the worst, through the real ``staleness-lab``
process under a memory limit: exit 2, one line on stderr, no traceback.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from staleness_lab import InputError, load_workload, parse_workload
from staleness_lab.model.documents import MAX_BYTES, MAX_DEPTH, MAX_NODES, load_document, parse_document_text
from staleness_lab.sweeps.sweep import load_grid
from example_workloads import BASE, EXAMPLE_YAML

CLI = Path(sys.executable).parent / "staleness-lab"
MEMORY_LIMIT = 2 << 30  # bytes of address space for the CLI processes

#: 9 levels of 9 aliases under ``tracks``: 9**9 (387 million) "lol"s once expanded, in under
#: 1 KB. Loaded naively, the error message's repr of the value expands it all.
BILLION_LAUGHS = "".join(
    [
        "tracks:\n",
        '  - &lol0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n',
        *(f"  - &lol{k} [{', '.join([f'*lol{k - 1}'] * 9)}]\n" for k in range(1, 9)),
        "horizon: 100\n",
        "tables: [{name: a, period: 10, alpha: 1, beta: 0.1, priority: 1}]\n",
    ]
)

#: The same through merge keys: each mapping merges nine copies of the one before.
MERGE_BOMB = "m0: &m0 {a: 1, b: 2}\n" + "".join(
    f"m{k}: &m{k} {{<<: [{', '.join([f'*m{k - 1}'] * 9)}], k{k}: 1}}\n" for k in range(1, 12)
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def parse(text: str, *, json_syntax: bool = False) -> dict:
    return parse_document_text(text, json_syntax=json_syntax, field="doc", what="workload")


def nested(levels: int, *, json_syntax: bool) -> str:
    """A mapping holding lists nested so that the document is ``levels`` deep."""
    inner = "[" * (levels - 1) + "]" * (levels - 1)
    return f'{{"a": {inner}}}' if json_syntax else f"a: {inner}\n"


def limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_MASTER"}
    return subprocess.run(
        [str(CLI), *map(str, args)], capture_output=True, text=True, timeout=20, cwd=cwd, env=env,
        preexec_fn=limited_memory,
    )


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("staleness-lab: error: ")
    return lines[0]


# -- alias bombs -------------------------------------------------------------------------------
def test_billion_laughs_workload_through_the_cli(tmp_path: Path) -> None:
    path = write(tmp_path / "lol.yaml", BILLION_LAUGHS)
    assert path.stat().st_size < 1024
    line = one_error_line(run_cli("validate", path, cwd=tmp_path))
    assert "alias *lol" in line and f"{MAX_NODES:,}" in line


def test_billion_laughs_grid_through_the_cli(tmp_path: Path) -> None:
    grid = write(tmp_path / "grid.yaml", BILLION_LAUGHS.replace("tracks:", "policy:"))
    out = tmp_path / "out" / "r.parquet"
    proc = run_cli(
        "sweep", "baseline-utilization", "--grid", grid, "--runner", "local", "--out", out, "--cache", tmp_path / "cache",
        cwd=tmp_path,
    )
    line = one_error_line(proc)
    assert "alias *lol" in line and f"{MAX_NODES:,}" in line
    assert proc.stdout == ""
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_billion_laughs_through_the_api_is_refused_at_once(tmp_path: Path) -> None:
    path = write(tmp_path / "lol.yaml", BILLION_LAUGHS)
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert time.perf_counter() - start < 1
    assert info.value.field.startswith("tracks[")  # where the expansion overflows
    assert "alias *lol" in info.value.rule and "line" in info.value.rule


def test_merge_key_bomb_is_refused_at_once() -> None:
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        parse(MERGE_BOMB)
    assert time.perf_counter() - start < 1
    assert "<<" in info.value.field and "alias *m" in info.value.rule


def test_recursive_alias_is_refused() -> None:
    with pytest.raises(InputError) as info:
        parse("a: &loop [1, *loop]\n")
    assert info.value.field == "a[1]"
    assert "recursive" in info.value.rule


def test_legitimate_anchors_aliases_and_merges_load(tmp_path: Path) -> None:
    text = (
        "tracks: 2\nhorizon: 100\nseed: 0\n"
        "costs: &costs {alpha: 1, beta: 0.1}\n"
        "tables:\n"
        "  - {name: a, period: &p 10, phase: 0, priority: 1, <<: *costs}\n"
        "  - {name: v, sources: [a], priority: 1, <<: *costs, beta: 0.1}\n"
        "  - {name: b, period: *p, priority: 2, <<: *costs}\n"
    )
    data = load_document(write(tmp_path / "w.yaml", text), what="workload")
    del data["costs"]
    assert data["tables"][2] == {"name": "b", "period": 10, "priority": 2, "alpha": 1, "beta": 0.1}
    w = parse_workload(data)
    assert [t.name for t in w.tables] == ["a", "v", "b"]
    example = load_workload(write(tmp_path / "example.yaml", EXAMPLE_YAML))
    assert w.tables[:2] == example.tables


def test_expanded_node_count_is_limited_without_aliases_too() -> None:
    with pytest.raises(InputError) as info:
        parse(json.dumps({"a": [0.5] * MAX_NODES}), json_syntax=True)
    assert f"{MAX_NODES:,}" in info.value.rule


# -- depth -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "json_syntax"),
    [
        pytest.param("a: " + "[" * 1000 + "]" * 1000 + "\n", False, id="yaml-flow"),
        pytest.param("".join("  " * k + f"k{k}:\n" for k in range(1000)), False, id="yaml-block"),
        pytest.param('{"a": ' + "[" * 1000 + "]" * 1000 + "}", True, id="json"),
        pytest.param('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", True, id="json-100k"),
    ],
)
def test_nesting_1000_deep_is_refused(text: str, json_syntax: bool) -> None:
    with pytest.raises(InputError) as info:
        parse(text, json_syntax=json_syntax)
    assert f"more than {MAX_DEPTH} levels" in info.value.rule
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("json_syntax", [False, True], ids=["yaml", "json"])
def test_depth_limit_is_exact(json_syntax: bool) -> None:
    data = parse(nested(MAX_DEPTH, json_syntax=json_syntax), json_syntax=json_syntax)
    depth, value = 2, data["a"]
    while value:
        depth, value = depth + 1, value[0]
    assert depth == MAX_DEPTH
    with pytest.raises(InputError) as info:
        parse(nested(MAX_DEPTH + 1, json_syntax=json_syntax), json_syntax=json_syntax)
    assert info.value.field == "a" + "[0]" * (MAX_DEPTH - 1)
    assert f"more than {MAX_DEPTH} levels" in info.value.rule


def test_depth_through_an_alias_counts_from_where_it_is_inserted() -> None:
    deep = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert parse(f"a: &deep {deep}\nb: *deep\n")["b"] == parse(f"a: {deep}\n")["a"]
    with pytest.raises(InputError) as info:
        parse(f"a: &deep {deep}\nb: [*deep]\n")
    assert info.value.field == "b[0]"
    assert "alias *deep" in info.value.rule and f"{MAX_DEPTH} levels" in info.value.rule


# -- numbers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("digits", [400, 5000])
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_overlong_integers_name_their_field(digits: int, suffix: str, tmp_path: Path) -> None:
    data = json.loads(json.dumps(BASE))
    text = json.dumps(data).replace('"period": 10', f'"period": {"9" * digits}')
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        load_workload(write(tmp_path / f"w{suffix}", text))
    assert time.perf_counter() - start < 1
    assert info.value.field == "tables[0].period"
    assert info.value.rule.startswith(f"integer with {digits} digits is beyond the float range")


def test_integers_are_limited_to_the_float_range() -> None:
    largest = int(sys.float_info.max)
    assert parse(f"n: {largest}\nm: -{largest}\n") == {"n": largest, "m": -largest}
    with pytest.raises(InputError) as info:
        parse(f'{{"x": {{"n": {largest + 1}}}}}', json_syntax=True)
    assert info.value.field == "x.n"
    assert "309 digits" in info.value.rule


def test_non_finite_floats_pass_this_layer() -> None:
    data = parse("a: .inf\nb: -.inf\nc: .nan\nd: 1.0e+999\n")
    assert data["a"] == data["d"] == math.inf and data["b"] == -math.inf and math.isnan(data["c"])
    data = parse('{"a": Infinity, "b": NaN}', json_syntax=True)
    assert data["a"] == math.inf and math.isnan(data["b"])


# -- duplicate keys ----------------------------------------------------------------------------
def test_duplicate_yaml_key_names_key_and_line(tmp_path: Path) -> None:
    text = EXAMPLE_YAML.replace("    period: 10\n", "    period: -10\n    period: 10\n")
    with pytest.raises(InputError) as info:
        load_workload(write(tmp_path / "w.yaml", text))
    assert info.value.field == "tables[0]"
    assert info.value.rule == "duplicate key 'period' at line 7"


def test_duplicate_yaml_keys_spelled_differently() -> None:
    with pytest.raises(InputError) as info:
        parse("a: 1\nb: {1: x, 0x1: y}\n")
    assert (info.value.field, info.value.rule) == ("b", "duplicate key 1 at line 2")


def test_merged_keys_may_be_overridden() -> None:
    assert parse("base: &b {x: 1, y: 2}\nd: {<<: *b, x: 3}\n")["d"] == {"x": 3, "y": 2}
    # the merged node flattened (as a merge source) before its own construction
    data = parse("base: &b {a: 1}\nx: {y: &d {<<: *b, a: 2}}\nz: {<<: *d}\n")
    assert data["x"]["y"] == data["z"] == {"a": 2}


def test_duplicate_json_key_names_key_and_path(tmp_path: Path) -> None:
    text = json.dumps(BASE).replace('"period": 10', '"period": -10, "period": 10')
    with pytest.raises(InputError) as info:
        load_workload(write(tmp_path / "w.json", text))
    assert (info.value.field, info.value.rule) == ("tables[0]", "duplicate key 'period'")


def test_duplicate_grid_key_through_the_cli(tmp_path: Path) -> None:
    grid = write(tmp_path / "grid.yaml", "policy: [edf]\nseed: [0]\npolicy: [fifo]\n")
    with pytest.raises(InputError) as info:
        load_grid(grid)
    assert (info.value.field, info.value.rule) == ("--grid", "duplicate key 'policy' at line 3")
    out = tmp_path / "out" / "r.parquet"
    proc = run_cli(
        "sweep", "baseline-utilization", "--grid", grid, "--runner", "local", "--out", out, "--cache", tmp_path / "cache",
        cwd=tmp_path,
    )
    assert one_error_line(proc) == "staleness-lab: error: --grid: duplicate key 'policy' at line 3"
    assert not (tmp_path / "out").exists()


# -- strings -----------------------------------------------------------------------------------
def test_lone_surrogate_in_a_json_table_name(tmp_path: Path) -> None:
    text = json.dumps(BASE).replace('"name": "orders"', '"name": "ord\\ud800ers"')
    with pytest.raises(InputError) as info:
        load_workload(write(tmp_path / "w.json", text))
    assert info.value.field == "tables[0].name"
    assert "lone surrogate" in info.value.rule
    str(info.value).encode("utf-8")  # printable


def test_lone_surrogate_in_a_json_key() -> None:
    with pytest.raises(InputError) as info:
        parse('{"tables": [{"\\udc00": 1}]}', json_syntax=True)
    assert info.value.field == "tables[0]"
    assert "mapping key" in info.value.rule and "lone surrogate" in info.value.rule


def test_surrogate_pairs_are_fine() -> None:
    assert parse('{"name": "\\ud83d\\ude00"}', json_syntax=True) == {"name": "\U0001F600"}


# -- the file ----------------------------------------------------------------------------------
def test_oversized_file_is_refused_without_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as file:
        file.truncate(17 * 1024 * 1024)  # sparse: no 17 MiB written

    def no_open(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was opened")

    monkeypatch.setattr(os, "open", no_open)
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert info.value.field == str(path)
    assert f"{17 * 1024 * 1024:,} bytes" in info.value.rule and f"{MAX_BYTES:,}" in info.value.rule


def test_file_of_exactly_max_bytes_is_read(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    head = "a: 1\n"
    path.write_text(head + "#" * (MAX_BYTES - len(head)), encoding="utf-8")
    assert load_document(path, what="workload") == {"a": 1}


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "w.yaml"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def load() -> None:
        try:
            load_workload(fifo)
        except BaseException as err:  # noqa: BLE001 -- handed to the test thread
            outcome.append(err)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(timeout=5)
    assert not thread.is_alive(), "reading the FIFO blocked"
    (err,) = outcome
    assert isinstance(err, InputError)
    assert err.field == str(fifo)
    assert "not a regular file" in err.rule


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        pytest.param("a: 2001-13-45\n", "cannot parse the file: month must be in 1..12", id="bad-date"),
        pytest.param("a: 1\n---\nb: 2\n", "cannot parse the file: expected a single document", id="two-documents"),
        pytest.param("a: *nowhere\n", "cannot parse the file: found undefined alias", id="undefined-alias"),
        pytest.param("a: !!int [1]\n", "cannot parse the file: expected a scalar node", id="int-tag-on-a-list"),
        pytest.param("a: !!int 1.5\n", "cannot parse the file: invalid literal for int()", id="int-tag-on-a-float"),
    ],
)
def test_other_yaml_faults_are_parse_errors(text: str, rule: str) -> None:
    with pytest.raises(InputError) as info:
        parse(text)
    assert info.value.field == "doc"
    assert info.value.rule.startswith(rule)


def test_yaml_and_json_give_the_same_data() -> None:
    assert parse(yaml.safe_dump(BASE)) == parse(json.dumps(BASE), json_syntax=True) == BASE
