"""Aborted plans (run loop docstring [D]): an invocation planned on estimates whose actual
inputs no longer admit its variant is not run. The constructed case: a relaxed ``c^{delta B}``
on the example's unkeyed output channel, planned on a delta estimated without deletions that
actually carries one (digest correction 3 refuses it)."""

from __future__ import annotations

import dataclasses
from collections import deque

from staleness_lab.notebook_params import repo_file
from staleness_lab.workflows.blocks import BASE, DELTA, Block
from staleness_lab.workflows.candidates import Pool, reestimate
from staleness_lab.workflows.load import load_workflow
from staleness_lab.workflows.provenance import prov
from staleness_lab.workflows.sim import RunConfig, _Loop, _Running

BASE_65 = Block("output", BASE, prov(65, 25), rows=10)
PLANNED = Block("output", DELTA, prov(59, 49), prov(59, 25), rows=3, deletes=0)
ACTUAL = dataclasses.replace(PLANNED, deletes=1)


def _loop_and_plan():  # type: ignore[no-untyped-def]
    loop = _Loop(load_workflow(repo_file("data/workflows/olston-example.yaml")), RunConfig())
    loop._bootstrap()
    gen = loop.scheduler.generator(loop._ctx(86.0), [BASE_65, PLANNED])
    pool = Pool()
    for b in (BASE_65, PLANNED):
        pool.add(b)
    (planned,) = [inv for _, inv in gen(PLANNED, pool) if inv.variant == "delta->B"]
    return loop, gen, planned


def test_the_relaxed_apply_is_offered_on_the_estimate_and_refused_on_the_actual_delta() -> None:
    _, gen, planned = _loop_and_plan()
    assert planned.outputs == (Block("output", BASE, prov([59, 65], 49)),)  # (T1 - T2) | T3 per element
    assert reestimate(gen, planned, (BASE_65, PLANNED)) == planned
    assert reestimate(gen, planned, (BASE_65, ACTUAL)) is None


def test_the_loop_drops_the_rest_of_the_plan_and_marks_the_call() -> None:
    loop, gen, planned = _loop_and_plan()
    loop.store.update({BASE_65: BASE_65, PLANNED: ACTUAL})
    loop.trace["scheduler_calls"].append({"aborted": False})
    before = len(loop.trace["invocations"])
    running = _Running(len(loop.trace["scheduler_calls"]) - 1, deque([planned, planned]), {}, gen)
    assert loop._start(running, 86.0) is False
    assert loop.aborted == 1 and loop.trace["scheduler_calls"][-1]["aborted"] is True
    assert len(loop.trace["invocations"]) == before  # nothing ran
    loop.store[PLANNED] = PLANNED  # as estimated: the same invocation runs
    running = _Running(len(loop.trace["scheduler_calls"]) - 1, deque([planned]), {}, gen)
    assert loop._start(running, 86.0) is True
    assert loop.trace["invocations"][-1]["variant"] == "delta->B"
