"""Issue #53's remaining one-line findings, each as a regression test through the command line
(a temporary directory per test; the user's files checked byte for byte afterwards).

* ``simulate --max-events 10^16`` under an address-space limit: the job columns' mapping failed
  with an ``OSError`` traceback; now the memory line.
* a sweep grid of explicit rows (``[{a: 1}, {b: 2}]``): a top-level list was refused without
  naming a row, and ``expand_grid`` turned a list into a dict (a ``ValueError`` traceback, or
  silently wrong rows); now rows are taken and a bad key named with its row.
* names from input files: a query name becomes a path component (a run's partials and results,
  cost models) and is a safe name; a table name never does and is refused only with a NUL or
  past 256 characters.
* a ``--trace-out``/``sweep --out``/``--cache`` write the system refuses (``ulimit -f``): one line
  naming the option, the path and the error, nothing half-written.
* a line break ``str.splitlines`` knows besides ``\\n`` (NEL, U+2028) in a refused key: two lines.
* the CP-SAT planner's model size, and a workflow run's steps, refused before the work.
* SIGINT and SIGTERM during ``tpch generate``: 130 and 143, one line, nothing half-written.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import staleness_lab as sl
from staleness_lab.errors import InputError
from staleness_lab.experiments import get_experiment
from staleness_lab.intermittent import load_queryset
from staleness_lab.optimize.batch_plan import optimal_plan
from staleness_lab.sweeps.registry import experiment, expand_grid
from cli_signals import ended, paused, stopped_by
from test_hostile_inputs import CLI, MEMORY_LIMIT, _env, hidden, one_error_line, run_cli, start_cli

DATA = Path(__file__).resolve().parents[1] / "data"
E5 = DATA / "intermittent" / "e5.yaml"
TPCH13 = DATA / "intermittent" / "tpch13-synthetic.yaml"
DEMO = DATA / "workloads" / "demo.yaml"
EXPERIMENT = "baseline-utilization"


def tree(directory: Path) -> dict[str, bytes | None]:
    """Every entry under ``directory``: a file's bytes, None for a directory."""
    return {str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(directory.rglob("*"))}


