"""Figures for Leontyev et al.'s AUS (digest ``shared/specs/leontyev-aus.md``, §5): the gap
G(V_k, t) = TE − F of Fig. 9 per table, AUS's mode log as a timeline, and a schedule with its
recovery-mode intervals shaded (Examples 8-10), and the staleness curves with each table's bound
A(V_k) drawn over them (a bound whose preconditions are unmet drawn apart, with the reason).

They draw frames the traces and experiments already hold; nothing is computed beyond joining a
table's mode switches into intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from staleness_lab.sim.trace import Trace
from staleness_lab.theory.records import CheckRecord
from staleness_lab.viz.figures import (TIME_TITLE, _colors, _figure, _markup, _require_columns, blank, gantt,
                                       staleness_curves)

#: The gap axis (Fig. 9's metric).
GAP_TITLE = "gap G = TE − F (time units)"
#: Recovery intervals' fill on a schedule.
RECOVERY_FILL = "rgba(214, 39, 40, 0.12)"


def recovery_intervals(modes: pd.DataFrame, horizon: float) -> pd.DataFrame:
    """AUS's mode log (``trace.frames["modes"]``: time, table, mode_from, mode_to) as one row per
    recovery-mode stay: ``table``, ``start`` (the N→R switch), ``end`` (the R→N switch, or the
    horizon when the table is still recovering)."""
    _require_columns(modes, ["time", "table", "mode_from", "mode_to"])
    rows = []
    for table, log in modes.sort_values("time", kind="stable").groupby("table", sort=False):
        start = None
        for time, to in zip(log["time"], log["mode_to"]):
            if to == "R":
                start = float(time)
            elif start is not None:
                rows.append((str(table), start, float(time)))
                start = None
        if start is not None:
            rows.append((str(table), start, float(horizon)))
    return pd.DataFrame(rows, columns=["table", "start", "end"])


def gap_panels(panels: Mapping[str, pd.DataFrame], *, title: str, periods: Mapping[str, float] | None = None,
               tables: Sequence[str] | None = None) -> go.Figure:
    """Fig. 9's panels: per panel (e.g. PRP above, AUS below) the step functions G(V_k, t) of a
    tidy (table, time, gap) frame, one colour per table shared by the panels, and a dotted line
    at each table's period p_k (the "within one period" the paper judges) when ``periods`` is
    given. ``tables`` picks and orders the tables drawn (default: all, in frame order)."""
    for frame in panels.values():
        _require_columns(frame, ["table", "time", "gap"])
    names = list(tables) if tables is not None else list(dict.fromkeys(
        str(t) for frame in panels.values() for t in frame["table"]))
    colors = _colors(names)
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.08, figure=blank(),
                        subplot_titles=[_markup(label) for label in panels])
    for row, frame in enumerate(panels.values(), start=1):
        for name in names:
            mine = frame[frame["table"].astype(str) == name]
            fig.add_trace(go.Scatter(
                x=mine["time"].to_numpy(dtype=float), y=mine["gap"].to_numpy(dtype=float), mode="lines",
                line=dict(shape="hv", color=colors[name], width=1.5), name=name, legendgroup=name,
                showlegend=row == 1, hovertemplate=f"<b>{_markup(name)}</b><br>t %{{x:.6g}}<br>G %{{y:.6g}}<extra></extra>",
            ), row=row, col=1)
        for p in sorted({float(periods[n]) for n in names if n in periods}) if periods else ():
            fig.add_hline(y=p, line=dict(dash="dot", color="#7f7f7f", width=1), row=row, col=1)
        fig.update_yaxes(title_text=GAP_TITLE if row == 1 else "", row=row, col=1)
    fig.update_xaxes(title_text=TIME_TITLE, row=len(panels), col=1)
    fig.update_layout(title=dict(text=_markup(title)), height=320 * len(panels) + 80,
                      legend_title_text="table")
    return fig


def mode_timeline(runs: Mapping[str, pd.DataFrame], *, horizon: float, title: str) -> go.Figure:
    """One row per (run, table) that ever recovered, a bar per recovery-mode stay
    (:func:`recovery_intervals`) of each run's mode log: AUS admitting late tables one at a time
    shows as a staircase."""
    fig = _figure(title, TIME_TITLE, "run · table", barmode="overlay", bargap=0.3, legend_title_text="run")
    rows: list[str] = []
    for (label, modes), color in zip(runs.items(), _colors(list(runs)).values()):
        stays = recovery_intervals(modes, horizon)
        labels = [f"{label} · {t}" for t in stays["table"]]
        rows += [r for r in dict.fromkeys(labels) if r not in rows]
        fig.add_trace(go.Bar(
            name=label, orientation="h", base=stays["start"].to_numpy(dtype=float),
            x=(stays["end"] - stays["start"]).to_numpy(dtype=float), y=labels, marker=dict(color=color),
            customdata=stays[["start", "end"]].to_numpy(dtype=float),
            hovertemplate="%{y}<br>recovery %{customdata[0]:.6g} to %{customdata[1]:.6g}<extra></extra>",
        ))
    fig.update_yaxes(categoryorder="array", categoryarray=rows, range=[len(rows) - 0.5, -0.5])
    fig.update_xaxes(range=[0.0, float(horizon)])
    return fig


def gantt_with_modes(trace: Trace, window: tuple[float, float] | None = None) -> go.Figure:
    """:func:`~staleness_lab.viz.figures.gantt` of a sporadic trace with each recovery-mode stay
    shaded and labelled by its table (Examples 8-10)."""
    fig = gantt(trace, window)
    modes = trace.frames.get("modes")
    if modes is not None and not modes.empty:
        for table, start, end in recovery_intervals(modes, trace.workload.horizon).itertuples(index=False):
            fig.add_vrect(x0=start, x1=end, fillcolor=RECOVERY_FILL, line_width=0, layer="below",
                          annotation_text=f"{_markup(table)} in recovery", annotation_position="top left")
    return fig


#: A bound line whose preconditions this run does not meet: grey and dotted, never as holding.
UNMET_COLOR = "#7f7f7f"


def _bound_label(record: CheckRecord, symbol: str) -> tuple[str, str]:
    """(legend name, reason beside it) of one record's bound line: the verdict when every
    precondition is met, else the first unmet precondition's name and why."""
    head = f"{symbol}({record.table}) = {record.bound:.4g}"
    if record.preconditions_met:
        return f"{head}: {'holds' if record.holds else 'VIOLATED'}", ""
    unmet = next(p for p in record.preconditions if not p.met)
    return f"{head}: not a bound here ({unmet.name} unmet)", f"{unmet.name}: {unmet.why}"


