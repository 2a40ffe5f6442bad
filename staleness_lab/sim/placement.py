"""A placement rule run by the Python engine itself (the partitioners' dispatch as data).

A policy that gives its placement as a :class:`~staleness_lab.policies.base.PlacementRule`
besides its ``place`` function (EDF-Partitioned and Proportional, Golab et al., Sec. 3.2.2-3.2.3)
is decided here, with the result ``engine._Run._placed`` would get from ``place``:

* **Skip check.** Each table's candidate tracks are a bitmask. When no valid ready entry's mask
  meets the idle tracks' mask, the rule cannot place anything, so the decision is skipped
  without sorting the ready set or touching it (its stale entries stay; they are skipped on
  pop as everywhere, and dropped once they outnumber the tables twice over). On the partitioners, ready tables mostly wait for their busy home track
  while another track idles, so most decisions end here.
* **The walk** is the rule's (module docstring of :mod:`staleness_lab.policies.partitioned`):
  the valid ready entries in key order, per table its first idle candidate, a borrowed one
  refused (unless aggressive) while a table later in the order claims it. The entries not
  chosen, kept in key order, already form a heap; the idle tracks not taken go back ascending.

``place`` stays the reference: ``tests/sim/test_placement.py`` compares the two paths' traces
bit for bit on every partitioner variant.
"""

from __future__ import annotations

from staleness_lab.policies.base import PlacementRule
from staleness_lab.policies.partitioned import LaterTables


class RuleDispatch:
    """One run's placement rule, prepared as bitmasks (see the module docstring)."""

    def __init__(self, rule: PlacementRule, n_tracks: int) -> None:
        self.aggressive = rule.aggressive
        self.mask = [sum(1 << r for r in set(c)) for c in rule.candidates]
        # per table: (track, its bit, borrowed) in preference order
        self.candidates = [tuple((r, 1 << r, b) for r, b in zip(c, bs)) for c, bs in zip(rule.candidates, rule.borrowed)]
        self.claims = rule.claims
        self.n_tracks = n_tracks
        self.bits = [1 << r for r in range(n_tracks)]
        self.compact_at = 2 * len(rule.candidates) + 16

    def decide(self, ready: list[tuple], free: list[int], version: list[int]) -> list[tuple[int, int]]:
        """The (table, track) pairs to start now; ``ready`` and ``free`` lose them in place.

        ``ready``: the engine's heap of ``(key, table, version)`` entries, lazily invalidated by
        ``version``; ``free``: its heap of idle tracks."""
        bits = self.bits
        idle = 0
        for r in free:
            idle |= bits[r]
        mask = self.mask
        for e in ready:
            if mask[e[1]] & idle and e[2] == version[e[1]]:
                break
        else:  # nothing ready can run on an idle track
            if len(ready) > self.compact_at:  # re-keyed entries pile up while decisions are skipped
                ready[:] = sorted(e for e in ready if e[2] == version[e[1]])
            return []
        if len(ready) == 1:  # one table (valid: it passed the check), no later claims: its first idle candidate
            for r, bit, _ in self.candidates[e[1]]:
                if bit & idle:
                    ready.clear()
                    free[:] = [x for x in sorted(free) if x != r]
                    return [(e[1], r)]
        entries = [e for e in ready if e[2] == version[e[1]]]
        entries.sort()
        later: LaterTables | None = None  # per track: claims of the entries after a position
        chosen: list[tuple[int, int]] = []
        left = idle
        for pos, e in enumerate(entries):
            i = e[1]
            if not mask[i] & left:
                continue
            for r, bit, borrowed in self.candidates[i]:
                if not bit & left:
                    continue
                if borrowed and not self.aggressive:
                    if later is None:
                        later = LaterTables([e[1] for e in entries], self.claims, self.n_tracks)
                    if later.after(pos)[r]:
                        continue
                chosen.append((i, r))
                left &= ~bit
                break
            if not left:
                break
        if chosen:
            if len(chosen) == 1:
                i = chosen[0][0]
                ready[:] = [e for e in entries if e[1] != i]
            else:
                taken = {i for i, _ in chosen}
                ready[:] = [e for e in entries if e[1] not in taken]
            free[:] = [r for r in sorted(free) if left & bits[r]]
        return chosen
