"""Computed verdicts for Chandrasekaran & Sudarshan: the digest's acceptance checks 1-10 (its §9,
with corrections 1-3) and each figure's claim, in :mod:`staleness_lab.experiments.verdicts`' record format::

    check    "1".."10", "fig6a", "fig7", ...
    figure   what it is about ("E1", "Fig. 7", ...)
    claim    the claim and its threshold, in one sentence
    verdict  holds / differs; undecided with a reason when the data cannot decide (``synthetic
             costs``, ``scale``: a sweep not run, ``budget``: CP-SAT proved no plan optimal);
             ``finding`` for C1 (Algorithm 1 is not optimal: digest correction 1, confirmed)
    reason   why undecided, else ""
    reading  the cost set a figure's verdict was computed under (``synthetic costs`` or
             ``measured SF 1 fits``, :func:`~staleness_lab.experiments.intermittent.sweeps.cost_sets`);
             "paper" for the worked examples and the random instances, which carry their own costs
    margin   the binding slack (>= 0 when it holds) in the units ``detail`` names, NaN if none
    detail   every measured quantity the verdict rests on
    profile  the profile of the data ("live" for the worked examples)

Checks 1-8 and 10 recompute the worked examples now (exact Fractions; CP-SAT for 4 and 10);
check 9 and the figure claims read the sweeps of :mod:`staleness_lab.experiments.intermittent.sweeps`.
A claim that does not hold differs; nothing here loosens a threshold.

**Two cost sets, one row each** (:func:`sweep_checks`). Every figure of Figs. 6-11 is run on the
synthetic set and on the measured fits, and each of its verdicts appears once per cost set, its
label carrying the cost set (``fig7 (measured SF 1 fits)``, ``fig7 (synthetic costs)``) and its
``reading`` naming it. One row per cost set rather than one judged row with the synthetic
result in its detail: the two sets are two experiments (the paper's window of 4500 files at its
load, and the measured window of 900 parts at the paper's load), a claim can hold on one and
differ on the other, and a reader filtering the claims ledger by verdict or reading should meet
each result as a row of its own, not inside another row's sentence. The label keeps the ledger's
links distinct. Where the paper's claim rests on its measured TPC-H costs, which it does not
publish (Fig. 6's batch counts per query; Figs. 7, 10 and 11, whose cells differ only by SJF's
misses: digest, third-round correction 3), the synthetic set cannot decide it: its row is
``undecided (synthetic costs)``, what it would have said kept in the detail, and the measured
fits' row judges it. Fig. 6's deadlines, Fig. 7's infeasibility at 0.1D (C7 and the optimum)
and Fig. 8 are judged under both: the synthetic set was built on the numbers they rest on
(Σ Cost(N) ≈ 640 s, MinBatch sizes). Check 9 (every plan sound) and the rows on random
instances (Algorithm 1's loss, the optimum) carry their own costs: one row each, reading
"paper", the Fig. 6 losses of both cost sets in C1's detail. On measured fits, a run whose plan
merges more partials than calibration timed says so in the detail (AggCost extrapolated on its
fitted line; sweeps' module docstring, "Scale").

**What the measured scale cannot decide.** At SF 1 a batch's fixed overhead is a far larger
share of Cost(N) than at the paper's scale, so the tightest deadlines can leave less time after
the window than one part and the merge take. Where a claim fails on the measured fits only
there, it is undecided (scale), the cases named: Fig. 6's cases the exact optimum proves to
have no plan (:func:`fig6_checks`), and Figs. 7, 10 and 11's misses at deadlines where the
necessary condition C7 fails in most seeds (:func:`_forced`). Anything else that fails differs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.experiments.intermittent.sweeps import SYNTHETIC_READING, random_single_query, single_query
from staleness_lab.experiments.verdicts import BUDGET, COLUMNS, LIVE, SCALE, SYNTHETIC_COSTS, erratum
from staleness_lab.experiments.verdicts import summary_line as shared_summary_line
from staleness_lab.experiments.verdicts import verdict_row as _row
from staleness_lab.intermittent import AggCost, QuerySet, load_queryset
from staleness_lab.intermittent.deadlines import a5_deadlines, c7, with_deadlines
from staleness_lab.intermittent.dispatch import POLICIES, dispatch
from staleness_lab.intermittent.minbatch import find_min_batch
from staleness_lab.intermittent.single import algorithm1, exact

F = Fraction
E5_FILE = "data/intermittent/e5.yaml"
SYNTHETIC_NOTE = " (synthetic costs: the paper publishes no cost curves)"
#: Why Figs. 7, 10 and 11 are undecided on the synthetic set (digest, third-round correction 3).
NO_FITS = ("undecided on synthetic costs: these figures' misses (SJF's alone separate their cells) and batch sizes "
           "follow the cost curves; the measured fits' row judges them (costmodels, on by default)")
#: Beside every verdict on the variable rates (digest, third-round correction 3).
VR_NOTE = "; the VR1-VR4 rate curves are ours (the paper prints none, Fig. 9 only draws them)"


def _triples(plan: Any) -> list[tuple[Fraction, Fraction, int]]:
    return [(s.start, s.end, s.size) for s in plan.steps if s.kind == "batch"]


def e5(rho: Any = "0.4") -> QuerySet:
    """Digest E5 with A5's deadlines at ``rho`` (order A, B, C)."""
    from staleness_lab.notebook_params import repo_file

    return with_deadlines(load_queryset(repo_file(E5_FILE)), F(rho), order=[0, 1, 2])


# -- the worked examples ---------------------------------------------------------------------------


def check1() -> dict[str, Any]:
    q = single_query(10, 5, 3, 50).queries[0]
    one, two = q.total_cost([10]), q.total_cost([5, 5])
    ok = (one, two) == (35, 40)
    return _row("1", "E2 (Fig. 1)", "Cost = S + R·x with S = 5, R = 3: one batch of 10 costs 35, two of 5 cost 40.",
                ok, 0.0 if ok else -abs(float(one - 35)) - abs(float(two - 40)), f"one batch {one}, two batches {two}")


E1_EXPECTED = {
    16: [(11, 16, 10)], 15: [(10, 15, 10)], 12: [(7, 10, 6), (10, 12, 4)], 11: [(6, 8, 4), (8, 10, 4), (10, 11, 2)],
}


def check2() -> dict[str, Any]:
    wrong = []
    for deadline, expected in E1_EXPECTED.items():
        got = _triples(algorithm1(single_query(10, 0, F(1, 2), deadline)))
        if got != [(F(a), F(b), c) for a, b, c in expected]:
            wrong.append(f"D = {deadline}: {[(float(a), float(b), c) for a, b, c in got]}")
    return _row("2", "E1", "Algorithm 1 reproduces the paper's four cases exactly (times and sizes, exact arithmetic).",
                not wrong, 0.0 if not wrong else -len(wrong), "all four rows exact" if not wrong else "; ".join(wrong))


