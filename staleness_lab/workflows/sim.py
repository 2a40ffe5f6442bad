"""Olston's run loop: arrivals, scheduler calls and invocations on an elastic pool, with lag,
cost and scheduler time as the paper measures them (§7; digest §3 "Simulation and metrics").

DP (Algorithm 1, :class:`~staleness_lab.workflows.schedule.Scheduler`), GREEDY and RANDOM
(:mod:`~staleness_lab.workflows.baselines`) share this loop. It is its own loop, not
``sim/engine.py``: a decision here is a shortest path over blocks with set-valued provenance,
and a run's time goes to the scheduler, not to event handling.

**Events**, at each instant in this order: completions of the running invocation (and of any
zero-duration ones after it), arrivals, bound expiries, then PLAN when an output bound is
violated and no plan is in flight [D: one plan in flight; after it ends the loop re-checks and
re-plans]. An output bound with ``t > 0`` expires at ``lo(T[i]) + t`` of the head; the loop
wakes then. Only output bounds trigger planning (digest A9). A run ends at the horizon.
GREEDY and RANDOM are invoked on the same events, once per event (digest, third-round
correction 2: one single-operator plan per invocation, line 497): an arrival or expiry met
while a step is in flight is answered when it ends; a completion alone calls no baseline. The
option ``reinvoke_until_fresh`` re-invokes a baseline, as the DP, while an output is violated.

**Execution [P/D].** A plan's invocations run one after another in its topological order on
the elastic pool: one lasts ``cost / P`` hours (``P`` = :data:`PARALLELISM` machines), so lag in
CPU-hours is wall time x P (§7 [P]: CrawlSelection's 81.4 CPU-h is about 5 minutes on about
1,000 machines). Before it runs, an invocation is re-estimated on its inputs' actual sizes
(the scheduler saw estimates; later estimates use actual sizes [P]); its actual cost and output
size are that estimate x ``max(0.1, 1 + Z)``, ``Z ~ N(0, 0.627^2)`` (``E|Z| = 0.5``, "Gaussian
+- averaging 50%" [P/R]), one draw for both. Converters and chains move the same relation:
their output sizes are exact [D], their cost noisy. Chains cost 0 and take no time.

**Aborted plans [D].** The plan was made on estimates; an invocation whose actual inputs no
longer admit its variant (a delta planned without deletions that has some refuses the relaxed
``delta->B`` converter, digest correction 3) is not run: the rest of the plan is dropped, the
call is marked ``aborted``, and the loop plans again at once on what exists.

**Outputs.** Only the block a plan chose for an output is emitted, at its completion: the head
becomes ``apply(head, block)`` (a base: its target) and the frontier of heuristic (a) its
target, where an element the block leaves empty (an asynchronous union's other side) keeps the
previous target's [D]: that side did not move, and an empty element read as "no frontier" made
every block of that side old, so FeedbackPrioritization's non-news side was rebuilt in batch
each day instead of carried by its deltas. A block that would leave the head beyond the
output's inconsistency bound (the scenario's included; arrivals during execution can do that)
is withheld: breaking blocks are never readable [P].

**Start [D].** Every input starts from its initial snapshot (:mod:`.inputs`); every derived
channel from its base over those snapshots, made by the batch variants at the start. That load
is reported apart (``bootstrap_cpu_h``), not in ``cost_cpu_h``.

**Episodes** (lag): one per violation of each of the workflow's own output bounds (the
scenario's added ``inconsistency 0`` bounds only steer the scheduler), from the instant the
bound broke (``lo(T[i]) + t`` for staleness, ``lo(T)`` for inconsistency, never before the head
was set) to the emission that makes it hold; one still open at the horizon ends there and is
marked unrepaired. ``lag`` per bound: median and max in CPU-hours.

**Randomness.** Streams are keyed by (seed, name): the inputs by generator name (common random
numbers across scenarios and schedulers), the noise by operator name, RANDOM's choices by its
own. The same seed gives the same trace.

**The store between plans [D].** After each plan, with heuristic (a) on, the blocks it ignores
are retired (the frontier only moves forward, so they would be ignored at every later call);
with heuristic (b) on, the deltas it would chain are replaced by their chains (a chain lists its
parts and moves no data). Every later call would have seen the same chains: the frontier moves
only to targets of blocks in the store, never to a point inside a chain. Without this the
store, and each call, grows with every arrival until a base is rebuilt.

**Modes.** ``sizes`` tracks row counts only; ``memory`` and ``spark`` run every invocation on
rows through one seam (:class:`~staleness_lab.workflows.block_rows.BlockRows`) and one
:class:`~staleness_lab.workflows.execute.Executor`, so they decide alike. The memory mode's
rows are pandas frames in the process; the spark mode's (Spark frames over a Parquet block
store) are handed in by the loop's caller (:data:`MakeRows`): this loop imports no Spark.

**Scheduler time** is the process's CPU time in the scheduler calls (``time.process_time``), not
wall time: other work on the machine (a parallel sweep, a test run) neither inflates it nor
trips the budget. A run whose scheduler time passes ``max_scheduler_s`` stops with status
``timeout``, the DP's search within the call that passes it.
"""

