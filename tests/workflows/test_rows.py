"""Row-level block algebra against the paper's tables (digest §4 E2, E3, E6) and the converter
round trips as properties on random bags (digest §7 check 4, plus the incremental-view
maintenance identity of the sync incremental join)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.workflows.pandas_rows import PANDAS
from staleness_lab.workflows.rows import (
    SIGN,
    apply_delta,
    bag_difference,
    bag_equal,
    chain,
    delta_between,
    map_rows,
    signed,
    union,
)
from staleness_lab.workflows.weak import (
    apply_increment,
    chain_increments,
    chain_upserts,
    count,
    count_delta,
    delta_to_increment,
    delta_to_upsert,
    distinct,
    records_to_upsert,
)

# The operators composed of primitives, written once for pandas and Spark (workflows/algebra.py).
join, join_delta_base, sync_incremental_join = PANDAS.join, PANDAS.join_delta_base, PANDAS.sync_incremental_join
apply_upsert, upsert_to_delta = PANDAS.apply_upsert, PANDAS.upsert_to_delta
increment_to_delta, distinct_delta = PANDAS.increment_to_delta, PANDAS.distinct_delta

SETTINGS = settings(max_examples=100, deadline=None)

DIGEST = ["url", "digest", "site"]
SCORE = ["site", "score"]
OUT = ["url", "digest", "site", "score"]


def frame(columns: list[str], *rows: tuple) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=columns)


def delta(columns: list[str], *rows: tuple) -> pd.DataFrame:
    """Literal signed rows: the last element of each tuple is the sign."""
    return pd.DataFrame(list(rows), columns=columns + [SIGN])


def assert_bag(actual: pd.DataFrame, expected: pd.DataFrame) -> None:
    difference = bag_difference(actual, expected)
    assert difference is None, difference


# ---------------------------------------------------------------- Table 1 inputs (digest §4)

X, Y, R = ("a.com/x", "d1", "a.com"), ("a.com/y", "d2", "a.com"), ("b.com/r", "d3", "b.com")
Z, S = ("a.com/z", "d4", "a.com"), ("b.com/s", "d5", "b.com")
#: Crawl arrivals (digests channel deltas) by hour.
ARRIVALS = {15: [], 32: [X], 59: [Y], 65: [R], 86: [Z, S]}
#: Click-score snapshots by hour.
CLICKS = {0: {}, 25: {"a.com": 18}, 49: {"a.com": 21, "b.com": 7},
          73: {"a.com": 22, "b.com": 14}}


def crawl_delta(t: int) -> pd.DataFrame:
    return signed(frame(DIGEST, *ARRIVALS[t]), 1)


def digests(t: int) -> pd.DataFrame:
    return frame(DIGEST, *[row for s, rows in ARRIVALS.items() if s <= t for row in rows])


def clicks(t: int) -> pd.DataFrame:
    return frame(SCORE, *CLICKS[t].items())


# ---------------------------------------------------------------- E2: sync incremental join

#: (crawl from, crawl to, clicks from, clicks to, expected Δ): Table 2, provenance ⟨crawl, click⟩.
E2_STEPS = [
    (15, 32, 25, 25, delta(OUT, ("a.com/x", "d1", "a.com", 18, 1))),
    (32, 59, 25, 49, delta(OUT, ("a.com/x", "d1", "a.com", 18, -1),
                           ("a.com/x", "d1", "a.com", 21, 1),
                           ("a.com/y", "d2", "a.com", 21, 1))),
    (59, 65, 49, 49, delta(OUT, ("b.com/r", "d3", "b.com", 7, 1))),
    (65, 86, 49, 73, delta(OUT, ("a.com/x", "d1", "a.com", 21, -1),
                           ("a.com/x", "d1", "a.com", 22, 1),
                           ("a.com/y", "d2", "a.com", 21, -1),
                           ("a.com/y", "d2", "a.com", 22, 1),
                           ("b.com/r", "d3", "b.com", 7, -1),
                           ("b.com/r", "d3", "b.com", 14, 1),
                           ("a.com/z", "d4", "a.com", 22, 1),
                           ("b.com/s", "d5", "b.com", 14, 1))),
]

E2_FINAL = frame(OUT, ("a.com/x", "d1", "a.com", 22), ("a.com/y", "d2", "a.com", 22),
                 ("b.com/r", "d3", "b.com", 14), ("a.com/z", "d4", "a.com", 22),
                 ("b.com/s", "d5", "b.com", 14))


def test_e2_sync_incremental_join_table_2() -> None:
    output = frame(OUT)  # B(<15,25>) is empty
    for crawl_from, crawl_to, click_from, click_to, expected in E2_STEPS:
        click_delta = delta_between(clicks(click_from), clicks(click_to))
        out = sync_incremental_join(digests(crawl_from), crawl_delta(crawl_to),
                                    clicks(click_from), click_delta, on="site")
        assert list(out.columns) == OUT + [SIGN]
        assert_bag(out, expected)
        output = apply_delta(output, out)
        assert_bag(output, join(digests(crawl_to), clicks(click_to), "site"))
    assert_bag(output, E2_FINAL)


def test_e2_click_deltas_are_table_1() -> None:
    assert_bag(delta_between(clicks(25), clicks(49)),
               delta(SCORE, ("a.com", 18, -1), ("a.com", 21, 1), ("b.com", 7, 1)))
    assert_bag(delta_between(clicks(49), clicks(73)),
               delta(SCORE, ("a.com", 21, -1), ("a.com", 22, 1),
                     ("b.com", 7, -1), ("b.com", 14, 1)))


def test_e2_sync_join_with_one_side_absent() -> None:
    only_clicks = sync_incremental_join(digests(65), None, clicks(49),
                                        delta_between(clicks(49), clicks(73)), on="site")
    assert_bag(only_clicks, delta(OUT, ("a.com/x", "d1", "a.com", 21, -1),
                                  ("a.com/x", "d1", "a.com", 22, 1),
                                  ("a.com/y", "d2", "a.com", 21, -1),
                                  ("a.com/y", "d2", "a.com", 22, 1),
                                  ("b.com/r", "d3", "b.com", 7, -1),
                                  ("b.com/r", "d3", "b.com", 14, 1)))
    only_crawl = sync_incremental_join(digests(59), crawl_delta(65), clicks(49), None, on="site")
    assert_bag(only_crawl, delta(OUT, ("b.com/r", "d3", "b.com", 7, 1)))
    with pytest.raises(ValueError, match="both"):
        sync_incremental_join(digests(59), None, clicks(49), None, on="site")


# ---------------------------------------------------------------- E3: async join

#: (crawl arrival, click snapshot joined, expected Δ, expected accumulated base): Table 3.
E3_STEPS = [
    (32, 25, delta(OUT, ("a.com/x", "d1", "a.com", 18, 1)),
     frame(OUT, ("a.com/x", "d1", "a.com", 18))),
    (59, 49, delta(OUT, ("a.com/y", "d2", "a.com", 21, 1)),
     frame(OUT, ("a.com/x", "d1", "a.com", 18), ("a.com/y", "d2", "a.com", 21))),
    (65, 49, delta(OUT, ("b.com/r", "d3", "b.com", 7, 1)),
     frame(OUT, ("a.com/x", "d1", "a.com", 18), ("a.com/y", "d2", "a.com", 21),
           ("b.com/r", "d3", "b.com", 7))),
    (86, 73, delta(OUT, ("a.com/z", "d4", "a.com", 22, 1), ("b.com/s", "d5", "b.com", 14, 1)),
     frame(OUT, ("a.com/x", "d1", "a.com", 18), ("a.com/y", "d2", "a.com", 21),
           ("b.com/r", "d3", "b.com", 7), ("a.com/z", "d4", "a.com", 22),
           ("b.com/s", "d5", "b.com", 14))),
]


def test_e3_async_join_table_3() -> None:
    output = frame(OUT)
    for crawl_t, click_t, expected, accumulated in E3_STEPS:
        out = join_delta_base(crawl_delta(crawl_t), clicks(click_t), "site", side="left")
        assert list(out.columns) == OUT + [SIGN]
        assert_bag(out, expected)
        output = apply_delta(output, out)
        assert_bag(output, accumulated)
    assert not bag_equal(output, E2_FINAL)  # the old scores 18, 21, 7 stay


def test_async_right_join_keeps_left_then_right_columns() -> None:
    out = join_delta_base(delta_between(clicks(25), clicks(49)), digests(59), "site",
                          side="right")
    assert list(out.columns) == OUT + [SIGN]
    assert_bag(out, delta(OUT, ("a.com/x", "d1", "a.com", 18, -1),
                          ("a.com/x", "d1", "a.com", 21, 1),
                          ("a.com/y", "d2", "a.com", 18, -1),
                          ("a.com/y", "d2", "a.com", 21, 1)))


# ---------------------------------------------------------------- E6: weak deltas

COUNTS = ["site", "n"]
E6_BASE = frame(COUNTS, ("cnn", 28), ("yahoo", 43), ("harvard", 36))
E6_INC = frame(["site", "_inc"], ("cnn", 5), ("yahoo", -2))


def test_e6_increment_apply() -> None:
    assert_bag(apply_increment(E6_BASE, E6_INC, "site"),
               frame(COUNTS, ("cnn", 33), ("yahoo", 41), ("harvard", 36)))


def test_e6_increment_to_delta() -> None:
    out = increment_to_delta(E6_BASE, E6_INC, "site")
    assert_bag(out, delta(COUNTS, ("cnn", 28, -1), ("cnn", 33, 1),
                          ("yahoo", 43, -1), ("yahoo", 41, 1)))
    assert_bag(delta_to_increment(out, "site", count="n"), E6_INC)


def test_e6_increment_retires_and_creates() -> None:
    inc = frame(["site", "_inc"], ("yahoo", -43), ("bbc", 4))
    assert_bag(apply_increment(E6_BASE, inc, "site"),
               frame(COUNTS, ("cnn", 28), ("harvard", 36), ("bbc", 4)))
    assert_bag(increment_to_delta(E6_BASE, inc, "site"),
               delta(COUNTS, ("yahoo", 43, -1), ("bbc", 4, 1)))
    with pytest.raises(ValueError, match="negative"):
        apply_increment(E6_BASE, frame(["site", "_inc"], ("cnn", -29)), "site")


def test_e6_upsert() -> None:
    base = frame(["u", "p"], ("u1", "p1"), ("u2", "p2"), ("u3", "p3"))
    ups = frame(["u", "p", "_seq", "_tomb"], ("u1", "p1'", 1, False), ("u2", "p2", 1, True))
    assert_bag(apply_upsert(base, ups, "u"), frame(["u", "p"], ("u1", "p1'"), ("u3", "p3")))
    assert_bag(upsert_to_delta(base, ups, "u"),
               delta(["u", "p"], ("u1", "p1", -1), ("u1", "p1'", 1), ("u2", "p2", -1)))


def test_delta_to_upsert_of_e6() -> None:
    d = delta(["u", "p"], ("u1", "p1", -1), ("u1", "p1'", 1), ("u2", "p2", -1))
    assert_bag(delta_to_upsert(d, "u", seq=4),
               frame(["u", "p", "_tomb", "_seq"], ("u1", "p1'", False, 4), ("u2", "p2", True, 4)))
    with pytest.raises(ValueError, match="u1"):
        delta_to_upsert(delta(["u", "p"], ("u1", "a", 1), ("u1", "b", 1)), "u")


def test_upsert_newer_seq_wins_and_ties_raise() -> None:
    first = frame(["u", "p", "_seq", "_tomb"], ("u1", "new", 7, False), ("u2", "a", 1, False))
    second = frame(["u", "p", "_seq", "_tomb"], ("u1", "old", 3, False), ("u2", "b", 2, True))
    assert_bag(chain_upserts([first, second], "u"),
               frame(["u", "p", "_seq", "_tomb"], ("u1", "new", 7, False), ("u2", "b", 2, True)))
    with pytest.raises(ValueError, match="repeated"):
        chain_upserts([first, first], "u")



def test_an_upsert_replaces_a_keys_whole_record_set() -> None:
    """A key's record may be several rows (CrawlSelection's links: a source's link set): the
    newest ``_seq`` replaces every row of the key, through chains and both converters."""
    base = frame(["source", "target"], ("a", "x"), ("a", "y"), ("b", "x"))
    first = records_to_upsert(signed(frame(["source", "target"], ("a", "z"), ("a", "w")), 1), 10)
    second = records_to_upsert(frame(["source", "target"], ("a", "x"), ("c", "y")), 20)
    chained = chain_upserts([first, second], "source")
    assert_bag(chained, frame(["source", "target", "_tomb", "_seq"], ("a", "x", False, 20), ("c", "y", False, 20)))
    after = frame(["source", "target"], ("a", "x"), ("b", "x"), ("c", "y"))
    assert_bag(apply_upsert(base, chained, "source"), after)
    assert_bag(apply_upsert(apply_upsert(base, first, "source"), second, "source"), after)
    assert_bag(apply_delta(base, upsert_to_delta(base, chained, "source")), after)
    with pytest.raises(ValueError, match="repeated"):
        chain_upserts([first, records_to_upsert(frame(["source", "target"], ("a", "q")), 10)], "source")
    with pytest.raises(ValueError, match="deletions"):
        records_to_upsert(signed(frame(["source", "target"], ("a", "x")), -1), 30)

# ---------------------------------------------------------------- chains, errors, comparison

def test_chain_cancel_versus_keep() -> None:
    """Correction 5: row counts of a chain with and without cancelling ±r pairs."""
    steps = [delta_between(clicks(a), clicks(b)) for a, b in [(0, 25), (25, 49), (49, 73)]]
    kept = chain(steps, cancel=False)
    assert len(kept) == 1 + 3 + 4
    assert_bag(chain(steps), delta(SCORE, ("a.com", 22, 1), ("b.com", 14, 1)))
    assert_bag(chain([kept]), chain(steps))


def test_strict_apply_names_the_absent_row() -> None:
    gone = delta(OUT, ("a.com/q", "d9", "a.com", 5, -1))
    with pytest.raises(ValueError, match="a.com/q"):
        apply_delta(E2_FINAL, gone)
    assert_bag(apply_delta(E2_FINAL, gone, strict=False), E2_FINAL)


def test_malformed_inputs_raise() -> None:
    with pytest.raises(ValueError, match="sign"):
        signed(clicks(25), 2)
    with pytest.raises(ValueError, match="columns"):
        apply_delta(clicks(25), crawl_delta(32))
    with pytest.raises(ValueError, match="score"):
        join(clicks(25), clicks(49), "site")


def test_bag_equal_is_a_multiset_comparison() -> None:
    a = frame(["k", "x"], (1, 0.1 + 0.2), (1, 0.1 + 0.2), (2, 1.0))
    assert bag_equal(a, frame(["x", "k"], (1.0, 2), (0.3, 1), (0.3, 1)))
    assert not bag_equal(a, frame(["k", "x"], (1, 0.3), (2, 1.0), (2, 1.0)))
    assert not bag_equal(a, frame(["k", "x"], (1, 0.3 + 1e-9), (1, 0.3), (2, 1.0)))
    assert "only in a [(2, 1.0)]" in bag_difference(a, frame(["k", "x"], (1, 0.3), (1, 0.3)))
    assert "columns differ" in bag_difference(a, frame(["k"], (1,)))


def test_bag_equal_takes_none_and_nan_for_one_null() -> None:
    """pandas writes None or NaN for a null in an object column (a group-by turns None into
    NaN); Spark's toPandas writes None: both are the same missing value."""
    with_nan = pd.DataFrame({"url": ["u1", "u2"], "content": [np.nan, "x"], "t": [np.nan, 1.0]})
    with_none = pd.DataFrame({"url": ["u2", "u1"], "content": ["x", None], "t": [1.0, None]})
    assert bag_equal(with_nan, with_none)
    assert not bag_equal(with_nan, with_none.assign(content=["x", "y"]))


