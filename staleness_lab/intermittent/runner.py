"""Where durations come from: the ``run_batch`` / ``run_aggregate`` contract.

Every scheme asks a :class:`Runner` how long a step takes. :class:`CostModelRunner` answers from
the queries' cost models (exact Fractions, simulated time); part 2's Spark runner executes the
batch on its files and returns the measured wall time, so every scheme, CP-SAT's plans included,
runs for real without a code path of its own.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Protocol

from staleness_lab.intermittent.model import Query


class Runner(Protocol):
    """Durations of plan steps, in seconds."""

    def run_batch(self, query: Query, first: int, last: int, start: Fraction) -> Fraction:
        """Run (or price) the batch of tuples ``first..last`` (1-based) of ``query`` starting at ``start``."""
        ...

    def run_aggregate(self, query: Query, n: int, start: Fraction) -> Fraction:
        """Run (or price) the final aggregation of ``query`` over ``n`` partial aggregates."""
        ...


class CostModelRunner:
    """Durations from the cost models: ``Cost(last - first + 1)`` and ``AggCost(n)``."""

    def run_batch(self, query: Query, first: int, last: int, start: Fraction) -> Fraction:
        return query.cost(last - first + 1)

    def run_aggregate(self, query: Query, n: int, start: Fraction) -> Fraction:
        return query.agg_cost(n)


COST_MODEL = CostModelRunner()
