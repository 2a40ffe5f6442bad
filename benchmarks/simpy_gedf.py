"""Reference simulator: non-preemptive global EDF written on SimPy 4.

This is the baseline the engine benchmark compares against. It is what a
competent SimPy user would write for the same periodic workload: one process
per task releasing a job every period, a ``simpy.PriorityStore`` keyed by
absolute deadline, and ``m`` worker processes (the tracks) that take the job
with the earliest deadline and hold a track for the job's cost.

Events are counted the way staleness-lab counts them: data arrivals (job
releases) plus job completions, both at times ``t <= horizon``.

Usage::

    python simpy_gedf.py TASKS.json --horizon T

where ``TASKS.json`` is ``{"tracks": m, "tasks": [{"period": P, "cost": C,
"phase": F}, ...]}`` (``phase`` optional, default 0). Prints
``{"events": N, "jobs": J}``; ``jobs`` is the number of completed jobs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import simpy


@dataclass
class Counts:
    """Arrivals and completions observed up to the horizon."""

    arrivals: int = 0
    completions: int = 0

    @property
    def events(self) -> int:
        """Arrivals plus completions, as staleness-lab reports ``events``."""
        return self.arrivals + self.completions


def release(
    env: simpy.Environment,
    queue: simpy.PriorityStore,
    task: dict[str, float],
    counts: Counts,
) -> Generator[simpy.Event, None, None]:
    """Release a job at ``phase + k * period`` for k = 1, 2, ...

    Each job's priority is its absolute deadline, release + period.
    """
    period, cost = task["period"], task["cost"]
    phase = task.get("phase", 0.0)
    k = 1
    while True:
        yield env.timeout(phase + k * period - env.now)
        counts.arrivals += 1
        queue.put(simpy.PriorityItem(env.now + period, cost))
        k += 1


def track(
    env: simpy.Environment, queue: simpy.PriorityStore, counts: Counts
) -> Generator[simpy.Event, Any, None]:
    """Run queued jobs one at a time, earliest deadline first, to completion."""
    while True:
        job = yield queue.get()
        yield env.timeout(job.item)
        counts.completions += 1


def simulate(tasks: Sequence[dict[str, float]], tracks: int, horizon: float) -> Counts:
    """Simulate ``tasks`` on ``tracks`` tracks and count events up to ``horizon``."""
    env = simpy.Environment()
    queue = simpy.PriorityStore(env)
    counts = Counts()
    for task in tasks:
        env.process(release(env, queue, task, counts))
    for _ in range(tracks):
        env.process(track(env, queue, counts))
    # SimPy stops *before* events scheduled at `until`; include t == horizon.
    env.run(until=math.nextafter(horizon, math.inf))
    return counts


def run(tasks: Sequence[dict[str, float]], tracks: int, horizon: float) -> int:
    """Return the number of events (arrivals + completions) up to ``horizon``."""
    return simulate(tasks, tracks, horizon).events


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: print ``{"events": N, "jobs": J}`` as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", help="JSON file with 'tracks' and 'tasks'")
    parser.add_argument("--horizon", type=float, required=True)
    args = parser.parse_args(argv)
    with open(args.tasks, encoding="utf-8") as f:
        spec = json.load(f)
    counts = simulate(spec["tasks"], spec["tracks"], args.horizon)
    print(json.dumps({"events": counts.events, "jobs": counts.completions}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
