"""The compiled core's loop: :meth:`staleness_lab.sim.engine._Run.execute` for order-only policies,
in numba, bit for bit.

Every line mirrors the Python engine's: the same float operations in the same order (no
fastmath, so no FMA contraction or reassociation), the same event order (completions, deferred
releases and timers, arrivals, dispatch) and the same per-table cost draws. Heaps hold entries
that are unique ((key, table, version) in the ready set, (time, code) for events, track numbers),
so any correct heap pops them in the order Python's ``heapq`` does.

The loop is resumable: it returns to its driver (:mod:`.compiled`) for what only Python provides
(the next chunk of arrivals, the next block of cost draws of the tables that used up theirs,
Random's next exponential draws, room for more completed jobs) and continues where it stopped, in
the phase recorded in ``ist``. It returns only at the start of an instant or between two arrivals,
never inside a dispatch, so a placement decides in one piece.

Placement: the partitioners' dispatch rule (:class:`~staleness_lab.policies.base.PlacementRule`)
runs here as the engine's ``_placed`` and the policy's ``place`` would: the valid ready entries in
key order, the idle tracks ascending, per table its candidate tracks in preference order (a
candidate marked *borrowed* is refused by the non-aggressive rule while a table later in the order
claims that track), and the tables not started put back.

Every function is compiled with ``_nrt=False``: the loop allocates nothing (the driver owns every
array), and without numba's reference counting a call no longer increments and decrements each of
its array arguments. Measured on the Table 2 workload at 30 tables (EDF): 6.7M events/s with it,
23M without.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit as _njit

njit = partial(_njit, cache=True, _nrt=False)

# order kinds (policies.base.CompiledOrder.kind)
RELEASE, DEADLINE, DEADLINE_PRIORITY, PRIORITY_DEADLINE, BENEFIT, RANDOM = range(6)
KINDS = {"release": RELEASE, "deadline": DEADLINE, "deadline-priority": DEADLINE_PRIORITY,
         "priority-deadline": PRIORITY_DEADLINE, "benefit": BENEFIT, "random": RANDOM}

# why the loop returned
DONE, NEED_CHUNK, NEED_DRAWS, NEED_POOL, NEED_ROOM = range(5)
# where it resumes
START, ARRIVALS = range(2)
# slots of the integer state ``ist``
PHASE, P, ARRIVALS_SEEN, READY_N, EVENTS_N, FREE_N, DONE_N, POOL_POS, POOL_LEN, REFILLS, LATER_FROM = range(11)
# slots of the float state ``fst``: the current instant and Random's virtual clock
T, CLOCK = range(2)

_INF = np.inf


@njit
def _ready_less(k1, k2, ti, tv, a, b):
    if k1[a] != k1[b]:
        return k1[a] < k1[b]
    if k2[a] != k2[b]:
        return k2[a] < k2[b]
    if ti[a] != ti[b]:
        return ti[a] < ti[b]
    return tv[a] < tv[b]


@njit
def _ready_swap(k1, k2, ti, tv, a, b):
    k1[a], k1[b] = k1[b], k1[a]
    k2[a], k2[b] = k2[b], k2[a]
    ti[a], ti[b] = ti[b], ti[a]
    tv[a], tv[b] = tv[b], tv[a]


@njit
def _ready_sift_down(k1, k2, ti, tv, size, pos):
    while True:
        child = 2 * pos + 1
        if child >= size:
            return
        if child + 1 < size and _ready_less(k1, k2, ti, tv, child + 1, child):
            child += 1
        if not _ready_less(k1, k2, ti, tv, child, pos):
            return
        _ready_swap(k1, k2, ti, tv, pos, child)
        pos = child


@njit
def _ready_push(k1, k2, ti, tv, ist, version, a, b, i, v):
    """Push (a, b, i, v); when full, drop the stale entries first (valid ones number <= n, so the
    set of valid entries, and with it the pop order, is unchanged)."""
    size = ist[READY_N]
    if size == len(k1):
        kept = 0
        for j in range(size):
            if tv[j] == version[ti[j]]:
                k1[kept], k2[kept], ti[kept], tv[kept] = k1[j], k2[j], ti[j], tv[j]
                kept += 1
        size = kept
        for j in range(size // 2 - 1, -1, -1):
            _ready_sift_down(k1, k2, ti, tv, size, j)
    k1[size], k2[size], ti[size], tv[size] = a, b, i, v
    pos = size
    while pos > 0:
        parent = (pos - 1) // 2
        if not _ready_less(k1, k2, ti, tv, pos, parent):
            break
        _ready_swap(k1, k2, ti, tv, pos, parent)
        pos = parent
    ist[READY_N] = size + 1


@njit
def _ready_pop(k1, k2, ti, tv, ist):
    size = ist[READY_N] - 1
    ist[READY_N] = size
    if size > 0:
        k1[0], k2[0], ti[0], tv[0] = k1[size], k2[size], ti[size], tv[size]
        _ready_sift_down(k1, k2, ti, tv, size, 0)


@njit
def _event_push(et, ec, ist, time, code):
    size = ist[EVENTS_N]
    if size == len(et):
        raise RuntimeError("compiled core: event heap overflow")
    et[size], ec[size] = time, code
    pos = size
    while pos > 0:
        parent = (pos - 1) // 2
        if et[pos] < et[parent] or (et[pos] == et[parent] and ec[pos] < ec[parent]):
            et[pos], et[parent] = et[parent], et[pos]
            ec[pos], ec[parent] = ec[parent], ec[pos]
            pos = parent
        else:
            break
    ist[EVENTS_N] = size + 1


@njit
def _event_pop(et, ec, ist):
    code = ec[0]
    size = ist[EVENTS_N] - 1
    ist[EVENTS_N] = size
    if size > 0:
        et[0], ec[0] = et[size], ec[size]
        pos = 0
        while True:
            child = 2 * pos + 1
            if child >= size:
                break
            if child + 1 < size and (et[child + 1] < et[child] or (et[child + 1] == et[child] and ec[child + 1] < ec[child])):
                child += 1
            if et[child] < et[pos] or (et[child] == et[pos] and ec[child] < ec[pos]):
                et[pos], et[child] = et[child], et[pos]
                ec[pos], ec[child] = ec[child], ec[pos]
                pos = child
            else:
                break
    return code


@njit
def _free_push(free, ist, track):
    size = ist[FREE_N]
    free[size] = track
    pos = size
    while pos > 0:
        parent = (pos - 1) // 2
        if free[pos] < free[parent]:
            free[pos], free[parent] = free[parent], free[pos]
            pos = parent
        else:
            break
    ist[FREE_N] = size + 1


@njit
def _free_pop(free, ist):
    track = free[0]
    size = ist[FREE_N] - 1
    ist[FREE_N] = size
    if size > 0:
        free[0] = free[size]
        pos = 0
        while True:
            child = 2 * pos + 1
            if child >= size:
                break
            if child + 1 < size and free[child + 1] < free[child]:
                child += 1
            if free[child] < free[pos]:
                free[pos], free[child] = free[child], free[pos]
                pos = child
            else:
                break
    return track


@njit
def _bisect_right(a, lo, hi, x):
    """``bisect.bisect_right(a[lo:hi], x)``."""
    first = lo
    while lo < hi:
        mid = (lo + hi) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo - first


@njit
def _chopped_end(i, f, avail, chop_limit, derived, period, phase, ends, ends_off):
    """engine._Run._chopped_end, line for line."""
    cap = f + chop_limit[i]
    if cap >= avail:
        return avail
    if derived[i]:
        return cap
    lo, hi = ends_off[i], ends_off[i + 1]
    if lo == hi:  # a plain periodic feed: boundaries phase + k*period, k >= 1
        per, ph = period[i], phase[i]
        k_first = max(1.0, np.floor((f - ph) / per) + 1)
        if ph + k_first * per <= f:
            k_first += 1
        k_cap = np.floor((cap - ph) / per)
        if ph + k_cap * per > cap:
            k_cap -= 1
        return min(ph + max(k_first, k_cap) * per, avail)
    k = _bisect_right(ends, lo, hi, cap) - 1
    if k < 0 or ends[lo + k] <= f:
        k = _bisect_right(ends, lo, hi, f)
    return min(ends[lo + k], avail)


@njit
def _key(kind, i, now, release, load, prm1, prm2, alpha, beta, pool, ist, fst, rkeys):
    """The policy's key as (first, second); a one-float key has second = 0 (policies.baselines)."""
    if kind == RELEASE:
        return release, 0.0
    if kind == DEADLINE:
        return release + prm1[i], 0.0
    if kind == DEADLINE_PRIORITY:
        return release + prm1[i], prm2[i]
    if kind == PRIORITY_DEADLINE:
        return prm2[i], release + prm1[i]
    if kind == BENEFIT:
        return -prm1[i] * load / (alpha[i] + beta[i] * load), 0.0
    pos = ist[POOL_POS]
    if pos == ist[POOL_LEN]:
        raise RuntimeError("compiled core: Random's draw pool ran dry within an instant")
    ist[POOL_POS] = pos + 1
    rkeys[i] = fst[CLOCK] + pool[pos]
    return rkeys[i], 0.0