def write_yaml(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# simulate --max-events 10^16
# --------------------------------------------------------------------------------------------
def test_max_events_far_above_memory_gives_the_memory_line(tmp_path: Path) -> None:
    """The guard admits 10^11 events when told to; the compiled core's first reservation (5.6 GB
    of columns) is refused under the tests' 2 GiB address space: the memory line, not mmap's
    OSError."""
    path = write_yaml(tmp_path / "w.yaml", {"tracks": 1, "horizon": 1e12, "tables": [
        {"name": "a", "period": 10, "alpha": 1, "beta": 0.1, "priority": 1}]})
    before = tree(tmp_path)
    proc = run_cli("simulate", path, "--policy", "fifo", "--max-events", "10000000000000000", "--trace-out",
                   tmp_path / "trace", cwd=tmp_path)
    assert one_error_line(proc) == ("staleness-lab: error: memory: the run did not fit in this process's memory; "
                                    "lower the horizon or --max-events")
    assert tree(tmp_path) == before


# --------------------------------------------------------------------------------------------
# sweep grids of explicit rows
# --------------------------------------------------------------------------------------------
def test_a_grid_of_rows_with_unknown_keys_names_the_row_and_key(tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text("[{a: 1}, {b: 2}]\n", encoding="utf-8")
    before = tree(tmp_path)
    line = one_error_line(run_cli("sweep", EXPERIMENT, "--runner", "local", "--grid", grid, "--out",
                                  tmp_path / "out.parquet", "--cache", tmp_path / "cache", cwd=tmp_path))
    assert line.startswith("staleness-lab: error: rows[0].a: experiment 'baseline-utilization' takes no parameter 'a'")
    assert tree(tmp_path) == before
    grid.write_text("[{policy: fifo, horizon: 100.0, n_tables: 2}, {seeds: 2}]\n", encoding="utf-8")
    line = one_error_line(run_cli("sweep", EXPERIMENT, "--runner", "local", "--grid", grid, cwd=tmp_path))
    assert line.startswith("staleness-lab: error: rows[1].seeds: ")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out.parquet").exists()


def test_a_grid_of_rows_setting_different_parameters_runs(tmp_path: Path) -> None:
    """Rows may set different parameters (the papers' own explicit grids do); each is completed
    with the defaults."""
    grid = write_yaml(tmp_path / "grid.yaml", [{"policy": "fifo", "horizon": 100.0, "n_tables": 2},
                                               {"seed": 3, "horizon": 120.0, "n_tables": 2}])
    proc = run_cli("sweep", EXPERIMENT, "--runner", "local", "--grid", grid, "--out", tmp_path / "out.parquet",
                   "--cache", tmp_path / "cache", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "out.parquet").drop_duplicates("row")
    assert frame[["policy", "seed", "horizon"]].values.tolist() == [["fifo", 0, 100.0], ["max-benefit", 3, 120.0]]


def test_a_failing_row_with_a_long_value_is_refused_in_one_short_line(tmp_path: Path) -> None:
    """A row the grid admits (``policy`` is any string there) but the experiment refuses: the
    row's message named every parameter in full, 100,000 characters for a long value (found by
    the surfaces fuzz); it is cut like any refusal."""
    grid = write_yaml(tmp_path / "grid.yaml", {"policy": ["fifo" + "x" * 100_000], "fixed": {"horizon": 100.0}})
    line = one_error_line(run_cli("sweep", EXPERIMENT, "--runner", "local", "--grid", grid, "--out",
                                  tmp_path / "out.parquet", "--cache", tmp_path / "cache", cwd=tmp_path))
    assert line.startswith("staleness-lab: error: row 0 {policy: 'fifoxxx") and len(line) <= 2100, len(line)
    assert "characters in all)" in line and not (tmp_path / "out.parquet").exists()


def test_expand_grid_takes_a_list_as_rows_not_as_pairs() -> None:
    exp = get_experiment(EXPERIMENT)
    rows = expand_grid(exp, [{"policy": "edf", "seed": 1}, {"utilization": 0.5, "n_tables": 3}])
    assert [(r["policy"], r["seed"], r["utilization"], r["n_tables"]) for r in rows] == [
        ("edf", 1, 0.9, 12), ("max-benefit", 0, 0.5, 3)]  # was {"policy": "seed", "utilization": "n_tables"}
    with pytest.raises(InputError, match=r"^rows\[0\]\.a: "):
        expand_grid(exp, [{"a": 1}, {"b": 2}])  # was a ValueError from dict()
    with pytest.raises(InputError, match=r"^grid: must be a mapping .* or a list of parameter rows, got int"):
        expand_grid(exp, 5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# names taken from input files
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, rule", [("../x", "starts with '.'"), ("a/../b", "holds '/'"), ("/abs", "holds '/'"), (".hidden", "starts with '.'"),
                                        ("..", "starts with '.'"), ("a\0b", "control character U+0000"),
                                        ("q" * 129, "more than 128"), ("a\\b", "holds '\\\\'")])
def test_a_query_name_is_one_safe_path_component(name: str, rule: str, tmp_path: Path) -> None:
    data = yaml.safe_load(E5.read_text(encoding="utf-8"))
    data["queries"][1]["name"] = name
    path = tmp_path / "qs.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    before = tree(tmp_path)
    line = one_error_line(run_cli("plan", path, "--scheme", "edf", "--out", tmp_path / "plan", cwd=tmp_path))
    assert line.startswith("staleness-lab: error: queries[1].name: ") and rule in line, line
    assert tree(tmp_path) == before


@pytest.mark.parametrize("name, rule", [("a\0b", "NUL"), ("t" * 257, "257 characters, more than 256")])
def test_a_table_name_is_refused_only_with_a_nul_or_past_256_characters(name: str, rule: str,
                                                                         tmp_path: Path) -> None:
    """A table name is shown, never a path: a NUL or an unbounded length is refused; slashes,
    dots and line breaks stay allowed (messages escape them)."""
    path = tmp_path / "w.json"
    table = {"name": name, "period": 10, "alpha": 1, "beta": 0.1, "priority": 1}
    path.write_text(json.dumps({"tracks": 1, "horizon": 100.0, "tables": [table]}), encoding="utf-8")
    for command in (("validate", path), ("simulate", path, "--policy", "fifo")):
        line = one_error_line(run_cli(*command, cwd=tmp_path))
        assert line.startswith("staleness-lab: error: tables[0].name: ") and rule in line, line
    for fine in ("../x", "a\nb", "t" * 256):
        table["name"] = fine
        assert sl.simulate({"tracks": 1, "horizon": 50.0, "tables": [table]}, "fifo").trace.events > 0


def test_an_experiment_name_must_be_a_safe_path_component() -> None:
    """Experiment names come from the code (the command line only looks one up), and name the
    cache's and the results' paths: registering an unsafe one fails."""
    with pytest.raises(ValueError, match="starts with '.'"):
        experiment("../elsewhere")(lambda: None)


# --------------------------------------------------------------------------------------------
# writes the system refuses
# --------------------------------------------------------------------------------------------
def _limited(size: int) -> Any:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead

    return apply


def run_limited(*args: Any, cwd: Path, size: int) -> subprocess.CompletedProcess[str]:
    """The command with files limited to ``size`` bytes (``ulimit -f``). No ENOSPC here: it needs
    a full file system, which cannot be made without mount privileges; both errors take the same
    path (an ``OSError`` from the write)."""
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=_env(), preexec_fn=_limited(size))


