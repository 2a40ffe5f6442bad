"""The scheduler on a Workflow loaded from YAML: E8 through olston-example.yaml (inconsistency
bound 1d), with heuristics (a), (b), (d) off as its fixture states, and with every heuristic on;
scenarios restrict what the plan may use."""

from __future__ import annotations

from pathlib import Path

import pytest

from staleness_lab.errors import InputError
from staleness_lab.workflows.blocks import BASE, DELTA, Block
from staleness_lab.workflows.context import Options
from staleness_lab.workflows.costs import Rates
from staleness_lab.workflows.load import load_workflow
from staleness_lab.workflows.provenance import prov
from staleness_lab.workflows.schedule import Scheduler, scenario_workflow

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "workflows" / "olston-example.yaml"
CRAWL = [15, 32, 59, 65, 86]
CLICKS = [0, 25, 49, 73]
DIGEST_ROWS = {32: 1, 59: 1, 65: 1, 86: 2}
CLICK_BASE_ROWS = {0: 0, 25: 1, 49: 2, 73: 2}
CLICK_DELTAS = {(0, 25): (1, 0), (25, 49): (3, 1), (49, 73): (4, 2)}
FIXTURE = Options(prune_old=False, chains=False, overkill=False)


def blocks_at(t: float) -> list[Block]:
    """Correction 5's fixture: click bases and deltas at every snapshot, digests B(<15>) = {}
    plus its deltas, the output's B(<15,25>) = {}."""
    crawl, clicks = [c for c in CRAWL if c <= t], [c for c in CLICKS if c <= t]
    out = [Block("digests", BASE, prov(15)), Block("output", BASE, prov(15, 25))]
    out += [Block("digests", DELTA, prov(b), prov(a), rows=DIGEST_ROWS[b]) for a, b in zip(crawl, crawl[1:])]
    out += [Block("scores", BASE, prov(c), rows=CLICK_BASE_ROWS[c]) for c in clicks]
    out += [Block("scores", DELTA, prov(b), prov(a), rows=CLICK_DELTAS[a, b][0], deletes=CLICK_DELTAS[a, b][1])
            for a, b in zip(clicks, clicks[1:])]
    return out


@pytest.mark.parametrize("options", [FIXTURE, Options()], ids=["fixture", "all-heuristics"])
@pytest.mark.parametrize(
    ("t", "head", "last", "cost", "chosen"),
    [
        (65, prov(59, [25, 49]), prov(59, 49), 4, Block("output", DELTA, prov(65, 49), prov(59, 49))),
        (86, prov(65, [25, 49]), prov(65, 49), 22, Block("output", BASE, prov(86, 73))),
    ],
    ids=["t65", "t86"],
)
def test_e8_from_the_yaml(options, t, head, last, cost, chosen) -> None:
    scheduler = Scheduler(load_workflow(EXAMPLE), "async-incr", options)
    result = scheduler.plan(t=t, blocks=blocks_at(t), heads={"output": head}, last_targets={"output": last},
                            arrivals={"digests": CRAWL, "scores": CLICKS})
    assert result.infeasible == ()
    assert (result.cost, result.chosen["output"]) == (cost, chosen)


def test_the_head_is_violated_when_the_crawl_moves_on() -> None:
    scheduler = Scheduler(load_workflow(EXAMPLE))
    arrivals = {"digests": CRAWL, "scores": CLICKS}
    assert scheduler.violated(scheduler.context(65.01, {"output": prov(59, [25, 49])}, arrivals)) == ["output"]
    assert scheduler.violated(scheduler.context(64.0, {"output": prov(59, [25, 49])}, arrivals)) == []


@pytest.mark.parametrize(("scenario", "cost", "variants"), [
    ("async-incr", 4, {"async-left"}),
    ("sync-incr", 14, {"chain", "delta->B", "batch"}),  # B(<65,49>) is consistent: its batch join
    ("async-batch", 14, {"chain", "delta->B", "batch"}),
    ("sync-batch", 14, {"chain", "delta->B", "batch"}),
])
def test_scenarios_at_65(scenario, cost, variants) -> None:
    scheduler = Scheduler(load_workflow(EXAMPLE), scenario, FIXTURE)
    result = scheduler.plan(t=65, blocks=blocks_at(65), heads={"output": prov(59, [25, 49])},
                            last_targets={"output": prov(59, 49)}, arrivals={"digests": CRAWL, "scores": CLICKS})
    assert result.cost == cost
    assert {inv.variant for inv in result.invocations} == variants
    if scenario.endswith("batch"):
        assert all(b.is_base for inv in result.invocations for b in inv.outputs if b.channel == "output")


def test_sync_scenarios_bound_every_derived_channel() -> None:
    wf = scenario_workflow(load_workflow(EXAMPLE), "sync-incr")
    assert [(c.channel, c.t) for c in wf.constraints if type(c).__name__ == "InconsistencyBound"][-1] == ("output", 0.0)
    with pytest.raises(InputError, match="--scenario"):
        scenario_workflow(wf, "eventual")


def test_converters_cost_at_the_workflows_cost_model() -> None:
    sp = load_workflow(EXAMPLE.parent / "search-preprocessing.yaml")
    scheduler = Scheduler(sp)
    gen = scheduler.generator(scheduler.context(1.0, {}, {"pages": [0.0], "clicks": [0.0]}), [])
    assert gen.io_rates == Rates(alpha=0.01, beta=1e-6, gamma=1e-6, pi=1e-7)


def test_sync_scenarios_trigger_on_own_bounds_not_the_clamped_ones() -> None:
    """Under sync-incr propagation clamps crawl_queue's staleness to its inconsistency 0; a head
    one fetch behind is still within its own 1h, 1d and 4h, so no call is due."""
    cs = load_workflow(EXAMPLE.parent / "crawl-selection.yaml")
    scheduler = Scheduler(cs, "sync-incr")
    assert scheduler.bounds["crawl_queue"].staleness[0] == 0
    head = prov(*[0.25] * 6)
    ctx = scheduler.context(0.51, {"crawl_queue": head}, {"fetches": [0.0, 0.25, 0.5]})
    assert scheduler.violated(ctx) == []
    assert not ctx.passes("crawl_queue", head)


@pytest.mark.parametrize("kind", ["greedy", "random"])
def test_baselines_take_one_operator_step(kind: str) -> None:
    import numpy as np

    from staleness_lab.workflows import baselines

    scheduler = Scheduler(load_workflow(EXAMPLE), "async-incr", FIXTURE)
    args = dict(t=65, blocks=blocks_at(65), heads={"output": prov(59, [25, 49])}, last_targets={"output": prov(59, 49)},
                arrivals={"digests": CRAWL, "scores": CLICKS})
    ready = scheduler.prepare(**args)
    steps = baselines.candidates(scheduler, ready, args["heads"])
    costs = sorted(sum(inv.cost for inv in sub) for _, sub in steps)
    result = baselines.step(scheduler, kind, rng=np.random.default_rng(0), **args)
    assert len([inv for inv in result.invocations if inv.variant != "chain"]) <= 1
    if kind == "greedy":
        assert result.cost == costs[0]
    elif costs[0] == 0:
        assert result.cost == 0  # RANDOM takes a zero-cost step (a chain) when there is one
    assert costs[0] == 0  # the digests' deltas chain at no cost
