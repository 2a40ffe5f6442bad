"""Olston's asynchronous incremental workflows on Spark: the ``spark`` mode of the run loop
(:mod:`staleness_lab.workflows.sim`; digest §8).

* :mod:`.rows`: the Spark primitives of the row algebra (bases, strong deltas, upserts,
  increments), twins of the pandas ones, bound with the shared composites of
  :class:`staleness_lab.workflows.algebra.Algebra` as :data:`.rows.SPARK`.
* :mod:`.functions`: the evaluation workflows' row functions (``fn:``) on Spark DataFrames.
* :mod:`.executor`: :class:`~.executor.SparkRows`, the mode's block rows, every block committed
  to the Parquet block store (:mod:`staleness_lab.workflows.block_store`), and
  :func:`~.executor.spark_rows`, which the run loop's caller hands the loop.

Nothing here schedules: the run loop plans and decides, as in the ``memory`` mode. Importing this
package does not import pyspark; its modules do.
"""