@njit
def run_loop(  # noqa: C901, PLR0912, PLR0913, PLR0915 - one loop with the engine's state, on purpose
    # the workload
    horizon, warmup, alpha, beta, sep, any_sep, chop_limit, has_chop, any_chop, derived, period, phase,
    ends, ends_off, src, src_off, kids, kids_off,
    noise, noise_lo, noise_span, sd_cycle, sd_normal, sd_factor,
    # the policy
    kind, rekey, prm1, prm2, pool, rkeys,
    placing, aggressive, cand, cand_off, borrow, claims, claims_off,
    # the state
    ist, fst, F, avail, claimed, running, has_release, release, last_release, version,
    area, peak, last_change, job_track, job_release, job_start, job_from, job_to, job_cost,
    draws, draw_pos, refill, rk1, rk2, rti, rtv, et, ec, free,
    d_table, d_track, d_release, d_start, d_from, d_to, d_cost,
    # scratch space of a placement
    scratch_k1, scratch_k2, scratch_i, scratch_v, idle, is_avail, later, chosen,
    # this chunk of arrivals
    at_t, at_i, at_d,
):
    """Run until the horizon or until the driver must provide something; returns the reason."""
    n = len(F)
    wake = 2 * n
    t = fst[T]
    p = ist[P]
    t_arr = at_t[p]
    phase_now = ist[PHASE]
    while True:
        if phase_now == START:
            if ist[DONE_N] + n > len(d_table):
                ist[PHASE] = START
                ist[P] = p
                return NEED_ROOM
            if kind == RANDOM and ist[POOL_LEN] - ist[POOL_POS] <= n:
                ist[PHASE] = START
                ist[P] = p
                return NEED_POOL
            if ist[REFILLS] > 0:
                ist[PHASE] = START
                ist[P] = p
                return NEED_DRAWS
            t_event = et[0] if ist[EVENTS_N] > 0 else _INF
            t = t_event if t_event < t_arr else t_arr
            if t > horizon:
                ist[P] = p
                return DONE
            fst[T] = t
            # 1. completions (and deferred releases)
            while ist[EVENTS_N] > 0 and et[0] == t:
                code = _event_pop(et, ec, ist)
                if code >= n:
                    if code == wake:
                        continue
                    i = code - n  # deferred release (min_separation)
                    if not has_release[i] and avail[i] > claimed[i]:
                        has_release[i] = True
                        release[i] = t
                        last_release[i] = t
                        if not running[i]:
                            _push_ready(i, t, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail,
                                        release, version, chop_limit, has_chop, derived, period, phase, ends,
                                        ends_off, rk1, rk2, rti, rtv)
                    continue
                i = code
                old = F[i]
                a = last_change[i]
                if a < warmup:
                    a = warmup
                if t > a:
                    area[i] += (t - a) * ((t + a) * 0.5 - old)
                    if t - old > peak[i]:
                        peak[i] = t - old
                F[i] = job_to[i]
                last_change[i] = t
                running[i] = False
                _free_push(free, ist, job_track[i])
                k = ist[DONE_N]
                d_table[k], d_track[k], d_release[k], d_start[k] = i, job_track[i], job_release[i], job_start[i]
                d_from[k], d_to[k], d_cost[k] = job_from[i], job_to[i], job_cost[i]
                ist[DONE_N] = k + 1
                if has_release[i]:
                    _push_ready(i, t, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail,
                                release, version, chop_limit, has_chop, derived, period, phase, ends, ends_off,
                                rk1, rk2, rti, rtv)
                for q in range(kids_off[i], kids_off[i + 1]):
                    c = kids[q]
                    edge = _INF
                    for r in range(src_off[c], src_off[c + 1]):
                        if F[src[r]] < edge:
                            edge = F[src[r]]
                    if edge > avail[c]:
                        old = avail[c]
                        avail[c] = edge
                        _new_data(c, old, t, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail,
                                  claimed, running, has_release, release, last_release, sep, version, chop_limit,
                                  has_chop, derived, period, phase, ends, ends_off, rk1, rk2, rti, rtv, et, ec, n)
            phase_now = ARRIVALS
        if phase_now == ARRIVALS:
            # 2. feed arrivals
            while t_arr == t:
                i = at_i[p]
                d = at_d[p]
                p += 1
                ist[ARRIVALS_SEEN] += 1
                old = avail[i]
                if d > old:
                    avail[i] = d
                    if not has_release[i]:
                        if claimed[i] >= old:
                            if any_sep and t < last_release[i] + sep[i]:
                                _event_push(et, ec, ist, last_release[i] + sep[i], i + n)
                            else:
                                has_release[i] = True
                                release[i] = t
                                if any_sep:
                                    last_release[i] = t
                                if not running[i]:
                                    if not has_chop[i]:
                                        v = version[i] + 1
                                        version[i] = v
                                        k1, k2 = _key(kind, i, t, t, d - F[i], prm1, prm2, alpha, beta, pool, ist,
                                                      fst, rkeys)
                                        _ready_push(rk1, rk2, rti, rtv, ist, version, k1, k2, i, v)
                                    else:
                                        _push_ready(i, t, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst,
                                                    rkeys, F, avail, release, version, chop_limit, has_chop, derived,
                                                    period, phase, ends, ends_off, rk1, rk2, rti, rtv)
                    elif rekey and not running[i]:
                        _push_ready(i, t, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail,
                                    release, version, chop_limit, has_chop, derived, period, phase, ends, ends_off,
                                    rk1, rk2, rti, rtv)
                t_arr = at_t[p]
                if t_arr == _INF:
                    ist[PHASE] = ARRIVALS
                    ist[P] = p
                    return NEED_CHUNK
        # 3. dispatch
        if ist[FREE_N] > 0 and ist[READY_N] > 0:
            if placing:
                _dispatch_placed(t, aggressive, cand, cand_off, borrow, claims, claims_off, scratch_k1, scratch_k2,
                                 scratch_i, scratch_v, idle, is_avail, later, chosen, kind, ist, fst, rkeys, F, avail,
                                 claimed, running, has_release, release, version, alpha, beta, chop_limit, has_chop,
                                 any_chop, derived, period, phase, ends, ends_off, noise, noise_lo, noise_span,
                                 sd_cycle, sd_normal, sd_factor, draws, draw_pos, refill, job_track, job_release,
                                 job_start, job_from, job_to, job_cost, rk1, rk2, rti, rtv, et, ec, free)
            else:  # the lowest free track takes the first ready table in key order
                while ist[FREE_N] > 0 and ist[READY_N] > 0:
                    i = rti[0]
                    stale = rtv[0] != version[i]
                    _ready_pop(rk1, rk2, rti, rtv, ist)
                    if stale:
                        continue
                    _start(i, _free_pop(free, ist), t, kind, ist, fst, rkeys, F, avail, claimed, running, has_release,
                           release, alpha, beta, chop_limit, has_chop, any_chop, derived, period, phase, ends,
                           ends_off, noise, noise_lo, noise_span, sd_cycle, sd_normal, sd_factor, draws, draw_pos,
                           refill, job_track, job_release, job_start, job_from, job_to, job_cost, et, ec)
        phase_now = START


