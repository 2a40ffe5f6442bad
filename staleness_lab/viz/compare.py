"""Two schedulers on one workload, table by table (:func:`staleness_lab.api.duel`'s frame).

It draws the frame's columns; the difference is the frame's own, not computed here.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from staleness_lab.viz.figures import COLORWAY, _markup, _require_columns, blank

#: The difference bars: the right policy fresher (negative) or staler (positive) than the left.
BETTER, WORSE = "#2ca02c", "#d62728"


def duel_difference(frame: pd.DataFrame, left: str, right: str) -> go.Figure:
    """Per table, the priority-weighted staleness area under ``left`` and ``right`` side by
    side (above) and their difference right - left (below), each bar green where the right
    policy kept the table fresher and red where it let it go staler, its value printed on it.
    ``frame``: ``table``, ``left``, ``right``, ``difference`` (:attr:`~staleness_lab.api.Duel.difference`)."""
    _require_columns(frame, ["table", "left", "right", "difference"])
    tables = [str(t) for t in frame["table"]]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, figure=blank(),
                        subplot_titles=["weighted staleness per table", f"difference {_markup(right)} − {_markup(left)}"])
    for column, label, color in (("left", left, COLORWAY[0]), ("right", right, COLORWAY[1])):
        fig.add_trace(go.Bar(x=tables, y=frame[column].to_numpy(dtype=float), name=_markup(label),
                             marker=dict(color=color),
                             hovertemplate=f"<b>%{{x}}</b> under {_markup(label)}: %{{y:.4g}}<extra></extra>"),
                      row=1, col=1)
    diff = frame["difference"].to_numpy(dtype=float)
    fig.add_trace(go.Bar(x=tables, y=diff, name="difference", showlegend=False,
                         marker=dict(color=[BETTER if d < 0 else WORSE for d in diff]),
                         text=[f"{d:+.3g}" for d in diff], textposition="outside",
                         hovertemplate="<b>%{x}</b>: %{y:+.4g}<extra></extra>"), row=2, col=1)
    fig.update_layout(barmode="group", height=560, legend_title_text="policy",
                      title=dict(text=f"{_markup(left)} against {_markup(right)}: the same workload and seed"))
    fig.update_yaxes(title_text="priority × time²", row=1, col=1)
    fig.update_yaxes(title_text="right − left", row=2, col=1, zeroline=True)
    return fig
