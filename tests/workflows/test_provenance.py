"""Olston's provenance algebra against the paper's worked examples (digest §4, checks 1, 3-5)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.workflows.provenance import (
    Validity,
    applicable,
    apply,
    concat,
    consistent,
    fmt,
    hi,
    inconsistency,
    precedes,
    precedes_or_equal,
    prov,
)

CRAWL = [15, 32, 59, 65, 86]
CLICKS = [0, 25, 49, 73]
LAYOUT = (("digests", 0), ("scores", 0))


def validity(now: float = 90) -> Validity:
    return Validity({"digests": CRAWL, "scores": CLICKS}, now)


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        (prov(32, 25), (32, 49, True, -17)),
        (prov(32, 49), (49, 59, True, -10)),
        (prov(59, 25), (59, 49, False, 10)),
        (prov(86, [25, 49, 73]), (86, 49, False, 37)),
    ],
    ids=lambda v: fmt(v) if isinstance(v[0], frozenset) else "",
)
def test_e1_table4(p, expected) -> None:
    """Check 1: hi, lo, the consistency verdict and the inconsistency of Table 4."""
    v = validity()
    assert (hi(p), v.lo(p, LAYOUT), consistent(p, LAYOUT, v), inconsistency(p, LAYOUT, v)) == expected


def test_e3_async_join_accumulates_provenance() -> None:
    """Table 3: each asynchronous delta applies relaxed to the accumulated base; the
    inconsistency column follows."""
    v = validity()
    head = prov(15, 25)
    steps = [
        ((prov(15, 25), prov(32, 25)), prov(32, 25), -17),
        ((prov(32, 49), prov(59, 49)), prov(59, [25, 49]), 10),
        ((prov(59, 49), prov(65, 49)), prov(65, [25, 49]), 16),
        ((prov(65, 73), prov(86, 73)), prov(86, [25, 49, 73]), 37),
    ]
    for (frm, to), after, incons in steps:
        assert applicable(head, frm, to)
        head = apply(head, frm, to)
        assert head == after
        assert inconsistency(head, LAYOUT, v) == incons


def test_e2_sync_provenances_are_exact_applies() -> None:
    """Table 2: the synchronous deltas abut, so applying them is the exact case T1 = T2."""
    head = prov(15, 25)
    for frm, to in [(prov(15, 25), prov(32, 25)), (prov(32, 25), prov(59, 49)),
                    (prov(59, 49), prov(65, 49)), (prov(65, 49), prov(86, 73))]:
        assert applicable(head, frm, to) and frm == head
        head = apply(head, frm, to)
        assert head == to
    assert consistent(head, LAYOUT, validity())


def test_check3_relaxed_apply_rejects_a_delta_that_moves_a_touched_element() -> None:
    assert not applicable(prov(65, [25, 49]), prov(65, 49), prov(86, 73))


def test_e5_async_union() -> None:
    """Two crawls arriving hourly; B(<{9},{9}>) + delta(<{},{9}> > <{},{10}>) = B(<{9},{10}>),
    hi = lo = 10: inconsistent with inconsistency 0, within a 1 h bound; consistent when crawl 1
    has no arrival at 10."""
    empty: frozenset[float] = frozenset()
    base, frm, to = prov(9, 9), (empty, frozenset({9.0})), (empty, frozenset({10.0}))
    assert applicable(base, frm, to)
    after = apply(base, frm, to)
    assert after == prov(9, 10)
    layout = (("crawl1", 0), ("crawl2", 0))
    hourly = Validity({"crawl1": range(0, 12), "crawl2": range(0, 12)}, now=10.5)
    assert (hi(after), hourly.lo(after, layout)) == (10, 10)
    assert not consistent(after, layout, hourly)
    assert inconsistency(after, layout, hourly) == 0
    assert hi(after) < hourly.lo(after, layout) + 1  # bound_inconsistency(1h) holds
    gap = Validity({"crawl1": [0, 9, 11], "crawl2": range(0, 12)}, now=10.5)
    assert consistent(after, layout, gap)


def test_e4_staleness_reads_lo_of_the_element() -> None:
    """bound_staleness(C, i, t) keeps lo(T[i]) + t >= now."""
    v = validity()
    p = prov(86, [25, 49, 73])
    assert v.lo_element("scores", p[1]) + 24 == 73 < 90  # violated (holds on the newest element)
    assert max(p[1]) + 24 >= 90
    clicks = Validity({"scores": CLICKS}, now=72)
    assert clicks.lo_element("scores", frozenset({25.0})) + 24 >= 72
    clicks = Validity({"scores": CLICKS}, now=74)
    assert clicks.lo_element("scores", frozenset({25.0})) + 24 < 74


def test_e7_order() -> None:
    assert precedes(prov(32, 25), prov(59, [25, 49]))
    a, b = prov(59, 25), prov(32, 49)
    assert not precedes(a, b) and not precedes(b, a)
    assert not precedes_or_equal(a, b) and not precedes_or_equal(b, a)
    assert precedes_or_equal(prov(59, [25, 49]), prov(59, 49)) and not precedes(prov(59, [25, 49]), prov(59, 49))


def test_empty_element_and_concat() -> None:
    empty: frozenset[float] = frozenset()
    p = concat(prov(3), (empty,))
    assert p == (frozenset({3.0}), empty)
    v = Validity({"a": [3], "b": []}, now=5)
    assert hi(p) == 3 and v.lo(p, (("a", 0), ("b", 0))) == 5
    assert Validity({"b": []}, now=5).lo((empty,), (("b", 0),)) == math.inf


times = st.frozensets(st.integers(0, 20).map(float), min_size=1, max_size=3)
provs = st.integers(1, 4).flatmap(lambda n: st.tuples(*[times] * n))


@settings(max_examples=300, deadline=None)
@given(provs, provs, provs)
def test_order_is_a_strict_partial_order(a, b, c) -> None:
    n = min(len(a), len(b), len(c))
    a, b, c = a[:n], b[:n], c[:n]
    assert not precedes(a, a)
    assert not (precedes(a, b) and precedes(b, a))
    if precedes(a, b) and precedes(b, c):
        assert precedes(a, c)
    assert precedes(a, b) <= precedes_or_equal(a, b)


@settings(max_examples=300, deadline=None)
@given(provs, provs)
def test_exact_apply_gives_the_target(a, b) -> None:
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    assert applicable(a, a, b) and apply(a, a, b) == b
