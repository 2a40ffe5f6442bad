"""Workload-derived text in the reports' tables is HTML-escaped.

The notebooks show formatted tables only through :func:`staleness_lab.viz.styled`; a table or
query name with HTML in it must come out as text, never as markup (``<script>`` would run).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from staleness_lab.viz import styled

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
BOLD = "<b>x</b>"
RAW = ("<script", "<img", "<b>", "</b>")
NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "table": [SCRIPT, IMG, "orders"],
            "margin": [0.123456, np.nan, 2.0],
            "tables": [[SCRIPT], {"a": BOLD}, None],  # not text: shown as str, still escaped
            BOLD: [1.5, 2.25, 3.125],
        },
        index=pd.Index([BOLD, "plain", SCRIPT], name=BOLD),
    )


def _assert_escaped(page: str) -> None:
    for raw in RAW:
        assert raw not in page, raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page
    assert "&amp;lt;" not in page  # escaped once, not twice


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"formatter": {"margin": "{:.3g}"}},
        {"precision": 4, "index_precision": 2, "na_rep": "n/a"},
        {"precision": 2, "na_rep": "-", "hide_index": True},
    ],
    ids=["plain", "margin-format", "precision", "hidden-index"],
)
def test_cells_labels_names_and_caption_are_escaped(kwargs: dict) -> None:
    frame = _frame()
    page = styled(frame, caption=f"tables {SCRIPT} and {BOLD}", **kwargs).to_html()
    _assert_escaped(page)
    assert "tables &lt;script&gt;alert(1)&lt;/script&gt; and &lt;b&gt;x&lt;/b&gt;" in page
    pd.testing.assert_frame_equal(frame, _frame())  # the caller's frame is untouched


def test_number_formatting_is_kept() -> None:
    page = styled(_frame(), {"margin": "{:.3g}"}, precision=1, na_rep="n/a").to_html()
    assert ">0.123<" in page and ">2<" in page and ">n/a<" in page  # margin: {:.3g}, NaN: na_rep
    assert ">1.5<" in page and ">2.2<" in page  # the other numbers: precision 1


def test_multiindex_rows_and_columns_are_escaped() -> None:
    frame = pd.DataFrame(
        {"policy": ["edf", BOLD, "edf", BOLD], "rho": [0.25, 0.25, 0.5, 0.5], "misses": [1.0, 2.0, 3.0, 4.0],
         "query": [SCRIPT, SCRIPT, IMG, IMG]}
    )
    wide = frame.groupby(["query", "rho", "policy"])[["misses"]].mean().unstack("policy")
    wide.columns = wide.columns.set_names(["what", BOLD])
    page = styled(wide, precision=2, index_precision=2, columns_format="p = {}").to_html()
    _assert_escaped(page)
    assert "p = &lt;b&gt;x&lt;/b&gt;" in page and ">0.25<" in page


def test_header_format_string_sees_the_value() -> None:
    frame = pd.DataFrame([[1.0, 2.0]], columns=pd.Index([0.5, 1.0], name="f"), index=pd.Index([SCRIPT], name="query"))
    page = styled(frame, precision=0, columns_format="f = {:g}").to_html()
    assert "f = 0.5" in page and "f = 1<" in page
    _assert_escaped_script_only(page)


def _assert_escaped_script_only(page: str) -> None:
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_notebooks_build_styled_tables_only_through_the_helper() -> None:
    """No notebook reaches for ``DataFrame.style`` directly (its text would not be escaped)."""
    assert NOTEBOOKS
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for k, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                assert not re.search(r"\.style\b", cell.source), f"{path.name} cell {k}: use viz.styled(...)"
