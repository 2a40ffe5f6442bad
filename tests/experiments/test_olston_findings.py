"""The evidence behind the report's Table 6 and checks 10 and 12 findings under our earlier
readings (an empty element as the oldest, baselines re-invoked until fresh, inputs readable
across channels only within their bounds), on real runs at quick sizes: GREEDY's steps against
the DP's plans (SearchPreprocessing: the same runs, the same lag and cost;
FeedbackPrioritization: the same runs, cheaper), the union's variants with and without rule (e),
the mix of SearchPreprocessing's Sync/Incr repairs, CrawlSelection's indegree refreshes with and
without rule (e), and RANDOM's calls and the blocks each sees on CrawlSelection. The paper's
readings are tested in ``tests/workflows/test_readings.py``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from staleness_lab.experiments.olston import sweeps as olston
from staleness_lab.experiments.olston import verdicts as olston_checks
from staleness_lab.sweeps.runner import run_grid
from staleness_lab.workflows.propagate import propagate
from staleness_lab.workflows.sim import RunConfig, run

SP, FP, CS = "search-preprocessing", "feedback-prioritization", "crawl-selection"


@pytest.fixture(scope="module")
def table6() -> pd.DataFrame:
    rows = [{"workflow": w, "scheduler": s, "hours": 3.0, "seed": 1, "reading": reading}
            for w in (SP, FP) for s, reading in (("dp", "empty as oldest"), ("greedy", "re-invoke until fresh"))]
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
    oldest, reinvoked = olston.options_without("", "empty as oldest"), olston.options_without("", "re-invoke until fresh")
    runs = {"dp": run(fp, RunConfig(seed=1, horizon=3.0, options=oldest)),
            "dp without (e)": run(fp, RunConfig(seed=1, horizon=3.0, options=olston.options_without("longterm"))),
            "greedy": run(fp, RunConfig(scheduler="greedy", seed=1, horizon=3.0, options=reinvoked))}
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



def test_an_indegree_refresh_can_read_only_the_latest_fetch_snapshot() -> None:
    """Fetches' propagated staleness bound is 0 (successful fetches' and content digests' own),
    and an input read across channels must meet it: extract-links, the first step of every
    indegree refresh, is offered on the delta to the latest snapshot only."""
    sources = olston_checks.indegree_sources()
    assert (sources["stale_bound_h"] == 0.0).all()
    latest = (sources["behind_h"] == 0.0).tolist()
    assert sources["readable"].tolist() == latest and sources["offered"].tolist() == latest
    assert latest.count(True) == 1 and sources["behind_h"].max() > 160  # "just under a week old": refused


def test_rule_e_changes_nothing_on_crawl_selection() -> None:
    cs = olston.load(CS)
    assert propagate(cs)["top"].inconsistency == olston.WEEK_H  # crawl_queue's bound, copied upstream
    runs = {off: run(cs, RunConfig(seed=1, horizon=192.0, options=olston.options_without(off, "readable across channels")))
            for off in ("", "longterm")}
    assert runs[""].frames["invocations"].equals(runs["longterm"].frames["invocations"])
    reads = olston_checks.indegree_reads(runs[""].frames)
    refreshes = reads[reads["refreshed"]]
    # one refresh in 8 days, after week 1, to the fetch snapshot top-unfetched reads: fully up to date
    assert len(refreshes) == 1 and refreshes["after_1w"].all() and (refreshes["behind_h"] == 0.0).all()
    # it runs exactly when keeping the indegrees would break top-unfetched's one-week bound
    later = reads.iloc[1:]
    assert (later["refreshed"] == (later["previous_h"] >= olston.WEEK_H)).all()
    assert (reads["inconsistency_h"] < olston.WEEK_H).all()
    assert reads["after_1w"].sum() > 10 * len(refreshes)
    assert set(reads.columns) == {"start", "fetches", "indegrees", "behind_h", "inconsistency_h", "previous_h",
                                  "refreshed", "after_1w"}


def test_random_is_called_after_its_own_steps_and_each_call_sees_more_blocks() -> None:
    cs = olston.load(CS)
    reinvoked = olston.Options(reinvoke_until_fresh=True, readable_across_channels=True)
    runs = {s: run(cs, RunConfig(scheduler=s, seed=3, horizon=6.0, options=reinvoked)) for s in ("dp", "greedy", "random")}
    summary = olston_checks.call_summary({s: r.frames for s, r in runs.items()}).set_index("run")
    dp, rnd = summary.loc["dp"], summary.loc["random"]
    assert dp["calls"] == dp["at_arrival"]  # the DP repairs each violation with one plan
    # RANDOM's step rarely repairs the output: re-invoked after its own steps
    assert rnd["calls"] > 20 * dp["calls"] and rnd["at_arrival"] < 0.1 * rnd["calls"]
    assert rnd["converters"] > 10 * dp["converters"] and rnd["blocks_max"] > 5 * dp["blocks_max"]
    assert summary["scheduler_s"].idxmax() == "random"
    growth = olston_checks.call_growth({s: r.frames["scheduler_calls"] for s, r in runs.items()})
    mine = growth[growth["run"] == "random"]
    assert mine["candidates"].is_monotonic_increasing and len(mine) >= 4  # more blocks, more one-step candidates
    assert mine["ms_median"].iloc[-1] > 5 * mine["ms_median"].iloc[0]
    assert growth.groupby("run")["calls"].sum().to_dict() == summary["calls"].to_dict()


def test_scheduler_load_splits_time_into_calls_and_time_per_call() -> None:
    rows = [{"workflow": CS, "scheduler": s, "seed": seed, "status": status, "plans": plans, "scheduler_s": secs,
             "call_ms_median": 1.0}
            for s, seed, status, plans, secs in [("dp", 1, "ok", 10, 0.01), ("dp", 2, "ok", 12, 0.012),
                                                 ("random", 1, "ok", 400, 1.0), ("random", 2, "timeout", 800, 15.0),
                                                 ("greedy", 1, "error", 0, 0.0)]]
    load = olston_checks.scheduler_load(pd.DataFrame(rows)).set_index("scheduler")
    assert load.index.tolist() == ["dp", "random"]  # a failed row is left out, a timed-out one counted
    rnd = load.loc["random"]
    assert rnd["runs"] == 2 and rnd["timeouts"] == 1 and rnd["calls"] == 600
    assert rnd["calls"] * rnd["ms_per_call"] / 1000 == pytest.approx(rnd["scheduler_s"])
    assert rnd["calls_vs_dp"] == pytest.approx(600 / 11) and rnd["ms_vs_dp"] == pytest.approx(16 / 1200 / (0.022 / 22))
