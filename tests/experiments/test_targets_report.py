"""Report 07's pieces without the notebook: the verdicts on hand-made frames, the documented
rules' checks (on target-lag traces, and catching a scheduler that breaks one), the guarantee
curve against the certificate, and bound / observed worst on the bounds sweep's rows."""

from __future__ import annotations

import inspect
import re
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

import staleness_lab as sl
from staleness_lab.experiments.targets import sweeps as tx
from staleness_lab.experiments.targets import verdicts as v
from staleness_lab.experiments.targets.conformance import RULES, conformance, conformance_table
from staleness_lab.experiments.verdicts import check_table
from staleness_lab.policies.target_lag import TargetLag
from staleness_lab.theory.leontyev.budget import certify, guaranteed_by_tracks

TESTS = Path(__file__).resolve().parents[1] / "policies" / "test_target_lag.py"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_rule_quotes_the_policy_docstring_and_names_a_test_that_exists():
    doc = _flat(inspect.getdoc(TargetLag))
    defined = set(re.findall(r"^def (test_\w+)", TESTS.read_text(encoding="utf-8"), re.M))
    assert [r.number for r in RULES] == [1, 2, 3, 4, 5, 6]
    for rule in RULES:
        assert _flat(rule.quote) in doc, rule.number
        assert f"{rule.number}. *{rule.title}.*" in doc
        assert rule.test in defined


@pytest.fixture(scope="module")
def traces() -> dict[str, object]:
    return {name: sl.simulate(tx.report_workload(name, 0), "target-lag").trace for name in tx.WORKLOADS}


def test_target_lag_traces_conform_and_every_rule_is_exercised(traces):
    rows = pd.concat([conformance(t).assign(run=name) for name, t in traces.items()], ignore_index=True)
    assert (rows["violations"] == 0).all()
    table = conformance_table(rows)
    assert table["holds"].tolist() == [True] * 6
    assert (table["checked"] > 0).all()


def test_a_scheduler_refreshing_at_every_file_breaks_rule_3():
    rows = conformance(sl.simulate(tx.report_workload("fig9-worst", 0), "edf-p").trace).set_index("rule")
    assert rows.loc[3, "holds"] == False and rows.loc[3, "violations"] > 0  # noqa: E712
    assert "< target 450" in rows.loc[3, "detail"]
    assert rows.loc[1, "holds"] == True  # noqa: E712  (the engine never overlaps a table's jobs)


def test_the_guarantee_curve_agrees_with_certify_at_every_track_count():
    w = tx.scaled_targets(tx.report_workload("targets-dag"), 3.0)
    curve = dict(guaranteed_by_tracks(w, "gedf-np", range(1, 6)))
    for m in range(1, 6):
        cert = certify(w.with_overrides(tracks=m), "gedf-np")
        assert curve[m] == tuple(t.table for t in cert.tables if t.verdict == "guaranteed"), m
    assert len(curve[1]) == 0 < len(curve[2])


def test_scaled_targets_scale_numbers_and_keep_downstream():
    w = tx.scaled_targets(tx.report_workload("targets-dag"), 1.5)
    declared = {t.name: t.target_lag for t in w.tables}
    assert declared["clicks"] == 112.5 and declared["orders"] == "downstream" and declared["prices"] is None


def test_bound_ratios_keep_only_met_staleness_records_and_summarise_per_family():
    bounds = pd.DataFrame({
        "claim": ["staleness", "staleness", "staleness", "tardiness", "staleness"],
        "preconditions_met": [True, True, False, True, True],
        "derived": [False, True, True, False, False], "outages": [False, True, True, False, False],
        "policy": ["aus", "aus", "aus", "aus", "gedf-np"], "tracks": [1, 2, 2, 1, 1], "seed": 0,
        "table": ["B0", "D3", "D4", "B0", "B1"], "bound": [10.0, 30.0, 9.0, 5.0, 8.0],
        "observed": [4.0, 10.0, 1.0, 1.0, 2.0]})
    ratios = tx.bound_ratios(bounds)
    assert ratios[["family", "bound_over_observed"]].values.tolist() == [
        ["base tables", 2.5], ["with views, broken feeds", 3.0], ["base tables", 4.0]]
    summary = tx.ratio_summary(ratios).set_index(["policy", "family"])
    assert summary.loc[("aus", "all"), "tables"] == 2 and summary.loc[("aus", "all"), "median"] == 2.75
    assert summary.loc[("gedf-np", "base tables"), "p95"] == 4.0


