"""Every experiment parameter carries its rule (bounds or choices), checked like a workload key.

* each declared bound: the default passes, a value just outside fails with one line naming the
  parameter and the rule, a value on (or just inside) the bound passes;
* every profile's grid of every experiment (the modules' grid builders, and the grids the
  notebooks build themselves) expands without error, so the bounds are generous enough;
* through the real CLI, a bad value fails before any work: exit 2, one stderr line, no file;
* the cross-parameter rules the experiments check themselves raise an InputError naming one
  parameter.
"""

from __future__ import annotations

import ast
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from staleness_lab.errors import InputError
from staleness_lab.experiments import get_experiment, list_experiments
from staleness_lab.experiments import quickstart
from staleness_lab.experiments.bateni import sweeps as bx
from staleness_lab.experiments.golab import sweeps as golab
from staleness_lab.experiments.intermittent import hybrid as xh
from staleness_lab.experiments.intermittent import spark as xs
from staleness_lab.experiments.intermittent import sweeps as ix
from staleness_lab.experiments.olston import sweeps as olston
from staleness_lab.sweeps.registry import Experiment, Param, expand_grid

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).parent / "staleness-lab"
PROFILES = ("quick", "standard", "full")
WORD = {"ge": ">=", "gt": ">", "le": "<="}


def _numeric() -> list[tuple[str, Param]]:
    return [(e.name, p) for e in list_experiments() for p in e.params if p.type in (int, float)]


def _labels() -> list[tuple[str, Param]]:
    return [(e.name, p) for e in list_experiments() for p in e.params if p.type is str and p.choices is not None]


def _outside(p: Param, kind: str, bound: float) -> int | float:
    """The value nearest ``bound`` that breaks it."""
    if p.type is int:
        return {"ge": math.ceil(bound) - 1, "gt": math.floor(bound), "le": math.floor(bound) + 1}[kind]
    return {"ge": math.nextafter(bound, -math.inf), "gt": float(bound), "le": math.nextafter(bound, math.inf)}[kind]


def _inside(p: Param, kind: str, bound: float) -> int | float:
    """The value nearest ``bound`` that keeps it."""
    if p.type is int:
        return {"ge": math.ceil(bound), "gt": math.floor(bound) + 1, "le": math.floor(bound)}[kind]
    return {"ge": float(bound), "gt": math.nextafter(bound, math.inf), "le": float(bound)}[kind]


def test_every_parameter_declares_a_rule() -> None:
    """Numbers are bounded below, labels list their choices (free strings are paths, digests,
    query and heuristic lists checked by the experiment, and the quickstart's policy: the policy registry is
    open to new policies, and an unknown name fails at its row)."""
    free = {(e.name, p.name) for e in list_experiments() for p in e.params if p.type is str and p.choices is None}
    free.discard(("baseline-utilization", "policy"))
    assert all(name in ("costmodels", "fits", "queries", "off", "workflow_sha256") for _, name in free), free
    for exp, p in _numeric():
        assert p.ge is not None or p.gt is not None, f"{exp}.{p.name} has no lower bound"
        if p.name == "seed":
            assert (p.ge, p.le) == (0, 2**63 - 1), exp


@pytest.mark.parametrize(("exp", "param"), _numeric(), ids=[f"{e}.{p.name}" for e, p in _numeric()])
def test_numeric_bounds(exp: str, param: Param) -> None:
    assert param.check(param.default, f"{exp}.{param.name}") == param.default
    for kind in ("ge", "gt", "le"):
        bound = getattr(param, kind)
        if bound is None:
            continue
        param.check(_inside(param, kind, bound), "x")
        with pytest.raises(InputError) as info:
            param.check(_outside(param, kind, bound), f"grid.{param.name}")
        assert info.value.field == f"grid.{param.name}"
        assert str(info.value).startswith(f"grid.{param.name}: must be {WORD[kind]} {_shown(bound)}, got ")
        assert "\n" not in str(info.value)


@pytest.mark.parametrize(("exp", "param"), _labels(), ids=[f"{e}.{p.name}" for e, p in _labels()])
def test_label_choices(exp: str, param: Param) -> None:
    assert param.default in param.choices
    for choice in param.choices:
        assert param.check(choice, "x") == choice
    with pytest.raises(InputError, match=rf"^grid\.{param.name}: must be one of .*, got 'bogus'$"):
        param.check("bogus", f"grid.{param.name}")