@njit
def _start(i, track, t, kind, ist, fst, rkeys, F, avail, claimed, running, has_release, release, alpha, beta,
           chop_limit, has_chop, any_chop, derived, period, phase, ends, ends_off, noise, noise_lo, noise_span,
           sd_cycle, sd_normal, sd_factor, draws, draw_pos, refill, job_track, job_release, job_start, job_from,
           job_to, job_cost, et, ec):
    """Start table i's job on ``track`` at ``t`` (the engine's dispatch, after the choice)."""
    f = F[i]
    end = avail[i]
    if any_chop and has_chop[i]:
        end = _chopped_end(i, f, end, chop_limit, derived, period, phase, ends, ends_off)
    cost = alpha[i] + beta[i] * (end - f)
    if noise:
        cost *= noise_lo + noise_span * draws[i, draw_pos[i]]
        draw_pos[i] += 1
        if draw_pos[i] == draws.shape[1]:  # the driver refills it before the next instant
            refill[ist[REFILLS]] = i
            ist[REFILLS] += 1
    if sd_cycle != 0.0 and (sd_normal == 0.0 or t % sd_cycle >= sd_normal):
        cost *= sd_factor
    claimed[i] = end
    running[i] = True
    job_track[i], job_release[i], job_start[i] = track, release[i], t
    job_from[i], job_to[i], job_cost[i] = f, end, cost
    if end >= avail[i]:
        has_release[i] = False
    _event_push(et, ec, ist, t + cost, i)
    if kind == RANDOM:
        fst[CLOCK] = rkeys[i]


