"""Chandrasekaran & Sudarshan's experiments and verdicts: rows, grids, the worked-example checks."""

from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd
import pytest

from staleness_lab.errors import InputError
from staleness_lab.experiments import get_experiment
from staleness_lab.experiments.intermittent import sweeps as ix
from staleness_lab.experiments.intermittent import verdicts as checks
from staleness_lab.sweeps.named import PROFILES
from staleness_lab.sweeps.runner import run_grid


def test_every_figure_has_a_grid_at_every_profile() -> None:
    for name, fig in ix.SWEEPS.items():
        exp = get_experiment(fig.experiment)
        sizes = []
        for profile in PROFILES:
            rows = ix.grid(name, profile)
            assert rows, (name, profile)
            for row in rows:
                exp.complete(row)  # every row is a valid parameter row
            sizes.append(len(rows))
        assert sizes[0] <= sizes[1] <= sizes[2], name
    with pytest.raises(InputError, match="profile"):
        ix.grid("fig7", "huge")


def test_multi_instance_follows_a5_and_the_profiles() -> None:
    same = ix.multi_instance(0.4, "same", "FR", 0.5, seed=3)
    assert len(same.queries) == 13 and same.c_max == 30 and same.delta_rsf == Fraction(1, 2)
    assert {q.ws for q in same.queries} == {1}
    late = ix.multi_instance(0.4, "same", "VR3", 0.5, seed=3)
    assert [q.deadline for q in late.queries] == [q.deadline for q in same.queries]
    assert all(v.we > s.we for v, s in zip(late.queries, same.queries))
    spread = ix.multi_instance(1.0, "random", "FR", 0.5, seed=3)
    assert len({q.ws for q in spread.queries}) > 1
    assert ix.multi_instance(1.0, "random", "FR", 0.5, seed=3) == spread


def test_multi_rows_are_identical_run_to_run_and_sound() -> None:
    first = ix.multi(policy="llf", minbatch=True, rho=0.4, windows="same", profile="VR2", delta_rsf=0.5, seed=1,
                     costmodels="")
    again = ix.multi(policy="llf", minbatch=True, rho=0.4, windows="same", profile="VR2", delta_rsf=0.5, seed=1,
                     costmodels="")
    pd.testing.assert_frame_equal(first, again)
    assert first.iloc[0]["status"] == "ok" and first.iloc[0]["plan_violations"] == 0
    # C5 at a fixed rate: every batch but the last holds exactly MinBatch, so the total stays
    # within (1 + δRSF)·Cost(N) per query (no query of the synthetic set is capped by C_max)
    fixed = ix.multi(policy="llf", minbatch=True, rho=0.4, windows="same", profile="FR", delta_rsf=0.5, seed=1,
                     costmodels="").iloc[0]
    assert 1.0 < fixed["normalized_cost"] <= 1.5


def test_multi_rejects_bad_parameters() -> None:
    with pytest.raises(InputError, match="policy"):
        ix.multi(policy="fifo", minbatch=True, rho=1.0, windows="same", profile="FR", delta_rsf=0.5, seed=0,
                 costmodels="")
    with pytest.raises(InputError, match="rho"):
        ix.multi(policy="edf", minbatch=True, rho=0.0, windows="same", profile="FR", delta_rsf=0.5, seed=0,
                 costmodels="")
    with pytest.raises(InputError, match="costmodels"):
        ix.paper_queries("/no/such/dir")


def test_fig6_and_alg1_loss_rows() -> None:
    row = ix.fig6(query="Q1", f=0.5, scheme="algorithm1", costmodels="", deterministic_time=1.0).iloc[0]
    assert row["status"] == "ok" and row["misses"] == 0 and row["batches"] >= 2
    loss = pd.concat([ix.alg1_loss(seed=s, n_max=12, cost_kind="linear") for s in range(20)], ignore_index=True)
    assert (loss["alg1_violations"] == 0).all() and (loss["exact_violations"] == 0).all()
    ok = loss[(loss["alg1_status"] == "ok") & (loss["exact_status"] == "ok")]
    assert (ok["excess"] >= -1e-12).all()
    assert not ((loss["exact_status"] == "infeasible") & (loss["alg1_status"] == "ok")).any()


def test_optimum_rows_judge_the_heuristics() -> None:
    frame = ix.optimum(n_queries=2, N=10, rho=0.4, seed=0, deterministic_time=1.0)
    assert list(frame["scheme"]) == list(ix.POLICIES)
    assert (frame["opt_violations"] == 0).all()
    proven = frame[frame["opt_status"] == "optimal"]
    assert ((proven["opt_misses"] < proven["misses"])
            | ((proven["opt_misses"] == proven["misses"]) & (proven["opt_cost"] <= proven["total_cost"] + 1e-9))).all()


