"""Olston's worked examples E4-E8, E9 on CrawlSelection and sec. 7.2 as the report's verdict rows,
and each paper's coverage table."""

from __future__ import annotations

import pandas as pd
import pytest

from staleness_lab.experiments.intermittent import verdicts as intermittent
from staleness_lab.experiments.olston import examples as ex
from staleness_lab.experiments.olston import verdicts as olston
from staleness_lab.experiments.verdicts import check_table, coverage_table, verdict_row


def test_the_worked_examples_hold_as_verdict_rows() -> None:
    table = check_table(pd.concat([ex.examples(), pd.DataFrame(ex.sec72_checks())], ignore_index=True))
    assert list(table["check"]) == ["E4", "E5", "E6", "E7", "E8", "E9-CS", "7.2-lag", "7.2-cost"]
    assert (table["verdict"] == "holds").all(), table.loc[table["verdict"] != "holds", "detail"].tolist()
    assert (table["margin"] >= 0).all() and set(table["reading"]) == {"paper"} and set(table["profile"]) == {"live"}
    by = table.set_index("check")["detail"]
    assert "cost 22, chain + chain + chain + delta->B + batch, 5 row(s)" in by["E8"]
    assert "81.4 / 1,000 h = 4.88 min" in by["7.2-lag"] and "= 13.00 CPU-min" in by["7.2-cost"]


def test_a_wrong_expectation_differs_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ex.E9_CRAWL_SELECTION, "links", ((0.0,), 168.0))  # the propagated bound is None
    row = ex.e9_crawl_selection()
    assert (row["verdict"], row["margin"]) == ("differs", -1.0) and row["detail"].startswith("links: (None,)")
    monkeypatch.setitem(ex.SEC72, "lag_minutes", 7)
    assert ex.sec72_checks()[0]["verdict"] == "differs"


def test_sec72_shows_our_crawl_selection_row_beside_unjudged() -> None:
    table5 = pd.DataFrame([
        {"workflow": "crawl-selection", "scenario": "async-incr", "reading": "paper", "status": "ok", "hours": 48.0,
         "lag_cpu_h": 2.0, "cost_cpu_h": 96.0},
        {"workflow": "crawl-selection", "scenario": "async-incr", "reading": "empty as oldest", "status": "ok",
         "hours": 48.0, "lag_cpu_h": 99.0, "cost_cpu_h": 9e9},
        {"workflow": "crawl-selection", "scenario": "sync-incr", "reading": "paper", "status": "ok", "hours": 48.0,
         "lag_cpu_h": 99.0, "cost_cpu_h": 9e9}])
    lag, cost = ex.sec72_checks(table5)
    assert lag["verdict"] == cost["verdict"] == "holds"
    assert "1 runs of 48 h" in lag["detail"] and "lag 2 CPU-h = 0.12 min" in lag["detail"]
    assert "cost 0.12 CPU-min per machine-hour" in cost["detail"] and "not judged" in cost["detail"]


def test_coverage_names_only_checks_the_reports_compute() -> None:
    olston_table = pd.concat([olston.worked_examples(), ex.examples(), pd.DataFrame(ex.sec72_checks()),
                              pd.DataFrame([verdict_row(c, "Table 5", "c", True, 0.0, "d") for c in
                                            ("10", "10-fp-cost", "10-sp-lag", "11", "12")])], ignore_index=True)
    shown = coverage_table(ex.COVERAGE, olston_table)
    assert len(shown) == len(ex.COVERAGE) and (shown.loc[shown["verdicts"] == "-", "note"] != "").all()
    assert shown.set_index("item").loc["E4 (freshness)", "verdicts"] == "E4: holds"
    readings = ["synthetic costs", "measured SF 1 fits"]  # the report's cost sets
    table = intermittent.sweep_checks({}, "t", {reading: {} for reading in readings})
    names = set(table["check"]) | {"1", "2", "3", "4", "5", "6", "7", "10"}  # worked_examples(): checks 1-7, 10
    for _, checks, _ in intermittent.coverage(readings):
        assert set(checks) <= names, checks
    with pytest.raises(ValueError, match="Fig. 8 .* names check"):
        coverage_table([("Fig. 8 (x)", ("nope",), "")], table)
    with pytest.raises(ValueError, match="neither"):
        coverage_table([("Fig. 9", (), "")], table)
