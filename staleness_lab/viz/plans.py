"""Figures of intermittent-query batch plans (:class:`~staleness_lab.intermittent.BatchPlan`).

They read the plan's tidy frames (``batches``, ``queries``) and draw them; nothing is computed
beyond the bar lengths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from staleness_lab.errors import InputError
from staleness_lab.viz.figures import _colors, _figure, _markup

SECONDS_TITLE = "time (s)"


def batch_gantt(plan: Any, window: tuple[float, float] | None = None, title: str | None = None) -> go.Figure:
    """A plan's schedule: one row per executor, a bar per batch (solid) and per final
    aggregation (hatched), one colour per query, and each query's deadline as a dashed line in
    its colour (a cross marks a late completion). Hovering a bar shows the query, the tuples
    it holds, its start, end and cost.

    ``window=(t0, t1)`` zooms the time axis (default: from the first start to the last of the
    completions and deadlines).
    """
    batches = plan.batches
    queries = plan.queries
    names = [q.name for q in plan.queryset.queries]
    executors = [f"executor {k}" for k in range(plan.queryset.executors)]
    fig = _figure(title or f"Plan of {plan.scheme}: batches per executor, deadlines dashed",
                  SECONDS_TITLE, "executor", barmode="overlay", bargap=0.3, legend_title_text="query")
    deadlines = []
    for name, color in _colors(names).items():
        mine = batches[batches["query"] == name]
        for kind, pattern in (("batch", ""), ("aggregate", "/")):
            rows = mine[mine["kind"] == kind]
            if rows.empty:
                continue
            custom = np.column_stack([rows["first"].astype("float"), rows["last"].astype("float"), rows["start"],
                                      rows["end"], rows["cost"], rows["size"]])
            what = ("tuples %{customdata[0]:.0f}-%{customdata[1]:.0f} (%{customdata[5]:.0f})" if kind == "batch"
                    else "final aggregation of %{customdata[5]:.0f} partials")
            fig.add_trace(go.Bar(
                name=name, legendgroup=name, showlegend=kind == "batch", orientation="h",
                base=rows["start"].to_numpy(), x=(rows["end"] - rows["start"]).to_numpy(),
                y=[executors[k] for k in rows["executor"]],
                marker=dict(color=color, pattern=dict(shape=pattern), line=dict(color="white", width=0.5)),
                customdata=custom,
                hovertemplate=(f"<b>{_markup(name)}</b> on %{{y}}<br>{what}<br>start %{{customdata[2]:.4g}}, "
                               "end %{customdata[3]:.4g}<br>cost %{customdata[4]:.4g} s<extra></extra>"),
            ))
        row = queries[queries["query"] == name].iloc[0]
        deadlines.append(_vertical_line(float(row["deadline"]), color))
        if row["late"] is not pd.NA and bool(row["late"]):
            fig.add_trace(go.Scatter(
                x=[row["completion"]], y=[executors[0]], mode="markers", legendgroup=name, showlegend=False,
                marker=dict(symbol="x", size=11, color=color, line=dict(width=1, color="black")),
                hovertemplate=f"<b>{_markup(name)}</b> late: done %{{x:.4g}}, due {row['deadline']:.4g}<extra></extra>",
            ))
    if window is not None:
        if not window[0] < window[1]:
            raise InputError("window", f"must be (start, end) with start < end, got {window}")
        fig.update_xaxes(range=[float(window[0]), float(window[1])])
    elif not batches.empty:
        end = max(float(batches["end"].max()), float(queries["deadline"].max()))
        start = float(batches["start"].min())
        fig.update_xaxes(range=[start - 0.02 * (end - start), end + 0.02 * (end - start)])
    fig.update_yaxes(categoryorder="array", categoryarray=executors, range=[len(executors) - 0.5, -0.5])
    fig.update_layout(shapes=deadlines)
    return fig


def _vertical_line(x: float, color: str) -> dict[str, Any]:
    """A dashed line at ``x`` across the plot's height: the shape ``Figure.add_vline`` adds, built
    directly (``add_vline`` re-validates the whole layout per line, a third of a redraw's drawing
    in the batch-plan explorer)."""
    return dict(type="line", xref="x", yref="y domain", x0=x, x1=x, y0=0, y1=1,
                line=dict(color=color, dash="dash", width=1))


def category_heatmap(frame: pd.DataFrame, row: str, col: str, value: str, *, title: str,
                     value_title: str | None = None, row_order: list[Any] | None = None,
                     col_order: list[Any] | None = None) -> go.Figure:
    """The mean of ``value`` over the rows of ``frame`` in each (``row``, ``col``) cell as an
    annotated heatmap (e.g. deadline misses per policy and rate profile, averaged over seeds)."""
    for column in (row, col, value):
        if column not in frame.columns:
            raise InputError("frame", f"has no column {column!r}")
    table = frame.groupby([row, col], sort=False)[value].mean().unstack(col)
    if row_order is not None:
        table = table.reindex([r for r in row_order if r in table.index])
    if col_order is not None:
        table = table[[c for c in col_order if c in table.columns]]
    fig = _figure(title, col, row)
    fig.add_trace(go.Heatmap(
        z=table.to_numpy(dtype=float), x=[str(c) for c in table.columns], y=[str(r) for r in table.index],
        colorscale="Reds", zmin=0, text=np.vectorize(lambda v: f"{v:.3g}")(table.to_numpy(dtype=float)),
        texttemplate="%{text}", colorbar=dict(title=dict(text=value_title or value)),
        hovertemplate=f"{row} %{{y}}, {col} %{{x}}: %{{z:.4g}}<extra></extra>",
    ))
    fig.update_yaxes(autorange="reversed")
    return fig


def ratio_boxes(frame: pd.DataFrame, x: str, y: str, color: str, *, title: str, y_title: str) -> go.Figure:
    """The distribution of ``y`` (e.g. heuristic cost over the optimum's) per ``x`` category,
    one box per ``color`` value, every point shown."""
    for column in (x, y, color):
        if column not in frame.columns:
            raise InputError("frame", f"has no column {column!r}")
    fig = _figure(title, x, y_title, boxmode="group", legend_title_text=color)
    groups = list(pd.unique(frame[color]))
    for name, shade in _colors(map(str, groups)).items():
        part = frame[frame[color].astype(str) == name]
        fig.add_trace(go.Box(name=name, x=part[x].astype(str), y=part[y], marker=dict(color=shade, size=4),
                             boxpoints="all", jitter=0.3, pointpos=0))
    return fig


def cost_fits(points: pd.DataFrame, fits: pd.DataFrame, *, title: str) -> go.Figure:
    """Fig. 3: measured batch time against batch size (``points``: query, size, seconds) with
    each query's fitted line ``S + R·x`` (``fits``: query, S, R) drawn over the measured sizes."""
    for frame, columns in ((points, ("query", "size", "seconds")), (fits, ("query", "S", "R"))):
        for column in columns:
            if column not in frame.columns:
                raise InputError("frame", f"has no column {column!r}")
    fig = _figure(title, "batch size (files)", "time (s)", legend_title_text="query")
    for name, shade in _colors(map(str, pd.unique(points["query"]))).items():
        mine = points[points["query"].astype(str) == name].sort_values("size")
        fig.add_trace(go.Scatter(x=mine["size"], y=mine["seconds"], mode="markers", name=name, legendgroup=name,
                                 marker=dict(color=shade, size=7)))
        line = fits[fits["query"].astype(str) == name]
        if len(line):
            S, R = float(line["S"].iloc[0]), float(line["R"].iloc[0])
            xs = np.array([mine["size"].min(), mine["size"].max()], dtype=float)
            fig.add_trace(go.Scatter(x=xs, y=S + R * xs, mode="lines", name=f"{name}: {S:.3g} + {R:.3g}·x",
                                     legendgroup=name, line=dict(color=shade, dash="dash")))
    return fig
