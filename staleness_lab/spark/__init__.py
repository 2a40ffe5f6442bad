"""Everything that imports pyspark lives here, and imports it lazily.

``get_spark(master=None)`` is the one session factory of the workbench (see
:mod:`staleness_lab.spark.session`); :mod:`staleness_lab.spark.grid` runs experiment rows on
Spark executors for :func:`staleness_lab.sweeps.runner.run_grid`. The papers' executors sit in
subpackages: :mod:`staleness_lab.spark.intermittent` (Chandrasekaran & Sudarshan's queries,
batch and streaming) and :mod:`staleness_lab.spark.workflows` (Olston's ``spark`` mode).
Importing this package does not import pyspark: that happens when a session is first asked for.
"""

from staleness_lab.spark.session import active_spark, get_spark, java_available, stop_spark

__all__ = ["active_spark", "get_spark", "java_available", "stop_spark"]
