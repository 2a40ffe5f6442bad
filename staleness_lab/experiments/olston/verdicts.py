"""Computed verdicts for Olston: Tables 5 and 6 cell by cell, checks 10-12 (digest §7, with
correction 7), in :mod:`staleness_lab.experiments.verdicts`' record format (``check, figure, claim, verdict,
reason, reading, margin, detail, profile``).

**Cells** (:func:`cells`): per workflow and column, the mean and 95 % confidence half-width over
seeds of lag, cost and scheduler time, the paper's value, the rank of the mean within the
workflow, and the ratio to Async/Incr (Table 5) or DP (Table 6) beside the paper's ratio.

**Cell verdicts** (:func:`order_checks`): lag and cost are judged pair by pair along the paper's
order (Async/Incr < Sync/Incr < Async/Batch < Sync/Batch; DP < GREEDY < RANDOM) on the per-seed
differences of each neighbouring pair (every column of a seed runs on the same draws, so the
pairs are matched): a pair is separated when the 95 % Student t interval of its mean difference
excludes 0 (with no spread, when the difference is not 0). The order holds when every pair is
separated the paper's way, differs when one pair is separated the other way (or ties in every
seed), and is otherwise undecided (``scale``: the seeds' spread is wider than the difference, so
more seeds would tell), the pair and its interval named. With one seed there is no spread to
judge against: the order is read off that seed alone, as the paper's one run per cell was, and
the detail says so. (Two seeds against three flipped FP's cost order under re-invocation, DP
4.05 against GREEDY 3.97 CPU-h and 4.00 against 4.10: a 2 % difference inside the seeds'
spread.) Scheduler time is judged by rank classes: Table
5 Async/Incr highest, Sync/Incr second, both batch scenarios last; Table 6 DP < RANDOM < GREEDY.
Scheduler seconds are measured on this machine, and a ranking of millisecond calls moves with the
machine's load, so time is judged on matched seeds too, but on ratios: per seed, a class's fastest
member over the slowest member of the class below it. A class is apart from the one below it when
the 95 % Student t interval of the mean of those ratios' logarithms excludes 0 *and* their
geometric mean is at least :data:`TIME_TOLERANCE` (25 %) beyond 1 (a statistical and a practical
margin: scheduler seconds within 25 % move with load and implementation, and two renders of one
commit put Table 5's SP classes 5 % apart in opposite orders). The order holds when every class
is apart the paper's way, differs when one is apart the other way, and is otherwise undecided
(``scale``). With one seed there is no interval: that seed's ratio must clear the 25 %. A
threshold on the means alone moved FP's GREEDY against RANDOM from the start between holds and
undecided across renders (means 1.18-1.27 apart, per seed 0.88-1.64); an interval alone would
have moved SP's (1.04-1.16 over three seeds) the same way.
A workflow with a timed-out run is undecided for ``budget`` (with no runs, for ``scale``).
Check 10's ratios are their own rows, undecided whatever the ratio at the digest's calibration
(``depends on the unprinted rates and costs``, correction 7); the detail gives the ratio and
whether it meets the threshold there.

**Readings** (digest, third-round corrections; :data:`~.sweeps.READINGS`): every verdict row
carries the ``reading`` it was computed under, ``paper`` (the paper-faithful one) or one of our
earlier decisions; a verdict a reading changes is shown under both (:func:`sweep_checks`).

**Sensitivity** (correction 4, :func:`sensitivity` and :func:`sensitivity_checks`): Table 5's
orders and check 10's ratios rest on numbers the paper does not print (click period, cost per
invocation, log and fetch rates). Over the profile's grid of them, a claim holds (or differs)
only when it does at every point; otherwise it is undecided (for the unprinted rates and
costs; for ``budget`` where only failed runs leave it open) and the detail says
``undecided (depends on ...)`` with where it holds and where not. The workflow files' own
calibration is one point of the grid, chosen [D], and the Table 5 rows computed on it alone
say so.

A claim that does not hold differs; nothing here loosens a threshold.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from staleness_lab.experiments.olston.sweeps import READINGS, SENSITIVITY, WEEK_H, WORKFLOWS, load, reading_frame
from staleness_lab.experiments.verdicts import BUDGET, COLUMNS, HOLDS, PAPER, SCALE, UNDECIDED, UNPRINTED_RATES
from staleness_lab.experiments.verdicts import summary_line as shared_summary_line
from staleness_lab.experiments.verdicts import verdict_row as _row
from staleness_lab.stats import t_quantile_975

#: Table 5 [P]: 10-week runs, (lag CPU-h, cost CPU-h, scheduler s) per workflow and scenario.
PAPER_TABLE5: dict[str, dict[str, tuple[float, float, float]]] = {
    "SP": {"async-incr": (0.0606, 28_900, 6.25), "sync-incr": (27.9, 214_000, 2.59),
           "async-batch": (615, 8.26e6, 0.864), "sync-batch": (808, 43.8e6, 0.787)},
    "FP": {"async-incr": (0.0435, 6_930, 2.77), "sync-incr": (2.12, 7_130, 2.25),
           "async-batch": (139, 35.0e6, 0.692), "sync-batch": (193, 1.34e9, 0.758)},
    "CS": {"async-incr": (81.4, 364_000, 10.1), "sync-incr": (542, 1.69e6, 1.71),
           "async-batch": (2_380, 81.2e6, 0.743), "sync-batch": (3_890, 114e6, 0.667)},
}
#: Table 6 [P]: 12-hour runs, Async/Incr, per workflow and scheduler.
PAPER_TABLE6: dict[str, dict[str, tuple[float, float, float]]] = {
    "SP": {"dp": (0.0399, 187, 0.208), "greedy": (17.0, 255, 49.8), "random": (61.6, 932, 1.86)},
    "FP": {"dp": (0.0485, 24.5, 0.183), "greedy": (5.10, 66.9, 0.507), "random": (19.1, 413, 0.374)},
    "CS": {"dp": (4.94, 356, 0.176), "greedy": (96.2, 783, 18.1), "random": (396, 2840, 0.530)},
}
METRICS = {"lag": "lag_cpu_h", "cost": "cost_cpu_h", "time": "scheduler_s"}
#: The paper-faithful reading (:data:`~.sweeps.READINGS`), the vocabulary's.
PAPER_READING = PAPER
#: A time class must be this much slower than the class below it (per-seed geometric mean, beyond
#: the seeds' interval) for the order to hold, or this much faster for it to differ (module docstring).
TIME_TOLERANCE = 0.25
#: What a Table 5 verdict on the workflow files' calibration says of it (correction 4).
CHOSEN = "at the workflow files' calibration (alpha 0.01 CPU-h, hourly clicks: chosen [D], not evidence)"
#: Each table's column parameter, its order as the paper ranks lag and cost, and time's classes
#: (lowest first; members of one class may come in any order).
LAYOUT = {
    "table5": ("scenario", ("async-incr", "sync-incr", "async-batch", "sync-batch"),
               (("async-batch", "sync-batch"), ("sync-incr",), ("async-incr",))),
    "table6": ("scheduler", ("dp", "greedy", "random"), (("dp",), ("random",), ("greedy",))),
}
PAPER = {"table5": PAPER_TABLE5, "table6": PAPER_TABLE6}


def _read(row: dict[str, Any], reading: str) -> dict[str, Any]:
    """A verdict row with the reading it was computed under."""
    return {**row, "reading": reading}


def _label(check: str, reading: str) -> str:
    """A check's label under ``reading``: the paper's bare, ours with the reading's name."""
    return check if reading == PAPER_READING else f"{check} ({reading})"