E3_EXPECTED = {
    "1": ([(100, 122, 100)], 22), "0.5": ([("85.4", 100, 63), (100, "109.4", 37)], "25.5"),
    "0.3": ([("78.6", 87, 32), (87, 100, 55), (100, "104.6", 13)], 28),
    "0.25": ([("77.4", 93, 68), (93, 100, 25), (100, "103.4", 7)], 28),
}


def check3() -> dict[str, Any]:
    agg = AggCost(a0=F(1, 2), a1=F(1, 2))
    wrong = []
    for f, (expected, total) in E3_EXPECTED.items():
        plan = algorithm1(single_query(100, 2, F(1, 5), 100 + F(f) * 22, agg))
        if _triples(plan) != [(F(a), F(b), c) for a, b, c in expected] or plan.total_cost != F(total):
            wrong.append(f"f = {f}: {plan.status} {[(float(a), float(b), c) for a, b, c in _triples(plan)]}")
    tight = single_query(100, 2, F(1, 5), 100 + F("0.2") * 22, agg)
    heuristic, optimum = algorithm1(tight), exact(tight)
    if heuristic.status != "no-plan" or optimum.status != "infeasible":
        wrong.append(f"f = 0.2: algorithm1 {heuristic.status}, exact {optimum.status}")
    return _row("3", "E3", "Algorithm 1 with the aggregation loop reproduces E3 (batches, times, totals 22, 25.5, 28, 28); "
                "at f = 0.2 it stops with no plan and the exact DP proves it infeasible.",
                not wrong, 0.0 if not wrong else -len(wrong), "every row exact" if not wrong else "; ".join(wrong))


def check4(instances: int = 30, seed: int = 2021) -> dict[str, Any]:
    """Superseded by correction 1: CP-SAT equals the exact DP and is never costlier than Algorithm 1."""
    from staleness_lab.optimize.batch_plan import optimal_plan

    cases = [single_query(10, 0, F(1, 2), d) for d in (16, 15, 12, 11)]
    agg = AggCost(a0=F(1, 2), a1=F(1, 2))
    cases += [single_query(100, 2, F(1, 5), 100 + F(f) * 22, agg) for f in ("1", "0.5", "0.3", "0.25")]
    cases += [random_single_query(seed + k, 12, "linear") for k in range(instances)]
    worse, unequal, proven = [], [], 0
    for k, qs in enumerate(cases):
        best = exact(qs)
        heuristic = algorithm1(qs)
        opt = optimal_plan(qs, hint=heuristic if heuristic.status == "ok" else None, workers=1, deterministic_time=5.0,
                           max_terms=None)  # sized by the check
        if (opt.solver or {}).get("status") != "optimal" or not (opt.solver or {}).get("on_grid", False):
            continue
        proven += 1
        if (best.status == "ok") != (opt.misses == 0) or (best.status == "ok" and opt.total_cost != best.total_cost):
            unequal.append(k)
        if heuristic.status == "ok" and opt.misses == 0 and opt.total_cost > heuristic.total_cost:
            worse.append(k)
    ok = not worse and not unequal and proven == len(cases)
    return _row("4", "C1/C4 (correction 1)", f"CP-SAT's proven optimum equals the exact DP and is never costlier than "
                f"Algorithm 1, on E1, E3 and {instances} seeded random linear queries.",
                ok, float(proven - len(cases) - len(worse) - len(unequal)),
                f"{proven} of {len(cases)} proven optimal on the grid; differs from the DP on {len(unequal)}, costlier "
                f"than Algorithm 1 on {len(worse)}")


def check5() -> dict[str, Any]:
    qs = e5()
    found = {q.name: find_min_batch(q, qs.delta_rsf, qs.c_max) for q in qs.queries}
    sizes = {k: v.size for k, v in found.items()}
    flags = {k: v.flagged for k, v in found.items()}
    ok = sizes == {"A": 20, "B": 25, "C": 20} and flags == {"A": False, "B": False, "C": True}
    return _row("5", "E5 (A3)", "FindMinBatchSize gives 20, 25, 20 for A, B, C and flags C (capped by C_max).",
                ok, 0.0 if ok else -1.0, f"sizes {sizes}, flagged {[k for k, v in flags.items() if v]}, "
                f"totals {', '.join(f'{k} {float(v.total):g}' for k, v in found.items())}")


E5_DEADLINES = {"1": (132, 143, 177), "0.4": ("118.8", "123.2", "136.8"), "0.2": ("114.4", "116.6", "123.4")}


def check6() -> dict[str, Any]:
    base = e5()
    wrong = []
    for rho, expected in E5_DEADLINES.items():
        got = a5_deadlines(base.queries, F(rho), base.c_max, order=[0, 1, 2])
        if got != [F(d) for d in expected]:
            wrong.append(f"ρ = {rho}: {[float(d) for d in got]}")
    return _row("6", "E5 (A5)", "The deadline generator gives 132/143/177, 118.8/123.2/136.8 and 114.4/116.6/123.4 at "
                "ρ = 1, 0.4, 0.2.", not wrong, 0.0 if not wrong else -len(wrong),
                "all nine deadlines exact" if not wrong else "; ".join(wrong))


E5_MISSES = {
    "1": {"edf": set(), "llf": set(), "sjf": set(), "rr": set()},
    "0.4": {"edf": set(), "llf": set(), "sjf": set(), "rr": {"A"}},
    "0.2": {"edf": {"C"}, "llf": {"B"}, "sjf": {"A", "C"}, "rr": {"A"}},
}


def check7() -> dict[str, Any]:
    wrong = []
    for rho, expected in E5_MISSES.items():
        for policy, late in expected.items():
            got = dispatch(e5(rho), policy).late
            if got != late:
                wrong.append(f"{policy} at ρ = {rho} misses {sorted(got)}, expected {sorted(late)}")
    qs = e5("0.4")
    min_total = sum((q.min_cost for q in qs.queries), F(0))
    shape = []
    for policy in ("edf", "llf", "sjf", "rr"):
        plan = dispatch(qs, policy)
        batches = int((plan.batches["kind"] == "batch").sum())
        if batches != 14 or plan.total_cost != F("102.5"):
            wrong.append(f"{policy}: {batches} batches, total {float(plan.total_cost):g}")
        shape.append(f"{policy} {batches} batches, {float(plan.total_cost):g} ({float(plan.total_cost / min_total):.3f})")
    plain = dispatch(qs, "edf", minbatch=False)
    plain_batches = int((plain.batches["kind"] == "batch").sum())
    if plain_batches != 43 or plain.late != {"A", "B", "C"}:
        wrong.append(f"no-MinBatch EDF: {plain_batches} batches, late {sorted(plain.late)}")
    detail = ("; ".join(shape) + f"; no-MinBatch EDF {plain_batches} batches, normalized "
              f"{float(plain.total_cost / min_total):.2f}, late {sorted(plain.late)}")
    if wrong:
        detail = "; ".join(wrong) + ". " + detail
    return _row("7", "E5 (A4)", "E5's misses per policy and ρ as the digest's table; every MinBatch policy runs 14 batches "
                "for 102.5 (normalized 1.53) at ρ = 0.4; no-MinBatch EDF runs 43 batches and misses all three.",
                not wrong, 0.0 if not wrong else -len(wrong), detail)


