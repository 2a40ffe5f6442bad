"""The plan-size guard: a query set too big to plan is refused before any planning starts.

A few hundred bytes can ask for more than the machine holds: ``N: 1000000000000000000`` makes
MinBatch's scan over the splits of the window (O(sqrt N) sizes) and a plan of up to N batches;
thousands of queries make every dispatch decision scan all of them. :func:`check_plan_size`
refuses such a set up front, before MinBatch, the heuristics or the solver run, naming the field
that drives the size, the limit and the ``plan`` flag (API: :class:`PlanLimits` field) that
raises it, as the simulator's run-size guard does with ``--max-events``
(:mod:`staleness_lab.sim.size`).

The rules (defaults in :class:`PlanLimits`):

* ``queries``: at most ``max_queries`` queries (``--max-queries``);
* ``queries[k].arrivals.N``: at most ``max_tuples`` tuples in any one query (``--max-tuples``);
* the batches: every batch holds at least one tuple, so a plan of the set has at most
  ``Σ N`` batches (and the CP-SAT planner at most ``Σ N`` slots); ``Σ N`` at most
  ``max_batches`` (``--max-batches``), the error naming the query with the largest N.

The defaults are far above the paper's scale (13 queries of 4,500 tuples, Σ N = 58,500) and were
measured through the command line on a loaded two-core machine, import included: 1,000 queries
of 10 tuples plan in 1.8 s (LLF); one query of 1,000,000 tuples passes the per-query rule (LLF in
12 s) but not the batch rule unless ``--max-batches`` is raised; the worst set the defaults admit,
Σ N = 250,000 with ``c_max`` forcing one tuple per batch (250,000 batches), plans in 12 s and
0.6 GB (EDF), where 1,000,000 such batches took 51 s and 2 GB. The CP-SAT planner keeps its own
tighter rule of :data:`~staleness_lab.optimize.batch_plan.MAX_TUPLES` tuples per query, checked
with these before the heuristic hint is built. Regression tests: tests/intermittent/test_plan_hostile.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.intermittent.model import QuerySet
from staleness_lab.model.values import decimal_digits

#: Default most queries in a set.
MAX_QUERIES = 1_000
#: Default most tuples (N) in one query.
MAX_TUPLES = 1_000_000
#: Default most batches a plan may need: Σ N over the set (a batch holds at least one tuple).
MAX_BATCHES = 250_000
#: Default most terms in one round of the CP-SAT planner's model
#: (:func:`~staleness_lab.optimize.batch_plan.model_terms`): about 0.9 GB while CP-SAT solves.
MAX_MODEL_TERMS = 500_000

#: The flag that raises each limit, by :class:`PlanLimits` field.
FLAGS = {"max_queries": "--max-queries", "max_tuples": "--max-tuples", "max_batches": "--max-batches"}


@dataclass(frozen=True)
class PlanLimits:
    """The guard's limits: ``max_queries`` queries, ``max_tuples`` tuples per query, and
    ``max_batches`` for Σ N (the most batches a plan may need). Each must be an integer >= 1;
    a bad one raises :class:`InputError` naming its flag."""

    max_queries: int = MAX_QUERIES
    max_tuples: int = MAX_TUPLES
    max_batches: int = MAX_BATCHES

    def __post_init__(self) -> None:
        for name, flag in FLAGS.items():
            value: Any = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(flag, f"must be an integer >= 1, got {value!r}")

    @classmethod
    def given(cls, **values: int | None) -> PlanLimits:
        """The defaults with the values given (None keeps a default), e.g. from the flags."""
        return cls(**{name: value for name, value in values.items() if value is not None})


def check_plan_size(qs: QuerySet, limits: PlanLimits | None = None) -> None:
    """Refuse ``qs`` with an :class:`InputError` when it breaks a rule of the module docstring:
    the field, the size, the limit and the flag that raises it, in one line."""
    limits = PlanLimits() if limits is None else limits
    count = len(qs.queries)
    if count > limits.max_queries:
        raise InputError("queries", f"{count:,} queries, above the limit of {limits.max_queries:,} "
                                    f"(raise it with {FLAGS['max_queries']})")
    largest = max(range(count), key=lambda k: qs.queries[k].n)
    n = qs.queries[largest].n
    if n > limits.max_tuples:
        raise InputError(f"queries[{largest}].arrivals.N",
                         f"{_count(n)} tuples in one query, above the limit of {limits.max_tuples:,} "
                         f"(raise it with {FLAGS['max_tuples']})")
    total = sum(q.n for q in qs.queries)
    if total > limits.max_batches:
        raise InputError(f"queries[{largest}].arrivals.N",
                         f"the queries' N sum to {_count(total)} tuples, so a plan may need as many batches, above "
                         f"the limit of {limits.max_batches:,} (raise it with {FLAGS['max_batches']})")


def _count(value: int) -> str:
    """An integer as text, or its order of magnitude past 30 digits."""
    return f"{value:,}" if value < 10**30 else f"about 10^{decimal_digits(value) - 1}"
