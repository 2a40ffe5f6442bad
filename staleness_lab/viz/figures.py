"""Plotly figures from traces and tidy frames.

The figures draw what a :class:`~staleness_lab.sim.Trace` or an experiment's DataFrame already
holds; the only arithmetic here is reshaping (a job's bar runs from ``start`` to ``finish``; the
staleness sawtooth joins ``t - F_i(t)`` at the update instants) and, in
:func:`metric_vs_utilization`, the mean and confidence band over seeds that the chart shows.
"""

from __future__ import annotations

import functools
import html
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from staleness_lab.errors import InputError
from staleness_lab.sim.trace import Trace
from staleness_lab.stats import t_quantile_975

#: The name of the workbench's plotly template (registered on import, layered on plotly_white).
TEMPLATE = "staleness_lab"
#: Colours in order; tables and policies take them by position.
COLORWAY = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)

pio.templates[TEMPLATE] = go.layout.Template(
    layout=go.Layout(
        colorway=list(COLORWAY),
        font=dict(family="Helvetica, Arial, sans-serif", size=13),
        title=dict(x=0.0, xanchor="left", font=dict(size=16)),
        margin=dict(l=70, r=20, t=70, b=60),
        hovermode="closest",
        legend=dict(title=dict(font=dict(size=12))),
    )
)
_TEMPLATE_STACK = f"plotly_white+{TEMPLATE}"

#: Axis titles (with units) for the columns experiments produce; other columns show their name.
AXIS_TITLES = {
    "offered_utilization": "offered utilization per track (share of capacity)",
    "utilization": "target utilization per track (share of capacity)",
    "relative_lateness": "relative lateness (× no contention)",
    "weighted_staleness": "total weighted staleness (priority × time²)",
    "mean_staleness": "mean staleness over tables (time units)",
    "max_staleness": "max staleness (time units)",
    "tracks": "tracks",
    "n_tables": "tables",
}
TIME_TITLE = "time (time units)"
STALENESS_TITLE = "staleness S(t) = t − F(t) (time units)"


def _axis_title(column: str) -> str:
    return AXIS_TITLES.get(column, column.replace("_", " "))


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[k : k + 2], 16) for k in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _label(value: Any) -> str:
    """A curve's legend label: floats without a trailing ``.0`` (``S = 2``, not ``2.0``)."""
    return f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)


def _markup(text: object) -> str:
    """``text`` for plotly's HTML-like labels (hover templates): ``&``, ``<`` and ``>`` as entities,
    which plotly shows as the characters, so a table name like ``<b>x</b>`` stays text. Quotes
    stay as they are (plotly knows no ``&quot;``)."""
    return html.escape(str(text), quote=False)


def _colors(names: Iterable[str]) -> dict[str, str]:
    return {name: COLORWAY[k % len(COLORWAY)] for k, name in enumerate(names)}


@functools.lru_cache(maxsize=1)
def _template_json() -> str:
    """:data:`_TEMPLATE_STACK` merged and validated once, as JSON text."""
    return json.dumps(pio.templates.merge_templates("plotly_white", TEMPLATE).to_plotly_json())


def blank() -> go.Figure:
    """An empty figure in the workbench's template. The merged template is given as checked
    JSON without validating it again: merging and validating ``plotly_white+staleness_lab`` cost
    30-40 ms per figure, most of a teaching explorer's redraw; the figure is the same (what is
    set on it afterwards is validated as ever)."""
    return go.Figure(layout={"template": json.loads(_template_json())}, _validate=False)


def _figure(title: str, x_title: str, y_title: str, **layout) -> go.Figure:
    """A blank figure with its title, axis titles and ``layout``, set in one update (three took
    twice as long, a few ms of every explorer figure)."""
    fig = blank()
    fig.update_layout(title=dict(text=title), xaxis=dict(title=dict(text=x_title)),
                      yaxis=dict(title=dict(text=y_title)), **layout)
    return fig


def _require_columns(frame: pd.DataFrame, columns: Iterable[str | None]) -> None:
    for column in columns:
        if column is not None and column not in frame.columns:
            raise InputError("frame", f"has no column {column!r} (it has: {', '.join(map(str, frame.columns))})")


# --- traces -----------------------------------------------------------------------------------


