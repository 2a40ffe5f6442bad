"""Offline handouts (:mod:`staleness_lab.widgets.handout`, :mod:`staleness_lab.handouts`): each
frame is the view the live explorer shows for that value, a value the model refuses is listed
with its reason, the explorer ends as it started, and the reports directory takes a ``teaching/``
folder of our handouts but nothing else there. In the browser: ``test_teach_browser.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from staleness_lab.errors import InputError
from staleness_lab.handouts import HANDOUT_TAG, handout_source, teaching_notebooks, without_handout_cell
from staleness_lab.reports import check_report_dir, notebooks_dir
from staleness_lab.widgets import BatchPlanExplorer, ScheduleExplorer
from staleness_lab.widgets.handout import frame_values, frames, handout_html
from tests.widgets.helpers import DEMO, E5, drawn

WORKLOAD = {"tracks": 1, "horizon": 200.0, "tables": [
    {"name": "orders", "period": 10, "alpha": 2, "beta": 0.2, "priority": 1},
    {"name": "report", "sources": ["orders"], "alpha": 1, "beta": 0.05, "priority": 1},
]}


def test_each_frame_is_the_live_view_for_its_value_and_the_explorer_ends_as_it_started() -> None:
    ex = ScheduleExplorer(WORKLOAD, policy="fifo")
    assert ex.main == "orders.period"
    values = frame_values(ex.controls["orders.period"])
    assert values == [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0]
    first, summary = drawn(ex), ex.summary
    kept, refused = frames(ex, values)
    assert [v for v, _ in kept] == values[1:]
    assert refused == ["0: tables[0].period (table 'orders'): must be > 0, got 0"]
    fresh = ScheduleExplorer(WORKLOAD, policy="fifo")
    fresh.controls["orders.period"].value = 25.0
    assert {k: f.to_json() for k, f in dict(kept)[25.0].items()} == drawn(fresh)
    assert ex.controls["orders.period"].value == 10.0 and drawn(ex) == first and ex.summary == summary


def test_the_html_has_one_slider_over_the_drawable_frames_starting_at_the_first_view() -> None:
    page = handout_html(ScheduleExplorer(WORKLOAD, policy="fifo"), prefix="t")
    assert page.count('<div id="t-') == 2 and "Plotly.newPlot" in page and "<script src" not in page
    # 8 steps (5 to 40; 0 is refused), the first view (period 10) active; the second pane follows
    assert page.count('"method":"update"') == 8 and '"active":1' in page and "orders.period = " in page
    assert 'plotly_sliderchange' in page and '"id": "t-1"' in page
    assert "Not drawn: 0: tables[0].period" in page


def test_no_drawable_value_says_why_instead_of_a_figure() -> None:
    ex = BatchPlanExplorer(E5, scheme="algorithm1", queries=3)  # Algorithm 1 plans one query alone
    page = handout_html(ex)
    assert "No value of" in page and "Algorithm 1 plans one query alone" in page and "Plotly.newPlot" not in page


def test_the_handout_cell_goes_in_first_and_comes_out_again() -> None:
    path = teaching_notebooks(notebooks_dir())[0]
    nb = handout_source(path)
    assert HANDOUT_TAG in nb.cells[0].metadata["tags"] and "handout_mode()" in nb.cells[0].source
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}  # as nbclient stores it
    assert [c.source for c in without_handout_cell(nb).cells] == [c.source for c in handout_source(path).cells[1:]]
    assert "widgets" not in nb.metadata  # a handout's explorers are static: no live state (nor plotly.js) in it


def _ours(path: Path) -> None:
    path.write_text('<script type="application/json" id="staleness-lab-report">{}</script>')


def test_the_reports_directory_takes_our_teaching_folder_and_nothing_else_in_it(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    (out / "teaching").mkdir(parents=True)
    _ours(out / "teaching" / "01-what-is-staleness.html")
    check_report_dir(out)  # ours: taken
    (out / "teaching" / "notes.txt").write_text("a lecturer's notes")
    with pytest.raises(InputError, match=r"--out: .*holds what staleness-lab did not write \(teaching/notes.txt\)"):
        check_report_dir(out)
    (out / "teaching" / "notes.txt").unlink()
    os.rename(out / "teaching", tmp_path / "elsewhere")
    (out / "teaching").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match=r"\(teaching\)"):
        check_report_dir(out)


def test_a_first_view_the_model_refuses_says_so_and_the_slider_starts_at_a_drawable_value() -> None:
    ex = ScheduleExplorer(DEMO, policy="edf-partitioned", horizon=300.0, main="tracks")
    page = handout_html(ex, prefix="p")
    assert "The first view (tracks = 2) cannot be drawn: edf-partitioned needs 3 tracks" in page
    assert "Not drawn: 1: edf-partitioned needs 3 tracks" in page and '"active":0' in page
    assert page.count('"method":"update"') == 6  # tracks 3 to 8
