"""Freshness-target metrics on hand-computed traces (:mod:`staleness_lab.sim.targets`).

Every expected number is derived in a comment from the engine's model: S(t) = t - F(t) rises with
slope 1 between updates and drops when one lands; the segment [a, b) with F has staleness from
a - F to b - F, so the part above a target T starts at max(a, F + T) and its excess is
((b - F - T)^2 - (u - F - T)^2) / 2.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

import staleness_lab as sl
from staleness_lab.sim.targets import TARGET_METRIC_COLUMNS, segment_metrics
from tests.cli_fork import run_cli

EXACT = dict(rel=0, abs=1e-9)


def table(**keys) -> dict:
    return {"priority": 1, "beta": 0, **keys}


def metrics_row(result, name: str):
    frame = result.target_metrics
    return frame[frame["table"] == name].iloc[0]


def slow_feed(target: float) -> dict:
    """One table, period 10, cost 12 > period, FIFO on one track, horizon 60. Jobs: [10, 22) loads
    to 10; [22, 34) to 20; [34, 46) to 30; [46, 58) to 40 (the file of 50 lands after 46); the job
    starting at 58 is cut by the horizon. Segments: [0,22) F=0 (S 0->22), [22,34) F=10 (12->24),
    [34,46) F=20 (14->26), [46,58) F=30 (16->28), [58,60] F=40 (18->20)."""
    return {"tracks": 1, "horizon": 60, "tables": [table(name="a", period=10, alpha=12, target_lag=target)]}


def test_separate_episodes_each_start_below_target():
    # T = 20: seg0 above on (20,22): 2, excess 2^2/2 = 2; seg1 onset max(22, 30) = 30: 4, excess 4^2/2 = 8;
    # seg2 onset 40: 6, excess 18; seg3 onset 50: 8, excess 32; seg4 reaches 20 only at 60 (not
    # above: meeting the target is not missing it). Every segment starts
    # below 20 (12, 14, 16), so 4 episodes; worst lag 28 (just before 58).
    row = metrics_row(sl.simulate(slow_feed(20), "fifo"), "a")
    assert row["time_above"] == pytest.approx(20, **EXACT)
    assert row["fraction_above"] == pytest.approx(20 / 60, **EXACT)
    assert row["excess"] == pytest.approx(60, **EXACT)
    assert row["worst_lag"] == pytest.approx(28, **EXACT)
    assert row["misses"] == 4


def test_an_episode_carries_over_an_update_that_leaves_staleness_above_target():
    # T = 13: seg0 above from 13: 9, excess 9^2/2 = 40.5 (episode 1). seg1 starts at S = 12 <= 13:
    # onset 23, 11 long, excess 11^2/2 = 60.5 (episode 2). seg2 starts at 14 > 13: the update at
    # 34 did not end episode 2; 12 long, excess (13^2 - 1^2)/2 = 84. seg3 starts at 16 > 13: still
    # episode 2; 12, excess (15^2 - 3^2)/2 = 108. seg4 starts at 18 > 13: still episode 2; 2,
    # excess (7^2 - 5^2)/2 = 12. So 2 episodes, 46 above, excess 305.
    row = metrics_row(sl.simulate(slow_feed(13), "fifo"), "a")
    assert row["time_above"] == pytest.approx(46, **EXACT)
    assert row["excess"] == pytest.approx(305, **EXACT)
    assert row["misses"] == 2
    assert row["worst_lag"] == pytest.approx(28, **EXACT)


def chain(warmup: float = 0) -> dict:
    """a (period 10, cost 1) -> v (cost 1), FIFO on one track, horizon 30: a [10,11) F_a = 10,
    v [11,12) F_v = 10; a [20,21), v [21,22) F_v = 20; a's job at 30 ends past the horizon.
    v's segments: [0,12) F=0 (S 0->12), [12,22) F=10 (2->12), [22,30] F=20 (2->10): its
    staleness counts from a's data, the root of the DAG."""
    return {"tracks": 1, "horizon": 30, "warmup": warmup,
            "tables": [table(name="a", period=10, alpha=1), table(name="v", sources=["a"], alpha=1, target_lag=11)]}


