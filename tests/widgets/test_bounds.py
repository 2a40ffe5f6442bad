"""BoundExplorer: the check shown equals ``sl.check`` of the same task set and outage, and a
bound whose preconditions are unmet is never drawn as holding."""

from __future__ import annotations

import pytest

import staleness_lab as sl
from staleness_lab import viz
from staleness_lab.widgets import BoundExplorer
from tests.widgets.helpers import AUS, drawn, refused_keeps_view


@pytest.fixture()
def explorer() -> BoundExplorer:
    return BoundExplorer(AUS)


def bound_lines(explorer: BoundExplorer, figure: str = "staleness", claim: str = "staleness") -> dict[str, object]:
    return {t.meta["table"]: t for t in explorer.figures[figure].data if t.meta and t.meta["claim"] == claim}


def drawn_as_claimed(explorer: BoundExplorer) -> None:
    """Every bound line is dotted grey exactly when a precondition is unmet, and says holds only
    when it is claimed and holds."""
    for figure in ("staleness", "response"):
        for t in explorer.figures[figure].data:
            if t.meta:
                met = t.meta["preconditions_met"]
                assert (t.line.dash == "dot") == (not met) and (t.line.color == viz.leontyev.UNMET_COLOR) == (not met)
                assert t.name.endswith(": holds") == (met and t.meta["holds"] is True)


def with_outage(feed: str, start: float, length: float) -> dict:
    doc = sl.load_workload(AUS).to_dict()
    for table in doc["tables"]:
        if table["name"] == feed:
            table["outages"] = [[start, start + length]]
    return doc


def test_an_outage_on_a_feed_equals_the_same_check(explorer: BoundExplorer) -> None:
    assert explorer.reason is None
    assert explorer.summary == sl.check(AUS, "aus", options={"recovery_rule": "single"}).to_json("aus", sl.__version__)
    before = drawn(explorer)
    c = explorer.controls
    c["outage_feed"].value = "clicks"
    c["outage_start"].value = 200.0
    c["outage_length"].value = 120.0
    report = sl.check(with_outage("clicks", 200.0, 120.0), "aus", options={"recovery_rule": "single"})
    assert explorer.summary == report.to_json("aus", sl.__version__)
    assert drawn(explorer)["staleness"] != before["staleness"]
    lines = bound_lines(explorer)
    # clicks' feed broke: its bound is not claimed (windows unmet) and is drawn apart, with why
    assert not lines["clicks"].meta["preconditions_met"] and lines["clicks"].line.dash == "dot"
    assert "windows" in lines["clicks"].meta["reason"] and "holds" not in lines["clicks"].name
    assert any(r.claim == "recovery-time" and r.table == "clicks" for r in report.records)
    assert "Leontyev et al., Theorem 4" in explorer.notes
    recoveries = bound_lines(explorer, claim="recovery-time")
    assert "clicks" in recoveries and recoveries["clicks"].x[0] > 200.0
    drawn_as_claimed(explorer)


def test_gedf_np_on_one_track_draws_theta_apart_with_the_utilization_reason(explorer: BoundExplorer) -> None:
    """U_sum = 1.152 > m = 1: GEDF-NP runs, and Lemma 1's Theta_k is claimed for no table
    (utilization unmet); the staleness bounds depend on the observed response times instead."""
    explorer.controls["policy"].value = "gedf-np"
    explorer.controls["tracks"].value = 1
    assert explorer.reason is None
    assert explorer.summary == sl.check(AUS, "gedf-np", tracks=1).to_json("gedf-np", sl.__version__)
    theta = bound_lines(explorer, "response", "response-time")
    assert len(theta) == 5 and all("utilization unmet" in t.name for t in theta.values())
    assert all(t.meta["reason"].startswith("utilization: ") for t in theta.values())
    assert "not decided: utilization" in explorer.notes
    drawn_as_claimed(explorer)


def test_aus_above_the_tracks_is_refused_and_the_view_kept(explorer: BoundExplorer) -> None:
    refused_keeps_view(explorer, "tracks", 1, "U_sum", "> m = 1")


def test_a_zero_outage_length_removes_the_outage(explorer: BoundExplorer) -> None:
    explorer.controls["outage_feed"].value = "orders"
    explorer.controls["outage_length"].value = 0.0
    doc = sl.load_workload(AUS).to_dict()
    doc["tables"][0].pop("outages")
    assert explorer.summary == sl.check(doc, "aus", options={"recovery_rule": "single"}).to_json("aus", sl.__version__)
    assert all(t.meta["preconditions_met"] for t in bound_lines(explorer).values())
