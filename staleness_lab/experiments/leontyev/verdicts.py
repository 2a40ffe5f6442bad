"""Computed verdicts for Leontyev, Johnson and Anderson (AUS), in :mod:`staleness_lab.experiments.verdicts`'
record format (``check, figure, claim, verdict, reason, reading, margin, detail, profile``).

Digest correction 3 limits the Fig. 9 verdicts to what the paper supports (its lines 319-323);
the digest's own acceptance checks 10-12 encode a prototype's windows, which are reported in the
details but never thresholds here. Each Fig. 9 claim is decided per seed on the random-phase
runs of ``leontyev-fig9`` (AUS and PRP, average-case provisioning) and holds when it holds in a
majority of the seeds; its ``margin`` is the slack of the weakest seed of the best majority (the
k-th largest per-seed slack, k = seeds // 2 + 1), in time units, so it is >= 0 (> 0 for a strict
claim) exactly when the timing holds in a majority of seeds (check 3's "one table in recovery at
a time" enters the verdict only):

1. Fig. 9(a): V1..V4 keep G <= 300 on [0, 5000] under both AUS and PRP;
2. Fig. 9(a): PRP catches V1..V4 up (G <= 300 for good) within [10,000, 12,500];
3. Fig. 9(a): AUS never has two tables in recovery at once and finishes after PRP (its last
   R->N switch among V1..V4 after PRP's catch-up; the paper's "around 15,000" is reported);
4. Fig. 9(b): AUS keeps V8..V11 at G <= 900 for the whole run;
5. Fig. 9(b): under PRP, V8 or V9 exceed G = 900 after 10,000 (the last such instant is reported
   against the paper's "around 15,000");
6. §5.4, worst-case provisioning: reported, not asserted (undecided, ``ambiguous in the paper``):
   the paper's "25,000 vs 15,000" is ambiguous about which scheduler finishes when (correction 3);
7. E4 (Examples 8-10), computed now: AUS reproduces every (r, d, s, f) and the mode log
   (acceptance check 1);
8. the ``leontyev-bounds`` sweep: no record whose preconditions are all met fails (acceptance
   checks 4-7), margin 1 - the largest observed/bound among them.

A sweep that is not run, or has no run a claim needs, leaves it undecided (``scale``). Nothing
here loosens a threshold; a claim that does not hold differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

import staleness_lab as sl
from staleness_lab.experiments.leontyev import sweeps as lx
from staleness_lab.experiments.verdicts import AMBIGUOUS, COLUMNS, LIVE, SCALE
from staleness_lab.experiments.verdicts import summary_line as shared_summary_line
from staleness_lab.experiments.verdicts import verdict_row as _row
from staleness_lab.theory.records import REL_TOL

#: Absolute tolerance of the E4 replay.
EXACT = 1e-9
#: The paper's rough instants (digest correction 3, §5.2-5.4), reported beside the measurements.
PAPER_AUS_END = 15_000.0
PAPER_PRP_WINDOW = (10_000.0, 12_500.0)
PAPER_V8_RESTORED = 15_000.0
PAPER_WORST = "AUS about 25,000 vs PRP about 15,000"
#: The C1 and C2 periods, and which tables each claim reads.
SHORT, LONG = lx.FIG9_PERIODS[0], lx.FIG9_PERIODS[-1]
LATE, WATCHED, STARVED = list(lx.LATE), list(lx.WATCHED), list(lx.STARVED)
#: Up to this many seeds a detail lists each seed's value, beyond it their range.
LISTED = 10

#: Digest E4: (r, d, s, f) of every job of V1 and V2 under AUS, and the mode log.
E4_JOBS = {
    "V1": [(1, 4, 1, 2), (10, 11.5, 10, 11), (11.5, 13, 12, 13), (13, 14.5, 13, 14), (14.5, 16, 15, 16),
           (16, 17.5, 16, 17), (19, 22, 19.5, 20.5), (22, 25, 22.5, 23.5), (25, 28, 25, 26)],
    "V2": [(1, 4, 2, 3), (10, 13, 11, 12), (13, 16, 14, 15), (16, 19, 17, 18), (18.5, 20, 18.5, 19.5),
           (20, 21.5, 20.5, 21.5), (21.5, 23, 21.5, 22.5), (23, 24.5, 23.5, 24.5), (25, 28, 26, 27)],
}
E4_MODES = [(10.0, "V1", "N", "R", "NR/ii"), (17.5, "V1", "R", "N", "RN"), (17.5, "V2", "N", "R", "NR/vii"),
            (24.5, "V2", "R", "N", "RN")]


def _times(values: Mapping[int, float]) -> str:
    """Per-seed values, ``0: 11,586, 1: 11,622 (by seed)``, or beyond :data:`LISTED` seeds their
    range, ``11,246-11,705 over 30 seeds, median 11,530``."""
    def show(x: float) -> str:
        return f"{x:,.0f}" if np.isfinite(x) else "n/a"

    if len(values) <= LISTED:
        return ", ".join(f"{seed}: {show(value)}" for seed, value in values.items()) + " (by seed)"
    v = np.array(list(values.values()), dtype=float)
    return f"{show(v.min())}-{show(v.max())} over {len(v)} seeds, median {show(float(np.median(v)))}"


#: Checks 1-6: what each is about and the claim (digest correction 3; §5.2-5.4).
FIGURES = {"1": "Fig. 9(a), [0, 5000]", "2": "Fig. 9(a), PRP", "3": "Fig. 9(a), AUS", "4": "Fig. 9(b), AUS",
           "5": "Fig. 9(b), PRP", "6": "§5.4 worst case"}
CLAIMS = {
    "1": "On [0, 5000] the late tables V1..V4 keep G = TE - F <= 300 under both AUS and PRP.",
    "2": ("PRP recovers the late tables together: V1..V4 are caught up (G <= 300 for good) within "
           "[10,000, 12,500]."),
    "3": ("AUS recovers one late table at a time (never two in recovery at once) and finishes after PRP: its "
           "last R->N switch among V1..V4 comes after PRP's catch-up (the paper: AUS around 15,000)."),
    "4": "Under AUS the on-time tables V8..V11 keep G <= 900 for the whole run.",
    "5": ("Under PRP, V8 or V9 fall behind after 10,000: G > 900 there (the paper: V8 fully caught up only "
           "around 15,000)."),
    "6": ("Worst-case provisioning (§5.4, text only): reported, not asserted, since the paper's '25,000 vs "
           "15,000' does not say which scheduler finishes when (correction 3)."),
}


# -- Fig. 9, per seed ---------------------------------------------------------------------------------


class NotComputable(Exception):
    """The sweep cannot decide a claim (no random-phase seed with the runs it needs)."""


def runs(frame: pd.DataFrame, policy: str, provisioning: str = "average") -> dict[int, pd.DataFrame]:
    """The random-phase runs of ``policy`` (at ``provisioning``) by seed, each indexed by table."""
    part = frame[(frame["phases"] == "random") & (frame["policy"] == policy) & (frame["provisioning"] == provisioning)]
    return {int(seed): run.set_index("table") for seed, run in part.groupby("seed")}


def paired(frame: pd.DataFrame, provisioning: str = "average") -> list[tuple[int, pd.DataFrame, pd.DataFrame]]:
    """(seed, AUS run, PRP run) for every seed with both (PRP ignores provisioning: its
    average-case run)."""
    aus, prp = runs(frame, "aus", provisioning), runs(frame, "prp")
    out = [(seed, aus[seed], prp[seed]) for seed in sorted(set(aus) & set(prp))]
    if not out:
        raise NotComputable(f"no random-phase seed has both an AUS ({provisioning}) and a PRP run")
    return out


def majority(slack: Mapping[int, float], holds: Mapping[int, bool]) -> tuple[bool, float, int]:
    """(holds in a majority of the seeds, the k-th largest slack with k = seeds // 2 + 1, how many
    seeds hold)."""
    need = len(slack) // 2 + 1
    ranked = sorted((v if np.isfinite(v) else -math.inf for v in slack.values()), reverse=True)
    count = sum(bool(h) for h in holds.values())
    return count >= need, ranked[need - 1], count


def _verdict(check: str, slack: Mapping[int, float], holds: Mapping[int, bool], detail: str,
             profile: str) -> dict[str, Any]:
    ok, margin, count = majority(slack, holds)
    return _row(check, FIGURES[check], CLAIMS[check], ok, margin,
                f"{detail} Holds on {count} of {len(slack)} seeds (majority needed: {len(slack) // 2 + 1}).", profile)


def _at_most(value: float, limit: float) -> bool:
    return bool(np.isfinite(value)) and value <= limit * (1 + REL_TOL)


def check1(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Fig. 9(a), before the outage (digest §5.2)."""
    worst = {seed: max(aus.loc[LATE, "max_gap_before"].max(), prp.loc[LATE, "max_gap_before"].max())
             for seed, aus, prp in paired(frame)}
    slack = {seed: SHORT - g for seed, g in worst.items()}
    detail = f"Largest G of V1..V4 on [0, 5000] under both policies: {_times(worst)}; limit 300."
    return _verdict("1", slack, {s: _at_most(g, SHORT) for s, g in worst.items()}, detail, profile)


