"""What the explorer tests share: the repository's data files and a figure's identity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "workloads" / "demo.yaml"
AUS = ROOT / "data" / "workloads" / "teaching-aus.yaml"
E5 = ROOT / "data" / "intermittent" / "e5.yaml"


def drawn(explorer: Any) -> dict[str, str]:
    """Each figure shown, as its JSON (what changed, or did not, between two views)."""
    return {name: fig.to_json() for name, fig in explorer.figures.items()}


def shown_in_page(explorer: Any) -> dict[str, Any]:
    """The plotly JSON each pane of ``explorer.widget`` was sent last, by position: what the page draws."""
    shown = [pane.shown for pane in explorer._panes.values() if pane.shown is not None]
    return {"count": len(shown), "data": json.dumps([fig["data"] for fig in shown], sort_keys=True, default=str)}


def refused_keeps_view(explorer: Any, control: str, value: Any, *needles: str) -> None:
    """Setting ``control`` to ``value`` is refused with a reason containing every needle, and the
    summary, the figures and what the page shows stay those of the last good view."""
    summary, figures, page = explorer.summary, drawn(explorer), shown_in_page(explorer)
    objects = dict(explorer.figures)
    explorer.controls[control].value = value
    assert explorer.reason is not None
    for needle in needles:
        assert needle in explorer.reason, explorer.reason
    assert explorer.summary == summary
    assert drawn(explorer) == figures and all(explorer.figures[k] is objects[k] for k in objects)
    assert shown_in_page(explorer) == page
    assert explorer._reason.layout.display is None and "Cannot draw this" in explorer._reason.value
