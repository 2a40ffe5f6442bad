"""Calibration of the intermittent queries' cost models on Spark (digest §6, paper Figs. 3-4).

The fitting functions are checked on exact synthetic data (no Spark), and :func:`calibrate`'s
assembly (table, files, carry-over, all-or-nothing) with synthetic measurements. One TPC-H
generation (SF 0.01, 8 parts) laid out as a data root (``data/tpch/sf0.01-p8``) serves the
module, in the shared local[2] session: the command line calibrates two cheap queries (CQ1, Q6)
against it once, with 1 warm-up and 1 repeat, and Fig. 4's split cost is measured for 1 and 8
batches. At SF 0.01 a batch costs about the same whatever its size (digest, second corrections),
so S > 0 is asserted and R only >= 0. About 30 s on 2 cores, most of it the one calibration.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from staleness_lab import paths
from staleness_lab.cli import main
from staleness_lab.errors import InputError
from staleness_lab.experiments.intermittent.hybrid import TIME_UNIT
from staleness_lab.experiments.intermittent.sweeps import paper_queries
from staleness_lab.intermittent import tpch
from staleness_lab.intermittent.costs import LinearCost, PiecewiseCost, parse_agg_cost, parse_cost
from staleness_lab.spark.intermittent import TpchData
from staleness_lab.spark.intermittent.calibrate import (aggregation_counts, batch_sizes, calibrate,
                                                        fit_linear, fit_piecewise, nnls, r_squared, split_costs)

SCALE, PARTS = 0.01, 8
QUERIES = ["CQ1", "Q6"]


# --- fits on exact data (no Spark) ----------------------------------------------------------------

def test_the_grids_are_geometric_up_to_p_and_the_papers_aggregation_counts() -> None:
    assert batch_sizes(8) == [1, 2, 4, 8]
    assert batch_sizes(90) == [1, 2, 4, 8, 16, 32, 64, 90]
    assert batch_sizes(5) == [1, 2, 4, 5]
    assert aggregation_counts(8) == [2, 4, 8]
    assert aggregation_counts(90) == [2, 4, 8, 16, 32, 64]


def test_nnls_recovers_a_known_line_and_its_r2_is_1() -> None:
    xs = [1, 2, 4, 8, 16, 32, 64, 90]
    fit = fit_linear(xs, [0.4 + 0.05 * x for x in xs])
    assert fit.intercept == pytest.approx(0.4) and fit.slope == pytest.approx(0.05)
    assert fit.sse == pytest.approx(0, abs=1e-20) and fit.r2 == pytest.approx(1) and fit.r2_reason is None


def test_a_negative_slope_is_clipped_to_0_and_the_intercept_is_the_mean() -> None:
    xs = [1, 2, 3, 4, 5]
    fit = fit_linear(xs, [3 - 0.2 * x for x in xs])
    assert fit.slope == 0 and fit.intercept == pytest.approx(2.4)
    assert fit.r2 == pytest.approx(0)  # the best non-negative line is the mean


def test_a_negative_intercept_is_clipped_to_0() -> None:
    coef, sse = nnls(np.array([[1, 1], [1, 2], [1, 3]]), np.array([0.3, 0.8, 1.3]))  # OLS: -0.2 + 0.5 x
    assert coef[0] == 0 and coef[1] == pytest.approx(5.8 / 14)  # least squares through the origin: Σxy / Σx²
    assert sse > 0


def test_r2_is_null_with_a_reason_when_every_time_is_equal() -> None:
    fit = fit_linear([1, 2, 4], [0.5, 0.5, 0.5])
    assert fit.r2 is None and "equal" in fit.r2_reason
    assert r_squared([1.0, 2.0], 0.0) == (1.0, None)


def test_the_piecewise_fit_recovers_a_known_breakpoint() -> None:
    xs = [1, 2, 4, 8, 16, 32, 64]
    fit, reason = fit_piecewise(xs, [0.5 + 1.0 * min(x, 8) + 0.1 * max(x - 8, 0) for x in xs])
    assert reason is None and fit is not None
    assert fit.breakpoint == 8 and fit.S == pytest.approx(0.5)
    assert fit.slopes == pytest.approx((1.0, 0.1)) and fit.r2 == pytest.approx(1)
    cost = parse_cost(fit.to_cost())
    assert isinstance(cost, PiecewiseCost)
    for x in xs:
        assert float(cost(x)) == pytest.approx(0.5 + min(x, 8) + 0.1 * max(x - 8, 0))


def test_too_few_sizes_give_no_piecewise_fit_and_say_why() -> None:
    fit, reason = fit_piecewise([1, 2, 4], [1.0, 2.0, 3.0])
    assert fit is None and "4 or more distinct batch sizes" in reason


# --- measured on Spark ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def root(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root whose ``data/tpch/sf0.01-p8`` holds the module's generation."""
    root = tmp_path_factory.mktemp("root")
    tpch.generate(SCALE, PARTS, root / "data" / "tpch" / f"sf{SCALE:g}-p{PARTS}")
    return root


