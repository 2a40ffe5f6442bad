"""The target-lag scheduler: the industry's refresh-to-a-freshness-target rule, from its documentation.

Written from the public documentation of Snowflake's dynamic tables (the pages "Understanding
dynamic table target lag" / "Set the target lag for a dynamic table" and "Troubleshooting skipped
or failed dynamic table refreshes", docs.snowflake.com, user-guide/dynamic-tables-*), and from no
other source: every rule the class docstring lists is quoted there, and nothing else is modelled.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from staleness_lab.errors import InputError
from staleness_lab.model import Workload
from staleness_lab.model.dag import topological_order
from staleness_lab.model.table import DOWNSTREAM
from staleness_lab.policies.base import BoundPolicy
from staleness_lab.policies.options import Configurable, Option
from staleness_lab.policies.registry import register

_INF = math.inf

#: The orders a free track may take due tables in (the documentation leaves it open; see ``first``).
FIRST = ("earliest-due", "most-behind", "tightest-target")


def _by_position(i: int, now: float, release: float, n: float) -> int:
    """The engine's order of the ready list handed to ``place``: file position (the policy sorts
    the tables it starts itself)."""
    return i


@register
class TargetLag(Configurable):
    """Target lag (Snowflake dynamic tables): refresh a table just early enough that its end-to-end
    lag stays under its ``target_lag``, upstream first, one refresh of a table at a time.

    Each rule below is quoted from the documentation and implemented as stated, and no other:

    1. *One refresh of a table in flight.* "If a refresh is still running when the next one would
       normally begin, Snowflake waits for it to complete rather than starting a concurrent refresh
       of the same table." The engine runs at most one job per table; a table whose refresh runs is
       not ready, so its next refresh starts at the earliest when the running one completes.
    2. *Dependency order, one snapshot.* "Snowflake coordinates their refreshes so that each table
       processes data in dependency order (upstream tables first)" and "every downstream table
       reads a single, coherent point-in-time view of its inputs". A table's refresh *cycle* opens
       when it is due (rule 3) and fixes, for the table and each of its ancestors, the data it needs:
       what each has available at that instant. An ancestor that lacks it is refreshed first; the
       table starts only when every source holds what the cycle needs, and then loads its sources'
       committed snapshot (its trailing edge).
    3. *Start early enough.* "Snowflake schedules refreshes to keep the actual lag of your dynamic
       tables below their target lag", "Snowflake schedules refreshes slightly earlier to allow time
       for the refresh to complete", and "When choosing a target lag, consider the time needed to
       refresh each dynamic table in a chain to the root." A table with a numeric target T and new
       data is due at the instant its lag plus the expected duration D of its refresh chain reaches
       T: lag + D >= T, with D = E(n) (nominal cost alpha + beta * n of the data it would load) plus
       the longest D among its sources (0 for a source with nothing to load; the expected rest of a
       running refresh). Before that it is not refreshed: "Target lag is a staleness target, not a
       refresh interval." The policy asks the engine for a timer at the instant it becomes due.
    4. *Behind target: as soon as a track frees.* "Data in dynamic tables is refreshed as closely as
       possible within the target lag." A due table (one behind its target is always due) starts at
       the first decision with a free track where rule 2 lets it; the engine consults the policy at
       every completion, the instant a track frees.
    5. *Skipped refreshes.* A refresh is skipped "If the dynamic table being refreshed has another
       dynamic table upstream, and the refresh for the upstream failed or was skipped" and "If a
       previous refresh for the dynamic table is still running." A table whose cycle needs data from
       a source that has not loaded it yet (its refresh skipped or still running) does not start at
       this decision; it is considered again at the next one.
    6. *Downstream.* ``target_lag: downstream`` means "the dynamic table should refresh on demand
       when other dependent dynamic tables refresh"; "If my_dynamic_table doesn't have any dynamic
       tables that depend on it, then it won't refresh." Such a table opens no cycle of its own: it
       is refreshed when a dependent's cycle needs it (the model resolves its number, which the
       metrics measure it against).

    Choices the documentation leaves open, stated here:

    * Which due table a free track takes first: the option ``first`` (``earliest-due``, the
      default: the earliest instant lag + D reached T, the most overdue first; ``most-behind``:
      the largest lag / T; ``tightest-target``: the smallest T). An ancestor refreshed for a
      dependent's cycle takes the most urgent key among the cycles that need it. Ties go to the
      table's position in the file.
    * A table without a target refreshes like a ``downstream`` one: only when a dependent's cycle
      needs its data, and never when no table that reads it (transitively) has a target.
    * The expected duration is the nominal cost E(n): cost noise and slowdowns are not known to
      the scheduler in advance.

    Documented behaviour not modelled, because the documentation does not state a rule for it:
    skipping "to reduce the rate of future skips" (a heuristic), failed refreshes, manual
    refreshes, suspension. A workload with no target at all is refused: nothing would be refreshed.
    """

    name = "target-lag"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option("first", str, "earliest-due", "which due table a free track takes first (the documentation leaves "
               "it open): the earliest due instant, the largest lag/target, or the smallest target", choices=FIRST),
    )

    def bind(self, workload: Workload, rng: np.random.Generator) -> BoundPolicy:
        targets = workload.target_lags
        if all(t is None for t in targets):
            raise InputError("tables[*].target_lag", f"policy {self.name!r} refreshes tables to their freshness "
                             "targets: give at least one table a target_lag (a number or downstream)")
        return BoundPolicy(key=_by_position, place=_TargetLagRun(workload, self.options["first"]).place)


class _TargetLagRun:
    """One run's state of :class:`TargetLag`: what each table's open cycle needs, and the expected
    end of each refresh this policy started."""

    def __init__(self, workload: Workload, first: str) -> None:
        tables = workload.tables
        n = len(tables)
        self.n = n
        self.first = first
        self.alpha = [t.alpha for t in tables]
        self.beta = [t.beta for t in tables]
        self.sources = [tuple(workload.index[s] for s in (t.sources or ())) for t in tables]
        self.children = workload.children
        self.ancestors = [sorted(a) for a in workload.ancestor_sets]
        self.order = [workload.index[name] for name in topological_order([t.name for t in tables], workload.source_map)]
        self.target = [_INF if t is None else t for t in workload.target_lags]
        # tables that open cycles of their own: a numeric target of their own (rule 6)
        self.opener = [t.target_lag is not None and t.target_lag != DOWNSTREAM for t in tables]
        self.need = [-_INF] * n  # the freshness the open cycles need of each table
        self.expected_end = [0.0] * n
        self.reach = [0.0] * n
        self.chain = [0.0] * n
        self.asked: set[float] = set()

    def place(self, ready: list[int], free: list[int], now: float, view: Any) -> list[tuple[int, int]]:
        """Open the cycles that are due, then start the needed, unblocked ready tables in the
        ``first`` order on the free tracks; ask for a timer at the next instant a cycle falls due."""
        fresh, _, _ = view.state()
        self._estimate(now, view)
        wake = self._open_due(now, fresh)
        if now < wake < _INF and wake not in self.asked:
            if len(self.asked) > 64:
                self.asked = {t for t in self.asked if t > now}
            self.asked.add(wake)
            view.wake_at(wake)
        need = self.need
        startable = [i for i in ready
                     if need[i] > fresh[i] and all(need[s] <= fresh[s] for s in self.sources[i])]
        if not startable:
            return []
        urgency = self._urgency(now, fresh)
        startable.sort(key=lambda i: (urgency[i], i))
        chosen = list(zip(startable, free))
        for i, _ in chosen:
            self.expected_end[i] = now + self.alpha[i] + self.beta[i] * view.pending(i)
        return chosen

    def _estimate(self, now: float, view: Any) -> None:
        """Per table, in dependency order: ``reach`` (its freshness once it and its ancestors load
        all that is available now) and ``chain`` (the expected duration D of rule 3)."""
        fresh, avail, running = view.state()
        reach, chain = self.reach, self.chain
        for i in self.order:
            srcs = self.sources[i]
            r = min(reach[s] for s in srcs) if srcs else avail[i]
            reach[i] = r
            if running[i]:
                own = max(0.0, self.expected_end[i] - now)
            elif r > fresh[i]:
                own = self.alpha[i] + self.beta[i] * (r - fresh[i])
            else:
                own = 0.0
            chain[i] = own + (max(chain[s] for s in srcs) if srcs else 0.0)

    def _open_due(self, now: float, fresh: Any) -> float:
        """Open the cycle of every opener that is due (rule 3) and has none open; return the
        earliest instant a not-yet-due opener falls due (inf if none)."""
        need, reach, target = self.need, self.reach, self.target
        wake = _INF
        for i in range(self.n):
            if not self.opener[i] or need[i] > fresh[i] or reach[i] <= fresh[i]:
                continue
            due = fresh[i] + target[i] - self.chain[i]
            if now < due:
                wake = min(wake, due)
                continue
            need[i] = reach[i]
            for a in self.ancestors[i]:
                if reach[a] > need[a]:
                    need[a] = reach[a]
        return wake

    def _urgency(self, now: float, fresh: Any) -> list[float]:
        """Per table, the ``first`` key of the most urgent open cycle needing it (its own or a
        dependent's): computed from the dependents down."""
        need, target = self.need, self.target
        urgency = [_INF] * self.n
        for i in reversed(self.order):
            key = _INF
            if self.opener[i] and need[i] > fresh[i]:
                if self.first == "earliest-due":
                    key = fresh[i] + target[i] - self.chain[i]
                elif self.first == "most-behind":
                    key = -(now - fresh[i]) / target[i]
                else:
                    key = target[i]
            for c in self.children[i]:
                if urgency[c] < key:
                    key = urgency[c]
            urgency[i] = key
        return urgency
