"""Temporal provenance, consistency, order and the relaxed apply rule (Olston §2.2-§2.4).

A snapshot of a derived channel reflects, for each input->channel path ``i`` of its layout,
a *set* of snapshot times of that path's input channel: ``T = <T[0], ..., T[n-1]>``, here a
tuple of frozensets of times in hours (digest §1 [P]; paths indexed from 0 as the paper's
constraint examples do [D]). An input snapshot ``t`` is valid on ``[t, end(t))``.

Notation (digest §0 [R], the only reading that reproduces Table 4):

* ``end(t)``: the next arrival after ``t`` on the element's own input channel if it is at most
  ``now``, else ``now`` (:class:`Validity`);
* ``hi(T[i]) = max T[i]``, ``lo(T[i]) = min over t in T[i] of end(t)``; an empty element (the
  other side of an asynchronous union) has ``hi = -inf``, ``lo = +inf``;
* ``hi(T) = max_i hi(T[i])``, ``lo(T) = min_i lo(T[i])``.

``consistent(T)`` iff ``hi(T) < lo(T)`` (an instant where the latest of every reflected input
held together), ``inconsistency(T) = hi(T) - lo(T)`` [D]. The order of footnote 4 compares
``hi`` element-wise and does not depend on time (digest A1).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence

#: One element of a provenance: the snapshot times of one path's input channel.
Element = frozenset[float]
#: A temporal provenance: one element per path of the channel's layout.
Provenance = tuple[Element, ...]
#: A channel's layout: (input channel, path id) per element (digest §1 [D]).
Layout = tuple[tuple[str, int], ...]

EMPTY: Element = frozenset()


def prov(*elements: float | Iterable[float]) -> Provenance:
    """A provenance from numbers (singletons) or iterables of times: ``prov(32, [25, 49])``."""
    return tuple(frozenset((e,)) if isinstance(e, (int, float)) else frozenset(e) for e in elements)


def fmt(p: Provenance) -> str:
    """``<32,{25,49}>`` as the paper writes it (singletons without braces)."""
    def one(e: Element) -> str:
        times = [f"{t:g}" for t in sorted(e)]
        return times[0] if len(times) == 1 else "{" + ",".join(times) + "}"
    return "<" + ",".join(one(e) for e in p) + ">"


class Validity:
    """``end(t)`` of every input channel's snapshots at one instant ``now`` (digest §0)."""

    __slots__ = ("arrivals", "now")

    def __init__(self, arrivals: Mapping[str, Sequence[float]], now: float) -> None:
        self.arrivals = {name: sorted(times) for name, times in arrivals.items()}
        self.now = now

    def end(self, channel: str, t: float) -> float:
        """End of snapshot ``t``'s validity on ``channel``: its next arrival, or ``now``."""
        times = self.arrivals[channel]
        k = bisect_right(times, t)
        return times[k] if k < len(times) and times[k] <= self.now else self.now

    def lo_element(self, channel: str, element: Element) -> float:
        """``lo(T[i])``: the earliest end of validity among the element's snapshots."""
        return min((self.end(channel, t) for t in element), default=math.inf)

    def lo(self, p: Provenance, layout: Layout) -> float:
        """``lo(T) = min_i lo(T[i])``."""
        return min((self.lo_element(layout[i][0], e) for i, e in enumerate(p)), default=math.inf)


def hi_element(element: Element) -> float:
    """``hi(T[i]) = max T[i]`` (``-inf`` when empty)."""
    return max(element, default=-math.inf)


def hi(p: Provenance) -> float:
    """``hi(T) = max_i hi(T[i])``."""
    return max((hi_element(e) for e in p), default=-math.inf)


def inconsistency(p: Provenance, layout: Layout, validity: Validity) -> float:
    """``hi(T) - lo(T)`` [D]: negative when consistent (E1: <32,{25}> gives -17 at now 90)."""
    return hi(p) - validity.lo(p, layout)


def consistent(p: Provenance, layout: Layout, validity: Validity) -> bool:
    """``hi(T) < lo(T)`` (§2.3 [P], digest §1)."""
    return hi(p) < validity.lo(p, layout)


def precedes(a: Provenance, b: Provenance) -> bool:
    """``a < b`` of footnote 4: every ``hi(a[i]) <= hi(b[i])`` and one strictly."""
    strictly = False
    for x, y in zip(a, b, strict=True):
        hx, hy = hi_element(x), hi_element(y)
        if hx > hy:
            return False
        strictly = strictly or hx < hy
    return strictly


def precedes_or_equal(a: Provenance, b: Provenance) -> bool:
    """``a <= b``: ``a < b`` or every element's ``hi`` equal."""
    return all(hi_element(x) <= hi_element(y) for x, y in zip(a, b, strict=True))


def applicable(base: Provenance, frm: Provenance, to: Provenance) -> bool:
    """The relaxed apply rule (§2.4 [P]): ``B(T1) + delta(T2 > T3)`` is legal iff for every
    element ``T1[i] = T2[i]`` or ``T2[i] = T3[i]`` (the delta leaves that element alone)."""
    return all(b == f or f == t for b, f, t in zip(base, frm, to, strict=True))


def apply(base: Provenance, frm: Provenance, to: Provenance) -> Provenance:
    """The provenance after a relaxed apply: ``T4[i] = (T1[i] - T2[i]) | T3[i]``; the exact case
    ``T1 = T2`` gives ``T3``. The caller checks :func:`applicable` first."""
    return tuple((b - f) | t for b, f, t in zip(base, frm, to, strict=True))


def concat(*parts: Provenance) -> Provenance:
    """``T1 (+) T2``: a k-input operator's output provenance concatenates its inputs'."""
    return tuple(e for p in parts for e in p)
