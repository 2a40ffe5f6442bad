"""The teaching notebooks as offline handouts: ``<out>/teaching/<name>.html``.

``staleness-lab report`` runs each ``notebooks/teaching/*.ipynb`` with its own defaults, with one
cell put first that switches the kernel to handout mode
(:func:`staleness_lab.widgets.handout.handout_mode`): every explorer is then displayed as its
initial view plus a plotly slider over its main control, one precomputed frame per value, so
the page responds with no kernel and no network. The cell is taken out again before the page is
rendered like every report (plotly.js inline once, nothing from the network, the page's JSON
that marks it as ours), with its "all reports" link pointing one directory up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The handouts' directory, under the reports' ``--out``, and the notebooks' under ``notebooks/``.
TEACHING = "teaching"
#: The tag of the cell put in front of a teaching notebook.
HANDOUT_TAG = "staleness-lab-handout"
HANDOUT_CELL = "from staleness_lab.widgets.handout import handout_mode\n\nhandout_mode()"


def teaching_notebooks(notebooks: Path) -> list[Path]:
    """``notebooks/teaching/*.ipynb``, sorted by name (none when the folder is missing)."""
    return sorted((notebooks / TEACHING).glob("*.ipynb"))


def is_teaching(path: Path) -> bool:
    """True for a notebook under ``notebooks/teaching/``."""
    return path.parent.name == TEACHING


def handout_source(path: Path) -> Any:
    """The notebook at ``path`` with the handout cell first."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    cell = nbformat.v4.new_code_cell(HANDOUT_CELL, metadata={"tags": [HANDOUT_TAG]})
    nb.cells.insert(0, cell)
    return nb


def without_handout_cell(nb: Any) -> Any:
    """``nb`` (executed) without the cell :func:`handout_source` put in, nor the live widgets'
    state that the kernel client stores in the notebook's metadata: a handout's explorers are
    static HTML, the state would only feed a widget manager the page never loads, and it holds
    plotly.js once more (the live panes bring it to a kernel's page, ``widgets/pane.py``)."""
    nb.cells = [c for c in nb.cells if HANDOUT_TAG not in c.get("metadata", {}).get("tags", [])]
    nb.metadata.pop("widgets", None)
    return nb
