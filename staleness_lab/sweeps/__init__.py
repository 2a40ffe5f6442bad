"""The sweep machinery: the experiment registry and parameter grids, the per-row cache, the
grid runner (local or Spark) and the ``staleness-lab sweep`` command.

The papers' experiments live in :mod:`staleness_lab.experiments` and register themselves with
:func:`experiment` when that package is imported; this package never imports it (the layers go
experiments -> sweeps -> spark), so :func:`get_experiment` and :func:`list_experiments` know the
experiments registered so far, and a lookup that must know every paper's (the CLI, a notebook)
goes through :mod:`staleness_lab.experiments`, which re-exports them. A Spark executor looks
nothing up: it unpickles the row function, whose experiment imports its own module.
"""

from staleness_lab.sweeps.registry import (
    Experiment,
    Param,
    expand_grid,
    experiment,
    get_experiment,
    list_experiments,
)
from staleness_lab.sweeps.runner import run_grid, run_sweep

__all__ = ["Experiment", "Param", "expand_grid", "experiment", "get_experiment", "list_experiments", "run_grid", "run_sweep"]