def _half_width(values: pd.Series) -> float:
    n = int(values.count())
    if n < 2:
        return math.nan
    return t_quantile_975(n - 1) * float(values.std(ddof=1)) / math.sqrt(n)


def cells(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    """One tidy row per workflow, column and metric (module docstring)."""
    column, order, _ = LAYOUT[table]
    rows = []
    for workflow, short in WORKFLOWS.items():
        mine = frame[frame["workflow"] == workflow]
        for metric, field in METRICS.items():
            k = list(METRICS).index(metric)
            means = {c: float(mine.loc[mine[column] == c, field].mean()) for c in order}
            ranks = pd.Series(means).rank(method="min")
            base = means[order[0]]
            paper_base = PAPER[table][short][order[0]][k]
            for c in order:
                values = mine.loc[mine[column] == c, field]
                paper = PAPER[table][short][c][k]
                rows.append({
                    "workflow": short, column: c, "metric": metric, "seeds": int(values.count()),
                    "ok_runs": int((mine.loc[mine[column] == c, "status"] == "ok").sum()),
                    "mean": means[c], "ci95": _half_width(values), "rank": int(ranks[c]) if not math.isnan(ranks[c]) else None,
                    "paper": paper, "paper_rank": int(pd.Series({o: PAPER[table][short][o][k] for o in order}).rank(method="min")[c]),
                    "ratio": means[c] / base if base else math.nan, "paper_ratio": paper / paper_base,
                })
    return pd.DataFrame(rows)


def _pair_sign(differences: Sequence[float]) -> tuple[int, float, float]:
    """Whether matched per-seed ``differences`` (later column minus earlier) separate the pair:
    +1 above 0 beyond the 95 % Student t interval of their mean, -1 below it (or 0 in every
    seed: a tie breaks a strict order), 0 when the interval holds 0; with the mean and the
    interval's half-width (NaN for one seed, which is read alone)."""
    n = len(differences)
    mean = sum(differences) / n
    if n < 2:
        return (1 if mean > 0 else -1), mean, math.nan
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    if mean - half > 0:
        return 1, mean, half
    if mean + half < 0 or (half == 0 and mean == 0):
        return -1, mean, half
    return 0, mean, half


def _seed_order_row(check: str, label: str, claim: str, mine: pd.DataFrame, column: str, field: str,
                    order: Sequence[str], means: Mapping[str, float], shown: str, note: str,
                    profile: str) -> dict[str, Any]:
    """A lag or cost order judged pair by pair on matched seeds (module docstring); ``means``
    per column over the seeds, as ``shown``."""
    by_seed = mine.pivot_table(index="seed", columns=column, values=field, aggfunc="first")
    signs, parts = [], []
    for a, b in zip(order, order[1:]):
        sign, mean, half = _pair_sign(list(by_seed[b] - by_seed[a]))
        signs.append(sign)
        spread = "one seed" if math.isnan(half) else f"± {half:.3g} over {len(by_seed)} seeds"
        parts.append(f"{b} - {a} {mean:+.3g} {spread} ({'separated' if sign else 'not separated'})")
    detail = f"means (CPU-h): {shown}; per-seed differences: {'; '.join(parts)}{note}"
    if -1 in signs or all(s == 1 for s in signs):
        return _row(check, label, claim, -1 not in signs, _order_margin(means, order), detail, profile)
    return _row(check, label, claim, None, _order_margin(means, order),
                f"undecided: the seeds' spread is wider than a difference; {detail}", profile, reason=SCALE)


def _in_order(values: Mapping[str, float], order: Sequence[str]) -> bool:
    return all(values[a] < values[b] for a, b in zip(order, order[1:]))


def _order_margin(values: Mapping[str, float], order: Sequence[str]) -> float:
    """The smallest ratio between consecutive columns, minus 1 (>= 0 when ordered)."""
    steps = [values[b] / values[a] - 1 if values[a] > 0 else (math.inf if values[b] > 0 else -1.0)
             for a, b in zip(order, order[1:])]
    return min(steps)


#: A scheduler time below the clock's resolution counts as this (seconds), so every ratio is finite.
CLOCK_FLOOR_S = 1e-6


def _time_row(check: str, label: str, claim: str, mine: pd.DataFrame, column: str, field: str,
              classes: Sequence[Sequence[str]], means: Mapping[str, float], shown: str,
              profile: str) -> dict[str, Any]:
    """A scheduler-time order judged class by class on the matched seeds' log ratios (module
    docstring); the margin is the smallest ratio of the class means to the class below, minus 1."""
    by_seed = mine.pivot_table(index="seed", columns=column, values=field, aggfunc="first").clip(lower=CLOCK_FLOOR_S)
    signs, parts = [], []
    for lo, hi in zip(classes, classes[1:]):
        logs = [math.log(min(row[b] for b in hi) / max(row[a] for a in lo)) for _, row in by_seed.iterrows()]
        sign, mean, half = _pair_sign(logs)  # one seed: the sign of its ratio alone
        if abs(mean) < math.log(1 + TIME_TOLERANCE) - 1e-12:  # (the slack: 4/5 is exactly 25 % below)
            sign = 0
        signs.append(sign)
        spread = "one seed" if math.isnan(half) else f"x{math.exp(mean - half):.3g}-{math.exp(mean + half):.3g} over {len(logs)} seeds"
        parts.append(f"{'/'.join(hi)} over {'/'.join(lo)} x{math.exp(mean):.3g} ({spread}, "
                     f"{'apart' if sign else f'not apart by {TIME_TOLERANCE:.0%} beyond the spread'})")
    floor = {c: max(m, CLOCK_FLOOR_S) for c, m in means.items()}
    margin = min(min(floor[b] for b in hi) / max(floor[a] for a in lo) for lo, hi in zip(classes, classes[1:])) - 1
    detail = f"mean seconds: {shown}; per-seed ratios: {'; '.join(parts)}"
    if -1 in signs or all(s == 1 for s in signs):
        return _row(check, label, claim, -1 not in signs, margin, detail, profile)
    return _row(check, label, claim, None, margin, f"undecided: a class not apart from the one below it; {detail}",
                profile, reason=SCALE)


def order_checks(frame: pd.DataFrame, table: str, profile: str, reading: str = PAPER_READING) -> list[dict[str, Any]]:
    """Per workflow and metric, whether the paper's order holds (module docstring), on rows
    computed under ``reading``."""
    column, order, classes = LAYOUT[table]
    label = "Table 5" if table == "table5" else "Table 6"
    note = f"; {CHOSEN}" if table == "table5" else ""
    rows = []
    for workflow, short in WORKFLOWS.items():
        mine = frame[frame["workflow"] == workflow]
        failed = mine[mine["status"] != "ok"]
        for metric, field in METRICS.items():
            means = {c: float(mine.loc[mine[column] == c, field].mean()) for c in order}
            shown = ", ".join(f"{c} {means[c]:.4g}" for c in order)
            if metric == "time":
                claim = (f"{short}: scheduler time ranks Async/Incr highest, Sync/Incr second, batch last."
                         if table == "table5" else f"{short}: scheduler time DP < RANDOM < GREEDY.")
            else:
                claim = f"{short}: {metric} " + " < ".join(order) + " (each pair beyond the seeds' spread)."
            check = _label(f"{table}-{short}-{metric}", reading)
            if len(failed) or mine.empty:
                detail = "; ".join(f"{r[column]} seed {r['seed']}: {r['status']}" for _, r in failed.iterrows()) or "no runs"
                rows.append(_read(_row(check, label, claim, None, math.nan, f"undecided: {detail}; means {shown}",
                                       profile, reason=BUDGET if len(failed) else SCALE), reading))
                continue
            if metric == "time":
                rows.append(_read(_time_row(check, label, claim, mine, column, field, classes, means, shown, profile),
                                   reading))
                continue
            rows.append(_read(_seed_order_row(check, label, claim, mine, column, field, order, means, shown, note,
                                              profile), reading))
    return rows


def check10_ratios(frame: pd.DataFrame, profile: str) -> list[dict[str, Any]]:
    """Check 10's calibration-dependent ratios: FP cost Sync/Async <= 1.25, SP lag >= 50x."""
    def mean(workflow: str, scenario: str, field: str) -> float:
        mine = frame[(frame["workflow"] == workflow) & (frame["scenario"] == scenario)]
        return float(mine[field].mean()) if (mine["status"] == "ok").all() and len(mine) else math.nan

    fp = mean("feedback-prioritization", "sync-incr", "cost_cpu_h") / mean("feedback-prioritization", "async-incr", "cost_cpu_h")
    sp = mean("search-preprocessing", "sync-incr", "lag_cpu_h") / mean("search-preprocessing", "async-incr", "lag_cpu_h")
    note = " Calibration-dependent (correction 7): the paper's costs and rates are unknown."

    def at_calibration(ratio: float, met: bool) -> str:
        if math.isnan(ratio):
            return "no ratio: a run timed out"
        return f"ratio {ratio:.3g} {CHOSEN}, where the threshold is {'met' if met else 'not met'}"

    return [_read(row, PAPER_READING) for row in (
        _row("10-fp-cost", "Table 5", "FP: cost Sync/Incr over Async/Incr <= 1.25 (paper 1.03)." + note,
             UNDECIDED, 1.25 - fp, at_calibration(fp, fp <= 1.25), profile, reason=UNPRINTED_RATES),
        _row("10-sp-lag", "Table 5", "SP: lag Sync/Incr over Async/Incr >= 50 (paper about 460)." + note,
             UNDECIDED, sp / 50 - 1, at_calibration(sp, sp >= 50), profile, reason=UNPRINTED_RATES),
    )]


def _all(rows: Sequence[Mapping[str, Any]]) -> tuple[bool | None, str | None]:
    """Whether every row holds (False when one differs, None when none differs and one is
    undecided), and the first undecided row's reason."""
    verdicts = [r["verdict"] for r in rows]
    reason = next((r["reason"] for r in rows if r["verdict"] == UNDECIDED), None)
    if any(v not in (HOLDS, UNDECIDED) for v in verdicts):
        return False, reason
    return (None if reason is not None else True), reason


def _of(order_rows: Sequence[Mapping[str, Any]], table: str, reading: str, time: bool) -> list[Mapping[str, Any]]:
    """A table's order rows under ``reading``: those on scheduler time, or on lag and cost."""
    return [r for r in order_rows if r["check"].startswith(table) and r["reading"] == reading
            and r["check"].removesuffix(f" ({reading})").endswith("time") == time]


def check10(order_rows: Sequence[Mapping[str, Any]], profile: str, reading: str = PAPER_READING) -> dict[str, Any]:
    """Check 10's orderings: lag and cost in the paper's order on every workflow."""
    mine = _of(order_rows, "table5", reading, time=False)
    failed = [r["check"] for r in mine if r["verdict"] != HOLDS]
    holds, reason = _all(mine)
    return _read(_row(_label("10", reading), "Table 5", "The lag and cost orderings hold for all workflows (>= 3 seeds).",
                      holds, min((r["margin"] for r in mine), default=math.nan),
                      "all hold" if not failed else "not holding or undecided: " + ", ".join(failed), profile,
                      reason=reason), reading)


def check11(order_rows: Sequence[Mapping[str, Any]], profile: str, reading: str = PAPER_READING) -> dict[str, Any]:
    """Check 11: DP < GREEDY < RANDOM on lag and cost, and DP's scheduler time below GREEDY's."""
    mine, times = _of(order_rows, "table6", reading, time=False), _of(order_rows, "table6", reading, time=True)
    failed = [r["check"] for r in mine + times if r["verdict"] != HOLDS]
    holds, reason = _all(mine + times)
    return _read(_row(_label("11", reading), "Table 6",
                      "DP < GREEDY < RANDOM on lag and cost, and DP's scheduler time < GREEDY's.",
                      holds, min((r["margin"] for r in mine), default=math.nan),
                      "all hold" if not failed else "not holding or undecided: " + ", ".join(failed), profile,
                      reason=reason), reading)


def check12(frame: pd.DataFrame, profile: str, reading: str = PAPER_READING) -> dict[str, Any]:
    """Check 12 on CrawlSelection: with rule (e) at most 12 indegree refreshes (runs of ``count``)
    in 10 weeks (pro rata, rounded up, on a shorter run); without it a refresh on most
    top-unfetched runs after week 1; on rows computed under ``reading``."""
    claim = ("CS over 10 weeks: with (e) <= 12 indegree refreshes; without it, a refresh on most "
             "top-unfetched runs after week 1.")
    check = _label("12", reading)
    if frame.empty or (frame["status"] != "ok").any():
        why = "; ".join(f"seed {r.seed} {'without' if r.off else 'with'} (e): {r.status} after {r.scheduler_s:.3g} "
                        "scheduler seconds" for r in frame[frame["status"] != "ok"].itertuples())
        return _read(_row(check, "Check 12", claim, None, math.nan, f"undecided: {why or 'no runs'}", profile,
                          reason=BUDGET if len(frame) else SCALE), reading)
    parts, verdicts, margins = [], [], []
    for _, r in frame.iterrows():
        runs, late = json.loads(r["operator_runs"]), json.loads(r["operator_runs_after_1w"])
        if r["off"] == "":
            limit = math.ceil(12 * r["hours"] / (10 * WEEK_H))  # 12 in 10 weeks, pro rata on a shorter run
            refreshes = runs.get("count", 0)
            verdicts.append(refreshes <= limit)
            margins.append(limit - refreshes)
            parts.append(f"seed {r['seed']} with (e): {refreshes} refreshes in {r['hours'] / WEEK_H:.3g} weeks "
                         f"(at most {limit})")
        else:
            top, count = late.get("top-unfetched", 0), late.get("count", 0)
            share = count / top if top else math.nan
            verdicts.append(bool(top) and share > 0.5)
            margins.append(share - 0.5 if top else math.nan)
            parts.append(f"seed {r['seed']} without (e): {count} refreshes over {top} top-unfetched runs after week 1")
    return _read(_row(check, "Check 12", claim, all(verdicts), min(margins), "; ".join(parts), profile), reading)


def _runs_by_operator(rows: pd.DataFrame) -> pd.DataFrame:
    """Each row's ``operator_runs`` as a column per operator, on the rows' index (an operator a
    row did not run: 0)."""
    return pd.DataFrame([json.loads(x) for x in rows["operator_runs"]], index=rows.index).fillna(0)


def operator_runs(frame: pd.DataFrame, table: str) -> pd.DataFrame:
    """Mean runs of each operator per workflow and column over a table's ``ok`` rows, tidy
    (``workflow, operator, <column>, runs``): where a Table 5 order fails, which operators each
    scenario runs how often says why (the report's Table 5 findings)."""
    column = LAYOUT[table][0]
    ok = frame[frame["status"] == "ok"]
    parts = []
    for workflow, mine in ok.groupby("workflow", sort=False):
        runs = _runs_by_operator(mine)
        means = runs.groupby(mine[column]).mean().rename_axis(columns="operator").stack().rename("runs").reset_index()
        parts.append(means.assign(workflow=WORKFLOWS[workflow]))
    columns = ["workflow", "operator", column, "runs"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def _upkeep(operator: str) -> str | None:
    """``chains`` for a zero-cost chain (``<channel>.chain``), ``converters`` for a converter
    (``<channel>.convert``), None for one of the workflow's own operators."""
    return "chains" if operator.endswith(".chain") else "converters" if operator.endswith(".convert") else None


def baseline_steps(frame: pd.DataFrame) -> pd.DataFrame:
    """Where Table 6's order DP < GREEDY < RANDOM fails (§7, "Comparison with simpler scheduling
    algorithms"), from Table 6's ``ok`` rows: per workflow, seed and scheduler, the runs of the
    workflow's own operators (``work``), of zero-cost chains and of converters, whether ``work``
    equals the DP's operator for operator (``same_work``), and lag and cost over the DP's
    (``lag_vs_dp``, ``cost_vs_dp``), tidy.

    The same work at the same lag and cost: every step the baseline found cheapest was a step
    of the DP's plan (the noise is drawn per operator, so the same runs draw the same noise;
    chains cost nothing and draw none). The same work at another cost: the same operators on
    other inputs, i.e. other variants (:func:`variant_runs` says which)."""
    column, order, _ = LAYOUT["table6"]
    ok = frame[frame["status"] == "ok"]
    rows = []
    for (workflow, seed), mine in ok.groupby(["workflow", "seed"], sort=False):
        by = {r[column]: r for _, r in mine.iterrows()}
        if order[0] not in by:
            continue
        dp = by[order[0]]
        dp_work = {op: n for op, n in json.loads(dp["operator_runs"]).items() if _upkeep(op) is None}
        for scheduler in (c for c in order if c in by):
            r = by[scheduler]
            runs = json.loads(r["operator_runs"])
            work = {op: n for op, n in runs.items() if _upkeep(op) is None}
            rows.append({
                "workflow": WORKFLOWS[workflow], "seed": int(seed), column: scheduler,
                "work": int(sum(work.values())),
                "chains": int(sum(n for op, n in runs.items() if _upkeep(op) == "chains")),
                "converters": int(sum(n for op, n in runs.items() if _upkeep(op) == "converters")),
                "same_work": work == dp_work,
                "lag_vs_dp": r["lag_cpu_h"] / dp["lag_cpu_h"] if dp["lag_cpu_h"] else math.nan,
                "cost_vs_dp": r["cost_cpu_h"] / dp["cost_cpu_h"] if dp["cost_cpu_h"] else math.nan,
            })
    columns = ["workflow", "seed", column, "work", "chains", "converters", "same_work", "lag_vs_dp", "cost_vs_dp"]
    return pd.DataFrame(rows, columns=columns)


def variant_runs(invocations: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Runs and actual cost (CPU-h) of each operator variant in labelled runs' ``invocations``
    trace frames (:func:`staleness_lab.workflows.sim.run`), tidy (``run, operator, variant, runs,
    cost_cpu_h``): on FeedbackPrioritization the union's variant shows what rule (e) (§6.3,
    digest §3 (e)) makes the DP choose and GREEDY (§7), which has no rule (e), does not."""
    parts = [inv.groupby(["operator", "variant"]).agg(runs=("cost_cpu_h", "size"), cost_cpu_h=("cost_cpu_h", "sum"))
             .reset_index().assign(run=label) for label, inv in invocations.items()]
    columns = ["run", "operator", "variant", "runs", "cost_cpu_h"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


#: SearchPreprocessing's repairs by what they run: new clicks (the click path starts at
#: ``distinct``), or a new digests base (``c^{ΔB}`` on digests, before a full re-join).
SP_REPAIR_MARKERS = {"clicks": "distinct", "digests_base": "digests.convert"}


def repair_mix(frame: pd.DataFrame, workflow: str = "search-preprocessing",
               markers: Mapping[str, str] = SP_REPAIR_MARKERS,
               scenarios: Sequence[str] = ("async-incr", "sync-incr")) -> pd.DataFrame:
    """Why check 10's lag ratio (Sync/Incr over Async/Incr, median, digest §7 [D]; the paper's
    460x, §7.2 "Schedule quality") depends on how many repairs are expensive, from Table 5's
    ``ok`` rows of ``workflow``: per scenario, means over seeds of the repairs (scheduler calls),
    the share of repairs that run each marker operator (``share_<name>``, runs over repairs),
    the median and maximum lag, the cost per repair, and the median and maximum lag over
    the first scenario's median lag (``lag_ratio``, ``max_ratio``).

    The median of the repairs' lags is an expensive repair's only when more than half of the
    repairs are expensive; the maximum over the first scenario's median bounds the ratio any
    share of expensive repairs could reach."""
    ok = frame[(frame["status"] == "ok") & (frame["workflow"] == workflow)]
    rows = []
    for scenario in scenarios:
        mine = ok[ok["scenario"] == scenario]
        if mine.empty:
            continue
        runs = _runs_by_operator(mine)
        repairs = mine["plans"].astype(float)
        row: dict[str, Any] = {"scenario": scenario, "seeds": len(mine), "repairs": float(repairs.mean())}
        for name, operator in markers.items():
            done = runs[operator] if operator in runs else pd.Series(0.0, index=mine.index)
            row[f"share_{name}"] = float((done / repairs).mean())
        row |= {"lag_cpu_h": float(mine["lag_cpu_h"].mean()), "lag_max_cpu_h": float(mine["lag_max_cpu_h"].mean()),
                "cost_per_repair": float((mine["cost_cpu_h"] / repairs).mean())}
        rows.append(row)
    result = pd.DataFrame(rows)
    if result.empty:
        return result
    base = result["lag_cpu_h"].iloc[0]
    return result.assign(lag_ratio=result["lag_cpu_h"] / base, max_ratio=result["lag_max_cpu_h"] / base)


#: A base read by an invocation, as trace frames label it (``channel:B<t>``): CrawlSelection's
#: fetches, successful fetches and indegrees have one-element provenances.
_BASE_READ = re.compile(r"(\w+):B<([^<>{},]+)>")


def indegree_reads(frames: Mapping[str, pd.DataFrame], week: float = WEEK_H) -> pd.DataFrame:
    """What check 12 (§6.3, digest §3 (e)) turns on, from one CrawlSelection run's trace frames
    (``invocations`` and ``blocks`` of :func:`staleness_lab.workflows.sim.run`): per
    top-unfetched run, the fetch snapshot (hours) of the successful fetches it read
    (``fetches``) and of the indegrees it read (``indegrees``), how far those lag behind
    (``behind_h``), the inconsistency of the pair (``inconsistency_h`` = fetches - end(indegrees),
    end the next fetch arrival, digest §0) and of the pair it would have read had the indegrees
    stayed those of the previous top-unfetched run (``previous_h``), whether its plan refreshed
    the indegrees (``refreshed``: it ran ``count``) and whether it ran after week 1
    (``after_1w``), tidy.

    Top-unfetched's propagated inconsistency bound is one week (``crawl_queue``'s, heuristic
    (c)): a refresh is due when ``previous_h`` reaches it. A refresh with ``behind_h`` 0 made the
    indegrees fully up to date; one just under a week old would leave ``behind_h`` near a week."""
    from staleness_lab.workflows.provenance import Validity

    inv, blocks = frames["invocations"], frames["blocks"]
    fetches = (blocks["channel"] == "fetches") & (blocks["source"] == "input")
    arrivals = {"fetches": sorted(blocks.loc[fetches, "made_at"].unique())}
    refreshing = set(inv.loc[inv["operator"] == "count", "plan"])
    rows: list[dict[str, Any]] = []
    previous = math.nan
    for r in inv[inv["operator"] == "top-unfetched"].itertuples():
        read = {channel: float(t) for channel, t in _BASE_READ.findall(r.inputs)}
        fetched, indegrees = read["successful_fetches"], read["indegrees"]
        end = Validity(arrivals, r.start).end
        rows.append({
            "start": r.start, "fetches": fetched, "indegrees": indegrees, "behind_h": fetched - indegrees,
            "inconsistency_h": fetched - end("fetches", indegrees),
            "previous_h": fetched - end("fetches", previous) if not math.isnan(previous) else math.nan,
            "refreshed": r.plan in refreshing, "after_1w": r.start >= week,
        })
        previous = indegrees
    columns = ["start", "fetches", "indegrees", "behind_h", "inconsistency_h", "previous_h", "refreshed", "after_1w"]
    return pd.DataFrame(rows, columns=columns)


def indegree_sources(at: float = WEEK_H + 0.75, every: float = 0.25,
                     behind: Sequence[float] = (0.0, 0.25, 1.0, 24.0, 167.5),
                     reading: str = "readable across channels") -> pd.DataFrame:
    """Which fetch data CrawlSelection's indegrees may be refreshed from at a call at ``at``
    (``now = at + EPSILON``) with a fetch arrival every ``every`` hours from 0 (the digest's 15 minutes): per fetches
    delta from snapshot 0 to the snapshot ``behind`` hours before the latest, whether it is
    readable across channels (digest §3 "Checks while planning": it passes the fetches
    channel's propagated bounds, ``stale_bound_h``, heuristic (c)) and whether blockGen offers
    ``extract-links`` on it, the first step of every indegree refresh (``offered``).

    Rule (e) (§6.3) ignores a potential block only for a later one of its type on its channel:
    with one readable snapshot the indegrees have one possible target, and nothing to ignore.
    ``reading``: the reading's options (:data:`~.sweeps.READINGS`); under the paper's, which
    checks generated blocks only, every delta is readable (correction 5)."""
    from staleness_lab.workflows.blocks import DELTA, Block
    from staleness_lab.workflows.candidates import Pool
    from staleness_lab.workflows.context import EPSILON
    from staleness_lab.workflows.provenance import prov
    from staleness_lab.workflows.schedule import Scheduler

    from staleness_lab.experiments.olston.sweeps import options_without

    scheduler = Scheduler(load("crawl-selection"), options=options_without("", reading))
    times = [k * every for k in range(int(at // every) + 1)]
    ctx = scheduler.context(at + EPSILON, {}, {"fetches": times})
    gen = scheduler.generator(ctx, [])
    rows = []
    for hours in behind:
        target = times[-1] - hours
        delta = Block("fetches", DELTA, prov(target), prov(0.0))
        pool = Pool()
        pool.add(delta)
        rows.append({"target": target, "behind_h": hours, "stale_bound_h": ctx.bounds["fetches"].staleness[0],
                     "readable": ctx.readable(delta),
                     "offered": any(inv.operator == "extract-links" for _, inv in gen(delta, pool))})
    return pd.DataFrame(rows)


def scheduler_load(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 6's scheduler time (§7) as calls x time per call, from its rows that ran (``ok``
    or ``timeout``: a timed-out run's calls and seconds are those up to the budget): per
    workflow and scheduler, the rows, the timeouts, the mean calls (``plans``) and scheduler
    seconds, the milliseconds per call (all seconds over all calls, so that ``calls x
    ms_per_call / 1000`` is the mean seconds), the median over rows of the median call, and
    calls and ms per call over the DP's (``calls_vs_dp``, ``ms_vs_dp``), tidy."""
    column, order, _ = LAYOUT["table6"]
    ran = frame[frame["status"].isin(["ok", "timeout"])]
    rows = []
    for workflow, mine in ran.groupby("workflow", sort=False):
        for scheduler in order:
            r = mine[mine[column] == scheduler]
            if r.empty:
                continue
            rows.append({"workflow": WORKFLOWS[workflow], column: scheduler, "runs": len(r),
                         "timeouts": int((r["status"] == "timeout").sum()), "calls": float(r["plans"].mean()),
                         "scheduler_s": float(r["scheduler_s"].mean()),
                         "ms_per_call": 1000.0 * float(r["scheduler_s"].sum()) / max(int(r["plans"].sum()), 1),
                         "call_ms_median": float(r["call_ms_median"].median())})
    columns = ["workflow", column, "runs", "timeouts", "calls", "scheduler_s", "ms_per_call", "call_ms_median"]
    result = pd.DataFrame(rows, columns=columns)
    dp = result[result[column] == order[0]].set_index("workflow")
    return result.assign(calls_vs_dp=result["calls"] / result["workflow"].map(dp["calls"]),
                         ms_vs_dp=result["ms_per_call"] / result["workflow"].map(dp["ms_per_call"]))


def call_summary(runs: Mapping[str, Mapping[str, pd.DataFrame]]) -> pd.DataFrame:
    """Where a scheduler's calls come from and what they see (§7, "Comparison with simpler
    scheduling algorithms"), from labelled runs' trace frames: per run, the calls, those at an
    input arrival (``at_arrival``; the others follow the completion of a plan whose output is
    still violated, digest §3 baselines [D: re-invoke], or a bound expiring), the scheduler
    seconds, the blocks a call sees (median, max), the median and maximum call (ms), and the
    runs of converters and of zero-cost chains, tidy."""
    rows = []
    for label, frames in runs.items():
        calls, blocks, inv = frames["scheduler_calls"], frames["blocks"], frames["invocations"]
        arrivals = set(blocks.loc[blocks["source"] == "input", "made_at"])
        upkeep = inv["operator"].map(_upkeep)
        rows.append({"run": label, "calls": len(calls), "at_arrival": int(calls["time"].isin(arrivals).sum()),
                     "scheduler_s": float(calls["seconds"].sum()), "blocks_median": float(calls["blocks"].median()),
                     "blocks_max": int(calls["blocks"].max()), "ms_median": 1000.0 * float(calls["seconds"].median()),
                     "ms_max": 1000.0 * float(calls["seconds"].max()),
                     "converters": int((upkeep == "converters").sum()), "chains": int((upkeep == "chains").sum())})
    columns = ["run", "calls", "at_arrival", "scheduler_s", "blocks_median", "blocks_max", "ms_median", "ms_max",
               "converters", "chains"]
    return pd.DataFrame(rows, columns=columns)


#: Buckets of the blocks a call sees (right-closed) for :func:`call_growth`.
BLOCK_EDGES = (0, 25, 50, 100, 200, 400, math.inf)


def call_growth(runs: Mapping[str, pd.DataFrame], edges: Sequence[float] = BLOCK_EDGES) -> pd.DataFrame:
    """A call's scheduler time against the blocks it sees (§7: a baseline's "search space
    blow-up"), from labelled runs' ``scheduler_calls`` frames: per run and bucket of ``blocks``
    (right-closed intervals of ``edges``), the calls, their median ms, their seconds in all and
    the median of ``optimized`` (a baseline's one-step candidates; the DP's settled blocks),
    tidy; empty buckets are left out."""
    labels = [f"({lo:g}, {hi:g}]" for lo, hi in zip(edges, edges[1:])]
    parts = []
    for label, calls in runs.items():
        bucket = pd.cut(calls["blocks"], list(edges), labels=labels).rename("blocks")
        parts.append(calls.groupby(bucket, observed=True).agg(
            calls=("seconds", "size"), ms_median=("seconds", lambda s: 1000.0 * s.median()),
            seconds=("seconds", "sum"), candidates=("optimized", "median"))
            .reset_index().assign(run=label, blocks=lambda f: f["blocks"].astype(str)))
    columns = ["run", "blocks", "calls", "ms_median", "seconds", "candidates"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


# -- the worked examples, live ---------------------------------------------------------------------

#: E1 (Table 4, now = 90): provenance -> (hi, lo, consistent, inconsistency).
E1_TABLE4 = {((32,), (25,)): (32, 49, True, -17), ((32,), (49,)): (49, 59, True, -10),
             ((59,), (25,)): (59, 49, False, 10), ((86,), (25, 49, 73)): (86, 49, False, 37)}
#: E9: SearchPreprocessing's propagated bounds (staleness per element, inconsistency), hours.
E9_SEARCH_PREPROCESSING = {
    "digests": ((0.0,), WEEK_H), "pages": ((0.0,), WEEK_H), "click_scores": ((24.0,), WEEK_H),
    "click_counts": ((24.0,), WEEK_H), "user_site": ((24.0,), WEEK_H), "clicks": ((24.0,), WEEK_H),
    "output": ((0.0, None), WEEK_H),
}


def e1_table4() -> pd.DataFrame:
    """E1 recomputed: Table 4's hi, lo, consistency and inconsistency at now = 90."""
    from staleness_lab.workflows.provenance import Validity, consistent, fmt, hi, inconsistency, prov

    v = Validity({"digests": [15, 32, 59, 65, 86], "scores": [0, 25, 49, 73]}, 90)
    layout = (("digests", 0), ("scores", 0))
    rows = []
    for (digest, scores), expected in E1_TABLE4.items():
        p = prov(*digest, list(scores))
        got = (hi(p), v.lo(p, layout), consistent(p, layout, v), inconsistency(p, layout, v))
        rows.append({"provenance": fmt(p), "hi": got[0], "lo": got[1], "consistent": got[2], "inconsistency": got[3],
                     "paper": expected, "equal": got == expected})
    return pd.DataFrame(rows)


def example_run() -> Any:
    """The running example (Tables 1-3) through the run loop: calls at each crawl arrival."""
    from staleness_lab.notebook_params import repo_file
    from staleness_lab.workflows.load import load_workflow
    from staleness_lab.workflows.sim import run

    return run(load_workflow(repo_file("data/workflows/olston-example.yaml")))


def worked_examples(profile: str = "live") -> pd.DataFrame:
    """E1, E9 and the running example's plans, recomputed now, as verdict rows."""
    from staleness_lab.workflows.propagate import propagate

    table4 = e1_table4()
    rows = [_row("E1", "Table 4", "hi, lo, the consistency verdict and the inconsistency of Table 4's four provenances.",
                 bool(table4["equal"].all()), 0.0 if table4["equal"].all() else -float((~table4["equal"]).sum()),
                 "; ".join(f"{r.provenance}: {r.hi:g}, {r.lo:g}, {r.consistent}, {r.inconsistency:g}"
                           for r in table4.itertuples()), profile)]
    bounds = propagate(load("search-preprocessing"))
    wrong = [name for name, (stale, inc) in E9_SEARCH_PREPROCESSING.items()
             if (tuple(bounds[name].staleness), bounds[name].inconsistency) != (stale, inc)]
    rows.append(_row("E9", "§6.2.3", "SearchPreprocessing's propagated bounds: staleness 0 on the crawl path, 1 day "
                     "on the click path, inconsistency 1 week everywhere.", not wrong, -float(len(wrong)),
                     "all channels exact" if not wrong else "differ: " + ", ".join(wrong), profile))
    result = example_run()
    calls = result.frames["scheduler_calls"]["time"].tolist()
    variants = result.frames["invocations"].groupby("plan")["variant"].apply(list).tolist()
    expected = [["async-left"], ["chain", "delta->B", "batch"], ["async-left"], ["async-left"]]
    ok = calls == [32, 59, 65, 86] and variants == expected
    rows.append(_row("E3-run", "Tables 1-3", "The example plans at each crawl arrival (32, 59, 65, 86): the one-sided "
                     "join, except at 59, where it would exceed the 1-day inconsistency bound and a batch re-join runs.",
                     ok, 0.0 if ok else -1.0, f"calls at {calls}; variants {variants}", profile))
    return pd.DataFrame([_read(r, PAPER_READING) for r in rows], columns=COLUMNS)


def check14(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Check 14 (digest §7, §8): a spark run, every block on Parquet, makes the memory run's
    decisions and leaves the same output relations."""
    claim = "On Spark with Parquet blocks: the same invocations and the same output rows as in memory."
    if frame.empty:
        return _row("14", "§8", claim, None, math.nan, "undecided: no spark run", profile, reason=SCALE)
    parts = [f"{r.workflow} {r.hours:g} h x{r.share:g}: {r.invocations} invocations, "
             + ("agree" if r.agree else f"differ (log equal: {r.same_invocations}; outputs: {r.outputs_differ or '-'})")
             for r in frame.itertuples()]
    return _row("14", "§8", claim, bool(frame["agree"].all()), float(-(~frame["agree"]).sum()), "; ".join(parts), profile)


def check7(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Check 7 on :func:`staleness_lab.workflows.brute_force.compare`'s instances: with (a)-(e)
    off, DP's cost is never below the enumerated minimum, and equals it wherever the minimum
    reads no produced block twice and size estimates do not depend on the producer (there
    Dijkstra over hyperedges is exact; elsewhere it is an upper bound, digest A6)."""
    claim = ("Heuristics (a)-(e) off: DP's cost >= the brute-force minimum on every instance, "
             "= on every tree instance with producer-independent size estimates.")
    feasible = frame[frame["feasible"]]
    if feasible.empty:
        return _row("7", "§6.1", claim, None, math.nan, "undecided: no feasible instance", profile, reason=SCALE)
    gap = feasible["dp_cost"] - feasible["minimum"]
    below = int((gap < -1e-9).sum())
    exact = feasible["tree"] & feasible["consistent"]
    equal = gap.abs() <= 1e-9 * feasible["minimum"].abs().clip(lower=1.0)
    missed = int((~equal[exact]).sum())
    infeasible_agree = bool(frame.loc[~frame["feasible"], "dp_cost"].isna().all())
    detail = (f"{len(frame)} instances ({len(feasible)} feasible, {int(exact.sum())} exact cases); DP below the "
              f"minimum {below}x, off it in exact cases {missed}x; DP equal to the minimum on {equal.mean():.1%}; "
              f"largest gap {gap.max():.4g} (x{(feasible['dp_cost'] / feasible['minimum']).max():.3g}); "
              f"infeasible where the brute force finds nothing: {infeasible_agree}")
    return _row("7", "§6.1", claim, below == 0 and missed == 0 and infeasible_agree, -float(below + missed), detail,
                profile)


def scaling_check(frame: pd.DataFrame, profile: str) -> dict[str, Any]:
    """The issue's scheduler-time target on ``join-cascade(k)`` (not a claim of the paper):
    per call, median <= 0.1 s and 95th percentile <= 1 s at every k."""
    claim = "join-cascade(k), k = 2..8: scheduler CPU per call, median <= 0.1 s and p95 <= 1 s (the issue's target)."
    if frame.empty or (frame["status"] != "ok").any():
        return _row("scaling", "§6 (issue)", claim, None, math.nan, "undecided: a run failed or timed out", profile,
                    reason=BUDGET if len(frame) else SCALE)
    worst = frame.groupby("k")[["call_ms_median", "call_ms_p95"]].max()
    margin = float(min(100.0 - worst["call_ms_median"].max(), 1000.0 - worst["call_ms_p95"].max()))
    detail = "; ".join(f"k={k}: {r.call_ms_median:.3g} / {r.call_ms_p95:.3g} ms" for k, r in worst.iterrows())
    return _row("scaling", "§6 (issue)", claim, margin >= 0, margin / 1000.0, "median / p95 per call: " + detail,
                profile)


def readings_of(frame: pd.DataFrame) -> list[str]:
    """The readings a table's rows were run under, the paper's first (a row without one: the paper's)."""
    found = set(frame["reading"]) if "reading" in frame else {PAPER_READING}
    return [r for r in READINGS if r in found]


def _under(frame: pd.DataFrame, reading: str, column: str) -> pd.DataFrame:
    return frame if "reading" not in frame else reading_frame(frame, reading, column)


def sweep_checks(frames: Mapping[str, pd.DataFrame], profile: str) -> pd.DataFrame:
    """Every verdict from the tables' frames (those present), each table's under every reading
    its rows were run under (a reading's rows stand in for the paper's where it changes them)."""
    rows: list[dict[str, Any]] = []
    order_rows: list[dict[str, Any]] = []
    for table in ("table5", "table6"):
        if table in frames:
            column = LAYOUT[table][0]
            for reading in readings_of(frames[table]):
                order_rows += order_checks(_under(frames[table], reading, column), table, profile, reading)
    rows += order_rows
    if "table5" in frames:
        rows += [check10(order_rows, profile, r) for r in readings_of(frames["table5"])]
        rows += check10_ratios(_under(frames["table5"], PAPER_READING, "scenario"), profile)
    if "sensitivity" in frames:
        rows += sensitivity_checks(frames["sensitivity"], profile)
    if "table6" in frames:
        rows += [check11(order_rows, profile, r) for r in readings_of(frames["table6"])]
    if "check12" in frames:
        frame = frames["check12"]
        rows += [check12(frame[frame["reading"] == r] if "reading" in frame else frame, profile, r)
                 for r in readings_of(frame)]
    if "brute_force" in frames:
        rows.append(_read(check7(frames["brute_force"], profile), PAPER_READING))
    if "scaling" in frames:
        rows.append(_read(scaling_check(frames["scaling"], profile), PAPER_READING))
    if "spark" in frames:
        rows.append(_read(check14(frames["spark"], profile), PAPER_READING))
    return pd.DataFrame(rows, columns=COLUMNS)


# -- the sensitivity map (correction 4) ----------------------------------------------------------

#: Names of the unprinted numbers a map varies (``olston-run`` parameters).
NUMBERS = {"alpha": "cost per invocation alpha (CPU-h)", "clicks_every": "click period (h)",
           "rate_scale": "input rows per arrival (x the file's)"}
#: Check 10's ratio claims: workflow, metric, threshold, whether the ratio must reach it (>=) or stay at most it.
RATIOS = {"10-fp-cost": ("feedback-prioritization", "cost", 1.25, False),
          "10-sp-lag": ("search-preprocessing", "lag", 50.0, True)}


def _axes(frame: pd.DataFrame, workflow: str) -> tuple[str, str]:
    """The two numbers the map varies for ``workflow`` (the profile's grid; the first two a
    frame's rows vary when its profile is not known)."""
    for spec in SENSITIVITY.values():
        axes = spec["axes"].get(workflow)
        if axes is not None and all(a in frame for a in axes):
            x, y = axes
            return x, y
    raise ValueError(f"no sensitivity axes for {workflow}")


def sensitivity(frame: pd.DataFrame) -> pd.DataFrame:
    """Per workflow, grid point and claim, the value and whether the claim holds there, tidy
    (``workflow, x, x_value, y, y_value, claim, value, holds``): each workflow's lag and cost
    order over the scenarios the grid ran (Table 5, on one seed; value: the smallest step
    ratio minus 1), and check 10's ratios (value: the ratio). A point with a failed run: holds
    None."""
    rows = []
    for workflow, short in WORKFLOWS.items():
        mine = frame[frame["workflow"] == workflow]
        if mine.empty:
            continue
        x, y = _axes(mine, workflow)
        order = [c for c in LAYOUT["table5"][1] if c in set(mine["scenario"])]
        for (a, b), point in mine.groupby([x, y], sort=True):
            ok = bool((point["status"] == "ok").all())
            by = point.set_index("scenario")
            base = {"workflow": short, "x": x, "x_value": float(a), "y": y, "y_value": float(b)}
            for metric in ("lag", "cost"):
                values = {c: float(by.loc[c, METRICS[metric]]) for c in order}
                rows.append({**base, "claim": f"table5-{short}-{metric}", "value": _order_margin(values, order),
                             "holds": _in_order(values, order) if ok else None})
            for claim, (w, metric, threshold, at_least) in RATIOS.items():
                if w == workflow:
                    ratio = float(by.loc["sync-incr", METRICS[metric]] / by.loc["async-incr", METRICS[metric]])
                    holds = (ratio >= threshold if at_least else ratio <= threshold) if ok else None
                    rows.append({**base, "claim": claim, "value": ratio, "holds": holds})
    columns = ["workflow", "x", "x_value", "y", "y_value", "claim", "value", "holds"]
    return pd.DataFrame(rows, columns=columns)


def sensitivity_checks(frame: pd.DataFrame, profile: str) -> list[dict[str, Any]]:
    """Per claim of the map (:func:`sensitivity`): holds (differs) when it does (does not) at
    every point of the grid, else undecided, the detail saying on what it depends and where it
    holds and where not."""
    found = sensitivity(frame)
    rows = []
    for claim, points in found.groupby("claim", sort=False):
        x, y = points["x"].iloc[0], points["y"].iloc[0]
        where = {v: ", ".join(f"({NUMBERS[x].split(' (')[0]} {r.x_value:g}, {NUMBERS[y].split(' (')[0]} {r.y_value:g}: "
                              f"{r.value:.3g})" for r in points.itertuples() if r.holds is v)
                 for v in (True, False, None)}
        decided = points["holds"].dropna()
        mixed = decided.any() and not decided.all()
        holds = bool(decided.all()) if len(decided) == len(points) and not mixed else None
        reason = UNPRINTED_RATES if mixed else BUDGET if holds is None else None
        scenarios = sorted(set(frame["scenario"]), key=LAYOUT["table5"][1].index)
        claimed = (f"{claim}: " + " < ".join(scenarios) if claim.startswith("table5")
                   else f"{claim}: the ratio as check 10 states it") + f", over the grid of {NUMBERS[x]} x {NUMBERS[y]}."
        depends = (f"undecided (depends on {NUMBERS[x].split(' (')[0]} and {NUMBERS[y].split(' (')[0]}); " if mixed
                   else "undecided (runs failed at some points); " if holds is None else "")
        detail = (f"{depends}holds at {sum(v is True for v in points['holds'])} of {len(points)} points "
                  f"[{where[True] or '-'}]; not at [{where[False] or '-'}]"
                  + (f"; failed runs at [{where[None]}]" if where[None] else "")
                  + "; the files' calibration (alpha 0.01, hourly clicks, scale 1) is one point, chosen [D]")
        margin = float(points["value"].min()) if claim.startswith("table5") else math.nan
        rows.append(_read(_row(f"map-{claim}", "Table 5", claimed, holds, margin, detail, profile, reason=reason),
                          PAPER_READING))
    return rows


def summary_line(table: pd.DataFrame, profile: str) -> str:
    """One line for the report index."""
    return shared_summary_line(table, profile, subject="verdicts on Olston's Tables 5-6 and checks 7, 10-12 and 14")
