"""The digest's acceptance check 13 (determinism) across backends: random Leontyev workloads
(jittered, outaged and replayed feeds, cost noise, derived tables) under AUS (Rule A and Rule B
recovery periods), GEDF-NP and PRP give the same trace on Spark executors as in this process, and
the same again on a second local run.

A workload travels to the executors in its dict form (``Workload.to_dict``), as a sweep row does;
each side simulates it and returns a canonical digest of the trace: the jobs (release, deadline,
start, finish, data, cost, track, redated_from), the ``modes`` and ``trailing_edge`` frames, the
freshness step functions, the staleness integrals and the unfinished jobs, every float exactly
(``float.hex``). One Spark job per example, on the shared local[2] session.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.errors import Infeasible
from staleness_lab.model import Workload, parse_workload
from staleness_lab.spark import get_spark
from leontyev_strategies import leontyev_workloads

#: The shared session's master (tests/conftest.py).
MASTER = "local[2]"
#: Workloads per example (one Spark job each) and examples: the file runs in well under 40 s.
ROWS = 8
EXAMPLES = 3
RUNS = [("aus", {"recovery_rule": "single"}), ("aus", {"recovery_rule": "all"}), ("gedf-np", None), ("prp", None)]
JOB_FIELDS = ["table", "track", "release", "deadline", "start", "finish", "data_from", "data_to", "cost",
              "redated_from"]


def _cell(value: Any) -> str:
    """One value, exactly: floats as hex (NaN included), everything else by repr."""
    if isinstance(value, float):
        return value.hex()
    return repr(value)


def canonical(frame: pd.DataFrame | None) -> str:
    """A frame as text, exactly: columns, dtypes and every cell (None: absent)."""
    if frame is None:
        return "absent"
    columns = [[name, str(frame[name].dtype), [_cell(v) for v in frame[name].tolist()]] for name in frame.columns]
    return json.dumps(columns)


def digest(result: sl.SimulationResult) -> dict[str, str]:
    """SHA-256 per part of a run's trace (a dict, so a mismatch names the part)."""
    trace = result.trace
    jobs = trace.jobs
    parts = {
        "jobs": canonical(jobs[[c for c in JOB_FIELDS if c in jobs.columns]]),
        "modes": canonical(trace.frames.get("modes")),
        "trailing_edge": canonical(trace.frames.get("trailing_edge")),
        "freshness": canonical(trace.freshness),
        "staleness": canonical(result.tables),
        "unfinished": json.dumps([[_cell(x) for x in rec] for rec in [*trace.in_flight, *trace.in_flight_deadlines,
                                                                       *trace.unstarted]]),
        "counts": json.dumps([trace.job_model, trace.events, trace.n_jobs, sorted(trace.frames)]),
    }
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in parts.items()}


def trace_digest(row: dict[str, Any]) -> tuple[int, dict[str, str]]:
    """Simulate one row (a workload's dict form, a policy and its options); the process id and the
    trace's digest. Runs on the executors (shipped by value, see the test)."""
    try:
        result = sl.simulate(row["workload"], row["policy"], options=row["options"])
    except Infeasible as exc:  # never expected (U_sum < m by construction), but it must agree too
        return os.getpid(), {"infeasible": str(exc)}
    return os.getpid(), digest(result)


def row_of(w: Workload, run: tuple[str, dict | None]) -> dict[str, Any]:
    policy, options = run
    return {"workload": w.to_dict(), "policy": policy, "options": options}


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.tuples(leontyev_workloads(replayed=True), st.sampled_from(RUNS)), min_size=ROWS, max_size=ROWS))
def test_sporadic_traces_are_the_same_locally_and_on_spark(spark, cases):
    from pyspark import cloudpickle

    rows = [row_of(w, run) for w, run in cases]
    for (w, _), row in zip(cases, rows):  # the dict form is the workload, exactly
        assert parse_workload(row["workload"]) == w and parse_workload(row["workload"]).to_dict() == row["workload"]
    local = [trace_digest(row)[1] for row in rows]
    assert [trace_digest(row)[1] for row in rows] == local  # a second run in this process
    from_objects = [digest(sl.simulate(w, policy, options=options)) for w, (policy, options) in cases]
    assert from_objects == local  # the Workload object and its dict form run alike
    assert not any("infeasible" in d for d in local)
    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)  # the executors cannot import this test module
    try:
        # the shared session (the fixture's object may have been replaced by test_session.py)
        sc = get_spark(MASTER).sparkContext
        remote = sc.parallelize(rows, 2).map(trace_digest).collect()
    finally:
        cloudpickle.unregister_pickle_by_value(module)
    assert all(pid != os.getpid() for pid, _ in remote)  # simulated in the executors' workers
    for k, ((_, theirs), mine) in enumerate(zip(remote, local)):
        assert theirs == mine, (k, rows[k]["policy"], rows[k]["options"],
                                [part for part in mine if theirs.get(part) != mine[part]], rows[k]["workload"])
