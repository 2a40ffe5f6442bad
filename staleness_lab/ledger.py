"""The claims ledger: every verdict of every report in one tidy table.

Each report records its verdict table (:mod:`staleness_lab.experiments.verdicts`' rows) with
:func:`staleness_lab.reports.record_verdicts`; :func:`ledger` turns those tables into one row per
verdict (:data:`LEDGER_COLUMNS`): the report and paper, the claim and where in the paper it
stands, the verdict with its reason and reading, the margin and profile, and the link to the
verdict's row in the rendered report (``<report>.html#<anchor>``, :func:`anchors`). The report
index shows it as a table and ``claims.csv`` holds the same rows. Pure functions over DataFrames:
nothing here runs a notebook.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from staleness_lab.experiments.verdicts import check_table, counts_text, verdict_counts

#: One ledger row: a verdict of one report.
LEDGER_COLUMNS = ["report", "paper", "check", "claim", "where", "verdict", "reason", "reading", "margin", "profile",
                  "link"]


def anchors(checks: Iterable[Any]) -> list[str]:
    """The HTML id of each check's row in its report, in order: ``claim-<label>`` with every run
    of characters other than letters, digits, ``-`` and ``_`` made one ``-``; a label met again
    gets ``-2``, ``-3``, ... so every id in a report is distinct."""
    seen: dict[str, int] = {}
    out = []
    for check in checks:
        base = "claim-" + (re.sub(r"[^A-Za-z0-9_-]+", "-", str(check)).strip("-") or "x")
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def ledger(reports: Mapping[str, tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """One row per verdict of every report: ``reports`` maps a report's name (its page is
    ``<name>.html``) to its paper and its verdict table; a table outside the vocabulary is
    refused (:func:`~staleness_lab.experiments.verdicts.check_table`, the report named)."""
    parts = []
    for name, (paper, table) in reports.items():
        try:
            check_table(table)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
        parts.append(pd.DataFrame({
            "report": name, "paper": paper, "check": table["check"].astype(str).to_numpy(),
            "claim": table["claim"].to_numpy(), "where": table["figure"].to_numpy(),
            "verdict": table["verdict"].to_numpy(), "reason": table["reason"].to_numpy(),
            "reading": table["reading"].to_numpy(), "margin": table["margin"].astype(float).to_numpy(),
            "profile": table["profile"].astype(str).to_numpy(),
            "link": [f"{name}.html#{a}" for a in anchors(table["check"])],
        }, columns=LEDGER_COLUMNS))
    if not parts:
        return pd.DataFrame(columns=LEDGER_COLUMNS)
    return pd.concat(parts, ignore_index=True)


def _margin(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{float(value):.3g}"


def ledger_html(rows: pd.DataFrame) -> str:
    """The ledger as an HTML section for the report index: the counts, then one table row per
    verdict with its link."""
    e = html.escape
    body = "\n".join(
        f'<tr><td>{e(r.paper)}</td><td>{e(r.check)}</td><td>{e(str(r.claim))}</td><td>{e(str(r.where))}</td>'
        f'<td class="v-{e(r.verdict)}">{e(r.verdict)}</td><td>{e(r.reason)}</td><td>{e(r.reading)}</td>'
        f'<td class="num">{_margin(r.margin)}</td><td>{e(r.profile)}</td><td><a href="{e(r.link)}">{e(r.report)}</a></td></tr>'
        for r in rows.itertuples(index=False))
    return f"""<h2 id="claims">Claims ledger</h2>
<p class="ledger-counts">{len(rows)} claims: {e(counts_text(verdict_counts(rows)))}
(<a href="claims.csv">claims.csv</a>)</p>
<table class="ledger">
<thead><tr><th>paper</th><th>check</th><th>claim</th><th>where</th><th>verdict</th><th>reason</th><th>reading</th>
<th>margin</th><th>profile</th><th>cell</th></tr></thead>
<tbody>
{body}
</tbody>
</table>
"""


def verdict_table_html(table: pd.DataFrame) -> str:
    """A report's verdict table as HTML, each row carrying its :func:`anchors` id (the ledger's
    link lands on it)."""
    e = html.escape
    shown = ["check", "figure", "claim", "verdict", "reason", "reading", "margin", "detail", "profile"]
    head = "".join(f"<th>{c}</th>" for c in shown)
    body = "\n".join(
        f'<tr id="{a}">' + "".join(
            f"<td>{_margin(row['margin']) if c == 'margin' else e(str(row[c]))}</td>" for c in shown) + "</tr>"
        for a, (_, row) in zip(anchors(table["check"]), table.iterrows()))
    return f'<table class="sl-verdicts">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>'
