"""The sporadic job model (Leontyev et al., Def. 8, eq. 3-4) under GEDF-NP: exact small cases,
the eq.-4 invariants of the digest's check 9 on random workloads, and its bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.errors import Infeasible, InputError
from staleness_lab.model import Table, Workload
from staleness_lab.policies.registry import get_policy
from staleness_lab.sim.engine import run
from staleness_lab.theory.leontyev.workloads import from_workload
from leontyev_strategies import leontyev_workloads
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


def eq4_cases():
    """(workload, policy, recovery_rule): plain periodic feeds (any load, so backlogs and
    retroactive releases) under GEDF-NP, and Leontyev workloads whose feeds are also jittered,
    outaged or replayed (compiled into (arrival, timestamp) files) under GEDF-NP and AUS (Rule A
    or B recovery periods)."""
    plain = periodic_workloads().map(lambda w: (w, "gedf-np", None))
    runs = st.sampled_from([("gedf-np", None), ("aus", "single"), ("aus", "all")])
    leontyev = st.tuples(leontyev_workloads(replayed=True), runs).map(lambda c: (c[0], *c[1]))
    return st.one_of(plain, leontyev)


def simulate(w: Workload, policy: str, rule: str | None):
    return run(w, get_policy(policy, **({"recovery_rule": rule} if rule else {})), policy)


def step_at(times: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """A right-continuous step function (``values`` from ``times`` on) read at ``at``."""
    return values[np.searchsorted(times, at, side="right") - 1]


def base_work(w: Workload, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The files of base table ``k`` that are work, in arrival order: those whose timestamp is
    beyond every earlier one (and F(0)); their arrivals and timestamps."""
    table, files = w.tables[k], w.files[k]
    if files is None:  # plain periodic: phase + j p, j >= 1, as the engine computes them
        arrivals = table.phase + np.arange(1, int(w.horizon // table.period) + 2, dtype=float) * table.period
        stamps = arrivals
    else:
        log = np.array(files, dtype=float).reshape(-1, 2)
        arrivals, stamps = log[:, 0], log[:, 1]
    edge = np.maximum.accumulate(np.concatenate([[table.initial_freshness], stamps]))
    new = stamps > edge[:-1]
    return arrivals[new], stamps[new]


@settings(max_examples=80, deadline=None)
@given(eq4_cases())
def test_eq4_invariants(case):
    """The digest's check 9 under GEDF-NP and AUS: d = r + p(T_k, r) with the period in force at r
    (AUS's mode log); without a mode change of T_k in [r_j, r_{j+1}] consecutive releases are at
    least p(T_k, r_j) apart (r_{j+1} >= d_j); every job starts after its release, with work (TE > F
    at its start) and after the previous one finished; it loads from F at its start, so F never
    decreases; a base job loads exactly one file, the oldest pending (the next timestamp of its
    feed, arrived by the start); a derived job at most p_k; TE never decreases and F <= TE <= t;
    the same workload gives the same trace."""
    w, policy, rule = case
    try:
        trace = simulate(w, policy, rule)
    except Infeasible:  # AUS refuses U_sum > m (never drawn: the Leontyev workloads keep U_sum < m)
        raise AssertionError(f"AUS infeasible on a Leontyev workload: {w.to_dict()}") from None
    periods = dict(zip((t.name for t in w.tables), w.periods))
    recovery = dict(zip(periods, (float(p) for p in from_workload(w, "aus", recovery_rule=rule).p_r))) if rule else {}
    modes = trace.frames.get("modes")
    edge, fresh = trace.frames["trailing_edge"], trace.freshness
    assert (modes is not None) == (policy == "aus")
    for k, name in enumerate(periods):
        p, table = periods[name], w.tables[k]
        switches = np.array([]) if modes is None else modes[modes["table"] == name]["time"].to_numpy()
        te = edge[edge["table"] == name]
        te_t, te_v = te["time"].to_numpy(), te["trailing_edge"].to_numpy()
        f = fresh[fresh["table"] == name]
        f_t, f_v = f["time"].to_numpy(), f["freshness"].to_numpy()
        # TE and F: non-decreasing step functions with F <= TE <= t
        assert te_t[0] == 0.0 and (np.diff(te_t) > 0).all() and (np.diff(te_v) > 0).all(), te
        assert (te_v <= te_t).all(), te
        assert (np.diff(f_t) >= 0).all() and (np.diff(f_v) >= 0).all(), f
        assert (f_v <= step_at(te_t, te_v, f_t)).all() and (f_v <= f_t).all(), (f, te)
        group = trace.jobs[trace.jobs["table"] == name]
        if group.empty:
            continue
        release, deadline = group["release"].to_numpy(), group["deadline"].to_numpy()
        start, finish = group["start"].to_numpy(), group["finish"].to_numpy()
        lo, hi = group["data_from"].to_numpy(), group["data_to"].to_numpy()
        # eq. 3 with the period in force at r (a switch at t is in force at t)
        in_recovery = np.searchsorted(switches, release, side="right") % 2 == 1
        assert np.array_equal(deadline, release + np.where(in_recovery, recovery.get(name, p), p)), group
        # eq. 4: r_{j+1} >= d_j unless T_k switched mode in [r_j, r_{j+1}]
        switched = np.searchsorted(switches, release[1:], side="right") > np.searchsorted(switches, release[:-1])
        assert ((release[1:] >= deadline[:-1]) | switched).all(), (group, switches)
        assert (release[1:] > release[:-1]).all(), group
        # each job: after its release and its predecessor, from F at its start, with work (TE > F)
        assert (start >= release).all() and (start[1:] >= finish[:-1]).all(), group
        assert lo[0] == table.initial_freshness and np.array_equal(lo[1:], hi[:-1]), group
        assert (hi > lo).all() and (hi <= step_at(te_t, te_v, start)).all(), (group, te)
        if table.is_base:  # exactly one file each: the next file that is work, arrived by the start
            arrivals, stamps = base_work(w, k)
            assert len(hi) <= len(stamps) and np.array_equal(hi, stamps[:len(hi)]), (group, stamps)
            assert (arrivals[:len(hi)] <= start).all(), (group, arrivals)
        else:
            assert (hi - lo <= p + 1e-12).all(), group
    again = simulate(w, policy, rule)
    pd.testing.assert_frame_equal(trace.jobs, again.jobs, check_exact=True)
    for frame in trace.frames:
        pd.testing.assert_frame_equal(trace.frames[frame], again.frames[frame], check_exact=True)
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