@njit
def _later_claims(pos, order, claims, claims_off, later, ist):
    """Per track, how many tables at positions > ``pos`` of ``order`` claim it: counted on first
    use in a decision (``ist[LATER_FROM]`` < 0), then updated as ``pos`` advances
    (partitioned.LaterTables)."""
    if ist[LATER_FROM] < 0:
        later[:] = 0
        for q in range(pos + 1, len(order)):
            for c in range(claims_off[order[q]], claims_off[order[q] + 1]):
                later[claims[c]] += 1
    else:
        for q in range(ist[LATER_FROM], pos + 1):
            for c in range(claims_off[order[q]], claims_off[order[q] + 1]):
                later[claims[c]] -= 1
    ist[LATER_FROM] = pos + 1


@njit
def _dispatch_placed(t, aggressive, cand, cand_off, borrow, claims, claims_off, scratch_k1, scratch_k2, scratch_i,
                     scratch_v, idle, is_avail, later, chosen, kind, ist, fst, rkeys, F, avail, claimed, running,
                     has_release, release, version, alpha, beta, chop_limit, has_chop, any_chop, derived, period,
                     phase, ends, ends_off, noise, noise_lo, noise_span, sd_cycle, sd_normal, sd_factor, draws,
                     draw_pos, refill, job_track, job_release, job_start, job_from, job_to, job_cost, rk1, rk2, rti,
                     rtv, et, ec, free):
    """One placement decision (engine._Run._placed with the partitioners' rule), then the starts."""
    m = 0  # the valid ready entries, in key order
    while ist[READY_N] > 0:
        i = rti[0]
        if rtv[0] == version[i]:
            scratch_k1[m], scratch_k2[m], scratch_i[m], scratch_v[m] = rk1[0], rk2[0], i, rtv[0]
            m += 1
        _ready_pop(rk1, rk2, rti, rtv, ist)
    n_idle = 0  # the idle tracks, ascending
    while ist[FREE_N] > 0:
        idle[n_idle] = _free_pop(free, ist)
        is_avail[idle[n_idle]] = True
        n_idle += 1
    left = n_idle
    n_chosen = 0
    ist[LATER_FROM] = -1
    order = scratch_i[:m]
    for pos in range(m):
        i = order[pos]
        track = -1
        for c in range(cand_off[i], cand_off[i + 1]):
            r = cand[c]
            if not is_avail[r]:
                continue
            if borrow[c] and not aggressive:
                _later_claims(pos, order, claims, claims_off, later, ist)
                if later[r] > 0:
                    continue
            track = r
            break
        if track < 0:
            continue
        is_avail[track] = False
        chosen[0, n_chosen] = pos
        chosen[1, n_chosen] = track
        n_chosen += 1
        left -= 1
        if left == 0:
            break
    # put back what was not chosen: the rest of the ready entries in key order (already a heap)
    # and the idle tracks left, ascending
    for q in range(n_idle):
        if is_avail[idle[q]]:
            is_avail[idle[q]] = False
            free[ist[FREE_N]] = idle[q]
            ist[FREE_N] += 1
    taken = 0
    for q in range(m):
        if taken < n_chosen and chosen[0, taken] == q:
            taken += 1
            continue
        k = ist[READY_N]
        rk1[k], rk2[k], rti[k], rtv[k] = scratch_k1[q], scratch_k2[q], scratch_i[q], scratch_v[q]
        ist[READY_N] = k + 1
    for q in range(n_chosen):
        _start(order[chosen[0, q]], chosen[1, q], t, kind, ist, fst, rkeys, F, avail, claimed, running, has_release,
               release, alpha, beta, chop_limit, has_chop, any_chop, derived, period, phase, ends, ends_off, noise, noise_lo, noise_span,
               sd_cycle, sd_normal, sd_factor, draws, draw_pos, refill, job_track, job_release, job_start, job_from,
               job_to, job_cost, et, ec)


