"""Bateni et al.'s experiments (X1-X5, the optimum's frontier), their generators and verdicts:
the generators' invariants, every sweep's quick grid run locally with sane values, and the
acceptance checks 1-14 and the errata as verdict rows."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

from staleness_lab.experiments import get_experiment
import staleness_lab as sl
from staleness_lab.errors import InputError
from staleness_lab.experiments.bateni import generators as gen
from staleness_lab.experiments.bateni import sweeps as bx
from staleness_lab.experiments.bateni import verdicts as checks
from staleness_lab.experiments.verdicts import COLUMNS
from staleness_lab.sweeps.named import PROFILES
from staleness_lab.theory.bateni.bounds import LOAD_LIMIT
from staleness_lab.viz import ratio_vs_bound, schedules_gantt

TOL = 1e-9


def on_grid(times: list[float]) -> bool:
    return all(abs(v * 100 - round(v * 100)) < 1e-6 for v in times)


def lengths(times: list[float]) -> np.ndarray:
    return np.diff(np.concatenate([[0.0], times]))


# -- generators -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", gen.KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_arrivals_are_on_the_grid_and_strictly_increasing(kind: str, seed: int) -> None:
    times = gen.arrivals(kind, 40, np.random.default_rng(seed), scale=1.0)
    assert len(times) == 40 and times[0] > 0
    assert on_grid(times)
    assert (np.diff(times) > 0).all()


@pytest.mark.parametrize("b", [0.5, 1.0, 60.0, 1440.0])
def test_quasiperiodic_lengths_first_included_lie_in_half_b_to_b(b: float) -> None:
    times = gen.arrivals("quasiperiodic", 50, np.random.default_rng(3), scale=b)
    length = lengths(times)
    assert (length >= b / 2 - TOL).all() and (length <= b + TOL).all()
    groups, ranges = gen.quasiperiodic_groups([3, 2], [b, 4 * b], 20, np.random.default_rng(4))
    everything = [t for table in groups for t in table]
    assert len(set(everything)) == len(everything)  # distinct releases across tables (Sec. 4)
    for table, (low, high) in zip(groups, ranges):
        assert on_grid(table)
        assert (lengths(table) >= low - TOL).all() and (lengths(table) <= high + TOL).all()
    assert ranges == [(b / 2, b)] * 3 + [(2 * b, 4 * b)] * 2


def test_bad_kind_and_tiny_b_are_input_errors() -> None:
    with pytest.raises(InputError, match="kind"):
        gen.arrivals("weekly", 3, np.random.default_rng(0))
    with pytest.raises(InputError, match="B"):
        gen.arrivals("quasiperiodic", 3, np.random.default_rng(0), scale=0.01)


@pytest.mark.parametrize("mode", gen.ALPHA_MODES)
def test_alphas_hit_the_load(mode: str) -> None:
    rng = np.random.default_rng(5)
    for t, p, x in [(16, 1, 0.05), (8, 4, 0.36), (3, 1, 0.5), (4, 4, 1.2)]:
        alphas = gen.alphas(t, p, x, mode, rng, decimals=6 if t != 3 else 4)
        assert len(alphas) == t and max(alphas) == alphas[0]
        assert alphas[0] * t / p == pytest.approx(x, abs=1e-3)
        assert all(0 < a <= alphas[0] for a in alphas)
        if mode == "equal":
            assert len(set(alphas)) == 1
    assert gen.alphas(16, 1, 0.36, "equal", rng, decimals=6)[0] * 16 < LOAD_LIMIT  # x = .36 stays inside Theorem 3.1


def test_instances_are_seeded_and_share_releases_across_loads() -> None:
    a = gen.instance("bursty", 4, 2, 6, 0.3, "uniform", seed=9)
    assert a == gen.instance("bursty", 4, 2, 6, 0.3, "uniform", seed=9)
    b = gen.instance("bursty", 4, 2, 6, 1.2, "equal", seed=9)
    assert [t["arrivals"] for t in a["tables"]] == [t["arrivals"] for t in b["tables"]]  # common random numbers
    assert [t["arrivals"] for t in a["tables"]] != [t["arrivals"] for t in gen.instance("bursty", 4, 2, 6, 0.3, "uniform", 10)["tables"]]
    w = sl.parse_workload(a)
    assert w.tracks == 2 and all(t.alpha == 0 for t in w.tables)  # a Bateni table: alpha 0, beta alpha_i
    with pytest.raises(InputError, match="p"):
        gen.instance("poisson", 2, 3, 4, 0.3, "equal", 0)


def test_zipf_weights_and_the_e3_e4_shapes() -> None:
    weights = gen.zipf_weights(4, np.random.default_rng(1))
    assert sorted(weights) == [0.25, 0.3333, 0.5, 1.0]
    e3 = gen.e3_style(np.random.default_rng(2))
    (first, second), = [t["arrivals"] for t in e3["tables"]]
    assert 5 <= first <= 20 and 0.01 <= round(second - first, 2) <= 0.1
    e4 = sl.parse_workload(gen.e4_style(np.random.default_rng(2)))
    assert e4.tracks == 1 and [t.beta for t in e4.tables] == [1 / 40, 1 / 40]


def test_mutation_keeps_the_instance_valid() -> None:
    rng = np.random.default_rng(0)
    data = gen.instance("poisson", 3, 1, 4, 0.3, "uniform", 0)
    for _ in range(200):
        data = bx.mutate(data, rng, alpha_cap=0.1)
        for table in data["tables"]:
            assert on_grid(table["arrivals"]) and (np.diff(table["arrivals"]) > 0).all() and table["arrivals"][0] > 0
            assert 0 < table["beta"] <= 0.1
    sl.parse_workload(data)


# -- the sweeps -------------------------------------------------------------------------------------


def test_every_sweep_has_a_grid_per_profile_and_the_standard_sizes() -> None:
    for name, sweep in bx.SWEEPS.items():
        exp = get_experiment(sweep.experiment)
        sizes = []
        for profile in PROFILES:
            rows = bx.grid(name, profile)
            for row in rows:
                exp.complete(row)
            sizes.append(len(rows))
        assert 0 < sizes[0] <= sizes[1] <= sizes[2], name
    assert len(bx.grid("x1", "standard")) >= 400
    assert len(bx.grid("x1", "full")) == 10 * len(bx.grid("x1", "standard"))
    optima = (len(bx.grid("x2", "standard")) + len(bx.grid("x5", "standard"))
              + sum(r["steps"] + 1 for r in bx.grid("x3", "standard") if r["objective"] == "alg-opt"))
    assert optima >= 300  # before the frontier's
    goals = {(r["t"], r["n"], r["p"], r["x"]) for r in bx.grid("x2", "standard")}
    assert set(bx.X2_GOALS) <= goals
    assert any(r["p"] == r["t"] for r in bx.grid("x3", "standard"))  # lock waits (A1)
    with pytest.raises(InputError, match="profile"):
        bx.grid("x1", "huge")


@pytest.fixture(scope="module")
def quick() -> dict[str, pd.DataFrame]:
    return {name: sweep.run("quick", runner="local", cache_dir=None) for name, sweep in bx.SWEEPS.items()}


def test_x1_quick(quick: dict[str, pd.DataFrame]) -> None:
    x1 = quick["x1"]
    assert {"policy", "penalty_low", "X_low2", "S_star_low2", "R_star", "holds", "eager", "claim_3_5"} <= set(x1.columns)
    assert set(x1["policy"]) == set(bx.POLICIES)
    assert x1["sandwich"].all()
    assert (x1["X_low2"] >= 1 - TOL).all()
    assert (x1["S_star_low2"] >= x1["X_low2"] - TOL).all() and (x1["penalty_low"] >= x1["S_star_low2"] - TOL).all()
    eager = x1[x1["eager_policy"]]
    assert eager["eager"].all()
    inside = eager[eager["in_range"]]
    assert len(inside) and (inside["penalty_low"] <= inside["R_star"]).all() and (inside["holds"] == True).all()  # noqa: E712
    outside = x1[~x1["in_range"]]
    assert outside["R_star"].isna().all() and outside["holds"].isna().all()  # not decided (correction 2)
    assert not x1.loc[~x1["eager_policy"], "eager"].all()  # the baselines idle


def test_x2_quick_opt_lies_between_low_and_every_policy(quick: dict[str, pd.DataFrame]) -> None:
    x2 = quick["x2"]
    proven = x2[x2["opt_status"] == "optimal"]
    assert len(proven) == len(x2) and proven["opt_exact"].all()
    assert (proven["ratio"] >= 1 - TOL).all() and (proven["opt_low2"] >= 1 - TOL).all()
    assert proven["attains_opt"].notna().all()
    summary = checks.alg_opt_summary(x2)
    assert list(summary["policy"]) == [*bx.POLICIES, "any eager"]
    assert (summary["share_optimal"].between(0, 1)).all()


def test_x3_quick_finds_no_breaker(quick: dict[str, pd.DataFrame]) -> None:
    x3 = quick["x3"]
    assert list(x3["objective"]) == ["penalty", "alg-opt"]
    assert not x3["broken"].any() and (x3["saved"] == "").all()
    assert (x3["best_fitness"] >= 0).all() and (x3["best_score"] >= 1 - TOL).all()
    assert x3.loc[x3["objective"] == "alg-opt", "optima"].tolist() == [4]
    sl.parse_workload({"tracks": 1, "horizon": 1, "tables": json.loads(x3["instance"].iloc[0])})


def test_x4_quick_stretch_within_the_derived_bound(quick: dict[str, pd.DataFrame]) -> None:
    x4 = quick["x4"]
    gar = x4[x4["policy"] == bx.GROUP_AND_RUN]
    assert dict(zip(gar["kind"], gar["status"]))["e3"] == "refused"
    assert dict(zip(gar["kind"], gar["status"]))["e4"] == "infeasible"
    met = gar[gar["preconditions_met"] == True]  # noqa: E712
    assert len(met) and (met["max_stretch"] <= met["derived_bound"] + TOL).all()
    assert (met["max_wait_B"] <= 1 / 6).all() and (met["max_theta_B"] <= 1 / 6).all() and met["wait_holds"].all()
    assert x4.loc[x4["kind"] == "e3", "max_stretch"].max() > 10  # E3-style: unbounded for any algorithm


def test_x5_quick_weighted(quick: dict[str, pd.DataFrame]) -> None:
    x5 = quick["x5"]
    assert list(x5["policy"]) == list(bx.X5_POLICIES)
    assert (x5["ratio"] >= 1 - TOL).all()
    gar = x5[x5["policy"] == bx.GROUP_AND_RUN].iloc[0]
    assert gar["preconditions_met"] and gar["X_w_wlow2"] <= gar["derived_factor"] <= 4.5


def test_frontier_quick_and_its_reading(quick: dict[str, pd.DataFrame]) -> None:
    front = quick["frontier"]
    assert front["proven"].dtype == bool and set(front["size"]) <= {t * n for t, n in bx.FRONTIER_LADDER}
    sizes = bx.frontier_sizes(front, bx.frontier_seeds("quick"))
    assert list(sizes.columns[:5]) == ["x", "p", "largest_t", "largest_n", "largest_size"]
    synthetic = pd.DataFrame({
        "x": 0.5, "p": 1, "t": [2] * 10 + [3] * 10 + [4] * 5, "n": [3] * 10 + [5] * 10 + [6] * 5,
        "proven": [True] * 10 + [True] * 9 + [False] + [False, False, True, True, True], "opt_wall_s": 0.1,
    }).assign(size=lambda f: f["t"] * f["n"])
    row = bx.frontier_sizes(synthetic, 10).iloc[0]
    assert (row["largest_t"], row["largest_n"]) == (3, 5)  # 9 of 10 at 3×5; 4×6 lost after its first half
    assert bx.frontier_needed(10) == 9 and bx.frontier_needed(2) == 2


def test_bad_parameters_name_themselves() -> None:
    with pytest.raises(InputError, match="p"):
        bx.x1(t=2, p=3, x=0.3, alphas="equal", kind="poisson", n=4, seed=0)
    with pytest.raises(InputError, match="kind"):
        bx.x1(t=2, p=1, x=0.3, alphas="equal", kind="daily", n=4, seed=0)
    with pytest.raises(InputError, match="objective"):
        bx.x3(objective="regret", policy="myopic", t=2, p=1, n=3, x=0.3, steps=1, seed=0, time_limit=1.0)
    with pytest.raises(InputError, match="policy"):
        bx.x3(objective="penalty", policy="threshold", t=2, p=1, n=3, x=0.3, steps=1, seed=0, time_limit=1.0)
    with pytest.raises(InputError, match="kind"):
        bx.x4(kind="e9", g=1, B=1.0, per_group=2, p=2, factor=1.0, n=4, seed=0)


def test_a_breaker_is_saved_as_a_loadable_workload(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bx, "FOUND_DIR", str(tmp_path))
    data = gen.instance("poisson", 2, 1, 3, 0.3, "uniform", 0)
    fake = bx.Scored(data, score=2.0, bound=1.0, preconditions_met=True, measured={})
    assert fake.broken and not bx.Scored(data, 2.0, math.nan, True, {}).broken
    assert not bx.Scored(data, 2.0, 1.0, False, {}).broken
    path = bx.save_breaker(fake, "penalty", "myopic", seed=4)
    assert path.endswith("bateni-found-penalty-myopic-t2-p1-s4.yaml")
    loaded = sl.load_workload(path)
    assert [list(t.arrivals) for t in loaded.tables] == [[(a, a) for a in t["arrivals"]] for t in data["tables"]]


# -- verdicts -----------------------------------------------------------------------------------------


LIVE = {"1", "2", "3", "5", "6", "8", "9", "10", "14"}


def test_verdicts_cover_checks_1_to_14_and_the_errata(quick: dict[str, pd.DataFrame]) -> None:
    table = checks.verdicts(quick, "quick")
    assert list(table.columns) == COLUMNS
    numbered = table[~table["check"].str.startswith("erratum")]
    assert list(numbered["check"]) == [str(k) for k in range(1, 15)]
    for row in numbered.itertuples():
        assert row.verdict == "holds", (row.check, row.detail)
        assert row.margin >= 0 or math.isnan(row.margin), row.check
        assert (row.profile == "live") == (row.check in LIVE)
    found = table[table["check"].str.startswith("erratum")]
    assert len(found) == 6
    for row in found.itertuples():
        assert row.verdict == "finding" and row.margin < 0, (row.check, row.detail)
    line = checks.summary_line(table, "quick")
    assert line == ("20 verdicts on Bateni et al. (checks 1-14 and the errata) at the quick profile: 14 hold, 0 differ, "
                    "0 undecided, 6 findings; findings: " + ", ".join(found["check"]))


def test_sweep_checks_are_undecided_without_their_sweep() -> None:
    for row in (checks.check7(None, None, "quick"), checks.check11(None, "quick"), checks.check12(None, "quick")):
        assert row["verdict"] == "undecided" and "not computable" in row["detail"]


def test_erratum_values() -> None:
    e4 = checks.erratum_e4()
    assert "1.12452" in e4["detail"] and "26.125" in e4["detail"]
    smith = checks.erratum_smith()
    assert "MYOPIC X = 6.16" in smith["detail"] and "largest-first X = 5.965" in smith["detail"]
    e2 = checks.erratum_e2()
    assert "X = 127.2775" in e2["detail"] and "131.7275" in e2["detail"]


def test_trace_violations_catch_a_broken_trace() -> None:
    report = sl.check(checks.example("e1"), "myopic")
    assert checks.trace_violations(report.trace) == [] and checks.identity_errors(report.trace) == []
    # the same jobs judged against alpha_1 = 1/4 and a release at 5.2: durations are wrong, and the
    # second batch (started at 6) no longer holds every update released by its start
    other = sl.parse_workload({"tracks": 1, "horizon": 10, "tables": [
        {"name": "a", "arrivals": [4, 5, 5.5, 5.9], "alpha": 0, "beta": 0.25, "priority": 1}]})
    found = checks.trace_violations(dataclasses.replace(report.trace, workload=other))
    assert any("alpha_i·b" in v for v in found)
    assert any("every update released by its start" in v for v in found)


# -- figures -----------------------------------------------------------------------------------------


def test_figures() -> None:
    e2 = checks.example("e2")
    best = bx.solve(e2.to_dict(), 10.0)
    fig = schedules_gantt({"eager": sl.simulate(e2, "myopic").jobs, "optimal": best.batches}, title="E2")
    assert {trace.name for trace in fig.data} == {"A", "B"}
    assert list(fig.layout.yaxis.categoryarray) == ["eager · track 0", "optimal · track 0"]
    frame = pd.DataFrame({"x": [0.1, 0.1, 0.5], "ratio": [1.1, 1.2, 2.0], "bound": [7.0, math.inf, math.inf],
                          "policy": ["a", "b", "a"]})
    fig = ratio_vs_bound(frame, "x", "ratio", color="policy", bound="bound", lines={"three": 3.0}, title="t",
                         y_title="r")
    line = [t for t in fig.data if t.name.startswith("bound")][0]
    assert list(line.y[:1]) == [7.0] and math.isnan(line.y[1])