def check8(fig7: pd.DataFrame | None = None, profile: str = LIVE) -> dict[str, Any]:
    tight, loose = c7(e5("0.2")), c7(e5("0.4"))
    parts = [f"E5 ρ = 0.2: {tight.detail}", f"ρ = 0.4: {loose.detail}"]
    e5_ok = not tight.holds and tight.last_work == 28 and tight.available == F("23.4") and loose.holds
    ok: bool | None = e5_ok
    if fig7 is not None and len(fig7):
        same = fig7[(fig7["windows"] == "same")]
        flagged = same[~same["c7_holds"].astype(bool)]
        rhos = sorted(set(flagged["rho"]))
        parts.append(f"paper scale: C7 flags ρ = {', '.join(f'{r:g}' for r in rhos) or 'none'}")
        ok = e5_ok and 0.1 in rhos
    else:
        parts.append("paper scale: not computable, the Fig. 7 sweep was not run")
        ok = None if e5_ok else False
    return _row("8", "C7", "The C7 checker flags E5 at ρ = 0.2 (28 > 23.4) and the paper-scale 0.1D case.",
                ok, 0.0 if ok else -1.0, "; ".join(parts), profile, reason=SCALE)


def _plans_sound(frames: Mapping[str, pd.DataFrame]) -> tuple[int, int]:
    """(plans, unsound plans) among the sweeps ``frames``."""
    counted = {name: frame for name, frame in frames.items() if "plan_violations" in frame.columns}
    plans = sum(len(f) for f in counted.values())
    bad = sum(int((f["plan_violations"] > 0).sum()) for f in counted.values())
    if "alg1-loss" in frames:
        loss = frames["alg1-loss"]
        plans += 2 * len(loss)
        bad += int((loss["alg1_violations"] > 0).sum() + (loss["exact_violations"] > 0).sum())
    if "optimum" in frames:  # the CP-SAT plan, once per instance
        optimal = frames["optimum"].drop_duplicates(["n_queries", "N", "rho", "seed"])
        plans += len(optimal)
        bad += int((optimal["opt_violations"] > 0).sum())
    return plans, bad


def check9(frames: Mapping[str, pd.DataFrame], profile: str,
           priced: Mapping[str, Mapping[str, pd.DataFrame]] | None = None) -> dict[str, Any]:
    """Every plan sound, over the sweeps on random instances (``frames``) and every cost set's
    figures (``priced``, by reading), counted per set in the detail."""
    parts = {"random instances": _plans_sound(frames),
             **{reading: _plans_sound(figures) for reading, figures in (priced or {}).items()}}
    plans, bad = sum(p for p, _ in parts.values()), sum(b for _, b in parts.values())
    if not plans:
        return _row("9", "plans", "Every plan passes the invariants.", None, math.nan, "no sweep was run", profile,
                    reason=SCALE)
    each = "; ".join(f"{name}: {p - b} of {p}" for name, (p, b) in parts.items() if p)
    return _row("9", "plans", "Every plan of every scheme and instance passes the invariants: no overlap on an executor, "
                "only arrived tuples, Σ sizes = N, MinBatch batches within C_max, aggregation iff n >= 2.",
                bad == 0, float(-bad), f"{plans - bad} of {plans} plans sound ({each})", profile)


def check10() -> dict[str, Any]:
    from staleness_lab.optimize.batch_plan import optimal_plan

    details, wrong = [], []
    for rho, cost in (("0.4", "76"), ("1", "67")):
        qs = e5(rho)
        opt = optimal_plan(qs, hint=dispatch(qs, "edf"), workers=2, time_limit=10.0, max_terms=None)  # E5: small
        status = (opt.solver or {}).get("status")
        details.append(f"ρ = {rho}: {status}, {opt.misses} misses, cost {float(opt.total_cost):g}")
        if status != "optimal" or opt.misses != 0 or opt.total_cost != F(cost):
            wrong.append(rho)
    return _row("10", "E5 (CP-SAT)", "CP-SAT on E5 proves 0 misses at cost 76.0 at ρ = 0.4 (below the heuristics' 102.5) "
                "and 67.0 at ρ = 1.", not wrong, 0.0 if not wrong else -len(wrong), "; ".join(details))


def worked_examples() -> pd.DataFrame:
    """Checks 1-7 and 10, computed now (check 8 needs the Fig. 7 sweep too: :func:`sweep_checks`)."""
    return pd.DataFrame([check1(), check2(), check3(), check4(), check5(), check6(), check7(), check10()],
                        columns=COLUMNS)


# -- the figures' claims ----------------------------------------------------------------------------


def _missing(name: str, claim: str, figure: str, profile: str) -> dict[str, Any]:
    return _row(name, figure, claim, None, math.nan, f"not computable: the {figure} sweep was not run", profile,
                reason=SCALE)


def _late_rhos(frame: pd.DataFrame, policy: str, minbatch: bool = True) -> list[float]:
    """The ρ at which the policy misses a deadline in a majority of seeds (Fig. 7 reads its ρ = 1
    point from random windows, the others from one window for all)."""
    rows = frame[(frame["policy"] == policy) & (frame["minbatch"] == minbatch)]
    share = rows.assign(missed=rows["misses"] > 0).groupby("rho")["missed"].mean()
    return sorted(float(r) for r, s in share.items() if s > 0.5)


#: The queries Fig. 6 says need 3 batches at 0.1D (all others 2 for f < 1).
FIG6_THREE = ("Q3", "Q9", "Q10")


def _cases(frame: pd.DataFrame) -> list[str]:
    return [f"{q} at {f:g}D" for q, f in zip(frame["query"], frame["f"])]


