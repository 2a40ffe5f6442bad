"""One package per paper (its named sweeps, verdicts and generators), the verdict format they
share (:mod:`~staleness_lab.experiments.verdicts`) and the quickstart sweep.

Importing this package registers every paper's experiments with
:mod:`staleness_lab.sweeps.registry`; the sweep machinery itself lives in
:mod:`staleness_lab.sweeps`.
"""

from staleness_lab.experiments import bateni, golab, intermittent, leontyev, olston, quickstart  # noqa: F401  (register)

__all__ = ["bateni", "golab", "intermittent", "leontyev", "olston", "quickstart"]