def test_apply_delta_output_is_sorted_plain_rows() -> None:
    out = apply_delta(frame(["k"], (3,), (1,)), delta(["k"], (2, 1), (2, 1), (3, -1)))
    assert out["k"].tolist() == [1, 2, 2]
    assert list(out.columns) == ["k"]


# ---------------------------------------------------------------- check 4: properties

KS = st.integers(0, 3)
STRS = st.sampled_from(["a", "b", "c"])


def bag(rows: list[tuple[int, str]], columns: tuple[str, str] = ("k", "s")) -> pd.DataFrame:
    first, second = zip(*rows) if rows else ((), ())
    return pd.DataFrame({columns[0]: pd.Series(first, dtype="int64"),
                         columns[1]: pd.Series(second, dtype=object)})


bags = st.lists(st.tuples(KS, STRS), max_size=8).map(bag)
int_pairs = st.lists(st.tuples(KS, st.integers(0, 2)), max_size=6)


@SETTINGS
@given(bags, bags)
def test_apply_delta_between_is_identity(old: pd.DataFrame, new: pd.DataFrame) -> None:
    d = delta_between(old, new)
    assert_bag(apply_delta(old, d), new)
    rows_old = Counter(old.itertuples(index=False, name=None))
    rows_new = Counter(new.itertuples(index=False, name=None))
    assert len(d) == sum(((rows_old - rows_new) + (rows_new - rows_old)).values())  # minimal


