"""A figure pane that a redraw updates in place, in the page, with one ``Plotly.react``.

Handing the page each new figure as a plotly mime output costs the browser most of a redraw:
the output area builds a new renderer per output, and JupyterLab's plotly renderer (Voila uses
it too) draws the figure three times over (``react`` into a new element, a full ``redraw`` on its
first update, and a hidden copy for the PNG snapshot it stores in the output), so a duel of two
500-bar Gantt charts took over half a second to appear after the kernel had sent it.

Here a pane is a plain element that stays on the page (:attr:`PlotPane.widget`, an
``ipywidgets.HTML`` whose value never changes) and a hidden output that receives each figure as
a small script: the figure's JSON and one call that ``Plotly.react``\\ s the pane's element with
it (the DOM reused, the figure drawn once). plotly.js (the installed plotly package's own copy,
no network) reaches the page once per kernel through one shared hidden output,
:func:`plotly_loader`, which every explorer's box holds.

A drawn element carries ``__slDrawnAt`` (``performance.now()`` when its last ``react`` ended), by
which the browser tests and ``benchmarks/bench_teach.py`` time a redraw.
"""

from __future__ import annotations

import json
import re
import uuid
from functools import lru_cache
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go
import plotly.io as pio

from staleness_lab.viz.offline import plotly_js

#: A pane's height when its figure sets none (the reports' offline figures use the same).
HEIGHT = 480
#: plotly.js options, as the offline reports and handouts give them.
CONFIG = {"responsive": True, "displaylogo": False}

#: Defines ``window.stalenessLabDraw(key, stamp, fig)`` once per page: draw ``fig`` into every
#: element of pane ``key`` (an explorer shown twice has two) once plotly.js and the element
#: exist, unless a newer figure (a higher ``stamp``) was drawn there already.
_DRAW = """
window.stalenessLabDraw = window.stalenessLabDraw || function (key, stamp, fig) {
  var tries = 400;
  function draw() {
    var els = document.querySelectorAll('[data-sl-pane="' + key + '"]');
    if (!window.Plotly || !els.length) { if (tries-- > 0) { setTimeout(draw, 25); } return; }
    els.forEach(function (gd) {
      if ((gd.__slStamp || 0) > stamp) { return; }
      gd.__slStamp = stamp;
      gd.style.height = ((fig.layout && fig.layout.height) || %d) + 'px';
      window.Plotly.react(gd, fig.data, fig.layout, %s).then(function () { gd.__slDrawnAt = performance.now(); });
    });
  }
  draw();
};
""" % (HEIGHT, json.dumps(CONFIG))

_FIGURE = re.compile(r'<script type="application/json" class="sl-figure">(.*?)</script>', re.DOTALL)


def _script_json(value: str) -> str:
    """JSON text safe inside a ``<script>`` element (``</`` written ``<\\/``, as JSON allows)."""
    return value.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def _html_output(html: str) -> dict[str, Any]:
    return {"output_type": "display_data", "data": {"text/html": html, "text/plain": ""}, "metadata": {}}


@lru_cache(maxsize=1)
def plotly_loader() -> W.Output:
    """The one hidden output (per kernel) that brings plotly.js and the draw function to a page;
    every explorer's box holds it, and a page that shows it twice evaluates plotly.js once."""
    loader = W.Output(layout=W.Layout(display="none"))
    loader.outputs = (_html_output(f'<script type="text/javascript">{_DRAW}\nif (!window.Plotly) {{\n'
                                   f"{plotly_js()}\n}}</script>"),)
    return loader


class PlotPane:
    """One figure's place on the page: :attr:`widget` (the element, then the hidden output that
    carries the figures) and :meth:`show`."""

    def __init__(self) -> None:
        self.key = uuid.uuid4().hex
        self._stamp = 0
        self._element = W.HTML(f'<div class="sl-plot" data-sl-pane="{self.key}" style="width:100%;height:{HEIGHT}px">'
                               "</div>", layout=W.Layout(width="100%"))
        self._figures = W.Output(layout=W.Layout(display="none"))
        self.widget = W.VBox([self._element, self._figures], layout=W.Layout(flex="1 1 0", min_width="0"))

    def show(self, fig: go.Figure) -> None:
        """Send ``fig`` to the page: its element is redrawn in place."""
        self._stamp += 1
        text = _script_json(pio.to_json(fig, validate=False))
        self._figures.outputs = (_html_output(
            f'<script type="application/json" class="sl-figure">{text}</script>'
            f'<script type="text/javascript">(function (s) {{ window.stalenessLabDraw({json.dumps(self.key)}, '
            f"{self._stamp}, JSON.parse(s.previousElementSibling.textContent)); }})(document.currentScript);</script>"),)

    @property
    def shown(self) -> dict[str, Any] | None:
        """The figure the page was last sent, as plotly JSON (None before the first)."""
        for output in self._figures.outputs:
            found = _FIGURE.search(output["data"]["text/html"])
            if found:
                return json.loads(found.group(1))
        return None
