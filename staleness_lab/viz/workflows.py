"""Olston's workflows drawn: the graph of channels and operators, and a run's cost and lag
over time (they plot; the runs come from :func:`staleness_lab.workflows.sim.run`)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from staleness_lab.viz.figures import _colors, _figure, _markup, _require_columns
from staleness_lab.workflows.model import Workflow


def _layers(wf: Workflow) -> dict[str, int]:
    """Each channel's and operator's column: inputs at 0, an operator one right of its inputs,
    its outputs one right of it."""
    column = {ch.name: 0 for ch in wf.inputs()}
    for op in wf.topological_operators():
        column[op.name] = 1 + max(column.get(name, 0) for name in op.inputs)
        for out in op.outputs:
            column[out] = max(column.get(out, 0), column[op.name] + 1)
    return column


def workflow_graph(wf: Workflow, title: str | None = None) -> go.Figure:
    """Channels (circles: inputs green, outputs red, the rest grey) and operators (squares,
    labelled with their widget), left to right in dataflow order."""
    column = _layers(wf)
    rows: dict[int, int] = {}
    at: dict[str, tuple[float, float]] = {}
    for name in [ch.name for ch in wf.channels] + [op.name for op in wf.topological_operators()]:
        x = column[name]
        at[name] = (float(x), -float(rows.get(x, 0)))
        rows[x] = rows.get(x, 0) + 1
    fig = _figure(title or f"{wf.name}: channels and operators", "", "")
    xs: list[float | None] = []
    ys: list[float | None] = []
    for op in wf.topological_operators():
        for a, b in [(i, op.name) for i in op.inputs] + [(op.name, o) for o in op.outputs]:
            xs += [at[a][0], at[b][0], None]
            ys += [at[a][1], at[b][1], None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"color": "#bbbbbb", "width": 1.5},
                             hoverinfo="skip", showlegend=False))
    outputs = {ch.name for ch in wf.outputs()}
    groups = {"input channel": [c.name for c in wf.inputs()],
              "output channel": [c.name for c in wf.channels if c.name in outputs],
              "channel": [c.name for c in wf.channels if c.input is None and c.name not in outputs]}
    colors = {"input channel": "#2ca02c", "output channel": "#d62728", "channel": "#7f7f7f"}
    for label, names in groups.items():
        fig.add_trace(go.Scatter(x=[at[n][0] for n in names], y=[at[n][1] for n in names], mode="markers+text",
                                 marker={"size": 16, "color": colors[label]}, text=[_markup(n) for n in names],
                                 textposition="bottom center", name=label))
    ops = wf.topological_operators()
    fig.add_trace(go.Scatter(x=[at[o.name][0] for o in ops], y=[at[o.name][1] for o in ops], mode="markers+text",
                             marker={"size": 14, "symbol": "square", "color": "#1f77b4"},
                             text=[_markup(f"{o.name} ({o.widget})") for o in ops], textposition="top center",
                             name="operator"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=140 + 90 * max(rows.values()))
    return fig


def cost_over_time(invocations: Mapping[str, pd.DataFrame], *, title: str) -> go.Figure:
    """Cumulative processing cost (CPU-h) against time, one line per run (``invocations``: the
    runs' ``invocations`` frames by label)."""
    fig = _figure(title, "time (h)", "cumulative cost (CPU-h)")
    colors = _colors(invocations)
    for label, frame in invocations.items():
        done = frame.sort_values("end")
        fig.add_trace(go.Scatter(x=done["end"], y=done["cost_cpu_h"].cumsum(), mode="lines", name=_markup(label),
                                 line={"color": colors[label], "shape": "hv"}))
    return fig


def lag_over_time(episodes: Mapping[str, pd.DataFrame], *, title: str) -> go.Figure:
    """Each staleness episode's lag (CPU-h) at the time it started, one series per run
    (``episodes``: the runs' ``episodes`` frames by label)."""
    fig = _figure(title, "episode start (h)", "lag (CPU-h)")
    colors = _colors(episodes)
    for label, frame in episodes.items():
        mine = frame[frame["bound"].str.startswith("staleness")]
        fig.add_trace(go.Scatter(x=mine["start"], y=mine["lag_cpu_h"], mode="markers", name=_markup(label),
                                 marker={"color": colors[label], "size": 5}))
    fig.update_yaxes(type="log")
    return fig


def scheduler_scaling(frame: pd.DataFrame, *, title: str, targets_ms: Mapping[str, float]) -> go.Figure:
    """Scheduler CPU per call (ms, log scale) against the cascade size ``k``: median, 95th
    percentile and max per run (``frame``: the ``scaling`` grid's rows, several seeds pooled by
    their worst), the materialized blocks a call sees in the hover, and each target in
    ``targets_ms`` (label -> ms) as a dashed line."""
    _require_columns(frame, ["k", "call_ms_median", "call_ms_p95", "call_ms_max", "blocks_median"])
    worst = frame.groupby("k").max(numeric_only=True).reset_index()
    fig = _figure(title, "k (inputs of the cascade)", "scheduler CPU per call (ms)")
    for column, name in (("call_ms_median", "median"), ("call_ms_p95", "95th percentile"), ("call_ms_max", "max")):
        fig.add_trace(go.Scatter(x=worst["k"], y=worst[column], mode="lines+markers", name=name,
                                 customdata=worst[["blocks_median"]],
                                 hovertemplate="k=%{x}: %{y:.3g} ms, median blocks %{customdata[0]:.0f}"))
    for label, ms in targets_ms.items():
        fig.add_hline(y=ms, line_dash="dash", annotation_text=_markup(label))
    fig.update_yaxes(type="log")
    return fig


def sensitivity_map(frame: pd.DataFrame, *, title: str) -> go.Figure:
    """Where each claim holds over a grid of two unprinted numbers (the tidy frame of
    :func:`staleness_lab.experiments.olston.verdicts.sensitivity`): one heatmap per claim,
    green where it holds, red where not, grey where a run failed, each cell labelled with its
    value (an order's smallest step ratio minus 1, or check 10's ratio)."""
    from plotly.subplots import make_subplots

    _require_columns(frame, ["claim", "x", "x_value", "y", "y_value", "value", "holds"])
    claims = list(dict.fromkeys(frame["claim"]))
    cols = min(3, max(1, len(claims)))
    fig = make_subplots(rows=-(-len(claims) // cols), cols=cols, subplot_titles=claims,
                        horizontal_spacing=0.08, vertical_spacing=0.16)
    for k, claim in enumerate(claims):
        mine = frame[frame["claim"] == claim]
        xs, ys = sorted(mine["x_value"].unique()), sorted(mine["y_value"].unique())
        cell = mine.set_index(["y_value", "x_value"])
        z = [[_holds_code(cell.loc[(y, x), "holds"]) if (y, x) in cell.index else None for x in xs] for y in ys]
        text = [[f"{cell.loc[(y, x), 'value']:.3g}" if (y, x) in cell.index else "" for x in xs] for y in ys]
        row, col = k // cols + 1, k % cols + 1
        fig.add_trace(go.Heatmap(z=z, x=[f"{x:g}" for x in xs], y=[f"{y:g}" for y in ys], text=text,
                                 texttemplate="%{text}", zmin=0, zmax=2, showscale=False,
                                 colorscale=[[0, "#d62728"], [0.5, "#bbbbbb"], [1, "#2ca02c"]],
                                 hovertemplate=f"{mine['x'].iloc[0]} %{{x}}, {mine['y'].iloc[0]} %{{y}}: %{{text}}"
                                               "<extra></extra>"), row=row, col=col)
        fig.update_xaxes(title_text=mine["x"].iloc[0], type="category", row=row, col=col)
        fig.update_yaxes(title_text=mine["y"].iloc[0], type="category", row=row, col=col)
    fig.update_layout(title=title, height=320 * (-(-len(claims) // cols)) + 60)
    return fig


def _holds_code(holds: object) -> float:
    """A cell's colour: 2 holds, 0 does not, 1 undecided (a failed run)."""
    return 2.0 if holds is True else 0.0 if holds is False else 1.0
