"""``staleness-lab sweep``: a named experiment over a grid file, locally or on Spark.

Grid file (YAML)::

    policy: [edf, max-benefit]       # parameter -> list of values (a scalar is one value)
    utilization: [0.5, 0.9, 1.2]
    fixed:                           # optional: shared by every row
      horizon: 2000

Rows are the cartesian product (last key fastest), completed with the experiment's defaults.
A list at the top instead gives explicit rows (``- {policy: edf, seed: 1}``), each completed
with the defaults; a bad key or value is named with its row (``rows[1].seed``).
Every bad input -- a missing or unparseable grid file, a grid that is neither, a key the
experiment does not take, a value of the wrong type, an unknown experiment, no experiment named
without ``--list`` -- fails before any work with one line on stderr and exit status 2.

The result (default ``data/results/<experiment>.parquet`` under the project root from a
checkout, else under the working directory) is written atomically with its provenance in the
Parquet schema metadata (key ``staleness_lab.provenance``: version, git commit, experiment,
grid, seeds, ...), so an interrupted sweep leaves no result file that looks complete; the
per-row cache (``--cache``, default ``data/cache``) keeps every finished row for the rerun.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.model.documents import load_document
from staleness_lab.outputs import writing
from staleness_lab.provenance import provenance_metadata, write_parquet_atomic
from staleness_lab.paths import data_root
from staleness_lab.sweeps.registry import Experiment, expand_grid
from staleness_lab.sweeps.runner import DEFAULT, SweepError, run_sweep
from staleness_lab.tracefiles import check_output_dir, check_output_file


def default_results_path(experiment: str) -> Path:
    """``data/results/<experiment>.parquet`` under the project root (checkout) or the cwd."""
    return data_root() / "data" / "results" / f"{experiment}.parquet"


def load_grid(path: Path) -> dict[str, Any] | list[Any]:
    """The grid of a YAML (or ``.json``) file -- a mapping, or a list of explicit rows
    (:func:`~staleness_lab.sweeps.registry.expand_grid`) -- or an InputError on ``--grid``."""
    return load_document(path, what="grid", field="--grid", lists=True)




def describe(exp: Experiment) -> str:
    """The ``--list`` entry of one experiment: name, summary, one line per parameter."""
    lines = [f"{exp.name}: {exp.doc}" if exp.doc else exp.name]
    width = max((len(p.name) for p in exp.params), default=0)
    dwidth = max((len(repr(p.default)) for p in exp.params), default=0)
    for p in exp.params:
        line = f"    {p.name:<{width}}  {p.type.__name__:<5}  default {p.default!r:<{dwidth}}"
        lines.append(f"{line}  {p.doc}" if p.doc else line.rstrip())
    return "\n".join(lines)


def list_command(experiments: Sequence[Experiment]) -> int:
    """``sweep --list``: the :func:`describe` entry of each experiment; returns the exit status."""
    print("\n\n".join(describe(e) for e in experiments))
    return 0


def sweep_command(
    *,
    experiment: Experiment | None,
    grid: Path | None,
    master: str | None,
    runner: str,
    out: Path | None,
    cache: Path | None,
    use_cache: bool,
) -> int:
    """The ``sweep`` subcommand on the experiment the caller looked up by name (None: none was
    named); returns the exit status (InputError propagates to the CLI)."""
    if experiment is None:
        raise InputError("experiment", "missing: name the experiment to sweep (see `staleness-lab sweep --list`)")
    spec = load_grid(grid) if grid is not None else None
    expand_grid(experiment, spec)  # bad keys and values fail here, before any work
    if master is not None and runner != "spark":
        raise InputError("--master", "applies only with --runner spark")
    out_path = out if out is not None else default_results_path(experiment.name)
    check_output_file(out_path, "--out")
    if cache is not None:
        check_output_dir(cache, "--cache")
    try:
        result = run_sweep(
            experiment, spec, runner=runner, master=master, cache_dir=cache if cache is not None else DEFAULT,
            use_cache=use_cache, progress=sys.stderr.isatty(),
        )
    except SweepError as err:
        if isinstance(err, InputError):
            raise
        if err.remote_traceback:
            print(err.remote_traceback.rstrip(), file=sys.stderr)
        print(f"staleness-lab: error: {err}", file=sys.stderr)
        return 1
    with writing(out_path, "--out"):
        out_path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet_atomic(result.frame, out_path, provenance_metadata(result.provenance_extra()))
    where = f"runner {result.runner}" + (f", master {result.master}" if result.master else "")
    startup = f", Spark start-up {result.spark_startup_seconds:.1f} s" if result.spark_startup_seconds else ""
    print(
        f"{experiment.name}: {result.rows} rows: {result.computed} computed, {result.from_cache} from cache "
        f"({where}) in {result.seconds:.1f} s{startup}"
    )
    print(f"wrote {out_path} ({len(result.frame)} rows x {len(result.frame.columns)} columns)")
    return 0
