"""PlotPane: what a redraw sends the page is the figure, whole, in a script that cannot be cut
short by the figure's own text (table names are the user's), and the element it draws into
stays the same widget from one redraw to the next."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio

from staleness_lab.widgets.pane import PlotPane, plotly_loader


def test_a_figure_reaches_the_page_whole_and_in_place() -> None:
    pane = PlotPane()
    element = pane.widget.children[0]
    assert pane.shown is None and f'data-sl-pane="{pane.key}"' in element.value
    names = ["</script><script>alert(1)</script>", "<!-- a comment", "plain"]
    for k, name in enumerate(names, start=1):
        fig = go.Figure(go.Scatter(x=[0, 1], y=[k, k + 1], name=name))
        pane.show(fig)
        html = pane.widget.children[1].outputs[0]["data"]["text/html"]
        assert html.count("</script>") == 2 and "<!--" not in html  # the JSON's own text closes nothing
        assert f', {k}, JSON.parse(' in html  # each redraw a newer stamp, so an older one never overwrites it
        assert pane.shown == json.loads(pio.to_json(fig, validate=False))
        assert pane.widget.children[0] is element  # the element stays; only the figure it draws changes


def test_plotly_js_comes_once_per_kernel_in_one_shared_output() -> None:
    loader = plotly_loader()
    assert plotly_loader() is loader and loader.layout.display == "none"
    (output,) = loader.outputs
    script = output["data"]["text/html"]
    assert "window.stalenessLabDraw" in script and "if (!window.Plotly)" in script and "plotly.js v" in script
