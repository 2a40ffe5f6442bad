"""A notebook executed as the report runs it, with the quick parameters, and what every such run
must show (used by ``tests/reports/test_notebooks.py`` and, for the Spark notebook, whose run is
the suite's longest, by ``tests/reports/test_notebook_spark_run.py``)."""

from __future__ import annotations

from pathlib import Path

import nbformat

from staleness_lab.experiments.verdicts import counts_text, verdict_counts
from staleness_lab.reports import VERDICT_MIMETYPE, Outcome, claims_ledger, execute_notebook, read_claims, read_verdict

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
#: The report's quick parameters, on the local runner (the Spark runner is exercised by the
#: report test in ``tests/reports/test_html.py``).
QUICK = {"profile": "quick", "runner": "local"}
#: The notebook whose quick run has a test file of its own.
SPARK_NOTEBOOK = NOTEBOOK_DIR / "05-intermittent-on-spark.ipynb"
#: The notebook that reports on no paper, so records no verdict table.
NO_CLAIMS = "00-quickstart"


def run(path: Path, parameters: dict) -> nbformat.NotebookNode:
    """``path`` executed through papermill with ``parameters``, as the report runs it."""
    return execute_notebook(path, parameters, progress=False)


def check_quick_run(path: Path, after: str = "") -> nbformat.NotebookNode:
    """Run ``path`` with :data:`QUICK`: no error output, the verdict recorded in the last cell,
    every figure drawn by the offline renderer, and a paper's verdict table in the vocabulary,
    one ledger row per verdict, their counts those of the verdict line; the executed notebook.
    ``after``: code run in a cell appended to the notebook (e.g. to save a frame the test then
    reads)."""
    source = nbformat.read(path, as_version=4)
    if after:
        source.cells.append(nbformat.v4.new_code_cell(after))
    nb = execute_notebook(path, QUICK, progress=False, source=source)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert read_verdict(nb), "the notebook ends with record_verdict(...)"
    last = nb.cells[-2] if after else nb.cells[-1]  # the notebook's own last cell
    assert any(VERDICT_MIMETYPE in o.get("data", {}) for o in last.outputs)
    figures = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert all("Plotly.newPlot" in o.data["text/html"] for o in figures)  # the offline renderer
    check_claims(path.stem, nb)
    return nb


def check_claims(name: str, nb: nbformat.NotebookNode) -> None:
    """A paper's report records its verdict table: the ledger (which refuses words outside the
    vocabulary) has one row per verdict, each linking to its anchored row in the page, and the
    verdict line the index shows carries the ledger's counts."""
    claims = read_claims(nb)
    if name == NO_CLAIMS:
        assert claims is None
        return
    assert claims and claims["paper"] and claims["claims"], "a paper's report ends with record_verdicts(...)"
    rows = claims_ledger([Outcome(name, "ok", verdict=read_verdict(nb), claims=claims)])
    assert len(rows) == len(claims["claims"]) and set(rows["report"]) == {name}
    html = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", []))
    for link in rows["link"]:
        assert html.count(f'<tr id="{link.split("#")[1]}">') == 1, link
    assert counts_text(verdict_counts(rows)) in read_verdict(nb)