def test_trace_out_past_the_file_size_limit_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "trace"
    before = tree(tmp_path)
    line = one_error_line(run_limited("simulate", DEMO, "--policy", "edf", "--trace-out", out, cwd=tmp_path,
                                      size=20_000))
    assert line.startswith(f"staleness-lab: error: --trace-out: {out}: cannot be written (") and "File too large" in line
    assert tree(tmp_path) == before and hidden(tmp_path) == []


def test_trace_out_past_the_limit_keeps_the_earlier_trace(tmp_path: Path) -> None:
    out = tmp_path / "trace"
    assert run_cli("simulate", DEMO, "--policy", "fifo", "--horizon", "50", "--trace-out", out, cwd=tmp_path).returncode == 0
    before = tree(tmp_path)
    one_error_line(run_limited("simulate", DEMO, "--policy", "edf", "--trace-out", out, cwd=tmp_path, size=20_000))
    assert tree(tmp_path) == before


def test_sweep_out_and_cache_past_the_file_size_limit(tmp_path: Path) -> None:
    grid = write_yaml(tmp_path / "grid.yaml", {"policy": ["fifo", "edf"], "fixed": {"horizon": 2000.0}})
    out, cache = tmp_path / "out.parquet", tmp_path / "cache"
    args = ("sweep", EXPERIMENT, "--runner", "local", "--grid", grid, "--out", out, "--cache", cache)
    line = one_error_line(run_limited(*args, cwd=tmp_path, size=4096))  # a cache file is the first write
    assert line.startswith(f"staleness-lab: error: --cache: {cache}/") and "File too large" in line
    assert not out.exists() and all(p.suffix == ".parquet" and not p.name.startswith(".") for p in cache.rglob("*.*"))
    assert run_cli(*args, cwd=tmp_path).returncode == 0  # fills the cache
    out.unlink()
    before = tree(tmp_path)
    line = one_error_line(run_limited(*args, cwd=tmp_path, size=4096))  # rows from the cache: the result fails
    assert line.startswith(f"staleness-lab: error: --out: {out}: cannot be written (") and "File too large" in line
    assert tree(tmp_path) == before and hidden(tmp_path) == []


def test_tpch_generate_past_the_file_size_limit_leaves_nothing(tmp_path: Path) -> None:
    """The generator (a child process, killed by SIGXFSZ: the signal is reset for it) or the
    rewrite of its parts fails: one line, nothing left."""
    out = tmp_path / "gen"
    proc = run_limited("tpch", "generate", "--scale", "0.01", "--parts", "2", "--out", out, cwd=tmp_path, size=200_000)
    line = one_error_line(proc)
    assert line.startswith(("staleness-lab: error: tpchgen-cli: killed by SIGXFSZ",
                            f"staleness-lab: error: --out: {out}: cannot be written (")), line
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# messages: every line break escaped
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("brk", ["\x85", "\u2028", "\x0b", "\x1e"])
def test_a_key_with_a_unicode_line_break_gives_one_line(brk: str, tmp_path: Path) -> None:
    data = yaml.safe_load(E5.read_text(encoding="utf-8"))
    data["queries"][0]["arrivals"][f"x{brk}y"] = 1
    path = tmp_path / "qs.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    line = one_error_line(run_cli("plan", path, "--scheme", "edf", cwd=tmp_path))
    assert line.startswith("staleness-lab: error: queries[0].arrivals.x\\") and len(line.splitlines()) == 1


# --------------------------------------------------------------------------------------------
# size rules before the work
# --------------------------------------------------------------------------------------------
def test_the_optimal_planner_refuses_a_model_too_big_before_building_it(tmp_path: Path) -> None:
    """The 13-query TPC-H set: its first round holds about 300,000 terms (slots from the split
    search's plan, which has the fewest batches; about 950,000 from the best heuristic's), under
    the default of 500,000 but above a limit of 200,000, so it is refused before CP-SAT starts;
    the command is far below the solve's time and memory."""
    proc = run_cli("plan", TPCH13, "--scheme", "optimal", "--max-model-terms", "200000", "--out", tmp_path / "plan",
                   cwd=tmp_path)
    line = one_error_line(proc)
    assert line.startswith("staleness-lab: error: queries: the CP-SAT model would hold about ")
    assert "above the limit of 200,000" in line and "raise it with --max-model-terms" in line
    assert list(tmp_path.iterdir()) == []
    line = one_error_line(run_cli("plan", E5, "--scheme", "optimal", "--max-model-terms", "0", cwd=tmp_path))
    assert line.startswith("staleness-lab: error: --max-model-terms: must be an integer >= 1")