def _bound_line(record: CheckRecord, symbol: str, x: list[float], y: list[float], color: str) -> go.Scatter:
    """One record's bound as a line through (x, y): dashed in ``color`` when every precondition
    is met, grey and dotted otherwise; the legend says holds / VIOLATED / which precondition is
    unmet, the hover adds why, and ``meta`` keeps the table, the verdict and the reason."""
    name, reason = _bound_label(record, symbol)
    met = record.preconditions_met
    return go.Scatter(
        x=x, y=y, mode="lines", name=_markup(name),
        line=dict(color=color if met else UNMET_COLOR, dash="dash" if met else "dot", width=2 if met else 1.5),
        hovertemplate=f"{_markup(name)}<br>{_markup(reason) or _markup(record.theorem)}<extra></extra>",
        meta={"table": record.table, "claim": record.claim, "preconditions_met": met, "holds": record.holds,
              "reason": reason},
    )


def _drawn(records: Sequence[CheckRecord], claim: str) -> list[CheckRecord]:
    return [r for r in records if r.claim == claim and r.bound is not None and math.isfinite(r.bound)]


def staleness_with_bounds(trace: Trace, records: Sequence[CheckRecord]) -> go.Figure:
    """:func:`~staleness_lab.viz.figures.staleness_curves` of ``trace`` with, from the check's
    ``records``, each table's staleness bound A(V_k) (Definition 13) as a horizontal line over its
    curve and each recovery's Theorem 4 deadline t_0 + x_k as a vertical line (:func:`_bound_line`:
    an unmet precondition is drawn grey and dotted with its name and reason, never as holding)."""
    fig = staleness_curves(trace)
    colors = _colors([t.name for t in trace.workload.tables])
    horizon = float(trace.workload.horizon)
    for r in _drawn(records, "staleness"):
        fig.add_trace(_bound_line(r, "A", [0.0, horizon], [r.bound, r.bound], colors.get(str(r.table), UNMET_COLOR)))
    top = max((float(v) for v in trace.max_staleness), default=1.0)
    for r in _drawn(records, "recovery-time"):
        t = r.window[0] + r.bound if r.window is not None else math.nan
        fig.add_trace(_bound_line(r, "x", [t, t], [0.0, top], colors.get(str(r.table), UNMET_COLOR)))
    fig.update_layout(title=dict(text=f"Staleness under {_markup(trace.policy)}: bounds A(V_k), recoveries by t_0 + x_k"))
    return fig


def response_with_bounds(trace: Trace, records: Sequence[CheckRecord]) -> go.Figure:
    """Each job's response time f - r (a marker at its finish, one colour per table) with each
    table's Lemma 1 bound Theta_k from the ``response-time`` records drawn as :func:`_bound_line`."""
    fig = _figure(f"Response times under {_markup(trace.policy)} and the bounds Θ_k", TIME_TITLE,
                  "response time f − r (time units)", legend_title_text="table")
    colors = _colors([t.name for t in trace.workload.tables])
    jobs = trace.jobs
    for name, color in colors.items():
        mine = jobs[jobs["table"] == name]
        fig.add_trace(go.Scatter(
            x=mine["finish"].to_numpy(dtype=float), y=(mine["finish"] - mine["release"]).to_numpy(dtype=float),
            mode="markers", name=_markup(name), marker=dict(color=color, size=5),
            hovertemplate=f"<b>{_markup(name)}</b><br>finish %{{x:.4g}}<br>f − r %{{y:.4g}}<extra></extra>"))
    horizon = float(trace.workload.horizon)
    for r in _drawn(records, "response-time"):
        fig.add_trace(_bound_line(r, "Θ", [0.0, horizon], [r.bound, r.bound], colors.get(str(r.table), UNMET_COLOR)))
    return fig