def gantt(trace: Trace, window: tuple[float, float] | None = None) -> go.Figure:
    """The schedule: one horizontal bar per completed job on its track, from start to finish,
    one colour (and legend entry) per table in workload order. Hovering a bar shows the table,
    the data it loaded (data_from, data_to], its release, start, finish and cost.

    ``window=(t0, t1)`` keeps the jobs overlapping it and zooms the time axis to it (the
    default shows ``[0, horizon]``). Jobs still running at the horizon are not drawn.
    """
    w = trace.workload
    t0, t1 = (0.0, w.horizon) if window is None else (float(window[0]), float(window[1]))
    if not t0 < t1:
        raise InputError("window", f"must be (start, end) with start < end, got {window}")
    jobs = trace.jobs
    jobs = jobs[(jobs["finish"] > t0) & (jobs["start"] < t1)]
    tracks = [f"track {k}" for k in range(w.tracks)]
    names = [t.name for t in w.tables]
    fig = _figure(
        f"Schedule under {trace.policy}: update jobs per track",
        TIME_TITLE,
        "track",
        barmode="overlay",
        bargap=0.25,
        legend_title_text="table",
    )
    for name, color in _colors(names).items():
        mine = jobs[jobs["table"] == name]
        custom = np.column_stack(
            [mine["data_from"], mine["data_to"], mine["release"], mine["start"], mine["finish"], mine["cost"]]
        ) if len(mine) else np.empty((0, 6))
        fig.add_trace(
            go.Bar(
                name=name,
                orientation="h",
                base=mine["start"].to_numpy(),
                x=(mine["finish"] - mine["start"]).to_numpy(),
                y=[tracks[k] for k in mine["track"]],
                marker=dict(color=color, line=dict(color="white", width=0.5)),
                customdata=custom,
                hovertemplate=(
                    f"<b>{_markup(name)}</b> on %{{y}}<br>"
                    "data (%{customdata[0]:.4g}, %{customdata[1]:.4g}]<br>"
                    "release %{customdata[2]:.4g}<br>"
                    "start %{customdata[3]:.4g}, finish %{customdata[4]:.4g}<br>"
                    "cost %{customdata[5]:.4g}<extra></extra>"
                ),
            )
        )
    fig.update_yaxes(categoryorder="array", categoryarray=tracks, range=[len(tracks) - 0.5, -0.5])
    fig.update_xaxes(range=[t0, t1])
    return fig


def staleness_curves(trace: Trace, tables: Sequence[str] | None = None) -> go.Figure:
    """The staleness sawtooth S_i(t) = t - F_i(t) of each table (all, or those named in
    ``tables``) over ``[0, horizon]``, from the freshness step functions in ``trace.freshness``:
    S rises with slope 1 and drops when an update lands, so the line's vertices are t = 0, each
    update instant twice (S just before and just after it) and the horizon."""
    w = trace.workload
    known = [t.name for t in w.tables]
    chosen = known if tables is None else list(tables)
    for name in chosen:
        if name not in known:
            raise InputError("tables", f"unknown table {name!r} (the workload has: {', '.join(known)})")
    colors = _colors(known)
    fresh = trace.freshness
    fig = _figure(f"Staleness of each table under {trace.policy}", TIME_TITLE, STALENESS_TITLE, legend_title_text="table")
    for name in chosen:
        steps = fresh[fresh["table"] == name]
        times = steps["time"].to_numpy(dtype=float)
        values = steps["freshness"].to_numpy(dtype=float)
        # vertices: (0, S(0)), then per update k >= 1: (t_k, t_k - F_{k-1}), (t_k, t_k - F_k), then the horizon
        x = np.concatenate([[times[0]], np.repeat(times[1:], 2), [w.horizon]])
        before_after = np.column_stack([values[:-1], values[1:]]).ravel()
        f = np.concatenate([[values[0]], before_after, [values[-1]]])
        fig.add_trace(
            go.Scatter(
                name=name,
                x=x,
                y=x - f,
                mode="lines",
                line=dict(color=colors[name], width=1.5),
                hovertemplate=f"<b>{_markup(name)}</b><br>t %{{x:.4g}}<br>S %{{y:.4g}}<extra></extra>",
            )
        )
    fig.update_xaxes(range=[0.0, w.horizon])
    return fig


# --- tidy frames ------------------------------------------------------------------------------


def _seed_stats(values: pd.Series) -> pd.Series:
    """Mean and band over one point's seeds: mean ± t-based 95 % CI with >= 2 seeds, else
    min..max; NaN when any seed is NaN (an infeasible point stays a gap)."""
    n = len(values)
    if values.isna().any():
        return pd.Series({"mean": math.nan, "low": math.nan, "high": math.nan, "n": n})
    mean = float(values.mean())
    if n >= 2:
        half = t_quantile_975(n - 1) * float(values.std(ddof=1)) / math.sqrt(n)
        return pd.Series({"mean": mean, "low": mean - half, "high": mean + half, "n": n})
    return pd.Series({"mean": mean, "low": float(values.min()), "high": float(values.max()), "n": n})


