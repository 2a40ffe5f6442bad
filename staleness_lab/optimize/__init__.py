"""Exact optimizers (OR-Tools CP-SAT).

:func:`optimal_plan` (:mod:`staleness_lab.optimize.batch_plan`) is the digest's §7 formulation:
the best batch plan for a :class:`~staleness_lab.intermittent.model.QuerySet` on its time grid.
:func:`optimum` (:mod:`staleness_lab.optimize.staleness_optimum`) is the minimum of Bateni et
al.'s X_w over all schedules of a workload (Bateni digest §5), cross-checked by
:func:`brute_force` (:mod:`staleness_lab.optimize.brute_force`).
This package imports ortools, never pyspark.
"""

from staleness_lab.optimize.batch_plan import OBJECTIVES, optimal_plan
from staleness_lab.optimize.brute_force import BruteForce, brute_force
from staleness_lab.optimize.staleness_optimum import StalenessOptimum, optimum

__all__ = ["OBJECTIVES", "BruteForce", "StalenessOptimum", "brute_force", "optimal_plan", "optimum"]
