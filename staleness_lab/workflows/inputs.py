"""The arrivals of a workflow's input channels as counts (the ``sizes`` mode of the run loop):
per input channel, the arrival times with the rows each inserts and deletes.

A generated input takes its times and counts from the generator's sizes path
(:func:`~staleness_lab.workflows.sources.arrival_counts`: the same counts its frames have, no
frame built), insert-only. A replayed input counts the rows of its CSV per listed time
(``_sign`` +1 inserts, -1 deletes); listed times without rows are empty arrivals.

**Initial snapshot [D].** A run needs one snapshot of every input to start from: a replayed
input's first listed time; a generated input's arrival at time 0 when it has one (``sp-crawl``'s
5,000 first pages), else an empty snapshot at time 0. The run starts at the latest of these
(:attr:`InputArrivals.first`), when every input has a snapshot.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np

from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.sources import GENERATORS


@dataclass(frozen=True)
class InputArrivals:
    """One input channel's arrivals: ``times`` (non-decreasing hours, the first is the initial
    snapshot) with ``inserts`` and ``deletes`` (rows) per arrival, and whether the source also
    delivers a base at each arrival (``delivers`` lists ``B``)."""

    channel: str
    times: tuple[float, ...]
    inserts: tuple[int, ...]
    deletes: tuple[int, ...]
    delivers_base: bool

    @property
    def first(self) -> float:
        return self.times[0]


def input_arrivals(workflow: Workflow, seed: int, horizon: float) -> dict[str, InputArrivals]:
    """Every input channel's arrivals up to ``horizon`` hours (module docstring)."""
    out: dict[str, InputArrivals] = {}
    for ch in workflow.inputs():
        spec = ch.input
        assert spec is not None
        base = "B" in spec.delivers
        if spec.generator is not None:
            assert spec.every is not None and spec.rows is not None
            times, counts = GENERATORS[spec.generator].sizes(seed, spec.every, spec.rows, horizon, **dict(spec.params))
            times, counts = [float(t) for t in times], [int(n) for n in counts]
            if not times or times[0] > 0:
                times, counts = [0.0, *times], [0, *counts]
            out[ch.name] = InputArrivals(ch.name, tuple(times), tuple(counts), (0,) * len(times), base)
            continue
        times = [t for t in spec.times if t <= horizon] or [spec.times[0]]
        inserts, deletes = _replay_counts(workflow, ch.name, len(times))
        out[ch.name] = InputArrivals(ch.name, tuple(times), inserts, deletes, base)
    return out


def _replay_counts(workflow: Workflow, channel: str, kept: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Rows inserted and deleted at each of the first ``kept`` listed times of a replay CSV (a
    row belongs to the latest listed time at or before it; rows before the first are refused by
    nothing and counted with it)."""
    spec = workflow.channel(channel).input
    assert spec is not None
    grid = np.asarray(spec.times, dtype=float)
    inserts, deletes = np.zeros(kept, dtype=np.int64), np.zeros(kept, dtype=np.int64)
    with workflow.replay_path(channel).open(newline="", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            k = max(0, int(np.searchsorted(grid, float(row["time"]), side="right")) - 1)
            if k >= kept:
                continue
            if int(row["_sign"]) < 0:
                deletes[k] += 1
            else:
                inserts[k] += 1
    return tuple(int(n) for n in inserts), tuple(int(n) for n in deletes)