def fig6_checks(frame: pd.DataFrame | None, profile: str, synthetic: bool = True) -> list[dict[str, Any]]:
    """Fig. 6's two claims on Algorithm 1's plans. On measured fits, a case the exact optimum
    proves to have no plan at all (``exact`` rows, status ``infeasible``: the fits' per-batch
    overhead and merge exceed f·Cost(N), a share of Cost(N) far larger at SF 1 than at the
    paper's scale) does not test the paper: where the claims fail only there, they are
    undecided (scale), the cases named; a planned case against them differs. Fig. 6's batch
    counts are judged per case on the queries the profile runs."""
    claim_a = "Fig. 6: every single-query deadline D = we + f·Cost(N) is met (f = 1 to 0.1)."
    claim_b = "Fig. 6: 2 batches for f < 1, except at 0.1D where Q3, Q9 and Q10 need 3."
    if frame is None:
        return [_missing("fig6a", claim_a, "Fig. 6", profile), _missing("fig6b", claim_b, "Fig. 6", profile)]
    alg = frame[frame["scheme"] == "algorithm1"]
    proven = frame[(frame["scheme"] == "exact") & (frame["status"] == "infeasible")]
    impossible = set(zip(proven["query"], proven["f"])) if not synthetic else set()
    none = alg[[case in impossible for case in zip(alg["query"], alg["f"])]]
    met = int(((alg["status"] == "ok") & (alg["misses"] == 0)).sum())
    detail = f"Algorithm 1 meets {met} of {len(alg)} deadlines{SYNTHETIC_NOTE if synthetic else ''}"
    if met < len(alg) and met + len(none) == len(alg):
        a = _row("fig6a", "Fig. 6", claim_a, None, math.nan, f"{detail}; the exact optimum proves that no plan meets the "
                 f"others ({', '.join(_cases(none))}): the last part and the merge take longer than f·Cost(N) at this "
                 "scale", profile, reason=SCALE)
    else:
        a = _row("fig6a", "Fig. 6", claim_a, met == len(alg), float(met - len(alg)), detail, profile)
    planned = alg[alg["status"] == "ok"]
    at01, others = planned[np.isclose(planned["f"], 0.1)], planned[(planned["f"] < 1) & ~np.isclose(planned["f"], 0.1)]
    three = sorted(at01.loc[at01["batches"] >= 3, "query"])
    spread = ", ".join(f"{int(b)} batches × {int(k)}" for b, k in others["batches"].value_counts().sort_index().items())
    detail = f"for f < 1 but 0.1: {spread}; at 0.1D ≥ 3 batches: {', '.join(three) or 'none'}"
    if synthetic:
        return [a, _row("fig6b", "Fig. 6", claim_b, None, math.nan, "undecidable with synthetic costs: which queries need "
                        "3 batches depends on the measured TPC-H curves; " + detail, profile, reason=SYNTHETIC_COSTS)]
    against = (_cases(others[others["batches"] != 2])
               + _cases(at01[(at01["batches"] >= 3) != at01["query"].isin(FIG6_THREE)]))
    against += [f"{case} (no plan, one exists)" for case in _cases(alg[(alg["status"] != "ok") & (alg["f"] < 1)])
                if case not in _cases(none)]
    unplanned = none[none["f"] < 1]
    if against:
        b = _row("fig6b", "Fig. 6", claim_b, False, -float(len(against)), f"{detail}; against the claim: "
                 f"{', '.join(against)}", profile)
    elif len(unplanned):
        b = _row("fig6b", "Fig. 6", claim_b, None, math.nan, f"{detail}; no plan in {', '.join(_cases(unplanned))}",
                 profile, reason=SCALE)
    else:
        b = _row("fig6b", "Fig. 6", claim_b, True, 0.0, detail, profile)
    return [a, b]


def _per_policy(what: str, found: Mapping[str, list[str]], normalized: float, synthetic: bool = True) -> str:
    """``what: EDF a, b; LLF none; ...; mean normalized cost 1.47`` (a verdict's detail)."""
    listed = "; ".join(f"{policy.upper()} {', '.join(items) or 'none'}" for policy, items in found.items())
    return f"{what}: {listed}; mean normalized cost {normalized:.3f}{SYNTHETIC_NOTE if synthetic else ''}"


PAPER_FIG7 = {"edf": [0.1], "llf": [0.1], "sjf": [0.1, 0.2], "rr": [0.1, 0.2, 0.4]}


def _forced(frame: pd.DataFrame, by: str, got: Mapping[str, Any], paper: Mapping[str, Any],
            synthetic: bool) -> tuple[set[str], str]:
    """On measured fits, the policies that disagree with the paper only by missing where C7 (the
    necessary condition, digest C7) fails in most seeds, so that no MinBatch schedule meets every
    deadline there (a deadline too close to the window's end for the fits' last batches at this
    scale), and a sentence naming those cells ("" if none)."""
    if synthetic or "c7_holds" not in frame.columns:
        return set(), ""
    share = (~frame["c7_holds"].astype(bool)).groupby(frame[by]).mean()
    infeasible = {k for k, v in share.items() if v > 0.5}
    extra = {p: set(got[p]) - set(paper[p]) for p in got}
    forced = {p for p in got if extra[p] and extra[p] <= infeasible and set(got[p]) >= set(paper[p])}
    if not forced:
        return set(), ""
    cells = sorted({c for p in forced for c in extra[p]}, key=str)
    return forced, (f"; C7 fails at {', '.join(f'{c:g}' if isinstance(c, float) else str(c) for c in cells)} (most seeds): "
                    f"no MinBatch schedule meets every deadline there at this scale, so the misses of "
                    f"{', '.join(p.upper() for p in sorted(forced))} there are forced")


def _scale_or_judged(check: str, figure: str, claim: str, differ: list[str], forced: set[str], note: str,
                     cost_ok: bool, margin: float, detail: str, profile: str, synthetic: bool) -> dict[str, Any]:
    """:func:`_judged`, or undecided (scale) when every policy that differs is :func:`_forced`."""
    if differ and cost_ok and set(differ) <= forced:
        return _row(check, figure, claim, None, math.nan, detail + note, profile, reason=SCALE)
    return _judged(check, figure, claim, not differ and cost_ok, margin, detail + note, profile, synthetic)


def fig7_check(frame: pd.DataFrame | None, profile: str, synthetic: bool = True) -> dict[str, Any]:
    claim = ("Fig. 7: with MinBatch, EDF and LLF miss only at 0.1D, SJF at 0.2D and 0.1D, RR at 0.4D, 0.2D and 0.1D "
             "(a miss counts at a ρ where most seeds miss); normalized cost ≈ 1.5 (within 1.4-1.6).")
    if frame is None:
        return _missing("fig7", claim, "Fig. 7", profile)
    frame = frame.assign(minbatch=frame.get("minbatch", True))
    got = {p: _late_rhos(frame, p) for p in PAPER_FIG7}
    norm = float(frame["normalized_cost"].mean())
    differ = [p for p in PAPER_FIG7 if got[p] != PAPER_FIG7[p]]
    cost_ok = 1.4 <= norm <= 1.6
    detail = _per_policy("misses at ρ", {p: [f"{r:g}" for r in got[p]] for p in got}, norm, synthetic)
    margin = -float(len(differ)) if differ else min(norm - 1.4, 1.6 - norm)
    forced, note = _forced(frame[frame["windows"] == "same"], "rho", got, PAPER_FIG7, synthetic)
    return _scale_or_judged("fig7", "Fig. 7", claim, differ, forced, note, cost_ok, margin, detail, profile, synthetic)