from __future__ import annotations

import math
import numbers
import time
import zlib
from collections import ChainMap, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab.workflows import baselines
from staleness_lab.workflows.block_rows import BlockRows, MemoryRows
from staleness_lab.workflows.block_store import RUN_FILE, BlockStore, default_store
from staleness_lab.workflows.blocks import BASE, DELTA, Block, Invocation
from staleness_lab.workflows.candidates import BlockGen, Pool, reestimate
from staleness_lab.workflows.context import EPSILON, Options, PlanContext
from staleness_lab.workflows.elements import StalenessBound
from staleness_lab.workflows.execute import Executor, Frame
from staleness_lab.workflows.input_frames import InputFrames
from staleness_lab.workflows.inputs import input_arrivals
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.planner import OutOfTime, monotonic
from staleness_lab.workflows.provenance import Provenance, Validity, apply, fmt, hi, prov
from staleness_lab.workflows.rows import apply_delta
from staleness_lab.workflows.schedule import Scheduler
from staleness_lab.workflows.size import check_arrivals, check_run_steps
from staleness_lab.workflows.store_lock import store_lock

#: Machines of the elastic pool: an invocation lasts cost / P hours (digest §3 [D]).
PARALLELISM = 1000.0
#: Standard deviation of the noise's Z (E|Z| = 0.5) and the floor of the factor (digest §3).
NOISE_SD = 0.627
NOISE_FLOOR = 0.1
MAX_SCHEDULER_S = 600.0
SCHEDULERS = ("dp", "greedy", "random")
MODES = ("sizes", "memory", "spark")
#: The frames of a run's trace (``--trace-out`` writes one Parquet file each).
TRACE_FRAMES = ("invocations", "blocks", "episodes", "scheduler_calls")
#: The largest seed (seeds are integers in [0, 2^63 - 1]: numpy's seeding refuses negative ones).
MAX_SEED = 2**63 - 1
#: Scheduler calls allowed at one instant before the loop waits for the next event.
_CALLS_PER_INSTANT = 1000