def check2(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Fig. 9(a), PRP's recovery (digest §5.2, correction 3)."""
    done = {seed: float(run.loc[LATE, "caught_up"].max(skipna=False)) for seed, run in runs(frame, "prp").items()}
    if not done:
        raise NotComputable("no random-phase PRP run")
    end = PAPER_PRP_WINDOW[1]
    detail = (f"PRP's last late table caught up at: {_times(done)}; the paper: during "
              f"[{PAPER_PRP_WINDOW[0]:,.0f}, {end:,.0f}].")
    return _verdict("2", {s: end - t for s, t in done.items()},
                    {s: _at_most(t, end) for s, t in done.items()}, detail, profile)


def check3(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Fig. 9(a), AUS's recovery against PRP's (digest §5.2, correction 3)."""
    ends, caught, prp_ends, slack, holds, orders, most = {}, {}, {}, {}, {}, set(), {}
    for seed, aus, prp in paired(frame):
        ends[seed] = float(aus.loc[LATE, "recovery_end"].max(skipna=False))
        caught[seed] = float(aus.loc[LATE, "caught_up"].max(skipna=False))
        prp_ends[seed] = float(prp.loc[LATE, "caught_up"].max(skipna=False))
        most[seed] = int(aus["max_in_recovery"].iloc[0])
        slack[seed] = ends[seed] - prp_ends[seed]
        holds[seed] = most[seed] <= 1 and slack[seed] > 0
        orders.add(" ".join(aus.loc[LATE, "recovery_start"].dropna().sort_values().index))
    detail = (f"AUS's last R->N switch: {_times(ends)}; the paper: around {PAPER_AUS_END:,.0f}. AUS's late tables "
              f"back to G <= 300 for good: {_times(caught)}. PRP's catch-up: {_times(prp_ends)}. Most tables in "
              f"recovery at once: {max(most.values())}; admission order(s): {'; '.join(sorted(orders))}. Margin: "
              "AUS's end minus PRP's (strict).")
    return _verdict("3", slack, holds, detail, profile)


def check4(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Fig. 9(b), AUS (digest §5.3)."""
    worst = {seed: float(run.loc[WATCHED, "max_gap"].max()) for seed, run in runs(frame, "aus").items()}
    if not worst:
        raise NotComputable("no random-phase AUS run")
    detail = f"Largest G of V8..V11 over [0, 30,000] under AUS: {_times(worst)}; limit 900."
    return _verdict("4", {s: LONG - g for s, g in worst.items()},
                    {s: _at_most(g, LONG) for s, g in worst.items()}, detail, profile)


def check5(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Fig. 9(b), PRP (digest §5.3, correction 3)."""
    peak, last = {}, {}
    for seed, run in runs(frame, "prp").items():
        peak[seed] = float(run.loc[STARVED, "max_gap_after"].max())
        last[seed] = float(run.loc[STARVED, "last_over_period"].max())
    if not peak:
        raise NotComputable("no random-phase PRP run")
    detail = (f"Largest G of V8 and V9 after 10,000 under PRP: {_times(peak)}. The last instant with G > 900 on "
              f"either: {_times(last)}; the paper: about {PAPER_V8_RESTORED:,.0f}. Margin: G - 900 (strict).")
    return _verdict("5", {s: g - LONG for s, g in peak.items()},
                    {s: g > LONG * (1 + REL_TOL) for s, g in peak.items()}, detail, profile)


def check6(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """§5.4, the worst-case variant: AUS (worst-case budgets) against PRP, reported only."""
    pairs = paired(frame, "worst")
    ends = {seed: float(aus.loc[LATE, "recovery_end"].max(skipna=False)) for seed, aus, _ in pairs}
    prp = {seed: float(run.loc[LATE, "caught_up"].max(skipna=False)) for seed, _, run in pairs}
    detail = (f"AUS's last R->N switch with worst-case budgets: {_times(ends)}. PRP's catch-up: {_times(prp)}. "
              f"The paper: {PAPER_WORST}; the digest's prototype (Rule A): 26,700-27,350.")
    return _row("6", FIGURES["6"], CLAIMS["6"], None, math.nan, detail, profile, reason=AMBIGUOUS)


FIG9_CHECKS: dict[str, Callable[[pd.DataFrame, str], dict[str, Any]]] = {
    "1": check1, "2": check2, "3": check3, "4": check4, "5": check5, "6": check6,
}


def fig9_checks(frame: pd.DataFrame | None, profile: str) -> pd.DataFrame:
    """Checks 1-6 from a ``leontyev-fig9`` sweep (None: not run, every row not computable)."""
    rows = []
    for number, measure in FIG9_CHECKS.items():
        if frame is None:
            rows.append(_row(number, FIGURES[number], CLAIMS[number], None, math.nan,
                             "not computable: the fig9 sweep was not run", profile, reason=SCALE))
            continue
        try:
            rows.append(measure(frame, profile))
        except NotComputable as why:
            rows.append(_row(number, FIGURES[number], CLAIMS[number], None, math.nan, f"not computable: {why}",
                             profile, reason=SCALE))
    return pd.DataFrame(rows, columns=COLUMNS)


# -- the worked example, live (check 7) -------------------------------------------------------------


def e4_workload() -> sl.Workload:
    """Digest E4 (Examples 8-10): ``data/workloads/leontyev-e4.yaml``."""
    from staleness_lab.notebook_params import repo_file

    return sl.load_workload(repo_file("data/workloads/leontyev-e4.yaml"))


CLAIM7 = ("E4 (Examples 8-10): AUS reproduces every (r, d, s, f) of both tasks and the mode log (N->R of T1 at "
          "10 by rule ii, RN at 17.5, T2 admitted at 17.5 by rule vii with r = 18.5, RN at 24.5), to 1e-9.")


def check7() -> dict[str, Any]:
    """Digest E4 / acceptance check 1, computed now."""
    trace = sl.simulate(e4_workload(), "aus").trace
    jobs = trace.jobs
    err = 0.0
    for name, want in E4_JOBS.items():
        got = jobs[jobs["table"] == name][["release", "deadline", "start", "finish"]].to_numpy()
        err = max(err, float(np.abs(got - np.array(want)).max()) if got.shape == (len(want), 4) else math.inf)
    modes = trace.frames["modes"]
    log = [(float(t), str(n), a, b, r) for t, n, a, b, r in
           modes[["time", "table", "mode_from", "mode_to", "rule"]].itertuples(index=False)]
    same_log = log == E4_MODES
    ok = err <= EXACT and same_log
    detail = (f"{len(jobs)} jobs, largest deviation from the digest's (r, d, s, f) {err:.2g}; mode log "
              f"{'as the digest' if same_log else 'differs: ' + repr(log)}; eq. 6 peaks at "
              f"{modes['total_share'].max():.12g} (m = 1).")
    return _row("7", "E4 (Examples 8-10)", CLAIM7, ok, EXACT - err if math.isfinite(err) else -1.0, detail, LIVE)


# -- the bounds sweep (check 8) ---------------------------------------------------------------------


CLAIM8 = ("On random workloads meeting the preconditions (worst-case budgets, U_sum <= m, p^[r] in [e_k, p_k]), "
          "no record whose preconditions are all met fails: tardiness <= Y (Theorem 1), f - r <= Theta (Lemma 1), "
          "S <= A (Theorems 2-3), recovery by t_0 + x_k (Theorem 4), eq. 6 (margin: 1 - the largest "
          "observed/bound).")


def check8(frame: pd.DataFrame | None, profile: str) -> dict[str, Any]:
    """Acceptance checks 4-7 over the ``leontyev-bounds`` sweep."""
    figure = "Theorems 1-4, eq. 6 (bounds sweep)"
    if frame is None:
        return _row("8", figure, CLAIM8, None, math.nan, "not computable: the bounds sweep was not run", profile,
                    reason=SCALE)
    met = frame[frame["preconditions_met"].astype(bool)]
    if met.empty:
        return _row("8", figure, CLAIM8, None, math.nan, "no record has its preconditions met", profile, reason=SCALE)
    failed = met[met["holds"] != True]  # noqa: E712 - object column of True/False/None
    per = met.groupby("claim", sort=False)["ratio"].agg(["size", "max"])
    shown = ", ".join(f"{claim} {int(r['size'])} (max observed/bound {r['max']:.4g})" for claim, r in per.iterrows())
    detail = (f"{frame['row'].nunique()} workloads, {len(frame)} records, {len(met)} with every precondition met: "
              f"{shown}; {len(failed)} fail. Undecided (a precondition unmet, e.g. a broken feed): "
              f"{len(frame) - len(met)}. Eq. 6 is met with equality by design (Rule A sizes p^[r] so that one "
              "recovery fills m, E6), so a run with a recovery has margin 0.")
    if len(failed):
        first = failed.iloc[0]
        detail += f" First failure: {first['claim']} on {first['table']} (row {first['row']})."
    return _row("8", figure, CLAIM8, failed.empty, 1.0 - float(met["ratio"].max()), detail, profile)


# -- all of it --------------------------------------------------------------------------------------


def verdicts(frames: Mapping[str, pd.DataFrame], profile: str) -> pd.DataFrame:
    """Checks 1-8 in order: the Fig. 9 claims from ``frames["fig9"]``, E4 now, the bounds sweep
    from ``frames["bounds"]`` (a sweep missing makes its checks not computable)."""
    rows = pd.DataFrame([check7(), check8(frames.get("bounds"), profile)], columns=COLUMNS)
    return pd.concat([fig9_checks(frames.get("fig9"), profile), rows], ignore_index=True)


def summary_line(table: pd.DataFrame, profile: str) -> str:
    """One line for the report index: the counts per verdict, which checks differ or are undecided
    (check 6, worst-case provisioning, is reported, not asserted: undecided, ambiguous)."""
    return shared_summary_line(table, profile, subject="checks of Leontyev et al.")
