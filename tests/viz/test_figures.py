"""The figures draw exactly what a hand-built trace or frame holds.

The trace: tables ``a`` (period 10) and ``b`` (period 20) on two tracks, horizon 30, three
completed jobs (table, track, release, start, data_from, data_to, cost -> finish):

    a  track 0  release 10  start 10  data (0, 10]   cost 2  -> 12
    a  track 0  release 20  start 20  data (10, 20]  cost 2  -> 22
    b  track 1  release 20  start 20  data (0, 20]   cost 3  -> 23

so F_a steps 0 -> 10 at 12 -> 20 at 22 and F_b 0 -> 20 at 23, and S = t - F is the sawtooth
a: (0,0) (12,12) (12,2) (22,12) (22,2) (30,10); b: (0,0) (23,23) (23,3) (30,10).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

import staleness_lab as sl
from staleness_lab import InputError, parse_workload, viz
from staleness_lab.sim.trace import Trace
from staleness_lab.stats import t_quantile_975
from staleness_lab.viz import bound_vs_observed, gantt, metric_vs_utilization, staleness_curves, use_offline_renderer
from staleness_lab.viz.offline import RENDERER, plotly_js_script, strip_network_assets

ROOT = Path(__file__).resolve().parents[2]

WORKLOAD = parse_workload(
    {
        "tracks": 2,
        "horizon": 30,
        "tables": [
            {"name": "a", "period": 10, "alpha": 1, "beta": 0.1, "priority": 1},
            {"name": "b", "period": 20, "alpha": 1, "beta": 0.1, "priority": 2},
        ],
    }
)


@pytest.fixture()
def trace() -> Trace:
    records = [  # table, track, release, start, data_from, data_to, cost (positions for table/track)
        (0, 0, 10.0, 10.0, 0.0, 10.0, 2.0),
        (0, 0, 20.0, 20.0, 10.0, 20.0, 2.0),
        (1, 1, 20.0, 20.0, 0.0, 20.0, 3.0),
    ]
    return Trace(
        workload=WORKLOAD, policy="hand", events=6, jobs_done=records,
        in_flight=[], staleness_area=[0.0, 0.0], max_staleness=[0.0, 0.0],
    )


def values(seq) -> list:
    return [None if v is None else float(v) for v in seq]


# --- gantt ------------------------------------------------------------------------------------


def test_gantt_one_bar_trace_per_table_with_jobs_as_bars(trace: Trace) -> None:
    fig = gantt(trace)
    assert isinstance(fig, go.Figure)
    assert [t.name for t in fig.data] == ["a", "b"]
    assert all(t.type == "bar" and t.orientation == "h" for t in fig.data)
    a, b = fig.data
    assert values(a.base) == [10.0, 20.0] and values(a.x) == [2.0, 2.0] and list(a.y) == ["track 0", "track 0"]
    assert values(b.base) == [20.0] and values(b.x) == [3.0] and list(b.y) == ["track 1"]
    # hover data: data_from, data_to, release, start, finish, cost
    assert np.asarray(a.customdata).tolist() == [[0, 10, 10, 10, 12, 2], [10, 20, 20, 20, 22, 2]]
    assert "data (" in a.hovertemplate and "release" in a.hovertemplate and "cost" in a.hovertemplate
    assert a.marker.color != b.marker.color
    assert fig.layout.barmode == "overlay"
    assert list(fig.layout.yaxis.categoryarray) == ["track 0", "track 1"]
    assert "time units" in fig.layout.xaxis.title.text and fig.layout.yaxis.title.text == "track"
    assert "hand" in fig.layout.title.text
    assert list(fig.layout.xaxis.range) == [0.0, 30.0]


def test_gantt_window_keeps_overlapping_jobs(trace: Trace) -> None:
    fig = gantt(trace, window=(0, 15))
    assert values(fig.data[0].base) == [10.0]
    assert len(fig.data[1].base) == 0  # b keeps its (empty) legend entry
    assert list(fig.layout.xaxis.range) == [0.0, 15.0]
    with pytest.raises(InputError, match="window"):
        gantt(trace, window=(5, 5))


# --- staleness curves -------------------------------------------------------------------------


def test_staleness_sawtooth_vertices(trace: Trace) -> None:
    fig = staleness_curves(trace)
    assert [t.name for t in fig.data] == ["a", "b"]
    a, b = fig.data
    assert values(a.x) == [0, 12, 12, 22, 22, 30]
    assert values(a.y) == [0, 12, 2, 12, 2, 10]
    assert values(b.x) == [0, 23, 23, 30]
    assert values(b.y) == [0, 23, 3, 10]
    assert "time units" in fig.layout.yaxis.title.text
    # the same colour per table as in the Gantt chart
    assert [t.line.color for t in fig.data] == [t.marker.color for t in gantt(trace).data]


def test_staleness_curves_subset_and_unknown_table(trace: Trace) -> None:
    assert [t.name for t in staleness_curves(trace, tables=["b"]).data] == ["b"]
    with pytest.raises(InputError, match="unknown table 'zz'"):
        staleness_curves(trace, tables=["zz"])


# --- metric vs utilization --------------------------------------------------------------------


def sweep_frame() -> pd.DataFrame:
    rows = []
    for seed, (p05, p10, p15) in enumerate([(1.0, 2.0, 4.0), (2.0, 2.0, 5.0), (3.0, 2.0, 6.0)]):
        rows += [
            {"policy": "p", "offered_utilization": 0.5, "seed": seed, "relative_lateness": p05},
            {"policy": "p", "offered_utilization": 1.0, "seed": seed, "relative_lateness": p10},
            {"policy": "p", "offered_utilization": 1.5, "seed": seed, "relative_lateness": p15},
            {"policy": "q", "offered_utilization": 0.5, "seed": seed, "relative_lateness": 1.0},
            {"policy": "q", "offered_utilization": 1.0, "seed": seed, "relative_lateness": math.nan if seed == 1 else 3.0},
            {"policy": "q", "offered_utilization": 1.5, "seed": seed, "relative_lateness": 7.0},
        ]
    return pd.DataFrame(rows)


def traces_of(fig: go.Figure, name: str) -> tuple[go.Scatter, go.Scatter]:
    band = next(t for t in fig.data if t.name.startswith(f"{name} ") and t.fill == "toself")
    mean = next(t for t in fig.data if t.name == name)
    return band, mean


def test_one_mean_line_and_one_band_per_policy() -> None:
    fig = metric_vs_utilization(sweep_frame())
    assert [t.name for t in fig.data] == ["p 95% CI", "p", "q 95% CI", "q"]
    band, mean = traces_of(fig, "p")
    assert values(mean.x) == [0.5, 1.0, 1.5]
    assert values(mean.y) == [2.0, 2.0, 5.0]
    half = t_quantile_975(2) * 1.0 / math.sqrt(3)  # sd 1 over 3 seeds at 0.5 and at 1.5
    # the band: upper edge left to right, lower edge back; as many points per edge as the line
    assert len(band.x) == 2 * len(mean.x)
    assert values(band.x) == [0.5, 1.0, 1.5, 1.5, 1.0, 0.5]
    assert values(band.y) == pytest.approx([2 + half, 2.0, 5 + half, 5 - half, 2.0, 2 - half])
    assert mean.connectgaps is False and mean.mode == "lines+markers"
    assert band.legendgroup == mean.legendgroup == "p" and band.showlegend is False
    assert "utilization" in fig.layout.xaxis.title.text and "relative lateness" in fig.layout.yaxis.title.text


def test_numeric_curves_are_labelled_without_trailing_zero() -> None:
    frame = sweep_frame()
    frame["S"] = frame["policy"].map({"p": 2.0, "q": 2.5})
    fig = metric_vs_utilization(frame, color="S")
    assert [t.name for t in fig.data] == ["2 95% CI", "2", "2.5 95% CI", "2.5"]
    assert fig.layout.legend.title.text == "S"


def test_nan_point_is_a_gap_in_line_and_band() -> None:
    fig = metric_vs_utilization(sweep_frame())
    band, mean = traces_of(fig, "q")
    assert values(mean.x) == [0.5, 1.0, 1.5]
    assert mean.y[0] == 1.0 and math.isnan(mean.y[1]) and mean.y[2] == 7.0  # NaN, never 0
    assert mean.connectgaps is False
    # two runs of one point each, each outlined on its own; no band vertex at x = 1.0
    assert values(band.x) == [0.5, 0.5, None, 1.5, 1.5]
    assert values(band.y) == [1.0, 1.0, None, 7.0, 7.0]
    finite = [x for x, y in zip(mean.x, mean.y) if not math.isnan(y)]
    assert sorted(x for x in band.x if x is not None) == sorted(finite * 2)


def test_missing_point_is_a_gap_and_one_seed_gives_min_max_band() -> None:
    frame = pd.DataFrame(
        {
            "policy": ["p", "p", "p", "q"],
            "offered_utilization": [0.5, 0.9, 1.3, 0.9000000000000001],  # float noise: one x
            "seed": [0, 0, 0, 0],
            "relative_lateness": [1.0, 1.5, 2.5, 1.2],
        }
    )
    fig = metric_vs_utilization(frame)
    assert [t.name for t in fig.data] == ["p min–max", "p", "q min–max", "q"]
    band, mean = traces_of(fig, "q")
    assert values(mean.x) == [0.5, 0.9, 1.3]
    assert math.isnan(mean.y[0]) and mean.y[1] == 1.2 and math.isnan(mean.y[2])
    assert values(band.y) == [1.2, 1.2]  # one seed: min..max, i.e. the point itself


def test_metric_frame_checks() -> None:
    frame = sweep_frame()
    with pytest.raises(InputError, match="no column 'nope'"):
        metric_vs_utilization(frame, y="nope")
    doubled = pd.concat([frame, frame])  # e.g. another parameter varied: not silently averaged
    with pytest.raises(InputError, match="several rows"):
        metric_vs_utilization(doubled)
    assert len(metric_vs_utilization(doubled, seed=None).data) == 4


# --- bound vs observed ------------------------------------------------------------------------


def test_bound_dashed_and_observed_markers_per_group() -> None:
    frame = pd.DataFrame(
        {
            "tracks": [2, 1, 2, 1],
            "policy": ["edf", "edf", "aus", "aus"],
            "bound": [10.0, 20.0, 12.0, math.nan],
            "observed": [4.0, 9.0, 5.0, 6.0],
        }
    )
    fig = bound_vs_observed(frame, x="tracks", bound="bound", observed="observed", group="policy")
    assert [t.name for t in fig.data] == ["edf: bound", "edf: observed", "aus: bound", "aus: observed"]
    bound, observed = fig.data[0], fig.data[1]
    assert bound.line.dash == "dash" and bound.mode == "lines"
    assert observed.mode == "markers"
    assert values(bound.x) == [1, 2] and values(bound.y) == [20.0, 10.0]  # sorted by x
    assert values(observed.y) == [9.0, 4.0]
    assert math.isnan(fig.data[2].y[0]) and fig.data[2].connectgaps is False
    single = bound_vs_observed(frame, x="tracks", bound="bound", observed="observed")
    assert [t.name for t in single.data] == ["bound", "observed"]


# --- offline rendering ------------------------------------------------------------------------


@pytest.fixture()
def offline_renderer():
    before = pio.renderers.default
    yield use_offline_renderer()
    pio.renderers.default = before


def test_offline_renderer_bundle_has_plotly_json_and_html_without_libraries(trace: Trace, offline_renderer: str) -> None:
    assert offline_renderer == RENDERER == pio.renderers.default
    bundle = gantt(trace)._repr_mimebundle_()
    assert set(bundle) == {"application/vnd.plotly.v1+json", "text/html"}
    assert bundle["application/vnd.plotly.v1+json"]["data"][0]["name"] == "a"
    page = bundle["text/html"]
    assert "Plotly.newPlot" in page
    assert "<script src" not in page and "cdn" not in page.lower() and "mathjax" not in page.lower()
    assert len(page) < 100_000  # plotly.js (megabytes) is not in it


def test_strip_network_assets_keeps_local_and_inline_scripts() -> None:
    page = (
        '<head><script src="https://cdn.example/require.js"></script>'
        "<script type=\"text/javascript\" src='//cdn.example/mathjax.js'> </script>"
        '<link rel="stylesheet" href="https://fonts.example/x.css">'
        '<script src="local.js"></script><script>var a = 1;</script></head>'
    )
    assert strip_network_assets(page) == '<head><script src="local.js"></script><script>var a = 1;</script></head>'
    assert plotly_js_script().startswith('<script type="text/javascript">') and "src=" not in plotly_js_script()[:80]


def test_duel_difference_colours_each_table_by_who_kept_it_fresher() -> None:
    """The lower panel draws the frame's own difference, green where the right policy is fresher."""
    match = sl.duel(ROOT / "data/workloads/demo.yaml", "fifo", "max-benefit", horizon=300)
    fig = viz.duel_difference(match.difference, "fifo", "max-benefit")
    left, right, diff = fig.data
    assert list(left.y) == list(match.difference["left"]) and list(right.y) == list(match.difference["right"])
    assert list(diff.y) == list(match.difference["difference"])
    assert list(diff.marker.color) == [viz.compare.BETTER if d < 0 else viz.compare.WORSE for d in diff.y]


def test_blank_figures_carry_the_stacked_template_each_its_own() -> None:
    """The template merged once is the one ``plotly_white+staleness_lab`` gives, and a figure
    changing its template leaves the next figure's alone."""
    from staleness_lab.viz.figures import _TEMPLATE_STACK, blank

    stacked = go.Figure().update_layout(template=_TEMPLATE_STACK)
    first = blank()
    assert first.to_plotly_json()["layout"]["template"] == stacked.to_plotly_json()["layout"]["template"]
    first.layout.template.layout.colorway = ["#000000"]
    assert blank().layout.template.layout.colorway == stacked.layout.template.layout.colorway
    with pytest.raises(ValueError):
        first.update_layout(not_a_layout_key=1)  # what is set afterwards is still validated