@dataclass(frozen=True)
class RunConfig:
    """One run: scheduler, scenario, mode, seed (an integer in [0, :data:`MAX_SEED`]), horizon
    (None: the workflow's), the heuristics, the pool's size, the scheduler-time budget and, in
    the spark mode, the block store's root (None: ``data/warehouse``)."""

    scheduler: str = "dp"
    scenario: str = "async-incr"
    mode: str = "sizes"
    seed: int = 0
    horizon: float | None = None
    options: Options = field(default_factory=Options)
    parallelism: float = PARALLELISM
    max_scheduler_s: float = MAX_SCHEDULER_S
    store: Path | None = None

    def __post_init__(self) -> None:
        if self.scheduler not in SCHEDULERS:
            raise InputError("--scheduler", f"must be one of {', '.join(SCHEDULERS)}, got {self.scheduler!r}")
        if self.mode not in MODES:
            raise InputError("--mode", f"must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.horizon is not None and not self.horizon > 0:
            raise InputError("--horizon", f"must be > 0, got {self.horizon!r}")
        if not self.parallelism > 0:
            raise InputError("parallelism", f"must be > 0, got {self.parallelism!r}")
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= MAX_SEED:
            raise InputError("--seed", f"must be an integer in [0, 2^63 - 1] (numpy seeds its streams with it), "
                                       f"got {seed!r:.40}")


#: Makes the rows of a data mode's blocks for one run (workflow, config, horizon in hours),
#: called once the loop has read the run's inputs and scheduler. The spark mode's come from the
#: loop's caller (:func:`staleness_lab.spark.workflows.executor.spark_rows`): nothing under
#: ``workflows/`` imports Spark.
MakeRows = Callable[[Workflow, RunConfig, float], BlockRows]


@dataclass(frozen=True)
class OutputBound:
    """One of the workflow's own output bounds, as episodes are counted."""

    channel: str
    path: int | None  # None: the inconsistency bound
    t: float

    @property
    def label(self) -> str:
        if self.path is None:
            return f"inconsistency({self.channel},{self.t:g})"
        return f"staleness({self.channel},{self.path},{self.t:g})"


@dataclass(frozen=True)
class RunResult:
    """A run's summary (the keys of ``workflow run --json``), its trace frames
    (``invocations``, ``blocks``, ``episodes``, ``scheduler_calls``), its emissions and, in a
    data mode, each output channel's relation at the end (its head's rows)."""

    summary: dict[str, Any]
    frames: dict[str, pd.DataFrame]
    emissions: tuple[Emission, ...] = ()
    outputs: dict[str, pd.DataFrame] = field(default_factory=dict)


@dataclass(frozen=True)
class Emission:
    """A block emitted on an output at ``time`` and the head it left."""

    time: float
    block: Block
    head: Provenance


@dataclass
class _Running:
    """The plan in flight: what is left to run, the block chosen per output, the generator
    and checks it was planned with (re-estimates use them)."""

    plan: int
    left: deque[Invocation]
    chosen: dict[Block, str]
    gen: BlockGen
    ends: float = math.inf
    made: tuple[Block, ...] = ()  # the running invocation's outputs, actual sizes
    rows: tuple[Frame, ...] = ()  # their rows (data modes)


def run(workflow: Workflow, config: RunConfig = RunConfig(), rows: MakeRows | None = None) -> RunResult:
    """Run ``workflow`` under ``config`` (module docstring); ``rows`` makes the rows of a data
    mode's blocks (required by the spark mode: :func:`staleness_lab.spark.workflows.executor.spark_rows`).
    A spark-mode run holds its store's lock throughout (:func:`~.store_lock.store_lock`: one
    writer per store)."""
    if config.mode != "spark" or rows is None:  # no store written (the loop refuses a spark run without rows)
        return _Loop(workflow, config, rows).run()
    with store_lock(config.store or default_store()):
        return _Loop(workflow, config, rows).run()


class _Loop:
    def __init__(self, workflow: Workflow, config: RunConfig, rows: MakeRows | None = None) -> None:
        self.workflow = workflow
        self.config = config
        self.horizon = config.horizon if config.horizon is not None else workflow.horizon
        given = "--horizon" if config.horizon is not None else None
        check_arrivals(workflow.channels, self.horizon, workflow.limits, field=given)
        check_run_steps(workflow.channels, workflow.operators, self.horizon, workflow.limits, field=given)
        self.scheduler = Scheduler(workflow, config.scenario, config.options)
        self.inputs = input_arrivals(workflow, config.seed, self.horizon)
        self.start = max(a.first for a in self.inputs.values())
        self.queue = sorted((t, name, k) for name, a in self.inputs.items()
                            for k, t in enumerate(a.times) if t > self.start)
        self.next_arrival = 0
        self.seen: dict[str, list[float]] = {name: [t for t in a.times if t <= self.start] for name, a in self.inputs.items()}
        self.rows: dict[str, float] = {}
        self.store: dict[Block, Block] = {}
        self.retired: set[Block] = set()  # made, then dropped from the store by _retire
        self.heads: dict[str, Provenance] = {}
        self.head_time: dict[str, float] = {}
        self.last_targets: dict[str, Provenance] = {}
        self.bounds = [OutputBound(b.channel, b.path if isinstance(b, StalenessBound) else None, b.t)
                       for b in workflow.constraints if b.channel in self.scheduler.accepts]
        self.open: dict[OutputBound, float] = {}
        self.emissions: list[Emission] = []
        self.running: _Running | None = None
        self.rng_random = _stream(config.seed, "random-scheduler")
        self.noise: dict[str, np.random.Generator] = {}
        self.trace: dict[str, list[dict[str, Any]]] = {k: [] for k in TRACE_FRAMES}
        self.scheduler_s = 0.0
        self.cost = 0.0
        self.infeasible = 0
        self.aborted = 0
        self.status = "ok"
        # the data modes: the rows of every block in the store, and of each output's head
        data_mode = config.mode != "sizes"
        self.frames = InputFrames(workflow, config.seed, self.horizon, self.inputs) if data_mode else None
        self.blocks = _block_rows(workflow, config, self.horizon, rows)
        self.executor = Executor(workflow, self._base_of, self.blocks.algebra) if self.blocks is not None else None
        self.data: dict[Block, Frame] = {}
        self.outputs: dict[str, pd.DataFrame] = {}

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> RunResult:
        bootstrap = self._bootstrap()
        now = self.start
        calls_here = 0
        # a baseline called once per event (an arrival, an expiry) it has not answered yet
        once = self.config.scheduler != "dp" and not self.config.options.reinvoke_until_fresh
        pending = False
        while self.status == "ok":
            arrival, expiry = self._next_arrival_time(), self._next_expiry(now)
            now_next = min(arrival, self.running.ends if self.running else math.inf, expiry)
            if now_next > self.horizon:
                break
            calls_here = calls_here if now_next == now else 0
            now = now_next
            pending = pending or now in (arrival, expiry)
            self._complete(now)
            self._arrive(now)
            self._episodes(now)
            while self.running is None and self.status == "ok" and calls_here < _CALLS_PER_INSTANT:
                if once and not pending:
                    break
                pending = False
                if not self._schedule(now):
                    break
                calls_here += 1
                self._complete(now)
                self._episodes(now)
        end = min(now, self.horizon) if self.status != "ok" else self.horizon
        for bound, since in self.open.items():
            self._episode(bound, since, end, repaired=False)
        return RunResult(self._summary(bootstrap), self._frames(), tuple(self.emissions), dict(self.outputs))

    def _next_arrival_time(self) -> float:
        return self.queue[self.next_arrival][0] if self.next_arrival < len(self.queue) else math.inf

    # -- state changes -------------------------------------------------------------------------
    def _bootstrap(self) -> float:
        """Inputs at their initial snapshot; derived channels by the batch variants (module
        docstring); returns the load's estimated cost."""
        for name, a in self.inputs.items():
            k = len(self.seen[name]) - 1
            self.rows[name] = float(sum(a.inserts[: k + 1]) - sum(a.deletes[: k + 1]))
            block = Block(name, BASE, prov(a.times[k]), rows=self.rows[name])
            self._add(block, self.start, None, source="input", data=self._arrival(block, k, self.start))
        ctx = self.scheduler.context(self.start + EPSILON, {}, self.seen)
        gen = self.scheduler.generator(ctx, self.store)
        pool = Pool()
        for b in self.store:
            pool.add(b)
        cost = 0.0
        for op in self.scheduler.ops:
            first = pool.bases_on(op.inputs[0])[0]
            found = next((inv for out, inv in gen(first, pool)
                          if inv.operator == op.name and inv.variant == "batch"), None)
            if found is None:
                raise RuntimeError(f"no batch variant of {op.name} at the start (a bug)")
            cost += found.cost
            outs, data = self._execute(found, self.start, f"start:{op.name}")
            for out, rows in zip(outs, data or [None] * len(outs)):
                pool.add(out)
                self._add(out, self.start, None, source="start", data=rows)
        for name in self.scheduler.accepts:
            (base,) = pool.bases_on(name)
            self.heads[name] = self.last_targets[name] = base.to
            self.head_time[name] = self.start
            if self.blocks is not None:
                self.outputs[name] = self.blocks.to_pandas(self.data[base])
        return cost

    def _add(self, b: Block, at: float, invocation: int | None, emitted: str = "", source: str = "plan",
             data: Frame | None = None) -> None:
        """Materialize ``b`` (with its rows ``data`` in a data mode); ``source``: ``input`` (an
        arrival or the start), ``start`` (the initial load), ``plan`` (an invocation) or
        ``chain`` (heuristic (b) in the store)."""
        self.store[b] = b
        if data is not None:
            self.data[b] = data
        self.trace["blocks"].append({
            "channel": b.channel, "kind": b.kind, "from": fmt(b.frm) if b.frm is not None else "",
            "to": fmt(b.to), "rows": b.rows, "made_at": at, "source": source, "invocation": invocation, "emitted": emitted,
            "head": fmt(self.heads[b.channel]) if emitted == "yes" else "",
        })

    def _arrive(self, now: float) -> None:
        while self.next_arrival < len(self.queue) and self.queue[self.next_arrival][0] == now:
            t, name, k = self.queue[self.next_arrival]
            self.next_arrival += 1
            a = self.inputs[name]
            before = prov(self.seen[name][-1])
            self.seen[name].append(t)
            ins, dels = a.inserts[k], a.deletes[k]
            self.rows[name] += ins - dels
            delta = Block(name, DELTA, prov(t), before, rows=float(ins + dels), deletes=float(dels))
            self._add(delta, t, None, source="input", data=self._arrival(delta, k, t))
            if a.delivers_base:
                base = Block(name, BASE, prov(t), rows=self.rows[name])
                self._add(base, t, None, source="input", data=self._arrival(base, k, t))

    def _arrival(self, block: Block, k: int, at: float) -> Frame | None:
        """The rows of input arrival ``k`` (its delta, or the base it leaves) in a data mode."""
        if self.blocks is None or self.frames is None:
            return None
        rows = self.frames.base(block.channel, k) if block.is_base else self.frames.delta(block.channel, k)
        return self.blocks.arrival(block, rows, at)

    def _complete(self, now: float) -> None:
        """Finish the running invocation(s) due by ``now`` and start the next ones."""
        r = self.running
        while r is not None and r.ends <= now:
            inv_id = len(self.trace["invocations"]) - 1
            for out, rows in zip(r.made, r.rows or [None] * len(r.made)):
                self._add(out, r.ends, inv_id, emitted=self._emit(out, r, r.ends, rows), data=rows)
            if not r.left or not self._start(r, r.ends):
                self.running = None
                self._retire(r.ends)
                return

    def _start(self, r: _Running, at: float) -> bool:
        """Start the plan's next invocation; False when the actual inputs refuse it (the plan
        is dropped, module docstring)."""
        planned = r.left.popleft()
        inv = self._actual(r, planned)
        if inv is None:
            self.aborted += 1
            self.trace["scheduler_calls"][r.plan]["aborted"] = True
            return False
        made, rows = self._execute(inv, at, str(len(self.trace["invocations"])))
        r.made, r.rows = made, rows or ()
        r.ends = at + inv.cost / self.config.parallelism
        self.cost += inv.cost
        self.trace["invocations"].append({
            "plan": r.plan, "operator": inv.operator, "variant": inv.variant, "start": at, "end": r.ends,
            "est_cost": planned.cost, "cost_cpu_h": inv.cost,
            "inputs": " ".join(b.label() for b in inv.inputs), "outputs": " ".join(b.label() for b in made),
            "rows_out": sum(b.rows for b in made),
        })
        return True

    def _actual(self, r: _Running, planned: Invocation) -> Invocation | None:
        """Re-estimate on the inputs' actual sizes, then apply the noise (module docstring);
        None when the actual inputs no longer admit the variant."""
        inputs = tuple(self.store[b] for b in planned.inputs)
        estimate = reestimate(r.gen, planned, inputs)
        if estimate is None:
            return None
        if estimate.cost == 0:
            return estimate
        factor = max(NOISE_FLOOR, 1.0 + NOISE_SD * self._noise(planned.operator))
        exact = planned.operator.endswith((".convert", ".chain"))
        made = tuple(self._sized(estimate, 1.0 if exact else factor))
        return Invocation(estimate.operator, estimate.variant, inputs, made, estimate.cost * factor)

    def _execute(self, inv: Invocation, at: float, producer: str,
                 data: Mapping[Block, Frame] | None = None) -> tuple[tuple[Block, ...], tuple[Frame, ...] | None]:
        """In a data mode, run ``inv`` on its inputs' rows (``data``, else the store's) at
        ``at``: its outputs sized by the rows they actually hold, and those rows; in the sizes
        mode its outputs as they are. ``producer`` names the invocation's place in the run."""
        if self.blocks is None:
            return inv.outputs, None
        executor, inputs = self.executor, data if data is not None else self.data
        assert executor is not None
        return self.blocks.made(inv, producer, at, lambda: executor.run(inv, [inputs[b] for b in inv.inputs], at))

    def _base_of(self, channel: str, p: Provenance) -> Frame | None:
        """A base of ``channel`` at ``p``: in the store, or an input's snapshot."""
        stored = self.data.get(Block(channel, BASE, p))
        if stored is not None or self.frames is None or channel not in self.inputs or len(p) != 1 or len(p[0]) != 1:
            return stored
        (t,) = p[0]
        times = self.inputs[channel].times
        if t not in times or self.blocks is None:
            return None
        return self.blocks.from_pandas(self.frames.base(channel, times.index(t)))

    @staticmethod
    def _sized(inv: Invocation, factor: float) -> Iterable[Block]:
        for b in inv.outputs:
            yield Block(b.channel, b.kind, b.to, b.frm, rows=b.rows * factor, deletes=b.deletes * factor)

    def _noise(self, operator: str) -> float:
        rng = self.noise.get(operator)
        if rng is None:
            rng = self.noise[operator] = _stream(self.config.seed, f"noise:{operator}")
        return float(rng.standard_normal())

    def _emit(self, b: Block, r: _Running, at: float, rows: Frame | None) -> str:
        """Emit a chosen output block (with its ``rows`` in a data mode): ``"yes"``,
        ``"withheld"`` (beyond an inconsistency bound) or ``""`` (not chosen)."""
        name = r.chosen.get(b)
        if name is None:
            return ""
        head = self.heads[name]
        assert monotonic(head, b), f"{b.label()} is not monotonic on {fmt(head)}"
        after = b.to if b.frm is None else apply(head, b.frm, b.to)
        validity = Validity(self.seen, at + EPSILON)
        layout = self.scheduler.layouts[name]
        t_inc = self.scheduler.own[name].inconsistency  # the scenario's included
        if t_inc is not None and hi(after) >= validity.lo(after, layout) + t_inc:
            return "withheld"
        target = tuple(e if e else kept for e, kept in zip(b.to, self.last_targets[name], strict=True))
        self.heads[name], self.last_targets[name], self.head_time[name] = after, target, at
        self.emissions.append(Emission(at, b, after))
        if rows is not None and self.blocks is not None:
            data = self.blocks.to_pandas(rows)
            self.outputs[name] = data if b.is_base else apply_delta(self.outputs[name], data, strict=head == b.frm)
        return "yes"

    def _retire(self, at: float) -> None:
        """After a plan: retire what heuristic (a) ignores and replace the deltas heuristic (b)
        chains by their chains (module docstring)."""
        options = self.config.options
        if not (options.prune_old or options.chains):
            return
        before = self.store
        live, _ = self.scheduler.live(list(before.values()), self.scheduler.frontier(self.last_targets))
        self.store = {}
        for b, parts in live.items():
            if parts and b not in self.store:
                data = None
                if self.blocks is not None:
                    b, data = self._chained(b, parts, at)
                self._add(b, at, None, source="chain", data=data)
            self.store[b] = b
        self.retired.update(b for b in before if b not in self.store)
        self.data = {b: rows for b, rows in self.data.items() if b in self.store}

    def _chained(self, block: Block, invocations: Iterable[Invocation], at: float) -> tuple[Block, Frame]:
        """A chain heuristic (b) puts in the store, in a data mode: its invocations run in an
        order where each reads only rows already there; the block sized by the rows it holds
        (an upsert chain's parts overlap on keys, so their sizes do not add up to its rows)."""
        waiting = list(invocations)
        made: dict[Block, Frame] = {}
        sized: dict[Block, Block] = {}
        while waiting:
            ready = next(inv for inv in waiting if all(b in self.data or b in made for b in inv.inputs))
            waiting.remove(ready)
            (out,), (made[ready.outputs[0]],) = self._execute(ready, at, "chain", ChainMap(made, self.data))  # type: ignore[misc]
            sized[out] = out
        return sized[block], made[block]

    # -- scheduling ------------------------------------------------------------------------------
    def _schedule(self, now: float) -> bool:
        """One scheduler call when an output is violated; True when it started a plan."""
        ctx = self._ctx(now)
        violated = self.scheduler.violated(ctx)
        if not violated:
            return False
        started = time.process_time()
        args = dict(t=now, blocks=self.store.values(), heads=self.heads, last_targets=self.last_targets, arrivals=self.seen)
        if self.config.scheduler == "dp":
            deadline = started + self.config.max_scheduler_s - self.scheduler_s
            try:
                result = self.scheduler.plan(**args, violated=violated, deadline=deadline)  # type: ignore[arg-type]
            except OutOfTime:
                self.scheduler_s += time.process_time() - started
                self.status = "timeout"
                return False
        else:
            result = baselines.step(self.scheduler, self.config.scheduler, rng=self.rng_random,  # type: ignore[arg-type]
                                    retired=self.retired, **args)
        seconds = time.process_time() - started
        self.scheduler_s += seconds
        self.infeasible += len(result.infeasible)
        plan_id = len(self.trace["scheduler_calls"])
        self.trace["scheduler_calls"].append({
            "time": now, "seconds": seconds, "violated": " ".join(violated), "blocks": len(self.store),
            "invocations": len(result.invocations),
            "est_cost": result.cost, "infeasible": " ".join(result.infeasible), "optimized": result.optimized,
            "aborted": False,
        })
        if self.scheduler_s > self.config.max_scheduler_s:
            self.status = "timeout"
            return False
        if not result.invocations:
            return False
        self.running = _Running(plan_id, deque(result.invocations), {b: name for name, b in result.chosen.items()},
                                result.gen)
        if not self._start(self.running, now):
            self.running = None
        return True

    def _ctx(self, now: float) -> PlanContext:
        return self.scheduler.context(now + EPSILON, self.heads, self.seen)

    # -- episodes and expiries -----------------------------------------------------------------
    def _broken_since(self, bound: OutputBound, validity: Validity) -> float | None:
        """When ``bound`` broke on the current head, or None if it holds."""
        head = self.heads[bound.channel]
        layout = self.scheduler.layouts[bound.channel]
        if bound.path is None:
            lo = validity.lo(head, layout)
            return max(self.head_time[bound.channel], lo) if hi(head) >= lo + bound.t else None
        element = head[bound.path]
        if not element:
            return None
        lo = validity.lo_element(layout[bound.path][0], element)
        return max(self.head_time[bound.channel], lo + bound.t) if lo + bound.t < validity.now else None

    def _episodes(self, now: float) -> None:
        validity = Validity(self.seen, now + EPSILON)
        for bound in self.bounds:
            since = self._broken_since(bound, validity)
            if since is not None and bound not in self.open:
                self.open[bound] = since
            elif since is None and bound in self.open:
                self._episode(bound, self.open.pop(bound), now, repaired=True)

    def _episode(self, bound: OutputBound, start: float, end: float, *, repaired: bool) -> None:
        self.trace["episodes"].append({
            "bound": bound.label, "channel": bound.channel, "start": start, "end": end,
            "lag_h": end - start, "lag_cpu_h": (end - start) * self.config.parallelism, "repaired": repaired,
        })

    def _next_expiry(self, now: float) -> float:
        """The next instant a staleness bound with ``t > 0`` of an output breaks on its head."""
        validity = Validity(self.seen, now + EPSILON)
        soonest = math.inf
        for name in self.scheduler.accepts:
            head = self.heads[name]
            layout = self.scheduler.layouts[name]
            for i, t in enumerate(self.scheduler.own[name].staleness):
                if t is None or t <= 0 or not head[i]:
                    continue
                lo = validity.lo_element(layout[i][0], head[i])
                if lo <= now and lo + t > now:
                    soonest = min(soonest, lo + t)
        return soonest

    # -- results -------------------------------------------------------------------------------
    def _frames(self) -> dict[str, pd.DataFrame]:
        columns = {
            "invocations": ["plan", "operator", "variant", "start", "end", "est_cost", "cost_cpu_h", "inputs", "outputs", "rows_out"],
            "blocks": ["channel", "kind", "from", "to", "rows", "made_at", "source", "invocation", "emitted", "head"],
            "episodes": ["bound", "channel", "start", "end", "lag_h", "lag_cpu_h", "repaired"],
            "scheduler_calls": ["time", "seconds", "violated", "blocks", "invocations", "est_cost", "infeasible",
                                "optimized", "aborted"],
        }
        return {k: pd.DataFrame(rows, columns=columns[k]) for k, rows in self.trace.items()}

    def _summary(self, bootstrap: float) -> dict[str, Any]:
        episodes = pd.DataFrame(self.trace["episodes"], columns=["bound", "lag_cpu_h", "repaired"])
        lag: dict[str, dict[str, float | int | None]] = {}
        for bound in self.bounds:
            mine = episodes.loc[episodes["bound"] == bound.label, "lag_cpu_h"]
            lag[bound.label] = {"median": float(mine.median()) if len(mine) else None,
                                "max": float(mine.max()) if len(mine) else None, "episodes": int(len(mine))}
        staleness = episodes.loc[episodes["bound"].str.startswith("staleness"), "lag_cpu_h"]
        return {
            "status": self.status,
            "workflow": self.workflow.name,
            "workflow_sha256": self.workflow.sha256(),
            "scenario": self.config.scenario,
            "scheduler": self.config.scheduler,
            "mode": self.config.mode,
            "seed": self.config.seed,
            "horizon_h": self.horizon,
            "plans": len(self.trace["scheduler_calls"]),
            "invocations": len(self.trace["invocations"]),
            "infeasible": self.infeasible,
            "aborted": self.aborted,
            "cost_cpu_h": self.cost,
            "bootstrap_cpu_h": bootstrap,
            "scheduler_s": self.scheduler_s,
            "lag_cpu_h": float(staleness.median()) if len(staleness) else None,
            "unrepaired": int((~episodes["repaired"].astype(bool)).sum()),
            "lag": lag,
            **(self.blocks.summary() if self.blocks is not None else {}),
        }


def block_store(workflow: Workflow, config: RunConfig, horizon: float) -> BlockStore:
    """The block store of one spark-mode run: under ``config.store`` (None: ``data/warehouse``),
    its ``run.json`` recording what makes the run (workflow and its digest, seed, scenario,
    scheduler, horizon, options, pool, version), so a rerun resumes it and another run refuses
    it (:mod:`.block_store`)."""
    from staleness_lab import __version__

    for k, ch in enumerate(workflow.channels):
        if ch.name == RUN_FILE:
            raise InputError(f"channels[{k}].name", f"{RUN_FILE} is the block store's run file: in the spark mode a "
                                                    "channel needs another name")
    run = {"workflow": workflow.name, "workflow_sha256": workflow.sha256(), "seed": config.seed,
           "scenario": config.scenario, "scheduler": config.scheduler, "horizon_h": horizon,
           "options": asdict(config.options), "parallelism": config.parallelism, "version": __version__}
    return BlockStore(config.store or default_store(), workflow.name,
                      f"{config.scenario}-{config.scheduler}-s{config.seed}", run)


def _block_rows(workflow: Workflow, config: RunConfig, horizon: float, rows: MakeRows | None) -> BlockRows | None:
    """A data mode's rows: ``rows`` made for this run, else the memory mode's own; the sizes
    mode keeps none. The spark mode's come from the caller (this package does not import
    Spark)."""
    if config.mode == "sizes":
        if rows is not None:
            raise ValueError("the sizes mode keeps no rows: pass rows only with mode memory or spark")
        return None
    if rows is not None:
        return rows(workflow, config, horizon)
    if config.mode == "memory":
        return MemoryRows()
    raise ValueError("the spark mode's rows come from its caller: "
                     "pass rows=staleness_lab.spark.workflows.executor.spark_rows")


def _stream(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def options_from(pairs: Mapping[str, str]) -> Options:
    """``--option K=V`` pairs as :class:`Options` (V: on/off, true/false, 1/0)."""
    known = Options.__dataclass_fields__
    values: dict[str, bool] = {}
    for key, raw in pairs.items():
        if key not in known:
            raise InputError(f"--option {key}", f"unknown option (known: {', '.join(known)})")
        text = raw.strip().lower()
        if text not in ("on", "off", "true", "false", "1", "0"):
            raise InputError(f"--option {key}", f"must be on/off, true/false or 1/0, got {raw!r}")
        values[key] = text in ("on", "true", "1")
    return Options(**values)