def test_quick_grids_run_locally_and_their_verdicts_compute() -> None:
    frames = {name: run_grid(ix.SWEEPS[name].experiment, ix.grid(name, "quick"), runner="local", cache_dir=None,
                             progress=False) for name in ("fig7", "fig10", "alg1-loss")}
    priced = {ix.SYNTHETIC_READING: {name: frames.pop(name) for name in ("fig7", "fig10")}}
    table = checks.sweep_checks(frames, "quick", priced)
    by_check = table.set_index("check")
    assert by_check.loc["9", "verdict"] == "holds"
    assert by_check.loc["8 (synthetic costs)", "verdict"] == "holds", by_check.loc["8 (synthetic costs)", "detail"]
    assert checks.check8()["verdict"] == "undecided"  # the paper-scale part needs the Fig. 7 sweep
    assert by_check.loc["fig6a (synthetic costs)", "verdict"] == "undecided"  # not run here
    assert by_check.loc["alg1", "verdict"] in ("holds", "finding"), by_check.loc["alg1", "detail"]
    for name in ("fig7", "fig10", "fig10-batches"):  # judged on measured fits only (not run here)
        row = by_check.loc[f"{name} (synthetic costs)"]
        assert (row["verdict"], row["reason"], row["reading"]) == ("undecided", "synthetic costs", "synthetic costs")
        assert "the measured fits' row judges them" in row["detail"]
    assert "synthetic" in by_check.loc["fig7 (synthetic costs)", "detail"]
    assert checks.summary_line(table, "quick").startswith("")


@pytest.mark.parametrize("check", [checks.check1, checks.check2, checks.check3, checks.check5, checks.check6,
                                   checks.check7])
def test_the_worked_examples_hold(check) -> None:
    row = check()
    assert row["verdict"] == "holds", row["detail"]
    assert row["margin"] == 0.0 or math.isnan(row["margin"]) or row["margin"] >= 0


def test_cp_sat_checks_hold() -> None:
    for row in (checks.check4(instances=10), checks.check10()):
        assert row["verdict"] == "holds", row["detail"]


def test_slow_profiles_add_a_few_batches_not_thousands() -> None:
    """Fig. 10's 410 batches under VR4 against 329 under FR: the time trigger runs a late MinBatch
    with what has arrived, then waits a MinBatch's worth of nominal arrivals again."""
    batches = {profile: int(ix.multi(policy="edf", minbatch=True, rho=0.1, windows="same", profile=profile,
                                     delta_rsf=1.0, seed=0, costmodels="")["batches"].iloc[0])
               for profile in ("FR", "VR3", "VR4")}
    for profile in ("VR3", "VR4"):
        assert batches["FR"] < batches[profile] < 1.3 * batches["FR"], batches


# -- the figures' verdicts on hand-made frames -------------------------------------------------------


def fig8_frame(plain_late: dict[str, set[float]], minbatch_late: set[float] = frozenset({0.1})) -> pd.DataFrame:
    """One seed of Fig. 8's grid: EDF and LLF, with and without MinBatch, at every factor; a run
    misses where given; no MinBatch costs 12x (past both of the paper's ratios)."""
    rows = []
    for policy in ("edf", "llf"):
        for minbatch in (True, False):
            for rho in (1.0, *ix.FIG7_RHOS):
                late = rho in (minbatch_late if minbatch else plain_late[policy])
                rows.append({"policy": policy, "minbatch": minbatch, "rho": rho, "seed": 0, "misses": int(late),
                             "total_cost": 100.0 if minbatch else 1200.0})
    return pd.DataFrame(rows)


def test_fig8_judges_every_deadline_factor() -> None:
    paper = {"edf": {0.4, 0.2, 0.1}, "llf": {0.4, 0.2, 0.1}}
    row = checks.fig8_check(fig8_frame(paper), "t", synthetic=False)
    assert row["verdict"] == "holds" and row["margin"] == 0.0, row["detail"]
    early = checks.fig8_check(fig8_frame({"edf": {0.8, 0.6, 0.4, 0.2, 0.1}, "llf": paper["llf"]}), "t")
    assert early["verdict"] == "differs" and early["margin"] == -2.0  # 0.8 and 0.6 under EDF
    assert "also above 0.4D, at 0.8, 0.6" in early["detail"] and "ρ run: 1, 0.8, 0.6, 0.4, 0.2, 0.1" in early["detail"]
    late = checks.fig8_check(fig8_frame({"edf": {0.2, 0.1}, "llf": paper["llf"]}), "t")
    assert late["verdict"] == "differs" and "(not at 0.4)" in late["detail"]
    minbatch = checks.fig8_check(fig8_frame(paper, {0.2, 0.1}), "t")
    assert minbatch["verdict"] == "differs" and minbatch["margin"] == -2.0  # EDF and LLF with MinBatch at 0.2


