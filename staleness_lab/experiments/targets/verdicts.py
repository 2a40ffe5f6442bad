"""Report 07's verdicts, in :mod:`staleness_lab.experiments.verdicts`' record format, each
computed from a tidy frame the report holds (``frames``, keyed as below):

1. ``budget`` (the ``budget`` sweep): no table whose bound is certified (every precondition
   met; the guaranteed tables are among them) lags past its bound in any run, margin the
   smallest 1 - observed / bound;
2. ``conformance`` (the ``conformance`` sweep): every documented target-lag rule holds on every
   trace exercising it (a rule no trace exercises leaves the verdict undecided, ``scale``);
3. ``curve`` (:func:`~.sweeps.guarantee_curve` rows, with ``workload``): ``min_tracks`` is
   minimal and right: where the certificate names one, every target is guaranteed there and not
   on one track fewer; where it names none, no track count of the curve guarantees them all;
4. ``explain`` (:class:`~staleness_lab.lag_explain.Explanation` parts, with ``run``): each
   table's parts sum exactly (as Fractions) to its worst lag;
5. ``ratios`` (:func:`~.sweeps.bound_ratios`): Leontyev's staleness bound is at least the observed
   worst on every table of the random families (bound / observed >= 1), margin the smallest
   ratio minus 1.

A frame that is missing or empty leaves its check undecided (``scale``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.experiments.verdicts import COLUMNS, SCALE
from staleness_lab.experiments.verdicts import summary_line as shared_summary_line
from staleness_lab.experiments.verdicts import verdict_row as _row
from staleness_lab.theory.leontyev.budget import UNKNOWN
from staleness_lab.theory.records import REL_TOL

#: Where each check's claim comes from, and the claim.
FIGURES = {"1": "lag budgets (Theorems 2-3)", "2": "target-lag rules", "3": "min_tracks", "4": "explain",
           "5": "bound / observed worst"}
CLAIMS = {
    "1": "No table with a certified bound (every precondition met) lags past it in any run under the bound's scheduler.",
    "2": "The target-lag scheduler follows each documented rule on every trace that exercises it.",
    "3": "min_tracks is the smallest track count guaranteeing every target (none when no count does).",
    "4": "The explain split of each table's worst lag episode sums exactly to the observed lag.",
    "5": "Leontyev's staleness bound A(V_k) is at least the observed worst lag on every table of the random families.",
}


def _undecided(check: str, profile: str, why: str) -> dict[str, Any]:
    return _row(check, FIGURES[check], CLAIMS[check], None, None, why, profile, reason=SCALE)


def check1(budget: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Certified bounds against observed worst lags."""
    certified = budget[(budget["verdict"] != UNKNOWN) & budget["bound"].notna() & budget["observed_worst"].notna()]
    if certified.empty:
        return _undecided("1", profile, "No table of any run has a certified bound (every precondition met).")
    ratio = certified["observed_worst"] / certified["bound"]
    worst = certified.loc[ratio.idxmax()]
    over = int((ratio > 1 + REL_TOL).sum())
    guaranteed = int((certified["verdict"] == "guaranteed").sum())
    detail = (f"{len(certified)} certified (table, run) pairs over {certified['seed'].nunique()} seeds, {guaranteed} of them "
              f"guaranteed; {over} lag past the bound. Largest observed / bound: {ratio.max():.3f} ({worst['table']} of "
              f"{worst['workload']}, {worst['policy']}, seed {worst['seed']}). Margin: 1 - that ratio.")
    return _row("1", FIGURES["1"], CLAIMS["1"], over == 0, 1 - float(ratio.max()), detail, profile)


def check2(conformance: pd.DataFrame, profile: str) -> dict[str, Any]:
    """The documented rules on the scheduler's traces."""
    decided = conformance[conformance["holds"].notna()]
    rules = sorted(conformance["rule"].unique())
    unexercised = [r for r in rules if r not in set(decided["rule"])]
    failing = decided[decided["holds"] == False]  # noqa: E712
    runs = conformance[["workload", "seed"]].drop_duplicates()
    detail = (f"{int(conformance['checked'].sum())} events checked on {len(runs)} traces; "
              f"{int(conformance['violations'].sum())} violations.")
    if len(failing):
        first = failing.iloc[0]
        return _row("2", FIGURES["2"], CLAIMS["2"], False, -float(len(failing["rule"].unique())),
                    f"{detail} Rule {first['rule']} fails on {first['workload']} seed {first['seed']}: {first['detail']}. "
                    "Margin: minus the rules failing.", profile)
    if unexercised or not rules:
        return _undecided("2", profile, f"{detail} No trace exercises rule(s) {', '.join(map(str, unexercised))}.")
    return _row("2", FIGURES["2"], CLAIMS["2"], True, None, f"{detail} Every one of rules {', '.join(map(str, rules))} "
                "holds on every trace exercising it.", profile)


