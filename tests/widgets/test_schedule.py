"""ScheduleExplorer driven from Python as a student drives it: every view equals the API's own
run with the same arguments, and a refused combination keeps the last view."""

from __future__ import annotations

import pytest

import staleness_lab as sl
from staleness_lab.errors import InputError
from staleness_lab.widgets import ScheduleExplorer
from tests.widgets.helpers import DEMO, drawn, refused_keeps_view, shown_in_page


@pytest.fixture()
def explorer() -> ScheduleExplorer:
    return ScheduleExplorer(DEMO, horizon=1000)


def test_the_issue_example_equals_a_direct_simulation(explorer: ScheduleExplorer) -> None:
    workload = sl.load_workload(DEMO)
    assert explorer.reason is None
    assert explorer.summary == sl.simulate(workload, "max-benefit", horizon=1000).summary()
    before = drawn(explorer)
    explorer.controls["tracks"].value = 2
    explorer.controls["policy"].value = "edf-p"
    assert explorer.summary == sl.simulate(workload, "edf-p", tracks=2, horizon=1000).summary()
    after = drawn(explorer)
    assert set(after) == {"gantt", "staleness"} and after["gantt"] != before["gantt"]
    assert after["staleness"] != before["staleness"]
    assert "Schedule under edf-p" in explorer.figures["gantt"].layout.title.text
    explorer.controls["tracks"].value = 3
    assert explorer.summary == sl.simulate(workload, "edf-p", tracks=3, horizon=1000).summary()
    assert shown_in_page(explorer)["count"] == 2  # the page holds both figures, not only the object


def test_table_knobs_chopping_and_an_outage_equal_the_same_edited_workload(explorer: ScheduleExplorer) -> None:
    c = explorer.controls
    c["orders.period"].value = 15
    c["dashboard.priority"].value = 1
    c["clicks.beta"].value = 0.3
    c["chop"].value = 2.0
    c["outage_feed"].value = "inventory"
    c["outage"].value = (200.0, 420.0)
    c["horizon"].value = 800
    doc = sl.load_workload(DEMO).to_dict()
    tables = {t["name"]: t for t in doc["tables"]}
    tables["orders"]["period"] = 15
    tables["dashboard"]["priority"] = 1
    tables["clicks"]["beta"] = 0.3
    tables["inventory"]["outages"] = [[200.0, 420.0]]
    doc["chop"] = 2.0
    assert explorer.reason is None
    assert explorer.summary == sl.simulate(doc, "max-benefit", horizon=800).summary()
    assert explorer.figures["staleness"].layout.xaxis.range == (0.0, 800.0)
    c["chop"].value = 0.0  # off again: the workload's own (none)
    del doc["chop"]
    assert explorer.summary == sl.simulate(doc, "max-benefit", horizon=800).summary()


def test_a_period_of_zero_shows_the_models_reason_and_keeps_the_view(explorer: ScheduleExplorer) -> None:
    refused_keeps_view(explorer, "orders.period", 0.0, "tables[0].period", "must be > 0")
    explorer.controls["orders.period"].value = 12  # a good value draws again and clears the reason
    assert explorer.reason is None and explorer._reason.layout.display == "none"
    assert explorer.summary["tables"][0]["updates"] > 0


def test_a_scheduler_that_cannot_run_says_why_until_it_can(explorer: ScheduleExplorer) -> None:
    explorer.controls["tracks"].value = 2
    refused_keeps_view(explorer, "policy", "edf-partitioned", "needs 3 tracks", "has 2")
    explorer.controls["tracks"].value = 3
    assert explorer.reason is None
    assert explorer.summary == sl.simulate(DEMO, "edf-partitioned", tracks=3, horizon=1000).summary()


def test_an_empty_outage_and_a_zero_horizon_are_refused(explorer: ScheduleExplorer) -> None:
    explorer.controls["outage"].value = (300.0, 300.0)
    explorer.controls["outage_feed"].value = "partner"  # the interval is now applied: [300, 300)
    assert explorer.reason is not None and "outages[0]" in explorer.reason
    explorer.controls["outage_feed"].value = ""
    assert explorer.reason is None
    refused_keeps_view(explorer, "horizon", 0.0, "horizon", "> 0")


def test_every_registered_policy_is_offered_and_the_explorer_displays_its_box() -> None:
    explorer = ScheduleExplorer(DEMO, horizon=200)
    assert list(explorer.controls["policy"].options) == list(sl.available_policies())
    bundle = explorer._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == explorer.widget.model_id


def test_a_warehouse_outside_two_to_eight_tables_is_refused() -> None:
    one = {"tracks": 1, "horizon": 10, "tables": [{"name": "a", "period": 1, "alpha": 1, "beta": 0, "priority": 1}]}
    with pytest.raises(InputError, match="2 to 8 tables"):
        ScheduleExplorer(one)
