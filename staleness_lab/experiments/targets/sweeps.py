"""Report 07's sweeps: freshness targets on the example workloads over seeds, and the Leontyev
staleness bound against the observed worst on random workload families.

* ``targets-compare``: one workload and seed under one policy, its target metrics per table
  (:func:`~staleness_lab.experiments.targets.compare.compare_targets`);
* ``targets-budget``: the certified lag budget of one workload and seed under gedf-np or aus,
  each table's bound beside its observed worst lag in a run under the same scheduler;
* ``targets-conformance``: the target-lag scheduler's documented rules checked on its trace
  (:mod:`~staleness_lab.experiments.targets.conformance`);
* bound / observed worst: the staleness records of Leontyev's ``leontyev-bounds`` sweep (random
  workloads meeting the theorems' preconditions, report 02's), per table with every precondition
  met, grouped into families by their flags (views, broken feeds) and scheduler.

The workloads are ``data/workloads/targets-dag.yaml`` as shipped and
``leontyev-fig9-targets.yaml`` with worst-case budgets (``fig9-worst``: its average-case budgets
leave every bound unproven, digest A18, so only the worst-case ones can certify anything).
Seeds per profile: :data:`SEEDS`.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.api import as_workload
from staleness_lab.experiments.leontyev import sweeps as lx
from staleness_lab.experiments.targets.compare import COMPARED, compare_targets
from staleness_lab.experiments.targets.conformance import COLUMNS as CONFORMANCE_COLUMNS
from staleness_lab.experiments.targets.conformance import conformance
from staleness_lab.lag_budget import budget
from staleness_lab.model import Workload
from staleness_lab.model.workload import MAX_SEED
from staleness_lab.model.table import DOWNSTREAM
from staleness_lab.paths import data_root
from staleness_lab.sweeps.named import NamedSweep
from staleness_lab.sweeps.registry import Param, check_choice, experiment
from staleness_lab.theory.leontyev.budget import guaranteed_by_tracks
from staleness_lab.theory.leontyev.tasks import SCHEDULERS

#: The report's workloads: a name -> (file under data/workloads, overrides).
WORKLOADS: dict[str, tuple[str, dict[str, Any]]] = {
    "targets-dag": ("targets-dag.yaml", {}),
    "fig9-worst": ("leontyev-fig9-targets.yaml", {"provisioning": "worst"}),
}
#: Seeds per profile.
SEEDS = {"quick": 2, "standard": 5, "full": 20}
#: Target scales of the guarantee curve, and its track counts.
SCALES = (1.0, 1.5, 2.0, 3.0, 4.0)
CURVE_TRACKS = tuple(range(1, 9))

_WORKLOAD = Param("workload", str, "targets-dag", "the report's workload", choices=tuple(WORKLOADS))
_SEED = Param("seed", int, 0, "random seed (costs, common to every policy)", ge=0, le=MAX_SEED)


def report_workload(name: str, seed: int | None = None) -> Workload:
    """The report's workload ``name`` (:data:`WORKLOADS`), at ``seed`` when given."""
    check_choice(name, WORKLOADS, "workload")
    file, overrides = WORKLOADS[name]
    w = as_workload(data_root() / "data" / "workloads" / file).with_overrides(**overrides)
    return w if seed is None else w.with_overrides(seed=seed)


@experiment("targets-compare", _WORKLOAD, _SEED, Param("policy", str, "target-lag", "the scheduler", choices=COMPARED))
def compare_run(workload: str, seed: int, policy: str) -> pd.DataFrame:
    """One policy on a report workload and seed: per table with a target, misses, excess, worst lag."""
    return compare_targets(report_workload(workload, seed), seeds=(seed,), policies=(policy,)).drop(columns=["policy", "seed"])


@experiment("targets-budget", _WORKLOAD, _SEED, Param("policy", str, "gedf-np", "the bound's scheduler", choices=SCHEDULERS))
def budget_run(workload: str, seed: int, policy: str) -> pd.DataFrame:
    """The certified lag budget of a report workload (its tracks) beside one run at ``seed``."""
    found = budget(report_workload(workload, seed), policy=policy)
    return found.frame.drop(columns=["preconditions"]).assign(min_tracks=found.min_tracks)


@experiment("targets-conformance", _WORKLOAD, _SEED)
def conformance_run(workload: str, seed: int) -> pd.DataFrame:
    """target-lag's documented rules checked on its trace of a report workload at ``seed``."""
    from staleness_lab.api import simulate

    return conformance(simulate(report_workload(workload, seed), "target-lag").trace)[CONFORMANCE_COLUMNS]