@pytest.fixture(scope="module")
def data(root: Path) -> TpchData:
    return TpchData(root / "data" / "tpch" / f"sf{SCALE:g}-p{PARTS}")


@pytest.fixture(scope="module")
def measured(root: Path, data: TpchData) -> tuple[Path, str]:
    """The command line's calibration of CQ1 and Q6 into the data root's default directory: the
    directory and what it printed. The generation must be reused, not made again."""
    manifest = data.directory / tpch.MANIFEST
    generated = manifest.stat().st_mtime_ns
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()) as printed:
        patch.setattr(paths, "data_root", lambda: root)
        assert main(["tpch", "calibrate", "--queries", *QUERIES, "--scale", "0.01", "--parts", "8",
                     "--warmups", "1", "--repeats", "1"]) == 0
    assert manifest.stat().st_mtime_ns == generated
    return root / "data" / "costmodels" / f"sf{SCALE:g}-p{PARTS}", printed.getvalue()


def test_the_command_line_prints_the_fits_and_where_they_are(measured: tuple[Path, str]) -> None:
    out, printed = measured
    lines = printed.splitlines()
    assert lines[0].split() == ["query", "S", "R", "R2", "a0", "a1"]
    assert [line.split()[0] for line in lines[1:3]] == QUERIES
    assert lines[3].startswith(f"{out}: 2 cost models")
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{q}.json" for q in QUERIES)
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temporary left beside it


def test_the_measured_fits_have_an_overhead_and_no_negative_coefficient(measured: tuple[Path, str]) -> None:
    out, _ = measured
    for query in QUERIES:
        fit = json.loads((out / f"{query}.json").read_text(encoding="utf-8"))
        cost, agg = parse_cost(fit["cost"]), parse_agg_cost(fit["agg_cost"])
        assert isinstance(cost, LinearCost) and cost.S > 0 and cost.R >= 0 and agg.a0 >= 0 and agg.a1 >= 0
        assert (float(cost.S), float(cost.R)) == (fit["fits"]["linear"]["S"], fit["fits"]["linear"]["R"])
        for part in (fit["fits"]["linear"], fit["fits"]["aggregation"], fit["fits"]["piecewise"]):
            assert (0 <= part["r2"] <= 1) if part["r2_reason"] is None else part["r2"] is None, (query, part)
        piecewise = fit["fits"]["piecewise"]
        assert fit["fits"]["piecewise_reason"] is None and piecewise["breakpoint"] in (2, 4)
        assert isinstance(parse_cost(piecewise["cost"]), PiecewiseCost)
        assert piecewise["sse"] <= fit["fits"]["linear"]["sse"] + 1e-12  # the hinge family holds the line


