"""Report 07's figures: freshness targets, certified bounds and observed lags along a view DAG,
the guarantee curve against the track count, and the schedulers' misses and excess (plotly
from tidy frames; nothing computed here but layout)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from staleness_lab.model import Workload
from staleness_lab.viz.figures import TEMPLATE

#: Colours of a budget verdict.
VERDICT_COLORS = {"guaranteed": "#1b5e20", "not guaranteed": "#b00020", "unknown": "#888888", "no target": "#cccccc"}


def _depths(workload: Workload) -> list[int]:
    """Each table's depth in the DAG: 0 for a base table, 1 + the deepest source for a view."""
    depth: dict[str, int] = {}

    def of(name: str) -> int:
        if name not in depth:
            sources = workload.tables[workload.index[name]].sources or ()
            depth[name] = 1 + max(of(s) for s in sources) if sources else 0
        return depth[name]

    return [of(t.name) for t in workload.tables]


def dag_lags(workload: Workload, budget: pd.DataFrame, *, title: str) -> go.Figure:
    """The view DAG, one node per table at its depth, coloured by its budget verdict, labelled
    with its target, certified bound and observed worst lag (``budget``: one row per table with
    a target, columns ``table``, ``target``, ``bound``, ``verdict``, ``observed_worst``)."""
    depths = _depths(workload)
    rows: dict[int, int] = {}
    pos = {}
    for k, t in enumerate(workload.tables):
        pos[t.name] = (depths[k], rows.get(depths[k], 0))
        rows[depths[k]] = rows.get(depths[k], 0) + 1
    by_name = budget.set_index("table")
    fig = go.Figure()
    for t in workload.tables:
        for s in t.sources or ():
            (x0, y0), (x1, y1) = pos[s], pos[t.name]
            fig.add_trace(go.Scatter(x=[x0, x1], y=[-y0, -y1], mode="lines", line={"color": "#bbbbbb"},
                                     hoverinfo="skip", showlegend=False))
    for verdict, color in VERDICT_COLORS.items():
        names = [t.name for t in workload.tables
                 if (by_name.loc[t.name, "verdict"] if t.name in by_name.index else "no target") == verdict]
        if not names:
            continue
        text = [name if name not in by_name.index else
                f"{name}<br>target {by_name.loc[name, 'target']:.0f} · bound {by_name.loc[name, 'bound']:.0f}"
                f"<br>observed {by_name.loc[name, 'observed_worst']:.0f}" for name in names]
        fig.add_trace(go.Scatter(x=[pos[n][0] for n in names], y=[-pos[n][1] for n in names], mode="markers+text",
                                 marker={"size": 16, "color": color}, text=text, textposition="bottom center",
                                 name=verdict))
    fig.update_layout(template=TEMPLATE, title=title, height=140 + 110 * max(rows.values()),
                      xaxis={"title": "depth in the DAG (0: base tables)", "dtick": 1},
                      yaxis={"visible": False}, legend={"title": "budget verdict"})
    return fig


def lags_vs_bounds(budget: pd.DataFrame, *, title: str) -> go.Figure:
    """Per table (x, file order), its target, certified bound and observed worst lag (log y)."""
    fig = go.Figure()
    for column, name, color in (("target", "target", "#1f77b4"), ("bound", "certified bound A(V_k)", "#d62728"),
                                ("observed_worst", "observed worst lag", "#2ca02c")):
        fig.add_trace(go.Bar(x=budget["table"], y=budget[column], name=name, marker_color=color))
    fig.update_layout(template=TEMPLATE, title=title, barmode="group", yaxis={"type": "log", "title": "lag"})
    return fig


def guarantee_curve(curve: pd.DataFrame, *, title: str) -> go.Figure:
    """Guaranteed tables against the track count m, one line per target scale, one panel per
    workload (``curve``: ``workload``, ``scale``, ``tracks``, ``guaranteed``, ``targeted``)."""
    workloads = list(dict.fromkeys(curve["workload"]))
    fig = make_subplots(rows=1, cols=len(workloads), subplot_titles=workloads, shared_yaxes=False)
    for col, workload in enumerate(workloads, start=1):
        part = curve[curve["workload"] == workload]
        for scale, line in part.groupby("scale", sort=True):
            fig.add_trace(go.Scatter(x=line["tracks"], y=line["guaranteed"], mode="lines+markers",
                                     name=f"targets x{scale:g}", legendgroup=f"{scale:g}", showlegend=col == 1,
                                     line={"shape": "hv"}), row=1, col=col)
        fig.add_hline(y=int(part["targeted"].iloc[0]), line_dash="dot", line_color="#888", row=1, col=col)
        fig.update_xaxes(title_text="tracks m", dtick=1, row=1, col=col)
    fig.update_yaxes(title_text="tables guaranteed (dotted: all)", row=1, col=1)
    fig.update_layout(template=TEMPLATE, title=title)
    return fig


def misses_and_excess(summary: pd.DataFrame, *, title: str) -> go.Figure:
    """Per workload and policy, mean misses and excess per run (``summary``: ``workload``,
    ``policy``, ``misses``, ``excess``), side by side."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["miss episodes per run", "excess (area above target) per run"])
    for workload, part in summary.groupby("workload", sort=False):
        fig.add_trace(go.Bar(x=part["policy"], y=part["misses"], name=workload, legendgroup=workload), row=1, col=1)
        fig.add_trace(go.Bar(x=part["policy"], y=part["excess"], name=workload, legendgroup=workload, showlegend=False),
                      row=1, col=2)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_layout(template=TEMPLATE, title=title, barmode="group")
    return fig
