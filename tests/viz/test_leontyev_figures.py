"""Leontyev et al.'s figures: recovery stays from the mode log, Fig. 9's gap panels, the mode
timeline and the schedule with its modes (Examples 8-10)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import staleness_lab as sl
from staleness_lab import viz
from staleness_lab.errors import InputError
from staleness_lab.model import Table, Workload

ROOT = Path(__file__).resolve().parents[2]
FILES = [1, 4, 7, 10, 13, 16, 19, 22, 25, 28]


def e4_trace(horizon: float = 27.5):
    """Examples 8-10 (digest E4) under AUS."""
    feed = dict(alpha=1, beta=0, arrivals=FILES, nominal_period=3, outages=[[4, 10]], budget=1,
                recovery_period=1.5, recovery_threshold=8)
    w = Workload(tables=(Table("V1", **feed), Table("V2", **feed)), tracks=1, horizon=horizon)
    return sl.simulate(w, "aus").trace


def test_recovery_stays_of_examples_8_to_10():
    """V_1 recovers on [10, 17.5], V_2 on [17.5, 24.5] (the E4 mode log); a stay still open at
    the horizon runs to it."""
    stays = viz.recovery_intervals(e4_trace().frames["modes"], 27.5)
    assert stays.values.tolist() == [["V1", 10.0, 17.5], ["V2", 17.5, 24.5]]
    cut = viz.recovery_intervals(e4_trace(20.0).frames["modes"], 20.0)
    assert cut.values.tolist() == [["V1", 10.0, 17.5], ["V2", 17.5, 20.0]]


def test_gantt_with_modes_shades_each_stay():
    fig = viz.gantt_with_modes(e4_trace())
    assert [(s.x0, s.x1) for s in fig.layout.shapes] == [(10.0, 17.5), (17.5, 24.5)]
    assert [a.text for a in fig.layout.annotations] == ["V1 in recovery", "V2 in recovery"]


def test_gap_panels_draw_each_table_per_panel_with_period_lines():
    frame = pd.DataFrame({"table": ["V1", "V1", "V2", "V2"], "time": [0.0, 5.0, 0.0, 5.0], "gap": [0.0, 3.0, 1.0, 2.0]})
    fig = viz.gap_panels({"PRP": frame, "AUS": frame}, title="gaps", periods={"V1": 3.0, "V2": 9.0})
    assert len(fig.data) == 4 and [d.showlegend for d in fig.data] == [True, True, False, False]
    assert sorted(s.y0 for s in fig.layout.shapes) == [3.0, 3.0, 9.0, 9.0]
    assert list(fig.data[0].y) == [0.0, 3.0] and fig.data[0].line.shape == "hv"
    with pytest.raises(InputError, match="gap"):
        viz.gap_panels({"PRP": frame.drop(columns="gap")}, title="gaps")


def test_mode_timeline_has_a_row_per_recovering_table():
    fig = viz.mode_timeline({"AUS": e4_trace().frames["modes"]}, horizon=27.5, title="modes")
    assert list(fig.data[0].y) == ["AUS · V1", "AUS · V2"] and list(fig.data[0].base) == [10.0, 17.5]
    assert list(fig.data[0].x) == [7.5, 7.0]


def test_staleness_with_bounds_never_draws_an_unmet_bound_as_holding():
    """On a task set whose feed `orders` breaks on [300, 450), A(orders) has its `windows`
    precondition unmet: drawn grey and dotted with the reason, while A(clicks) holds (dashed, in
    clicks' colour). One bound line per staleness record, after the curves."""
    report = sl.check(ROOT / "data/workloads/teaching-aus.yaml", "gedf-np")
    fig = viz.staleness_with_bounds(report.trace, report.records)
    lines = {t.meta["table"]: t for t in fig.data if t.meta}
    staleness = {r.table: r for r in report.records if r.claim == "staleness"}
    assert set(lines) == set(staleness)
    broken, healthy = lines["orders"], lines["clicks"]
    assert not broken.meta["preconditions_met"] and broken.meta["holds"] is None
    assert broken.line.dash == "dot" and broken.line.color == viz.leontyev.UNMET_COLOR
    assert "windows unmet" in broken.name and broken.meta["reason"].startswith("windows: ")
    assert "holds" not in broken.name
    assert healthy.meta["preconditions_met"] and healthy.line.dash == "dash" and healthy.name.endswith(": holds")
    assert list(healthy.y) == [staleness["clicks"].bound] * 2
