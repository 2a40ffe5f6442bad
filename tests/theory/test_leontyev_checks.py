"""The ``leontyev`` suite of ``staleness-lab check``: Theorem 1, Lemma 1, Theorems 2-4 and eq. 6
judged on traces (digest ``specs/leontyev-aus.md``, acceptance checks 4-8).

The E4 replay (Examples 8-10) with every verdict; random workloads built to meet the claims'
preconditions, on which every applicable record must hold; doctored traces on which each claim
must fail; and inputs that make the records undecided (an understated budget, U_sum > m, an
outage), their ``ratio`` showing the excess.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import staleness_lab as sl
from staleness_lab.model import Table, Workload
from staleness_lab.sim.trace import Trace
from staleness_lab.theory.leontyev.checks import observe, trailing_edges
from staleness_lab.theory.leontyev.suite import leontyev_records
from staleness_lab.theory.records import CheckRecord
from leontyev_strategies import leontyev_workloads
from tests.policies.test_aus import e4_workload

CLI = Path(sys.executable).parent / "staleness-lab"
RECORD_KEYS = {"claim", "theorem", "table", "bound", "observed", "preconditions_met", "holds", "preconditions", "terms",
               "ratio", "window", "witness"}

def verdicts(records: list[CheckRecord]) -> list[tuple]:
    return [(r.claim, r.table, r.holds, r.observed, r.bound) for r in records]


def by_claim(records: list[CheckRecord], claim: str, table: str | None = None) -> CheckRecord:
    found = [r for r in records if r.claim == claim and r.table == table]
    assert len(found) == 1, (claim, table, verdicts(records))
    return found[0]


def unmet(record: CheckRecord) -> set[str]:
    return {p.name for p in record.preconditions if not p.met}


# -- E4 (Examples 8-10) --------------------------------------------------------------------------

def test_e4_verdicts_under_aus():
    """Y = 1, Theta = 4, A = 10 (digest E5). Tardiness and response times hold; staleness is
    undecided (the outage on [4, 10) breaks Def. 2's health) with S reaching 10 on V_1 and 11 on
    V_2 just before their first loads after it; Theorem 4 holds with lambda = t_0 - the oldest
    pending timestamp (correction 2): 10 - 4 = 6 gives x = 17 (cleared at 17), 17.5 - 10 = 7.5
    gives 18.5 (cleared at 24.5); eq. 6 peaks at exactly m = 1."""
    report = sl.check(e4_workload(), "aus")
    assert verdicts(report.records) == [
        ("tardiness", "V1", True, 0.0, 1.0), ("tardiness", "V2", True, 0.0, 1.0),
        ("response-time", "V1", True, 1.5, 4.0), ("response-time", "V2", True, 2.0, 4.0),
        ("staleness", "V1", None, 10.0, 10.0), ("staleness", "V2", None, 11.0, 10.0),
        ("recovery-time", "V1", True, 7.0, 17.0), ("recovery-time", "V2", True, 7.0, 18.5),
        ("capacity", None, True, 1.0, 1.0),
    ]
    v2 = by_claim(report.records, "staleness", "V2")
    assert unmet(v2) == {"windows"} and v2.ratio == pytest.approx(1.1) and v2.witness == {"time": 12.0}
    assert v2.terms["breaks"] == [[4.0, 10.0]] and v2.window == (0.0, 31.0)  # the replayed feed ends at 28 + 3
    assert v2.terms["judged_windows"] == [[0.0, 4.0], [24.5, 31.0]] and v2.terms["judged_holds"] is True
    first, second = (r for r in report.records if r.claim == "recovery-time")
    assert (first.terms["t0"], first.terms["lambda"], first.terms["rule"]) == (10.0, 6.0, "NR/ii")
    assert (second.terms["t0"], second.terms["lambda"], second.terms["rule"]) == (17.5, 7.5, "NR/vii")
    assert by_claim(report.records, "capacity").witness == {"time": 10.0, "recovery": ["V1"]}


def test_e4_verdicts_under_gedf_np():
    """GEDF-NP never catches up after the outage (one file per period), so V_k is never fresh
    again: no recovery or capacity records, and the same undecided staleness."""
    report = sl.check(e4_workload(), "gedf-np")
    assert [(r.claim, r.table, r.holds) for r in report.records] == [
        ("tardiness", "V1", True), ("tardiness", "V2", True), ("response-time", "V1", True),
        ("response-time", "V2", True), ("staleness", "V1", None), ("staleness", "V2", None)]
    assert by_claim(report.records, "staleness", "V1").terms["judged_windows"] == [[0.0, 4.0]]


def test_each_paper_keeps_to_its_job_model():
    """Leontyev et al.'s suite skips other policies; Bateni et al.'s skips sporadic traces."""
    fifo = sl.check(e4_workload(), "fifo")
    assert not any(r.theorem.startswith("Leontyev") for r in fifo.records)
    assert all(not r.theorem.startswith("Bateni") for r in sl.check(e4_workload(), "aus").records)


def test_check_cli_json_on_e4(tmp_path: Path):
    path = tmp_path / "e4.yaml"
    path.write_text(yaml.safe_dump(e4_workload().to_dict(), sort_keys=False))
    proc = subprocess.run([str(CLI), "check", str(path), "--policy", "aus", "--json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    data = json.loads(proc.stdout)
    assert data["status"] == "ok" and data["policy"] == "aus" and len(data["checks"]) == 9
    for record in data["checks"]:
        assert RECORD_KEYS <= set(record)
        assert all(set(p) == {"name", "met", "why"} for p in record["preconditions"])
        assert record["holds"] is None or record["preconditions_met"]
    assert [c["claim"] for c in data["checks"]] == ["tardiness"] * 2 + ["response-time"] * 2 + ["staleness"] * 2 + \
        ["recovery-time"] * 2 + ["capacity"]
    assert data["checks"][-1]["table"] is None and data["summary"]["failed"] == 0


# -- random workloads meeting the preconditions ----------------------------------------------------
# (the strategy, shared with the eq.-4 and Spark determinism tests: tests/leontyev_strategies.py)

def outage_free(w: Workload, name: str) -> bool:
    return w.table(name).outages is None


@settings(max_examples=50, deadline=None)
@given(leontyev_workloads(), st.sampled_from(["aus", "gedf-np"]), st.sampled_from(["single", "all"]))
def test_every_applicable_bound_holds(w: Workload, policy: str, rule: str):
    """Acceptance checks 5-7: where every precondition is met the record holds (tardiness <= Y,
    f - r <= Theta, S <= A, recovery by t_0 + x_k); Theorems 2-3 also hold on each judged window
    between outages; a record with an unmet precondition never decides. Theorem 1's preconditions
    are met on every table here (budgets by construction), and Theorem 2's on every base table
    without an outage (acceptance check 6)."""
    report = sl.check(w, policy, options={"recovery_rule": rule} if policy == "aus" else None)
    for r in report.records:
        assert r.holds is (True if r.preconditions_met else None), (r.claim, r.table, r.to_dict())
        if r.claim in ("tardiness", "response-time"):
            assert r.preconditions_met, r.to_dict()
        if r.claim == "staleness":
            if w.table(r.table).is_base and outage_free(w, r.table):
                assert r.preconditions_met, r.to_dict()
            if unmet(r) <= {"windows"}:
                assert r.terms["judged_holds"] in (True, None), r.to_dict()
    assert sum(r.claim == "capacity" for r in report.records) == (policy == "aus")


@settings(max_examples=50, deadline=None)
@given(leontyev_workloads())
def test_capacity_invariant(w: Workload):
    """Acceptance check 4: eq. 6 at every switch of AUS's mode log, R->N only at max(f, d) of a
    job leaving V_k fresh, N->R only past Delta F."""
    cap = by_claim(sl.check(w, "aus").records, "capacity")
    assert cap.preconditions_met and cap.holds is True, cap.to_dict()
    assert cap.observed <= w.tracks * (1 + 1e-9) and all(cap.terms["relations"].values())


@settings(max_examples=50, deadline=None)
@given(leontyev_workloads(outages=False, thresholds=False))
def test_threshold_safety(w: Workload):
    """Acceptance check 8: with Delta F = A(V_k) and worst-case budgets, no table whose feed never
    breaks enters recovery (jitter within J and kappa keeps a feed healthy)."""
    assert sl.simulate(w, "aus").trace.frames["modes"].empty


def leontyev_json(report: sl.CheckReport) -> list[str]:
    """The Leontyev records of a report in their JSON form (NaN-safe, comparable)."""
    return [json.dumps(r.to_dict(), sort_keys=True) for r in report.records if r.theorem.startswith("Leontyev")]


@settings(max_examples=20, deadline=None)
@given(leontyev_workloads(replayed=True), st.sampled_from([("aus", "single"), ("aus", "all"), ("gedf-np", None),
                                                           ("prp", None)]), st.sampled_from([5.0, 30.0, 79.5]))
def test_checks_ignore_warmup(w: Workload, run: tuple[str, str | None], warmup: float):
    """Checks ignore warmup (checks.py: they cover [0, horizon] whatever the warmup): the same
    workload checked with and without ``warmup`` gives the same Leontyev records, field for field,
    although the warmup did reach the run (its staleness area starts later)."""
    policy, rule = run
    options = {"recovery_rule": rule} if rule else None
    plain, warm = sl.check(w, policy, options=options), sl.check(w, policy, options=options, warmup=warmup)
    assert warm.workload.warmup == warmup and plain.workload.warmup == 0
    assert sum(warm.trace.staleness_area) < sum(plain.trace.staleness_area)
    pd.testing.assert_frame_equal(warm.trace.jobs, plain.trace.jobs, check_exact=True)
    assert leontyev_json(plain) and leontyev_json(warm) == leontyev_json(plain)


def test_e4_checks_ignore_warmup():
    """E4 (Examples 8-10) with warmup 10, inside the outage's aftermath: the same nine records."""
    plain, warm = sl.check(e4_workload(), "aus"), sl.check(e4_workload(), "aus", warmup=10.0)
    assert len(leontyev_json(plain)) == 9 and leontyev_json(warm) == leontyev_json(plain)


# -- doctored traces: each claim fails -------------------------------------------------------------

def e4_trace() -> Trace:
    return sl.check(e4_workload(), "aus").trace


def drop_jobs(trace: Trace, table: int, lo: float, hi: float) -> Trace:
    """``trace`` without the completed jobs of ``table`` finishing in (lo, hi]."""
    keep = [i for i, rec in enumerate(trace.jobs_done) if not (rec[0] == table and lo < rec[3] + rec[6] <= hi)]
    return dataclasses.replace(trace, jobs_done=[trace.jobs_done[i] for i in keep],
                               deadlines=[trace.deadlines[i] for i in keep])


def test_a_late_job_fails_tardiness_and_response_time():
    """T_{2,2} (r = 10, d = 13, f = 12) released and due 5 earlier: tardiness 4 > Y = 1, f - r
    = 7 > Theta = 4."""
    trace = e4_trace()
    i = next(i for i, rec in enumerate(trace.jobs_done) if rec[0] == 1 and rec[2] == 10.0)
    jobs = list(trace.jobs_done)
    jobs[i] = (*jobs[i][:2], 5.0, *jobs[i][3:])
    deadlines = list(trace.deadlines)
    deadlines[i] = (8.0, deadlines[i][1])
    records = leontyev_records(e4_workload(), dataclasses.replace(trace, jobs_done=jobs, deadlines=deadlines), "aus")
    tardy, slow = by_claim(records, "tardiness", "V2"), by_claim(records, "response-time", "V2")
    assert (tardy.holds, tardy.observed, slow.holds, slow.observed) == (False, 4.0, False, 7.0)
    assert tardy.witness == {"release": 5.0, "deadline": 8.0, "finish": 12.0, "unfinished": False}
    assert by_claim(records, "tardiness", "V1").holds is True


def steady(horizon: float = 60.0) -> Workload:
    """One periodic table, no outage: e = 0.5, p = 2, phi = 2: Y = 0.5, Theta = 2.5, A = 6.5."""
    return Workload(tables=(Table("S", alpha=0.5, beta=0, period=2.0),), tracks=1, horizon=horizon)


def test_a_stale_window_fails_staleness():
    """Without the loads finishing in (20, 40], F stays at its level of time 20: S nears 20 > A."""
    trace = sl.check(steady(), "gedf-np").trace
    record = by_claim(leontyev_records(steady(), drop_jobs(trace, 0, 20.0, 40.0), "gedf-np"), "staleness", "S")
    assert record.preconditions_met and record.holds is False
    assert record.bound == 6.5 and record.observed > 20 and record.window == (0.0, 60.0)


def test_a_slow_recovery_fails_recovery_time():
    """Without V_1's loads finishing in (10, 28], its backlog first empties at 29: 19 > x = 17."""
    records = leontyev_records(e4_workload(), drop_jobs(e4_trace(), 0, 10.0, 28.0), "aus")
    record = next(r for r in records if r.claim == "recovery-time" and r.table == "V1")
    assert record.preconditions_met and record.holds is False
    assert (record.observed, record.bound, record.witness["cleared_at"]) == (19.0, 17.0, 29.0)


def test_over_capacity_modes_fail_capacity():
    """A forged N->R switch of V_2 at 12 while V_1 recovers: 2/3 + 2/3 > m = 1. Theorem 1's
    ``capacity`` precondition then fails too."""
    trace = e4_trace()
    modes = trace.frames["modes"]
    forged = pd.DataFrame([{"time": 12.0, "table": "V2", "mode_from": "N", "mode_to": "R", "rule": "NR/ii",
                            "total_share": 4 / 3}]).astype(modes.dtypes.to_dict())
    frames = {**trace.frames, "modes": pd.concat([modes, forged]).sort_values("time", kind="stable")}
    records = leontyev_records(e4_workload(), dataclasses.replace(trace, frames=frames), "aus")
    cap = by_claim(records, "capacity")
    assert cap.holds is False and cap.observed == pytest.approx(4 / 3) and cap.witness["time"] == 12.0
    tardy = by_claim(records, "tardiness", "V1")
    assert tardy.holds is None and unmet(tardy) == {"capacity"}


# -- undecided records: the excess in ``ratio`` ----------------------------------------------------

def test_an_understated_budget_makes_the_bounds_not_applicable():
    """Budgets of 1 against actual costs of 3 (U_sum = 0.5 on paper, 1.5 in fact): the backlog of
    jobs grows, tardiness far exceeds Y = 1, but no claim is decided."""
    tables = tuple(Table(f"V{k}", alpha=3, beta=0, period=4.0, budget=1) for k in range(2))
    records = sl.check(Workload(tables=tables, tracks=1, horizon=60), "gedf-np").records
    tardy = by_claim(records, "tardiness", "V1")
    assert tardy.holds is None and unmet(tardy) == {"budgets"} and tardy.ratio > 3
    assert "costs 3 > e_k = 1" in next(p.why for p in tardy.preconditions if p.name == "budgets")


def test_an_average_case_budget_is_expected_not_guaranteed():
    """Digest A18: average-case provisioning with costs up to 1.4 x the mean exceeds e_k."""
    tables = tuple(Table(f"V{k}", alpha=0.5, beta=0.1, period=4.0) for k in range(2))
    w = Workload(tables=tables, tracks=1, horizon=60, cost_noise=(0.6, 1.4), provisioning="average", seed=1)
    tardy = by_claim(sl.check(w, "aus").records, "tardiness", "V1")
    why = next(p.why for p in tardy.preconditions if p.name == "budgets")
    assert tardy.holds is None and why.startswith("expected, not guaranteed (average-case budget)")


def test_overload_makes_the_bounds_not_applicable():
    """U_sum = 1.5 > m = 1 under GEDF-NP (which runs it): bounds from the nominal task set, the
    ``utilization`` precondition unmet, tardiness growing past Y."""
    tables = tuple(Table(f"V{k}", alpha=1.5, beta=0, period=2.0) for k in range(2))
    records = sl.check(Workload(tables=tables, tracks=1, horizon=60), "gedf-np").records
    tardy = by_claim(records, "tardiness", "V1")
    assert tardy.holds is None and unmet(tardy) == {"utilization"} and tardy.bound == 1.5 and tardy.ratio > 10
    assert all(r.holds is None for r in records)  # staleness through ``response-times``


def test_a_task_over_one_processor_has_no_bounds():
    """u_k = 1.25 > 1: no task set exists (Def. 9), so every bound is null and nothing decides."""
    w = Workload(tables=(Table("V", alpha=2.5, beta=0, period=2.0),), tracks=2, horizon=30)
    records = sl.check(w, "gedf-np").records
    assert [r.claim for r in records] == ["tardiness", "response-time", "staleness"]
    assert all(r.bound is None and r.holds is None and r.ratio is None for r in records)
    assert "task-utilization" in unmet(records[0]) and records[0].observed > 0


def test_an_outage_makes_staleness_not_applicable():
    """E4's V_2: S reaches 11 > A = 10 right after the outage, where Def. 2's health is broken;
    the record stays undecided with the excess in its ratio, while the windows Theorem 2 does
    cover hold."""
    record = by_claim(sl.check(e4_workload(), "aus").records, "staleness", "V2")
    assert record.holds is None and unmet(record) == {"windows"} and record.ratio == pytest.approx(1.1)
    assert record.terms["judged_max"] == 5.0


def test_check_cli_reports_an_infeasible_aus_run_with_no_checks(tmp_path: Path):
    """U_sum = 1.5 > m = 1 (each u_k = 0.75): AUS refuses to bind (Def. 9), which ``check`` reports as a result with
    ``checks: []``, exit 0, through ``python -m staleness_lab`` as through the console script."""
    tables = tuple(Table(f"V{k}", alpha=1.5, beta=0, period=2.0) for k in range(2))
    path = tmp_path / "over.yaml"
    path.write_text(yaml.safe_dump(Workload(tables=tables, tracks=1, horizon=10).to_dict(), sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "staleness_lab", "check", str(path), "--policy", "aus", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "infeasible" and data["checks"] == [] and "U_sum" in data["reason"]


# -- PRP, the paper's baseline -------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(leontyev_workloads())
def test_trailing_edges_rebuilt_from_the_feeds_match_the_recorded_ones(w: Workload):
    """Def. 6's TE rebuilt from the workload and F (as for a Golab-model trace) is the step
    function the sporadic loop records, base and derived tables alike."""
    trace = sl.simulate(w, "gedf-np").trace
    run = observe(trace)
    rebuilt = trailing_edges(w, run.F)
    for k, (recorded, mine) in enumerate(zip(run.TE, rebuilt)):
        assert np.array_equal(recorded.times, mine.times), w.tables[k].name
        assert np.array_equal(recorded.values, mine.values), w.tables[k].name


def test_prp_records_stand_beside_the_bounds_undecided():
    """PRP (Sec. V's baseline) gets tardiness, response time and staleness per table with the
    ``scheduler`` precondition unmet: nothing decides, tardiness has no observed value (no
    deadlines on the Golab job model), and E4's outage shows in V_1's staleness ratio."""
    records = sl.check(e4_workload(), "prp").records
    mine = [r for r in records if r.theorem.startswith("Leontyev")]
    assert [(r.claim, r.table) for r in mine] == [(c, t) for c in ("tardiness", "response-time", "staleness")
                                                  for t in ("V1", "V2")]
    assert all(r.holds is None and "scheduler" in unmet(r) for r in mine)
    assert all(r.observed is None for r in mine if r.claim == "tardiness")
    stale = by_claim(mine, "staleness", "V1")
    assert stale.observed >= 10 and stale.ratio == pytest.approx(stale.observed / stale.bound)
