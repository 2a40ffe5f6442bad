"""Named, parameterized experiments returning tidy DataFrames, and the workload generators."""

from staleness_lab.experiments import bateni, golab, intermittent, intermittent_spark, leontyev, quickstart  # noqa: F401  (register)
from staleness_lab.experiments.registry import (
    Experiment,
    Param,
    expand_grid,
    experiment,
    get_experiment,
    list_experiments,
)

__all__ = ["Experiment", "Param", "expand_grid", "experiment", "get_experiment", "list_experiments"]