def _rows(policies: tuple[str, ...]) -> Any:
    def rows(profile: str) -> list[dict[str, Any]]:
        return [{"workload": w, "seed": s, "policy": p} for w in WORKLOADS for s in range(SEEDS[profile]) for p in policies]
    return rows


def _conformance_rows(profile: str) -> list[dict[str, Any]]:
    return [{"workload": w, "seed": s} for w in WORKLOADS for s in range(SEEDS[profile])]


#: The report's sweeps by name (bound / observed worst reads Leontyev's ``bounds`` sweep).
SWEEPS: dict[str, NamedSweep] = {s.name: s for s in [
    NamedSweep("compare", "targets-compare", "target-lag against the papers' schedulers",
               "Misses, excess and worst lag per table and policy, same seeds (common random numbers).",
               _rows(COMPARED), curve="policy", curves=COMPARED),
    NamedSweep("budget", "targets-budget", "Certified lag budgets beside observed lags",
               "No table whose bound's preconditions are met lags past its bound in any run.", _rows(SCHEDULERS)),
    NamedSweep("conformance", "targets-conformance", "target-lag's documented rules on its traces",
               "Every documented rule holds on every trace that exercises it.", _conformance_rows),
]}


# -- the guarantee curve -----------------------------------------------------------------------

def scaled_targets(workload: Workload, scale: float) -> Workload:
    """``workload`` with every numeric target times ``scale`` (``downstream`` stays)."""
    tables = tuple(t if t.target_lag is None or t.target_lag == DOWNSTREAM
                   else dataclasses.replace(t, target_lag=float(Fraction(t.target_lag) * Fraction(scale)))
                   for t in workload.tables)
    return workload.with_overrides(tables=tables)


def guarantee_curve(workload: Workload, policy: str, scales: tuple[float, ...] = SCALES,
                    tracks: tuple[int, ...] = CURVE_TRACKS) -> pd.DataFrame:
    """Per target scale and track count m: how many of the tables with a target are guaranteed
    (``guaranteed`` of ``targeted``), with the scale's ``min_tracks`` from the certificate's own
    search (NaN when no m guarantees every target) beside it."""
    from staleness_lab.theory.leontyev.budget import certify

    rows = []
    for scale in scales:
        w = scaled_targets(workload, scale)
        targeted = sum(t is not None for t in w.target_lags)
        fewest = certify(w, policy).min_tracks
        for m, names in guaranteed_by_tracks(w, policy, tracks):
            rows.append({"policy": policy, "scale": scale, "tracks": m, "guaranteed": len(names), "targeted": targeted,
                         "min_tracks": np.nan if fewest is None else fewest})
    return pd.DataFrame(rows)


# -- bound / observed worst ----------------------------------------------------------------------

def family(derived: bool, outages: bool) -> str:
    """A random workload family's label from the bounds sweep's flags."""
    return ("with views" if derived else "base tables") + (", broken feeds" if outages else "")


def bound_ratios(bounds: pd.DataFrame) -> pd.DataFrame:
    """Per table of the ``leontyev-bounds`` sweep with every staleness precondition met and a
    positive observed worst: ``policy``, ``family``, ``tracks``, ``table``, ``bound``,
    ``observed`` and ``bound_over_observed``."""
    part = bounds[(bounds["claim"] == "staleness") & bounds["preconditions_met"].astype(bool)
                  & (bounds["observed"] > 0)].copy()
    part["family"] = [family(bool(d), bool(o)) for d, o in zip(part["derived"], part["outages"])]
    part["bound_over_observed"] = part["bound"] / part["observed"]
    return part[["policy", "family", "tracks", "seed", "table", "bound", "observed", "bound_over_observed"]].reset_index(drop=True)


def ratio_summary(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, family) and over all: tables, and bound / observed worst at the median, p95,
    smallest and largest."""
    def one(part: pd.DataFrame) -> dict[str, float]:
        r = part["bound_over_observed"].to_numpy(dtype=float)
        return {"tables": len(r), "median": float(np.median(r)), "p95": float(np.percentile(r, 95)),
                "min": float(r.min()), "max": float(r.max())}

    rows = [{"policy": p, "family": f, **one(part)} for (p, f), part in ratios.groupby(["policy", "family"], sort=True)]
    rows += [{"policy": p, "family": "all", **one(part)} for p, part in ratios.groupby("policy", sort=True)]
    return pd.DataFrame(rows, columns=["policy", "family", "tables", "median", "p95", "min", "max"])


def bounds_sweep(profile: str, **run: Any) -> pd.DataFrame:
    """Leontyev's ``bounds`` sweep at ``profile`` (report 02's random workloads; ``run``: runner,
    master, cache_dir as :meth:`NamedSweep.run` takes them)."""
    return lx.SWEEPS["bounds"].run(profile, **run)
