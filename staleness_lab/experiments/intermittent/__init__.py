"""Chandrasekaran & Sudarshan, "Scheduling of Intermittent Query Processing": the simulated
figures and the optimum (:mod:`~staleness_lab.experiments.intermittent.sweeps`), the measured
rows on Spark (:mod:`~staleness_lab.experiments.intermittent.spark`) and the plans executed on
Spark (:mod:`~staleness_lab.experiments.intermittent.hybrid`), each registering its
experiments, and their verdicts (:mod:`~staleness_lab.experiments.intermittent.verdicts`,
:mod:`~staleness_lab.experiments.intermittent.spark_verdicts`)."""

# In the order ``staleness-lab sweep --list`` shows their experiments.
from staleness_lab.experiments.intermittent import sweeps, spark, hybrid  # noqa: F401, I001  (register the experiments)
