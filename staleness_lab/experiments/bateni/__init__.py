"""Bateni, Golab, Hajiaghayi and Karloff (staleness and stretch): the digest's experiments X1-X5
and the optimum's frontier (:mod:`~staleness_lab.experiments.bateni.sweeps`, which registers
``bateni-x1`` ... ``bateni-frontier``), their verdicts and errata
(:mod:`~staleness_lab.experiments.bateni.verdicts`) and the seeded instance generators
(:mod:`~staleness_lab.experiments.bateni.generators`)."""

from staleness_lab.experiments.bateni import sweeps  # noqa: F401  (registers the experiments)
