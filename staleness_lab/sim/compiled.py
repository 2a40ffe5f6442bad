"""The compiled core: the engine's loop for the built-in policies, in numba.

A policy whose :class:`~staleness_lab.policies.base.BoundPolicy` declares its order as a
:class:`~staleness_lab.policies.base.CompiledOrder` (FIFO, EDF, EDF-P, Max Benefit with or
without inheritance, Random) and its placement, if any, as a
:class:`~staleness_lab.policies.base.PlacementRule` (EDF-Partitioned, Proportional) runs here; every other policy, and any a researcher writes in a
notebook, runs in :mod:`staleness_lab.sim.engine`, which stays the reference. The two produce the
same trace bit for bit (jobs, in-flight jobs, staleness areas, peaks, event count): the loop
(:mod:`.compiled_kernel`) repeats the engine's float operations in its order, and this driver
feeds it the engine's arrival chunks, cost draws and Random's draws from the same streams.

The loop is compiled once per machine and cached beside its module (numba ``cache=True``);
:func:`staleness_lab.api.warm` compiles it ahead (``make setup`` calls it), so no run pays the
compilation unseen. It lives above the engine because it names the built-in policies, which the
engine does not know.
"""

from __future__ import annotations

import errno
import mmap

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.sim.arrivals import array_chunks
from staleness_lab.sim.costs import DRAW_BLOCK, cost_stream, noise_range
from staleness_lab.sim.trace import JobColumns, Trace, close_at_horizon

#: Random's exponential draws per block, as :class:`~staleness_lab.policies.baselines.Random` takes them.
RANDOM_BLOCK = 4096
#: The largest first capacity of the job columns (rows): 56 bytes each, so at most ~5.6 GB reserved.
MAX_FIRST_CAPACITY = 100_000_000

_EMPTY_F = np.empty(0, dtype=np.float64)
_EMPTY_I = np.empty(0, dtype=np.int64)


def supports(bound: BoundPolicy) -> bool:
    """Whether the compiled core can run this bound policy."""
    return bound.compiled is not None and bound.jobs == "golab" and (bound.place is None or bound.place_rule is not None)


def _ragged(lists: list[list[float]] | list[tuple[int, ...]], dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """Per-table lists as one flat array and offsets (table i's items at off[i]:off[i+1])."""
    off = np.zeros(len(lists) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(x) for x in lists])
    flat = np.fromiter((v for x in lists for v in x), dtype=dtype, count=int(off[-1]))
    return flat, off


