"""E8 (digest §4, check 6): Algorithm 1 on the search-preprocessing example, with the fixture of
digest correction 5 stated here.

Blocks: a click base and delta at every snapshot; digests B(<15>) = {} plus its deltas; the
output's B(<15,25>) = {}; no earlier output deltas. Heads <59,{25,49}> at 65 and <65,{25,49}> at
86; now = t + 0.01; heuristics (a), (b), (d) off, (c) on; cost = rows read + rows written
(alpha 0, beta = gamma = 1, pi 0, sigma 1); chains do not cancel +-rows in estimates.
Every cell is the same with rule (e) on and off."""

from __future__ import annotations

import pytest

from staleness_lab.workflows.blocks import BASE, DELTA, Block
from staleness_lab.workflows.brute_force import LAYOUTS  # the E8 join's layouts
from staleness_lab.workflows.candidates import BlockGen, OpView
from staleness_lab.workflows.context import Options, PlanContext, channel_kinds
from staleness_lab.workflows.costs import Rates
from staleness_lab.workflows.planner import OutputSpec, plan
from staleness_lab.workflows.propagate import EffectiveBounds
from staleness_lab.workflows.provenance import prov

CRAWL = [15, 32, 59, 65, 86]
CLICKS = [0, 25, 49, 73]
DIGEST_ROWS = {32: 1, 59: 1, 65: 1, 86: 2}  # rows of each crawl delta (all inserts)
CLICK_BASE_ROWS = {0: 0, 25: 1, 49: 2, 73: 2}
CLICK_DELTAS = {(0, 25): (1, 0), (25, 49): (3, 1), (49, 73): (4, 2)}  # (rows, deletions)


def fixture(t: float, t_inc: float, head):  # type: ignore[no-untyped-def]
    now = t + 0.01
    bounds = {  # heuristic (c): the output's bounds projected onto its feeders
        "output": EffectiveBounds((0.0, None), t_inc),
        "digests": EffectiveBounds((0.0,), t_inc),
        "scores": EffectiveBounds((24.0,), t_inc),
    }
    ctx = PlanContext(
        layouts=LAYOUTS, bounds=bounds, arrivals={"digests": CRAWL, "scores": CLICKS}, now=now,
        heads={"output": head}, kinds=channel_kinds({"output": None}, ["digests", "scores"], "async-incr"),
        keyed={"digests": False, "scores": True, "output": False},
    )
    join = OpView("join", "join", ("digests", "scores"), ("output",), 1.0, Rates(), (True, True))
    gen = BlockGen(ctx, [join], weak={})
    live = [Block("digests", BASE, prov(15), rows=0), Block("output", BASE, prov(15, 25), rows=0)]
    crawl = [c for c in CRAWL if c <= t]
    live += [Block("digests", DELTA, prov(b), prov(a), rows=DIGEST_ROWS[b]) for a, b in zip(crawl, crawl[1:])]
    clicks = [c for c in CLICKS if c <= t]
    live += [Block("scores", BASE, prov(c), rows=CLICK_BASE_ROWS[c]) for c in clicks]
    live += [Block("scores", DELTA, prov(b), prov(a), rows=CLICK_DELTAS[a, b][0], deletes=CLICK_DELTAS[a, b][1])
             for a, b in zip(clicks, clicks[1:])]
    outputs = {"output": OutputSpec(frozenset({BASE, DELTA}), head)}
    return ctx, gen, {b: frozenset() for b in live}, outputs


