"""Olston, "Scheduling of Asynchronous Incremental Workflows": Tables 5 and 6, check 12, the
ablation and the scaling grid (:mod:`~staleness_lab.experiments.olston.sweeps`, which registers
``olston-run`` and ``olston-cascade``) and their verdicts
(:mod:`~staleness_lab.experiments.olston.verdicts`)."""

from staleness_lab.experiments.olston import sweeps  # noqa: F401  (registers the experiments)