def run_compiled(workload: Workload, bound: BoundPolicy, policy_name: str, chop_limit: list[float | None],
                 expected_jobs: float = 0.0) -> Trace:
    """Run ``workload`` under ``bound`` (see :func:`supports`) and return the engine's trace.

    ``chop_limit`` is the engine's per-table chop limit (``engine._Run``, which validates it);
    ``expected_jobs`` the run-size guard's bound on the completed jobs (:mod:`.size`), the
    columns' first capacity: reserved, not written, so pages a run never reaches cost nothing,
    and the columns grow by doubling if it falls short."""
    # numba is loaded with the loop, not with the engine: it maps ~180 MB, which the run-size
    # guard (sim/size.py) would otherwise take from the address space left for the trace
    from staleness_lab.sim import compiled_kernel as K

    w = workload
    order = bound.compiled
    assert order is not None
    tables = w.tables
    n = len(tables)
    kind = K.KINDS[order.kind]

    alpha = np.array([t.alpha for t in tables], dtype=np.float64)
    beta = np.array([t.beta for t in tables], dtype=np.float64)
    sep = np.array([t.min_separation for t in tables], dtype=np.float64)
    has_chop = np.array([c is not None for c in chop_limit], dtype=np.bool_)
    chop = np.array([0.0 if c is None else c for c in chop_limit], dtype=np.float64)
    derived = np.array([t.sources is not None for t in tables], dtype=np.bool_)
    period = np.array([t.period if t.period is not None else 0.0 for t in tables], dtype=np.float64)
    phase = np.array([t.phase if t.period is not None else 0.0 for t in tables], dtype=np.float64)
    ends, ends_off = _ragged([[] if f is None else [d for _, d in f] for f in w.files], np.float64)
    src, src_off = _ragged([tuple(w.index[s] for s in (t.sources or ())) for t in tables], np.int64)
    kids, kids_off = _ragged(list(w.children), np.int64)
    noise = noise_range(w)
    noise_lo, noise_span = noise if noise is not None else (0.0, 0.0)
    sd = w.slowdown
    sd_factor = sd.factor if sd else 1.0
    sd_normal = sd.normal if sd else 0.0
    sd_cycle = (sd.normal + sd.slow) if sd else 0.0

    prm1 = np.array(order.p1, dtype=np.float64) if order.p1 else _EMPTY_F
    prm2 = np.array(order.p2, dtype=np.float64) if order.p2 else _EMPTY_F
    pool = np.empty(0, dtype=np.float64)
    rkeys = np.zeros(n, dtype=np.float64)

    ist = np.zeros(10, dtype=np.int64)
    fst = np.zeros(2, dtype=np.float64)
    F = np.array([t.initial_freshness for t in tables], dtype=np.float64)
    avail = F.copy()
    claimed = F.copy()
    running = np.zeros(n, dtype=np.bool_)
    has_release = np.zeros(n, dtype=np.bool_)
    release = np.zeros(n, dtype=np.float64)
    last_release = np.full(n, -np.inf)
    version = np.zeros(n, dtype=np.int64)
    area = np.zeros(n, dtype=np.float64)
    peak = np.full(n, -np.inf)
    last_change = np.zeros(n, dtype=np.float64)
    job_track = np.zeros(n, dtype=np.int64)
    job_f = [np.zeros(n, dtype=np.float64) for _ in range(5)]  # release, start, from, to, cost
    streams = [cost_stream(w.seed, t.name) for t in tables] if noise is not None else []
    # each table's first block of cost draws now (the Python engine fetches it at the first job:
    # the same numbers), so the loop returns only for a table's later blocks
    draws = np.array([s.random(DRAW_BLOCK) for s in streams]).reshape(len(streams), DRAW_BLOCK)
    draw_pos = np.zeros(n, dtype=np.int64)
    refill = np.zeros(n, dtype=np.int64)  # the tables whose draws ran out, ist[REFILLS] of them
    cap = 4 * n + 64
    ready = (np.zeros(cap), np.zeros(cap), np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64))
    # an order-only policy takes the lowest free track, so tracks past the n-th are never used
    # and not allocated (as in the engine); a placement sees them all
    rule = bound.place_rule
    tracks = w.tracks if rule is not None else min(w.tracks, n)
    et = np.zeros(2 * n + tracks + 8, dtype=np.float64)
    ec = np.zeros(2 * n + tracks + 8, dtype=np.int64)
    free = np.arange(tracks, dtype=np.int64)
    ist[K.FREE_N] = tracks
    done = _grow(None, int(min(max(expected_jobs, 0.0), MAX_FIRST_CAPACITY)) + 1024)
    if rule is not None:
        cand, cand_off = _ragged(rule.candidates, np.int64)
        borrow, _ = _ragged(rule.borrowed, np.bool_)
        claims, claims_off = _ragged(rule.claims, np.int64)
    else:
        cand, cand_off, claims, claims_off = _EMPTY_I, _EMPTY_I, _EMPTY_I, _EMPTY_I
        borrow = np.zeros(0, dtype=np.bool_)
    placing = (rule is not None, rule is not None and rule.aggressive, cand, cand_off, borrow, claims, claims_off)
    scratch = (np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
               np.zeros(tracks, dtype=np.int64), np.zeros(tracks, dtype=np.bool_), np.zeros(tracks, dtype=np.int64),
               np.zeros((2, n), dtype=np.int64))

    def ensure_pool() -> None:
        nonlocal pool
        left = pool[ist[K.POOL_POS]:ist[K.POOL_LEN]]
        blocks = [left]
        while sum(len(b) for b in blocks) <= n:
            blocks.append(order.rng.standard_exponential(RANDOM_BLOCK)[::-1])  # the key pops from the end
        pool = np.ascontiguousarray(np.concatenate(blocks))
        ist[K.POOL_POS], ist[K.POOL_LEN] = 0, len(pool)

    if kind == K.RANDOM:
        ensure_pool()
    K._event_push(et, ec, ist, 0.0, 2 * n)  # consult the policy at time 0
    state = (ist, fst, F, avail, claimed, running, has_release, release, last_release, version)
    K.start_derived(src, src_off, kind, bound.rekey_on_data, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail,
                    claimed, running, has_release, release, last_release, sep, version, chop, has_chop, derived, period,
                    phase, ends, ends_off, *ready, et, ec)

    chunks = array_chunks(w)
    at = _next(chunks)
    while True:
        status = K.run_loop(
            w.horizon, w.warmup, alpha, beta, sep, bool(sep.any()), chop, has_chop, bool(has_chop.any()), derived,
            period, phase, ends, ends_off, src, src_off, kids, kids_off,
            noise is not None, noise_lo, noise_span, sd_cycle, sd_normal, sd_factor,
            kind, bound.rekey_on_data, prm1, prm2, pool, rkeys, *placing,
            *state, area, peak, last_change, job_track, *job_f,
            draws, draw_pos, refill, *ready, et, ec, free, *done, *scratch, *at,
        )
        if status == K.DONE:
            break
        if status == K.NEED_CHUNK:
            at = _next(chunks)
            ist[K.P] = 0
        elif status == K.NEED_DRAWS:
            for i in refill[:ist[K.REFILLS]].tolist():
                draws[i] = streams[i].random(DRAW_BLOCK)
                draw_pos[i] = 0
            ist[K.REFILLS] = 0
        elif status == K.NEED_POOL:
            ensure_pool()
        elif status == K.NEED_ROOM:
            done = _grow(done, 2 * len(done[0]))

    k = int(ist[K.DONE_N])
    jobs_done = JobColumns([c[:k] for c in done])  # views: the unwritten rest was never touched
    flight = np.flatnonzero(running)
    in_flight = list(zip(flight.tolist(), job_track[flight].tolist(), *(c[flight].tolist() for c in job_f)))
    area_l, peak_l = area.tolist(), peak.tolist()
    close_at_horizon(area_l, peak_l, last_change.tolist(), F.tolist(), w.warmup, w.horizon)
    return Trace(workload=w, policy=policy_name, events=int(ist[K.ARRIVALS_SEEN]) + k, jobs_done=jobs_done,
                 in_flight=in_flight, staleness_area=area_l, max_staleness=peak_l)