@SETTINGS
@given(st.lists(bags, min_size=2, max_size=4))
def test_chain_of_consecutive_deltas_is_delta_between_ends(states: list[pd.DataFrame]) -> None:
    steps = [delta_between(a, b) for a, b in zip(states, states[1:])]
    assert_bag(chain(steps), delta_between(states[0], states[-1]))
    kept = chain(steps, cancel=False)
    assert len(kept) == sum(map(len, steps))
    assert_bag(apply_delta(states[0], kept), states[-1])


keyed = st.dictionaries(KS, STRS, max_size=4).map(lambda d: bag(sorted(d.items())))
upsert_rows = st.lists(st.tuples(KS, STRS, st.booleans()), max_size=6)


def upserts(rows: list[tuple[int, str, bool]], first_seq: int = 0) -> pd.DataFrame:
    return frame(["k", "s", "_seq", "_tomb"],
                 *[(k, s, first_seq + i, tomb) for i, (k, s, tomb) in enumerate(rows)])


@SETTINGS
@given(keyed, upsert_rows, upsert_rows)
def test_upsert_round_trips(base: pd.DataFrame, rows1: list, rows2: list) -> None:
    ups = upserts(rows1)
    model = dict(base.itertuples(index=False, name=None))
    for k, s, tomb in rows1:
        if tomb:
            model.pop(k, None)
        else:
            model[k] = s
    applied = apply_upsert(base, ups, "k")
    assert_bag(applied, bag(sorted(model.items())))
    assert_bag(apply_delta(base, upsert_to_delta(base, ups, "k")), applied)
    later = upserts(rows2, first_seq=len(rows1))
    assert_bag(apply_upsert(base, chain_upserts([later, ups], "k"), "k"),
               apply_upsert(applied, later, "k"))


