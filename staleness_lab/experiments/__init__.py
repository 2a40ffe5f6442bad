"""One module per paper (its registered experiments, checks and generators).

Importing this package registers every paper's experiments with
:mod:`staleness_lab.sweeps.registry`; the sweep machinery itself lives in
:mod:`staleness_lab.sweeps`.
"""

from staleness_lab.experiments import bateni, golab, intermittent, intermittent_hybrid, intermittent_spark, leontyev, olston, quickstart  # noqa: F401  (register)

__all__ = ["bateni", "golab", "intermittent", "intermittent_hybrid", "intermittent_spark", "leontyev", "olston", "quickstart"]
