"""Figs. 7 and 8 beside their optimum: each heuristic's gap to the CP-SAT plan of its instance.

The rows of ``intermittent-multi`` (the heuristics) and of ``intermittent-multi-optimum`` (the
optimum, :func:`~staleness_lab.experiments.intermittent.sweeps.optimum_against`) meet on their
instance (ρ, windows, seed). Per ρ, the table holds one row per heuristic (its misses and cost,
the misses it has beyond the optimum's and its cost over the optimum's, each a mean over seeds)
and one row for the optimum: its misses, its cost, its status and its proven bounds.

The status says how far the solver got, never more: ``optimal`` only where both phases are
proven for the true costs, ``feasible, gap g`` (and ``misses ≥ b`` when the misses are not
proven) otherwise. Off the solver's 0.1 s grid (the synthetic costs are) the planner plans on the
grid with every step rounded up (a plan feasible at the true costs, priced at them here) and
bounds on durations rounded down (:mod:`~staleness_lab.optimize.true_bounds`), so its bounds and
its "optimal" hold for the true costs and no heuristic can beat a proven row. A row computed
before the planner had true bounds (no ``true_bounds`` column, or false) proved its optimum on the
grid only: it reads ``feasible (optimal on the 0.1 s grid only)``, since a heuristic may beat it
there, which the table shows as a negative difference. A heuristic's zero difference against an
unproven plan does not make it optimal.
"""

from __future__ import annotations

import math

import pandas as pd

#: The optimum's row in the tables.
OPTIMUM = "CP-SAT optimum"
#: The caption of the tables: what the columns are and how far the statuses go.
CAPTION = ("per ρ: each heuristic's misses and cost, its misses minus the optimum's and its cost over the optimum's "
           "(means over seeds), then the CP-SAT plan with its status and proven bounds; the optimum's cost is its "
           "plan at the cost model's durations, and its bounds hold for them (the solver plans on its time grid with "
           "each step rounded up and bounds with each rounded down). 'optimal' is proven for the true costs; "
           "'feasible, gap g' is an unproven plan (g = (cost − bound) / cost), so no heuristic is shown optimal "
           "against it; 'optimal on the grid only': a row whose proof covers the rounded-up durations only, where "
           "a negative difference is a heuristic beating it")


def _true(row: pd.Series) -> bool:
    """Whether the row's status and bounds hold for the true costs."""
    marked = row.get("true_bounds", False)
    return bool(row["on_grid"]) or (bool(pd.notna(marked)) and bool(marked))


def optimum_label(row: pd.Series) -> str:
    """How far the solver got on one instance: ``optimal`` (proven for the true costs),
    ``feasible, [misses ≥ b, ]gap g``, ``feasible (optimal on the 0.1 s grid only)`` or
    ``no plan (<status>)``."""
    if row["opt_status"] == "optimal":
        return "optimal" if _true(row) else f"feasible (optimal on the {row['time_unit']:g} s grid only)"
    grid = "" if _true(row) else f" on the {row['time_unit']:g} s grid"
    if row["status"] != "ok":
        return f"no plan ({row['opt_status']})"
    parts = [f"misses ≥ {row['misses_bound']:g}"] if row["misses_bound"] < row["misses"] else []
    parts.append(f"gap {row['gap']:.2f}" if math.isfinite(row["gap"]) else "no cost bound")
    return f"feasible{grid}, " + ", ".join(parts)


def _scheme(frame: pd.DataFrame) -> pd.Series:
    """The heuristic's name as :func:`~staleness_lab.experiments.intermittent.sweeps.fig78_heuristics`
    gives it: the policy, with ``no-MinBatch`` where the batches take whatever has arrived."""
    plain = ~frame["minbatch"].astype(bool) if "minbatch" in frame else pd.Series(False, index=frame.index)
    return frame["policy"].where(~plain, frame["policy"] + " no-MinBatch")


def _joined_label(labels: pd.Series) -> str:
    unique = list(dict.fromkeys(labels))
    return unique[0] if len(unique) == 1 else "; ".join(f"{label} ({int((labels == label).sum())} seeds)"
                                                        for label in unique)


def _bounds(rows: pd.DataFrame) -> str:
    """The proven lower bounds of the optimum's misses and cost, means over seeds (a mean of
    bounds bounds the mean). They hold for the true costs; a row computed before they did bounds
    the plan's cost on the grid (rounded up) only, so it is shown beside that cost."""
    cost = rows["cost_bound"].mean()
    if not math.isfinite(cost):
        shown = "no cost bound"
    elif rows.apply(_true, axis=1).all():
        shown = f"cost ≥ {cost:.1f}"
    else:
        shown = f"cost on the grid {rows['grid_cost'].mean():.1f} ≥ {cost:.1f}"
    return f"misses ≥ {rows['misses_bound'].mean():g}, {shown}"


def optimum_gap_table(heuristics: pd.DataFrame, optimum: pd.DataFrame) -> pd.DataFrame:
    """One figure's heuristics (rows of ``intermittent-multi``) beside the optimum of their
    instances, per (windows, ρ): the module docstring's table, indexed by (windows, rho, scheme).
    Instances the optimum sweep did not plan (the quick profile plans two) are left out."""
    key = ["rho", "windows", "seed"]
    opt = optimum.assign(label=optimum.apply(optimum_label, axis=1))
    both = heuristics.assign(scheme=_scheme(heuristics)).merge(
        opt[key + ["misses", "total_cost"]].rename(columns={"misses": "opt_misses", "total_cost": "opt_cost"}), on=key)
    both = both.assign(extra_misses=both["misses"] - both["opt_misses"], cost_ratio=both["total_cost"] / both["opt_cost"])
    rows = []
    for (windows, rho), part in both.groupby(["windows", "rho"], sort=False):
        for scheme, mine in part.groupby("scheme", sort=False):
            rows.append({"windows": windows, "rho": rho, "scheme": scheme, "misses": mine["misses"].mean(),
                         "cost": mine["total_cost"].mean(), "extra_misses": mine["extra_misses"].mean(),
                         "cost_ratio": mine["cost_ratio"].mean(), "status": "", "bounds": ""})
        best = opt[(opt["windows"] == windows) & (opt["rho"] == rho) & opt["seed"].isin(part["seed"])]
        rows.append({"windows": windows, "rho": rho, "scheme": OPTIMUM, "misses": best["misses"].mean(),
                     "cost": best["total_cost"].mean(), "extra_misses": math.nan, "cost_ratio": math.nan,
                     "status": _joined_label(best["label"]),
                     "bounds": _bounds(best)})
    table = pd.DataFrame(rows, columns=["windows", "rho", "scheme", "misses", "cost", "extra_misses", "cost_ratio",
                                        "status", "bounds"])
    return table.sort_values(["windows", "rho"], ascending=[True, False], kind="stable").set_index(
        ["windows", "rho", "scheme"])
