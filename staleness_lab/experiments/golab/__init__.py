"""Golab, Johnson and Shkapenyuk, "Scalable Scheduling of Updates in Streaming Data Warehouses":
the figure sweeps (:mod:`~staleness_lab.experiments.golab.sweeps`, which registers
``golab-fig4`` ... ``golab-fig11``), their verdicts (:mod:`~staleness_lab.experiments.golab.verdicts`)
and the seeded workload generators (:mod:`~staleness_lab.experiments.golab.generators`)."""

from staleness_lab.experiments.golab import sweeps  # noqa: F401  (registers the experiments)