@pytest.mark.parametrize("longterm", [True, False], ids=["rule-e-on", "rule-e-off"])
@pytest.mark.parametrize(
    ("t", "t_inc", "head", "cost", "variants", "chosen", "rows"),
    [
        (65, 24, prov(59, [25, 49]), 4, ["async-left"], Block("output", DELTA, prov(65, 49), prov(59, 49)), 1),
        (86, 24, prov(65, [25, 49]), 22, ["chain", "chain", "chain", "delta->B", "batch"],
         Block("output", BASE, prov(86, 73)), 5),
        (86, 168, prov(65, [25, 49]), 6, ["async-left"], Block("output", DELTA, prov(86, 73), prov(65, 73)), 2),
    ],
    ids=["t65-inc24", "t86-inc24", "t86-inc168"],
)
def test_e8(t, t_inc, head, cost, variants, chosen, rows, longterm) -> None:
    ctx, gen, live, outputs = fixture(t, t_inc, head)
    options = Options(prune_old=False, chains=False, overkill=False, longterm=longterm)
    result = plan(ctx, gen, live, outputs, ["output"], options)
    assert result.infeasible == ()
    assert result.cost == cost
    assert [inv.variant for inv in result.invocations] == variants
    assert result.chosen["output"] == chosen
    assert result.chosen["output"].rows == rows


def test_e8_the_async_join_at_65_reads_click_49() -> None:
    """Correction 1: the cheaper delta joined with click-25 would move the click element back."""
    ctx, gen, live, outputs = fixture(65, 24, prov(59, [25, 49]))
    result = plan(ctx, gen, live, outputs, ["output"], Options(prune_old=False, chains=False, overkill=False))
    (join,) = result.invocations
    assert join.inputs == (Block("digests", DELTA, prov(65), prov(59)), Block("scores", BASE, prov(49)))


def test_e8_batch_at_86_ties_with_click_49_and_takes_the_later() -> None:
    """B(<86,49>) costs 22 too (clicks at 49 have two rows): the tie goes to the later target."""
    ctx, gen, live, outputs = fixture(86, 24, prov(65, [25, 49]))
    result = plan(ctx, gen, live, outputs, ["output"], Options(prune_old=False, chains=False, overkill=False))
    batch = result.invocations[-1]
    assert batch.inputs[1] == Block("scores", BASE, prov(73))


def _without(live, drop):  # type: ignore[no-untyped-def]
    return {b: sub for b, sub in live.items() if b not in drop}


def _resized(live, block, rows):  # type: ignore[no-untyped-def]
    return {(Block(b.channel, b.kind, b.to, b.frm, rows=rows, deletes=b.deletes) if b == block else b): sub
            for b, sub in live.items()}


@pytest.mark.parametrize(("longterm", "cost", "clicks"), [(True, 6, 73), (False, 5, 49)])
def test_rule_e_changes_the_plan(longterm, cost, clicks) -> None:
    """At 86 with a one-row click base at 49, the async delta joined with click-49 is cheaper;
    rule (e) ignores it, dominated by the one joined with click-73 (same type, later target)."""
    ctx, gen, live, outputs = fixture(86, 168, prov(65, [25, 49]))
    live = _resized(live, Block("scores", BASE, prov(49)), 1)
    result = plan(ctx, gen, live, outputs, ["output"], Options(prune_old=False, chains=False, overkill=False, longterm=longterm))
    assert result.cost == cost
    assert result.chosen["output"] == Block("output", DELTA, prov(86, clicks), prov(65, clicks))


@pytest.mark.parametrize(("longterm", "clicks"), [(True, 73), (False, 49)])
def test_rule_e_drops_a_dominated_block_settled_before_its_dominator(longterm, clicks) -> None:
    """Correction 2: without a live click base at 73, the delta joined with click-49 (cost 6)
    is settled before B(clk73) is even built (c^{delta B} from click-49, cost 2 + 4 + 2); rule (e)
    still drops it at selection, so the plan builds B(clk73) and joins with it."""
    ctx, gen, live, outputs = fixture(86, 168, prov(65, [25, 49]))
    live = _without(live, {Block("scores", BASE, prov(73))})
    result = plan(ctx, gen, live, outputs, ["output"], Options(prune_old=False, chains=False, overkill=False, longterm=longterm))
    assert result.chosen["output"] == Block("output", DELTA, prov(86, clicks), prov(65, clicks))
    assert [inv.variant for inv in result.invocations] == (["delta->B", "async-left"] if longterm else ["async-left"])