def test_choices_are_what_the_code_knows() -> None:
    from staleness_lab.intermittent.dispatch import POLICIES
    from staleness_lab.optimize.staleness_optimum import MAX_UPDATES
    from staleness_lab.spark.intermittent.catalogue import CATALOGUE
    from staleness_lab.spark.intermittent.streaming import TRIGGERS

    def choices(exp: str, name: str) -> tuple[Any, ...]:
        return next(p.choices for p in get_experiment(exp).params if p.name == name)

    assert ix.QUERIES == tuple(ix.paper_queries().names) == xs.ALL_QUERIES == tuple(CATALOGUE)
    assert choices("intermittent-multi", "policy") == POLICIES
    assert choices("intermittent-spark-streaming", "trigger") == TRIGGERS
    assert choices("golab-fig10", "variant") == tuple(golab.FIG10_VARIANTS)
    assert bx.OPT_UPDATES == MAX_UPDATES


# -- every profile's grid passes -------------------------------------------------------------


def _expand(experiment: str, grid: Any) -> int:
    rows = expand_grid(get_experiment(experiment), grid)
    assert rows
    return len(rows)


@pytest.mark.parametrize("profile", PROFILES)
def test_module_grids_expand(profile: str) -> None:
    for name, fig in golab.SWEEPS.items():
        grid = golab.grid(name, profile)
        assert len(expand_grid(get_experiment(fig.experiment), grid)) == golab.points(profile)[name]
    for name, sweep in bx.SWEEPS.items():
        _expand(sweep.experiment, bx.grid(name, profile))
    for name, fig in ix.SWEEPS.items():
        _expand(fig.experiment, ix.grid(name, profile))
        _expand(fig.experiment, ix.grid(name, profile, costmodels=ix.MEASURED))
    for name in olston.SWEEPS:
        _expand(olston.SWEEPS[name].experiment, olston.grid(name, profile))


def _notebook_cell(path: Path, marker: str) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return next(s for s in sources if marker in s)


@pytest.mark.parametrize("profile", PROFILES)
def test_quickstart_notebook_grids_expand(profile: str) -> None:
    """The quickstart notebook builds its grids itself: run its cell with run_grid captured."""
    notebook = ROOT / "notebooks" / "00-quickstart.ipynb"
    policies = next(node for node in ast.parse(_notebook_cell(notebook, "POLICIES = [")).body
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "POLICIES")
    captured: list[tuple[str, Any]] = []

    def run_grid(experiment: Experiment, grid: Any, **_: Any) -> pd.DataFrame:
        captured.append((experiment.name, grid))
        return pd.DataFrame({"events": [_expand(experiment.name, grid)]})

    scope: dict[str, Any] = {"np": np, "profile": profile, "runner": "local", "master": "", "cache_dir": "",
                             "run_grid": run_grid, "get_experiment": get_experiment}
    exec(compile(ast.Module(body=[policies], type_ignores=[]), "POLICIES", "exec"), scope)
    exec(_notebook_cell(notebook, "GRIDS = {"), scope)
    assert [name for name, _ in captured] == ["baseline-utilization"]


def _spark_notebook_rows(profile: str) -> dict[str, list[dict[str, Any]]]:
    """The rows ``notebooks/05-intermittent-on-spark.ipynb`` builds from its profile."""
    setup = xs.profile_of(profile)
    where = dict(scale=setup.scale, parts=setup.parts)
    costmodels, digest = f"data/costmodels/sf{setup.scale:g}-p{setup.parts}", "0123456789abcdef"
    together = ",".join(setup.queries)
    return {
        "intermittent-spark-costs": [dict(query=q, warmups=setup.warmups, repeats=setup.repeats, **where)
                                     for q in setup.queries],
        "intermittent-spark-split": [dict(query=q, k=k, warmups=setup.split_runs[0], repeats=setup.split_runs[1], **where)
                                     for q in setup.queries for k in setup.splits],
        "intermittent-spark-streaming": [dict(query=q, trigger=t, **where) for q in setup.queries for t in setup.triggers],
        "intermittent-spark-fig6": [dict(query=q, f=f, costmodels=costmodels, fits=digest, margin=m, **where)
                                    for m in xh.MARGINS for q in setup.queries for f in setup.factors],
        "intermittent-spark-multi": [dict(scheme=s, rho=r, queries=together, deterministic_time=setup.deterministic_time,
                                          costmodels=costmodels, fits=digest, margin=m, **where)
                                     for m in ("none", "slowest") for s in setup.schemes for r in setup.rhos]
        + [dict(scheme="llf", rho=1.0, queries=",".join(names), costmodels=costmodels, fits=digest, margin="none",
                **where) for names in setup.runs.values()],
    }