@njit
def _push_ready(i, now, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail, release, version,
                chop_limit, has_chop, derived, period, phase, ends, ends_off, rk1, rk2, rti, rtv):
    v = version[i] + 1
    version[i] = v
    end = avail[i]
    if has_chop[i]:
        end = _chopped_end(i, F[i], avail[i], chop_limit, derived, period, phase, ends, ends_off)
    k1, k2 = _key(kind, i, now, release[i], end - F[i], prm1, prm2, alpha, beta, pool, ist, fst, rkeys)
    _ready_push(rk1, rk2, rti, rtv, ist, version, k1, k2, i, v)


@njit
def _new_data(i, old, now, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail, claimed, running,
              has_release, release, last_release, sep, version, chop_limit, has_chop, derived, period, phase, ends,
              ends_off, rk1, rk2, rti, rtv, et, ec, n):
    """Table i's available data grew from ``old`` at ``now``: release it or re-key it (engine.new_data)."""
    if not has_release[i]:
        if claimed[i] < old:
            return
        due = last_release[i] + sep[i]
        if now < due:
            _event_push(et, ec, ist, due, i + n)
            return
        has_release[i] = True
        release[i] = now
        last_release[i] = now
        if not running[i]:
            _push_ready(i, now, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail, release,
                        version, chop_limit, has_chop, derived, period, phase, ends, ends_off, rk1, rk2, rti, rtv)
    elif rekey and not running[i]:
        _push_ready(i, now, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail, release,
                    version, chop_limit, has_chop, derived, period, phase, ends, ends_off, rk1, rk2, rti, rtv)


@njit
def start_derived(src, src_off, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail, claimed,
                  running, has_release, release, last_release, sep, version, chop_limit, has_chop, derived, period,
                  phase, ends, ends_off, rk1, rk2, rti, rtv, et, ec):
    """Time 0: derived tables whose sources are already fresher than they are (engine.execute)."""
    n = len(F)
    for i in range(n):
        if src_off[i + 1] > src_off[i]:
            edge = _INF
            for r in range(src_off[i], src_off[i + 1]):
                if F[src[r]] < edge:
                    edge = F[src[r]]
            if edge > avail[i]:
                old = avail[i]
                avail[i] = edge
                _new_data(i, old, 0.0, kind, rekey, prm1, prm2, alpha, beta, pool, ist, fst, rkeys, F, avail, claimed,
                          running, has_release, release, last_release, sep, version, chop_limit, has_chop, derived,
                          period, phase, ends, ends_off, rk1, rk2, rti, rtv, et, ec, n)
