"""Leontyev, Johnson and Anderson (AUS): the Fig. 9 and bounds sweeps
(:mod:`~staleness_lab.experiments.leontyev.sweeps`, which registers ``leontyev-fig9`` and
``leontyev-bounds``) and their verdicts (:mod:`~staleness_lab.experiments.leontyev.verdicts`)."""

from staleness_lab.experiments.leontyev import sweeps  # noqa: F401  (registers the experiments)