def fig7_infeasible_check(frame: pd.DataFrame | None, profile: str, synthetic: bool = True) -> dict[str, Any]:
    """The paper's one claim about the optimum (Fig. 7, sec. 7; digest correction 3): at 0.1D
    "there is no feasible solution with δRSF = 50 %". Judged on the CP-SAT rows of the same-window
    0.1D instances (``fig78-optimum``): it differs where most seeds have a plan meeting every
    deadline with every query within (1 + δRSF)·Cost(N) (a plan at the cost model's durations,
    whatever the solver proved), holds where the solver proved a miss unavoidable on every seed
    (its misses bound holds for the true costs: rows from before the planner's true bounds,
    ``true_bounds`` false or missing, prove it on their grid only when the data are off it), and
    is undecided (budget) otherwise.

    The claim is read here as this project reads it, about every plan: the batch sizes are the
    plan's own, and δRSF bounds each query's cost. The paper's argument (line 477) is about the
    plans MinBatch makes at δRSF = 50 %, whose last batches are fixed: their work exceeds
    ``max D − we`` at 0.1D. That argument is acceptance check 8 (C7), judged beside this one; a
    plan on time here differs from this reading, not from it."""
    claim = ("Fig. 7: at 0.1D there is no feasible solution with δRSF = 50 %, read as: no plan, its batch sizes its "
             "own, meets every deadline with every query's cost within 1.5·Cost(N) (the paper's argument fixes the "
             "last batches as MinBatch makes them: check 8).")
    if frame is None:
        return _missing("fig7-infeasible", claim, "Fig. 7", profile)
    rows = frame[np.isclose(frame["rho"], 0.1) & (frame["windows"] == "same")]
    if rows.empty:
        return _row("fig7-infeasible", "Fig. 7", claim, None, math.nan, "the profile planned no 0.1D instance", profile,
                    reason=SCALE)
    found = int(rows["within_delta_rsf"].astype(bool).sum())
    true = rows["on_grid"].astype(bool) | (rows["true_bounds"].eq(True) if "true_bounds" in rows else False)
    proven = int(((rows["misses_bound"] >= 1) & true).sum())
    seeds = len(rows)
    per_seed = "; ".join(
        f"seed {int(r.seed)}: {int(r.misses)} misses (proven ≥ {r.misses_bound:g}{'' if ok else ' on the grid'}),"
        f" {r.opt_status} by the {r.solved_by}, {r.seconds:.0f} s (budget {r.time_limit:g} s)"
        for r, ok in zip(rows.itertuples(), true))
    detail = (f"{found} of {seeds} seeds have a plan on time within δRSF, {proven} a proof that none exists; {per_seed}"
              + (SYNTHETIC_NOTE if synthetic else ""))
    if found * 2 > seeds:
        detail += ("; the plans on time choose their own batch sizes, so with MinBatch's last batches the paper's "
                   "argument still stands (check 8)")
        return _row("fig7-infeasible", "Fig. 7", claim, False, -float(found), detail, profile)
    if proven == seeds:
        return _row("fig7-infeasible", "Fig. 7", claim, True, float(rows["misses_bound"].min() - 1), detail, profile)
    return _row("fig7-infeasible", "Fig. 7", claim, None, math.nan, detail, profile, reason=BUDGET)


def _judged(check: str, figure: str, claim: str, outcome: bool, margin: float, detail: str, profile: str,
            synthetic: bool) -> dict[str, Any]:
    """A claim the measured cost fits decide (digest, third-round correction 3): judged on them,
    undecided (synthetic costs) on the synthetic set, what it would have said kept in the detail."""
    if not synthetic:
        return _row(check, figure, claim, outcome, margin, detail, profile)
    return _row(check, figure, claim, None, margin, f"{NO_FITS}; on the synthetic set it would "
                f"{'hold' if outcome else 'differ'}: {detail}", profile, reason=SYNTHETIC_COSTS)


def _late_text(rhos: list[float]) -> str:
    return ", ".join(f"{r:g}" for r in rhos) or "none"


def fig8_check(frame: pd.DataFrame | None, profile: str, synthetic: bool = True) -> dict[str, Any]:
    """Fig. 8 at every deadline factor the profile ran: without MinBatch a policy misses exactly
    at ρ <= 0.4 ("both EDF and LLF failed for 0.4D", passing above it), with MinBatch at no
    ρ >= 0.2 ("passed cases up to 0.2D")."""
    claim = ("Fig. 8: without MinBatch, EDF and LLF miss from 0.4D on and meet every deadline above it (with MinBatch "
             "they pass down to 0.2D), at 10× (EDF) and 7× (LLF) the MinBatch cost; a miss counts at a ρ where most "
             "seeds miss; judged at every deadline factor run.")
    if frame is None:
        return _missing("fig8", claim, "Fig. 8", profile)
    parts, wrong = [], 0
    rhos = sorted(set(frame["rho"]), reverse=True)
    for policy, paper_ratio in (("edf", 10.0), ("llf", 7.0)):
        plain, mb = _late_rhos(frame, policy, False), _late_rhos(frame, policy, True)
        ratio = float(frame[(frame["policy"] == policy) & ~frame["minbatch"]]["total_cost"].mean()
                      / frame[(frame["policy"] == policy) & frame["minbatch"]]["total_cost"].mean())
        plain_off = [r for r in rhos if (r in plain) != (r <= 0.4)]
        mb_off = [r for r in mb if r >= 0.2]
        wrong += len(plain_off) + len(mb_off) + (0 if synthetic or ratio >= paper_ratio else 1)
        above, below = [r for r in plain_off if r > 0.4], [r for r in plain_off if r <= 0.4]
        parts.append(f"{policy.upper()}: no-MinBatch misses at ρ {_late_text(plain)}"
                     + (f" (also above 0.4D, at {_late_text(above)})" if above else "")
                     + (f" (not at {_late_text(below)})" if below else "")
                     + f", MinBatch at {_late_text(mb)}, cost ratio {ratio:.1f}× (paper {paper_ratio:g}×)")
    parts.append(f"ρ run: {_late_text(rhos)}")
    if synthetic:
        parts.append("the cost ratio is not judged: it is set by the per-batch overheads of the unpublished TPC-H "
                     "curves" + SYNTHETIC_NOTE)
    return _row("fig8", "Fig. 8", claim, wrong == 0, -float(wrong), "; ".join(parts), profile)


PAPER_PROFILES = {
    "fig10": {"edf": set(), "llf": set(), "sjf": {"FR", "VR3", "VR4"}, "rr": {"FR", "VR3", "VR4"}},
    "fig11": {"edf": set(), "llf": set(), "sjf": {"FR"}, "rr": {"FR", "VR3", "VR4"}},
}
PROFILE_CLAIMS = {
    "fig10": "Fig. 10 (0.1D, δRSF = 100 %): EDF and LLF meet every deadline under FR and VR1-4; SJF and RR only under "
             "VR1 and VR2; normalized cost ≈ 2 (1.8-2.2).",
    "fig11": "Fig. 11 (0.2D, δRSF = 50 %): EDF and LLF pass everything; SJF passes VR1-4 but fails FR; RR fails FR, "
             "VR3 and VR4.",
}


