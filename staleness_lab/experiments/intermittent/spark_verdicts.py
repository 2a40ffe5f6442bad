"""Computed verdicts for Chandrasekaran & Sudarshan on Spark (digest §5-6, §9 checks 11-13), in
:mod:`staleness_lab.experiments.verdicts`' record format (check, figure, claim, verdict, reason, reading,
margin, detail, profile).

Every verdict reads measured rows of :mod:`staleness_lab.experiments.intermittent.spark`. Where
the paper's number belongs to its scale (SF ≈ 25 on 48 cores) the verdict judges the direction
the paper reports and states this machine's number beside the paper's (digest correction 5);
where a claim cannot be measured at the profile's scale (R > 0 below SF 1, correction 2nd-round
3) the verdict is undecided for ``scale`` instead of a guess. Thresholds are never loosened to make a claim hold.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.experiments.verdicts import PAPER, SCALE
from staleness_lab.experiments.intermittent.hybrid import MARGINS, MULTI_MARGINS, tolerance
from staleness_lab.experiments.intermittent.spark import MIN_REPETITIONS
from staleness_lab.spark.intermittent.streaming import TRIGGERS
from staleness_lab.experiments.verdicts import summary_line as shared_summary_line
from staleness_lab.experiments.verdicts import verdict_row as _row

#: The parameters one plan's repetitions share, per hybrid experiment.
FIG6_PLAN = ("margin", "query", "f")
MULTI_PLAN = ("margin", "scheme", "rho", "queries")
#: How a verdict on executed plans counts a miss (:func:`by_plan`), said in its detail.
LATE_RULE = ("a plan is late when every one of its repetitions finishes more than max(1 % of D, 10 ms) after "
             "its deadline and the runs lie within that tolerance of one another, on time when none finishes "
             "beyond it, and undecided otherwise (digest, third-round correction 2): a plan planned to end at D, with "
             "costs fitted to calibration's medians, overruns in about half of its runs, and a majority of 5 then "
             "flips between renders")

#: Table 2's file-based single-batch costs (seconds, the paper's scale).
PAPER_TABLE2 = {"CQ1": 17.86, "CQ2": 18.85, "CQ3": 32.0, "CQ4": 32.5}
#: The multi-query claim: streaming over CQS LLF at δRSF = 50 %.
PAPER_MULTI = {"default": 60.0, "10min": 12.0}


def fit_table(docs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """One row per query: S, R, R², the piecewise breakpoint and SSE, a0, a1 (tidy, for the report)."""
    rows = []
    for name, doc in docs.items():
        f = doc["fits"]
        piece = f["piecewise"] or {}
        rows.append({"query": name, "S": f["linear"]["S"], "R": f["linear"]["R"], "R2": f["linear"]["r2"],
                     "breakpoint": piece.get("breakpoint"), "piecewise_sse": piece.get("sse"),
                     "linear_sse": f["linear"]["sse"], "a0": f["aggregation"]["a0"], "a1": f["aggregation"]["a1"],
                     "agg_R2": f["aggregation"]["r2"]})
    return pd.DataFrame(rows)


def fig3_check(table: pd.DataFrame, profile: str, scale: float) -> dict[str, Any]:
    """Check 12, first half: the cost fit has an overhead S > 0 and a per-file cost R > 0."""
    claim = "Fig. 3 / check 12: a batch costs S + R·x with S > 0 and R > 0 (execution time grows with input size)."
    s_ok = bool((table["S"] > 0).all())
    flat = table.loc[~(table["R"] > 0), "query"].tolist()
    detail = "; ".join(f"{r.query}: S {r.S:.3g} s, R {r.R:.3g} s/file, R² "
                       f"{'n/a' if r.R2 is None or pd.isna(r.R2) else f'{r.R2:.2f}'}" for r in table.itertuples())
    if scale < 1 and flat:
        return _row("fig3", "Fig. 3", claim, None if s_ok else False, math.nan,
                    f"{detail}. At SF {scale:g} a batch's overhead hides the per-file cost ({', '.join(flat)} fit R = 0): "
                    "R is judged at the full profile (SF 1)", profile, reason=SCALE)
    holds = s_ok and not flat
    return _row("fig3", "Fig. 3", claim, holds, float(table["R"].min()), detail, profile)


def fig4_check(split: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Check 12, second half: at 8 or more batches the total cost exceeds the single batch's."""
    claim = ("Fig. 4 / check 12: the cost of k equal batches over the single-batch cost grows with k; at k ≥ 8 it "
             "exceeds 1 for every query (Q10 ≈ 6× at 60 batches in the paper).")
    many = split[split["k"] >= 8]
    if many.empty:
        return _row("fig4", "Fig. 4", claim, None, math.nan,
                    f"no batch count ≥ 8 divides P = {int(split['parts'].iloc[0])}", profile, reason=SCALE)
    worst = many.loc[many["relative"].idxmin()]
    detail = "; ".join(f"{q}: ×{g.loc[g['k'].idxmax(), 'relative']:.2f} at k = {int(g['k'].max())}"
                       for q, g in split.groupby("query", sort=False))
    return _row("fig4", "Fig. 4", claim, bool((many["relative"] > 1).all()), float(worst["relative"] - 1),
                detail, profile)


