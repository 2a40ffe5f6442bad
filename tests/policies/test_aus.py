"""AUS and the sporadic job model on the paper's worked examples (digest E3, E4; acceptance
checks 1-2), its bad input, and AUS = GEDF-NP when no table is ever eligible for recovery."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.errors import Infeasible, InputError
from staleness_lab.model import Table, Workload
from staleness_lab.policies.registry import get_policy
from staleness_lab.sim.engine import run
from sporadic_policies import FixedPriority

#: Example 1's feeds (digest E1): files every 3 from 1; D_1's files 2-4 are held back to 10.
FILES = [1, 4, 7, 10, 13, 16, 19, 22, 25, 28]


def jobs_of(trace, table: str) -> list[tuple[float, float, float, float]]:
    jobs = trace.jobs[trace.jobs["table"] == table]
    return [tuple(r) for r in jobs[["release", "deadline", "start", "finish"]].itertuples(index=False)]


def example_1(p1: float, horizon: float = 18.0) -> Workload:
    v1 = Table("V1", alpha=1, beta=0, arrivals=FILES, nominal_period=p1, outages=[[4, 10]])
    v2 = Table("V2", alpha=1, beta=0, arrivals=FILES, nominal_period=3)
    return Workload(tables=(v1, v2), tracks=1, horizon=horizon)


def test_e3a_eq4_under_fixed_priority():
    """Examples 4-5, p(T_1) = 1 (digest E3 (a)): every job of both tasks, r_{1,3} = 11, the
    retroactive r_{2,5} = 13 < f_{2,4} = 15, F(V_2) = 7 on [8, 15) and S(V_2, 3) = 2."""
    trace = run(example_1(1.0), FixedPriority([1.0, 3.0]), "fixed-priority")
    assert jobs_of(trace, "V1")[:6] == [(1, 2, 1, 2), (10, 11, 10, 11), (11, 12, 11, 12), (12, 13, 12, 13),
                                        (13, 14, 13, 14), (16, 17, 16, 17)]
    assert jobs_of(trace, "V2")[:5] == [(1, 4, 2, 3), (4, 7, 4, 5), (7, 10, 7, 8), (10, 13, 14, 15), (13, 16, 15, 16)]
    s = trace.staleness_at("V2", np.array([3.0, 8.0, 12.0, 14.9]))
    assert list(s) == [2.0, 1.0, 5.0, 7.9]  # F(V_2) = 7 on [8, 15)


def test_e3b_eq4_under_fixed_priority():
    """Example 6, p(T_1) = 1.5 (digest E3 (b)): r_{1,3} = 11.5, T_2's fourth job (10, 13, [11, 12])
    and S(V_2, 12) = 2."""
    trace = run(example_1(1.5), FixedPriority([1.5, 3.0]), "fixed-priority")
    assert jobs_of(trace, "V1")[:6] == [(1, 2.5, 1, 2), (10, 11.5, 10, 11), (11.5, 13, 12, 13), (13, 14.5, 13, 14),
                                        (14.5, 16, 15, 16), (16, 17.5, 16, 17)]
    assert jobs_of(trace, "V2")[3] == (10, 13, 11, 12)
    assert trace.staleness_at("V2", np.array([12.0]))[0] == 2.0


def e4_workload(horizon: float = 27.5) -> Workload:
    """Examples 8-10: two identical tasks, e = 1, p = 3, p^[r] = 1.5, Delta F = 8, both feeds D_1."""
    feed = dict(alpha=1, beta=0, arrivals=FILES, nominal_period=3, outages=[[4, 10]], budget=1,
                recovery_period=1.5, recovery_threshold=8)
    return Workload(tables=(Table("V1", **feed), Table("V2", **feed)), tracks=1, horizon=horizon)


def test_e4_golden_replay():
    """Digest E4 / acceptance check 1: every (r, d, s, f) and the mode log, including the rule-(ii)
    admission at 10 (won on the index tie, correction 4), RN at max(17, 17.5), the same-instant
    admission of T_2 at 17.5 (eq. 6 = 1) and r_{2,5} = 18.5 by rule (vii) (A10)."""
    trace = run(e4_workload(), get_policy("aus"), "aus")
    assert jobs_of(trace, "V1") == [(1, 4, 1, 2), (10, 11.5, 10, 11), (11.5, 13, 12, 13), (13, 14.5, 13, 14),
                                    (14.5, 16, 15, 16), (16, 17.5, 16, 17), (19, 22, 19.5, 20.5),
                                    (22, 25, 22.5, 23.5), (25, 28, 25, 26)]
    assert jobs_of(trace, "V2") == [(1, 4, 2, 3), (10, 13, 11, 12), (13, 16, 14, 15), (16, 19, 17, 18),
                                    (18.5, 20, 18.5, 19.5), (20, 21.5, 20.5, 21.5), (21.5, 23, 21.5, 22.5),
                                    (23, 24.5, 23.5, 24.5), (25, 28, 26, 27)]
    modes = trace.frames["modes"]
    assert [tuple(r) for r in modes[["time", "table", "mode_from", "mode_to", "rule"]].itertuples(index=False)] == [
        (10.0, "V1", "N", "R", "NR/ii"), (17.5, "V1", "R", "N", "RN"),
        (17.5, "V2", "N", "R", "NR/vii"), (24.5, "V2", "R", "N", "RN")]
    assert modes["total_share"].max() <= 1.0 + 1e-12  # eq. 6 at every switch


def test_aus_trace_is_deterministic_and_written_with_modes(tmp_path):
    from staleness_lab.tracefiles import write_trace

    a, b = (run(e4_workload(), get_policy("aus"), "aus") for _ in range(2))
    pd.testing.assert_frame_equal(a.jobs, b.jobs, check_exact=True)
    pd.testing.assert_frame_equal(a.frames["modes"], b.frames["modes"], check_exact=True)
    names = sorted(p.name for p in write_trace(a, tmp_path / "t", version="test"))
    assert names == ["freshness.parquet", "jobs.parquet", "modes.parquet", "trailing_edge.parquet"]


def test_recovery_period_outside_budget_and_period_is_bad_input():
    """Checked on the table when it gives both ends, else when AUS binds (default budget e_k =
    alpha + beta * L_max = 1 here)."""
    with pytest.raises(InputError, match=r"recovery_period"):
        Table("V2", alpha=1, beta=0, arrivals=FILES, nominal_period=3, budget=1, recovery_period=0.5)
    bad = Workload(tables=(e4_workload().tables[0], Table("V2", alpha=1, beta=0, arrivals=FILES, nominal_period=3,
                                                          recovery_period=0.5)), tracks=1, horizon=20)
    with pytest.raises(InputError, match=r"tables\[1\]\.recovery_period.*\[e_k, p_k\]"):
        run(bad, get_policy("aus"), "aus")


def test_overload_is_infeasible_for_aus():
    tables = tuple(Table(f"V{k}", alpha=1, beta=0, period=3.0, budget=2.0) for k in range(2))
    with pytest.raises(Infeasible, match="U_sum"):
        run(Workload(tables=tables, tracks=1, horizon=20), get_policy("aus"), "aus")
    with pytest.raises(Infeasible, match="u_k <= 1"):
        run(Workload(tables=(Table("V", alpha=1, beta=0, period=1.0, budget=2.0),), tracks=2, horizon=20),
            get_policy("aus"), "aus")


@st.composite
def calm_workloads(draw):
    """Periodic feeds without outages and a threshold no gap reaches: no table ever recovers."""
    n = draw(st.integers(1, 5))
    tables = tuple(Table(f"T{k}", alpha=draw(st.sampled_from([0.1, 0.3, 0.5])), beta=draw(st.sampled_from([0.0, 0.05])),
                         period=draw(st.sampled_from([1.0, 2.0, 3.0, 5.0])), phase=draw(st.sampled_from([0.0, 0.5])),
                         recovery_threshold=1e6)
                   for k in range(n))
    return Workload(tables=tables, tracks=draw(st.integers(1, 3)), horizon=50.0, seed=draw(st.integers(0, 3)),
                    cost_noise=draw(st.sampled_from([None, (0.8, 1.2)])))


@settings(max_examples=40, deadline=None)
@given(calm_workloads())
def test_aus_equals_gedf_np_when_no_table_is_eligible(w):
    """With no table ever eligible AUS never switches, so it is GEDF-NP job for job."""
    try:
        aus = run(w, get_policy("aus"), "aus")
    except Infeasible:
        return
    gedf = run(w, get_policy("gedf-np"), "gedf-np")
    assert aus.frames["modes"].empty
    pd.testing.assert_frame_equal(aus.jobs, gedf.jobs, check_exact=True)
    assert aus.staleness_area == gedf.staleness_area


class CalledKey:
    """A registered sporadic policy with ``key_is_deadline`` off: the loop calls its key."""

    def __init__(self, name: str) -> None:
        self.name = name

    def bind(self, workload: Workload, rng: np.random.Generator):
        return dataclasses.replace(get_policy(self.name).bind(workload, rng), key_is_deadline=False)


@st.composite
def recovering_workloads(draw):
    """Periodic feeds, some with an outage, thresholds low enough that tables recover and AUS
    re-dates jobs (rules ii-vii), on 1-2 tracks."""
    n = draw(st.integers(2, 4))
    tables = []
    for k in range(n):
        period = draw(st.sampled_from([2.0, 3.0, 5.0]))
        keys = {"outages": [[draw(st.floats(2.0, 20.0)), 25.0]]} if draw(st.booleans()) else {}
        tables.append(Table(f"T{k}", alpha=draw(st.sampled_from([0.1, 0.3])), beta=0.0, period=period,
                            phase=draw(st.sampled_from([0.0, 0.5])), recovery_threshold=draw(st.floats(0.5, 4.0)),
                            **keys))
    return Workload(tables=tuple(tables), tracks=draw(st.integers(1, 2)), horizon=60.0, seed=draw(st.integers(0, 3)),
                    cost_noise=draw(st.sampled_from([None, (0.8, 1.2)])))


@settings(max_examples=40, deadline=None)
@given(recovering_workloads(), st.sampled_from(["aus", "gedf-np"]))
def test_the_deadline_order_read_off_the_job_is_the_key(w, name):
    """``key_is_deadline``: the loop's (d, r) read off each job orders exactly as calling the
    policy's key, through recoveries and rule-(iv) re-dating: the traces are identical."""
    try:
        fast = run(w, get_policy(name), name)
    except Infeasible:
        return
    called = run(w, CalledKey(name), name)
    pd.testing.assert_frame_equal(fast.jobs, called.jobs, check_exact=True)
    assert fast.staleness_area == called.staleness_area
    for frame in fast.frames:
        pd.testing.assert_frame_equal(fast.frames[frame], called.frames[frame], check_exact=True)