def profile_check(name: str, frame: pd.DataFrame | None, profile: str, synthetic: bool = True) -> dict[str, Any]:
    label = "Fig. 10" if name == "fig10" else "Fig. 11"
    if frame is None:
        return _missing(name, PROFILE_CLAIMS[name], label, profile)
    share = frame.assign(missed=frame["misses"] > 0).groupby(["policy", "profile"])["missed"].mean()
    got = {p: {rate for (pol, rate), s in share.items() if pol == p and s > 0.5} for p in PAPER_PROFILES[name]}
    differ = [p for p in got if got[p] != PAPER_PROFILES[name][p]]
    norm = float(frame["normalized_cost"].mean())
    cost_ok = name != "fig10" or 1.8 <= norm <= 2.2
    detail = _per_policy("fails under", {p: sorted(got[p]) for p in got}, norm, synthetic) + VR_NOTE
    forced, note = _forced(frame, "profile", got, PAPER_PROFILES[name], synthetic)
    return _scale_or_judged(name, label, PROFILE_CLAIMS[name], differ, forced, note, cost_ok,
                            -float(len(differ)) if differ else 0.0, detail, profile, synthetic)


#: Figs. 10 and 11's numbers [P, sec. 7]: the measure, the profile with more of it, the other, and
#: the paper's values (mean over seeds per policy here; the paper names no policy).
VR_NUMBERS = {
    "fig10-batches": ("Fig. 10", "fig10", "batches", "VR4", "FR", (410, 329),
                      "Fig. 10 (0.1D, δRSF = 100 %): the slower rate takes more batches, 410 in all under VR4 against "
                      "329 under FR (×1.25): late files are processed as they come when a MinBatch is due."),
    "fig11-last": ("Fig. 11", "fig11", "last_batch_files", "FR", "VR4", (5620, 832),
                   "Fig. 11 (0.2D, δRSF = 50 %): far fewer files are left for the last batches under the slower rate, "
                   "5,620 in all under FR against 832 under VR4 (÷6.8)."),
}


def vr_number_check(name: str, frame: pd.DataFrame | None, profile: str, synthetic: bool = True) -> dict[str, Any]:
    """Fig. 10's batch counts or Fig. 11's last-batch files (:data:`VR_NUMBERS`): holds when the
    profile the paper gives more of it has more under every policy (mean over seeds, planned
    runs only); the counts, their ratio and the paper's beside. Undecided on the synthetic set
    (digest, third-round correction 3), as Figs. 10 and 11 are."""
    label, sweep, column, more, fewer, paper, claim = VR_NUMBERS[name]
    if frame is None:
        return _missing(name, claim, label, profile)
    ok = frame[frame["status"] == "ok"]
    means = ok.groupby(["policy", "profile"])[column].mean()
    parts, ratios = [], []
    for policy in POLICIES:
        if (policy, more) in means and (policy, fewer) in means:
            a, b = float(means[policy, more]), float(means[policy, fewer])
            ratios.append(a / b if b else math.inf)
            parts.append(f"{policy.upper()} {a:.0f} under {more} against {b:.0f} under {fewer} (×{ratios[-1]:.2f})")
    if not ratios:
        return _row(name, label, claim, None, math.nan, f"no planned run under both {more} and {fewer}", profile,
                    reason=SCALE)
    detail = (f"{column.replace('_', ' ')}, mean over seeds: " + "; ".join(parts)
              + f"; the paper {paper[0]:,} against {paper[1]:,} (×{paper[0] / paper[1]:.2f})" + VR_NOTE)
    return _judged(name, label, claim, min(ratios) > 1, min(ratios) - 1, detail, profile, synthetic)


def alg1_loss_check(frame: pd.DataFrame | None, profile: str, regime: bool = False,
                    paper_scale: Mapping[str, pd.DataFrame] | None = None) -> dict[str, Any]:
    """C1 on the linear draws (``regime``: only those with R < 1/λ, the paper's regime, where
    a tuple costs less than its inter-arrival time). ``paper_scale``: the Fig. 6 sweep of each
    cost set, by reading (:func:`sweep_checks`); where it ran the exact optimum, the detail
    adds Algorithm 1's loss there (:func:`paper_scale_loss`; the verdict stays that of the
    linear draws, which C1 is about)."""
    name, where = ("alg1-regime", " with R < 1/λ (the paper's regime)") if regime else ("alg1", "")
    claim = (f"C1: Algorithm 1 is optimal for linear costs{where} (the paper); refuted by digest correction 1: "
             "measured here as how often it costs more than the exact DP or says no plan where one exists.")
    if frame is None:
        return _missing(name, claim, "C1", profile)
    summary = loss_summary(frame)
    mine = summary[summary["cost_kind"] == (LINEAR_REGIME if regime else "linear")]
    if mine.empty or not int(mine["instances"].iloc[0]):
        return _row(name, "C1", claim, None, math.nan, "no linear draw in the regime", profile, reason=SCALE)
    losses = int(mine["costlier"].iloc[0] + mine["false_no_plan"].iloc[0])
    detail = "; ".join(
        f"{r.cost_kind}: {r.instances} instances, costlier {r.costlier} (mean excess {r.mean_excess:.3g}, max "
        f"{r.max_excess:.3g}), false no-plan {r.false_no_plan}" for r in summary.itertuples())
    for reading, fig6 in ({} if regime else paper_scale or {}).items():
        versus = fig6_against_optimum(fig6)
        if not len(versus):
            continue
        big = paper_scale_loss(versus, fig6_scale(reading)).iloc[0]
        never = sorted(set(versus.index.get_level_values("query")) - set(versus[versus["costlier"]].index.get_level_values("query")))
        detail += (f"; {big.cost_kind}: costlier in {big.costlier} of {big.instances} cases (loss ratio median "
                   f"{big.median_ratio:.4f}, max {big.max_ratio:.4f} among them), false no-plan {big.false_no_plan}; "
                   f"never costlier on {', '.join(never) or 'none'}{SYNTHETIC_NOTE if reading == SYNTHETIC_READING else ''}")
    return _row(name, "C1", claim, erratum(losses == 0), float(-losses), detail, profile)


#: :func:`paper_scale_loss`'s label of Fig. 6's cases on the synthetic set.
PAPER_SCALE = "paper scale (Fig. 6, N = 4500)"


def fig6_scale(reading: str) -> str:
    """:func:`paper_scale_loss`'s label of Fig. 6's cases under a cost set: :data:`PAPER_SCALE`
    on the synthetic set, ``Fig. 6, <reading>`` on measured fits (their window, not the paper's)."""
    return PAPER_SCALE if reading == SYNTHETIC_READING else f"Fig. 6, {reading}"


