"""One scheduler call on a :class:`~staleness_lab.workflows.model.Workflow`: Algorithm 1 with
its heuristics under a scenario (digest §3 [P/D]).

:class:`Scheduler` prepares what does not change between calls (the scenario's bounds,
propagated under heuristic (c), the block types each channel may hold, the operators' variants
and cost rates, the frontier projections); :meth:`Scheduler.plan` takes the materialized blocks,
the outputs' heads and last targets and the arrivals so far, and returns a
:class:`~staleness_lab.workflows.planner.PlanResult`.

Scenarios (digest §3): ``async-incr`` is the full model; ``sync-incr`` adds
``bound_inconsistency(C, 0)`` on every derived channel; ``async-batch`` gives derived channels
bases only; ``sync-batch`` both. When heuristic (d) leaves every violated output infeasible,
the call re-plans without it (digest A7: a fresh-enough but misaligned base can make the aligned
one "overkill").
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from collections.abc import Callable, Iterable, Mapping, Sequence

from staleness_lab.errors import InputError
from staleness_lab.workflows import costs
from staleness_lab.workflows.blocks import Block, Invocation
from staleness_lab.workflows.candidates import BlockGen, OpView, relation_rows
from staleness_lab.workflows.context import EPSILON, SCENARIOS, Options, PlanContext, channel_kinds
from staleness_lab.workflows.elements import InconsistencyBound
from staleness_lab.workflows.heuristics import (
    Frontier,
    Projection,
    compulsory_chains,
    frontier_sets,
    minimum,
    old_rule,
    overkill_rule,
)
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.planner import OutputSpec, PlanResult, plan
from staleness_lab.workflows.propagate import own_bounds, propagate
from staleness_lab.workflows.provenance import Provenance


def scenario_workflow(workflow: Workflow, scenario: str) -> Workflow:
    """The workflow a scenario schedules: synchronous ones bound every derived channel's
    inconsistency by 0."""
    if scenario not in SCENARIOS:
        raise InputError("--scenario", f"must be one of {', '.join(SCENARIOS)}, got {scenario!r}")
    if not scenario.startswith("sync-"):
        return workflow
    derived = [ch.name for ch in workflow.channels if ch.input is None]
    extra = tuple(InconsistencyBound(name, 0.0) for name in derived)
    return dataclasses.replace(workflow, constraints=tuple(workflow.constraints) + extra)


class Scheduler:
    """Algorithm 1 for one workflow, scenario and set of heuristics (module docstring)."""

    def __init__(self, workflow: Workflow, scenario: str = "async-incr", options: Options = Options()) -> None:
        self.workflow = scenario_workflow(workflow, scenario)
        self.scenario = scenario
        self.options = options
        wf = self.workflow
        names = [ch.name for ch in wf.channels]
        self.layouts = {name: wf.layout(name) for name in names}
        self.own = own_bounds(wf)
        self.bounds = propagate(wf) if options.propagate else self.own
        self.weak = {ch.name: ch.delta_kind for ch in wf.channels}
        derived = {ch.name: ch.delta_kind for ch in wf.channels if ch.input is None}
        self.kinds = channel_kinds(derived, [ch.name for ch in wf.inputs()], scenario)
        self.keyed = {ch.name: bool(ch.key) for ch in wf.channels}
        asynchronous = scenario.startswith("async-")
        self.ops = []
        for op in wf.topological_operators():
            offered = wf.async_offered(op)
            c = wf.cost_of(op)
            self.ops.append(OpView(
                op.name, op.widget, tuple(op.inputs), tuple(op.outputs), op.sigma,
                costs.Rates(c.alpha, c.beta, c.gamma, c.pi),
                tuple(asynchronous and offered.get(k, False) for k in range(len(op.inputs))),
            ))
        self.accepts = {ch.name: frozenset(ch.accepts) for ch in wf.outputs()}
        self.projections: list[Projection] = []
        for op in reversed(wf.topological_operators()):
            for j, out in enumerate(op.outputs):
                sources = wf.element_sources(op, j)
                for k, feeder in enumerate(op.inputs):
                    pairs = [(jx, e) for jx, (kx, e) in enumerate(sources) if kx == k]
                    self.projections.append((out, feeder, pairs))
        self.widths = {name: len(layout) for name, layout in self.layouts.items()}
        self.converter_rates = costs.Rates(wf.cost.alpha, wf.cost.beta, wf.cost.gamma, wf.cost.pi)

    def context(self, now: float, heads: Mapping[str, Provenance], arrivals: Mapping[str, Sequence[float]]) -> PlanContext:
        """The checks at instant ``now``."""
        return PlanContext(
            layouts=self.layouts, bounds=self.bounds, arrivals=arrivals, now=now, heads=heads,
            kinds=self.kinds, keyed=self.keyed, strict_sync_inputs=self.workflow.strict_sync_inputs,
            readable_across_channels=self.options.readable_across_channels,
        )

    def violated(self, ctx: PlanContext) -> list[str]:
        """The outputs whose head breaks one of their own bounds at the context's instant (the
        scenario's included): only these trigger a call (digest A9). Propagation's clamp of
        staleness to the inconsistency bound steers what a plan may choose, not when it runs
        [D: under a synchronous scenario it would make every arrival a violation]."""
        return [name for name in self.accepts if not ctx.passes(name, ctx.heads[name], self.own)]

    def prepare(
        self,
        *,
        t: float,
        blocks: Iterable[Block],
        heads: Mapping[str, Provenance],
        last_targets: Mapping[str, Provenance],
        arrivals: Mapping[str, Sequence[float]],
    ) -> Prepared:
        """What every scheduler reads at call time ``t`` (``now = t + EPSILON``): the checks, the
        live blocks after heuristics (a) and (b) with their zero-cost plans, the generator."""
        ctx = self.context(t + EPSILON, heads, arrivals)
        actual = list(blocks)
        points = self.frontier(last_targets)
        live, old = self.live(actual, points)
        return Prepared(ctx, actual, live, self.generator(ctx, actual), old, points)

    def frontier(self, last_targets: Mapping[str, Provenance]) -> dict[str, frozenset[Frontier]]:
        """Every channel's frontier set (:func:`frontier_sets`) from the outputs' last targets."""
        return frontier_sets(last_targets, self.projections, self.widths)

    def live(self, blocks: Sequence[Block], points: Mapping[str, frozenset[Frontier]]) -> tuple[
            dict[Block, frozenset[Invocation]], Callable[[Block], bool]]:
        """Heuristics (a) and (b) as the options have them, on the frontier sets ``points``
        (:meth:`frontier`): the live blocks, each with the zero-cost plan that makes it (a
        chain's invocations, empty for a block of ``blocks``), and (a)'s rule (never true with
        (a) off)."""
        old = old_rule(blocks, minimum(points)) if self.options.prune_old else _never
        kept = [b for b in blocks if not old(b)]
        return (compulsory_chains(kept, points) if self.options.chains else {b: frozenset() for b in kept}), old

    def generator(self, ctx: PlanContext, blocks: Iterable[Block]) -> BlockGen:
        """``blockGen`` under the checks ``ctx`` over the materialized ``blocks`` (the relation
        sizes its estimates read); converters cost at the workflow's cost model."""
        return BlockGen(ctx, self.ops, self.weak, self.converter_rates, relation_rows(blocks))

    def plan(
        self,
        *,
        t: float,
        blocks: Iterable[Block],
        heads: Mapping[str, Provenance],
        last_targets: Mapping[str, Provenance],
        arrivals: Mapping[str, Sequence[float]],
        violated: Iterable[str] | None = None,
        deadline: float = math.inf,
    ) -> PlanResult:
        """PLAN at call time ``t`` (``now = t + EPSILON``) over the materialized ``blocks``;
        :class:`~.planner.OutOfTime` past ``deadline`` (process CPU time)."""
        ready = self.prepare(t=t, blocks=blocks, heads=heads, last_targets=last_targets, arrivals=arrivals)
        ctx = ready.ctx
        repair = list(violated) if violated is not None else self.violated(ctx)
        outputs = {name: OutputSpec(self.accepts[name], heads[name]) for name in self.accepts}
        overkill = overkill_rule(ready.actual, ctx.passes, self.accepts) if self.options.overkill else None
        result = plan(ctx, ready.gen, ready.live, outputs, repair, self.options, overkill, deadline)
        if overkill is not None and repair and len(result.infeasible) == len(repair):
            result = plan(ctx, ready.gen, ready.live, outputs, repair, dataclasses.replace(self.options, overkill=False),
                          deadline=deadline)
        return result


@dataclass(frozen=True)
class Prepared:
    """One call's checks (``ctx``), materialized blocks, live blocks with the zero-cost plans
    that make them (heuristics (a), (b)), block generator, heuristic (a)'s rule (``old``:
    never true with (a) off) and every channel's frontier set."""

    ctx: PlanContext
    actual: list[Block]
    live: dict[Block, frozenset[Invocation]]
    gen: BlockGen
    old: Callable[[Block], bool]
    frontier: Mapping[str, frozenset[Frontier]]


def _never(_: Block) -> bool:
    return False
