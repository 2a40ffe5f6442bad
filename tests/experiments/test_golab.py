"""The Golab et al. figure experiments (``golab-fig4`` ... ``golab-fig11``) and their acceptance
checks, on the quick profile with the local runner.

Every figure's quick sweep runs once (a module fixture, about 15 s on one core); the structure
tests and the checks read it. Seeds are the quick profile's, 0, 1 and 2. The thresholds are the
spec digest's (its Sec. 7); where a check does not hold, the test says so and what was measured,
and pins the finding with a strict xfail, so a change that makes it hold is noticed.

Measured at the quick profile (seeds 0-2), and over three more seed sets (3-5, 6-8, 9-11) to
judge stability:

* check 8 (Fig. 7): slacks "MB below EDF and Random" 0.50-0.53, "half of EDF's excess"
  0.62-0.68 -- holds on every seed set.
* check 10 (Fig. 8): "none worst" 1.89-2.00, "Max <= Sum" 0.15-0.17, "Max within 5 % of the
  best" 0.066-0.067 (Max is the best mode) -- holds on every seed set.
* check 7 (Fig. 6): Proportional equals global Max Benefit (deviation 0, slack 0.05) and
  EDF-Partitioned is the worst where its packing is full (slack 0.08-0.10) on every seed set;
  "near ideal for U <= 0.9" fails on every seed set (worst 1.062-1.104 at U = 0.9 against 1.05;
  also at the standard profile: Random at 1.057) -- a finding; "bounded at U = 1.05" (second half within
  10 % of the first) is unstable at the quick horizon (one seed set of four at 1.13), so it is
  tested at the standard horizon, where the ratio is 1.02.
* check 13 (Fig. 11): chopping never worse than no chopping by 2 % (slack 0.007-0.021 over the
  seed sets); "at least 10 % less excess lateness at the top" swings between 6.5 % and 14 % at the
  quick horizon, so it is tested at the standard horizon, where it is 50-53 % on every seed set.
* check 14 (Fig. 4): S = 2 < 3 < 5 at every U >= 0.8 by 1.9-2.3 lateness units on every seed set
  (with slow periods that halve the tracks' work rate for every S; see the experiments' module).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from staleness_lab.api import simulate
from staleness_lab.experiments import get_experiment, list_experiments
from staleness_lab.experiments.golab.generators import identical_tables, offered_utilization
from staleness_lab.errors import InputError
from staleness_lab.experiments.golab import sweeps as golab
from staleness_lab.experiments.golab import verdicts as golab_checks
from staleness_lab.sweeps.named import PROFILES
from staleness_lab.sweeps.runner import ROW_COLUMN, run_grid

PROFILE = "quick"


@pytest.fixture(scope="module")
def quick() -> dict[str, pd.DataFrame]:
    """Every figure's quick sweep, local runner, no cache."""
    return {name: fig.run(PROFILE, runner="local") for name, fig in golab.SWEEPS.items()}


# -- grids and profiles (no simulation) ----------------------------------------------------------


def test_one_experiment_per_figure_registered() -> None:
    names = {e.name for e in list_experiments()}
    assert {f"golab-fig{k}" for k in range(4, 12)} <= names
    assert list(golab.SWEEPS) == [f"fig{k}" for k in range(4, 12)]
    assert golab.figure(4) is golab.figure("golab-fig4") is golab.figure("fig4")
    with pytest.raises(InputError, match="unknown figure"):
        golab.figure("fig3")


@pytest.mark.parametrize("name", list(golab.SWEEPS))
def test_grid_keeps_every_curve_and_point(name: str) -> None:
    fig = golab.figure(name)
    for profile in PROFILES:
        g = golab.grid(name, profile)
        assert list(g) == [fig.curve, "utilization", "seed", "fixed"]
        assert g[fig.curve] == list(fig.curves)
        assert len(g["seed"]) >= 3
        assert g["fixed"] == {"horizon": golab.horizon(name, profile)}
        get_experiment(fig.experiment).complete({**g["fixed"], fig.curve: fig.curves[0]})  # names and types
    # standard and full keep every point; quick keeps a few
    assert golab.grid(name, "standard")["utilization"] == golab.grid(name, "full")["utilization"] == golab.UTILIZATIONS[name]
    assert golab.grid(name, "quick")["utilization"] == golab.U_QUICK
    assert golab.horizon(name, "quick") < golab.horizon(name, "standard") < golab.horizon(name, "full")
    # the full profile is sized for the paper's 10^6 events per scheduled run
    assert golab.horizon(name, "full") * golab.SIZING[name][0] >= 1_000_000 + golab.N_TABLES


