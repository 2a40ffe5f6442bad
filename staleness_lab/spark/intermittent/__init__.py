"""Chandrasekaran & Sudarshan's intermittent queries on Spark (digest §5-6).

Part 1 (:mod:`staleness_lab.intermittent`) decides; this package executes:

* :mod:`.catalogue`: the 13 queries as DataFrame plans (partial per batch, final merge,
  reference) over one TPC-H generation (:class:`TpchData`).
* :mod:`.steps`: one batch, one merge, one whole query, executed and timed.
* :mod:`.runner`: part 1's plans executed batch by batch in virtual time (:func:`execute` for
  offline plans, :func:`dispatch` for the online schemes), measured durations fed back.
* :mod:`.calibrate`: measured batch and aggregation costs fitted as part 1's cost models
  (paper Figs. 3-4), and the cost of k equal batches.
* :mod:`.streaming`: the same queries on Spark Structured Streaming, the paper's baseline
  (Fig. 5, Table 2).

Nothing here schedules on its own, and importing it does not import pyspark.
"""

from staleness_lab.spark.intermittent.catalogue import (CATALOGUE, KINDS, STREAM_COLUMNS, CatalogueQuery,
                                                        TpchData, arrow_ddl, batches, compare_results,
                                                        run_batches, stream_schema)
from staleness_lab.spark.intermittent.calibrate import calibrate, split_costs
from staleness_lab.spark.intermittent.runner import SparkRun, SparkRunner, dispatch, execute

__all__ = ["CATALOGUE", "KINDS", "STREAM_COLUMNS", "CatalogueQuery", "TpchData", "arrow_ddl", "batches",
           "compare_results", "run_batches", "stream_schema", "SparkRun", "SparkRunner", "dispatch", "execute",
           "calibrate", "split_costs"]
