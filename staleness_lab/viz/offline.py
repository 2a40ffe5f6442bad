"""Figures that work offline: in JupyterLab and in the HTML reports, with no network.

:func:`use_offline_renderer` makes plotly display every figure as a mime bundle with
``application/vnd.plotly.v1+json`` (JupyterLab's plotly extension renders it natively) and
``text/html`` (a div plus a ``Plotly.newPlot`` call, *without* plotly.js and without MathJax).
The report step puts plotly.js (from the installed plotly package) into each page once
(:func:`plotly_js_script`) and drops any script or stylesheet that would come from the network
(:func:`strip_network_assets`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer, PlotlyRenderer

#: The renderer's name in ``plotly.io.renderers``.
RENDERER = "staleness_lab_offline"
PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"


class OfflineRenderer(MimetypeRenderer):
    """Plotly's JSON mime type plus an HTML div that expects ``window.Plotly`` to exist."""

    def __init__(self, config: dict[str, Any] | None = None, height: int = 480) -> None:
        self.config = {"responsive": True, "displaylogo": False, **(config or {})}
        self.height = height

    def to_mimebundle(self, fig_dict: dict[str, Any]) -> dict[str, Any]:
        html = pio.to_html(
            fig_dict,
            config=self.config,
            include_plotlyjs=False,
            include_mathjax=False,
            full_html=False,
            default_width="100%",
            default_height=self.height,
            validate=False,
        )
        bundle = PlotlyRenderer(config=self.config).to_mimebundle(dict(fig_dict))
        bundle["text/html"] = html
        return bundle


def use_offline_renderer() -> str:
    """Register the offline renderer and make it plotly's default (idempotent); its name."""
    if RENDERER not in pio.renderers:
        pio.renderers[RENDERER] = OfflineRenderer()
    pio.renderers.default = RENDERER
    return RENDERER


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.min.js as shipped in the installed plotly package."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def plotly_js_script() -> str:
    """plotly.js inline in one ``<script>`` element (no ``src``, no module loader)."""
    return f'<script type="text/javascript">\n{plotly_js()}\n</script>'


_REMOTE = r"""(?:https?:)?//"""
_REMOTE_SCRIPT = re.compile(
    r"""<script\b[^>]*\ssrc\s*=\s*["']?""" + _REMOTE + r"""[^>]*>.*?</script\s*>""", re.IGNORECASE | re.DOTALL
)
_REMOTE_LINK = re.compile(r"""<link\b[^>]*\shref\s*=\s*["']?""" + _REMOTE + r"""[^>]*>""", re.IGNORECASE)


def strip_network_assets(html: str) -> str:
    """``html`` without ``<script src="http(s)://...">`` elements and ``<link href="http(s)://...">``
    tags (CDN require.js, MathJax, fonts): a report must render with no network."""
    return _REMOTE_LINK.sub("", _REMOTE_SCRIPT.sub("", html))
