"""Bateni et al.'s worked examples (digest Sec. 4, E1-E8) as exact tests of the metrics, bounds
and checks (the schedulers' own examples E6, E7, E9 are in tests/policies)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import staleness_lab as sl
from staleness_lab.theory.bateni.bounds import (LOAD_LIMIT, best_beta, corollary_3_2, g_of_x, in_theorem_range,
                                                r_star, theorem_3_1)
from staleness_lab.theory.bateni.eager import is_eager
from staleness_lab.theory.bateni.metrics import measures, update_stretches
from staleness_lab.theory.bateni.updates import table_updates

WORKLOADS = Path(__file__).resolve().parents[2] / "data" / "workloads"


def load(name: str) -> sl.Workload:
    return sl.load_workload(WORKLOADS / f"bateni-{name}.yaml")


def records(report: sl.CheckReport) -> dict[str, object]:
    return {r.claim: r for r in report.records}


def test_e1_batching_and_metrics() -> None:
    run = sl.simulate(load("e1"), "myopic")
    assert run.jobs[["start", "finish", "data_from", "data_to"]].values.tolist() == [[4, 6, 0, 4], [6, 6.75, 4, 5.5]]
    m = measures(run.trace)
    assert (m.LOW, m.penalty, m.S_star, m.X) == (17.25, 43.5625, 19.78125, 19)
    assert m.total("S_H") == 29.125 == run.trace.staleness_area[0]
    assert m.penalty / 2 - m.S_star == 0.5 * (6 - 4) ** 2
    assert update_stretches(table_updates(run.trace)[0]).tolist() == [1.5, 2.75, 3.5]
    # batch 2: c = 1, d = 1, b = 1.5, tardy iff beta_tardy > .5
    u = table_updates(run.trace)[0]
    assert (u.first_length[1], u.wait[1], u.span[1]) == (1, 1, 1.5)


def test_e1_check_reports_x_and_the_sandwich() -> None:
    report = sl.check(load("e1"), "myopic")
    assert report.X == 19 and report.drained
    sandwich = records(report)["staleness-sandwich"]
    assert sandwich.holds is True and all(sandwich.terms["relations"].values())
    penalty = records(report)["penalty-ratio"]  # x = .5 is outside Theorem 3.1 (correction 2)
    assert penalty.holds is None and not penalty.preconditions_met
    assert [p.name for p in penalty.preconditions if not p.met] == ["load"]


def test_e2_eager_schedule_and_ratio() -> None:
    run = sl.simulate(load("e2"), "myopic")
    assert run.jobs[["table", "start", "finish"]].values.tolist() == [["A", 10, 11.5], ["B", 11.5, pytest.approx(11.605)]]
    m = measures(run.trace)
    assert m.X == pytest.approx(131.7275, abs=1e-9)
    assert m.penalty == pytest.approx(266.926025, abs=1e-9) and m.LOW == 210.25
    assert m.penalty / m.LOW == pytest.approx(1.2696, abs=1e-4)


def test_e3_stretch_is_unbounded() -> None:
    m = measures(sl.simulate(load("e3"), "myopic").trace)
    assert m.max_stretch == pytest.approx(500.5, rel=1e-12)


def test_e4_p_below_g_stretch() -> None:
    run = sl.simulate(load("e4"), "myopic")
    jobs = run.jobs
    b = jobs[jobs["table"] == "B"]
    assert b[["start", "finish"]].values.tolist() == [[1000, 1025]]
    batch = jobs[(jobs["table"] == "A") & (jobs["start"] == 1025)]
    assert batch["finish"].tolist() == [1025.625] and batch["data_from"].tolist() == [999.5]  # first update: released at 1000.5
    assert measures(run.trace).max_stretch == pytest.approx(26.125, rel=1e-12)


def test_e5_claim_3_5_fails_on_own_table_wait_while_theorem_3_1_holds() -> None:
    report = sl.check(load("e5"), "myopic")
    by = records(report)
    claim = by["claim-3.5"]
    assert claim.diagnostic and claim.preconditions_met and claim.holds is False
    assert claim.observed == pytest.approx(25, rel=1e-12) and claim.bound == pytest.approx(27, rel=1e-12)
    assert claim.witness["own_table_wait"] is True and claim.witness["table"] == "t0"
    penalty = by["penalty-ratio"]
    assert penalty.holds is True
    assert penalty.observed == pytest.approx(6226.5525 / 5145.25, rel=1e-9)
    assert penalty.bound == pytest.approx(8.507, abs=1e-3)
    assert report.summary()["failed"] == 0 and report.summary()["diagnostics_failed"] >= 1


def test_e5_lemma_3_4_fails_at_a_hundred_tables() -> None:
    """t = p = 100, alpha .1, beta_tardy .6: table 0 releases 10 and 10.01, the others once, late:
    (c + d)^2 = 1 > sum v b^2 = 0.6302 (digest E5)."""
    tables = [{"name": "t0", "arrivals": [10, 10.01], "alpha": 0, "beta": 0.1, "priority": 1}]
    tables += [{"name": f"t{k}", "arrivals": [100 + k], "alpha": 0, "beta": 0.1, "priority": 1} for k in range(1, 100)]
    report = sl.check({"tracks": 100, "horizon": 300, "tables": tables}, "myopic")
    lemma = records(report)["lemma-3.4"]
    assert lemma.holds is False and lemma.diagnostic
    assert lemma.observed == pytest.approx(1, rel=1e-9)
    assert lemma.bound == pytest.approx(0.6302, abs=1e-4)
    assert records(report)["penalty-ratio"].holds is True


def test_e8_theorem_3_1_arithmetic() -> None:
    t = theorem_3_1(alpha=0.02, tables=10, tracks=2, beta=0.5, delta=0.2)
    assert t.c == pytest.approx(0.129099, abs=1e-6)
    assert t.holds and t.precondition_lhs == pytest.approx(0.022222, abs=1e-6)
    assert t.precondition_rhs == pytest.approx(0.025820, abs=1e-6)
    assert t.bound == pytest.approx(20.808, abs=1e-9)
    assert t.sharp_bound == pytest.approx(19.5414, abs=1e-4)
    assert r_star(0.02, 0.1) == pytest.approx(7.3145, abs=1e-4)
    assert [round(corollary_3_2(c).c_prime_sqrt3, 5) for c in (0.1, 0.2, 0.3)] == [0.19245, 0.43301, 0.74231]


@pytest.mark.parametrize(
    ("x", "g"),
    [(0.001, 1.0717), (0.01, 1.3950), (0.02, 1.7236), (0.05, 2.9575), (0.1, 7.0305), (0.15, 18.534),
     (0.2, 61.416), (0.25, 315.75), (0.3, 4391.2), (0.35, 4.194e6)],
)
def test_g_table(x: float, g: float) -> None:
    assert g_of_x(x) == pytest.approx(g, rel=1e-4)


def test_best_beta_and_the_theorem_range() -> None:
    assert best_beta(0.1) == pytest.approx(0.7122, abs=1e-4)
    for x in (0.0, 0.2, LOAD_LIMIT - 1e-9):
        assert in_theorem_range(x) and math.isfinite(g_of_x(x))
    for x in (LOAD_LIMIT, 0.5, 1.0, 1.2, -0.1):
        assert not in_theorem_range(x) and g_of_x(x) == math.inf
    # correction 2: at x >= 1 the paper's test alpha/(1-x) <= C p/t would pass vacuously
    assert not theorem_3_1(alpha=0.6, tables=2, tracks=1, beta=0.5, delta=0.5).holds


def test_check_on_periodic_workload_reports_but_decides_nothing_outside_the_model() -> None:
    report = sl.check(WORKLOADS / "golab-table2.yaml", "max-benefit", horizon=300)
    assert report.X is None and "periodic" in report.X_reason and not report.drained
    for record in report.records:
        if record.claim != "staleness-sandwich":
            assert record.holds is None
            assert "bateni-model" in [p.name for p in record.preconditions if not p.met]


def test_edf_partitioned_is_not_eager() -> None:
    run = sl.simulate(WORKLOADS / "golab-table2.yaml", "edf-partitioned", horizon=2000, tracks=5)
    verdict = is_eager(run.trace)
    assert not verdict.eager and verdict.instant is not None and verdict.idle_tracks > 0
    assert is_eager(sl.simulate(WORKLOADS / "golab-table2.yaml", "max-benefit", horizon=2000).trace).eager
