"""E8 (digest §4, check 6): Algorithm 1 on the search-preprocessing example, with the fixture of
digest correction 5 stated here.

Blocks: a click base and delta at every snapshot; digests B(<15>) = {} plus its deltas; the
output's B(<15,25>) = {}; no earlier output deltas. Heads <59,{25,49}> at 65 and <65,{25,49}> at
86; now = t + 0.01; heuristics (a), (b), (d) off, (c) on; cost = rows read + rows written
(alpha 0, beta = gamma = 1, pi 0, sigma 1); chains do not cancel +-rows in estimates.
Every cell is the same with rule (e) on and off."""

from __future__ import annotations

import pytest

from staleness_lab.experiments.olston.examples import e8_fixture as fixture  # the report's E8 row runs it too
from staleness_lab.workflows.blocks import BASE, DELTA, Block
from staleness_lab.workflows.context import Options
from staleness_lab.workflows.planner import plan
from staleness_lab.workflows.provenance import prov


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
