"""Feed arrivals, generated in sorted chunks outside the engine's event heap.

Periodic arrival k of a table is at ``phase + k*period`` (k = 1, 2, ...), computed by
multiplication, never by repeated addition, so no drift accumulates over long horizons. Files of
replayed and compiled feeds (:attr:`staleness_lab.model.Workload.files`: outages, jitter) are
merged in. Within a chunk, arrivals are ordered by time, then by table position, then (several
files of one table landing at once) in file order. (PERFORMANCE.md, design point 3.)
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from staleness_lab.model import Workload

#: Arrivals per chunk: large enough to amortise numpy, small enough to stay in cache.
CHUNK_ARRIVALS = 32768


def arrival_chunks(workload: Workload) -> Iterator[tuple[list[float], list[int], list[float]]]:
    """Yield ``(times, tables, data_to)`` lists covering ``[0, horizon]`` in time order."""
    for times, who, data in array_chunks(workload):
        yield times.tolist(), who.tolist(), data.tolist()


def array_chunks(workload: Workload) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`arrival_chunks` as numpy arrays (float, int64, float), for the compiled core."""
    horizon = workload.horizon
    files = workload.files
    periodic = [k for k, t in enumerate(workload.tables) if t.period is not None and files[k] is None]
    replayed = [k for k in range(len(workload.tables)) if files[k] is not None]
    idx = np.array(periodic, dtype=np.int64)
    period = np.array([workload.tables[k].period for k in periodic], dtype=float)
    phase = np.array([workload.tables[k].phase for k in periodic], dtype=float)
    logs = [np.array(files[k], dtype=float).reshape(-1, 2) for k in replayed]
    with np.errstate(over="ignore"):  # 1/period overflows for a denormal period: rate inf, handled below
        rate = float(np.sum(1.0 / period)) if periodic else 0.0
    rate += sum(len(log) for log in logs) / horizon
    span = CHUNK_ARRIVALS / rate if 0 < rate < np.inf else horizon  # rate is inf for denormal periods
    lo = 0.0
    while lo <= horizon:
        hi = min(lo + span, np.nextafter(horizon, np.inf))
        if hi <= lo:  # a span lost below lo's precision: one window to the end, never a standstill
            hi = np.nextafter(horizon, np.inf)
        parts_t, parts_i, parts_d = [], [], []
        if periodic:
            times, who = _periodic_window(idx, period, phase, lo, hi)
            parts_t.append(times)
            parts_i.append(who)
            parts_d.append(times)
        for k, log in zip(replayed, logs):
            a, b = np.searchsorted(log[:, 0], [lo, hi], side="left")
            parts_t.append(log[a:b, 0])
            parts_i.append(np.full(b - a, k, dtype=np.int64))
            parts_d.append(log[a:b, 1])
        times = np.concatenate(parts_t)
        who = np.concatenate(parts_i)
        data = np.concatenate(parts_d)
        order = np.lexsort((who, times))  # stable: one table's files landing at once stay in file order
        if len(order):
            yield times[order], who[order], data[order]
            lo = hi
        else:  # nothing in this window: jump to the next arrival, so a silent horizon never spins
            lo = max(hi, _next_arrival(period, phase, logs, hi))


def _next_arrival(period: np.ndarray, phase: np.ndarray, logs: list[np.ndarray], t: float) -> float:
    """The earliest arrival time at or after ``t`` of any feed (``inf`` when none is left)."""
    candidates = [np.inf]
    if len(period):
        # (t - phase) / period rounds: ceil of it can skip an arrival at exactly t (7 * 37.133
        # is 259.93100000000004, and so is t, but t / 37.133 is 7.000000000000001). Start one
        # period low and step up with the same float expression the windows use.
        k = np.maximum(1, np.floor((t - phase) / period) - 1)
        for _ in range(3):
            k = np.where(phase + k * period < t, k + 1, k)
        candidates.append(float(np.min(phase + k * period)))
    for log in logs:
        j = int(np.searchsorted(log[:, 0], t, side="left"))
        if j < len(log):
            candidates.append(float(log[j, 0]))
    return min(candidates)


def _periodic_window(
    idx: np.ndarray, period: np.ndarray, phase: np.ndarray, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray]:
    """Arrival times ``phase + k*period`` (k >= 1) in ``[lo, hi)`` and their tables."""
    k_lo = np.maximum(1, np.floor((lo - phase) / period).astype(np.int64))
    k_hi = np.floor((hi - phase) / period).astype(np.int64) + 1
    counts = np.maximum(k_hi - k_lo + 1, 0)
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(idx)), counts)
    starts = np.cumsum(counts) - counts
    k = k_lo[owner] + (np.arange(total) - starts[owner])
    times = phase[owner] + k * period[owner]
    keep = (k >= 1) & (times >= lo) & (times < hi)
    return times[keep], idx[owner[keep]]


def next_chunk(chunks: Iterator[tuple[list[float], list[int], list[float]]]) -> tuple[list[float], list[int], list[float]]:
    """The next chunk of :func:`arrival_chunks` with ``inf`` appended to its times, the sentinel
    the engines' arrival loops stop at (only ``[inf]`` once the arrivals are exhausted)."""
    times, tables, data_to = next(chunks, ([], [], []))
    times.append(float("inf"))
    return times, tables, data_to
