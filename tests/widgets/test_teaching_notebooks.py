"""The teaching notebooks (``notebooks/teaching/``): committed clean, short, with at least two
exercises marked by ``check_answer``, executed through papermill with quick parameters, and
kept out of the report list (which reads ``notebooks/*.ipynb`` only)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from staleness_lab.reports import KERNEL_NAME, execute_notebook, notebooks_dir
from tests.widgets.helpers import ROOT

TEACHING = sorted((ROOT / "notebooks" / "teaching").glob("*.ipynb"))
QUICK = {"01": {"horizon": 200.0}, "02": {"horizon": 300.0}, "03": {"horizon": 600.0}, "04": {"scheme": "edf"}}


def test_the_four_notebooks_of_the_issue_are_there_and_not_reports() -> None:
    assert [p.stem for p in TEACHING] == ["01-what-is-staleness", "02-priorities-and-partitioning",
                                          "03-recovering-from-an-outage", "04-batching-against-deadlines"]
    assert notebooks_dir() == ROOT / "notebooks"
    assert not set(notebooks_dir().glob("*.ipynb")) & set(TEACHING)


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: p.stem)
def test_committed_clean_with_two_exercises(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == KERNEL_NAME
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert sum("parameters" in c.metadata.get("tags", []) for c in nb.cells) == 1
    exercises = [c for c in code if "check_answer(answer" in c.source]
    assert len(exercises) >= 2 and all(c.source.startswith("answer = None") for c in exercises)


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: p.stem)
def test_executes_with_quick_parameters(path: Path) -> None:
    """Every cell runs; each exercise, unanswered, asks for an answer; the explorers display."""
    nb = execute_notebook(path, QUICK[path.stem[:2]], progress=False)
    shown = [o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs
             if o.get("output_type") in ("execute_result", "display_data")]
    assert sum("Type your answer" in d.get("text/plain", "") for d in shown) >= 2
    assert any("application/vnd.jupyter.widget-view+json" in d for d in shown)
