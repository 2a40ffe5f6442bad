"""A placement rule run by the Python engine itself (the partitioners' dispatch as data).

A policy that gives its placement as a :class:`~staleness_lab.policies.base.PlacementRule`
besides its ``place`` function (EDF-Partitioned and Proportional, Golab et al., Sec. 3.2.2-3.2.3)
is decided here, with the result ``engine._Run._placed`` would get from ``place``:

* **Bags, not heaps.** Under a rule the engine keeps its ready list and its free-track list as
  bags: it only appends to them (releases, re-keys, completions; no heap sift) and lets
  :meth:`RuleDispatch.decide` take what starts. A start removes its entry and its
  track where they lie (no sort, no rebuild), and the order the rule needs is made per decision
  from the few entries that matter.
* **Relevant entries.** Each table's candidate tracks and claimed tracks are bitmasks. Only a
  valid ready entry whose candidates or claims meet the idle tracks can change the outcome: one
  whose candidates miss them cannot start, and the claims the rule asks about are claims on idle
  tracks. Between decisions the free list only grows, by completions appended at its end, so
  the idle mask is the one the last decision left and the bits of the tracks appended since.
* **Settled decisions.** A decision that started nothing, or whose refusals could not change
  with the same idle tracks, stands until a track frees or a table that could use an idle track
  is queued (:attr:`RuleDispatch.quiet`, checked by the engine without a call). On the
  partitioners, ready tables mostly wait for their busy home track while another track idles:
  on Table 2 at 30 tables and 6 tracks, 42 % of the decisions stand this way.
* **The walk** is the rule's (module docstring of :mod:`staleness_lab.policies.partitioned`):
  the relevant entries in key order, per table its first idle candidate, a borrowed one refused
  (unless aggressive) while a table later in the order claims it (a suffix OR of the claim
  masks, made on the first borrowed candidate). A lone relevant entry has no
  later claims, so it takes its first idle candidate without a sort.
* **Stale entries** (re-keyed tables' old entries, lazily invalidated by version) are skipped
  everywhere and dropped once they outnumber the tables twice over.

``place`` stays the reference: ``tests/sim/test_placement.py`` compares the two paths' traces
bit for bit on every partitioner variant.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate
from operator import or_
from typing import Any

from staleness_lab.policies.base import PlacementRule


def _mask(tracks: tuple[int, ...]) -> int:
    return sum(1 << r for r in set(tracks))


class RuleDispatch:
    """One run's placement rule, prepared as bitmasks (see the module docstring).

    :attr:`decide` is a closure over the rule's lists (a decision is due at nearly every event,
    and a closure's variables are read faster than an instance's attributes). :attr:`quiet`
    lets the engine skip a decision without calling it: ``quiet[0]`` is the length of the free
    list at which the same decision would start nothing (-1: a decision is due), ``quiet[1]``
    the idle tracks' mask the last decision left. :meth:`watch` wraps the policy's key function,
    which the engine calls exactly when it queues a new ready entry, so that queueing a table
    that could use an idle track makes a decision due."""

    def __init__(self, rule: PlacementRule, n_tracks: int) -> None:
        self.quiet = [-1, 0]
        self._reach = [_mask(c) | _mask(cl) for c, cl in zip(rule.candidates, rule.claims)]
        self.decide = _decider(rule, n_tracks, self.quiet, self._reach)

    def watch(self, key: Callable[[int, float, float | None, float], Any]) -> Callable[[int, float, float | None, float], Any]:
        """``key``, also making a decision due when the table it keys reaches an idle track."""
        quiet = self.quiet
        reach = self._reach

        def watched(i: int, now: float, release: float | None, n: float) -> Any:
            if reach[i] & quiet[1]:
                quiet[0] = -1
            return key(i, now, release, n)

        return watched


def _drop_stale(ready: list[tuple], version: list[int]) -> None:
    ready[:] = [e for e in ready if e[2] == version[e[1]]]


def _decider(rule: PlacementRule, n_tracks: int, quiet: list[int], reach: list[int]) -> Callable[[list[tuple], list[int], list[int]], list[tuple[int, int]]]:
    aggressive = rule.aggressive
    mask = [_mask(c) for c in rule.candidates]
    # per table: (track, its bit, borrowed) in preference order
    candidates = [tuple((r, 1 << r, b) for r, b in zip(c, bs)) for c, bs in zip(rule.candidates, rule.borrowed)]
    claimed = [_mask(cl) for cl in rule.claims]
    bits = [1 << r for r in range(n_tracks)]
    compact_at = 2 * len(rule.candidates) + 16
    free_was = 0  # the length of ``free`` the last decision left (its mask is quiet[1])

    def decide(ready: list[tuple], free: list[int], version: list[int]) -> list[tuple[int, int]]:
        """The (table, track) pairs to start now, in the rule's walk order; ``ready`` and
        ``free`` lose them in place.

        ``ready``: the engine's ``(key, table, version)`` entries, lazily invalidated by
        ``version``; ``free``: its idle tracks (both bags, see the module docstring)."""
        nonlocal free_was
        n_free = len(free)
        if n_free == free_was:
            idle = quiet[1]
        elif n_free == free_was + 1:
            idle = quiet[1] | bits[free[-1]]
        else:
            idle = quiet[1]
            for r in free[free_was:]:
                idle |= bits[r]
        if len(ready) > compact_at:  # re-keyed entries pile up while their tables wait
            _drop_stale(ready, version)
        # a loop, not a comprehension: on Python 3.11 a comprehension is a function made and
        # called per decision, with ``idle`` and ``version`` as cells (12 % of the rule's rate)
        entries = []
        for e in ready:
            if reach[e[1]] & idle and e[2] == version[e[1]]:
                entries.append(e)
        chosen: list[tuple[int, int]] = []
        left = idle
        refused = False
        if len(entries) == 2:  # the common case: a later claim is the other entry's
            first, second = entries
            if second < first:
                first, second = second, first
            i = first[1]
            if mask[i] & left:
                later = claimed[second[1]]
                for r, bit, borrowed in candidates[i]:
                    if bit & left:
                        if borrowed and not aggressive and later & bit:
                            refused = True
                            continue
                        chosen.append((i, r))
                        ready.remove(first)
                        free.remove(r)
                        left &= ~bit
                        break
            entries = [second]
        if len(entries) == 1:  # no later claims: its first idle candidate, if any
            e = entries[0]
            if mask[e[1]] & left:
                for r, bit, _ in candidates[e[1]]:
                    if bit & left:
                        ready.remove(e)
                        free.remove(r)
                        chosen.append((e[1], r))
                        left &= ~bit
                        break
        elif entries:
            entries.sort()
            later_claims: list[int] | None = None
            for pos, e in enumerate(entries):
                i = e[1]
                if not mask[i] & left:
                    continue
                for r, bit, borrowed in candidates[i]:
                    if not bit & left:
                        continue
                    if borrowed and not aggressive:
                        if later_claims is None:  # later_claims[j]: the tracks claimed by the last j entries
                            later_claims = [0, *accumulate([claimed[e[1]] for e in reversed(entries)], or_)]
                        if later_claims[len(entries) - 1 - pos] & bit:
                            refused = True
                            continue
                    chosen.append((i, r))
                    ready.remove(e)
                    free.remove(r)
                    left &= ~bit
                    break
                if not left:
                    break
        free_was = len(free)
        quiet[1] = left
        # settled, unless a table refused for a later claimant that took another track could
        # start next time
        quiet[0] = -1 if refused and chosen else free_was
        return chosen

    return decide
