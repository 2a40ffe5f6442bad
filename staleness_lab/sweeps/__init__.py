"""The sweep machinery: the experiment registry and parameter grids, the per-row cache, the
grid runner (local or Spark) and the ``staleness-lab sweep`` command.

The papers' experiments live in :mod:`staleness_lab.experiments` and register themselves with
:func:`experiment`; :func:`get_experiment` and :func:`list_experiments` import that package on
first use, so every paper's experiments are known wherever a lookup happens.
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