def vr_frame(column: str, values: dict[str, float], status: str = "ok") -> pd.DataFrame:
    return pd.DataFrame([{"policy": policy, "profile": profile, "seed": 0, "status": status, "misses": 0,
                          "normalized_cost": 2.0, column: value}
                         for policy in ("llf", "edf", "sjf", "rr") for profile, value in values.items()])


def test_fig10_batches_and_fig11_last_files_are_verdicts_with_numbers() -> None:
    more = checks.vr_number_check("fig10-batches", vr_frame("batches", {"FR": 329, "VR4": 410}), "t", synthetic=False)
    assert more["verdict"] == "holds" and more["margin"] == pytest.approx(410 / 329 - 1)
    assert "410 under VR4 against 329 under FR (×1.25)" in more["detail"] and "rate curves are ours" in more["detail"]
    fewer = checks.vr_number_check("fig10-batches", vr_frame("batches", {"FR": 329, "VR4": 300}), "t", synthetic=False)
    assert fewer["verdict"] == "differs" and fewer["margin"] < 0
    last = checks.vr_number_check("fig11-last", vr_frame("last_batch_files", {"FR": 5620, "VR4": 832}), "t",
                                  synthetic=False)
    assert last["verdict"] == "holds" and "5,620 against 832 (×6.75)" in last["detail"]
    synthetic = checks.vr_number_check("fig11-last", vr_frame("last_batch_files", {"FR": 5620, "VR4": 832}), "t")
    assert (synthetic["verdict"], synthetic["reason"]) == ("undecided", "synthetic costs")
    assert "would hold" in synthetic["detail"] and "the measured fits' row judges them" in synthetic["detail"]
    failed = checks.vr_number_check("fig10-batches", vr_frame("batches", {"FR": 1, "VR4": 2}, status="no-plan"), "t")
    assert (failed["verdict"], failed["reason"]) == ("undecided", "scale")
    assert checks.vr_number_check("fig11-last", None, "t")["reason"] == "scale"


def test_figs_7_10_11_are_undecided_on_synthetic_costs_and_judged_on_fits() -> None:
    frame = vr_frame("batches", {rate: 300 for rate in ix.RATE_PROFILES}).assign(
        misses=lambda f: ((f["policy"].isin(["sjf", "rr"])) & f["profile"].isin(["FR", "VR3", "VR4"])).astype(int))
    fits = checks.profile_check("fig10", frame, "t", synthetic=False)
    assert fits["verdict"] == "holds", fits["detail"]
    assert "rate curves are ours" in fits["detail"]
    synthetic = checks.profile_check("fig10", frame, "t")
    assert (synthetic["verdict"], synthetic["reason"]) == ("undecided", "synthetic costs")
    fig7 = pd.DataFrame([{"policy": p, "rho": rho, "windows": "same", "seed": 0, "normalized_cost": 1.5,
                          "misses": int(rho in checks.PAPER_FIG7[p])} for p in checks.PAPER_FIG7 for rho in ix.FIG7_RHOS])
    assert checks.fig7_check(fig7, "t", synthetic=False)["verdict"] == "holds"
    assert checks.fig7_check(fig7, "t")["reason"] == "synthetic costs"


def loss_frame(rows: list[tuple[str, float, float, bool]]) -> pd.DataFrame:
    """(cost kind, R, Algorithm 1's excess, false no-plan) per draw."""
    return pd.DataFrame([{"cost_kind": kind, "R": r, "excess": excess, "false_no_plan": false}
                         for kind, r, excess, false in rows])


def test_alg1_loss_in_the_papers_regime_beside_the_wider_draw() -> None:
    frame = loss_frame([("linear", 0.4, 0.0, False), ("linear", 0.9, 0.0, False), ("linear", 1.2, 0.5, False),
                        ("linear", 1.4, math.nan, True), ("concave", math.nan, 0.3, False)])
    summary = checks.loss_summary(frame).set_index("cost_kind")
    assert summary.loc["linear", ["instances", "costlier", "false_no_plan"]].tolist() == [4, 1, 1]
    assert summary.loc[checks.LINEAR_REGIME, ["instances", "costlier", "false_no_plan"]].tolist() == [2, 0, 0]
    wide, regime = checks.alg1_loss_check(frame, "t"), checks.alg1_loss_check(frame, "t", regime=True)
    assert (wide["verdict"], wide["margin"]) == ("finding", -2.0)
    assert (regime["check"], regime["verdict"], regime["margin"]) == ("alg1-regime", "holds", 0.0)
    lost = loss_frame([("linear", 0.4, 0.5, False)])
    assert checks.alg1_loss_check(lost, "t", regime=True)["verdict"] == "finding"
    none = checks.alg1_loss_check(loss_frame([("linear", 1.2, 0.0, False)]), "t", regime=True)
    assert (none["verdict"], none["reason"]) == ("undecided", "scale")


