"""Max Benefit with Lookahead (Golab et al., Sec. 3.1, the algorithm after the Fig. 3 example).

Max Benefit ignores releases it could foresee: if a job with a much higher marginal benefit
will be released while the best ready job J_i runs, it may pay to run a few shorter ready jobs
first, so the track frees up just as the valuable job arrives. Per pick, at time t:

1. J_i = the ready job with the largest marginal benefit ``MB_i = p_i dF_i / E_i(dF_i)``.
2. For every *predicted* release J_k with ``t < r_k < t + E_i`` and ``MB_k > MB_i``, and every
   set S of other ready jobs with ``r_k - t <= sum_{m in S} E_m < E_i``, the rate of running S
   and then J_k is ``B[S, k] = (sum_S p_m dF_m + p_k dF_k) / (sum_S E_m + E_k)``.
3. If the largest B[S, k] exceeds MB_i, run the job of the maximizing S with the largest
   marginal benefit; else run J_i.

Readings of the garbled or silent parts of the printed algorithm:

* The upper bound of step 2 is printed ``E_j``; it is J_i's cost ``E_i`` (the text says only
  releases before J_i would finish count; the example's "between 1 and 2" agrees with
  ``[r_k - t, E_i)`` on its one candidate set {J2}, B = 505 / 5 = 101).
* The lower bound ``r_k - t <= sum E_m`` keeps the track busy until J_k arrives: the track never
  idles on a guess, so the policy is work-conserving.
* **Predicted releases** are base tables with no pending data and no running job; their release
  is the feed's next arrival after t (:meth:`EngineView.next_arrival`: ``phase + k*period``, or
  the next entry of a replayed log), with ``dF_k = data_to - F_k`` and ``E_k = E_k(dF_k)``.
  Derived tables are not predicted (their releases hang on other jobs' completions).
* Costs are nominal ``E(n) = alpha + beta*n`` (the scheduler never sees the random draw or the
  slowdown); ``dF`` of a ready job is what it would load now, after chopping.
* Sets hold at most ``max_set`` jobs (default 3), drawn from the ``candidates`` (default 20)
  ready jobs with the largest marginal benefit among those shorter than J_i; both caps are ours
  (the paper prunes only by the two bounds above) and keep a decision polynomial.
* With several idle tracks the rule is applied once per track, in track order, each pick
  removing its job from the ready set.
* Priorities are the inherited ones when an inheritance mode is set (Sec. 3.3), in MB and B.

**Starvation in lasting overload** (a finding; the paper reports Lookahead as nearly always
choosing like Max Benefit). The rule has no aging: once J_i is a backlogged low-priority table,
its cost E_i grows with its backlog, so some higher-MB release always falls within E_i and some
set of shorter jobs always beats MB_i, and J_i never runs while anything else is ready. Above
the merging limit (:func:`~staleness_lab.experiments.golab.generators.merging_limit`) that is
forever: on the Fig. 7 workload at U = 1.2 one table goes un-updated for 199,078 of 200,000
time units, where Max Benefit's worst staleness is 19,242. Up to the limit the same deferral
pays: at the standard profile Lookahead's relative lateness is 10 % (U = 0.8) to 63 % (U = 1.1)
below Max Benefit's, and 22 % above it at U = 1.2.

**Cost per decision.** Unlike the order-only baselines this policy places jobs itself, so at
every decision with two or more ready tables the engine hands it the whole ready list (O(R log R));
a lone ready table has no alternative set and the engine starts it itself (``lone_lowest``: on
Table 2 with spare tracks that is every decision, and the policy runs at Max Benefit's rate). Each pick scans the
predicted releases falling within E_i (a heap of next arrivals, advanced lazily) and, when one
qualifies, searches the sets of up to ``max_set`` of ``candidates`` jobs, pruned exactly by an
upper bound (:func:`_best_alternative`: about a third of the sets visited on the Fig. 7
workload at U = 1). It runs on the Python engine only (no compiled core), at a tenth of plain Max Benefit's events
per second in overload, where every decision has predictions and candidates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import Any, ClassVar

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.policies.inheritance import INHERITANCE_OPTIONS, Inheriting
from staleness_lab.policies.options import Option
from staleness_lab.policies.registry import register


@dataclass(frozen=True)
class Decision:
    """One pick of the lookahead rule.

    ``table``: the job to run; ``best``: J_i, the ready job with the largest marginal benefit,
    and ``marginal_benefit`` its MB_i; ``B``, ``S``, ``k``: the largest B[S, k] over the
    qualifying sets and predictions, its set and its predicted job (``None``, ``()``, ``None``
    when nothing qualified).
    """

    table: int
    best: int
    marginal_benefit: float
    B: float | None
    S: tuple[int, ...]
    k: int | None


def decide(
    now: float,
    ready: Sequence[tuple[int, float, float]],
    predicted: Sequence[tuple[int, float, float, float]],
    max_set: int = 3,
    candidates: int = 20,
) -> Decision:
    """The lookahead rule on explicit numbers (the policy runs the same code).

    ``ready``: ``(table, benefit p*dF, cost E)`` in Max Benefit order (largest MB first);
    ``predicted``: ``(table, release time r, benefit p*dF, cost E)``.
    """
    i, b_i, e_i = ready[0]
    mb_i = b_i / e_i
    preds = [(k, r, b, e) for k, r, b, e in predicted if now < r < now + e_i and b / e > mb_i]
    cands = [(pos, m, b, e) for pos, (m, b, e) in enumerate(ready) if pos and e < e_i][:candidates]
    found = _best_alternative(now, e_i, cands, preds, max_set)
    if found is None:
        return Decision(i, i, mb_i, None, (), None)
    best_b, members, first, k = found
    return Decision(first if best_b > mb_i else i, i, mb_i, best_b, members, k)


def _best_alternative(
    now: float,
    e_i: float,
    cands: list[tuple[int, int, float, float]],
    preds: list[tuple[int, float, float, float]],
    max_set: int,
    floor: float = -math.inf,
) -> tuple[float, tuple[int, ...], int, int] | None:
    """The largest B[S, k] above ``floor``: ``(B, S as tables in order, S's first table in
    order, k)``, or None when no set qualifies (or none beats ``floor``).

    ``cands``: ``(position in order, table, benefit, cost)``, every cost below ``e_i``;
    ``preds``: ``(table, release time, benefit, cost)``, already filtered by step 2.

    Sets are visited depth first over the candidates sorted by cost (a set too long ends a
    scan), the first strict maximum wins, and each B is the same float expression in the same
    order as a full enumeration's. The scan of a partial set S' stops, exactly, at the first
    candidate q whose subtree (S' + q + any later candidates) cannot beat the best so far (or
    ``floor``), by :func:`_subtree_bound`; the bound only falls as q advances, so every later
    subtree is pruned too. It is compared with a relative margin of 1e-9, far above the few
    ulps its float sums can differ from the exact ones, so no set that could win is skipped.
    """
    if not preds or not cands:
        return None
    cands = sorted(cands, key=lambda c: (c[3], c[0]))  # by cost: a set too long stops a scan
    n = len(cands)
    lows = [r - now for _, r, _, _ in preds]
    min_low = min(lows)
    # suffix maxima of the candidates' own ratios b/e (a zero cost counts as unbounded)
    tail = [-math.inf] * (n + 1)
    for q in range(n - 1, -1, -1):
        b_q, e_q = cands[q][2], cands[q][3]
        tail[q] = max(tail[q + 1], b_q / e_q if e_q > 0 else math.inf)
    parts = [(bk, ek, low) for (_, _, bk, ek), low in zip(preds, lows)]
    best = [-math.inf, (), -1]  # B, set (indices into cands), k
    margin = 1.0 + 1e-9

    def visit(start: int, bs: float, es: float, members: tuple[int, ...]) -> None:
        for q in range(start, n):
            e_q = cands[q][3]
            e = es + e_q
            if e >= e_i:
                break
            threshold = best[0] if best[0] > floor else floor
            bound = _subtree_bound(bs, es, e_q, tail[q], e_i, parts)
            if bound * margin < threshold if bound > 0 else bound < threshold:
                break
            b = bs + cands[q][2]
            new = (*members, q)
            if e >= min_low:
                for (k, _, bk, ek), low in zip(preds, lows):
                    if e >= low:
                        value = (b + bk) / (e + ek)
                        if value > best[0]:
                            best[:] = [value, new, k]
            if len(new) < max_set:
                visit(q + 1, b, e, new)

    visit(0, 0.0, 0.0, ())
    if best[2] < 0 or best[0] <= floor:
        return None
    chosen = sorted(cands[q] for q in best[1])  # by position in the order
    return best[0], tuple(c[1] for c in chosen), chosen[0][1], best[2]


def _subtree_bound(bs: float, es: float, e_q: float, t: float, e_i: float,
                   parts: list[tuple[float, float, float]]) -> float:
    """An upper bound on B[S, k] over the sets S = S' + X, X being candidate q and any later
    ones (``bs``, ``es``: S''s benefit and cost; ``e_q``: q's cost, the least any later one
    costs; ``t``: the largest b/e from q on; ``parts``: each prediction's benefit, cost and
    lower bound ``r_k - now``).

    For prediction k, with X's benefit at most ``t * E_X``: ``B <= (c1 + t E_X) / (c2 + E_X)``,
    ``c1 = bs + b_k``, ``c2 = es + e_k``, which moves monotonically from ``c1 / c2`` towards
    ``t``; so it is at most ``t``, or at most its value at the least ``E_X`` a qualifying set
    needs, ``max(e_q, low_k - es)``. A prediction no set within ``E_i`` can reach
    (``low_k >= E_i``) adds nothing."""
    bound = t
    for bk, ek, low in parts:
        if low >= e_i:
            continue  # no set shorter than E_i reaches r_k (tested exactly: es + need may round up)
        need = low - es
        if need < e_q:
            need = e_q
        den = es + ek + need
        if den <= 0:
            return math.inf
        v = (bs + bk + t * need) / den
        if v > bound:
            bound = v
    return bound


@register
class MaxBenefitLookahead(Inheriting):
    """Max Benefit with Lookahead (Golab et al., Sec. 3.1): Max Benefit, except that it runs
    shorter jobs first when a predicted release with a higher marginal benefit would otherwise
    wait for the best ready job.

    See :mod:`staleness_lab.policies.lookahead` for the rule, the readings taken (upper bound
    E_i, predicted releases of idle base tables, sets of at most ``max_set`` jobs) and its
    higher cost per decision: it places jobs itself, so the engine hands it the whole ready list.
    """

    name = "max-benefit-lookahead"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option("max_set", int, 3, "largest number of ready jobs in an alternative set S", minimum=1),
        Option("candidates", int, 20, "alternative sets draw on this many highest-MB ready jobs", minimum=1),
        *INHERITANCE_OPTIONS,
    )

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        p = self.scheduling_priorities(workload)
        a = [t.alpha for t in workload.tables]
        b = [t.beta for t in workload.tables]
        base = [k for k, t in enumerate(workload.tables) if t.is_base]
        max_set = self.options["max_set"]
        n_cands = self.options["candidates"]
        # next feed arrival of every base table: (time, table, data_to), advanced lazily
        arrivals: list[tuple[float, int, float]] = []
        started = [False]

        def key(i: int, now: float, release: float, n: float) -> float:
            return -p[i] * n / (a[i] + b[i] * n)

        def advance(now: float, view: Any) -> None:
            if not started[0]:
                started[0] = True
                for k in base:
                    nxt = view.next_arrival(k, now)
                    if nxt is not None:
                        heappush(arrivals, (nxt[0], k, nxt[1]))
                return
            while arrivals and arrivals[0][0] <= now:
                k = heappop(arrivals)[1]
                nxt = view.next_arrival(k, now)
                if nxt is not None:
                    heappush(arrivals, (nxt[0], k, nxt[1]))

        def predictions(now: float, limit: float, mb_i: float, view: Any) -> list[tuple[int, float, float, float]]:
            out = []
            fresh, avail, running = view.state()
            heap = arrivals
            size = len(heap)
            stack = [0]
            while stack:
                idx = stack.pop()
                r, k, data_to = heap[idx]
                if r >= limit:
                    continue  # heap order: every entry below is later
                child = 2 * idx + 1
                if child < size:
                    stack.append(child)
                    if child + 1 < size:
                        stack.append(child + 1)
                f = fresh[k]
                d = data_to - f
                if d <= 0 or running[k] or avail[k] > f:
                    continue  # predicted: an idle base table (no pending data, no job running)
                bk = p[k] * d
                e = a[k] + b[k] * d
                if bk / e > mb_i:
                    out.append((k, r, bk, e))
            return out

        def place(order: list[int], idle: list[int], now: float, view: Any) -> list[tuple[int, int]]:
            advance(now, view)
            out: list[tuple[int, int]] = []
            taken: set[int] = set()
            head = 0
            for track in idle:
                while head < len(order) and order[head] in taken:
                    head += 1
                if head >= len(order):
                    break
                i = order[head]
                n_i = view.pending(i)
                e_i = a[i] + b[i] * n_i
                mb_i = p[i] * n_i / e_i
                choice = i
                if arrivals and arrivals[0][0] < now + e_i:  # a release may fall within E_i
                    cands = []  # shorter ready jobs first: without them no set exists
                    for pos in range(head + 1, len(order)):
                        m = order[pos]
                        if m in taken:
                            continue
                        n_m = view.pending(m)
                        e_m = a[m] + b[m] * n_m
                        if e_m < e_i:
                            cands.append((pos, m, p[m] * n_m, e_m))
                            if len(cands) >= n_cands:
                                break
                    if cands:
                        preds = predictions(now, now + e_i, mb_i, view)
                        found = _best_alternative(now, e_i, cands, preds, max_set, floor=mb_i)
                        if found is not None:
                            choice = found[2]
                taken.add(choice)
                out.append((choice, track))
            return out

        # a lone ready job has no alternative set, so it runs (on the lowest idle track); a call
        # skipped then loses nothing: ``advance`` catches up, and which entries the arrival heap
        # holds does not depend on when it was advanced (``_best_alternative`` does not depend
        # on their order in it)
        return BoundPolicy(key=key, rekey_on_data=True, place=place, lone_lowest=True)
