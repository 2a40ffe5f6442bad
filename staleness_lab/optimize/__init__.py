"""Exact planners (OR-Tools CP-SAT) for the intermittent-query model.

:func:`optimal_plan` (:mod:`staleness_lab.optimize.batch_plan`) is the digest's §7 formulation:
the best batch plan for a :class:`~staleness_lab.intermittent.model.QuerySet` on its time grid.
This package imports ortools, never pyspark.
"""

from staleness_lab.optimize.batch_plan import OBJECTIVES, optimal_plan

__all__ = ["OBJECTIVES", "optimal_plan"]
