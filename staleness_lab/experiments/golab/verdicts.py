"""Computed verdicts for the acceptance checks of the Golab et al. spec digest (its Sec. 7).

Checks 1-6 recompute the paper's worked examples (and one derived property) with the engine
and the schedulers' own static helpers; checks 7-15 read the figure sweeps of
:mod:`staleness_lab.experiments.golab.sweeps`, always on the mean over seeds of each (curve,
utilization) point.

Every check returns one row in the shared format of :mod:`staleness_lab.experiments.verdicts`::

    check    1..15
    figure   what it is about ("Sec. 4.2", "Fig. 6", ...)
    claim    the claim and the threshold, in one sentence
    verdict  holds / differs, or undecided (reason ``scale``) when the profile's sweep cannot
             decide (not run, a point or a curve missing)
    reason   why undecided, else ""
    reading  "paper"
    margin   the binding slack: >= 0 when the check holds, < 0 by how much it fails, in the
             units named by ``detail`` (lateness units, ratio or absolute error)
    detail   every measured quantity the verdict rests on, as a sentence
    profile  the profile the data came from ("live" for the worked examples)

Thresholds are the digest's (its suggested numbers for the orderings, marked [D] there). A
check that does not hold is a finding, reported as such; nothing here loosens a threshold.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.experiments.golab import sweeps
from staleness_lab.experiments.verdicts import COLUMNS, LIVE, SCALE, verdict_row
from staleness_lab.experiments.verdicts import summary_line as shared_summary_line

#: Absolute tolerance of the exact checks 1-6.
EXACT = 1e-9


def _fmt(x: float) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.4g}"


# -- worked examples (checks 1-6) ---------------------------------------------------------------


class FixedOrder:
    """A custom policy for the examples: tables run in a given order of file positions."""

    name = "fixed-order"

    def __init__(self, order: tuple[int, ...]) -> None:
        self.rank = {table: k for k, table in enumerate(order)}

    def bind(self, workload: Any, rng: Any) -> Any:
        from staleness_lab.policies import BoundPolicy

        rank = [self.rank[i] for i in range(len(workload.tables))]
        return BoundPolicy(key=lambda i, now, release, n: rank[i])


def check1(workload: Any = None) -> dict[str, Any]:
    """Sec. 4.2 (Fig. 3): Max Benefit runs J1 first; weighted staleness on [0, 5] is 80 with J1
    first and 85 with J2 first."""
    import staleness_lab as sl
    from staleness_lab.notebook_params import repo_file

    w = workload if workload is not None else sl.load_workload(repo_file("data/workloads/golab-sec3-1-example.yaml"))
    mb = sl.simulate(w, "max-benefit")
    first = mb.jobs.sort_values("start")["table"].tolist()
    other = sl.simulate(w, FixedOrder((1, 0)))
    err = max(abs(mb.total_weighted_staleness - 80.0), abs(other.total_weighted_staleness - 85.0))
    holds = first[:1] == ["J1"] and err <= EXACT
    detail = (f"Max Benefit ran {' then '.join(first)} for a weighted staleness of {mb.total_weighted_staleness:.12g} "
              f"(J2 first: {other.total_weighted_staleness:.12g}); largest error against 80 / 85 is {err:.2g}.")
    return verdict_row(1, "Sec. 4.2 (Fig. 3)", "Max Benefit picks J1; the weighted staleness on [0, 5] is exactly 80 with J1 "
                       "first and 85 with J2 first (to 1e-9).", holds, EXACT - err, detail, LIVE)


def lookahead_workload() -> Any:
    """The Sec. 4.3 situation at tau = 49 (spec Sec. 4.9): J1 (dF 10, E 3), J2 (dF 5, E 2)
    ready, J3 (p 10, E 3, dF 50) due at tau + 1 on one track."""
    import staleness_lab as sl

    return sl.parse_workload({
        "tracks": 1, "horizon": 60, "warmup": 49,
        "tables": [
            {"name": "J1", "arrivals": [[39, 39], [49, 49]], "alpha": 3, "beta": 0, "priority": 1},
            {"name": "J2", "arrivals": [[44, 44], [49, 49]], "alpha": 2, "beta": 0, "priority": 1},
            {"name": "J3", "period": 50, "phase": 0, "alpha": 3, "beta": 0, "priority": 10},
        ],
    })


def check2() -> dict[str, Any]:
    """Sec. 4.3: the lookahead rule computes B[{J2}] = 101 and dispatches J2, where plain Max
    Benefit dispatches J1."""
    import staleness_lab as sl
    from staleness_lab.policies import lookahead

    d = lookahead.decide(49.0, [(0, 10.0, 3.0), (1, 5.0, 2.0)], [(2, 50.0, 500.0, 3.0)])
    w = lookahead_workload()

    def at49(policy: str) -> list[str]:
        jobs = sl.simulate(w, policy).jobs
        return jobs.loc[jobs["start"] == 49.0, "table"].tolist()

    la, mb = at49("max-benefit-lookahead"), at49("max-benefit")
    err = abs(d.B - 101.0) if d.B is not None else math.inf
    holds = err <= EXACT and d.table == 1 and d.S == (1,) and la == ["J2"] and mb == ["J1"]
    detail = (f"decide() gave B = {_fmt(d.B)} for S = {{{', '.join(f'J{m + 1}' for m in d.S)}}} and picked J{d.table + 1}; "
              f"in the engine at t = 49 Lookahead started {la} and Max Benefit {mb}.")
    return verdict_row(2, "Sec. 4.3", "Lookahead computes B[{J2}] = 101 and dispatches J2 while plain Max Benefit dispatches J1.",
                       holds, EXACT - err, detail, LIVE)


def _fig2_table(**extra: Any) -> dict[str, Any]:
    # alpha 0, beta 1/3: E(3) = 1 and E(6) = 2
    return {"name": "t", "arrivals": [[4, 3], [7, 7], [9, 9]], "alpha": 0, "beta": 1 / 3, "priority": 1, **extra}


def check3() -> dict[str, Any]:
    """Sec. 4.1 (Fig. 2): the staleness sawtooth S(5-)=5, S(5)=2, S(9)=6, S(11-)=8, S(11)=2 and
    its integral 42.5 on [0, 11]; the one-batch variant gives the same curve."""
    import staleness_lab as sl

    blocker = {"name": "blocker", "arrivals": [[5, 5]], "alpha": 4, "beta": 0, "priority": 1}
    three = sl.simulate({"tracks": 1, "horizon": 11, "tables": [_fig2_table(), blocker]}, "fifo")
    one = sl.simulate({"tracks": 1, "horizon": 11, "tables": [_fig2_table(arrivals=[[4, 3], [9, 9]])]}, "fifo")

    def curve(result: Any) -> tuple[list[float], float]:
        steps = result.freshness[result.freshness["table"] == "t"]
        times = steps["time"].to_numpy()
        fresh = steps["freshness"].to_numpy()

        def s_at(t: float, left: bool = False) -> float:
            k = np.searchsorted(times, t, side="left" if left else "right") - 1
            return t - fresh[k]

        values = [s_at(5, True), s_at(5), s_at(9), s_at(11, True), s_at(11)]
        area = float(result.tables.set_index("table").loc["t", "staleness_area"])
        return values, area

    expected = [5.0, 2.0, 6.0, 8.0, 2.0]
    v3, a3 = curve(three)
    v1, a1 = curve(one)
    err = max(max(abs(a - b) for a, b in zip(v3, expected)), abs(a3 - 42.5),
              max(abs(a - b) for a, b in zip(v1, v3)), abs(a1 - a3))
    detail = (f"S at 5-, 5, 9, 11-, 11 = {', '.join(f'{x:g}' for x in v3)}; integral {a3:.12g}; the one-batch variant "
              f"gives {', '.join(f'{x:g}' for x in v1)} and {a1:.12g} (largest deviation {err:.2g}).")
    return verdict_row(3, "Sec. 4.1 (Fig. 2)", "The staleness trace of the example has integral 42.5 on [0, 11], and replacing "
                       "batches 2 and 3 by one batch leaves the curve unchanged.", err <= EXACT, EXACT - err, detail, LIVE)


def check4() -> dict[str, Any]:
    """Sec. 4.4: packing {J1, J2} / {J3, J4} with U 0.5 / 0.375; only (J4, track 0) promotable."""
    from staleness_lab.policies import partitioned

    w = sweeps.sec44_workload()
    packing = partitioned.pack(w)
    promo = partitioned.promotable(packing, w)
    names = [t.name for t in w.tables]
    u_err = max(abs(a - b) for a, b in zip(packing.utilization, (0.5, 0.375))) if packing.needed == 2 else math.inf
    holds = packing.tracks == ((0, 1), (2, 3)) and u_err <= EXACT and promo == {(3, 0)}
    shown = " / ".join("{" + ", ".join(names[i] for i in t) + "}" for t in packing.tracks)
    detail = (f"packing {shown} with U = {', '.join(f'{u:g}' for u in packing.utilization)}; promotable pairs "
              f"{sorted((names[i], r) for i, r in promo)}.")
    return verdict_row(4, "Sec. 4.4", "EDF packing gives {J1, J2} (U 0.5) and {J3, J4} (U 0.375); the only promotable pair "
                       "is J4 to track 0 (the paper's track 1).", holds, EXACT - u_err, detail, LIVE)


def check5() -> dict[str, Any]:
    """Sec. 4.5: k = 2 clusters {J1, J2}, {J3, J4}; U_tot 0.875; "all" M = 16/7 with the short
    cluster on 2 tracks, the long one on 1 shared track; "basic" leaves track 1 free."""
    from staleness_lab.policies import proportional

    w = sweeps.sec44_workload()
    groups = proportional.clusters(w, k=2.0)
    full = proportional.allocate(w, groups, mode="all")
    basic = proportional.allocate(w, groups, mode="basic")
    short, long_ = set(full.home_tracks(0)), set(full.home_tracks(len(groups) - 1))
    m_err = abs(full.M - 16 / 7)
    u_err = abs(full.total_utilization - 0.875)
    holds = (
        [sorted(g) for g in groups] == [[0, 1], [2, 3]]
        and max(m_err, u_err) <= EXACT
        and len(short) == 2 and len(long_) == 1 and len(short & long_) == 1
        and basic.free == (1,)
    )
    detail = (f"clusters {[sorted(g) for g in groups]} (table positions), U_tot = {full.total_utilization:g}, "
              f"M = {Fraction(full.M).limit_denominator(1000)}; short cluster on tracks {sorted(short)}, long on "
              f"{sorted(long_)}; basic M = {Fraction(basic.M).limit_denominator(1000)}, free tracks {list(basic.free)}.")
    return verdict_row(5, "Sec. 4.5", "Proportional with k = 2 forms {J1, J2} and {J3, J4}, U_tot = 0.875; 'all' gives "
                       "M = 16/7, the short cluster homed on 2 tracks and the long one on 1 shared track; 'basic' leaves "
                       "track 1 free.", holds, EXACT - max(m_err, u_err), detail, LIVE)


def check6(instances: int = 200, seed: int = 2012) -> dict[str, Any]:
    """Fact 3.5 (Smith's rule): on random static single-track instances (2-6 tables, one job
    each, all released at 0) Max Benefit attains the minimum weighted staleness over every
    order of the jobs."""
    import staleness_lab as sl
    from staleness_lab.sim import run, total_weighted_staleness

    rng = np.random.default_rng(seed)
    worst_gap = 0.0
    for _ in range(instances):
        n = int(rng.integers(2, 7))
        tables = [
            {"name": f"t{k}", "arrivals": [[0, 0]], "initial_freshness": -float(rng.choice([1, 2, 4, 5, 7.5, 10, 20])),
             "alpha": float(rng.choice([0.5, 1, 2, 3])), "beta": float(rng.choice([0, 0.1, 0.25, 0.5])),
             "priority": float(rng.choice([0.5, 1, 2, 3, 10]))}
            for k in range(n)
        ]
        total = sum(t["alpha"] - t["beta"] * t["initial_freshness"] for t in tables)
        w = sl.parse_workload({"tracks": 1, "horizon": math.ceil(total) + 1, "tables": tables})
        best = min(total_weighted_staleness(run(w, FixedOrder(o), "order")) for o in itertools.permutations(range(n)))
        got = total_weighted_staleness(run(w, sl.get_policy("max-benefit"), "max-benefit"))
        worst_gap = max(worst_gap, (got - best) / best)
    tol = 1e-12
    detail = (f"{instances} random instances of 2-6 jobs, every order tried: Max Benefit's weighted staleness exceeds "
              f"the best order's by at most a relative {worst_gap:.2g}.")
    return verdict_row(6, "Fact 3.5 (Smith's rule)", "On static single-track instances Max Benefit's order attains the minimum "
                       "weighted staleness over all permutations (n <= 6, exhaustive).", worst_gap <= tol, tol - worst_gap,
                       detail, LIVE)


def worked_examples() -> pd.DataFrame:
    """Checks 1-6, computed now."""
    return pd.DataFrame([check1(), check2(), check3(), check4(), check5(), check6()], columns=COLUMNS)


# -- sweeps (checks 7-15) -----------------------------------------------------------------------


def means(frame: pd.DataFrame, figure: str, column: str = "relative_lateness") -> pd.DataFrame:
    """Mean of ``column`` over seeds per (utilization, curve), curves as columns; NaN where a
    seed is NaN (an infeasible point stays missing)."""
    return sweeps.summarize(frame, figure, column)


class NotComputable(Exception):
    """The sweep cannot decide a check (a curve or a point is missing)."""


@dataclass
class Measured:
    """What a sweep check measured: named slacks (>= 0 where that part holds) and a sentence."""

    parts: dict[str, float]
    detail: str
    strict: bool = False  # True: a part holds only with slack > 0
    #: Conditions without a slack (e.g. "the sign changes exactly once"); they do not enter the margin.
    conditions: dict[str, bool] = field(default_factory=dict)

    def part_holds(self, name: str) -> bool:
        if name in self.conditions:
            return self.conditions[name]
        value = self.parts[name]
        return value > 0 if self.strict else value >= 0

    @property
    def holds(self) -> bool:
        return all(self.part_holds(name) for name in [*self.parts, *self.conditions])

    @property
    def margin(self) -> float:
        return min(self.parts.values())


def _curves(frame: pd.DataFrame, figure: str, need: list[Any]) -> pd.DataFrame:
    t = means(frame, figure)
    missing = [c for c in need if c not in t.columns]
    if missing:
        raise NotComputable(f"curve(s) {', '.join(map(str, missing))} missing from the {figure} sweep")
    t = t[need].dropna()
    if t.empty:
        raise NotComputable(f"no point of the {figure} sweep has every curve")
    return t


CLAIMS = {
    7: "No slowdown, 5 tracks: global Max Benefit, Random and Proportional stay within 1.05 of ideal for "
       "U <= 0.9; at U = 1.05 Max Benefit's second-half staleness is within 10% of its first half; "
       "Proportional is within 5% of global Max Benefit everywhere; EDF-Partitioned is the worst of the four "
       "where its packing is full (0.75 < U <= 0.857).",
    8: "Wherever EDF or Random exceed 1.2, prioritized Max Benefit is below both, and at the top of the sweep "
       "its excess lateness is at most half of EDF's.",
    9: "EDF-P minus Max Benefit changes sign once: EDF-P lower where lateness sets in (first point above "
       "1.05), Max Benefit lower at the top of the sweep.",
    10: "At the top of the sweep no inheritance is the worst curve, Max <= Sum, and Max is best or within 5% "
        "of the best inheritance mode.",
    11: "At the top of the sweep Proportional is below both global Max Benefit and EDF-Partitioned; at the "
        "bottom EDF-Partitioned is below global Max Benefit, at the top above it (a crossover).",
    12: "Proportional 'all' <= 'basic' at the bottom of the sweep; 'all, aggressive' <= 1.05 x min(basic, all) "
        "at every point.",
    13: "Chopping (c = 3) is within 2% of (or below) no chopping at every point, and at the top of the sweep "
        "its excess lateness is at least 10% smaller.",
    14: "At every U >= 0.8, relative lateness increases with the slowdown factor: S = 2 < S = 3 < S = 5.",
    15: "On the Fig. 7 workload EDF-P, Max Benefit and Lookahead agree within 3% at every point.",
}


def measure7(frame: pd.DataFrame) -> Measured:
    """Fig. 6 (check 7): parts ``near_ideal``, ``bounded``, ``proportional``, ``partitioned_worst``."""
    t = _curves(frame, "fig6", ["max-benefit", "random", "proportional"])
    us = t.index.to_numpy(dtype=float)
    low = t[us <= 0.9 + 1e-9]
    if low.empty:
        raise NotComputable("no point at U <= 0.9")
    worst_low = float(low.max().max())
    who = low.max().idxmax()
    mb = frame[(frame["policy"] == "max-benefit") & np.isclose(frame["utilization"], 1.05)]
    if mb.empty:
        raise NotComputable("no Max Benefit point at U = 1.05")
    ratio = float((mb["staleness_second_half"] / mb["staleness_first_half"]).mean())
    dev = float((t["proportional"] / t["max-benefit"] - 1.0).abs().max())
    all4 = means(frame, "fig6")
    if "edf-partitioned" not in all4.columns:
        raise NotComputable("curve edf-partitioned missing from the fig6 sweep")
    au = all4.index.to_numpy(dtype=float)
    full = all4[(au > 0.75 + 1e-9) & (au <= 6 / 7 + 1e-9)]
    full = full[full["edf-partitioned"].notna()]
    if full.empty:
        raise NotComputable("no feasible EDF-Partitioned point with 0.75 < U <= 0.857")
    gaps = full["edf-partitioned"] - full[["max-benefit", "random", "proportional"]].max(axis=1)
    infeasible = sorted(set(frame.loc[frame["status"] == "infeasible", "utilization"]))
    parts = {
        "near_ideal": 1.05 - worst_low,
        "bounded": 0.10 - abs(ratio - 1.0),
        "proportional": 0.05 - dev,
        "partitioned_worst": float(gaps.min()),
    }
    detail = (f"for U <= 0.9 the worst of MB, Random and Proportional is {who} at {worst_low:.4g} (limit 1.05); at "
              f"U = 1.05 Max Benefit's staleness in the second half of the run is {ratio:.4g} x the first half's "
              f"(limit 1 +- 0.10); Proportional deviates from Max Benefit by at most {100 * dev:.3g}% (limit 5%); "
              f"where the packing is full (U = {', '.join(f'{u:g}' for u in full.index)}) EDF-Partitioned is above "
              f"the next worst by {', '.join(f'{g:.3g}' for g in gaps)}. EDF-Partitioned cannot pack the tables on "
              f"5 tracks at U = {', '.join(f'{u:g}' for u in infeasible) or 'none'} (gaps). Margin: smallest slack.")
    return Measured(parts, detail)


def measure8(frame: pd.DataFrame) -> Measured:
    """Fig. 7 (check 8): parts ``mb_below`` and ``half_of_edf``."""
    t = _curves(frame, "fig7", ["max-benefit", "edf", "random"])
    late = t[(t["edf"] > 1.2) | (t["random"] > 1.2)]
    if late.empty:
        slack_a = math.inf
        a_text = "EDF and Random never exceed 1.2 (that part is vacuous)"
    else:
        gaps = late[["edf", "random"]].min(axis=1) - late["max-benefit"]
        slack_a = float(gaps.min())
        a_text = (f"at the {len(late)} points where EDF or Random exceed 1.2 (from U = {late.index.min():g}) Max "
                  f"Benefit is lower than both by at least {slack_a:.4g}")
    top = t.index.max()
    mb, edf = float(t.loc[top, "max-benefit"]), float(t.loc[top, "edf"])
    ratio = (mb - 1.0) / (edf - 1.0) if edf != 1.0 else math.nan
    detail = (f"{a_text}; at U = {top:g} Max Benefit's excess lateness is {mb - 1:.4g} against EDF's {edf - 1:.4g} "
              f"(ratio {ratio:.3g}, limit 0.5). Margin in lateness units.")
    return Measured({"mb_below": slack_a, "half_of_edf": 0.5 * (edf - 1.0) - (mb - 1.0)}, detail)


def measure9(frame: pd.DataFrame) -> Measured:
    """Fig. 5 (check 9): parts ``edfp_lower_at_onset``, ``mb_lower_at_top`` (strict) and the
    condition ``one_sign_change``."""
    t = _curves(frame, "fig5", ["edf-p", "max-benefit"])
    onset_rows = t[t.max(axis=1) > 1.05]
    if onset_rows.empty:
        raise NotComputable("lateness never exceeds 1.05 in the sweep")
    onset = onset_rows.index.min()
    d = (t["edf-p"] - t["max-benefit"])[t.index >= onset]
    signs = np.sign(d.to_numpy())
    signs = signs[signs != 0]
    changes = int(np.sum(signs[1:] != signs[:-1])) if len(signs) > 1 else 0
    d_on, d_top = float(d.iloc[0]), float(d.iloc[-1])
    detail = (f"lateness sets in at U = {onset:g}, where EDF-P - MB = {d_on:+.4g}; at U = {d.index[-1]:g} it is "
              f"{d_top:+.4g}; the sign changes {changes} time(s) from the onset on "
              f"({', '.join(f'{u:g}: {x:+.3g}' for u, x in d.items())}). Margin in lateness units.")
    parts = {"edfp_lower_at_onset": -d_on, "mb_lower_at_top": d_top}
    return Measured(parts, detail, strict=True, conditions={"one_sign_change": changes == 1})


def measure10(frame: pd.DataFrame) -> Measured:
    """Fig. 8 (check 10): parts ``none_worst``, ``max_below_sum``, ``max_best_or_tied``."""
    t = _curves(frame, "fig8", ["none", "max", "sum", "max-plus"])
    top = t.index.max()
    row = t.loc[top]
    parts = {
        "none_worst": float(row["none"] - row[["max", "sum", "max-plus"]].max()),
        "max_below_sum": float(row["sum"] - row["max"]),
        "max_best_or_tied": float(1.05 * row[["max", "sum", "max-plus"]].min() - row["max"]),
    }
    detail = (f"at U = {top:g}: none {row['none']:.4g}, max {row['max']:.4g}, sum {row['sum']:.4g}, max-plus "
              f"{row['max-plus']:.4g}; no inheritance is above the worst inheritance mode by {parts['none_worst']:.4g}, "
              f"Sum above Max by {parts['max_below_sum']:.4g}, and Max is {parts['max_best_or_tied']:.4g} below 1.05 x "
              "the best mode. Margin in lateness units.")
    return Measured(parts, detail)


def measure11(frame: pd.DataFrame) -> Measured:
    """Fig. 9 (check 11): parts ``proportional_best_at_top``, ``partitioned_better_at_bottom``,
    ``partitioned_worse_at_top``."""
    t = _curves(frame, "fig9", ["max-benefit", "edf-partitioned", "proportional"])
    lo, hi = t.index.min(), t.index.max()
    top, bottom = t.loc[hi], t.loc[lo]
    cross = t["edf-partitioned"] - t["max-benefit"]
    parts = {
        "proportional_best_at_top": float(min(top["max-benefit"], top["edf-partitioned"]) - top["proportional"]),
        "partitioned_better_at_bottom": float(bottom["max-benefit"] - bottom["edf-partitioned"]),
        "partitioned_worse_at_top": float(top["edf-partitioned"] - top["max-benefit"]),
    }
    detail = (f"at U = {hi:g}: Proportional {top['proportional']:.4g}, global MB {top['max-benefit']:.4g}, "
              f"EDF-Partitioned {top['edf-partitioned']:.4g}; at U = {lo:g}: EDF-Partitioned "
              f"{bottom['edf-partitioned']:.4g} vs global MB {bottom['max-benefit']:.4g}; Partitioned - MB along the "
              f"sweep {', '.join(f'{u:g}: {x:+.3g}' for u, x in cross.items())}. Margin in lateness units.")
    return Measured(parts, detail, strict=True)


def measure12(frame: pd.DataFrame) -> Measured:
    """Fig. 10 (check 12): parts ``all_below_basic_at_bottom`` and ``aggressive_near_best``."""
    t = _curves(frame, "fig10", ["basic", "all", "all, aggressive"])
    lo = t.index.min()
    gaps = 1.05 * t[["basic", "all"]].min(axis=1) - t["all, aggressive"]
    parts = {"all_below_basic_at_bottom": float(t.loc[lo, "basic"] - t.loc[lo, "all"]), "aggressive_near_best": float(gaps.min())}
    worst = gaps.idxmin()
    detail = (f"at U = {lo:g}: all {t.loc[lo, 'all']:.4g} vs basic {t.loc[lo, 'basic']:.4g}; the tightest point for "
              f"'all, aggressive' is U = {worst:g} ({t.loc[worst, 'all, aggressive']:.4g} against 1.05 x "
              f"{t.loc[worst, ['basic', 'all']].min():.4g}), slack {parts['aggressive_near_best']:.4g}. Margin in "
              "lateness units.")
    return Measured(parts, detail)


def measure13(frame: pd.DataFrame) -> Measured:
    """Fig. 11 (check 13), on the curves without inheritance: parts ``never_worse`` and
    ``less_excess_at_top``."""
    t = _curves(frame, "fig11", ["no chopping", "chopping"])
    gaps = 1.02 * t["no chopping"] - t["chopping"]
    top = t.index.max()
    chop, plain = float(t.loc[top, "chopping"]), float(t.loc[top, "no chopping"])
    cut = 1.0 - (chop - 1.0) / (plain - 1.0) if plain != 1.0 else math.nan
    parts = {"never_worse": float(gaps.min()), "less_excess_at_top": 0.9 * (plain - 1.0) - (chop - 1.0)}
    detail = (f"chopping stays below 1.02 x no chopping by at least {parts['never_worse']:.4g} (tightest at "
              f"U = {gaps.idxmin():g}); at U = {top:g} chopping {chop:.4g} vs no chopping {plain:.4g}: "
              f"{100 * cut:.3g}% less excess lateness (needed >= 10%). Margin in lateness units.")
    return Measured(parts, detail)


def measure14(frame: pd.DataFrame) -> Measured:
    """Fig. 4 (check 14): parts ``s2_below_s3`` and ``s3_below_s5`` (smallest step over U >= 0.8)."""
    t = _curves(frame, "fig4", [2.0, 3.0, 5.0])
    t = t[t.index.to_numpy(dtype=float) >= 0.8 - 1e-9]
    if t.empty:
        raise NotComputable("no point at U >= 0.8")
    a, b = t[3.0] - t[2.0], t[5.0] - t[3.0]
    parts = {"s2_below_s3": float(a.min()), "s3_below_s5": float(b.min())}
    detail = (f"over U = {t.index.min():g}..{t.index.max():g}: S=3 - S=2 ranges {a.min():+.4g}..{a.max():+.4g} and "
              f"S=5 - S=3 {b.min():+.4g}..{b.max():+.4g}; at U = {t.index.max():g} S=2 {t.iloc[-1][2.0]:.4g}, "
              f"S=3 {t.iloc[-1][3.0]:.4g}, S=5 {t.iloc[-1][5.0]:.4g}. Margin in lateness units.")
    return Measured(parts, detail, strict=True)


def measure15(frame: pd.DataFrame) -> Measured:
    """Fig. 7 workload (check 15): part ``within_3_percent``."""
    t = _curves(frame, "fig7", ["edf-p", "max-benefit", "max-benefit-lookahead"])
    spread = t.max(axis=1) / t.min(axis=1) - 1.0
    worst = spread.idxmax()
    beyond = spread.index[spread > 0.03]
    agree = (f"they agree within 3% up to U = {spread.index[spread.index < beyond.min()].max():g}"
             if len(beyond) and (spread.index < beyond.min()).any() else
             "they agree within 3% at every point" if not len(beyond) else "they differ by more than 3% from the first point")
    detail = (f"the largest spread max/min - 1 among the three is {100 * spread.max():.3g}% at U = {worst:g} "
              f"(EDF-P {t.loc[worst, 'edf-p']:.4g}, MB {t.loc[worst, 'max-benefit']:.4g}, Lookahead "
              f"{t.loc[worst, 'max-benefit-lookahead']:.4g}); {agree}; limit 3%. Margin as a ratio.")
    return Measured({"within_3_percent": 0.03 - float(spread.max())}, detail)


#: Checks 7-15: check -> (the figure whose sweep it reads, its measurement).
SWEEP_CHECKS: dict[int, tuple[str, Callable[[pd.DataFrame], Measured]]] = {
    7: ("fig6", measure7), 8: ("fig7", measure8), 9: ("fig5", measure9), 10: ("fig8", measure10),
    11: ("fig9", measure11), 12: ("fig10", measure12), 13: ("fig11", measure13), 14: ("fig4", measure14),
    15: ("fig7", measure15),
}
FIGURE_LABEL = {"fig4": "Fig. 4", "fig5": "Fig. 5", "fig6": "Fig. 6", "fig7": "Fig. 7", "fig8": "Fig. 8",
                "fig9": "Fig. 9", "fig10": "Fig. 10", "fig11": "Fig. 11"}


def sweep_check(number: int, frame: pd.DataFrame | None, profile: str) -> dict[str, Any]:
    """One of checks 7-15 as a verdict row, from its figure's sweep (None: not run)."""
    fig, measure = SWEEP_CHECKS[number]
    label = FIGURE_LABEL[fig] + (" workload" if number == 15 else "")
    if frame is None:
        return verdict_row(number, label, CLAIMS[number], None, math.nan, f"not computable: the {fig} sweep was not run", profile,
                           reason=SCALE)
    try:
        m = measure(frame)
    except NotComputable as why:
        return verdict_row(number, label, CLAIMS[number], None, math.nan, f"not computable: {why}", profile, reason=SCALE)
    return verdict_row(number, label, CLAIMS[number], m.holds, m.margin, m.detail + overload_note(frame), profile)


