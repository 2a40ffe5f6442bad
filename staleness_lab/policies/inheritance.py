"""Priority inheritance for view hierarchies (Golab et al., Sec. 3.3).

A view fed by a low-priority source cannot become fresh before that source does, so a basic
algorithm should rank a source at least as high as the views that depend on it. Each mode
computes an *inherited* priority ``Ip_i`` once per run, at bind time; the basic algorithm then
uses ``Ip_i`` wherever it would use ``p_i``. The objective never sees it: the staleness metric
always weighs each table by its own workload priority ``p_i``.

With ``Dep*(i)`` = ``i`` together with every table it feeds, directly or transitively:

* ``none``: ``Ip_i = p_i``.
* ``sum`` (the paper's "Sum"): ``Ip_i = sum of p_d over d in Dep*(i)``, each dependent counted
  once even when several paths lead to it.
* ``max`` (the paper's "Max"): ``Ip_i = max of p_d over d in Dep*(i)``.
* ``max-plus`` (the paper's "Max-plus", with factor ``K = plus > 1``). The printed definition
  (K times the maximum over the dependents, the table included) would multiply every ``Max``
  value by the same K and so never change an order; the sentence after it says a large K should
  lift base tables above the views at the end of long chains. We therefore read it recursively,
  one factor K per level of the DAG:
  ``Ip_i = max(p_i, K * max over the direct children c of Ip_c)``,
  i.e. the largest ``K**(length of a path from i to d) * p_d`` over the dependents ``d``.
  The paper gives no K; the default 2 is ours.

On the chain base (0.001) -> view (1) -> top view (100): ``sum`` gives 101.001, 101, 100;
``max`` gives 100, 100, 100; ``max-plus`` with K = 2 gives 400, 200, 100.

EDF-P and Max Benefit use ``Ip_i`` in place of ``p_i``; plain EDF, which has no priority, uses
it to break deadline ties (see :class:`~staleness_lab.policies.baselines.Edf`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from staleness_lab.errors import InputError
from staleness_lab.model import Workload
from staleness_lab.policies.options import Configurable, Option

MODES = ("none", "sum", "max", "max-plus")

#: The two options every basic algorithm (and every scheduler built on one) takes.
INHERITANCE_OPTIONS: tuple[Option, ...] = (
    Option(
        "inheritance", str, "none",
        "priority inheritance for view hierarchies (Golab et al., Sec. 3.3); orders only, the metric keeps p_i",
        choices=MODES,
    ),
    Option("plus", float, 2.0, "the factor K per DAG level; used only by inheritance=max-plus", above=1.0),
)


def inherited_priorities(workload: Workload, mode: str = "none", plus: float = 2.0) -> list[float]:
    """Each table's inherited priority ``Ip_i`` under ``mode`` (see the module docstring)."""
    p = [t.priority for t in workload.tables]
    if mode == "none":
        return p
    children = workload.children
    if mode == "max-plus":
        if not plus > 1.0:
            raise InputError("option plus", f"must be > 1, got {plus!r}")
        out = list(p)
        for i in _sinks_first(workload):
            if children[i]:
                out[i] = max(p[i], plus * max(out[c] for c in children[i]))
        return out
    if mode not in ("sum", "max"):
        raise InputError("option inheritance", f"must be one of {', '.join(MODES)}, got {mode!r}")
    dependents = dependent_sets(workload)
    if mode == "sum":
        return [p[i] + sum(p[d] for d in dependents[i]) for i in range(len(p))]
    return [max([p[i], *(p[d] for d in dependents[i])]) for i in range(len(p))]


def dependent_sets(workload: Workload) -> list[frozenset[int]]:
    """For each table, the positions of every table it feeds, directly or transitively."""
    out: list[set[int]] = [set() for _ in workload.tables]
    for j, ancestors in enumerate(workload.ancestor_sets):
        for a in ancestors:
            out[a].add(j)
    return [frozenset(s) for s in out]


def _sinks_first(workload: Workload) -> list[int]:
    """Table positions ordered so every table comes after all the tables it feeds."""
    children = workload.children
    done = [False] * len(workload.tables)
    order: list[int] = []
    for root in range(len(workload.tables)):
        if done[root]:
            continue
        stack = [(root, 0)]
        while stack:
            node, k = stack[-1]
            if k < len(children[node]):
                stack[-1] = (node, k + 1)
                child = children[node][k]
                if not done[child]:
                    stack.append((child, 0))
            else:
                stack.pop()
                if not done[node]:
                    done[node] = True
                    order.append(node)
    return order


class Inheriting(Configurable):
    """A policy whose order uses (possibly inherited) priorities: takes ``inheritance`` and
    ``plus``.

    ``plus`` is accepted with every mode (so a sweep grid can fix it while varying the mode) and
    used only by ``max-plus``, as its description says.
    """

    OPTIONS: ClassVar[tuple[Option, ...]] = INHERITANCE_OPTIONS

    @property
    def inherits(self) -> bool:
        """Whether the order uses inherited priorities (any mode but ``none``)."""
        return self.options["inheritance"] != "none"

    def inheritance_options(self) -> dict[str, Any]:
        """The inheritance options as given (for a basic algorithm built inside a scheduler)."""
        out: dict[str, Any] = {"inheritance": self.options["inheritance"]}
        if self.options["inheritance"] == "max-plus":
            out["plus"] = self.options["plus"]
        return out

    def scheduling_priorities(self, workload: Workload) -> list[float]:
        """``Ip_i`` per table for this policy's inheritance mode (``p_i`` with ``none``)."""
        return inherited_priorities(workload, self.options["inheritance"], self.options["plus"])
