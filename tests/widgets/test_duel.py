"""SchedulerDuel: two schedulers on one workload and seed, each side equal to its own run."""

from __future__ import annotations

import pytest

import staleness_lab as sl
from staleness_lab.widgets import SchedulerDuel
from tests.widgets.helpers import DEMO, drawn, refused_keeps_view


@pytest.fixture()
def duel() -> SchedulerDuel:
    return SchedulerDuel(DEMO, left="fifo", right="max-benefit", horizon=1000)


def test_each_side_equals_its_own_run_and_the_difference_is_right_minus_left(duel: SchedulerDuel) -> None:
    before = drawn(duel)
    c = duel.controls
    c["left"].value = "edf"
    c["right"].value = "edf-p"
    c["seed"].value = 11
    c["tracks"].value = 3
    left = sl.simulate(DEMO, "edf", tracks=3, horizon=1000, seed=11)
    right = sl.simulate(DEMO, "edf-p", tracks=3, horizon=1000, seed=11)
    assert duel.reason is None
    assert duel.summary["left"] == left.summary() and duel.summary["right"] == right.summary()
    expected = {t["table"]: t for t in (row for row in duel.summary["difference"])}
    for a, b in zip(left.tables.itertuples(), right.tables.itertuples()):
        assert expected[a.table]["difference"] == b.weighted_staleness_area - a.weighted_staleness_area
    after = drawn(duel)
    assert set(after) == {"left", "right", "difference"}
    assert all(after[k] != before[k] for k in after)


def test_the_same_scheduler_on_both_sides_differs_nowhere(duel: SchedulerDuel) -> None:
    """Common random numbers: one seed, one policy, so every table's difference is exactly 0."""
    duel.controls["right"].value = "fifo"
    assert [row["difference"] for row in duel.summary["difference"]] == [0.0] * 6
    assert duel.summary["left"] == duel.summary["right"]


def test_a_side_that_cannot_run_keeps_the_last_duel(duel: SchedulerDuel) -> None:
    duel.controls["tracks"].value = 2
    refused_keeps_view(duel, "right", "group-and-run", "group-and-run needs more processors than groups")
