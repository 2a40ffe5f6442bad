"""The readings the paper leaves open (digest, third-round corrections), each an option whose
paper-faithful value is the default, on short real runs: each shows the difference the audit
measured between the paper's reading and ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from staleness_lab.notebook_params import repo_file
from staleness_lab.workflows.blocks import DELTA, Block
from staleness_lab.workflows.candidates import Pool
from staleness_lab.workflows.context import EPSILON, Options
from staleness_lab.workflows.load import load_workflow
from staleness_lab.workflows.provenance import prov
from staleness_lab.workflows.schedule import Scheduler
from staleness_lab.workflows.sim import RunConfig, run
from tests.test_hostile_inputs import one_error_line, run_cli


def _workflow(name: str):  # type: ignore[no-untyped-def]
    return load_workflow(repo_file(f"data/workflows/{name}.yaml"))


def _union_variants(options: Options) -> tuple[dict[str, int], int]:
    """FeedbackPrioritization's union runs per variant over 3 hours (seed 1), and the calls."""
    result = run(_workflow("feedback-prioritization"), RunConfig(seed=1, horizon=3.0, options=options))
    inv = result.frames["invocations"]
    runs = inv[inv["operator"] == "union"].groupby("variant").size().to_dict()
    return runs, len(result.frames["scheduler_calls"])


def test_rule_e_lets_the_news_only_union_run_when_an_empty_element_is_incomparable() -> None:
    """Correction 1 (§7.2, "just news-related searches"): with the empty element incomparable
    the news-only delta competes on cost and wins on every call but the first; read as
    ``hi = -inf`` it is dominated by the two-sided delta, which carries the non-news rows."""
    paper, calls = _union_variants(Options())
    assert paper == {"async-left": calls - 1}
    oldest, calls_oldest = _union_variants(Options(empty_incomparable=False))
    assert calls_oldest == calls
    assert oldest == {"async-left": 1, "incremental": calls - 2}


@pytest.mark.parametrize("scheduler", ["greedy", "random"])
def test_a_baseline_answers_each_event_once_unless_reinvoked_until_fresh(scheduler: str) -> None:
    """Correction 2 (line 497): one single-operator plan per scheduler invocation, invoked on the
    DP's events. SearchPreprocessing's repair takes two steps (shingle, then join), so one step
    per crawl arrival leaves the output stale; the old loop calls again after each step."""
    wf = _workflow("search-preprocessing")
    dp = run(wf, RunConfig(seed=1, horizon=3.0))
    paper = run(wf, RunConfig(scheduler=scheduler, seed=1, horizon=3.0))
    loop = run(wf, RunConfig(scheduler=scheduler, seed=1, horizon=3.0, options=Options(reinvoke_until_fresh=True)))
    arrivals = set(dp.frames["blocks"].query("source == 'input'")["made_at"])
    calls = paper.frames["scheduler_calls"]
    # the DP's events and only those: one call per arrival instant, each with one operator's step
    assert calls["time"].tolist() == dp.frames["scheduler_calls"]["time"].tolist()
    assert set(calls["time"]) <= arrivals
    steps = paper.frames["invocations"].query("variant != 'chain'").groupby("plan").size()
    assert (steps == 1).all()
    assert paper.summary["unrepaired"] == 1 and paper.summary["lag_cpu_h"] == pytest.approx(3.0 * 1000 - 250, rel=0.01)
    # re-invoked until fresh: calls after its own steps, and the output repaired each time
    looped = loop.frames["scheduler_calls"]
    assert len(looped) > 2 * len(calls) and not set(looped["time"]) <= arrivals
    assert loop.summary["lag_cpu_h"] < 0.1


def test_readability_across_channels_limits_what_an_indegree_refresh_reads() -> None:
    """Correction 5: with the check on, extract-links (every indegree refresh's first step) may
    read only the fetches delta to the latest snapshot (the fetches' propagated staleness bound
    is 0); off, as the paper checks generated blocks only (§6.1), every delta is offered."""
    at, every = 168.75, 0.25
    times = [k * every for k in range(int(at // every) + 1)]
    offered = {}
    for readable in (True, False):
        scheduler = Scheduler(_workflow("crawl-selection"), options=Options(readable_across_channels=readable))
        ctx = scheduler.context(at + EPSILON, {}, {"fetches": times})
        gen = scheduler.generator(ctx, [])
        found = []
        for behind in (0.0, 0.25, 24.0, 164.5):
            delta = Block("fetches", DELTA, prov(times[-1] - behind), prov(0.0))
            pool = Pool()
            pool.add(delta)
            found.append(any(inv.operator == "extract-links" for _, inv in gen(delta, pool)))
        offered[readable] = found
    assert offered[True] == [True, False, False, False]
    assert offered[False] == [True, True, True, True]


def test_the_readings_reach_workflow_run_as_options(tmp_path: Path) -> None:
    """``workflow run --option`` takes the readings beside the heuristics: GREEDY on
    SearchPreprocessing makes one call per crawl arrival by default, more when re-invoked."""
    wf = repo_file("data/workflows/search-preprocessing.yaml")
    plans = {}
    for value in ("off", "on"):
        done = run_cli("workflow", "run", wf, "--scheduler", "greedy", "--horizon", "2", "--seed", "1", "--json",
                       "--option", f"reinvoke_until_fresh={value}", "--option", "empty_incomparable=on", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        plans[value] = json.loads(done.stdout)["plans"]
    assert plans["off"] == 8 and plans["on"] > 2 * plans["off"]
    line = one_error_line(run_cli("workflow", "run", wf, "--option", "readable_across_channels=maybe", cwd=tmp_path))
    assert "--option readable_across_channels" in line and "on/off" in line
