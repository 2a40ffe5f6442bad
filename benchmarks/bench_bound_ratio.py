"""Leontyev's staleness bound against the observed worst lag: bound / observed per table and
random workload family, the numbers report 07 shows.

Runs report 02's ``leontyev-bounds`` sweep at ``--profile`` (random workloads meeting the
theorems' preconditions: 1-4 tracks, 2-12 tables, with and without views and broken feeds,
GEDF-NP and AUS), keeps each table whose staleness bound has every precondition met, and prints
per (policy, family) and over all: tables, and A(V_k) / observed worst at the median, p95,
smallest and largest (:func:`staleness_lab.experiments.targets.sweeps.ratio_summary`), plus the
sweep's time.

Usage::

    python benchmarks/bench_bound_ratio.py [--profile quick|standard|full]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from staleness_lab.experiments.targets import sweeps as tx  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=("quick", "standard", "full"), default="standard")
    args = parser.parse_args()
    start = time.perf_counter()
    ratios = tx.bound_ratios(tx.bounds_sweep(args.profile, runner="local"))
    took = time.perf_counter() - start
    print(f"bound / observed worst, leontyev-bounds at the {args.profile} profile ({took:.1f} s): {len(ratios)} tables")
    print(tx.ratio_summary(ratios).to_string(index=False, float_format=lambda x: f"{x:.2f}"))


if __name__ == "__main__":
    main()
