"""Intermittent queries with deadlines (Chandrasekaran & Sudarshan): batch plans, not the engine.

A query aggregates one input window of ``N`` tuples; its result is due at a deadline ``D``. The
scheduler gathers arrived tuples into a few batches, runs the query on each, and merges the
partial aggregates in one final aggregation. Every scheme here maps a :class:`QuerySet` to one
:class:`BatchPlan` (the offline ones, Algorithm 1, the exact DP and the CP-SAT planner of
:mod:`staleness_lab.optimize.batch_plan`, directly; the online LLF/EDF/SJF/RR through one small
event-driven dispatcher over m executors, :mod:`staleness_lab.intermittent.dispatch`).

Why not the update-scheduling engine (:mod:`staleness_lab.sim`): its jobs load everything
available at ``alpha + beta*n`` over a time span and have no deadlines. Running these schemes
there would add five things to its benchmarked hot loop that no update scheduler uses: a
readiness threshold counted in tuples, batch sizes chosen per job, an aggregation whose cost
depends on the batch count, deadline metrics and policy timers. So this package keeps its own
small model: no staleness, no policy protocol.

Durations come from a runner with two methods, both returning seconds::

    run_batch(query, first, last, start)   # a batch of tuples first..last starting at start
    run_aggregate(query, n, start)         # the final aggregation over n partial aggregates

:class:`CostModelRunner` (the cost models of :mod:`staleness_lab.intermittent.costs`) is the
default; part 2 runs the same plans on Spark with a runner that measures real batches, on the
TPC-H streams :mod:`staleness_lab.intermittent.tpch` writes (with pyarrow, no Spark).

Numbers are exact Fractions throughout (:mod:`staleness_lab.intermittent.numbers`); this
package imports neither pyspark nor ortools.
"""

from staleness_lab.intermittent.arrivals import PROFILES, FixedRate, StepProfile, fixed_rate, rate_profile
from staleness_lab.intermittent.costs import AggCost, LinearCost, PiecewiseCost, TableCost, est, parse_agg_cost, parse_cost
from staleness_lab.intermittent.model import Query, QuerySet, load_queryset, parse_queryset
from staleness_lab.intermittent.plan import BatchPlan, Step, check_plan
from staleness_lab.intermittent.runner import CostModelRunner, Runner

__all__ = [
    "PROFILES", "AggCost", "BatchPlan", "CostModelRunner", "FixedRate", "LinearCost", "PiecewiseCost", "Query",
    "QuerySet", "Runner", "Step", "StepProfile", "TableCost", "check_plan", "est", "fixed_rate", "load_queryset",
    "parse_agg_cost", "parse_cost", "parse_queryset", "rate_profile",
]