#: Fig. 4's printed numbers, all at this many equal batches (paper sec. 6, the text beside Fig. 4).
FIG4_BATCHES = 60
#: Q10's cost over its single batch ("almost 6 times") and CQ2's over CQ1's ("2.7 times").
PAPER_FIG4_RATIOS = {"Q10": 6.0, "CQ2/CQ1": 2.7}
#: The final aggregation over 60 partials ("approximately 3 and 7"; the paper prints no unit).
PAPER_FIG4_AGG = {"CQ3": 3.0, "CQ4": 7.0}
#: "About x" holds within [x / BAND, x·BAND]: the widest factor that keeps the paper's own two
#: aggregation numbers apart (√(7/3) ≈ 1.53, rounded down). The figure itself is not in the
#: text, so no tolerance can be read off its axis; the paper's numbers are single runs.
BAND = 1.5
#: The reading of a verdict that takes Fig. 4's unit-less aggregation costs as seconds (ours).
AGG_SECONDS = "AggCost in seconds"
#: Check 13: a wider trigger interval may cost at most this much more than a narrower one.
INTERVAL_TOLERANCE = 0.15


def band_margin(value: float, paper: float) -> float:
    """How far ``value`` lies inside the band ``[paper / BAND, paper·BAND]``, relative to its
    nearer edge: >= 0 inside, < 0 outside (``value`` > 0)."""
    return min(value * BAND / paper, paper * BAND / value) - 1


def fig4_number_checks(split: pd.DataFrame, aggregation: pd.DataFrame, profile: str,
                       scale: float) -> list[dict[str, Any]]:
    """Fig. 4's numbers at 60 batches: Q10 ≈ 6× its single batch, CQ2 2.7× CQ1, and AggCost(60)
    ≈ 3 for CQ3 and ≈ 7 for CQ4, each "about" as :data:`BAND` says. ``split``: the
    ``intermittent-spark-split`` rows with ``relative`` (cost over the query's k = 1 cost);
    ``aggregation``: calibration's ``aggregate`` rows (``size`` partials, median ``seconds``),
    AggCost(60) interpolated linearly between the measured counts around 60 (32 and 64).

    Judged only where the profile runs the query at k = 60 (P a multiple of 60) or measures its
    aggregation up to 60 partials, else undecided (scale). And only at SF 1: the paper's 25 GB of
    orders and lineitem on 48 cores is about as much data per core as SF 1 (≈ 1 GB) on this
    machine's 2, and so is a batch of the 60-batch split (13-15 K orders per core). Below, a
    batch is Spark's fixed overhead whatever it holds, so every ratio tends to the ratio of batch
    counts (Q10's to ≈ 60, CQ2 over CQ1 to ≈ 1) and every aggregation is its overhead: the ratios
    and the seconds are both shown and undecided (scale) there. The aggregation costs are read as
    seconds, the unit of the paper's other costs (reading :data:`AGG_SECONDS`); its group counts
    (360 K and 1.5 M) are not TPC-H's at any one SF, so the detail gives this SF's."""
    at = split[split["k"] == FIG4_BATCHES].set_index("query")

    def ratio(names: tuple[str, ...]) -> tuple[float, str]:
        absent = [q for q in names if q not in at.index]
        if absent:
            return math.nan, (f"P = {int(split['parts'].iloc[0])} parts have no {FIG4_BATCHES} equal batches"
                              if at.empty else f"this profile does not run {' and '.join(absent)} at k = {FIG4_BATCHES}")
        if len(names) == 1:
            return float(at.loc[names[0], "relative"]), ""
        return float(at.loc[names[0], "seconds"] / at.loc[names[1], "seconds"]), ""

    q10, q10_missing = ratio(("Q10",))
    cq, cq_missing = ratio(("CQ2", "CQ1"))
    rows = [_about("fig4-q10", "Fig. 4: Q10 processed in 60 equal batches costs almost 6× its single batch",
                   q10, PAPER_FIG4_RATIOS["Q10"], "×", q10_missing, profile, scale),
            _about("fig4-cq2", "Fig. 4: at 60 batches CQ2 costs 2.7× CQ1 (the same tuples and batches, more groups)",
                   cq, PAPER_FIG4_RATIOS["CQ2/CQ1"], "×", cq_missing, profile, scale)]
    groups = {"CQ3": f"{10_000 * scale:,.0f} suppliers at SF {scale:g}, the paper ≈ 360 K groups",
              "CQ4": f"{200_000 * scale:,.0f} parts at SF {scale:g}, the paper ≈ 1.5 M groups"}
    for query, paper in PAPER_FIG4_AGG.items():
        seconds, missing = _agg_at(aggregation, query)
        rows.append(_about(f"fig4-agg-{query.lower()}",
                           f"Fig. 4: {query}'s final aggregation over 60 partials costs about {paper:g} "
                           "(the paper prints no unit: read as seconds)",
                           seconds, paper, " s", missing, profile, scale, note=groups[query], reading=AGG_SECONDS))
    return rows


