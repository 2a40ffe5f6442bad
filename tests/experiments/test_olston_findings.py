"""The evidence behind the report's Table 6 and check 10 findings, on real runs at quick sizes:
GREEDY's steps against the DP's plans (SearchPreprocessing: the same runs, the same lag and
cost; FeedbackPrioritization: the same runs, cheaper), the union's variants with and without
rule (e), and the mix of SearchPreprocessing's Sync/Incr repairs."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from staleness_lab.experiments import olston, olston_checks
from staleness_lab.sweeps.runner import run_grid
from staleness_lab.workflows.sim import RunConfig, run

SP, FP = "search-preprocessing", "feedback-prioritization"


@pytest.fixture(scope="module")
def table6() -> pd.DataFrame:
    rows = [{"workflow": w, "scheduler": s, "hours": 3.0, "seed": 1} for w in (SP, FP) for s in ("dp", "greedy")]
    return run_grid("olston-run", rows, cache_dir=None, progress=False)


def test_greedy_repeats_the_dps_work_on_sp_and_undercuts_it_on_fp(table6: pd.DataFrame) -> None:
    steps = olston_checks.baseline_steps(table6).set_index(["workflow", "scheduler"])
    assert steps.loc[("SP", "dp"), "same_work"] and steps.loc[("SP", "dp"), "chains"] == 0
    sp = steps.loc[("SP", "greedy")]
    # every cheapest step was a step of the DP's plan: the same runs, hence the same lag and cost
    assert sp["same_work"] and sp["work"] == steps.loc[("SP", "dp"), "work"] > 0
    assert sp["lag_vs_dp"] == 1.0 and sp["cost_vs_dp"] == 1.0
    assert sp["chains"] > 0 and sp["converters"] == 0  # GREEDY's only extra steps cost nothing
    fp = steps.loc[("FP", "greedy")]
    assert fp["same_work"] and fp["cost_vs_dp"] < 1.0  # the same operators, as often, cheaper


def test_baseline_steps_compares_runs_operator_for_operator(table6: pd.DataFrame) -> None:
    """Another count of one operator breaks ``same_work``; a timed-out row is left out."""
    frame = table6.copy()
    greedy_fp = (frame["workflow"] == FP) & (frame["scheduler"] == "greedy")
    runs = json.loads(frame.loc[greedy_fp, "operator_runs"].iloc[0])
    frame.loc[greedy_fp, "operator_runs"] = json.dumps({**runs, "union": runs["union"] + 1})
    frame.loc[(frame["workflow"] == SP) & (frame["scheduler"] == "greedy"), "status"] = "timeout"
    steps = olston_checks.baseline_steps(frame).set_index(["workflow", "scheduler"])
    assert not steps.loc[("FP", "greedy"), "same_work"]
    assert ("SP", "greedy") not in steps.index and ("SP", "dp") in steps.index


def test_rule_e_makes_the_dp_carry_non_news_rows_that_greedy_leaves() -> None:
    fp = olston.load(FP)
    runs = {"dp": run(fp, RunConfig(seed=1, horizon=3.0)),
            "dp without (e)": run(fp, RunConfig(seed=1, horizon=3.0, options=olston.options_without("longterm"))),
            "greedy": run(fp, RunConfig(scheduler="greedy", seed=1, horizon=3.0))}
    variants = olston_checks.variant_runs({k: r.frames["invocations"] for k, r in runs.items()})
    union = variants[variants["operator"] == "union"].set_index(["run", "variant"])
    calls = len(runs["dp"].frames["scheduler_calls"])
    # with (e) the news-only delta loses to the two-sided one on all calls but the first
    assert union.loc[("dp", "incremental"), "runs"] == calls - 2
    assert union.loc[("dp", "async-left"), "runs"] == 1
    # without (e) the DP, like GREEDY, unites the news side alone, on the same inputs
    for name in ("dp without (e)", "greedy"):
        assert union.loc[name].index.tolist() == ["async-left"]
        assert union.loc[(name, "async-left"), "runs"] == calls - 1
    assert union.loc[("greedy", "async-left"), "cost_cpu_h"] == pytest.approx(
        union.loc[("dp without (e)", "async-left"), "cost_cpu_h"])
    assert union.loc["dp", "cost_cpu_h"].sum() > 1.1 * union.loc["greedy", "cost_cpu_h"].sum()
    assert set(variants.columns) == {"run", "operator", "variant", "runs", "cost_cpu_h"}


def test_repair_mix_of_sp_sync_repairs() -> None:
    rows = [{"workflow": SP, "scenario": sc, "hours": 6.0, "seed": 1} for sc in ("async-incr", "sync-incr")]
    frame = run_grid("olston-run", rows, cache_dir=None, progress=False)
    mix = olston_checks.repair_mix(frame).set_index("scenario")
    sync, asynchronous = mix.loc["sync-incr"], mix.loc["async-incr"]
    assert sync["repairs"] == asynchronous["repairs"] == 24  # a crawl delta every 15 minutes
    # clicks arrive hourly: one repair in four processes new clicks; Async/Incr none in 6 h
    assert sync["share_clicks"] == 0.25 and asynchronous["share_clicks"] == 0.0
    # at least half of the Sync/Incr repairs neither process clicks nor rebuild the digests base
    assert 1.0 - sync["share_digests_base"] >= 0.5
    assert asynchronous["lag_ratio"] == 1.0 and 1.0 < sync["lag_ratio"] < 50.0
    assert sync["max_ratio"] < 50.0
    assert sync["max_ratio"] == pytest.approx(sync["lag_max_cpu_h"] / asynchronous["lag_cpu_h"])
    assert sync["cost_per_repair"] > asynchronous["cost_per_repair"]
    # a timed-out run is left out; an operator no run made counts 0
    timed_out = frame.assign(status=["ok", "timeout"])
    assert olston_checks.repair_mix(timed_out)["scenario"].tolist() == ["async-incr"]
    assert olston_checks.repair_mix(frame, markers={"none": "no-such-op"})["share_none"].tolist() == [0.0, 0.0]