def test_events_per_point_and_profiles() -> None:
    assert golab.events_per_point("full") == 1_000_000
    assert golab.events_per_point("quick") < golab.events_per_point("standard") < golab.events_per_point("full")
    with pytest.raises(InputError, match="profile"):
        golab.events_per_point("huge")
    assert golab.points("standard") == golab.points("full")
    assert sum(golab.points("quick").values()) < sum(golab.points("standard").values())


def test_type2_slowdown_has_work_rate_multiplier_two() -> None:
    from staleness_lab.experiments.golab.generators import work_rate_multiplier

    for S in (2.0, 2.5, 3.0, 4.0, 5.0):
        assert work_rate_multiplier(golab.type2_slowdown(S)) == pytest.approx(2.0)
    sd = golab.type2_slowdown(3.0)
    assert (sd.factor, sd.normal, sd.slow) == (3.0, 1000.0, 3000.0)
    assert golab.type2_slowdown(2.0).normal == 0  # slow all the time
    assert golab.type2_slowdown(1.0) is None
    with pytest.raises(InputError, match="S"):
        golab.type2_slowdown(1.5)


@pytest.mark.parametrize("S", [2.5, 3.0, 5.0])
def test_saturated_tracks_do_half_their_nominal_work_for_every_S(S: float) -> None:
    """The calibration measured on the engine, not only by formula. Jobs of a fixed nominal cost
    10 (beta = 0), short against the slow and normal periods, offered at 1.25x what the tracks
    do even in normal periods, so they are busy all the time: the cost the engine charged is
    then twice the nominal cost of the jobs it ran, whatever S (jobs keep the multiplier of
    their start, so fewer jobs than the share of slow time run slow)."""
    w = identical_tables(golab.N_TABLES, period=60.0, alpha=10.0, beta=0.0, tracks=golab.TRACKS,
                         horizon=60_000.0, seed=0, slowdown=golab.type2_slowdown(S))
    assert offered_utilization(w) == pytest.approx(2.5)
    cols = simulate(w, "max-benefit").trace.columns
    assert cols["cost"].sum() / (w.tracks * w.horizon) > 0.99  # saturated
    assert cols["cost"].sum() / (10.0 * len(cols["cost"])) == pytest.approx(2.0, rel=0.02)


# -- the quick sweeps --------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(golab.SWEEPS))
def test_quick_sweep_columns_and_curves(quick: dict[str, pd.DataFrame], name: str) -> None:
    fig = golab.figure(name)
    frame = quick[name]
    params = [p.name for p in get_experiment(fig.experiment).params]
    assert list(frame.columns) == [*params, ROW_COLUMN, *golab.OBSERVATIONS]
    assert {"utilization", "seed", "horizon", fig.curve} <= set(params)
    assert list(pd.unique(frame[fig.curve])) == list(fig.curves)
    assert sorted(set(frame["utilization"])) == golab.U_QUICK
    assert sorted(set(frame["seed"])) == [0, 1, 2]
    assert set(frame["horizon"]) == {golab.horizon(name, PROFILE)}
    assert len(frame) == golab.points(PROFILE)[name]
    assert set(frame["status"]) <= {"ok", "infeasible"}
    ok = frame[frame["status"] == "ok"]
    # the x-axis is the offered utilization the point was scaled to
    np.testing.assert_allclose(frame["offered_utilization"], frame["utilization"], rtol=1e-9)
    assert ok["relative_lateness"].notna().all() and (ok["relative_lateness"] > 0.9).all()
    assert (ok["events"] >= golab.events_per_point(PROFILE)).all()  # the horizon meets the target
    assert (ok["ideal_events"] > 0).all() and (ok["reason"] == "").all()
    # the two halves add up to the whole run's weighted staleness
    np.testing.assert_allclose(ok["staleness_first_half"] + ok["staleness_second_half"], ok["weighted_staleness"],
                               rtol=1e-9)
    np.testing.assert_allclose(ok["relative_lateness"], ok["weighted_staleness"] / ok["ideal_weighted_staleness"],
                               rtol=1e-12)