def test_a_derived_tables_lag_is_end_to_end_and_tables_without_target_get_no_row():
    # v, T = 11: seg0 above on (11,12): 1, excess 0.5; seg1 on (21,22): 1, excess 0.5: 2 above, excess
    # 1, 2 episodes.
    result = sl.simulate(chain(), "fifo")
    frame = result.target_metrics
    assert list(frame.columns) == TARGET_METRIC_COLUMNS
    assert frame["table"].tolist() == ["v"]
    row = metrics_row(result, "v")
    assert (row["target_lag"], row["time_above"], row["excess"], row["worst_lag"], row["misses"]) == (11, 2, 1, 12, 2)


def test_the_window_starts_at_warmup():
    # warmup 15: v's window starts inside [12,22) with F=10, S from 5 to 12: above on (21,22) only.
    row = metrics_row(sl.simulate(chain(warmup=15), "fifo"), "v")
    assert (row["time_above"], row["excess"], row["misses"]) == (1, 0.5, 1)
    assert row["fraction_above"] == pytest.approx(1 / 15, **EXACT)


def test_downstream_tables_are_measured_against_their_resolved_target():
    w = chain()
    w["tables"][0]["target_lag"] = "downstream"  # resolves to v's 11; a's segments [0,11) S 0->11, [11,21) 1->11, [21,30] 1->10
    row = metrics_row(sl.simulate(w, "fifo"), "a")
    assert (row["target_lag"], row["time_above"], row["misses"], row["worst_lag"]) == (11, 0, 0, 11)


def test_segment_metrics_by_hand():
    # Segments [0,4) F=0 (S 0->4), [4,6) F=3.5 (0.5->2.5), [6,9) F=-1 (7->10); T = 3 (F falls, which
    # no trace does, but the arithmetic holds for any steps): seg0 above (3,4): 1, excess 0.5; seg1
    # never; seg2 all: 3, excess (7^2 - 4^2)/2 = 16.5, a new episode (seg1 ended below T).
    starts, ends, fresh = np.array([0.0, 4, 6]), np.array([4.0, 6, 9]), np.array([0.0, 3.5, -1])
    assert segment_metrics(starts, ends, fresh, 3.0) == (4.0, 17.0, 10.0, 2)


@pytest.mark.parametrize("policy", ["fifo", "edf-p", "max-benefit", "gedf-np", "aus", "target-lag"])
def test_worst_lag_is_the_traces_own_max_staleness(policy):
    w = {"tracks": 2, "horizon": 400, "warmup": 50, "cost_noise": [0.5, 1.5], "tables": [
        table(name="a", period=10, alpha=2, beta=0.1, target_lag=15), table(name="b", period=25, alpha=3, target_lag=30),
        table(name="c", period=7, alpha=1, beta=0.2, target_lag=9)]}
    result = sl.simulate(w, policy)
    assert result.target_metrics["worst_lag"].to_numpy() == pytest.approx(result.tables["max_staleness"].to_numpy(), rel=1e-12)


def test_no_targets_no_rows_and_no_summary_key():
    w = chain()
    del w["tables"][1]["target_lag"]
    result = sl.simulate(w, "fifo")
    assert result.target_metrics.empty and list(result.target_metrics.columns) == TARGET_METRIC_COLUMNS
    assert "targets" not in result.summary()


def test_simulate_json_adds_a_targets_key_only_when_tables_have_targets(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(chain()), encoding="utf-8")
    proc = run_cli(["simulate", path, "--policy", "fifo", "--json"])
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["targets"] == [{"table": "v", "target_lag": 11.0, "time_above": 2.0, "fraction_above": 2 / 30,
                               "excess": 1.0, "worst_lag": 12.0, "misses": 2}]
    plain = chain()
    del plain["tables"][1]["target_lag"]
    path.write_text(yaml.safe_dump(plain), encoding="utf-8")
    again = json.loads(run_cli(["simulate", path, "--policy", "fifo", "--json"]).stdout)
    assert set(out) - set(again) == {"targets"} and out["tables"] == again["tables"]
