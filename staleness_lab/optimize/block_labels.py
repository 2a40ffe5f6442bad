"""The labelling search of :mod:`staleness_lab.optimize.block_dp`, compiled: the same labels,
children, Smith's swap rule, bound and dominance, over arrays instead of Python objects
(``block_dp.search`` runs it when every number fits int64 and the states' keys fit, and keeps its
Python loop as the reference this one equals; on a 48-update block of Bateni's X2 instances at
load .8 on one track, 20,000 labels took the Python loop 2.6-4.2 s with the compiled bound, and
this search 0.3 s).

Labels live in growing arrays (cost, weight of the last batch, sorted track free times (none
before the last batch's start), table free times, parent, last batch, cost plus bound, and
whether a beam dropped it); a state (the next update of every table) is a mixed-radix integer
key, and its labels are a linked list of label indices in order of cost. States are expanded
layer by layer (updates placed), as in Python; a dominated label is unlinked (its slot stays: a
label is only dominated before its layer is expanded, so it has no children). A child that a
label at its state covers is dropped before its bound is computed, as in Python. Only a label
costing no more can cover a child, and the child can cover only labels costing no less, so one
pass over a state's list, split at the child's cost, does both checks: on the 33-update block of
seed 2 at 12 x 14, load .8, two tracks (565 labels a state on average), scanning the whole list
twice took 2.1 billion comparisons and the search 13.0 s; it now takes 7.2 s. With a beam
(:func:`staleness_lab.optimize.block_dp.dive`), each layer, once complete, keeps its ``beam``
labels of least cost plus bound and marks the others dropped.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
from numba import njit, objmode, types
from numba.typed import Dict

from staleness_lab.optimize import block_bound
from staleness_lab.optimize.block_bound import bounds_into, workspace

#: The search's outcomes (:func:`search`'s status).
FOUND, GAVE_UP, OVERFLOW, BEAM_CUT = 0, 1, 2, 3
#: A state's key is Π (n_i + 1) at most this (int64 with room).
KEY_LIMIT = 2**62


def state_radices(n: np.ndarray) -> np.ndarray | None:
    """Each table's place value in a state's key (mixed radix n_i + 1), or None when the keys
    would pass :data:`KEY_LIMIT`."""
    radices = np.ones(len(n), dtype=np.int64)
    place = 1
    for i, count in enumerate(n):
        radices[i] = place
        place *= int(count) + 1
        if place > KEY_LIMIT:
            return None
    return radices


@njit(cache=True)
def _grown(a: np.ndarray) -> np.ndarray:
    out = np.empty((2 * a.shape[0],) + a.shape[1:], a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _covers(cost: np.ndarray, tracks: np.ndarray, tables: np.ndarray, x: int, y: int) -> bool:
    """Whether label x is at least as good as label y in cost, every track and every table."""
    if cost[x] > cost[y]:
        return False
    for k in range(tracks.shape[1]):
        if tracks[x, k] > tracks[y, k]:
            return False
    for h in range(tables.shape[1]):
        if tables[x, h] > tables[y, h]:
            return False
    return True


@njit(cache=True)
def _swap_is_better(r: np.ndarray, n: np.ndarray, forced: bool, batch: np.ndarray, weight: int,
                    table_free_i: int, i: int, last: int, y_weight: int, start: int, end: int) -> bool:
    """:func:`staleness_lab.optimize.block_dp._swap_is_better` (one track) on the parent's last
    ``batch`` (table, first, last, start, end; table -1 for the root) and ``weight``."""
    x = batch[0]
    if x < 0:
        return False
    x_last, x_start, x_end = batch[2], batch[3], batch[4]
    if x == i or r[i, last] > x_start or table_free_i > x_start:
        return False
    if forced and x_last + 1 < n[x] and x_start + (end - start) >= r[x, x_last + 1]:
        return False
    gain, loss = y_weight * (x_end - x_start), weight * (end - start)
    return gain > loss or gain == loss and i < x


@njit(cache=True)
def _keep_best(first: int, s_next: np.ndarray, s_head: np.ndarray, l_next: np.ndarray, l_f: np.ndarray,
               l_dead: np.ndarray, beam: int) -> bool:
    """Mark dead every label of the layer whose states start at ``first`` but the ``beam`` with
    the lowest cost plus bound; whether any was."""
    count = 0
    s = first
    while s >= 0:
        x = s_head[s]
        while x >= 0:
            count += 1
            x = l_next[x]
        s = s_next[s]
    if count <= beam:
        return False
    found = np.empty(count, np.int64)
    k = 0
    s = first
    while s >= 0:
        x = s_head[s]
        while x >= 0:
            found[k] = x
            k += 1
            x = l_next[x]
        s = s_next[s]
    order = np.argsort(l_f[found], kind="mergesort")
    for k in range(beam, count):
        l_dead[found[order[k]]] = True
    return True


@njit(cache=True)
def _open_bound(first: int, layer_low: np.ndarray, upper: int) -> float:
    """The least cost plus bound of the labels made at layers ``first`` and on (``layer_low``:
    each layer's least; ``upper`` if less): when every layer before ``first`` is expanded, no
    schedule is below it (an optimal schedule's path reaches a label there, or a label that
    covers it, or was cut by the bound at ``upper``; labels since dropped only lower it)."""
    low = float(upper)
    for layer in range(first, layer_low.shape[0]):
        low = min(low, layer_low[layer])
    return low


@njit(cache=True)
def search(r: np.ndarray, coef: np.ndarray, pieces: np.ndarray, own: np.ndarray, n: np.ndarray,
           dur: np.ndarray, radices: np.ndarray, tracks: int, forced: bool, upper: int,
           budget: int, deadline: float, beam: int = 0) -> tuple[int, np.ndarray, float]:
    """``(status, batches, lower)``: FOUND with the batches ``(table, first, last, start, end)``
    of a schedule below ``upper``, minimal among them (none: an empty array); GAVE_UP past
    ``budget`` labels or ``deadline`` (``time.perf_counter``), with ``lower`` a bound no schedule
    is below (the largest :func:`_open_bound` at the start of a layer and when it gave up, at
    least the root's bound; 0.0 with a beam, which proves nothing); OVERFLOW when a bound would
    pass int64 (the caller runs the Python reference); ``lower`` is 0.0 unless GAVE_UP. Arrays
    as :func:`~.block_bound.bounds` takes them, and ``dur[i, a, b]`` the duration of table i's
    batch of updates a..b. With ``beam`` > 0, each layer keeps only the ``beam`` labels of least
    cost plus bound (a beam search: a heuristic), and the status is BEAM_CUT when that dropped a label (the schedule, if any, is then not
    proven minimal)."""
    t_count = n.shape[0]
    total = 0
    for i in range(t_count):
        total += n[i]
    cap = 1 << 12
    l_cost = np.zeros(cap, np.int64)
    l_weight = np.zeros(cap, np.int64)
    l_tracks = np.zeros((cap, tracks), np.int64)
    l_tables = np.zeros((cap, t_count), np.int64)
    l_parent = np.full(cap, -1, np.int64)
    l_batch = np.full((cap, 5), -1, np.int64)
    l_next = np.full(cap, -1, np.int64)
    l_f = np.zeros(cap, np.float64)
    l_dead = np.zeros(cap, np.bool_)
    s_cap = 1 << 10
    s_pending = np.zeros((s_cap, t_count), np.int64)
    s_head = np.full(s_cap, -1, np.int64)
    s_next = np.full(s_cap, -1, np.int64)
    layer_head = np.full(total + 1, -1, np.int64)
    keys = Dict.empty(key_type=types.int64, value_type=types.int64)
    keys[0] = 0
    s_head[0] = 0
    layer_head[0] = 0
    ints, floats = workspace(n)  # the bound's scratch, for every label
    release, busy, fits = bounds_into(r, coef, pieces, own, n, dur, forced, s_pending[0], l_tracks[0], l_tables[0],
                                      np.inf, ints, floats)
    if not fits:
        return OVERFLOW, np.empty((0, 5), np.int64), 0.0
    l_f[0] = max(float(release), busy)
    layer_low = np.full(total + 1, np.inf)  # each layer's least cost plus bound, over the labels made there
    layer_low[0] = l_f[0]
    lower = l_f[0]  # the best open bound so far (:func:`_open_bound`; exact search only)
    labels, states, made = 1, 1, 0
    cut = False  # whether the beam dropped a label
    new_tracks = np.empty(tracks, np.int64)
    new_tables = np.empty(t_count, np.int64)
    done = np.empty(t_count, np.int64)
    for layer in range(total):
        lower = max(lower, _open_bound(layer, layer_low, upper))
        if beam > 0:
            cut = _keep_best(layer_head[layer], s_next, s_head, l_next, l_f, l_dead, beam) or cut
        s = layer_head[layer]
        while s >= 0:
            pending = s_pending[s].copy()
            label = s_head[s]
            while label >= 0:
                if l_dead[label]:
                    label = l_next[label]
                    continue
                for i in range(t_count):
                    a = pending[i]
                    weight = 0
                    for b in range(a, n[i]):
                        weight += coef[i, b]
                        start = max(l_tracks[label, 0], l_tables[label, i], r[i, b])  # the earliest-free track
                        if forced and b + 1 < n[i] and start >= r[i, b + 1]:
                            continue
                        end = start + dur[i, a, b]
                        if tracks == 1 and _swap_is_better(r, n, forced, l_batch[label], l_weight[label],
                                                           l_tables[label, i], i, b, weight, start, end):
                            continue
                        m = 0  # the other tracks' free times (none before start) with end inserted, sorted
                        placed = False
                        for q in range(1, tracks):
                            value = max(l_tracks[label, q], start)
                            if not placed and end <= value:
                                new_tracks[m] = end
                                m += 1
                                placed = True
                            new_tracks[m] = value
                            m += 1
                        if not placed:
                            new_tracks[m] = end
                        done[:] = pending
                        done[i] = b + 1
                        for h in range(t_count):
                            t = end if h == i else l_tables[label, h]
                            if t <= new_tracks[0] or done[h] == n[h] or t <= r[h, done[h]]:
                                t = 0
                            new_tables[h] = t
                        cost = l_cost[label] + weight * end
                        depth = layer + b + 1 - a  # the updates placed: this layer's and the batch's
                        key = 0
                        for h in range(t_count):
                            key += done[h] * radices[h]
                        if labels == l_cost.shape[0]:
                            l_cost, l_weight, l_tracks = _grown(l_cost), _grown(l_weight), _grown(l_tracks)
                            l_tables, l_parent, l_batch = _grown(l_tables), _grown(l_parent), _grown(l_batch)
                            l_next, l_f, l_dead = _grown(l_next), _grown(l_f), _grown(l_dead)
                        new = labels
                        l_cost[new] = cost
                        l_tracks[new] = new_tracks
                        l_tables[new] = new_tables
                        target = keys[key] if key in keys else -1
                        after = -1  # the state's last label costing less than the new one (a state's labels rise in cost)
                        if target >= 0:  # a label at the state that covers the new one: no bound needed
                            x = s_head[target]
                            dominated = False
                            while x >= 0 and l_cost[x] <= cost:  # only those costing no more can cover it
                                if _covers(l_cost, l_tracks, l_tables, x, new):
                                    dominated = True
                                    break
                                if l_cost[x] < cost:
                                    after = x
                                x = l_next[x]
                            if dominated:
                                continue
                        release, busy, fits = bounds_into(r, coef, pieces, own, n, dur, forced, done, new_tracks,
                                                          new_tables, float(upper - cost), ints, floats)
                        if not fits:
                            return OVERFLOW, np.empty((0, 5), np.int64), 0.0
                        if release >= busy:
                            if cost + release >= upper:
                                continue
                        elif cost + busy >= upper:
                            continue
                        made += 1
                        stop = made > budget
                        if not stop and made % 256 == 0:
                            with objmode(now="float64"):
                                now = time.perf_counter()
                            stop = now > deadline
                        if stop:
                            return GAVE_UP, np.empty((0, 5), np.int64), 0.0 if beam else max(
                                lower, _open_bound(layer, layer_low, upper))
                        l_weight[new] = weight
                        if target >= 0:
                            # the new label goes in after those costing less (it covers none of them)
                            # and unlinks those after it that it covers
                            if after < 0:
                                x, s_head[target] = s_head[target], new
                            else:
                                x, l_next[after] = l_next[after], new
                            l_next[new] = x
                            previous = new
                            while x >= 0:
                                following = l_next[x]
                                if _covers(l_cost, l_tracks, l_tables, new, x):
                                    l_next[previous] = following
                                else:
                                    previous = x
                                x = following
                        else:
                            if states == s_pending.shape[0]:
                                s_pending, s_head, s_next = _grown(s_pending), _grown(s_head), _grown(s_next)
                            target = states
                            states += 1
                            keys[key] = target
                            s_pending[target] = done
                            s_head[target] = new
                            l_next[new] = -1
                            s_next[target] = layer_head[depth]
                            layer_head[depth] = target
                        labels += 1
                        l_parent[new] = label
                        l_batch[new, 0], l_batch[new, 1], l_batch[new, 2] = i, a, b
                        l_batch[new, 3], l_batch[new, 4] = start, end
                        l_f[new] = cost + max(float(release), busy)
                        layer_low[depth] = min(layer_low[depth], l_f[new])
                        l_dead[new] = False
                label = l_next[label]
            s = s_next[s]
    best = -1
    s = layer_head[total]
    if s >= 0:
        x = s_head[s]
        while x >= 0:
            if best < 0 or l_cost[x] < l_cost[best]:
                best = x
            x = l_next[x]
    count = 0
    x = best
    while x > 0:
        count += 1
        x = l_parent[x]
    out = np.empty((count, 5), np.int64)
    x = best
    for place in range(count - 1, -1, -1):
        out[place] = l_batch[x]
        x = l_parent[x]
    return BEAM_CUT if cut else FOUND, out, 0.0


def compile_search() -> None:
    """Compile :func:`search` and the bound the Python reference calls (or load them from their
    cache) on a one-update instance, so no search pays the compilation (about 20 s) inside its
    time limit (``make setup`` calls it through :func:`staleness_lab.api.warm`)."""
    from staleness_lab.optimize.block_bound import compile_bounds

    compile_bounds()
    one = np.ones((1, 1), dtype=np.int64)
    search(one, one, one, one, np.ones(1, dtype=np.int64), np.ones((1, 1, 1), dtype=np.int64),
           np.ones(1, dtype=np.int64), 1, True, 10, 10, 1e18, 0)  # beam given: the signature the callers use


def _stamp_with_the_bound() -> None:
    """Make the cached search stale whenever :mod:`~.block_bound` changes.

    numba stamps a cached function with its own source file only, and :func:`search` compiles
    :func:`~.block_bound.bounds_into` into itself: after an edit of ``block_bound.py`` alone, the
    cached search would go on running the old bound (and prove optima with it). The search's
    stamp also carries the digest of the ``block_bound.py`` this process compiles with, so an
    index written with another bound is not loaded, in each process and for each Python version
    by its own index. With the JIT off (no cache) there is nothing to stamp."""
    cache_file = getattr(getattr(search, "_cache", None), "_cache_file", None)
    if cache_file is None or not hasattr(cache_file, "_source_stamp"):
        return
    digest = hashlib.sha256(Path(block_bound.__file__).read_bytes()).hexdigest()
    cache_file._source_stamp = (cache_file._source_stamp, digest)


_stamp_with_the_bound()