# -- Fig. 6: Algorithm 1 beside the exact optimum at the paper's scale ----------------------------


def test_fig6_grid_runs_the_exact_optimum_beside_algorithm1() -> None:
    rows = ix.grid("fig6", "quick")
    cases = {(r["query"], r["f"]) for r in rows}
    assert sorted((r["query"], r["f"], r["scheme"]) for r in rows) == sorted(
        (q, f, s) for q, f in cases for s in ("algorithm1", "exact"))
    assert len(ix.grid("fig6", "standard")) == 2 * 13 * len(ix.FIG6_FACTORS)


def test_fig6_exact_row_is_sound_and_never_costlier_than_algorithm1() -> None:
    def row(scheme: str) -> pd.Series:
        return ix.fig6(query="Q3", f=0.1, scheme=scheme, costmodels="", deterministic_time=1.0).iloc[0]

    alg, best = row("algorithm1"), row("exact")
    assert best["status"] == "ok" and best["misses"] == 0 and best["plan_violations"] == 0
    assert best["total_cost"] < alg["total_cost"] and best["batches"] == 3


def fig6_frame(cases: list[tuple[str, float, str, float, str, float]]) -> pd.DataFrame:
    """(query, f, Algorithm 1's status, its cost, the optimum's status, its cost) per case."""
    rows = []
    for query, f, a_status, a_cost, o_status, o_cost in cases:
        rows.append({"query": query, "f": f, "scheme": "algorithm1", "status": a_status, "total_cost": a_cost,
                     "batches": 2})
        rows.append({"query": query, "f": f, "scheme": "exact", "status": o_status, "total_cost": o_cost,
                     "batches": 2})
    return pd.DataFrame(rows)


def test_fig6_against_optimum_and_the_paper_scale_loss() -> None:
    frame = fig6_frame([("Q1", 1.0, "ok", 10.0, "ok", 10.0), ("Q1", 0.1, "ok", 11.0, "ok", 10.0),
                        ("Q3", 1.0, "ok", 20.0, "ok", 16.0), ("Q3", 0.1, "no-plan", math.nan, "ok", 18.0)])
    versus = checks.fig6_against_optimum(frame)
    assert versus.loc[("Q1", 0.1), "loss_ratio"] == pytest.approx(1.1)
    assert versus["costlier"].tolist() == [True, False, False, True]   # sorted: (Q1, .1), (Q1, 1), (Q3, .1), (Q3, 1)
    assert versus["false_no_plan"].tolist() == [False, False, True, False]
    assert math.isnan(versus.loc[("Q3", 0.1), "loss_ratio"])
    big = checks.paper_scale_loss(versus).iloc[0]
    assert (big["cost_kind"], big["instances"], big["costlier"], big["false_no_plan"]) == (checks.PAPER_SCALE, 4, 2, 1)
    assert (big["median_ratio"], big["max_ratio"], big["max_excess"]) == (pytest.approx(1.175), 1.25, 4.0)
    loss = loss_frame([("linear", 0.4, 0.0, False), ("linear", 1.2, 0.5, False)])
    row = checks.alg1_loss_check(loss, "t", paper_scale={ix.SYNTHETIC_READING: frame})
    plain = checks.alg1_loss_check(loss, "t")
    assert (row["verdict"], row["margin"]) == (plain["verdict"], plain["margin"]) == ("finding", -1.0)
    assert row["detail"].startswith(plain["detail"])
    assert "paper scale (Fig. 6, N = 4500): costlier in 2 of 4 cases (loss ratio median 1.1750, max 1.2500" in row["detail"]
    assert "false no-plan 1; never costlier on none" in row["detail"]
    # a Fig. 6 sweep without the optimum adds nothing; the regime row never takes it
    assert checks.alg1_loss_check(loss, "t", paper_scale={ix.SYNTHETIC_READING: frame[frame["scheme"] == "algorithm1"]})["detail"] == plain["detail"]
    assert "paper scale" not in checks.alg1_loss_check(loss, "t", regime=True, paper_scale={ix.SYNTHETIC_READING: frame})["detail"]
