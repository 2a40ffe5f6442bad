"""The shared verdict vocabulary (:mod:`staleness_lab.experiments.verdicts`): every word outside
it is refused with the field and the allowed words, an undecided verdict needs a fixed reason,
and every paper's verdict tables speak only the vocabulary (its rows that need no sweep: the
sweep checks without their sweeps, and cheap live rows)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from staleness_lab.experiments.bateni import verdicts as bateni
from staleness_lab.experiments.golab import verdicts as golab
from staleness_lab.experiments.intermittent import spark_verdicts
from staleness_lab.experiments.intermittent import verdicts as intermittent
from staleness_lab.experiments.leontyev import verdicts as leontyev
from staleness_lab.experiments.olston import verdicts as olston
from staleness_lab.experiments.verdicts import (COLUMNS, REASONS, VERDICTS, check_table, counts_text, erratum,
                                                summary_line, verdict_counts, verdict_row)


def test_the_vocabulary_is_fixed() -> None:
    assert VERDICTS == ("holds", "differs", "undecided", "finding")
    assert REASONS == ("depends on the unprinted rates and costs", "synthetic costs", "scale", "budget",
                       "ambiguous in the paper")


def test_outcomes_map_to_words() -> None:
    assert verdict_row(1, "E1", "c", True, 0.5, "d")["verdict"] == "holds"
    assert verdict_row(1, "E1", "c", False, -1.0, "d")["verdict"] == "differs"
    row = verdict_row(1, "E1", "c", None, None, "d", reason="budget")
    assert (row["verdict"], row["reason"], row["reading"], math.isnan(row["margin"])) == ("undecided", "budget", "paper", True)
    assert verdict_row(1, "E1", "c", "finding", -1.0, "d")["verdict"] == "finding"
    assert (erratum(False), erratum(True)) == ("finding", "holds")
    # a reason is kept only on an undecided verdict
    assert verdict_row(1, "E1", "c", True, 1.0, "d", reason="scale")["reason"] == ""
    assert verdict_row(1, "E1", "c", True, 1.0, "d", reading="ours: warm-up")["reading"] == "ours: warm-up"
    assert list(verdict_row(1, "E1", "c", True, 1.0, "d")) == COLUMNS


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"outcome": "maybe"}, "verdict: 'maybe' is not one of 'holds', 'differs', 'undecided', 'finding'"),
    ({"outcome": None}, "reason: check 1 is undecided without a reason (one of 'depends on"),
    ({"outcome": None, "reason": "too hard"}, "reason: 'too hard' is not one of 'depends on the unprinted rates"),
    ({"outcome": True, "reason": "later"}, "reason: 'later' is not one of"),
    ({"outcome": True, "reading": " "}, "reading: check 1 names no reading"),
])
def test_words_outside_the_vocabulary_are_refused(kwargs: dict, message: str) -> None:
    args = {"outcome": True, **kwargs}
    outcome = args.pop("outcome")
    with pytest.raises(ValueError) as caught:
        verdict_row(1, "E1", "c", outcome, 0.0, "d", **args)
    assert str(caught.value).startswith(message)


def _table(**changes: object) -> pd.DataFrame:
    return pd.DataFrame([{**verdict_row("a", "E1", "c", True, 1.0, "d"), **changes}], columns=COLUMNS)


@pytest.mark.parametrize(("changes", "message"), [
    ({"verdict": "fails"}, "check 'a': verdict: 'fails' is not one of"),
    ({"verdict": "undecided", "reason": ""}, "check 'a': reason: '' is not one of"),
    ({"verdict": "undecided", "reason": "hard"}, "check 'a': reason: 'hard' is not one of"),
    ({"reason": "scale"}, "check 'a': reason: 'scale' given for a verdict that is 'holds', not undecided"),
    ({"reading": ""}, "check 'a': reading: none named"),
])
def test_a_table_outside_the_vocabulary_is_refused(changes: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        check_table(_table(**changes))
    assert str(caught.value).startswith(message)
    with pytest.raises(ValueError, match="columns: verdict, reason, reading missing"):
        check_table(_table().drop(columns=["verdict", "reason", "reading"]))


def test_counts_and_the_summary_line() -> None:
    table = pd.DataFrame([
        verdict_row("1", "E1", "c", True, 1.0, "d"), verdict_row("2", "E2", "c", False, -1.0, "d"),
        verdict_row("3", "E3", "c", None, None, "d", reason="scale"), verdict_row("4", "E4", "c", None, None, "d", reason="budget"),
        verdict_row("5", "E5", "c", None, None, "d", reason="scale"), verdict_row("e", "E6", "c", erratum(False), -1.0, "d"),
    ], columns=COLUMNS)
    assert verdict_counts(table) == {"holds": 1, "differs": 1, "undecided": 3, "finding": 1}
    assert counts_text(verdict_counts(table)) == "1 hold, 1 differ, 3 undecided, 1 findings"
    assert summary_line(table, "quick", "checks") == (
        "6 checks at the quick profile: 1 hold, 1 differ, 3 undecided, 1 findings; differ: 2; undecided (scale): 3, 5; "
        "undecided (budget): 4; findings: e")


def _paper_tables() -> dict[str, pd.DataFrame]:
    """Each paper's verdict rows that need no sweep: its sweep checks without their sweeps, and
    live rows that take well under a second."""
    empty_split = pd.DataFrame({"query": ["CQ1"], "k": [1], "seconds": [1.0], "parts": [4]})
    empty_hybrid = pd.DataFrame(columns=["possible", "status", "misses", "deadline", "completion", "query", "f", "scheme",
                                         "rho", "planned_misses", "minbatch_flagged", "c_max", "violations", "wrong_results"])
    return {
        "golab": golab.sweep_checks({}, "quick"),
        "leontyev": leontyev.verdicts({}, "quick"),
        "bateni": pd.DataFrame([bateni.check7(None, None, "quick"), bateni.check11(None, "quick"),
                                bateni.check12(None, "quick"), bateni.erratum_smith()], columns=COLUMNS),
        "intermittent": intermittent.sweep_checks({}, "quick", {"synthetic costs": {}, "measured SF 1 fits": {}}),
        "spark": pd.DataFrame([spark_verdicts.table2_check(empty_split, "quick", 0.01),
                               spark_verdicts.hybrid_fig6_check(empty_hybrid.assign(margin="none"), "quick"),
                               spark_verdicts.executed_check([empty_hybrid], "quick")], columns=COLUMNS),
        "olston": olston.sweep_checks({"check12": pd.DataFrame({"status": []}), "brute_force":
                                                pd.DataFrame({"feasible": pd.Series([], dtype=bool)})}, "quick"),
    }


def test_every_papers_verdicts_use_only_the_vocabulary() -> None:
    tables = _paper_tables()
    for name, table in tables.items():
        assert list(table.columns) == COLUMNS, name
        check_table(table)
    undecided = pd.concat(tables.values())
    undecided = undecided[undecided["verdict"] == "undecided"]
    assert len(undecided) >= 25 and set(undecided["reason"]) <= set(REASONS)
    assert tables["intermittent"].set_index("check").loc["fig6a (measured SF 1 fits)", "reason"] == "scale"
    assert tables["bateni"].iloc[-1]["verdict"] == "finding"
