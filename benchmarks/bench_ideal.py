"""The unlimited-track ("ideal") run of relative lateness: the engine against the closed form.

For each Golab figure asked for (Fig. 4 and Fig. 8 by default), at its profile's horizon, its
default curve, seed 0 and a few utilizations, the script times :func:`staleness_lab.sim.ideal.ideal_run`
(the engine, what ``simulate(..., relative=True)`` runs) and
:func:`staleness_lab.sim.ideal.ideal_summary` (the closed form a sweep row uses), in-process,
best of ``--repeat``; checks that both give the same summary bit for bit; and prints both
timings and their ratio. The workloads are the figures' own: each experiment is called with its
row runner replaced by one that keeps the workload and the utilization.

Usage::

    python benchmarks/bench_ideal.py [--profile standard|full] [--figures fig4 fig8] [--u 0.5 0.9 1.2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from staleness_lab.experiments import get_experiment  # noqa: E402
from staleness_lab.experiments.golab import sweeps as golab  # noqa: E402
from staleness_lab.experiments.golab.generators import scale_to_utilization  # noqa: E402
from staleness_lab.model import Workload  # noqa: E402
from staleness_lab.sim.ideal import IdealSummary, ideal_run, ideal_summary  # noqa: E402


def figure_workload(name: str, profile: str, utilization: float) -> Workload:
    """The workload a figure's row at ``utilization`` (default curve, seed 0, the profile's
    horizon) runs, scaled to that utilization."""
    caught: list[Workload] = []

    def keep(workload: Workload, u: float, *_: Any) -> None:
        caught.append(scale_to_utilization(workload, u))

    fig = golab.figure(name)
    params = {p.name: p.default for p in get_experiment(fig.experiment).params}
    params.update(utilization=utilization, seed=0, horizon=golab.horizon(name, profile))
    with mock.patch.object(golab, "run_point", keep):
        fig.run(**params)
    return caught[0]


def best(func: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The shortest of ``repeat`` wall times of ``func()`` and its last result."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return min(times), out


def same(a: IdealSummary, b: IdealSummary) -> bool:
    return (a.events == b.events and a.staleness_area.tobytes() == b.staleness_area.tobytes()
            and a.max_staleness.tobytes() == b.max_staleness.tobytes() and np.array_equal(a.updates, b.updates))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="standard", choices=("quick", "standard", "full"))
    parser.add_argument("--figures", nargs="+", default=["fig4", "fig8"], choices=list(golab.SWEEPS))
    parser.add_argument("--u", nargs="+", type=float, default=[0.5, 0.9, 1.2], help="utilizations")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (the best is kept)")
    args = parser.parse_args(argv)
    print(f"{'figure':<7} {'U':>5} {'events':>9} {'engine s':>9} {'closed s':>9} {'ratio':>7}  identical")
    engine_total = closed_total = 0.0
    for name in args.figures:
        for u in args.u:
            w = figure_workload(name, args.profile, u)
            t_engine, trace = best(lambda: ideal_run(w), args.repeat)
            t_closed, summary = best(lambda: ideal_summary(w), args.repeat)
            ok = same(summary, IdealSummary.from_trace(trace)) and summary.fallback is None
            engine_total += t_engine
            closed_total += t_closed
            ratio = t_engine / t_closed
            print(f"{name:<7} {u:>5.2f} {trace.events:>9,} {t_engine:>9.3f} {t_closed:>9.4f} {ratio:>6.1f}x  {ok}")
    ratio = engine_total / closed_total
    print(f"{'total':<7} {'':>5} {'':>9} {engine_total:>9.3f} {closed_total:>9.4f} {ratio:>6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