def fig6_against_optimum(frame: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6 per case (query, f): Algorithm 1's cost and batches beside the exact optimum's, the
    loss ratio (Algorithm 1 over the optimum, NaN where either has no plan), whether Algorithm 1
    costs more, and whether it found no plan where the optimum has one. Empty when the sweep ran
    no exact optimum."""
    keys = ["query", "f"]
    alg = frame[frame["scheme"] == "algorithm1"].set_index(keys)
    opt = frame[frame["scheme"] == "exact"].set_index(keys)
    both = alg[["status", "total_cost", "batches"]].join(opt[["status", "total_cost", "batches"]], how="inner",
                                                         lsuffix="_alg1", rsuffix="_opt")
    alg_ok, opt_ok = both["status_alg1"] == "ok", both["status_opt"] == "ok"
    ratio = (both["total_cost_alg1"] / both["total_cost_opt"]).where(alg_ok & opt_ok)
    return pd.DataFrame({
        "alg1_cost": both["total_cost_alg1"].where(alg_ok), "opt_cost": both["total_cost_opt"].where(opt_ok),
        "alg1_batches": both["batches_alg1"], "opt_batches": both["batches_opt"], "loss_ratio": ratio,
        "costlier": ratio > 1 + 1e-12, "false_no_plan": ~alg_ok & opt_ok,
    }).sort_index()


def paper_scale_loss(versus: pd.DataFrame, kind: str = PAPER_SCALE) -> pd.DataFrame:
    """Algorithm 1's loss over Fig. 6's cases (:func:`fig6_against_optimum`), one row in
    :func:`loss_summary`'s columns (cost kind ``kind``: :func:`fig6_scale`), plus the median and
    largest loss ratio among the cases where it costs more."""
    lost = versus[versus["costlier"]]
    excess = lost["alg1_cost"] - lost["opt_cost"]
    count = len(versus)
    return pd.DataFrame([{
        "cost_kind": kind, "instances": count, "costlier": len(lost),
        "costlier_share": len(lost) / count if count else math.nan,
        "mean_excess": float(excess.mean()) if len(lost) else 0.0, "max_excess": float(excess.max()) if len(lost) else 0.0,
        "false_no_plan": int(versus["false_no_plan"].sum()),
        "false_no_plan_share": float(versus["false_no_plan"].mean()) if count else math.nan,
        "median_ratio": float(lost["loss_ratio"].median()) if len(lost) else 1.0,
        "max_ratio": float(lost["loss_ratio"].max()) if len(lost) else 1.0,
    }])


#: :func:`loss_summary`'s row of the linear draws with R < 1/λ (λ = 1 in every draw).
LINEAR_REGIME = "linear, R < 1/λ"


def loss_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Algorithm 1's loss per cost kind, and on the linear draws with R < 1/λ alone (the
    paper's regime, :data:`LINEAR_REGIME`): instances, how many cost more than the optimum
    (mean and largest excess among them), and how many false no-plans."""
    rows = []
    linear = frame[frame["cost_kind"] == "linear"]
    parts = [*frame.groupby("cost_kind", sort=False), (LINEAR_REGIME, linear[linear["R"] < 1.0])]
    for kind, part in parts:
        lost = part[part["excess"] > 1e-12]
        rows.append({"cost_kind": kind, "instances": len(part), "costlier": len(lost),
                     "costlier_share": len(lost) / len(part) if len(part) else math.nan,
                     "mean_excess": float(lost["excess"].mean()) if len(lost) else 0.0,
                     "max_excess": float(lost["excess"].max()) if len(lost) else 0.0,
                     "false_no_plan": int(part["false_no_plan"].sum()),
                     "false_no_plan_share": float(part["false_no_plan"].mean()) if len(part) else math.nan})
    return pd.DataFrame(rows)


def optimum_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Each heuristic against the optimum per ρ: instances, extra misses against the optimum
    (where CP-SAT proved its misses), and the cost ratio at equal misses (median, largest)."""
    rows = []
    for (rho, scheme), part in frame.groupby(["rho", "scheme"], sort=True):
        proven = part[part["opt_status"] == "optimal"]
        equal = part[(part["misses"] == part["opt_misses"]) & part["cost_ratio"].notna()]
        rows.append({"rho": rho, "scheme": scheme, "instances": len(part), "proven": len(proven),
                     "extra_misses": float((proven["misses"] - proven["opt_misses"]).mean()) if len(proven) else math.nan,
                     "median_cost_ratio": float(equal["cost_ratio"].median()) if len(equal) else math.nan,
                     "max_cost_ratio": float(equal["cost_ratio"].max()) if len(equal) else math.nan})
    return pd.DataFrame(rows)


def optimum_check(frame: pd.DataFrame | None, profile: str) -> dict[str, Any]:
    claim = ("Not in the paper: wherever CP-SAT proves its plan optimal (every number on its time grid), no heuristic "
             "misses fewer deadlines, or costs less at equal misses.")
    if frame is None:
        return _missing("optimum", claim, "CP-SAT", profile)
    proven = frame[(frame["opt_status"] == "optimal") & frame["opt_on_grid"].astype(bool)]
    beaten = proven[(proven["misses"] < proven["opt_misses"])
                    | ((proven["misses"] == proven["opt_misses"]) & (proven["total_cost"] < proven["opt_cost"] - 1e-9))]
    detail = (f"{proven['seed'].count()} heuristic plans on {len(proven) // 4} instances proven optimal "
              f"(of {len(frame) // 4}); beaten {len(beaten)} times; median cost ratio at equal misses "
              f"{float(frame.loc[frame['misses'] == frame['opt_misses'], 'cost_ratio'].median()):.3f}")
    return _row("optimum", "CP-SAT", claim, len(beaten) == 0 if len(proven) else None, float(-len(beaten)), detail, profile,
                reason=BUDGET)


#: The sweep each cost set's check reads (Figs. 6-11, priced by a cost set): its rows are labelled
#: and read per cost set (:func:`cost_set_checks`).
SOURCES = {"8": "fig7", "fig6a": "fig6", "fig6b": "fig6", "fig7": "fig7", "fig7-infeasible": "fig78-optimum",
           "fig8": "fig8", "fig10": "fig10", "fig10-batches": "fig10", "fig11": "fig11", "fig11-last": "fig11"}


def labelled(check: str, reading: str) -> str:
    """A cost set's check label: ``fig7 (measured SF 1 fits)``."""
    return f"{check} ({reading})"


def _merge_note(frame: pd.DataFrame | None, measured: int | None) -> str:
    """The runs of ``frame`` whose plan merges more partials than calibration timed (``measured``;
    None: nothing measured, the synthetic set), or ""."""
    if measured is None or frame is None or "max_batches" not in frame.columns:
        return ""
    beyond = frame[frame["max_batches"] > measured]
    if beyond.empty:
        return ""
    return (f"; AggCost extrapolated on its fitted line past the {measured} partials calibration merged in "
            f"{len(beyond)} of {len(frame)} runs (up to {int(beyond['max_batches'].max())} batches of one query)")


def cost_set_checks(figures: Mapping[str, pd.DataFrame], profile: str, reading: str,
                    merges_measured: int | None = None) -> list[dict[str, Any]]:
    """The figures' verdicts on one cost set (module docstring): the paper-scale part of check 8
    and every claim of Figs. 6-11 from ``figures`` (``{"fig6": frame, ...}``; a missing figure
    makes its claims not computable), each labelled (:func:`labelled`) and read under
    ``reading``; on the synthetic set (:data:`SYNTHETIC_READING`) Fig. 6's batch counts and
    Figs. 7, 10 and 11 are undecided. ``merges_measured``: the most partials calibration merged
    (:func:`~staleness_lab.experiments.intermittent.sweeps.merges_measured`), named in the detail of
    every verdict resting on a run that merges more."""
    synthetic = reading == SYNTHETIC_READING
    rows = [check8(figures.get("fig7"), profile), *fig6_checks(figures.get("fig6"), profile, synthetic),
            fig7_check(figures.get("fig7"), profile, synthetic),
            fig7_infeasible_check(figures.get("fig78-optimum"), profile, synthetic),
            fig8_check(figures.get("fig8"), profile, synthetic)]
    for name in ("fig10", "fig11"):
        rows.append(profile_check(name, figures.get(name), profile, synthetic))
        rows += [vr_number_check(check, figures.get(name), profile, synthetic)
                 for check, spec in VR_NUMBERS.items() if spec[1] == name]
    return [{**row, "check": labelled(row["check"], reading), "reading": reading,
             "detail": row["detail"] + _merge_note(figures.get(SOURCES[row["check"]]), merges_measured)}
            for row in rows]


def per_cost_set(priced: Mapping[str, Mapping[str, pd.DataFrame]], profile: str, checks: Iterable[str],
                 merges_measured: Mapping[str, int | None] | None = None) -> pd.DataFrame:
    """The rows of ``checks`` (labels of :data:`SOURCES`) under every cost set of ``priced``, as
    :func:`sweep_checks` gives them: a figure's verdicts beside its drawings."""
    wanted = {labelled(c, r) for c in checks for r in priced}
    return pd.DataFrame([row for reading, figures in priced.items()
                         for row in cost_set_checks(figures, profile, reading, (merges_measured or {}).get(reading))
                         if row["check"] in wanted], columns=COLUMNS)


def sweep_checks(frames: Mapping[str, pd.DataFrame], profile: str, priced: Mapping[str, Mapping[str, pd.DataFrame]],
                 merges_measured: Mapping[str, int | None] | None = None) -> pd.DataFrame:
    """Check 9, then each cost set's rows (:func:`cost_set_checks`; ``priced``: the figures'
    sweeps by reading, ``merges_measured`` by reading), then Algorithm 1's loss and the
    optimum, from the sweeps on random instances ``frames`` (``alg1-loss``, ``optimum``)."""
    rows = [check9(frames, profile, priced)]
    for reading, figures in priced.items():
        rows += cost_set_checks(figures, profile, reading, (merges_measured or {}).get(reading))
    fig6 = {reading: figures["fig6"] for reading, figures in priced.items() if "fig6" in figures}
    rows += [alg1_loss_check(frames.get("alg1-loss"), profile, paper_scale=fig6),
             alg1_loss_check(frames.get("alg1-loss"), profile, True),
             optimum_check(frames.get("optimum"), profile)]
    return pd.DataFrame(rows, columns=COLUMNS)


def summary_line(table: pd.DataFrame, profile: str) -> str:
    """One line for the report index: the counts per verdict, which checks differ, which cannot
    be decided and why."""
    return shared_summary_line(table, profile, subject="checks of Chandrasekaran & Sudarshan")


#: Every numbered figure, table and worked example of the paper: the checks of this report that
#: judge it (a check of :data:`SOURCES` once per cost set: :func:`coverage`), or why it is not
#: reproduced here (report 05 judges the measured Spark figures).
COVERAGE: list[tuple[str, tuple[str, ...], str]] = [
    ("Table 1 (notation)", (), "not reproducible: notation, no claim"),
    ("Fig. 1 (cost model, S = 5, R = 3)", ("1",), ""),
    ("Fig. 2 (Algorithm 1, cases 1-4: E1)", ("2",), ""),
    ("Algorithm 1 with the aggregation loop (E3)", ("3",), ""),
    ("Algorithm 1's optimality (C1)", ("4", "alg1", "alg1-regime"), ""),
    ("MinBatch, the deadline generator and the policies on three queries (E5)", ("5", "6", "7", "10"), ""),
    ("Fig. 3 (TPC-H cost fits)", (), "measured on Spark: report 05 (check fig3)"),
    ("Fig. 4 (cost against the number of batches)", (), "measured on Spark: report 05 (check fig4, the trend; "
                                                         "fig4-q10, fig4-cq2, fig4-agg-cq3, fig4-agg-cq4, its numbers "
                                                         "at 60 batches, judged at SF 1)"),
    ("Fig. 5 (batch against Spark streaming)", (), "measured on Spark: report 05 (checks fig5, fig5-interval: check "
                                                   "13, cost against the trigger interval, stream-equal)"),
    ("Table 2 (custom queries' costs)", (), "measured on Spark: report 05 (check table2)"),
    ("Table 3 (the queries)", (), "not reproducible: the list of queries, no claim (here the 13 queries' synthetic "
                                  "costs, or measured fits with costmodels)"),
    ("Fig. 6 (one query, deadlines 1D-0.1D)", ("fig6a", "fig6b"), ""),
    ("Fig. 7 (13 queries, policies, deadlines)", ("fig7", "8", "fig7-infeasible"), ""),
    ("Fig. 8 (no MinBatch)", ("fig8",), ""),
    ("Fig. 9 (rate profiles)", (), "not reproducible: the paper prints no curves, only that VR3 and VR4 end 20 "
                                   "and 7 s late; the curves drawn here are ours"),
    ("Fig. 10 (rate profiles at 0.1D, δRSF = 100 %)", ("fig10", "fig10-batches"), ""),
    ("Fig. 11 (rate profiles at 0.2D, δRSF = 50 %)", ("fig11", "fig11-last"), ""),
]


def coverage(readings: Iterable[str]) -> list[tuple[str, tuple[str, ...], str]]:
    """:data:`COVERAGE` with each cost set's check named once per reading of ``readings`` (the
    cost sets the report ran, :func:`labelled`)."""
    readings = list(readings)
    return [(item, tuple(x for c in checks for x in ([labelled(c, r) for r in readings] if c in SOURCES else [c])), note)
            for item, checks, note in COVERAGE]