def overload_note(frame: pd.DataFrame) -> str:
    """A sentence naming the sweep's points above the merging limit (where staleness grows
    without bound, so relative lateness there depends on the horizon), or ``""``."""
    if "merging_limit" not in frame.columns:
        return ""
    limit = float(frame["merging_limit"].min())
    above = sorted({round(float(u), 9) for u in frame["offered_utilization"] if u > limit + 1e-9})
    if not above:
        return ""
    return (f" Points at U = {', '.join(f'{u:g}' for u in above)} lie above the merging limit {limit:.3g}: "
            "staleness there grows without bound, so their levels depend on the horizon.")


def sweep_checks(frames: Mapping[str, pd.DataFrame], profile: str) -> pd.DataFrame:
    """Checks 7-15 from the figure sweeps ``frames`` (``{"fig4": frame, ...}``); a figure not
    in ``frames`` makes its checks not computable."""
    rows = [sweep_check(n, frames.get(fig), profile) for n, (fig, _) in SWEEP_CHECKS.items()]
    return pd.DataFrame(rows, columns=COLUMNS)


def verdicts(frames: Mapping[str, pd.DataFrame], profile: str) -> pd.DataFrame:
    """All 15 checks: the worked examples (computed now) and the sweeps of ``profile``."""
    return pd.concat([worked_examples(), sweep_checks(frames, profile)], ignore_index=True)


def summary_line(table: pd.DataFrame, profile: str) -> str:
    """One line: the counts per verdict at the profile, and which checks differ or are undecided."""
    return shared_summary_line(table.assign(check=table["check"].map(int)), profile, "acceptance checks of Golab et al.")
