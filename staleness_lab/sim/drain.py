"""Drained runs: simulate past the horizon until every listed update is applied.

Bateni et al.'s X and their checks are about whole schedules: every update applied, nothing in
flight. With finite feeds (replayed base tables, and views over them) a run is *drained* when
no job is in flight and every table's freshness has reached the data it will ever have. The
horizon is raised to the first ``max(horizon, last arrival) * 2**k``, k = 0..30, that drains (the
last arrival as it lands: after its outage, if one holds it back); periodic feeds never stop, so
their runs keep the given horizon and say why.
"""

from __future__ import annotations

from dataclasses import dataclass

from staleness_lab.model import Workload
from staleness_lab.model.dag import topological_order
from staleness_lab.model.feeds import last_landing
from staleness_lab.policies.base import Policy
from staleness_lab.sim.engine import run
from staleness_lab.sim.trace import Trace

#: Doublings of the horizon tried before giving up.
MAX_DOUBLINGS = 30


@dataclass(frozen=True)
class DrainedRun:
    """The run's ``trace`` (at the raised horizon when ``drained``), and ``reason`` when not."""

    trace: Trace
    drained: bool
    reason: str | None = None


def infinite_feed(workload: Workload) -> str | None:
    """Why the workload's feeds never stop (its first periodic table), or None."""
    for k, table in enumerate(workload.tables):
        if table.period is not None:
            return f"tables[{k}] ({table.name!r}) has a periodic feed: its updates never stop"
    return None


def final_freshness(workload: Workload) -> list[float]:
    """The freshness each table reaches once every listed update is applied (finite feeds):
    a replayed feed's last data end (outages delay files, never change their data), a view's
    trailing edge over its sources' final freshness."""
    out = [t.initial_freshness for t in workload.tables]
    for name in topological_order([t.name for t in workload.tables], workload.source_map):
        k = workload.index[name]
        table = workload.tables[k]
        if table.arrivals is not None:
            out[k] = max(table.initial_freshness, max(d for _, d in table.arrivals))
        elif table.sources is not None:
            out[k] = max(table.initial_freshness, min(out[workload.index[s]] for s in table.sources))
    return out


def is_drained(trace: Trace, final: list[float]) -> bool:
    """No job in flight and every table's last completed job reached its final freshness."""
    if trace.in_flight:
        return False
    reached = [t.initial_freshness for t in trace.workload.tables]
    for record in trace.jobs_done:
        reached[record[0]] = record[5]
    return all(r >= f for r, f in zip(reached, final))


def drained_run(workload: Workload, policy: Policy, name: str, *, max_events: int | None = None) -> DrainedRun:
    """Run ``policy`` on ``workload`` with the horizon raised until the run drains (see the
    module docstring); a workload with a periodic feed runs once at its own horizon."""
    endless = infinite_feed(workload)
    if endless is not None:
        return DrainedRun(trace=run(workload, policy, name, max_events=max_events), drained=False, reason=endless)
    final = final_freshness(workload)
    last = max(last_landing(t) for t in workload.tables if t.arrivals is not None)
    base = max(workload.horizon, last)
    trace = None
    for k in range(MAX_DOUBLINGS + 1):
        trace = run(workload.with_overrides(horizon=base * 2**k), policy, name, max_events=max_events)
        if is_drained(trace, final):
            return DrainedRun(trace=trace, drained=True)
    assert trace is not None
    return DrainedRun(trace=trace, drained=False,
                      reason=f"updates still unapplied or in flight at horizon {base * 2**MAX_DOUBLINGS:g} "
                             f"(max(horizon, last arrival) * 2^{MAX_DOUBLINGS})")
