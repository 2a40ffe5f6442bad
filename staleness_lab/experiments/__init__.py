"""One package per paper (its named sweeps, verdicts and generators), the verdict format they
share (:mod:`~staleness_lab.experiments.verdicts`) and the quickstart sweep.

Importing this package registers every paper's experiments with
:mod:`staleness_lab.sweeps.registry`, so its :func:`get_experiment` and :func:`list_experiments`
(the registry's, re-exported) know them all: lookups by name that must find any paper's
experiment (``staleness-lab sweep``, notebooks, tests) go through here. The sweep machinery
itself lives in :mod:`staleness_lab.sweeps`, which never imports this package.
"""

from staleness_lab.experiments import (  # noqa: F401  (register)
    bateni, golab, intermittent, leontyev, olston, quickstart, targets,
)
from staleness_lab.sweeps.registry import get_experiment, list_experiments

__all__ = ["bateni", "get_experiment", "golab", "intermittent", "leontyev", "list_experiments", "olston", "quickstart", "targets"]
