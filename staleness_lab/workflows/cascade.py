"""``join-cascade(k)``: the issue's scaling workflow for Algorithm 1 [D] (Olston §6 gives the
planner's structure, not its cost in blocks; the issue asks for CPU per call against k and the
live blocks).

k insert-only inputs ``in0 .. in{k-1}`` (stateless feeds: no key, no deletions, so every join
side may run asynchronously), joined left-deep on ``key``: ``j1 = in0 ⋈ in1``,
``j2 = j1 ⋈ in2``, ..., the last join writing ``output``, whose layout has one element per
input (element i is ``in{i}``). Bounds: staleness 0 on path 0 (every ``in0`` arrival is a
violation and a scheduler call), 1 day on every other path, inconsistency 1 week. ``in0``
delivers 50 rows every 15 minutes, the others 50 rows every hour; keys are uniform over 100.
Costs are the evaluation workflows' one set (digest §5 [D]).
"""

from __future__ import annotations

from staleness_lab.errors import InputError
from staleness_lab.workflows.builder import WorkflowBuilder
from staleness_lab.workflows.elements import Cost
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.sources import CASCADE_KEYS

#: The evaluation workflows' cost set (CPU-h; ``data/workflows/*.yaml``).
COST = Cost(alpha=0.01, beta=1e-6, gamma=1e-6, pi=1e-7)
#: The most inputs a cascade takes (the layout of ``output`` has one element per input).
MAX_K = 32


def join_cascade(k: int, *, rows: int = 50, keys: int = CASCADE_KEYS) -> Workflow:
    """The ``join-cascade(k)`` workflow (module docstring) for 2 <= ``k`` <= :data:`MAX_K`."""
    if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= MAX_K:
        raise InputError("k", f"must be an integer in 2..{MAX_K}, got {k!r}")
    b = WorkflowBuilder(f"join-cascade-{k}", horizon="1w", cost=COST)
    for i in range(k):
        b.input(f"in{i}", schema={"key": "str", f"v{i}": "str"}, insert_only=True, generator="cascade-feed",
                every="15min" if i == 0 else "1h", rows=rows, params={"column": f"v{i}", "keys": keys})
    left = "in0"
    for i in range(1, k):
        out = "output" if i == k - 1 else f"j{i}"
        b.op("join", [left, f"in{i}"], out=out, on=["key"], name=f"join{i}")
        left = out
    b.output("output")
    b.bound_staleness("output", 0, 0)
    for path in range(1, k):
        b.bound_staleness("output", path, "1d")
    return b.bound_inconsistency("output", "1w").build()
