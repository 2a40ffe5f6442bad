"""Leontyev, Johnson and Anderson's claims checked on a trace (the ``leontyev`` suite of
``staleness-lab check``; digest ``specs/leontyev-aus.md`` Sec. 3 and acceptance checks 4-7).

Under ``aus`` and ``gedf-np`` (sporadic traces): per table ``tardiness`` (Theorem 1),
``response-time`` (Lemma 1) and ``staleness`` (Theorems 2-3); under ``aus`` also one
``recovery-time`` record per N->R switch of a base table (Theorem 4) and one ``capacity`` record
(eq. 6). The bounds come from the task set of :func:`.workloads.from_workload`; an infeasible
workload (Def. 9) still gets its records, with ``utilization`` or ``task-utilization`` unmet.

PRP, the paper's baseline (Sec. V), gets the three per-table records with the ``scheduler``
precondition unmet, so none decides: its observed values stand beside GEDF-NP's bounds for
comparison, tardiness observed None (its Golab-model trace has no deadlines), trailing edges
rebuilt from the feeds (:func:`.checks.trailing_edges`). Other policies get no records.
"""

from __future__ import annotations

from staleness_lab.model import Workload
from staleness_lab.sim.trace import Trace
from staleness_lab.theory.leontyev.checks import (capacity_record, mode_shares, observe, recovery_records,
                                                  response_time_records, staleness_record, tardiness_records,
                                                  task_model, theorem1_preconditions, worst_per_table)
from staleness_lab.theory.leontyev.tasks import SCHEDULERS
from staleness_lab.theory.records import CheckRecord
from staleness_lab.theory.suites import CheckContext, register_suite

#: The paper's baseline, checked for comparison (module docstring).
PRP = "prp"


def leontyev_records(workload: Workload, trace: Trace, policy: str, recovery_rule: str = "single") -> list[CheckRecord]:
    """Every Leontyev et al. record of a sporadic ``trace`` of ``workload`` under ``policy``:
    tardiness, response time and staleness per table, then (AUS) recovery per switch and the
    capacity."""
    model = task_model(workload, policy, recovery_rule)
    run = observe(trace)
    shares = mode_shares(run, model.ts) if model.scheduler == "aus" and model.ts is not None else None
    common = theorem1_preconditions(model, run, shares)
    slowest = worst_per_table(run.jobs.table, run.jobs.response, len(run.names))
    records = tardiness_records(model, run, common) + response_time_records(model, run, common, slowest)
    records += [staleness_record(model, run, k, slowest[k]) for k in range(len(run.names))]
    if model.scheduler == "aus":
        records += recovery_records(model, run, slowest)
        records.append(capacity_record(model, run, shares))
    return records


@register_suite("leontyev")
def leontyev_suite(ctx: CheckContext) -> list[CheckRecord]:
    """The ``leontyev`` suite: AUS or GEDF-NP on the sporadic job model, or PRP; [] otherwise."""
    if not (ctx.policy in SCHEDULERS and ctx.trace.job_model == "sporadic" or ctx.policy == PRP):
        return []
    return leontyev_records(ctx.workload, ctx.trace, ctx.policy, ctx.options.get("recovery_rule", "single"))
