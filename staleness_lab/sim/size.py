"""The run-size guard: how many events a run will have, estimated before it starts.

A workload can ask for more than the machine can hold (``horizon: 1e12``, ``period: 1e-9``): the
engine would grow its trace at ~80 MB/s until killed. :func:`check_run_size` refuses such a run
up front, naming the key that drives it, unless the caller raises the limit (``max_events``,
``--max-events``).

Estimate (an upper bound up to the engine's own counting): a periodic feed has
``floor((H + J - phase) / period)`` arrivals in ``[0, H]`` (arrival k at ``phase + k*period``,
k >= 1, up to J = ``arrival_jitter`` earlier; outages only delay files, some past H); a replayed
feed its listed arrivals. The estimate never compiles a feed (:attr:`Workload.files`), so a run
too big to hold is refused before its files are built. A base table runs at most one job per
arrival (a job needs new data; chopping cuts a backlog into pieces of at least one period); a
derived table at most one job per distinct trailing edge of its base ancestors, so at most the
sum of their jobs. The
engine counts an event per arrival and per completed job; its trace holds one row per job and
per freshness change, about :data:`BYTES_PER_EVENT` bytes per event at the peak (measured: 112 B
per event for 2 and 6 million events, DataFrames included).

Default limit: :data:`MAX_EVENTS` (10^8) events, or fewer when half of this machine's memory
(or of the address space left under ``ulimit -v``) cannot hold that many
(:func:`default_max_events`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from staleness_lab.errors import InputError
from staleness_lab.model import Workload

#: The default ceiling on a run's estimated events.
MAX_EVENTS = 10**8
#: Peak memory per event of a run, trace and DataFrames included (measured, rounded up).
BYTES_PER_EVENT = 120
#: The share of physical memory one run may take by default.
MEMORY_SHARE = 0.5


@dataclass(frozen=True)
class RunSize:
    """A run's estimated size: arrivals and jobs per table (in file order), their total events
    (arrivals + jobs, the engine's count) and the peak memory in bytes."""

    arrivals: tuple[float, ...]
    jobs: tuple[float, ...]

    @property
    def events(self) -> float:
        return sum(self.arrivals) + sum(self.jobs)

    @property
    def memory(self) -> float:
        return self.events * BYTES_PER_EVENT


def physical_memory() -> int | None:
    """Bytes of physical memory, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def address_space_left() -> int | None:
    """Bytes this process may still map under its ``RLIMIT_AS`` soft limit (None: unlimited or
    unknown). A run inside ``ulimit -v`` must fit there, not in physical memory."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm", encoding="ascii") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError):
        return None
    return max(0, soft - mapped)


def default_max_events() -> int:
    """:data:`MAX_EVENTS`, lowered so one run's trace fits in :data:`MEMORY_SHARE` of physical
    memory and of the address space left under ``RLIMIT_AS`` (at least 1)."""
    limits = [MAX_EVENTS]
    for memory in (physical_memory(), address_space_left()):
        if memory is not None:
            limits.append(int(memory * MEMORY_SHARE / BYTES_PER_EVENT))
    return max(1, min(limits))


def estimate(workload: Workload) -> RunSize:
    """The run's arrivals and jobs per table over ``[0, horizon]`` (see the module docstring)."""
    horizon = workload.horizon
    arrivals: list[float] = []
    for table in workload.tables:
        if table.period is not None:
            count = (horizon + table.arrival_jitter - table.phase) / table.period  # inf for a denormal period
            arrivals.append(max(0.0, math.floor(count)) if math.isfinite(count) else math.inf)
        elif table.arrivals is not None:
            arrivals.append(float(len(table.arrivals)))
        else:
            arrivals.append(0.0)
    jobs = []
    for k, table in enumerate(workload.tables):
        if table.is_base:
            jobs.append(arrivals[k] + 1.0)
        else:
            jobs.append(sum(arrivals[a] + 1.0 for a in workload.ancestor_sets[k] if workload.tables[a].is_base))
    return RunSize(arrivals=tuple(arrivals), jobs=tuple(jobs))


def check_run_size(workload: Workload, max_events: int | None = None) -> RunSize:
    """The run's :class:`RunSize`, or an :class:`InputError` when its events pass ``max_events``
    (default :func:`default_max_events`).

    The error names the key that drives the size: the densest feed's ``period`` (or its
    ``arrivals``) when that one table brings most of the events and other tables would fit,
    else ``horizon``; the message says how to raise the limit.
    """
    limit = default_max_events() if max_events is None else _limit(max_events)
    size = estimate(workload)
    if size.events <= limit:
        return size
    contribution = _events_brought(workload, size)
    k = max(range(len(contribution)), key=contribution.__getitem__)
    table = workload.tables[k]
    rest = size.events - contribution[k]
    what = (f"about {size.events:.3g} events (memory ~{_gib(size.memory)}), above the limit of {limit:,} "
            f"(raise it with --max-events or max_events=)")
    if rest <= limit / 2 and len(workload.tables) > 1 and table.is_base:
        key = "period" if table.period is not None else "arrivals"
        shown = f"{table.period:g}" if table.period is not None else f"{len(table.arrivals or ()):,} arrivals"
        raise InputError(f"tables[{k}].{key}", f"{shown} over horizon {workload.horizon:g} gives {what}",
                         table=table.name)
    raise InputError("horizon", f"{workload.horizon:g} gives {what}; most from table {table.name!r}")


def _events_brought(workload: Workload, size: RunSize) -> list[float]:
    """Per table, the events its own arrivals bring: each arrival, the job it may start, and
    one job in every derived table it feeds (a derived table's estimate sums its base
    ancestors' jobs)."""
    derived_below = [0] * len(workload.tables)
    for k, table in enumerate(workload.tables):
        if not table.is_base:
            for a in workload.ancestor_sets[k]:
                derived_below[a] += 1
    return [a * (2 + d) for a, d in zip(size.arrivals, derived_below)]


def _limit(max_events: object) -> int:
    if isinstance(max_events, bool) or not isinstance(max_events, int) or max_events < 1:
        raise InputError("max_events", f"must be an integer >= 1, got {max_events!r}")
    return max_events


def _gib(size: float) -> str:
    return f"{size / 2**30:.3g} GiB"
