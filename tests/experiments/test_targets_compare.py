"""The scheduler comparison on freshness targets (:mod:`staleness_lab.experiments.targets`)."""

from __future__ import annotations

import pytest

import staleness_lab as sl
from staleness_lab.experiments.targets import COMPARED, compare_targets, comparison_summary
from staleness_lab.experiments.targets.compare import COLUMNS


def one_feed() -> dict:
    """One table, period 10, E(n) = 1 + 0.1 n, target 25, one track, horizon 100, no noise.

    target-lag refreshes at 22, 42, 62, 82 (lag + E(20) = 25; tests/policies/test_target_lag.py):
    staleness 0->25 on [0,25), 5->25 three times, 5->20 on [85,100]: area 312.5 + 3*300 + 187.5 =
    1400, worst 25, no miss. Every other policy refreshes each file at once (cost E(10) = 2): 0->12
    on [0,12), 2->12 eight times, 2->10 on [92,100]: area 72 + 8*70 + 48 = 680, worst 12."""
    return {"tracks": 1, "horizon": 100, "tables": [
        {"name": "a", "period": 10, "alpha": 1, "beta": 0.1, "priority": 1, "target_lag": 25}]}


def test_every_policy_and_seed_on_the_same_workload_by_hand():
    frame = compare_targets(one_feed(), seeds=(0, 1))
    assert list(frame.columns) == COLUMNS
    assert list(zip(frame["seed"], frame["policy"])) == [(s, p) for s in (0, 1) for p in COMPARED]
    assert frame["misses"].tolist() == [0] * 10 and frame["excess"].tolist() == [0.0] * 10
    expected = {"target-lag": (25, 1400)} | {p: (12, 680) for p in COMPARED[1:]}
    for row in frame.itertuples():
        assert (row.worst_lag, row.weighted_staleness) == pytest.approx(expected[row.policy], rel=1e-12)
    summary = comparison_summary(frame)
    assert summary["policy"].tolist() == list(COMPARED) and summary["seeds"].tolist() == [2] * 5
    assert summary.set_index("policy").loc["target-lag", "worst_over_target"] == 1.0


def test_rows_are_each_runs_own_target_metrics_and_an_infeasible_policy_says_why():
    w = {"tracks": 1, "horizon": 300, "cost_noise": [0.5, 1.5], "tables": [
        {"name": "a", "period": 10, "alpha": 3, "beta": 0.2, "priority": 2},
        {"name": "b", "period": 15, "alpha": 4, "beta": 0.1, "priority": 1, "target_lag": 30},
        {"name": "v", "sources": ["a", "b"], "alpha": 2, "beta": 0.1, "priority": 3, "target_lag": 40}]}
    frame = compare_targets(w, seeds=(3,), policies=("target-lag", "aus"))
    own = sl.simulate({**w, "seed": 3}, "target-lag").target_metrics
    mine = frame[frame["policy"] == "target-lag"].reset_index(drop=True)
    assert mine["table"].tolist() == ["b", "v"]
    assert mine["excess"].tolist() == own["excess"].tolist() and mine["misses"].tolist() == own["misses"].tolist()
    aus = frame[frame["policy"] == "aus"]
    assert aus["excess"].isna().all() and aus["infeasible"].str.contains("U_sum <= m").all()