def test_the_fits_load_as_the_papers_query_set(measured: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = measured
    for name in ("Q1", "Q3", "Q4", "Q6", "Q9", "Q10", "Q12", "Q14", "Q19", "CQ1", "CQ2", "CQ3", "CQ4"):
        (tmp_path / f"{name}.json").write_bytes((out / f"{name if name in QUERIES else 'CQ1'}.json").read_bytes())
    loaded = {q.name: q for q in paper_queries(str(tmp_path)).queries}
    for query in QUERIES:
        fit = json.loads((out / f"{query}.json").read_text(encoding="utf-8"))
        cost, agg, q = parse_cost(fit["cost"]), parse_agg_cost(fit["agg_cost"]), loaded[query]
        assert q.n == PARTS  # the window of the measured parts, nothing priced past them
        for x in range(1, PARTS + 1):  # the fit rounded up to the planner's grid, never understated
            assert cost(x) <= q.cost(x) <= cost(x) + TIME_UNIT * (1 + x)
        for n in (2, PARTS):
            assert agg(n) <= q.agg_cost(n) <= agg(n) + TIME_UNIT * (1 + n)


def test_the_json_records_its_measurements_and_provenance(measured: tuple[Path, str], data: TpchData,
                                                          spark: Any) -> None:
    out, _ = measured
    for query in QUERIES:
        fit = json.loads((out / f"{query}.json").read_text(encoding="utf-8"))
        assert (fit["query"], fit["scale"], fit["parts"]) == (query, SCALE, PARTS)
        assert (fit["master"], fit["spark_version"]) == (spark.sparkContext.master, spark.version)
        assert fit["generator"] == data.manifest["generator"] and (fit["warmups"], fit["repeats"]) == (1, 1)
        where = fit["measured_on"]
        assert datetime.date.fromisoformat(where["date"]) <= datetime.datetime.now(datetime.timezone.utc).date()
        assert where["cores"] == os.cpu_count() and where["memory_gib"] > 0 and where["cpu"] and where["os"]
        assert where["java"] == spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
        assert [m["files"] for m in fit["measurements"]["batches"]] == [1, 2, 4, 8]
        assert [m["partials"] for m in fit["measurements"]["aggregation"]] == [2, 4, 8]
        for m in fit["measurements"]["batches"] + fit["measurements"]["aggregation"]:
            assert m["samples"] == [m["seconds"]] and m["seconds"] > 0


def test_eight_batches_cost_more_than_one(data: TpchData, tmp_path: Path) -> None:
    rows = split_costs("CQ1", data, [8], warmups=0, repeats=1, scratch=tmp_path)
    assert list(rows["batches"]) == [1, 8] and list(rows["files_per_batch"]) == [8, 1]
    assert rows["seconds"].iloc[1] > rows["seconds"].iloc[0] and rows["relative"].iloc[1] > 1
    assert list(tmp_path.iterdir()) == []  # scratch removed


# --- calibrate's assembly: other fits kept, all or nothing ----------------------------------------------

def test_calibrate_returns_one_row_per_query_and_keeps_the_other_fits(data: TpchData, tmp_path: Path) -> None:
    out = tmp_path / "costmodels"
    out.mkdir()
    (out / "Q1.json").write_text('{"cost": {"kind": "linear", "S": 1, "R": 0}}', encoding="utf-8")
    table = calibrate(["CQ1"], data, out, warmups=0, repeats=1, master_label="bench box", scratch=tmp_path)
    assert list(table.columns[:9]) == ["query", "S", "R", "r2", "breakpoint", "piecewise_sse", "a0", "a1", "agg_r2"]
    assert list(table["query"]) == ["CQ1"] and table["S"].iloc[0] > 0 and table["R"].iloc[0] >= 0
    assert sorted(p.name for p in out.iterdir()) == ["CQ1.json", "Q1.json"]
    assert json.loads((out / "CQ1.json").read_text(encoding="utf-8"))["master"] == "bench box"
    # a part that Spark cannot read fails the second query: nothing of this calibration is written
    broken = tmp_path / "broken"
    shutil.copytree(data.directory, broken)
    TpchData(broken).path("lineitem", PARTS).write_bytes(b"not parquet")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(Exception) as err:
        calibrate(["CQ1", "Q6"], TpchData(broken), out, warmups=0, repeats=1, scratch=tmp_path)
    assert not isinstance(err.value, InputError)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken", "costmodels"]


def test_unknown_queries_and_foreign_output_dirs_are_refused(data: TpchData, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"--queries: unknown 'Q99' \(valid: Q1, .*CQ4\)"):
        calibrate(["Q1", "Q99"], data, tmp_path / "never")
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match=r"holds what staleness-lab did not write \(notes.txt\)"):
        calibrate(["CQ1"], data, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize(("argv", "field"), [
    (["--queries", "Q1", "Q99"], "--queries"),
    (["--parts", "3"], "--parts"),
    (["--repeats", "0"], "--repeats"),
    (["--scale", "0"], "--scale"),
])
def test_bad_calibration_options_are_one_line_and_exit_2(argv: list[str], field: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(paths, "data_root", lambda: tmp_path)
    assert main(["tpch", "calibrate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {field}:" in err
    assert list(tmp_path.iterdir()) == []
