"""The sporadic job model (Leontyev et al., Def. 8, eq. 3-4) under GEDF-NP: exact small cases,
the eq.-4 invariants of the digest's check 9 on random workloads, and its bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.errors import InputError
from staleness_lab.model import Table, Workload
from staleness_lab.policies.registry import get_policy
from staleness_lab.sim.engine import run
from sporadic_policies import FixedPriority


def gedf(workload: Workload):
    return run(workload, get_policy("gedf-np"), "gedf-np")


def rows(trace, table: str) -> list[tuple[float, ...]]:
    jobs = trace.jobs[trace.jobs["table"] == table]
    return [tuple(r) for r in jobs[["release", "deadline", "start", "finish"]].itertuples(index=False)]


def test_one_file_per_job_and_eq4_releases():
    """A periodic feed under light load: each job loads exactly one file (Def. 8), is released at
    its file's arrival and has d = r + p (eq. 3); nothing is late."""
    w = Workload(tables=(Table("A", alpha=0.5, beta=0.0, period=2.0),), tracks=1, horizon=9.0)
    trace = gedf(w)
    assert rows(trace, "A") == [(2.0, 4.0, 2.0, 2.5), (4.0, 6.0, 4.0, 4.5), (6.0, 8.0, 6.0, 6.5), (8.0, 10.0, 8.0, 8.5)]
    jobs = trace.jobs
    assert list(jobs["data_from"]) == [0.0, 2.0, 4.0, 6.0] and list(jobs["data_to"]) == [2.0, 4.0, 6.0, 8.0]
    assert (jobs["tardiness"] == 0).all()
    assert trace.job_model == "sporadic" and trace.unstarted == [] and trace.in_flight == []


def test_backlog_loads_one_file_per_job_with_retroactive_releases():
    """Three files waiting: three jobs, each loading the oldest file; the second and third are
    released at the previous deadline, before the previous finish (eq. 4's first case, A12)."""
    w = Workload(tables=(Table("A", alpha=3.0, beta=0.0, arrivals=[1.0, 2.0, 3.0], nominal_period=1.0),),
                 tracks=1, horizon=20.0)
    trace = gedf(w)
    assert rows(trace, "A") == [(1.0, 2.0, 1.0, 4.0), (2.0, 3.0, 4.0, 7.0), (3.0, 4.0, 7.0, 10.0)]
    assert list(trace.jobs["tardiness"]) == [2.0, 4.0, 6.0]
    assert list(trace.jobs["data_to"]) == [1.0, 2.0, 3.0]


def test_derived_job_loads_at_most_one_period():
    """Def. 8: a derived job loads min(TE - F, p_k): a source jumping by 20 takes a derived table of
    period 5 four jobs."""
    w = Workload(tables=(Table("A", alpha=1.0, beta=0.0, arrivals=[[20.0, 20.0]], nominal_period=5.0),
                         Table("D", alpha=1.0, beta=0.0, sources=["A"])), tracks=1, horizon=40.0)
    trace = gedf(w)
    d = trace.jobs[trace.jobs["table"] == "D"]
    assert list(d["data_from"]) == [0.0, 5.0, 10.0, 15.0] and list(d["data_to"]) == [5.0, 10.0, 15.0, 20.0]
    assert list(d["release"]) == [21.0, 26.0, 31.0, 36.0]  # first at A's completion, then r = d (eq. 4)
    edge = trace.frames["trailing_edge"]
    assert edge[edge["table"] == "D"]["trailing_edge"].tolist() == [0.0, 20.0]


def test_fixed_priority_order_and_unfinished_jobs_at_the_horizon():
    """A released job that has not started by the horizon is reported as unstarted; one running as
    in flight, with its deadline."""
    w = Workload(tables=(Table("A", alpha=2.0, beta=0.0, period=1.0), Table("B", alpha=1.0, beta=0.0, period=4.0)),
                 tracks=1, horizon=6.5)
    trace = run(w, FixedPriority([1.0, 4.0]), "fixed-priority")
    assert set(trace.jobs["table"]) == {"A"}  # A always has work and always goes first
    assert trace.in_flight and trace.in_flight[0][0] == 0
    assert trace.in_flight_deadlines[0][0] == trace.in_flight[0][2] + 1.0
    assert [u[0] for u in trace.unstarted] == [1]


@pytest.mark.parametrize(("key", "value", "field"), [("chop", 2.0, "tables[0].chop"),
                                                      ("min_separation", 1.0, "tables[0].min_separation")])
def test_chop_and_min_separation_are_bad_input(key, value, field):
    w = Workload(tables=(Table("A", alpha=1.0, beta=0.0, period=2.0, **{key: value}),), horizon=10.0)
    with pytest.raises(InputError, match=field.replace("[", r"\[").replace("]", r"\]")):
        gedf(w)