def _next(chunks) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The next chunk of arrivals with the ``inf`` sentinel appended (``arrivals.next_chunk``)."""
    times, who, data = next(chunks, (_EMPTY_F, _EMPTY_I, _EMPTY_F))
    return (np.append(times, np.inf), np.ascontiguousarray(who, dtype=np.int64),
            np.ascontiguousarray(data, dtype=np.float64))


def _grow(done: tuple[np.ndarray, ...] | None, size: int) -> tuple[np.ndarray, ...]:
    """The completed-job columns (table, track, release, start, from, to, cost) with room for
    ``size``, not filled (the loop writes each row before anything reads it; zero-filling
    them, then copying them out, took two thirds of a 12-million-event run)."""
    new = (_pages(size, np.int64), _pages(size, np.int64), *(_pages(size, np.float64) for _ in range(5)))
    if done is not None:
        for old, fresh in zip(done, new):
            fresh[:len(old)] = old
    return new


def _pages(size: int, dtype: type) -> np.ndarray:
    """A column of ``size`` items on anonymous memory pages, each mapped when first written.

    Not ``np.empty``: numpy asks the kernel for transparent huge pages on large arrays, and
    where the kernel compacts memory to find them (defrag "madvise", as here) the first
    writes stall for varying times. One 18-million-event run at 3,000 tables took 1.81-2.68 s
    over five repeats with them, 1.99-2.12 s with plain pages.

    A mapping the kernel refuses (ENOMEM: past ``ulimit -v``, or more than overcommit allows,
    as a run whose ``--max-events`` was raised far above the machine asks) is a
    :class:`MemoryError`, as ``np.empty`` would raise, so the command line gives its one-line
    memory message rather than an ``OSError`` traceback."""
    try:
        pages = mmap.mmap(-1, max(size, 1) * np.dtype(dtype).itemsize)
    except OSError as err:
        if err.errno != errno.ENOMEM:
            raise
        raise MemoryError(f"cannot map {size:,} rows of {np.dtype(dtype).name}") from None
    return np.frombuffer(pages, dtype=dtype, count=size)