# -- verdicts on frames ------------------------------------------------------------------------

def budget_rows(observed: float) -> pd.DataFrame:
    return pd.DataFrame({"workload": "w", "seed": [0, 1, 0], "policy": "gedf-np", "table": ["a", "a", "b"],
                         "bound": [100.0, 100.0, 50.0], "verdict": ["guaranteed", "guaranteed", "unknown"],
                         "observed_worst": [80.0, observed, 500.0]})


def test_check1_holds_within_the_bound_ignoring_unknown_and_differs_past_it():
    row = v.check1(budget_rows(90.0), "quick")
    assert row["verdict"] == "holds" and row["margin"] == pytest.approx(0.1)
    assert "2 certified (table, run) pairs over 2 seeds, 2 of them guaranteed" in row["detail"]
    bad = v.check1(budget_rows(120.0), "quick")
    assert bad["verdict"] == "differs" and bad["margin"] == pytest.approx(-0.2)
    only_unknown = v.check1(budget_rows(90.0).iloc[[2]], "quick")
    assert only_unknown["verdict"] == "undecided" and only_unknown["reason"] == "scale"


def conformance_rows(holds: list) -> pd.DataFrame:
    return pd.DataFrame({"workload": "w", "seed": 0, "rule": [1, 2], "checked": [5, 0 if holds[1] is None else 3],
                         "violations": [0 if h is not False else 1 for h in holds], "holds": holds,
                         "detail": ["ok", "x"]})


def test_check2_needs_every_rule_exercised_and_names_a_failing_one():
    assert v.check2(conformance_rows([True, True]), "quick")["verdict"] == "holds"
    assert v.check2(conformance_rows([True, None]), "quick")["verdict"] == "undecided"
    failed = v.check2(conformance_rows([True, False]), "quick")
    assert failed["verdict"] == "differs" and "Rule 2 fails on w seed 0: x" in failed["detail"]


def curve_rows(guaranteed: list[int], min_tracks: float) -> pd.DataFrame:
    return pd.DataFrame({"workload": "w", "policy": "gedf-np", "scale": 1.0, "tracks": [1, 2, 3],
                         "guaranteed": guaranteed, "targeted": 3, "min_tracks": min_tracks})


def test_check3_min_tracks_must_guarantee_all_and_one_fewer_must_not():
    assert v.check3(curve_rows([0, 3, 3], 2), "quick")["verdict"] == "holds"
    assert v.check3(curve_rows([3, 3, 3], 2), "quick")["verdict"] == "differs"  # not minimal
    assert v.check3(curve_rows([0, 2, 3], 2), "quick")["verdict"] == "differs"  # not enough
    none = pd.concat([curve_rows([0, 3, 3], 2), curve_rows([0, 1, 3], float("nan")).assign(scale=2.0)])
    assert v.check3(none, "quick")["verdict"] == "differs"  # no min_tracks, yet 3 tracks do it
    assert v.check3(curve_rows([0, 1, 1], float("nan")), "quick")["verdict"] == "undecided"


def test_check4_parts_must_sum_exactly():
    parts = pd.DataFrame({"run": "r", "table": "a", "since": 0.1, "until": 0.7, "part": ["x", "y"],
                          "exact": [Fraction(0.7) - Fraction(0.3), Fraction(0.3) - Fraction(0.1)]})
    assert v.check4(parts, "quick")["verdict"] == "holds"
    assert v.check4(parts.assign(exact=[Fraction(0.4), Fraction(0.2)]), "quick")["verdict"] == "differs"


def test_check5_and_the_table_in_the_vocabulary():
    ratios = pd.DataFrame({"policy": "aus", "family": "base tables", "tracks": 1, "bound_over_observed": [2.0, 3.0]})
    row = v.check5(ratios, "quick")
    assert row["verdict"] == "holds" and row["margin"] == 1.0 and "median 2.50" in row["detail"]
    assert v.check5(ratios.assign(bound_over_observed=[0.9, 3.0]), "quick")["verdict"] == "differs"
    table = v.verdicts({"ratios": ratios, "budget": budget_rows(90.0)}, "quick")
    check_table(table)
    assert table["verdict"].tolist() == ["holds", "undecided", "undecided", "undecided", "holds"]
    assert v.summary_line(table, "quick").startswith("5 checks on freshness targets at the quick profile: 2 hold")