def test_a_replayed_feed_needs_a_nominal_period():
    w = Workload(tables=(Table("A", alpha=1.0, beta=0.0, arrivals=[1.0, 2.0]),), horizon=10.0)
    with pytest.raises(InputError, match="nominal_period"):
        gedf(w)


@st.composite
def periodic_workloads(draw):
    n = draw(st.integers(1, 6))
    tables = []
    for k in range(n):
        period = draw(st.sampled_from([1.0, 2.0, 2.5, 3.0, 4.0, 5.0]))
        tables.append(Table(f"T{k}", alpha=draw(st.sampled_from([0.1, 0.25, 0.5, 1.0])),
                            beta=draw(st.sampled_from([0.0, 0.05, 0.1])), period=period,
                            phase=draw(st.sampled_from([0.0, 0.5, 1.0]))))
    if n > 1 and draw(st.booleans()):
        picks = draw(st.lists(st.sampled_from([t.name for t in tables]), min_size=1, max_size=2, unique=True))
        tables.append(Table("D", alpha=0.2, beta=0.05, sources=picks))
    return Workload(tables=tuple(tables), tracks=draw(st.integers(1, 3)), horizon=60.0,
                    variability=draw(st.sampled_from([None, 0.2])), seed=draw(st.integers(0, 5)))


@settings(max_examples=60, deadline=None)
@given(periodic_workloads())
def test_eq4_invariants(w):
    """The digest's check 9 on GEDF-NP traces: d = r + p_k; consecutive releases at least p_k apart
    (no mode changes); every job starts with work and after its release; base jobs load exactly
    one file; F and TE never decrease; F <= TE <= t; the same workload gives the same trace."""
    trace = gedf(w)
    periods = dict(zip((t.name for t in w.tables), w.periods))
    jobs = trace.jobs
    for name, group in jobs.groupby("table", sort=False):
        p = periods[name]
        table = w.table(name)
        assert np.array_equal(group["deadline"].to_numpy(), group["release"].to_numpy() + p)
        release, deadline = group["release"].to_numpy(), group["deadline"].to_numpy()
        assert (release[1:] >= deadline[:-1]).all()  # r_{j+1} >= d_j = r_j + p_k
        assert (group["start"] >= group["release"]).all() and (group["data_to"] > group["data_from"]).all()
        assert (group["start"].to_numpy()[1:] >= group["finish"].to_numpy()[:-1]).all()  # one job at a time
        if table.is_base:  # one file each: consecutive arrival times phase + k p
            k = (group["data_to"].to_numpy() - table.phase) / p
            assert np.allclose(k, np.round(k)) and np.allclose(np.diff(k), 1.0)
        else:
            assert (group["data_to"] - group["data_from"] <= p + 1e-12).all()
    edge = trace.frames["trailing_edge"]
    fresh = trace.freshness
    for name in periods:
        te = edge[edge["table"] == name]
        assert (np.diff(te["trailing_edge"].to_numpy()) > 0).all() and (te["trailing_edge"] <= te["time"] + 1e-12).all()
        f = fresh[fresh["table"] == name]
        at = np.searchsorted(te["time"].to_numpy(), f["time"].to_numpy(), side="right") - 1
        assert (f["freshness"].to_numpy() <= te["trailing_edge"].to_numpy()[at]).all()
    again = gedf(w)
    pd.testing.assert_frame_equal(trace.jobs, again.jobs, check_exact=True)
    assert trace.staleness_area == again.staleness_area and not any(math.isnan(a) for a in trace.staleness_area)


def test_trace_out_writes_the_extra_frames(tmp_path):
    """``--trace-out`` keeps the deadline columns and adds trailing_edge.parquet; rewriting the same
    directory replaces the whole set."""
    from staleness_lab.tracefiles import write_trace

    w = Workload(tables=(Table("A", alpha=0.5, beta=0.0, period=2.0),), tracks=1, horizon=9.0)
    trace = gedf(w)
    out = tmp_path / "trace"
    written = write_trace(trace, out, version="test")
    assert sorted(p.name for p in written) == ["freshness.parquet", "jobs.parquet", "trailing_edge.parquet"]
    jobs = pd.read_parquet(out / "jobs.parquet")
    assert {"deadline", "tardiness", "redated_from"} <= set(jobs.columns)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "trailing_edge.parquet"), trace.frames["trailing_edge"])
    write_trace(trace, out, version="test")
    assert sorted(p.name for p in out.iterdir()) == ["freshness.parquet", "jobs.parquet", "trailing_edge.parquet"]