@SETTINGS
@given(keyed, keyed)
def test_delta_to_upsert_round_trip(old: pd.DataFrame, new: pd.DataFrame) -> None:
    assert_bag(apply_upsert(old, delta_to_upsert(delta_between(old, new), "k"), "k"), new)


positive_counts = st.dictionaries(KS, st.integers(1, 5), max_size=4)


@SETTINGS
@given(positive_counts, positive_counts, st.data())
def test_increment_round_trips(old: dict, new: dict, data: st.DataObject) -> None:
    rows = []
    for k in sorted(old.keys() | new.keys()):
        diff = new.get(k, 0) - old.get(k, 0)
        part = data.draw(st.integers(-3, 3))  # split each key's change over two rows
        rows += [(k, part), (k, diff - part)]
    inc = frame(["k", "_inc"], *rows)
    old_b = frame(["k", "n"], *sorted(old.items()))
    new_b = frame(["k", "n"], *sorted(new.items()))
    assert_bag(apply_increment(old_b, inc, "k"), new_b)
    as_delta = increment_to_delta(old_b, inc, "k")
    assert_bag(apply_delta(old_b, as_delta), new_b)
    assert_bag(delta_to_increment(as_delta, "k", count="n"), chain_increments([inc], "k"))


@SETTINGS
@given(bags, bags, bags, st.sampled_from(["k", "s", ["k", "s"]]))
def test_delta_to_increment_then_apply_is_count(old: pd.DataFrame, mid: pd.DataFrame,
                                                new: pd.DataFrame, key: str | list) -> None:
    uncancelled = chain([delta_between(old, mid), delta_between(mid, new)], cancel=False)
    inc = delta_to_increment(uncancelled, key)
    assert_bag(apply_increment(count(old, key), inc, key), count(new, key))
    assert_bag(count_delta(uncancelled, key), inc)