def test_infeasible_partitioned_point_is_a_gap(quick: dict[str, pd.DataFrame]) -> None:
    # Fig. 6, 30 identical tables on N = 5: above U = 6/7 the EDF packing needs a sixth track.
    frame = quick["fig6"]
    part = frame[frame["policy"] == "edf-partitioned"]
    bad = part[part["utilization"] > 6 / 7]
    assert len(bad) == 9 and set(bad["utilization"]) == {0.9, 1.05, 1.2}
    assert (bad["status"] == "infeasible").all()
    assert bad["relative_lateness"].isna().all() and bad["weighted_staleness"].isna().all()
    assert bad["reason"].str.contains(r"needs [678] tracks .* has 5$", regex=True).all()
    assert (bad["events"] == 0).all()
    assert (part[part["utilization"] < 6 / 7]["status"] == "ok").all()
    assert (frame[frame["policy"] != "edf-partitioned"]["status"] == "ok").all()
    # the same row straight from the experiment
    row = golab.fig6("edf-partitioned", 1.05, 0, 5_000.0, 5)
    assert row["status"].tolist() == ["infeasible"] and math.isnan(row["relative_lateness"].iloc[0])
    # the mean over seeds stays missing (a chart shows a gap there, not a zero)
    table = golab.summarize(frame, "fig6")
    assert table.loc[[0.9, 1.05, 1.2], "edf-partitioned"].isna().all()
    assert table.loc[[0.6, 0.8], "edf-partitioned"].notna().all()


# -- acceptance checks 7, 8, 10, 13 --------------------------------------------------------------


def test_check8_prioritized_max_benefit_beats_edf_and_random(quick: dict[str, pd.DataFrame]) -> None:
    m = golab_checks.measure8(quick["fig7"])
    assert m.holds, m.detail
    # measured 0.51 and 0.62 here (0.50-0.68 over four seed sets): far from the thresholds
    assert m.parts["mb_below"] > 0.3 and m.parts["half_of_edf"] > 0.3
    row = golab_checks.sweep_check(8, quick["fig7"], PROFILE)
    assert row["verdict"] == "holds" and row["profile"] == PROFILE and row["margin"] == pytest.approx(m.margin)


def test_check10_inheritance(quick: dict[str, pd.DataFrame]) -> None:
    m = golab_checks.measure10(quick["fig8"])
    assert m.holds, m.detail
    # Max is the best mode here, so its 5 % allowance is the slack (0.066); None is far worst (1.9)
    assert m.parts["none_worst"] > 1.0 and m.parts["max_below_sum"] > 0.05
    table = golab.summarize(quick["fig8"], "fig8")
    assert table.loc[1.2].idxmin() == "max"


def test_check7_parts_that_hold(quick: dict[str, pd.DataFrame]) -> None:
    m = golab_checks.measure7(quick["fig6"])
    assert m.part_holds("proportional"), m.detail  # identical jobs: one cluster on all tracks = global
    assert m.part_holds("partitioned_worst"), m.detail  # slack 0.09 here
    assert m.parts["partitioned_worst"] > 0.03


def test_check7_bounded_above_full_load_at_standard_horizon() -> None:
    # At U = 1.05 (no slowdown) Max Benefit's staleness must not keep growing: the second half of
    # the run within 10 % of the first. The quick horizon is too short for this to be stable over
    # seeds; at the standard horizon (3 seeds, ~1 s) the ratio is 1.02.
    frame = run_grid("golab-fig6", {"policy": ["max-benefit"], "utilization": [1.05], "seed": [0, 1, 2],
                                    "fixed": {"horizon": golab.horizon("fig6", "standard")}}, cache_dir=None, progress=False)
    ratio = float((frame["staleness_second_half"] / frame["staleness_first_half"]).mean())
    assert abs(ratio - 1.0) <= 0.10


@pytest.mark.xfail(strict=True, reason="finding: at U = 0.9 (no slowdown, b = 0.5) every scheduler is ~1.06-1.10 "
                                        "x ideal, above the digest's 1.05, at the quick and standard profiles")
def test_check7_holds(quick: dict[str, pd.DataFrame]) -> None:
    assert golab_checks.measure7(quick["fig6"]).holds


