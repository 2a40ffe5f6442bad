"""Figures for Bateni et al.'s experiments (digest ``shared/specs/bateni-staleness-stretch.md``,
§4 and §5): schedules side by side as Gantt charts (an engine run beside the exact optimum, E2)
and observed ratios against a theorem's bound over a sweep (X1, X2, X4).

They draw frames the experiments and the optimum already hold; nothing is computed beyond the
bar lengths and, for the bound line, the smallest finite bound at each x.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from staleness_lab.viz.figures import TIME_TITLE, _colors, _figure, _label, _markup, _require_columns


def _finish(frame: pd.DataFrame) -> str:
    """The column holding batch ends: an engine trace's ``finish`` or the optimum's ``end``."""
    return "finish" if "finish" in frame.columns else "end"


def schedules_gantt(schedules: Mapping[str, pd.DataFrame], *, title: str,
                    window: tuple[float, float] | None = None) -> go.Figure:
    """Several schedules of one workload stacked in one chart: a row per (schedule, track), a bar
    per batch from its start to its finish, one colour per table shared by every schedule.

    Each frame needs ``table``, ``track``, ``start`` and ``finish`` (a trace's ``jobs``) or
    ``end`` (the optimum's ``batches``). ``window=(t0, t1)`` zooms the time axis."""
    rows: list[str] = []
    tables: list[str] = []
    for frame in schedules.values():
        _require_columns(frame, ["table", "track", "start", _finish(frame)])
        tables += [str(t) for t in pd.unique(frame["table"]) if str(t) not in tables]
    fig = _figure(title, TIME_TITLE, "schedule · track", barmode="overlay", bargap=0.3, legend_title_text="table")
    colors = _colors(tables)
    shown: set[str] = set()
    for label, frame in schedules.items():
        end = _finish(frame)
        tracks = sorted(int(k) for k in pd.unique(frame["track"]))
        rows += [f"{label} · track {k}" for k in tracks]
        for name in tables:
            mine = frame[frame["table"].astype(str) == name]
            if mine.empty:
                continue
            fig.add_trace(go.Bar(
                name=name, legendgroup=name, showlegend=name not in shown, orientation="h",
                base=mine["start"].to_numpy(dtype=float), x=(mine[end] - mine["start"]).to_numpy(dtype=float),
                y=[f"{label} · track {int(k)}" for k in mine["track"]],
                marker=dict(color=colors[name], line=dict(color="white", width=0.5)),
                customdata=np.column_stack([mine["start"], mine[end]]),
                hovertemplate=(f"<b>{_markup(name)}</b> (%{{y}})<br>start %{{customdata[0]:.6g}}, "
                               "finish %{customdata[1]:.6g}<extra></extra>"),
            ))
            shown.add(name)
    fig.update_yaxes(categoryorder="array", categoryarray=rows, range=[len(rows) - 0.5, -0.5])
    if window is not None:
        fig.update_xaxes(range=[float(window[0]), float(window[1])])
    return fig


def ratio_vs_bound(frame: pd.DataFrame, x: str, observed: str, *, color: str, title: str, y_title: str,
                   bound: str | None = None, lines: Mapping[str, float] | None = None, log_y: bool = False) -> go.Figure:
    """Every row's ``observed`` ratio against ``x``, one colour per ``color`` value, side by side
    at each x (the grid's x values are categories, evenly spaced); the bound as a dashed line
    through the smallest finite ``bound`` at each x (a gap where none is finite, e.g. outside a
    theorem's range), and fixed reference ``lines`` (label -> value)."""
    _require_columns(frame, [x, observed, color, bound])
    fig = _figure(title, x, y_title, legend_title_text=color, scattermode="group", scattergap=0.35)
    order = sorted(pd.unique(frame[x]))
    labels = {v: _label(v) for v in order}
    groups = [str(g) for g in pd.unique(frame[color])]
    for name, shade in _colors(groups).items():
        part = frame[frame[color].astype(str) == name]
        fig.add_trace(go.Scatter(
            name=name, x=[labels[v] for v in part[x]], y=part[observed].to_numpy(dtype=float), mode="markers",
            marker=dict(color=shade, size=6, opacity=0.6),
            hovertemplate=f"<b>{_markup(name)}</b> {x} %{{x}}: %{{y:.5g}}<extra></extra>",
        ))
    if bound is not None:
        finite = frame[np.isfinite(frame[bound].to_numpy(dtype=float))]
        tightest = finite.groupby(x)[bound].min().reindex(order)
        fig.add_trace(go.Scatter(name=f"bound ({bound.replace('_', ' ')})", x=[labels[v] for v in order],
                                 y=tightest.to_numpy(dtype=float), mode="lines+markers", connectgaps=False,
                                 line=dict(color="black", dash="dash", width=2), marker=dict(symbol="line-ew-open"),
                                 xaxis="x2"))  # its own axis: centred on each x, not grouped with the runs
    categories = dict(type="category", categoryorder="array", categoryarray=[labels[v] for v in order])
    fig.update_layout(xaxis=categories, xaxis2=dict(categories, overlaying="x", matches="x", visible=False))
    for label, value in (lines or {}).items():
        fig.add_hline(y=value, line=dict(color="gray", dash="dot", width=1),
                      annotation_text=f"{label} = {_label(value)}", annotation_position="top left")
    if log_y:
        fig.update_yaxes(type="log")
    return fig
