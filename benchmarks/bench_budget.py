"""How long ``budget`` takes: Leontyev et al.'s Fig. 9 workload and 1,000 tables.

Fig. 9 is ``data/workloads/leontyev-fig9.yaml`` (14 base tables on 2 tracks, horizon 30,000) with
targets added: 2,000 on V1-V7 (period 300), 5,000 on V8-V14 (period 900). The 1,000-table
workload is seeded: 900 periodic base tables (periods 300-900, alpha = 1% of the period, beta =
0.1) and 100 views over 1-3 of them, every base table ``downstream`` when a view reads it (else a
target of four periods), the views 6,000; tracks so that U_sum is about 70% of m; horizon 5,000.

Per workload it times, best of ``--repeat``: the certificate alone (bounds, preconditions,
verdicts, min_tracks, blame: :func:`~staleness_lab.theory.leontyev.budget.certify`) and the
whole ``budget`` call (the certificate plus one simulation for ``observed_worst``).

Usage::

    python benchmarks/bench_budget.py [--repeat 3] [--policy gedf-np]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from staleness_lab import budget, load_workload  # noqa: E402
from staleness_lab.model import Table, Workload  # noqa: E402
from staleness_lab.theory.leontyev.budget import certify  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def fig9() -> Workload:
    w = load_workload(ROOT / "data" / "workloads" / "leontyev-fig9.yaml")
    tables = tuple(dataclasses.replace(t, target_lag=2000.0 if t.period == 300 else 5000.0) for t in w.tables)
    return w.with_overrides(tables=tables)


def thousand(seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    periods = rng.choice([300.0, 450.0, 600.0, 900.0], size=900)
    views = [sorted(rng.choice(900, size=int(rng.integers(1, 4)), replace=False)) for _ in range(100)]
    read = {int(i) for v in views for i in v}
    base = [Table(f"b{i}", alpha=0.01 * p, beta=0.1, period=p, target_lag="downstream" if i in read else 4 * p)
            for i, p in enumerate(periods)]
    derived = [Table(f"v{j}", alpha=1.0, beta=0.0, sources=tuple(f"b{i}" for i in v), target_lag=6000.0)
               for j, v in enumerate(views)]
    u = 0.11 * 900 + 100 * 1.0 / 900  # u_k = (0.01 p + 0.1 p) / p for a base table
    return Workload(tables=(*base, *derived), tracks=max(1, int(u / 0.7) + 1), horizon=5000.0, seed=seed)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--policy", default="gedf-np")
    args = parser.parse_args()
    for name, w in (("fig9", fig9()), ("1000 tables", thousand())):
        c = certify(w, args.policy)
        cert = best(lambda: certify(w, args.policy), args.repeat)
        whole = best(lambda: budget(w, policy=args.policy), args.repeat)
        verdicts = {v: sum(t.verdict == v for t in c.tables) for v in ("guaranteed", "not guaranteed", "unknown")}
        print(f"{name}: {len(w.tables)} tables on {w.tracks} tracks, horizon {w.horizon:g}, {args.policy}: "
              f"certificate {cert:.3f} s, budget (with the run) {whole:.3f} s; {verdicts}; "
              f"min_tracks {c.min_tracks} {c.min_tracks_reason or ''}; blame {len(c.blame or ())} table(s)")


if __name__ == "__main__":
    main()
