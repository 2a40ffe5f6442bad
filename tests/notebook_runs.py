"""A notebook executed as the report runs it, with the quick parameters, and what every such run
must show (used by ``tests/reports/test_notebooks.py`` and, for the Spark notebook, whose run is
the suite's longest, by ``tests/reports/test_notebook_spark_run.py``)."""

from __future__ import annotations

from pathlib import Path

import nbformat

from staleness_lab.reports import VERDICT_MIMETYPE, execute_notebook, read_verdict

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
#: The report's quick parameters, on the local runner (the Spark runner is exercised by the
#: report test in ``tests/reports/test_html.py``).
QUICK = {"profile": "quick", "runner": "local"}
#: The notebook whose quick run has a test file of its own.
SPARK_NOTEBOOK = NOTEBOOK_DIR / "05-intermittent-on-spark.ipynb"


def run(path: Path, parameters: dict) -> nbformat.NotebookNode:
    """``path`` executed through papermill with ``parameters``, as the report runs it."""
    return execute_notebook(path, parameters, progress=False)


def check_quick_run(path: Path, after: str = "") -> nbformat.NotebookNode:
    """Run ``path`` with :data:`QUICK`: no error output, the verdict recorded in the last cell,
    every figure drawn by the offline renderer; the executed notebook. ``after``: code run in a
    cell appended to the notebook (e.g. to save a frame the test then reads)."""
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
    return nb
