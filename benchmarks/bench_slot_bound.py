"""How loose the certified lag bound is: bound / observed worst lag per table, under gedf-np.

Workload families are seeded draws of :func:`staleness_lab.experiments.leontyev.sweeps.bounds_workload`
(the workloads the ``leontyev-bounds`` sweep checks Theorems 1-4 on), without outages, on 1, 2
and 4 tracks with 5 and 12 tables, costs varying by 20 %:

* ``base-half`` / ``base-full``: periodic base tables only, U_sum at 50 % / 100 % of m;
* ``dag-half`` / ``dag-full``: a third of the tables derived (views over one or two others).

Both certified bounds are measured: ``leontyev`` (Def. 13's A(V_k)) and ``slot`` (the tighter
gedf-np bound of :mod:`staleness_lab.theory.leontyev.slot`). Every table gets a target no bound reaches, so its verdict is ``guaranteed`` exactly where the
bound's preconditions hold; only those tables count. Per table the ratio is the certified bound
(:func:`staleness_lab.lag_budget.budget`) over the worst lag of one gedf-np run at the workload's
seed and horizon (the ``observed_worst`` column). Printed: per family and overall, the number of
tables, the median and the 95th percentile of the ratio, and its minimum (below 1 would be a
bound that a run exceeds).

Then ``--restarts`` restarts of the adversarial search against the slot bound
(:func:`staleness_lab.experiments.leontyev.adversary.search`, ``--steps`` moves each, on 1-3 tracks
with 2-4 tables): the largest observed / bound it reached and how many traces broke the bound.

Usage::

    python benchmarks/bench_slot_bound.py [--seeds 10] [--restarts 30] [--steps 80] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from staleness_lab.experiments.leontyev.adversary import search  # noqa: E402
from staleness_lab.experiments.leontyev.sweeps import bounds_workload  # noqa: E402
from staleness_lab.lag_budget import budget  # noqa: E402
from staleness_lab.model import Workload  # noqa: E402
from staleness_lab.theory.leontyev.budget import BOUND_KINDS  # noqa: E402

#: family -> (utilization, derived)
FAMILIES = {"base-half": (0.5, False), "base-full": (1.0, False), "dag-half": (0.5, True), "dag-full": (1.0, True)}
TRACKS = (1, 2, 4)
TABLES = (5, 12)
#: A target no bound reaches, so the verdict follows the preconditions alone.
FAR = 1e9


def untargeted(w: Workload) -> Workload:
    return w.with_overrides(tables=tuple(dataclasses.replace(t, target_lag=FAR) for t in w.tables))


def ratios(w: Workload, bound: str) -> list[float]:
    """bound / observed worst of every guaranteed table of one gedf-np run of ``w``."""
    result = budget(untargeted(w), policy="gedf-np", bound=bound)
    return [float(t.bound) / result.observed[t.table] for t in result.certificate.tables
            if t.verdict == "guaranteed" and result.observed.get(t.table)]


def summary(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    return {"tables": int(a.size), "median": float(np.median(a)), "p95": float(np.percentile(a, 95)),
            "min": float(a.min())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--restarts", type=int, default=30)
    parser.add_argument("--steps", type=int, default=80)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for bound in BOUND_KINDS:
        per = {family: [r for seed in range(args.seeds) for m in TRACKS for n in TABLES
                        for r in ratios(bounds_workload(seed, m, n, utilization, derived, False, 0.2), bound)]
               for family, (utilization, derived) in FAMILIES.items()}
        rows[bound] = {family: summary(values) for family, values in per.items()}
        rows[bound]["all"] = summary([r for values in per.values() for r in values])
        for family, row in rows[bound].items():
            print(f"{bound:>8} {family:>10}: {row['tables']:5d} tables  bound/observed median {row['median']:.3f}  "
                  f"p95 {row['p95']:.3f}  min {row['min']:.3f}")
    found = [search(seed, 1 + seed % 3, 2 + seed % 3, args.steps) for seed in range(args.restarts)]
    best = max(r.best.ratio for r in found)
    breakers = sum(len(r.breakers) for r in found)
    print(f"adversary: {args.restarts} restarts x {args.steps} steps against the slot bound: largest observed/bound "
          f"{best:.3f}, traces above the bound {breakers}")
    if args.out:
        args.out.write_text(json.dumps({"ratios": rows, "adversary": {"best": best, "breakers": breakers}}, indent=2))


if __name__ == "__main__":
    main()