@pytest.mark.parametrize("profile", PROFILES)
def test_spark_notebook_rows_expand(profile: str) -> None:
    cells = json.loads((ROOT / "notebooks" / "05-intermittent-on-spark.ipynb").read_text(encoding="utf-8"))["cells"]
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    for experiment, rows in _spark_notebook_rows(profile).items():
        assert f'sweep("{experiment}"' in source  # the notebook still sweeps it
        _expand(experiment, rows)
    for k in xs.profile_of(profile).splits:  # and the cross-parameter rule holds there too
        assert k <= xs.profile_of(profile).parts


# -- bad values fail before any work ------------------------------------------------------------


def test_cli_refuses_a_bad_value_before_any_work(tmp_path: Path) -> None:
    grid = tmp_path / "g.yaml"
    grid.write_text(yaml.safe_dump({"n_tables": -3}), encoding="utf-8")
    out, cache = tmp_path / "x.parquet", tmp_path / "c"
    env = {k: v for k, v in os.environ.items() if k != "SPARK_MASTER"}
    proc = subprocess.run([str(CLI), "sweep", "baseline-utilization", "--runner", "local", "--grid", str(grid),
                           "--out", str(out), "--cache", str(cache)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("staleness-lab: error: grid.n_tables"), proc.stderr
    assert "must be >= 1, got -3" in lines[0]
    assert not out.exists() and not list(cache.rglob("*.parquet"))


@pytest.mark.parametrize(("grid", "message"), [
    ({"tracks": 0}, "grid.tracks: must be >= 1, got 0"),
    ({"horizon": -5}, "grid.horizon: must be > 0, got -5"),
    ({"utilization": 0}, "grid.utilization: must be > 0, got 0"),
    ({"variability": -1}, "grid.variability: must be >= 0, got -1"),
    ({"n_tables": [12, 5000]}, "grid.n_tables: must be <= 1000, got 5000"),
    ({"fixed": {"seed": -1}}, "grid.fixed.seed: must be >= 0, got -1"),
])
def test_quickstart_grid_refused(grid: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        expand_grid(get_experiment("baseline-utilization"), grid)
    assert str(info.value).startswith(message)


# -- cross-parameter rules the experiments check themselves ---------------------------------------


def test_period_min_above_period_max() -> None:
    with pytest.raises(InputError, match=r"^period_max: must be >= period_min = 500, got 100$"):
        quickstart.baseline_utilization(policy="edf", utilization=0.9, n_tables=4, tracks=1, period_min=500.0,
                                         period_max=100.0, variability=0.5, horizon=1000.0, seed=0)
    row = quickstart.baseline_utilization(policy="edf", utilization=0.9, n_tables=4, tracks=1, period_min=100.0,
                                          period_max=100.0, variability=0.0, horizon=1000.0, seed=0)
    assert row["jobs"].iloc[0] > 0  # equal bounds are one period, fine


def test_zipf_exponent_too_steep_for_the_tables() -> None:
    with pytest.raises(InputError, match=r"^zipf_s: .*t = g \* per_group = 4 tables.*got 8$"):
        bx.x5(g=2, per_group=2, p=3, n=2, factor=1.0, zipf_s=8.0, seed=0, time_limit=1.0)
    with pytest.raises(InputError, match=r"^zipf_s: "):
        bx.x5(g=1, per_group=2, p=2, n=2, factor=1.0, zipf_s=1e300, seed=0, time_limit=1.0)


def test_split_needs_a_part_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xs, "tpch_data", lambda *a: pytest.fail("generated data before checking k"))
    with pytest.raises(InputError, match=r"^k: must be <= parts = 20 .*got 21$"):
        xs.split(query="CQ2", k=21, scale=0.01, parts=20, warmups=0, repeats=1)


@pytest.mark.parametrize("queries", ["", " , ", "CQ2,Q99", "CQ2,CQ2"])
def test_hybrid_multi_needs_distinct_catalogue_queries(queries: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xh, "read_fits", lambda *a: pytest.fail("read the fits before checking queries"))
    with pytest.raises(InputError, match=r"^queries: must list distinct catalogue queries"):
        xh.hybrid_multi(scheme="llf", rho=1.0, queries=queries, scale=0.01, parts=20, delta_rsf=0.5, seed=0,
                        deterministic_time=1.0, costmodels="", fits="", margin="none", repetition=0)


def _shown(bound: float) -> str:
    """A bound as the rule prints it: integers in full, anything else as ``:g``."""
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"