def _band_polygon(xs: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[list, list]:
    """Outline of a band with gaps: per run of finite points, the upper edge left to right and
    the lower edge right to left, runs separated by ``None`` (plotly's fill="toself" closes and
    fills each run on its own)."""
    band_x: list = []
    band_y: list = []
    finite = np.isfinite(low) & np.isfinite(high)
    k = 0
    while k < len(xs):
        if not finite[k]:
            k += 1
            continue
        end = k
        while end < len(xs) and finite[end]:
            end += 1
        if band_x:
            band_x.append(None)
            band_y.append(None)
        band_x += [*map(float, xs[k:end]), *map(float, xs[k:end][::-1])]
        band_y += [*map(float, high[k:end]), *map(float, low[k:end][::-1])]
        k = end
    return band_x, band_y


def metric_vs_utilization(
    frame: pd.DataFrame,
    x: str = "offered_utilization",
    y: str = "relative_lateness",
    color: str = "policy",
    seed: str | None = "seed",
    *,
    title: str | None = None,
) -> go.Figure:
    """One line per ``color`` value (policy): the mean of ``y`` over seeds at each ``x``, with a
    filled band (mean ± t-based 95 % confidence interval, or min..max with fewer than two seeds).

    Points that are NaN (or where any seed is NaN, or that the frame lacks for a policy) are
    gaps: the line is not joined across them and nothing is drawn as zero. ``x`` values equal
    to 9 decimals are one point. With a ``seed`` column, each (color, x, seed) must occur once,
    so that a parameter varying on the side is not silently averaged over.

    Traces, per policy in order of first appearance: the band, then the mean line. The band is
    one filled outline per run of consecutive non-NaN points (upper edge forward, lower edge
    back, ``None`` between runs, which plotly fills separately), so each mean point has exactly
    one upper and one lower band vertex at its x and a gap in the line is a gap in the band.
    """
    _require_columns(frame, [x, y, color, seed])
    data = frame[[c for c in dict.fromkeys([color, x, y, seed]) if c is not None]].copy()
    data["_x"] = data[x].astype(float).round(9)
    if seed is not None:
        dup = data.duplicated([color, "_x", seed])
        if dup.any():
            first = data[dup].iloc[0]
            raise InputError(
                "frame",
                f"has several rows for {color}={first[color]!r}, {x}={first[x]!r}, {seed}={first[seed]!r}: "
                "filter the frame to one row per seed first",
            )
    xs = np.sort(data["_x"].unique())
    groups = list(pd.unique(data[color]))
    colors = _colors(map(_label, groups))
    fig = _figure(
        title or f"{_axis_title(y).split(' (')[0].capitalize()} against {_axis_title(x).split(' (')[0]}",
        _axis_title(x),
        _axis_title(y),
        legend_title_text=color,
        hovermode="x unified",
    )
    for group in groups:
        stats = (
            data[data[color] == group]
            .groupby("_x")[y]
            .apply(_seed_stats)
            .unstack()
            .reindex(xs)
        )
        name = _label(group)
        band = "95% CI" if (stats["n"] >= 2).any() else "min–max"
        band_x, band_y = _band_polygon(xs, stats["low"].to_numpy(dtype=float), stats["high"].to_numpy(dtype=float))
        fig.add_trace(
            go.Scatter(name=f"{name} {band}", x=band_x, y=band_y, mode="lines", fill="toself",
                       fillcolor=_rgba(colors[name], 0.18), line=dict(color=colors[name], width=0),
                       legendgroup=name, showlegend=False, hoverinfo="skip")
        )
        fig.add_trace(
            go.Scatter(
                name=name,
                x=xs,
                y=stats["mean"].to_numpy(dtype=float),
                mode="lines+markers",
                line=dict(color=colors[name], width=2),
                marker=dict(size=6),
                connectgaps=False,
                legendgroup=name,
                customdata=np.column_stack([stats["low"], stats["high"], stats["n"].fillna(0)]),
                hovertemplate=(
                    f"<b>{_markup(name)}</b> %{{y:.4g}} "
                    f"({band} %{{customdata[0]:.4g}}..%{{customdata[1]:.4g}}, %{{customdata[2]}} seeds)<extra></extra>"
                ),
            )
        )
    return fig


def bound_vs_observed(
    frame: pd.DataFrame,
    x: str,
    bound: str,
    observed: str,
    group: str | None = None,
    *,
    title: str | None = None,
    y_title: str | None = None,
) -> go.Figure:
    """A theorem's bound against what the simulation observed: per ``group`` value (or once),
    the bound as a dashed line and the observations as markers, both against ``x`` (rows
    sorted by it; NaN stays a gap)."""
    _require_columns(frame, [x, bound, observed, group])
    groups = [None] if group is None else list(pd.unique(frame[group]))
    colors = _colors(["" if g is None else _label(g) for g in groups])
    fig = _figure(
        title or f"Bound and observed {_axis_title(observed).split(' (')[0]}",
        _axis_title(x),
        y_title or _axis_title(observed),
        legend_title_text=group or "",
    )
    for g in groups:
        part = frame if g is None else frame[frame[group] == g]
        part = part.sort_values(x, kind="stable")
        label = "" if g is None else f"{_label(g)}: "
        color = colors["" if g is None else _label(g)]
        fig.add_trace(
            go.Scatter(name=f"{label}bound", x=part[x].to_numpy(), y=part[bound].to_numpy(dtype=float),
                       mode="lines", line=dict(color=color, dash="dash", width=2), connectgaps=False,
                       legendgroup=label or None)
        )
        fig.add_trace(
            go.Scatter(name=f"{label}observed", x=part[x].to_numpy(), y=part[observed].to_numpy(dtype=float),
                       mode="markers", marker=dict(color=color, size=7), legendgroup=label or None)
        )
    return fig