def _agg_at(aggregation: pd.DataFrame, query: str) -> tuple[float, str]:
    """``query``'s aggregation seconds over :data:`FIG4_BATCHES` partials, linear between the
    measured counts around it, and "" (else NaN and why not)."""
    mine = aggregation[aggregation["query"] == query].sort_values("size")
    if mine.empty:
        return math.nan, f"this profile does not calibrate {query}"
    if int(mine["size"].max()) < FIG4_BATCHES:
        return math.nan, f"{query}'s aggregation is measured up to {int(mine['size'].max())} partials only"
    return float(np.interp(FIG4_BATCHES, mine["size"], mine["seconds"])), ""


def _about(check: str, claim: str, value: float, paper: float, unit: str, missing: str, profile: str,
           scale: float, note: str = "", reading: str = PAPER) -> dict[str, Any]:
    """The verdict on "``value`` is about ``paper``" (:data:`BAND`), undecided (scale) when
    ``missing`` says why it was not measured or below SF 1."""
    low, high = paper / BAND, paper * BAND
    claim = f"{claim}, judged within a factor of {BAND:g} ({low:.3g}{unit} to {high:.3g}{unit})."
    if missing:
        return _row(check, "Fig. 4", claim, None, math.nan, missing, profile, reason=SCALE, reading=reading)
    margin = band_margin(value, paper)
    detail = f"{value:.3g}{unit} (paper {paper:g}{unit})" + (f"; {note}" if note else "")
    if scale < 1:
        return _row(check, "Fig. 4", claim, None, margin,
                    f"{detail}. At SF {scale:g} a batch or a merge costs Spark's fixed overhead whatever it holds: "
                    "judged at SF 1, where a core holds about the paper's data per core", profile, reason=SCALE,
                    reading=reading)
    return _row(check, "Fig. 4", claim, margin >= 0, margin, detail, profile, reading=reading)


def table2_check(split: pd.DataFrame, profile: str, scale: float) -> dict[str, Any]:
    """Table 2's file-based row: CQ3 and CQ4 (≈360K and 1.5M groups) cost more than CQ1 and CQ2.
    Every profile runs the four single batches; below SF 1 their groups are too few to outweigh
    a batch's fixed overhead (at SF 0.01 all four cost ≈ 0.4 s, their order noise), so the numbers
    are shown and the claim is judged at the full profile, as Fig. 3's R is."""
    claim = ("Table 2 (file-based, one batch): CQ3 and CQ4 cost more than CQ1 and CQ2 "
             "(17.9, 18.9, 32.0, 32.5 s at the paper's scale).")
    single = split[split["k"] == 1].set_index("query")["seconds"]
    missing = [q for q in PAPER_TABLE2 if q not in single.index]
    if missing:
        return _row("table2", "Table 2", claim, None, math.nan,
                    f"this profile does not run {', '.join(missing)}", profile, reason=SCALE)
    margin = float(min(single["CQ3"], single["CQ4"]) - max(single["CQ1"], single["CQ2"]))
    detail = ", ".join(f"{q} {single[q]:.2f} s (paper {PAPER_TABLE2[q]:g})" for q in PAPER_TABLE2)
    if scale < 1:
        return _row("table2", "Table 2", claim, None, margin,
                    f"{detail}. At SF {scale:g} a single batch costs mostly Spark's fixed overhead whatever its "
                    "groups: judged at the full profile (SF 1)", profile, reason=SCALE)
    return _row("table2", "Table 2", claim, margin > 0, margin, detail, profile)


