"""Feeds compiled into files: Leontyev et al.'s jittered periodic feeds and outages.

A file is an ``(arrival, timestamp)`` pair: it arrives at ``arrival`` and carries data up to
``timestamp`` (a replayed feed's ``(time, data_to)``). Two features make a feed's files differ
from its plain description, and such a feed is compiled once, into files in arrival order, which
the engine then replays (:attr:`staleness_lab.model.Workload.files`):

* **Jitter** (Leontyev et al., Def. 2): periodic file k (k = 1, 2, ...) arrives at
  ``phase + k*period - J*u_k`` with timestamp ``arrival - kappa*v_k``, u_k and v_k uniform in
  [0, 1) from a per-table stream (:func:`jitter_stream`); timestamps are then made non-decreasing
  by a running maximum. The draws of file k do not depend on the horizon (row k of one stream).
* **Outages** (the digest's outage rule, example E1): a file whose arrival lies in an outage
  ``[start, end)`` -- closed at start, open at end -- is held back and lands at ``end`` with its
  timestamp unchanged, so several files may land at once. Outages apply after jitter.

A compiled periodic feed keeps the files arriving at or before the horizon (after an outage
shift too); a replayed feed keeps every listed file, as the engine always had them (it processes
the arrivals at or before the horizon; a policy's lookahead may see a later one).
"""

from __future__ import annotations

import math
import zlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from staleness_lab.model.table import Table

Files = tuple[tuple[float, float], ...]
Outages = tuple[tuple[float, float], ...] | None

#: The third key of the jitter streams, keeping them apart from the engine's cost streams
#: (``[seed, crc32(name)]``) and the policy stream.
JITTER_TAG = 0x6A697474  # "jitt"


def jitter_stream(seed: int, table_name: str) -> np.random.Generator:
    """The random stream of one table's jitter draws, keyed by seed and table name."""
    return np.random.default_rng([seed, zlib.crc32(table_name.encode()), JITTER_TAG])


def land(times: np.ndarray, outages: Outages) -> np.ndarray:
    """Landing times of files arriving at ``times``: a time in an outage ``[start, end)`` becomes
    ``end`` (the digest's outage rule, E1); ``outages`` sorted and disjoint."""
    if not outages:
        return times
    starts = np.array([s for s, _ in outages], dtype=float)
    ends = np.array([e for _, e in outages], dtype=float)
    at = np.searchsorted(starts, times, side="right") - 1  # the last outage starting at or before
    end = ends[np.maximum(at, 0)]
    return np.where((at >= 0) & (times < end), end, times)


def last_landing(table: Table) -> float:
    """When a replayed feed's last listed file lands (its time, or the end of its outage)."""
    assert table.arrivals is not None
    return float(land(np.array([table.arrivals[-1][0]]), table.outages)[0])


def jittered_files(
    period: float, phase: float, jitter: float, kappa: float, horizon: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Arrivals and timestamps of the periodic files whose nominal slot ``phase + k*period`` is
    at most ``horizon + jitter``, and one more (a slot lost to rounding in the count; the caller
    drops what arrives after the horizon). Def. 2, see the module docstring. Arrivals are
    non-decreasing for J <= period; a running maximum guards them against rounding."""
    count = max(0, math.floor((horizon + jitter - phase) / period) + 1)
    nominal = phase + np.arange(1, count + 1, dtype=float) * period
    if not (jitter or kappa):
        return nominal, nominal
    draws = rng.random((count, 2))
    arrivals = np.maximum.accumulate(nominal - jitter * draws[:, 0])
    return arrivals, np.maximum.accumulate(arrivals - kappa * draws[:, 1])


def compile_files(table: Table, horizon: float, seed: int) -> Files | None:
    """The files of ``table``'s feed in arrival order (non-decreasing arrivals and timestamps):
    a replayed feed's listed arrivals (all of them), a compiled periodic feed's jittered slots
    arriving at or before ``horizon``, outages applied to both. None for a plain periodic feed
    (generated on the fly) and for a derived table."""
    if table.arrivals is not None:
        return _replayed_files(table.arrivals, table.outages)
    if table.period is None or not table.compiled_feed:
        return None
    rng = jitter_stream(seed, table.name)
    arrivals, stamps = jittered_files(table.period, table.phase, table.arrival_jitter, table.timestamp_jitter, horizon, rng)
    landed = land(arrivals, table.outages)
    keep = landed <= horizon
    return _pairs(landed[keep], stamps[keep])


def _replayed_files(arrivals: Files, outages: Outages) -> Files:
    """A replayed feed's files: its arrivals as listed (the same tuple), or landed after their
    outages."""
    if not outages:
        return arrivals
    log = np.array(arrivals, dtype=float).reshape(-1, 2)
    return _pairs(land(log[:, 0], outages), log[:, 1])


def _pairs(arrivals: np.ndarray, stamps: np.ndarray) -> Files:
    """Files as ``(arrival, timestamp)`` float pairs."""
    return tuple(zip(arrivals.tolist(), stamps.tolist()))
