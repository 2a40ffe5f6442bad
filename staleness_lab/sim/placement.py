"""A placement rule run by the Python engine itself (the partitioners' dispatch as data).

A policy that gives its placement as a :class:`~staleness_lab.policies.base.PlacementRule`
besides its ``place`` function (EDF-Partitioned and Proportional, Golab et al., Sec. 3.2.2-3.2.3)
is decided here, with the result ``engine._Run._placed`` would get from ``place``:

* **Bags, not heaps.** Under a rule the engine never pops its ready heap or its free-track heap:
  it only pushes (releases, re-keys, completions) and lets :meth:`RuleDispatch.decide` take
  what starts. So both lists are read as bags of entries: a start removes its entry and its
  track where they lie (no sort, no rebuild), and the order the rule needs is made per decision
  from the few entries that matter.
* **Relevant entries.** Each table's candidate tracks and claimed tracks are bitmasks. Only a
  valid ready entry whose candidates or claims meet the idle tracks can change the outcome: one
  whose candidates miss them cannot start, and the claims the rule asks about are claims on idle
  tracks. When no entry is relevant the decision is skipped; on the partitioners, ready tables
  mostly wait for their busy home track while another track idles, so about half the decisions
  end here. The idle mask is recomputed only when the free list grew (between decisions it
  only grows, by completions, so an unchanged length is an unchanged set).
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

    :meth:`watch` wraps the policy's key function so that the rule learns which tables were
    (re-)queued since its last decision; :attr:`decide` is a closure over the rule's lists (a
    decision is due at nearly every event, and a closure's variables are read faster than an
    instance's attributes)."""

    def __init__(self, rule: PlacementRule, n_tracks: int) -> None:
        self._queued: list[int] = []
        self.decide = _decider(rule, n_tracks, self._queued)

    def watch(self, key: Callable[[int, float, float | None, float], Any]) -> Callable[[int, float, float | None, float], Any]:
        """``key``, also noting each table it keys (the engine keys a table exactly when it
        queues a new ready entry for it)."""
        note = self._queued.append

        def watched(i: int, now: float, release: float | None, n: float) -> Any:
            note(i)
            return key(i, now, release, n)

        return watched


def _decider(rule: PlacementRule, n_tracks: int, queued: list[int]) -> Callable[[list[tuple], list[int], list[int]], list[tuple[int, int]]]:
    aggressive = rule.aggressive
    mask = [_mask(c) for c in rule.candidates]
    reach = [_mask(c) | _mask(cl) for c, cl in zip(rule.candidates, rule.claims)]
    # per table: (track, its bit, borrowed) in preference order
    candidates = [tuple((r, 1 << r, b) for r, b in zip(c, bs)) for c, bs in zip(rule.candidates, rule.borrowed)]
    claimed = [_mask(cl) for cl in rule.claims]
    bits = [1 << r for r in range(n_tracks)]
    compact_at = 2 * len(rule.candidates) + 16
    # what the last decision left: the mask of ``free``, its length (-1: none yet), and whether
    # the same decision again would start nothing ("settled")
    last = [0, -1, False]

    def decide(ready: list[tuple], free: list[int], version: list[int]) -> list[tuple[int, int]]:
        """The (table, track) pairs to start now, in the rule's walk order; ``ready`` and
        ``free`` lose them in place.

        ``ready``: the engine's ``(key, table, version)`` entries, lazily invalidated by
        ``version``; ``free``: its idle tracks (both bags, see the module docstring)."""
        if len(free) == last[1]:
            idle = last[0]
            if last[2]:  # settled, and no track freed since: only the newly queued tables matter
                for i in queued:
                    if reach[i] & idle:
                        break
                else:
                    queued.clear()
                    return []
        else:
            idle = 0
            for r in free:
                idle |= bits[r]
        queued.clear()
        if len(ready) > compact_at:  # re-keyed entries pile up while their tables wait
            ready[:] = [e for e in ready if e[2] == version[e[1]]]
        entries = [e for e in ready if reach[e[1]] & idle and e[2] == version[e[1]]]
        chosen: list[tuple[int, int]] = []
        left = idle
        refused = False
        if len(entries) == 1:  # no later claims: its first idle candidate, if any
            e = entries[0]
            for r, bit, _ in candidates[e[1]]:
                if bit & idle:
                    ready.remove(e)
                    free.remove(r)
                    chosen.append((e[1], r))
                    left = idle & ~bit
                    break
        elif entries:
            entries.sort()
            later: list[int] | None = None
            for pos, e in enumerate(entries):
                i = e[1]
                if not mask[i] & left:
                    continue
                for r, bit, borrowed in candidates[i]:
                    if not bit & left:
                        continue
                    if borrowed and not aggressive:
                        if later is None:  # later[j]: the tracks claimed by the last j entries
                            later = [0, *accumulate([claimed[e[1]] for e in reversed(entries)], or_)]
                        if later[len(entries) - 1 - pos] & bit:
                            refused = True
                            continue
                    chosen.append((i, r))
                    ready.remove(e)
                    free.remove(r)
                    left &= ~bit
                    break
                if not left:
                    break
        last[0] = left
        last[1] = len(free)
        # a table refused for a later claimant that took another track could start next time
        last[2] = not (refused and chosen)
        return chosen

    return decide