def test_check13_chopping_never_worse(quick: dict[str, pd.DataFrame]) -> None:
    m = golab_checks.measure13(quick["fig11"])
    assert m.part_holds("never_worse"), m.detail  # slack 0.021 here, 0.007-0.021 over four seed sets
    table = golab.summarize(quick["fig11"], "fig11")
    assert table.loc[1.2, "chopping"] < table.loc[1.2, "no chopping"]  # it does help at the top


def test_check13_chopping_cuts_excess_lateness_at_the_top() -> None:
    # The "at least 10 % less excess lateness at the top of the sweep" part, at the standard
    # horizon: at the quick one (14 000) it swings between 6.5 % and 14 % over seed sets, at the
    # standard one (201 000, 3 seeds, ~3 s) it is 50-53 % on each of four seed sets. Above
    # U = 1.1 the tracks cannot keep up even with merged jobs, so both curves grow with the
    # horizon; chopping grows about half as fast.
    frame = run_grid("golab-fig11", {"variant": ["no chopping", "chopping"], "utilization": [1.2], "seed": [0, 1, 2],
                                     "fixed": {"horizon": golab.horizon("fig11", "standard")}}, cache_dir=None, progress=False)
    excess = frame.groupby("variant")["relative_lateness"].mean() - 1.0
    assert excess["chopping"] <= 0.9 * excess["no chopping"]
    assert excess["chopping"] <= 0.6 * excess["no chopping"]  # measured 0.47-0.50: far from the threshold


def test_check14_harsher_slowdowns_cost_more(quick: dict[str, pd.DataFrame]) -> None:
    m = golab_checks.measure14(quick["fig4"])
    assert m.holds, m.detail
    assert min(m.parts.values()) > 1.0  # measured 2.3 here, 1.9-2.3 over four seed sets


# -- the verdict table -----------------------------------------------------------------------------


def test_verdict_rows(quick: dict[str, pd.DataFrame]) -> None:
    table = golab_checks.sweep_checks(quick, PROFILE)
    assert list(table.columns) == golab_checks.COLUMNS
    assert table["check"].tolist() == list(range(7, 16))
    assert set(table["profile"]) == {PROFILE}
    assert set(table["verdict"]) <= {"holds", "differs"} and set(table["reason"]) == {""}
    assert table["margin"].notna().all() and (table["detail"].str.len() > 20).all()
    # a holding check has a non-negative margin; a negative margin means it fails
    for v, margin in zip(table["verdict"], table["margin"]):
        assert margin >= 0 if v == "holds" else True
        assert v == "differs" if margin < 0 else True
    # a sweep that was not run cannot decide its checks
    partial = golab_checks.sweep_checks({"fig7": quick["fig7"]}, PROFILE)
    assert partial.set_index("check").loc[[8, 15], "verdict"].tolist() in (["holds", "differs"], ["holds", "holds"])
    assert partial.set_index("check").loc[7, ["verdict", "reason"]].tolist() == ["undecided", "scale"]
    line = golab_checks.summary_line(partial, PROFILE)
    assert line.startswith("9 acceptance checks of Golab et al. at the quick profile: 1 hold, 1 differ, 7 undecided, "
                           "0 findings") or line.startswith("9 acceptance checks of Golab et al. at the quick profile: "
                                                            "2 hold, 0 differ, 7 undecided, 0 findings")
    assert "undecided (scale): 7, 9, 10, 11, 12, 13, 14" in line


def test_worked_examples_are_computed() -> None:
    table = golab_checks.worked_examples()
    assert table["check"].tolist() == [1, 2, 3, 4, 5, 6]
    assert table["verdict"].tolist() == ["holds"] * 6, table["detail"].tolist()
    assert set(table["profile"]) == {golab_checks.LIVE}


def test_verdicts_name_the_points_above_the_merging_limit(quick: dict[str, pd.DataFrame]) -> None:
    row = golab_checks.sweep_check(8, quick["fig7"], PROFILE)
    assert row["detail"].endswith("Points at U = 1.2 lie above the merging limit 1.1: staleness there grows "
                                  "without bound, so their levels depend on the horizon.")
    below = quick["fig7"][quick["fig7"]["utilization"] <= 1.05]
    assert golab_checks.overload_note(below) == ""
