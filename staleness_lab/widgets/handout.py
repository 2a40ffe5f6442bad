"""Offline handouts: an explorer as static HTML that still responds with no kernel and no network.

:func:`handout_html` drives the explorer's main control (:attr:`Explorer.main`) through a few
values exactly as a student would (each value set on the control, so each frame is the view the
live explorer shows for it), keeps every frame's figures, and puts the control back. Each pane
becomes one plotly figure holding every frame's traces, only the current frame's visible, with a
plotly slider under the first pane whose steps switch frames (``method: "update"``: a restyle of
``visible`` and a relayout of the frame's title, shapes and annotations); the other panes follow
it through ``plotly_sliderchange``. The page must load plotly.js itself (the reports put it in
once); the figures are drawn by ``Plotly.newPlot`` calls, no network needed.

:func:`handout_mode` makes an IPython kernel display every explorer that way (the report step
runs it before a teaching notebook's cells), so the notebooks themselves need no change.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from staleness_lab.widgets.base import Explorer

#: The most frames one handout precomputes (an integer slider with more values is sampled).
MAX_FRAMES = 12
#: Frames of a float slider: evenly spaced over its range, plus its initial value.
FLOAT_FRAMES = 9
#: What a frame changes in a figure's layout besides its traces.
FRAME_LAYOUT = ("title", "shapes", "annotations")


def frame_values(control: W.ValueWidget) -> list[Any]:
    """The values a handout precomputes for ``control``: a slider's range (an integer one's
    every value up to :data:`MAX_FRAMES`, a float one's :data:`FLOAT_FRAMES` points), a list's
    options, always with the current value."""
    current = control.value
    if isinstance(control, W.IntSlider):
        values = list(range(control.min, control.max + 1))
        if len(values) > MAX_FRAMES:
            values = sorted({int(round(v)) for v in np.linspace(control.min, control.max, MAX_FRAMES)})
    elif isinstance(control, W.FloatSlider):
        values = [float(f"{v:.6g}") for v in np.linspace(control.min, control.max, FLOAT_FRAMES)]
    elif hasattr(control, "options"):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options][:MAX_FRAMES]
    else:
        values = []
    return sorted(set(values) | {current}, key=lambda v: (isinstance(v, str), v))


def frames(explorer: Explorer, values: Sequence[Any]) -> tuple[list[tuple[Any, dict[str, go.Figure]]], list[str]]:
    """``explorer``'s figures for each of ``values`` of its main control, set one by one as a
    student would; the drawable frames and one line per value refused (its reason). The control
    ends where it started."""
    control = explorer.controls[explorer.main]
    start = control.value
    drawn: list[tuple[Any, dict[str, go.Figure]]] = []
    refused: list[str] = []
    try:
        for value in values:
            control.value = value
            if explorer.reason is None and control.value == value:
                drawn.append((value, dict(explorer.figures)))
            else:
                refused.append(f"{label(value)}: {explorer.reason or 'not a value of this control'}")
    finally:
        control.value = start
    return drawn, refused


def label(value: Any) -> str:
    """A frame's value as its slider step reads."""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def stacked(figures: Sequence[go.Figure], active: int) -> tuple[go.Figure, list[list[bool]], list[dict[str, Any]]]:
    """One figure holding every frame's traces, frame ``active``'s layout and traces shown; each
    frame's visibility mask and layout changes (:data:`FRAME_LAYOUT`, emptied where it has none)."""
    base = go.Figure(layout=figures[active].layout)
    owner: list[int] = []
    for k, fig in enumerate(figures):
        for trace in fig.data:
            base.add_trace(trace)  # a copy: the explorer's figures stay as they are
            base.data[-1].visible = k == active
            owner.append(k)
    masks = [[o == k for o in owner] for k in range(len(figures))]
    layouts = []
    for fig in figures:
        plain = fig.layout.to_plotly_json()
        layouts.append({key: plain.get(key) or ({} if key == "title" else []) for key in FRAME_LAYOUT})
    return base, masks, layouts


