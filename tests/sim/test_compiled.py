"""The compiled core (:mod:`staleness_lab.sim.compiled`) against the Python engine, the reference.

Every built-in policy the core runs (FIFO, Random, EDF, EDF-P and Max Benefit, the last three with
every inheritance mode; EDF-Partitioned and Proportional with their options) must give the same
trace bit for bit: event count, every
completed and in-flight job record (floats compared by their bits), staleness areas and peaks.
A fuzz test draws small workloads with every feature the engine has; larger fixed workloads cross
what only long runs reach (several arrival chunks, refills of the cost draws and of Random's
draws, the ready heap's compaction under Max Benefit's re-keying, growth of the job columns).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from staleness_lab.errors import Infeasible, InputError
from staleness_lab.model import parse_workload
from staleness_lab.policies import get_policy
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.sim.engine import run
from staleness_lab.sim.trace import JobColumns, Trace

from engine_workloads import fingerprint, table2, workloads

COMPILED_POLICIES = [
    ("fifo", {}), ("random", {}),
    ("edf", {}), ("edf", {"inheritance": "sum"}), ("edf", {"inheritance": "max-plus"}),
    ("edf-p", {}), ("edf-p", {"inheritance": "max"}), ("edf-p", {"inheritance": "sum"}),
    ("max-benefit", {}), ("max-benefit", {"inheritance": "max"}), ("max-benefit", {"inheritance": "max-plus"}),
    ("edf-partitioned", {}), ("edf-partitioned", {"aggressive": True, "basic": "edf"}),
    ("edf-partitioned", {"basic": "edf-p", "inheritance": "sum"}),
    ("proportional", {}), ("proportional", {"aggressive": True, "basic": "edf", "k": 2.0}),
    ("proportional", {"tracks_mode": "basic", "clustering": "cost", "basic": "edf-p", "inheritance": "max"}),
    ("proportional", {"k": 10.0, "tracks_mode": "basic"}),
]


def both(workload, name: str, options: dict) -> tuple[Trace, Trace] | None:
    try:
        reference = run(workload, get_policy(name, **options), name, engine="python")
    except (InputError, Infeasible):  # e.g. EDF on a replayed feed without nominal_period
        with pytest.raises((InputError, Infeasible)):
            run(workload, get_policy(name, **options), name, engine="compiled")
        return None
    return reference, run(workload, get_policy(name, **options), name, engine="compiled")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(), policy=st.sampled_from(COMPILED_POLICIES))
def test_compiled_core_reproduces_the_python_engine(w, policy) -> None:
    pair = both(w, *policy)
    if pair is not None:
        assert fingerprint(pair[1]) == fingerprint(pair[0])


@pytest.mark.parametrize("name, options", [("random", {}), ("edf-p", {}), ("max-benefit", {"inheritance": "max"})])
@pytest.mark.parametrize("n, horizon, jobs_per_table", [(30, 150_000.0, 1400), (600, 6_000.0, 55)])
def test_long_runs_cross_chunks_and_refills(name: str, options: dict, n: int, horizon: float,
                                            jobs_per_table: int) -> None:
    w = parse_workload(table2(n, horizon, noisy=True))
    reference, compiled = both(w, name, options)
    assert reference.events - reference.n_jobs > 32_768  # more than one chunk of arrivals
    # at 30 tables every table's cost draws are refilled twice (blocks of 512)
    assert min(np.bincount(compiled.job_tables)) > jobs_per_table
    assert fingerprint(compiled) == fingerprint(reference)


def test_views_and_chopping_on_a_long_run() -> None:
    tables = [{"name": f"b{i}", "period": 7.5 + i, "alpha": 0.5, "beta": 0.1, "priority": 1 + i % 2, "chop": 1.5}
              for i in range(6)]
    tables += [{"name": f"v{i}", "sources": [f"b{i}", f"b{(i + 1) % 6}"], "alpha": 0.3, "beta": 0.2,
                "priority": 2, "min_separation": 4.0} for i in range(6)]
    w = parse_workload({"tracks": 4, "horizon": 40_000.0, "seed": 1, "variability": 0.5, "tables": tables})
    for name, options in COMPILED_POLICIES:
        reference, compiled = both(w, name, options)
        assert fingerprint(compiled) == fingerprint(reference), (name, options)


def test_job_columns_read_as_the_engine_records() -> None:
    w = parse_workload(table2(30, 3_000.0, noisy=True, slowdown=True))
    reference, compiled = both(w, "edf", {})
    assert isinstance(compiled.jobs_done, JobColumns)
    assert compiled.jobs_done == reference.jobs_done and len(compiled.jobs_done) == len(reference.jobs_done)
    assert compiled.jobs_done[5] == reference.jobs_done[5]
    assert compiled.jobs_done + compiled.in_flight == reference.jobs_done + reference.in_flight
    for name, column in reference.columns.items():
        assert column.dtype == compiled.columns[name].dtype
        assert column.tobytes() == compiled.columns[name].tobytes(), name
    assert compiled.jobs.equals(reference.jobs)


class _Newest:
    """A policy written in a notebook: newest release first. No compiled order, so auto runs it
    in the Python engine and the compiled core refuses it."""

    name = "newest"

    def bind(self, workload, rng) -> BoundPolicy:
        return BoundPolicy(key=lambda i, now, release, n: -release)


def test_the_engine_choice() -> None:
    w = parse_workload(table2(30, 2_000.0, noisy=False))
    assert fingerprint(run(w, _Newest(), "newest")) == fingerprint(run(w, _Newest(), "newest", engine="python"))
    with pytest.raises(InputError, match="engine: the compiled core has no order for newest"):
        run(w, _Newest(), "newest", engine="compiled")
    with pytest.raises(InputError, match="engine: must be one of auto, python, compiled"):
        run(w, get_policy("edf"), "edf", engine="fast")
    with pytest.raises(InputError, match="no sporadic job model"):
        run(w, get_policy("gedf-np"), "gedf-np", engine="compiled")


def test_cli_engine_flag(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("tracks: 2\nhorizon: 500\ntables:\n"
                    "  - {name: a, period: 3, alpha: 0.5, beta: 0.2, priority: 1}\n"
                    "  - {name: b, period: 5, alpha: 0.5, beta: 0.3, priority: 2}\n")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "staleness_lab", "simulate", str(path), *args],
                              capture_output=True, text=True)

    outputs = {engine: cli("--policy", "max-benefit", "--engine", engine, "--json") for engine in ("auto", "python", "compiled")}
    assert {o.returncode for o in outputs.values()} == {0}
    assert outputs["auto"].stdout == outputs["python"].stdout == outputs["compiled"].stdout
    refused = cli("--policy", "max-benefit-lookahead", "--engine", "compiled")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().count("\n") == 0
    assert "compiled core has no order for max-benefit-lookahead" in refused.stderr
