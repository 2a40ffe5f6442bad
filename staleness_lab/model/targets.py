"""Freshness targets: a table's ``target_lag`` and its resolution through the view DAG.

A target is end-to-end: a derived table's staleness already counts from its roots through the
trailing edge (Golab et al., Sec. 2.1), so ``target_lag: 60`` on a view bounds the age of the
oldest data it lacks, whatever the depth. ``target_lag: downstream`` takes the tightest target
among the tables that read it, transitively through other ``downstream`` tables (the rule of
warehouse refresh schedulers such as Snowflake's dynamic tables, which this model follows).
"""

from __future__ import annotations

from collections.abc import Sequence

from staleness_lab.errors import InputError
from staleness_lab.model.table import DOWNSTREAM, Table


def minimum_refresh(table: Table) -> float:
    """The shortest time one refresh of ``table`` can take under its nominal cost E(n) = alpha +
    beta*n (Golab et al., Sec. 2.2): a periodic feed's refresh loads at least one period, a
    replayed feed's at least its shortest update, a derived table's at least nothing (alpha).
    No lag below it can be met even on an idle warehouse, so a target below it is refused."""
    lengths = table.declared_lengths()
    return table.cost(lengths[0] if lengths is not None else 0.0)


def resolve_target_lags(tables: Sequence[Table], children: Sequence[Sequence[int]],
                        order: Sequence[int]) -> tuple[float | None, ...]:
    """Per table of ``tables`` (file order), its target in the workload's time unit, ``downstream`` resolved,
    or None for a table without one.

    Raises :class:`InputError` naming the table for a ``downstream`` table none of whose
    dependents (through other ``downstream`` tables) has a number, and for a target below
    :func:`minimum_refresh`. ``children[k]`` are the positions of the tables reading table k
    directly; ``order`` lists every position with each source before the tables it feeds."""
    resolved: list[float | None] = [None if t.target_lag in (None, DOWNSTREAM) else float(t.target_lag) for t in tables]
    for k in reversed(order):
        if tables[k].target_lag != DOWNSTREAM:
            continue
        below = [resolved[c] for c in children[k] if resolved[c] is not None]
        if not below:
            raise InputError(f"tables[{k}].target_lag", f"is {DOWNSTREAM!r} but no table that reads it (directly, or "
                             f"through other {DOWNSTREAM!r} tables) has a numeric target_lag", table=tables[k].name)
        resolved[k] = min(below)  # type: ignore[type-var]
    for k, target in enumerate(resolved):
        floor = minimum_refresh(tables[k])
        if target is not None and target < floor:
            how = "resolved from its dependents " if tables[k].target_lag == DOWNSTREAM else ""
            raise InputError(f"tables[{k}].target_lag", f"{how}{target:g} is below the table's minimum refresh time "
                             f"{floor:g} (alpha + beta * its shortest update): no schedule can meet it",
                             table=tables[k].name)
    return tuple(resolved)