def check3(curve: pd.DataFrame, profile: str) -> dict[str, Any]:
    """min_tracks against the guarantee curve."""
    wrong, named, settled = [], 0, 0
    for (workload, policy, scale), part in curve.groupby(["workload", "policy", "scale"], sort=False):
        full = part.set_index("tracks")["guaranteed"] == part.set_index("tracks")["targeted"]
        fewest = part["min_tracks"].iloc[0]
        where = f"{workload} {policy} targets x{scale:g}"
        if pd.isna(fewest):
            settled += 1
            if full.any():
                wrong.append(f"{where}: no min_tracks, yet {int(full.idxmax())} tracks guarantee every target")
            continue
        named += 1
        m = int(fewest)
        if not full.get(m, False):
            wrong.append(f"{where}: min_tracks {m} leaves a target not guaranteed")
        if m - 1 in full.index and full[m - 1]:
            wrong.append(f"{where}: {m - 1} tracks already guarantee every target (min_tracks {m})")
    if not named:
        return _undecided("3", profile, f"No curve has a min_tracks ({settled} curves, none guaranteeing every target).")
    detail = (f"{named} curves with a min_tracks, each checked at it and one track fewer; {settled} without, checked "
              f"at every track count of the curve. {len(wrong)} wrong" + (f": {wrong[0]}." if wrong else "."))
    return _row("3", FIGURES["3"], CLAIMS["3"], not wrong, None, detail, profile)


def check4(parts: pd.DataFrame, profile: str) -> dict[str, Any]:
    """The explain split sums exactly."""
    if parts.empty:
        return _undecided("4", profile, "No explain split was computed.")
    off = []
    for (run, table), part in parts.groupby(["run", "table"], sort=False):
        total = sum(part["exact"], Fraction(0))
        lag = Fraction(float(part["until"].iloc[0])) - Fraction(float(part["since"].iloc[0]))
        if total != lag:
            off.append(f"{run} {table}: parts {float(total):g} != lag {float(lag):g}")
    count = parts.groupby(["run", "table"]).ngroups
    detail = f"{count} worst lag episodes split; {len(off)} do not sum exactly" + (f": {off[0]}." if off else ".")
    return _row("4", FIGURES["4"], CLAIMS["4"], not off, None, detail, profile)


def check5(ratios: pd.DataFrame, profile: str) -> dict[str, Any]:
    """Leontyev's bound against the observed worst on the random families."""
    if ratios.empty:
        return _undecided("5", profile, "No staleness record of the bounds sweep had every precondition met.")
    r = ratios["bound_over_observed"].to_numpy(dtype=float)
    low = ratios.iloc[int(np.argmin(r))]
    detail = (f"{len(r)} tables over {ratios['family'].nunique()} families and both schedulers: bound / observed worst "
              f"median {np.median(r):.2f}, p95 {np.percentile(r, 95):.2f}, smallest {r.min():.3f} ({low['family']}, "
              f"{low['policy']}, {low['tracks']} tracks). Margin: the smallest ratio - 1.")
    return _row("5", FIGURES["5"], CLAIMS["5"], bool(r.min() >= 1 - REL_TOL), float(r.min()) - 1, detail, profile)


CHECKS: dict[str, tuple[str, Callable[[pd.DataFrame, str], dict[str, Any]]]] = {
    "1": ("budget", check1), "2": ("conformance", check2), "3": ("curve", check3), "4": ("explain", check4),
    "5": ("ratios", check5),
}


def verdicts(frames: Mapping[str, pd.DataFrame], profile: str) -> pd.DataFrame:
    """The report's verdict table (module docstring), one row per check."""
    rows = []
    for check, (key, fn) in CHECKS.items():
        frame = frames.get(key)
        rows.append(_undecided(check, profile, f"The {key} frame was not computed.") if frame is None
                    else fn(frame, profile))
    return pd.DataFrame(rows, columns=COLUMNS)


def summary_line(table: pd.DataFrame, profile: str) -> str:
    """The index's line for report 07."""
    return shared_summary_line(table, profile, "checks on freshness targets")