def test_max_model_terms_bounds_every_round() -> None:
    qs = load_queryset(E5)
    with pytest.raises(InputError, match=r"^queries: the CP-SAT model would hold about [\d,]+ terms .*limit of 100 "):
        optimal_plan(qs, max_terms=100)
    plan = optimal_plan(qs, max_terms=5_000, time_limit=5, workers=1)  # E5's first round: under 5,000
    assert plan.status == "ok" and plan.misses == 0
    unlimited = optimal_plan(qs, max_terms=None, time_limit=5, workers=1)  # the experiments' call: no rule
    assert unlimited.status == "ok" and unlimited.misses == 0


def test_a_workflow_run_is_bounded_by_its_steps(tmp_path: Path) -> None:
    """200 weeks of search-preprocessing: 168,000 arrivals (under the arrival rule, which bounds
    validation) times 5 operators, about an hour of run: refused before it starts."""
    wf = DATA / "workflows" / "search-preprocessing.yaml"
    line = one_error_line(run_cli("workflow", "run", wf, "--horizon", "200w", "--trace-out", tmp_path / "t",
                                  cwd=tmp_path))
    assert line.startswith("staleness-lab: error: --horizon: 1.68e+05 input arrivals over horizon 33600 h times 5 "
                           "operators give 8.4e+05 run steps, above the limit of 500,000 (raise it with "
                           "--max-run-steps)"), line
    line = one_error_line(run_cli("workflow", "run", DATA / "workflows" / "olston-example.yaml", "--max-run-steps", "3",
                                  cwd=tmp_path))
    assert line.startswith("staleness-lab: error: operators: 9 input arrivals") and "--max-run-steps" in line
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# signals during tpch generate
# --------------------------------------------------------------------------------------------
#: Measured 0.5-1.0 s from the signal to the exit (the generator child is killed, the temporary
#: directory removed); ten times the slowest, and more for a loaded machine.
STOPPED_WITHIN = 15.0


def _generating(directory: Path) -> bool:
    """The generator's raw files are in the hidden temporary directory: the rewrite, the manifest
    and the swap into place are all still to come (the raw files go just before the manifest)."""
    return any(p.name.startswith(".gen.") and p.name.endswith(".tmp") and (p / ".raw").exists()
               for p in directory.iterdir())


@pytest.mark.parametrize("sig, earlier", [(signal.SIGINT, False), (signal.SIGTERM, True)],
                         ids=["SIGINT-new", "SIGTERM-over-an-earlier-generation"])
def test_a_signal_during_tpch_generate_leaves_nothing_half_written(sig: signal.Signals, earlier: bool,
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "gen"
    if earlier:  # a generation of 1 part: replaced by one of 3, or kept as it was
        assert run_cli("tpch", "generate", "--scale", "0.01", "--parts", "1", "--out", out, cwd=tmp_path,
                       timeout=300).returncode == 0
    before = tree(tmp_path)
    with ended(start_cli("tpch", "generate", "--scale", "0.05", "--parts", "3", "--out", out, cwd=tmp_path)) as proc:
        deadline = time.monotonic() + 120
        while not _generating(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert proc.poll() is None, "generated before the signal: use a larger scale"
        # paused where it stands: a signal sent on seeing the raw files could otherwise land after
        # the swap on a loaded machine (exit 143, the new generation rightly in place)
        paused(proc)
        assert _generating(tmp_path), "past the raw files before the pause: use a larger scale"
        assert stopped_by(proc, sig, 60, resume=True) < STOPPED_WITHIN  # the exit status and the one line
    assert tree(tmp_path) == before  # no manifest claiming completeness, no temporary directory
    assert not subprocess.run(["pgrep", "-f", f"tpchgen-cli.*{tmp_path}"], capture_output=True).stdout
    again = run_cli("tpch", "generate", "--scale", "0.05", "--parts", "3", "--out", out, cwd=tmp_path, timeout=300)
    assert again.returncode == 0 and again.stdout.strip() == f"{out}: generated", again.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"] and os.path.isfile(out / "manifest.json")