def streaming_ratios(stream: pd.DataFrame, split: pd.DataFrame) -> pd.DataFrame:
    """Fig. 5's frame: each streaming row with its cost over the query's single-batch cost."""
    single = split[split["k"] == 1].set_index("query")["seconds"]
    out = stream.copy()
    out["single_batch_seconds"] = out["query"].map(single)
    out["ratio"] = out["cost_seconds"] / out["single_batch_seconds"]
    return out


def fig5_check(ratios: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Fig. 5: streaming costs more than the single batch at every interval, and check 13: the
    default (1 file per trigger) costs more than the single batch."""
    claim = ("Fig. 5 / check 13: Structured Streaming costs more than the single batch at every interval (the best "
             "case, Q14 one-shot, is 1.76×); 1 file per trigger costs most.")
    ok = ratios[ratios["status"] == "ok"]
    refused = ratios[ratios["status"] != "ok"]
    if ok.empty:
        return _row("fig5", "Fig. 5", claim, None, math.nan, "no streaming run gave a result", profile, reason=SCALE)
    best = ok.loc[ok["ratio"].idxmin()]
    default_worst = all(g.loc[g["trigger"] == "default", "ratio"].max() >= g["ratio"].max() - 1e-12
                        for _, g in ok.groupby("query") if (g["trigger"] == "default").any())
    holds = bool((ok["ratio"] > 1).all()) and default_worst
    detail = (f"lowest ratio ×{best['ratio']:.2f} ({best['query']}, {best['trigger']}); default the costliest trigger "
              f"for every query: {default_worst}; {len(refused)} runs unsupported or failed"
              + (f" ({', '.join(f'{r.query} {r.trigger}: {r.status}' for r in refused.itertuples())})" if len(refused) else ""))
    return _row("fig5", "Fig. 5", claim, holds, float(best["ratio"] - 1), detail, profile)


def fig5_interval_check(ratios: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Check 13, second half (Fig. 5: "the computation cost decreases as the batch interval
    increases"): per streamed query, the runs that gave a result ordered by files per trigger
    (one-shot, no limit, last), each costs at most :data:`INTERVAL_TOLERANCE` more than the
    cheapest run at a shorter interval (so small rises cannot add up along the grid). The margin
    is the tolerance less the worst relative increase (>= 0 when it holds); a query with fewer
    than two results is not judged, and with none judged the verdict is undecided (scale)."""
    claim = (f"Fig. 5 / check 13: a query's streaming cost does not increase (within {INTERVAL_TOLERANCE:.0%}) as the "
             "trigger interval grows (default, 5, 10, 30, 40 min, one-shot).")
    ok = ratios[ratios["status"] == "ok"]
    parts, worst = [], -math.inf
    for query, runs in ok.groupby("query", sort=False):
        runs = runs.assign(order=runs["trigger"].map({t: i for i, t in enumerate(TRIGGERS)}))
        runs = runs.sort_values(["files_per_trigger", "order"], na_position="last")
        costs = runs["cost_seconds"].to_numpy(dtype=float)
        if len(costs) < 2:
            continue
        rises = costs[1:] / np.minimum.accumulate(costs[:-1]) - 1
        at = int(np.argmax(rises))
        worst = max(worst, float(rises[at]))
        steps = " → ".join(f"{t} {c:.2f} s" for t, c in zip(runs["trigger"], costs))
        parts.append(f"{query}: {steps}; worst increase {rises[at]:+.0%} (at {runs['trigger'].iloc[at + 1]})")
    if not parts:
        return _row("fig5-interval", "Fig. 5", claim, None, math.nan,
                    "no query gave a result at two triggers or more", profile, reason=SCALE)
    margin = INTERVAL_TOLERANCE - worst
    return _row("fig5-interval", "Fig. 5", claim, margin >= 0, margin,
                f"{'; '.join(parts)}; worst relative increase {worst:+.1%} against a tolerance of "
                f"{INTERVAL_TOLERANCE:.0%} (the margin is their difference)", profile)


def streaming_results_check(ratios: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Every streaming run that gives a result gives the batch result."""
    claim = "Streaming results: every run that Spark completes equals the batch result (decimals exactly)."
    ok = ratios[ratios["status"] == "ok"]
    wrong = ok[ok["equal_to_batch"] != True]  # noqa: E712 - object column of booleans
    detail = (f"{len(ok)} runs with a result, {len(wrong)} differ"
              + (": " + "; ".join(f"{r.query} {r.trigger}: {r.difference}" for r in wrong.itertuples()) if len(wrong) else ""))
    return _row("stream-equal", "Fig. 5", claim, None if ok.empty else wrong.empty, -float(len(wrong)), detail, profile,
                reason=SCALE)


def _upper_median(values: pd.Series) -> float:
    """The value at least half of ``values`` reach or exceed (an observed value; NaN if none)."""
    known = sorted(values.dropna())
    return float(known[len(known) // 2]) if known else math.nan


def _median(values: pd.Series) -> float:
    """The median of the known ``values`` (NaN, without a warning, when none is known)."""
    known = values.dropna()
    return float(known.median()) if len(known) else math.nan


def by_plan(frame: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    """One row per plan (the ``keys`` its repetitions share) of hybrid rows: the first
    repetition's other columns, and over its repetitions their number (``repetitions``), the
    deadlines missed beyond the tolerance in at least half of them (``misses``, the upper median
    of ``late_beyond_tolerance``), the repetitions with such a miss (``late_runs``), the median
    and the largest ``lateness`` (``worst_lateness``) and their range (``spread``), and the medians of ``completion``,
    ``measured_cost`` and ``batches``. ``strict_misses`` keeps the upper median of the raw
    misses (any overrun)."""
    rows = []
    for _, runs in frame.groupby(list(keys), sort=False, dropna=False):
        row = runs.iloc[0].to_dict()
        row.update(repetitions=len(runs), misses=_upper_median(runs["late_beyond_tolerance"]),
                   strict_misses=_upper_median(runs["misses"]),
                   late_runs=int((runs["late_beyond_tolerance"] > 0).sum()),
                   lateness=_median(runs["lateness"]), worst_lateness=float(runs["lateness"].max()),
                   spread=float(runs["lateness"].max() - runs["lateness"].min()),
                   completion=_median(runs["completion"]), measured_cost=_median(runs["measured_cost"]),
                   batches=_upper_median(runs["batches"]))
        rows.append(row)
    return pd.DataFrame(rows, columns=[*frame.columns, "repetitions", "strict_misses", "late_runs", "worst_lateness",
                                       "spread"])


def repetitions_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The executed repetitions of hybrid rows with a ``plan`` label (``CQ2 f=0.4``, ``LLF ρ=0.4``),
    for the lateness distribution."""
    ran = frame[frame["status"] == "ok"].copy()
    ran["plan"] = [_plan_label(r) for r in ran.itertuples()]
    return ran


def _too_few(plans: pd.DataFrame) -> str:
    """Why ``plans`` cannot be judged ("" when every executed one has enough repetitions)."""
    few = plans[(plans["status"] == "ok") & (plans["repetitions"] < MIN_REPETITIONS)]
    if few.empty:
        return ""
    return (f"{len(few)} executed plans rest on fewer than {MIN_REPETITIONS} repetitions "
            f"(as few as {int(few['repetitions'].min())}): not judged")


def multi_table(ratios: pd.DataFrame, hybrid: pd.DataFrame, runs: dict[str, tuple[str, ...]]) -> pd.DataFrame:
    """Per run: Σ streaming cost at default and 10 min (its queries one after another) against the
    measured cost of LLF with MinBatch at ρ = 1, δRSF = 50 % (planned on the fits, no margin;
    the median over its repetitions), and the ratios."""
    hybrid = by_plan(_planned_with(hybrid, "none"), MULTI_PLAN)
    rows = []
    for run, names in runs.items():
        llf = hybrid[(hybrid["scheme"] == "llf") & (hybrid["queries"] == ",".join(names)) & (hybrid["rho"] == 1.0)]
        row: dict[str, Any] = {"run": run, "queries": ", ".join(names),
                               "llf_seconds": float(llf["measured_cost"].iloc[0]) if len(llf) else math.nan,
                               "llf_batches": int(llf["batches"].iloc[0]) if len(llf) else 0,
                               "llf_repetitions": int(llf["repetitions"].iloc[0]) if len(llf) else 0}
        for trigger in ("default", "10min"):
            mine = ratios[ratios["query"].isin(names) & (ratios["trigger"] == trigger)]
            complete = len(mine) == len(names) and (mine["status"] == "ok").all()
            row[f"streaming_{trigger}_seconds"] = float(mine["cost_seconds"].sum()) if complete else math.nan
            row[f"streaming_{trigger}_micro_batches"] = int(mine["micro_batches"].fillna(0).sum())
            row[f"ratio_{trigger}"] = row[f"streaming_{trigger}_seconds"] / row["llf_seconds"]
        rows.append(row)
    return pd.DataFrame(rows)


def multi_check(table: pd.DataFrame, profile: str, scale: float) -> dict[str, Any]:
    """The multi-query claim as a direction: streaming costs more than LLF, more at the default
    trigger than at 10 minutes; the paper's 60× and 12× stated beside this machine's ratios."""
    claim = ("Multi-query runs: streaming costs 60× CQS LLF (δRSF = 50 %) at the default interval and 12× at 10 min; "
             "judged as a direction (both > 1, default > 10 min), the paper's factors belong to its scale.")
    valid = table.dropna(subset=["ratio_default", "ratio_10min"])
    if valid.empty:
        return _row("multi", "Multi-query", claim, None, math.nan, "no run has both streaming costs and LLF", profile,
                    reason=SCALE)
    holds = bool(((valid["ratio_default"] > valid["ratio_10min"]) & (valid["ratio_10min"] > 1)).all())
    detail = "; ".join(f"{r.run}: ×{r.ratio_default:.1f} default ({r.streaming_default_micro_batches} micro-batches), "
                       f"×{r.ratio_10min:.1f} at 10 min ({r.streaming_10min_micro_batches}), against LLF's "
                       f"{r.llf_batches} batches" for r in valid.itertuples())
    detail += (f" (paper ×60 and ×12). At SF {scale:g} a file holds few rows, so both sides pay mostly Spark's fixed "
               "overhead per (micro-)batch (planning, scheduling, the state checkpoint) and the ratio tends to the ratio "
               "of their batch counts; the paper's factors come from the per-row and state work that grows with its "
               "SF ≈ 25 and 4500 files.")
    return _row("multi", "Multi-query", claim, holds, float((valid["ratio_10min"] - 1).min()), detail, profile)


def _planned_with(frame: pd.DataFrame, margin: str) -> pd.DataFrame:
    """The hybrid rows planned under ``margin`` (all rows of a frame without the column)."""
    return frame[frame["margin"] == margin] if "margin" in frame else frame


#: Each planning margin's check-id suffix and words in the claim.
_MARGIN_WORDS = {"none": ("", "the paper's plan, on the fits as measured"),
                 "median": ("-median", "planned on each fit scaled to cover its calibration medians"),
                 "slowest": ("-slowest", "planned on each fit scaled to cover its slowest calibration runs")}


def hybrid_fig6_check(frame: pd.DataFrame, profile: str, margin: str = "none") -> dict[str, Any]:
    """Fig. 6 in hybrid mode: every deadline met by Algorithm 1's plan with the measured durations,
    judged where some plan can meet it (``possible``: ``D - we >= min(Cost(N), Cost(1) +
    AggCost(2))``, a necessary condition for any scheme), among the rows planned under ``margin``
    (:data:`staleness_lab.experiments.intermittent.hybrid.MARGINS`), a plan's misses over its
    repetitions as :data:`LATE_RULE` says. With a margin, a deadline the scaled model cannot meet
    is declined (no plan), not a miss; the detail counts them."""
    suffix, how = _MARGIN_WORDS[margin]
    claim = (f"Fig. 6 (hybrid): one query alone meets every deadline D = we + f·Cost(N); Algorithm 1 plans ({how}) "
             "and Spark's measured durations decide.")
    frame = by_plan(_planned_with(frame, margin), FIG6_PLAN)
    impossible = frame[~frame["possible"].astype(bool)]
    judged = frame[frame["possible"].astype(bool)]
    planned = judged[judged["status"] == "ok"]
    late, straddling = _late(planned), _straddling(planned)
    unplanned = judged[judged["status"] != "ok"]
    parts = [f"{len(planned)} plans executed {_runs(planned)}, {len(late)} late"
             + (" (" + ", ".join(f"{r.query} f={r.f:g} by {r.lateness:.3f} s, late in {r.late_runs} of {r.repetitions}"
                                 for r in late.itertuples()) + ")" if len(late) else "")
             + _near_misses(planned) + f"; {LATE_RULE}"]
    if len(unplanned):
        parts.append(("Algorithm 1 found no plan for " if margin == "none" else "declined under the margin: ")
                     + ", ".join(f"{r.query} f={r.f:g}" for r in unplanned.itertuples()))
    if len(impossible):
        parts.append(f"{len(impossible)} deadlines no scheme can meet at this scale, not judged: "
                     + ", ".join(f"{r.query} f={r.f:g}" for r in impossible.itertuples())
                     + " (the last batch alone, Cost(1) plus the merge, outlasts f·Cost(N) when the overhead S dominates)")
    slack = float((planned["deadline"] - planned["completion"]).min()) if len(planned) else math.nan
    if margin == "none":
        holds = None if judged.empty else late.empty and unplanned.empty
    else:
        holds = None if planned.empty else late.empty
    if holds and len(straddling):
        holds = None
    below = _below_sf1(frame, margin)
    if below:
        holds = None
        parts.append(below)
    few = _too_few(judged)
    if few:
        holds = None
        parts.append(few)
    return _row("hybrid-fig6" + suffix, "Fig. 6", claim, holds, slack, "; ".join(parts), profile, reason=SCALE)


def _runs(plans: pd.DataFrame) -> str:
    """``(5 runs each)``, or the range of repetitions."""
    counts = plans["repetitions"]
    if counts.empty:
        return "(no runs)"
    low, high = int(counts.min()), int(counts.max())
    return f"({low} runs each)" if low == high else f"({low}-{high} runs each)"


def _noisy(plans: pd.DataFrame) -> pd.Series:
    """Per plan, whether its repetitions' lateness varies by more than its tolerance: the
    measurement then cannot place it on either side (:data:`LATE_RULE`)."""
    deadline = plans["deadline"] if "deadline" in plans else plans["last_deadline"]
    return plans["spread"] > deadline.map(tolerance)


def _late(plans: pd.DataFrame) -> pd.DataFrame:
    """The plans late beyond the tolerance in every repetition, within their tolerance of one
    another (:data:`LATE_RULE`)."""
    return plans[(plans["late_runs"] > 0) & (plans["late_runs"] == plans["repetitions"]) & ~_noisy(plans)]


def _straddling(plans: pd.DataFrame) -> pd.DataFrame:
    """The plans late beyond the tolerance in some repetitions but not all, or whose runs vary by
    more than the tolerance (:data:`LATE_RULE`)."""
    mixed = (plans["late_runs"] > 0) & (plans["late_runs"] < plans["repetitions"])
    return plans[mixed | (_noisy(plans) & (plans["late_runs"] > 0))]


def _near_misses(plans: pd.DataFrame) -> str:
    """The plans whose repetitions straddle the tolerance, named with how many were late."""
    near = _straddling(plans)
    if near.empty:
        return ""
    return "; straddling the tolerance (undecided): " + ", ".join(
        f"{_plan_label(r)} ({r.late_runs} of {r.repetitions}, worst {r.worst_lateness:.3f} s)" for r in near.itertuples())


def _plan_label(r: Any) -> str:
    """A hybrid plan as the details name it: ``Q1 f=0.4`` or ``LLF ρ=0.4``."""
    return f"{r.query} f={r.f:g}" if hasattr(r, "f") else f"{r.scheme.upper()} ρ={r.rho:g}"


def hybrid_fig7_check(frame: pd.DataFrame, profile: str, margin: str = "none") -> dict[str, Any]:
    """Fig. 7 in hybrid mode: EDF and LLF miss only at the tightest ρ (0.1), among the rows
    planned under ``margin``, a plan's misses over its repetitions as :data:`LATE_RULE` says.
    Without a margin it is judged where the cost model itself plans no miss above 0.1D (the
    paper's regime: MinBatch not capped); with one, the scaled model's planned misses are the
    margin's pessimism, not the regime, and the measured misses decide."""
    suffix, how = _MARGIN_WORDS[margin]
    claim = f"Fig. 7 (hybrid): EDF and LLF miss deadlines only at 0.1D, with Spark's measured durations ({how})."
    frame = by_plan(_planned_with(frame, margin), MULTI_PLAN)
    if frame.empty:
        return _row("hybrid-fig7" + suffix, "Fig. 7", claim, None, math.nan,
                    "this profile runs no plan under this margin (the full profile does)", profile, reason=SCALE)
    mine = frame[frame["scheme"].isin(["edf", "llf"])]
    loose = mine[mine["rho"] > 0.1]
    detail = "; ".join(f"{r.scheme.upper()} at ρ {r.rho:g}: {_count(r.misses)} missed (planned {_count(r.planned_misses)}, "
                       f"late in {r.late_runs} of {r.repetitions} runs)" for r in mine.itertuples())
    detail += f"; {LATE_RULE}"
    few = _too_few(mine)
    if few:
        return _row("hybrid-fig7" + suffix, "Fig. 7", claim, None, math.nan, f"{detail}; {few}", profile, reason=SCALE)
    flagged = sorted({q for f in frame["minbatch_flagged"] for q in str(f).split(",") if q})
    if margin == "none" and len(loose) and (loose["planned_misses"] > 0).any():
        c_max = float(frame["c_max"].iloc[0])
        return _row("hybrid-fig7" + suffix, "Fig. 7", claim, None, math.nan,
                    f"{detail}. The cost model itself misses above 0.1D: at this scale one file costs more than "
                    f"C_max = {c_max:.3g} s for {', '.join(flagged) or 'no query'} (MinBatch flagged), so every batch "
                    "pays the overhead; the paper's regime (R·N ≫ S) is not reached", profile, reason=SCALE)
    late = _late(loose)
    holds = None if mine.empty or (late.empty and len(_straddling(loose))) else late.empty
    detail += _near_misses(loose)
    below = _below_sf1(frame, margin)
    if below:
        holds, detail = None, f"{detail}; {below}"
    return _row("hybrid-fig7" + suffix, "Fig. 7", claim, holds, -float(len(late)), detail, profile, reason=SCALE)


#: The planning margins whose plans are judged at SF 1 only (:func:`_below_sf1`).
SF1_ONLY_MARGINS = ("none", "median")


def _below_sf1(frame: pd.DataFrame, margin: str) -> str:
    """Why plans made on the fits as measured, or scaled to cover only their calibration medians,
    are not judged below SF 1, or ``""``: their deadlines are seconds away, the tolerance (10 ms)
    is within Spark's run-to-run jitter, and whether such a plan is late changed between two runs
    of one commit (Fig. 6's zero-slack plans in one session, Fig. 7's LLF at ρ = 1 in the next,
    Fig. 6's median-margin plan for Q3 at f = 1, 0.137 s late in one of five runs, in a third).
    Plans under the slowest margin keep their slack and are judged at every scale."""
    if margin not in SF1_ONLY_MARGINS or "scale" not in frame or frame.empty or float(frame["scale"].max()) >= 1:
        return ""
    what = "the fits as measured" if margin == "none" else "fits scaled to their calibration medians"
    return (f"plans on {what} are judged at SF 1 only: at SF {float(frame['scale'].max()):g} a deadline "
            "is seconds away and the tolerance (10 ms) is within Spark's run-to-run jitter, so whether such a plan is "
            "late changed between two runs of one commit")


def _count(value: float) -> str:
    """A count of misses, ``-`` when the plan was not executed."""
    return "-" if pd.isna(value) else str(int(value))


def hybrid_checks(fig6: pd.DataFrame, multi: pd.DataFrame, profile: str) -> list[dict[str, Any]]:
    """The verdicts on executed plans: Fig. 6 under every margin, Fig. 7 under each of
    :data:`~staleness_lab.experiments.intermittent.hybrid.MULTI_MARGINS`, then checks 9 and 11."""
    return ([hybrid_fig6_check(fig6, profile, m) for m in MARGINS]
            + [hybrid_fig7_check(multi, profile, m) for m in MULTI_MARGINS]
            + [executed_check([fig6, multi], profile)])


def executed_check(frames: list[pd.DataFrame], profile: str) -> dict[str, Any]:
    """Checks 9 and 11 on executed plans: part 1's invariants hold with measured durations and
    every query's merged result equals its one-shot reference."""
    claim = ("Executed plans (checks 9, 11): every plan run on Spark keeps part 1's invariants and its partials "
             "merge to the one-shot result.")
    rows = pd.concat([f[f["status"] == "ok"] for f in frames], ignore_index=True)
    bad = rows[(rows["violations"] > 0) | (rows["wrong_results"] != "")]
    detail = f"{len(rows)} executions of plans, {len(bad)} broken" + (
        ": " + "; ".join(f"violations {int(r.violations)}, wrong {r.wrong_results}" for r in bad.itertuples())
        if len(bad) else "")
    return _row("executed", "Checks 9, 11", claim, None if rows.empty else bad.empty, -float(len(bad)), detail, profile,
                reason=SCALE)


def summary_line(table: pd.DataFrame, profile: str) -> str:
    """One line for the report index (:func:`staleness_lab.experiments.verdicts.summary_line`)."""
    return shared_summary_line(table, profile, subject="Spark checks of Chandrasekaran & Sudarshan")