@SETTINGS
@given(st.lists(bags, min_size=1, max_size=5), st.sampled_from(["k", "s", ["k", "s"]]))
def test_incremental_distinct_equals_batch(states: list[pd.DataFrame], key: str | list) -> None:
    counts, out = count(states[0], key), distinct(states[0], key)
    for before, after in zip(states, states[1:]):
        d_out, counts = distinct_delta(counts, delta_between(before, after), key)
        out = apply_delta(out, d_out)
        assert_bag(out, distinct(after, key))
        assert_bag(counts, count(after, key))


@SETTINGS
@given(int_pairs, int_pairs, int_pairs, int_pairs, int_pairs, int_pairs,
       st.sampled_from(["both", "left", "right"]))
def test_sync_incremental_join_maintains_the_join(l_old: list, l_mid: list, l_new: list,
                                                  r_old: list, r_mid: list, r_new: list,
                                                  sides: str) -> None:
    """The incremental view maintenance identity: L_old⋈R_old + Δ = L_new⋈R_new, with
    uncancelled (±r carrying) input chains."""
    lo, lm, ln = (bag(x, ("url", "site")) for x in (l_old, l_mid, l_new))
    ro, rm, rn = (bag(x, ("site", "score")) for x in (r_old, r_mid, r_new))
    dl = chain([delta_between(lo, lm), delta_between(lm, ln)], cancel=False)
    dr = chain([delta_between(ro, rm), delta_between(rm, rn)], cancel=False)
    if sides == "left":
        dr, rn = None, ro
    if sides == "right":
        dl, ln = None, lo
    out = sync_incremental_join(lo, dl, ro, dr, "site")
    assert_bag(apply_delta(join(lo, ro, "site"), out), join(ln, rn, "site"))


@SETTINGS
@given(bags, bags)
def test_stateless_map_distributes_over_deltas(old: pd.DataFrame, new: pd.DataFrame) -> None:
    def fn(df: pd.DataFrame) -> pd.DataFrame:
        kept = df[df["k"] > 0]
        return kept.assign(s=kept["s"].str.upper(), k=kept["k"] * 10)

    d = delta_between(old, new)
    assert_bag(apply_delta(map_rows(old, fn), map_rows(d, fn)), map_rows(new, fn))
    assert_bag(union(map_rows(signed(old, 1), fn), map_rows(signed(new, -1), fn)),
               union(signed(map_rows(old, fn), 1), signed(map_rows(new, fn), -1)))