def _script_json(value: Any) -> str:
    """``value`` as JSON safe inside a ``<script>`` element (table names are the user's)."""
    return json.dumps(value).replace("</", "<\\/")


def _div(fig: go.Figure, div_id: str) -> str:
    return pio.to_html(fig, include_plotlyjs=False, include_mathjax=False, full_html=False, div_id=div_id,
                       default_width="100%", default_height=480, validate=False,
                       config={"responsive": True, "displaylogo": False})


_FOLLOW = """<script type="text/javascript">
(function () {{
  const lead = document.getElementById({lead}), panes = {panes};
  function follow() {{
    if (!lead.on) {{ return setTimeout(follow, 50); }}
    lead.on("plotly_sliderchange", function (e) {{
      const k = e.slider.active;
      panes.forEach(function (p) {{ Plotly.update(document.getElementById(p.id), {{visible: p.masks[k]}}, p.layouts[k]); }});
    }});
  }}
  follow();
}})();
</script>"""


def handout_html(explorer: Explorer, prefix: str = "sl-handout") -> str:
    """``explorer`` as an offline HTML fragment: every pane with its frames, one slider over the
    main control's values (the initial view selected), the initial view's notes, and the values
    that could not be drawn, with why. Element ids start with ``prefix``."""
    control = explorer.controls[explorer.main]
    name = control.description or explorer.main
    start = control.value
    drawn, refused = frames(explorer, frame_values(control))
    parts = [f'<div class="sl-handout"><p class="sl-handout-note">Offline handout: the controls need a kernel '
             f"(<code>staleness-lab teach</code>); the slider under the first figure steps through "
             f"<b>{html.escape(name)}</b>, precomputed, with every other control as it starts.</p>"]
    if not drawn:
        parts.append(f'<p style="color:#b00020">No value of {html.escape(name)} could be drawn: '
                     f"{html.escape(refused[0] if refused else 'no values')}</p></div>")
        return "".join(parts)
    active = next((k for k, (v, _) in enumerate(drawn) if v == start), 0)
    follow = []
    for p, pane in enumerate(drawn[active][1]):
        base, masks, layouts = stacked([figs[pane] for _, figs in drawn], active)
        div_id = f"{prefix}-{p}"
        if p == 0:
            steps = [{"label": label(v), "method": "update", "args": [{"visible": m}, lay]}
                     for (v, _), m, lay in zip(drawn, masks, layouts)]
            base.update_layout(sliders=[{"active": active, "steps": steps, "pad": {"t": 60},
                                         "currentvalue": {"prefix": f"{name} = "}}],
                               margin={"b": max(base.layout.margin.b or 0, 120)})
        else:
            follow.append({"id": div_id, "masks": masks, "layouts": layouts})
        parts.append(_div(base, div_id))
    parts.append(_FOLLOW.format(lead=_script_json(f"{prefix}-0"), panes=_script_json(follow)))
    first = f"the first view ({html.escape(name)} = {html.escape(label(start))})"
    if explorer.reason is None:
        parts.append(f"<p><i>Below: {first}.</i></p>{explorer.notes}")
    else:
        parts.append(f"<p><i>{first.capitalize()} cannot be drawn: {html.escape(explorer.reason)}.</i></p>")
    if refused:
        parts.append("<p>Not drawn: " + "; ".join(html.escape(r) for r in refused) + ".</p>")
    parts.append("</div>")
    return "".join(parts)


def _bundle(explorer: Explorer, include: Any = None, exclude: Any = None) -> dict[str, str]:
    return {"text/html": handout_html(explorer, prefix=f"sl-handout-{id(explorer):x}"),
            "text/plain": f"{type(explorer).__name__} (offline handout)"}


def handout_mode() -> None:
    """Make the running IPython kernel display every explorer as its handout (:func:`handout_html`)
    instead of its live widget."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("handout_mode() needs an IPython kernel")
    shell.display_formatter.mimebundle_formatter.for_type(Explorer, _bundle)
