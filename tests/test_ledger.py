"""The claims ledger (:mod:`staleness_lab.ledger`) and its place in the report index and
``claims.csv``, assembled from verdict DataFrames (no notebook runs here; the quick renders of
``tests/reports/`` check the same on the real reports through :func:`notebook_runs.check_quick_run`)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from staleness_lab.experiments.verdicts import COLUMNS, counts_text, erratum, summary_line, verdict_counts, verdict_row
from staleness_lab.ledger import LEDGER_COLUMNS, anchors, ledger, verdict_table_html
from staleness_lab.errors import InputError
from staleness_lab.reports import (Outcome, check_report_dir, claims_csv_is_ours, claims_ledger, page_is_ours,
                                   render_index, write_claims_csv)


def _table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


GOLAB = _table([verdict_row(1, "Sec. 4.2", "MB picks J1.", True, 0.0, "exact"),
                verdict_row(7, "Fig. 6", "within 1.05", False, -0.2, "1.25 at U = 0.9", "quick"),
                verdict_row(8, "Fig. 7", "MB below", None, None, "not run", "quick", reason="scale")])
BATENI = _table([verdict_row("3", "E1", "LOW 17.25", True, 0.0, "exact"),
                 verdict_row("erratum: eager is optimal", "E2", "eager is optimal", erratum(False), -0.1, "OPT idles"),
                 verdict_row("erratum: eager is optimal", "E2", "again", erratum(True), 0.1, "a repeated label")])


def _outcome(name: str, paper: str, table: pd.DataFrame, subject: str = "checks") -> Outcome:
    claims = {"paper": paper, "claims": [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                                         for r in table.astype(object).to_dict("records")]}
    return Outcome(name, "ok", verdict=summary_line(table, "quick", subject), seconds=1.0, claims=claims)


def test_one_row_per_verdict_with_its_link() -> None:
    rows = ledger({"01-golab": ("Golab et al.", GOLAB), "03-bateni": ("Bateni et al.", BATENI)})
    assert list(rows.columns) == LEDGER_COLUMNS and len(rows) == len(GOLAB) + len(BATENI)
    assert rows["report"].tolist() == ["01-golab"] * 3 + ["03-bateni"] * 3
    assert rows["where"].tolist()[:3] == ["Sec. 4.2", "Fig. 6", "Fig. 7"]
    assert rows["link"].tolist() == ["01-golab.html#claim-1", "01-golab.html#claim-7", "01-golab.html#claim-8",
                                     "03-bateni.html#claim-3", "03-bateni.html#claim-erratum-eager-is-optimal",
                                     "03-bateni.html#claim-erratum-eager-is-optimal-2"]
    assert rows["verdict"].tolist() == ["holds", "differs", "undecided", "holds", "finding", "holds"]
    assert rows["reason"].tolist() == ["", "", "scale", "", "", ""]
    assert set(rows["reading"]) == {"paper"}


def test_anchors_are_the_ids_of_the_reports_rows() -> None:
    page = verdict_table_html(BATENI)
    for anchor in anchors(BATENI["check"]):
        assert page.count(f'<tr id="{anchor}">') == 1
    assert len(set(anchors(["a b", "a-b", "a/b"]))) == 3  # labels that slug alike stay distinct


def test_a_table_outside_the_vocabulary_names_its_report() -> None:
    bad = GOLAB.assign(verdict=["holds", "maybe", "holds"])
    with pytest.raises(ValueError, match=r"^01-golab: check 7: verdict: 'maybe' is not one of"):
        ledger({"01-golab": ("Golab et al.", bad)})


def test_index_counts_equal_the_ledgers(tmp_path: Path) -> None:
    outcomes = [_outcome("01-golab", "Golab et al.", GOLAB), _outcome("03-bateni", "Bateni et al.", BATENI),
                Outcome("00-quickstart", "ok", verdict="no claims here", seconds=1.0)]
    rows = claims_ledger(outcomes)
    assert len(rows) == 6  # the quickstart records no verdict table
    page = render_index(outcomes, {"profile": "quick"}, [], rows)
    for name, part in rows.groupby("report"):
        line = re.search(rf'href="{name}\.html">{name}</a></td><td>([^<]*)</td>', page).group(1)
        assert counts_text(verdict_counts(part)) in line  # the per-report line uses the ledger's counts
    assert counts_text(verdict_counts(rows)) == "3 hold, 1 differ, 1 undecided, 1 findings"
    assert f"6 claims: {counts_text(verdict_counts(rows))}" in page
    assert page.count('<td class="v-') == 6 and 'href="03-bateni.html#claim-erratum-eager-is-optimal-2"' in page
    # claims.csv: the same rows, tidy, and recognised as ours for the next run
    path = write_claims_csv(tmp_path, rows)
    again = pd.read_csv(path, keep_default_na=False)
    assert again.columns.tolist() == LEDGER_COLUMNS and again["link"].tolist() == rows["link"].tolist()
    assert again["verdict"].tolist() == rows["verdict"].tolist()
    assert claims_csv_is_ours(path) and not page_is_ours(path)
    check_report_dir(tmp_path)  # an earlier run's claims.csv is ours to replace
    (tmp_path / "claims.csv").write_text("report,paper\n")
    assert not claims_csv_is_ours(tmp_path / "claims.csv")
    with pytest.raises(InputError, match="claims.csv"):
        check_report_dir(tmp_path)


def test_earlier_pages_keep_their_claims_in_the_ledger() -> None:
    earlier = _outcome("01-golab", "Golab et al.", GOLAB)
    earlier.status = "earlier"
    failed = Outcome("03-bateni", "failed", error="boom")
    rows = claims_ledger([earlier, failed])
    assert rows["report"].unique().tolist() == ["01-golab"]
    assert render_index([earlier, failed], {}, [], claims_ledger([failed])).count("Claims ledger") == 0
