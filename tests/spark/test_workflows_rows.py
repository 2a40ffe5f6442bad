"""The Spark row algebra and row functions (``spark/workflows/rows.py``,
``spark/workflows/functions.py``) give the rows of their pandas twins (``workflows/rows.py``,
``workflows/weak.py``, ``workflows/functions.py``): Hypothesis properties on small random
frames (keys from a small alphabet with nulls, so collisions, duplicates, ±r pairs and
deletions of present rows happen), the data and schema errors, empty inputs, and the row
functions and selectors on the registered generators' data. The composites
(``workflows/algebra.py``) are one code over each backend's primitives, run here on both.

Comparison: ``bag_difference`` of ``toPandas()`` with the pandas result is None, and the
column names (in order) and dtypes are equal. Nulls in a string column are compared as None
(pandas group-bys give NaN); a pandas group-by key column holding only nulls comes out float64
where Spark keeps the string type: that one pandas quirk is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from staleness_lab.spark import get_spark
from staleness_lab.spark.workflows import functions as SF
from staleness_lab.spark.workflows import rows as W
from staleness_lab.spark.workflows.rows import SPARK
from staleness_lab.workflows import rows as R
from staleness_lab.workflows import sources
from staleness_lab.workflows import weak as K
from staleness_lab.workflows.functions import floor_log2
from staleness_lab.workflows.pandas_rows import PANDAS
from staleness_lab.workflows.registry import FUNCTIONS
from staleness_lab.workflows.rows import SIGN, bag_difference, signed
from staleness_lab.workflows.weak import INC, SEQ, TOMB

#: The registered generators (importing ``sources`` registers them).
GENERATORS = sources.GENERATORS
#: Spark jobs take 0.1-0.3 s each: few, data-rich examples.
SETTINGS = settings(max_examples=6, deadline=None)

#: The random frames' columns: dtypes and values (small alphabets, nulls in string columns).
BASE = ["k", "i", "f", "b"]
FETCH = ["url", "ok", "content", "links", "fetched_at"]
DTYPES: dict[str, Any] = {
    "k": object, "s": object, "i": "int64", "j": "int64", "f": "float64", "b": bool,
    "url": object, "ok": bool, "content": object, "links": object, "fetched_at": "float64",
    "site": object, "digest": object, "target": object, "record_id": "int64", "query": object,
    "is_news": bool}
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "k": st.sampled_from(["a", "b", "c", None]), "s": st.sampled_from(["x", "y", None]),
    "i": st.integers(0, 2), "j": st.integers(0, 2), "b": st.booleans(),
    "f": st.sampled_from([0.0, 0.5, 2.25, -1e-3]),
    "url": st.sampled_from(["u1", "u2", "u3", None]), "ok": st.booleans(),
    "content": st.sampled_from(["x", "ä€", "", None]),
    "links": st.sampled_from(["", "u1", "u2|u3", "u1||u3|", None]),
    "fetched_at": st.sampled_from([0.5, 1.0, 2.75]), "site": st.sampled_from(["a.com", "b.com"]),
    "n": st.integers(0, 9), "digest": st.sampled_from(["d1", "d2", None]),
    "target": st.sampled_from(["u1", "u2", "u3", "u4", "u5", None]),
    "record_id": st.integers(0, 5), "query": st.sampled_from(["q1", "q2"]), "is_news": st.booleans(),
}
KEYS = st.sampled_from(["k", "i", ["k", "i"], ["k", "b"]])


@pytest.fixture(scope="module")
def spark(spark: Any) -> Any:
    """The live shared session when this module starts: ``test_session`` replaces the first
    one (and restores ``local[2]`` as a new object), so the session-scoped fixture's object may
    be stopped."""
    return get_spark()


# ---------------------------------------------------------------- helpers

def table(columns: list[str], rows: list[tuple]) -> pd.DataFrame:
    """A frame of ``rows`` with fixed dtypes (also when empty). A null string is NaN, the
    null pandas' own group-bys write (None and NaN are one null to both twins: see
    :func:`test_pandas_none_is_nan`)."""
    dtypes = {**DTYPES, SIGN: "int8", SEQ: "int64", TOMB: bool, INC: "int64", "n": "int64"}
    values = list(zip(*rows)) if rows else [()] * len(columns)
    out = pd.DataFrame({c: pd.Series(list(v), dtype=dtypes[c]) for c, v in zip(columns, values)})
    return nan_nulls(out)


def nan_nulls(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the nulls of its object columns as NaN."""
    return frame.assign(**{c: frame[c].where(frame[c].notna(), np.nan)
                           for c in frame.columns if frame[c].dtype == object})


def counted(base: pd.DataFrame, key: Any) -> pd.DataFrame:
    """``weak.count`` with the key columns in ``base``'s dtypes (a null-only string key comes
    out float64 from the pandas group-by)."""
    keys = R.keys_of(key)
    return nan_nulls(K.count(base, key).astype({c: base[c].dtype for c in keys}))


def rows_of(columns: list[str], *, min_size: int = 0, max_size: int = 10) -> st.SearchStrategy:
    return st.lists(st.tuples(*[VALUES[c] for c in columns]), min_size=min_size, max_size=max_size)


def bases(columns: list[str] = BASE, **kw: int) -> st.SearchStrategy[pd.DataFrame]:
    return rows_of(columns, **kw).map(lambda rs: table(columns, rs))


def deltas(columns: list[str] = BASE, **kw: int) -> st.SearchStrategy[pd.DataFrame]:
    """Arbitrary signed rows (not necessarily valid for a base)."""
    signed_rows = st.lists(st.tuples(st.tuples(*[VALUES[c] for c in columns]),
                                     st.sampled_from([1, -1])), max_size=kw.get("max_size", 10))
    return signed_rows.map(lambda rs: table(columns + [SIGN], [r + (s,) for r, s in rs]))


def valid_delta(data: st.DataObject, base: pd.DataFrame) -> pd.DataFrame:
    """A delta valid for ``base`` under ``strict``: deletions of present rows, inserts, and
    ±r pairs of inserted rows."""
    columns = list(base.columns)
    keep = data.draw(st.lists(st.booleans(), min_size=len(base), max_size=len(base)))
    deleted = base[[not k for k in keep]]
    inserted = table(columns, data.draw(rows_of(columns, max_size=6)))
    pairs = inserted.iloc[: data.draw(st.integers(0, len(inserted)))]
    parts = [signed(deleted, -1), signed(inserted, 1), signed(pairs, -1), signed(pairs, 1)]
    out = pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=0)
    return out.reset_index(drop=True).astype({**base.dtypes.to_dict(), SIGN: "int8"})


def normalized(frame: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """Nulls of string columns as None; a column that ``reference`` types as object and
    ``frame`` as all-NaN float64 (pandas' group-by of a null-only key) as None too."""
    out = frame.copy()
    for c in out.columns:
        all_null_float = out[c].dtype == "float64" and out[c].isna().all() \
            and c in reference.columns and reference[c].dtype == object
        if out[c].dtype == object or all_null_float:
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out


def assert_rows(actual: Any, expected: pd.DataFrame) -> None:
    """``actual`` (a Spark DataFrame) has ``expected``'s rows (a bag), columns and dtypes."""
    got = actual.toPandas()
    assert list(got.columns) == list(expected.columns)
    for c in got.columns:
        # the pandas quirk of the module docstring, also in an empty result (count_delta of a
        # delta whose only key is null and whose rows cancel)
        quirk = (expected[c].dtype == "float64" and expected[c].isna().all()
                 and got[c].dtype == object and got[c].isna().all())
        assert got[c].dtype == expected[c].dtype or quirk, (c, got[c].dtype, expected[c].dtype)
    difference = bag_difference(normalized(got, expected), normalized(expected, got))
    assert difference is None, difference


def raises_as_pandas(pandas_call: Callable[[], Any], spark_call: Callable[[], Any]) -> bool:
    """If the pandas call raises ``ValueError``, the Spark one raises it with the same prefix
    (the text up to the first ':'); True when they raised."""
    try:
        pandas_call()
    except ValueError as error:
        prefix = str(error).split(":")[0]
        with pytest.raises(ValueError, match=re.escape(prefix)):
            spark_call()
        return True
    return False


def sp(spark: Any, frame: pd.DataFrame) -> Any:
    return W.from_pandas(spark, frame)


# ---------------------------------------------------------------- from_pandas

def test_from_pandas_types_and_empty_frames(spark: Any) -> None:
    frame = table(["k", "i", "f", "b", SIGN], [("a", 1, 0.5, True, 1), (None, 2, -1.0, False, -1)])
    for f in (frame, frame.iloc[0:0]):
        df = sp(spark, f)
        assert [field.dataType for field in df.schema.fields] == [
            W.SPARK_TYPES[str(t)] for t in f.dtypes]
        assert_rows(df, f)
    assert set(W.SPARK_TYPES) == {"object", "int64", "float64", "bool", "int8"}
    with pytest.raises(ValueError, match="dtype"):
        sp(spark, pd.DataFrame({"t": pd.to_datetime(["2020-01-01"])}))


# ---------------------------------------------------------------- signed bags

@SETTINGS
@given(data=st.data())
def test_apply_delta(spark: Any, data: st.DataObject) -> None:
    base = data.draw(bases())
    delta = valid_delta(data, base)
    assert_rows(W.apply_delta(sp(spark, base), sp(spark, delta)), R.apply_delta(base, delta))


@SETTINGS
@given(base=bases(), delta=deltas())
def test_apply_delta_not_strict_clamps(spark: Any, base: pd.DataFrame, delta: pd.DataFrame) -> None:
    out = W.apply_delta(sp(spark, base), sp(spark, delta[BASE[::-1] + [SIGN]]), strict=False)
    assert_rows(out, R.apply_delta(base, delta, strict=False))


@SETTINGS
@given(old=bases(), new=bases())
def test_delta_between(spark: Any, old: pd.DataFrame, new: pd.DataFrame) -> None:
    assert_rows(W.delta_between(sp(spark, old), sp(spark, new)), R.delta_between(old, new))


@SETTINGS
@given(chained=st.lists(deltas(max_size=6), min_size=1, max_size=3), cancel=st.booleans())
def test_chain(spark: Any, chained: list[pd.DataFrame], cancel: bool) -> None:
    out = W.chain([sp(spark, d) for d in chained], cancel=cancel)
    assert_rows(out, R.chain(chained, cancel=cancel))


@SETTINGS
@given(a=bases(), b=bases(), as_delta=st.booleans())
def test_union(spark: Any, a: pd.DataFrame, b: pd.DataFrame, as_delta: bool) -> None:
    if as_delta:
        a, b = signed(a, 1), signed(b, -1)
    b = b[list(b.columns)[::-1]]
    assert_rows(W.union(sp(spark, a), sp(spark, b)), R.union(a, b))


LEFT, RIGHT = ["k", "i", "f"], ["k", "i", "b"]


def right_for(on: str | list[str], frame: pd.DataFrame) -> pd.DataFrame:
    """The right input with only the ``on`` columns shared with the left (k, i, f)."""
    return frame if "i" in R.keys_of(on) else frame.rename(columns={"i": "j"})


ON = st.sampled_from(["k", ["k", "i"], "i"])


@SETTINGS
@given(left=bases(LEFT), right=bases(RIGHT), on=ON)
def test_join(spark: Any, left: pd.DataFrame, right: pd.DataFrame, on: Any) -> None:
    if on == "i":
        right = right.rename(columns={"k": "s"})
    else:
        right = right_for(on, right)
    assert_rows(SPARK.join(sp(spark, left), sp(spark, right), on), PANDAS.join(left, right, on))


@SETTINGS
@given(delta=deltas(LEFT), base=bases(RIGHT), on=st.sampled_from(["k", ["k", "i"]]),
       side=st.sampled_from(["left", "right"]))
def test_join_delta_base(spark: Any, delta: pd.DataFrame, base: pd.DataFrame, on: Any,
                         side: str) -> None:
    base = right_for(on, base)
    out = SPARK.join_delta_base(sp(spark, delta), sp(spark, base), on, side=side)
    assert_rows(out, PANDAS.join_delta_base(delta, base, on, side=side))


@SETTINGS
@given(data=st.data(), sides=st.sampled_from(["both", "left", "right"]))
def test_sync_incremental_join(spark: Any, data: st.DataObject, sides: str) -> None:
    """On the int key ``i``: pandas' ``R_old + ΔR`` of null-only string keys types them
    float64, which its merge then refuses against the left's strings."""
    l_old, r_old = data.draw(bases(LEFT)), data.draw(bases(RIGHT)).rename(columns={"k": "s"})
    dl = None if sides == "right" else data.draw(deltas(LEFT))
    dr = None if sides == "left" else valid_delta(data, r_old)
    out = SPARK.sync_incremental_join(sp(spark, l_old), None if dl is None else sp(spark, dl),
                                  sp(spark, r_old), None if dr is None else sp(spark, dr), "i")
    assert_rows(out, PANDAS.sync_incremental_join(l_old, dl, r_old, dr, "i"))


# ---------------------------------------------------------------- upserts

UPSERT = ["k", "i", "f"]


def upsert_frames(data: st.DataObject, count: int, columns: list[str] = UPSERT) -> list[pd.DataFrame]:
    """``count`` upserts, the j-th with ``_seq`` in {10j, 10j + 1} (so no (key, seq) repeats
    across them); a (key, seq) may repeat inside one (a record of several rows)."""
    out = []
    for j in range(count):
        rows = data.draw(st.lists(st.tuples(*[VALUES[c] for c in columns], st.sampled_from([0, 1]),
                                            st.booleans()), max_size=6))
        out.append(table(columns + [SEQ, TOMB], [r[:-2] + (10 * j + r[-2], r[-1]) for r in rows]))
    return out


@SETTINGS
@given(data=st.data(), key=st.sampled_from(["k", ["k", "i"]]))
def test_chain_upserts(spark: Any, data: st.DataObject, key: Any) -> None:
    ups = upsert_frames(data, data.draw(st.integers(1, 3)))
    spark_ups = [sp(spark, u if j == 0 else u[u.columns[::-1]]) for j, u in enumerate(ups)]
    assert_rows(W.chain_upserts(spark_ups, key), K.chain_upserts(ups, key))


@SETTINGS
@given(records=bases(), seq=st.integers(0, 10**12), as_delta=st.booleans())
def test_records_to_upsert(spark: Any, records: pd.DataFrame, seq: int, as_delta: bool) -> None:
    if as_delta:
        records = signed(records, 1)
    assert_rows(W.records_to_upsert(sp(spark, records), seq), K.records_to_upsert(records, seq))


@SETTINGS
@given(data=st.data(), key=st.sampled_from(["k", ["k", "i"]]), to_delta=st.booleans())
def test_apply_upsert_and_upsert_to_delta(spark: Any, data: st.DataObject, key: Any,
                                          to_delta: bool) -> None:
    base = data.draw(bases(UPSERT))
    (upsert,) = upsert_frames(data, 1)
    if to_delta:
        expected = PANDAS.upsert_to_delta(base, upsert, key)
        assert_rows(SPARK.upsert_to_delta(sp(spark, base), sp(spark, upsert), key), expected)
    else:
        expected = PANDAS.apply_upsert(base, upsert, key)
        assert_rows(SPARK.apply_upsert(sp(spark, base), sp(spark, upsert), key), expected)


# ---------------------------------------------------------------- increments

def increments(key: list[str]) -> st.SearchStrategy[pd.DataFrame]:
    rows = st.lists(st.tuples(*[VALUES[c] for c in key], st.integers(-3, 3)), max_size=8)
    return rows.map(lambda rs: table(key + [INC], rs))


def _key_part(row: tuple) -> tuple:
    return row[:-1]


def counts_of(data: st.DataObject, key: list[str]) -> pd.DataFrame:
    """A counts base: one row per key, n >= 1."""
    rows = data.draw(st.lists(st.tuples(*[VALUES[c] for c in key], st.integers(1, 4)),
                              max_size=6, unique_by=_key_part))
    return table(key + ["n"], rows)


INC_KEYS = st.sampled_from([["k"], ["k", "i"]])


@SETTINGS
@given(data=st.data(), key=INC_KEYS)
def test_chain_increments(spark: Any, data: st.DataObject, key: list[str]) -> None:
    incs = data.draw(st.lists(increments(key), min_size=1, max_size=3))
    assert_rows(W.chain_increments([sp(spark, i) for i in incs], key), K.chain_increments(incs, key))


@SETTINGS
@given(data=st.data(), key=INC_KEYS, to_delta=st.booleans())
def test_apply_increment_and_increment_to_delta(spark: Any, data: st.DataObject,
                                                key: list[str], to_delta: bool) -> None:
    """Random increments: some reach a negative count, and then both raise."""
    counts, inc = counts_of(data, key), data.draw(increments(key))
    pandas_fn, spark_fn = ((PANDAS.increment_to_delta, SPARK.increment_to_delta) if to_delta
                           else (K.apply_increment, W.apply_increment))
    if raises_as_pandas(lambda: pandas_fn(counts, inc, key),
                        lambda: spark_fn(sp(spark, counts), sp(spark, inc), key).collect()):
        return
    assert_rows(spark_fn(sp(spark, counts), sp(spark, inc), key), pandas_fn(counts, inc, key))


# ---------------------------------------------------------------- count, distinct

@SETTINGS
@given(base=bases(), key=KEYS, distinct=st.booleans())
def test_count_and_distinct(spark: Any, base: pd.DataFrame, key: Any, distinct: bool) -> None:
    if distinct:
        assert_rows(W.distinct(sp(spark, base), key), K.distinct(base, key))
    else:
        assert_rows(W.count(sp(spark, base), key, "m"), K.count(base, key, "m"))


@SETTINGS
@given(delta=deltas(), key=KEYS)
def test_count_delta(spark: Any, delta: pd.DataFrame, key: Any) -> None:
    assert_rows(W.count_delta(sp(spark, delta), key), K.count_delta(delta, key))


@SETTINGS
@given(data=st.data(), key=KEYS)
def test_distinct_delta(spark: Any, data: st.DataObject, key: Any) -> None:
    base = data.draw(bases())
    delta = valid_delta(data, base)
    counts = counted(base, key)
    out, counts_new = SPARK.distinct_delta(sp(spark, counts), sp(spark, delta), key)
    expected, expected_counts = PANDAS.distinct_delta(counts, delta, key)
    assert_rows(out, expected)
    assert_rows(counts_new, expected_counts)


# ---------------------------------------------------------------- row functions

def frames(columns: list[str]) -> st.SearchStrategy[pd.DataFrame]:
    """A base or a delta (random signs) of ``columns``."""
    return st.one_of(bases(columns), deltas(columns))


@pytest.mark.parametrize("fn", ["shingle", "successful", "extract-links", "log-score"])
@SETTINGS
@given(data=st.data(), outputs=st.integers(1, 2))
def test_stateless_maps(spark: Any, data: st.DataObject, fn: str, outputs: int) -> None:
    if fn == "log-score":
        columns = ["site", "n"]
    elif fn == "shingle":
        columns = data.draw(st.sampled_from([FETCH, ["url", "site", "content"]]))
    else:
        columns = FETCH
    frame = data.draw(frames(columns))
    out = W.stateless(fn, sp(spark, frame), split=False, outputs=outputs)
    assert len(out) == outputs and all(o is out[0] for o in out)
    assert_rows(out[0], FUNCTIONS[fn](frame).reset_index(drop=True))


@SETTINGS
@given(frame=frames(["record_id", "query", "is_news"]), outputs=st.integers(1, 2))
def test_stateless_split(spark: Any, frame: pd.DataFrame, outputs: int) -> None:
    keep = FUNCTIONS["is-news"](frame).to_numpy(dtype=bool)
    out = W.stateless("is-news", sp(spark, frame), split=True, outputs=outputs)
    assert len(out) == outputs
    for got, mask in zip(out, (keep, ~keep)):
        assert_rows(got, frame[mask].reset_index(drop=True))


@pytest.mark.parametrize("fn", ["top-unfetched", "periodic", "adaptive"])
@SETTINGS
@given(data=st.data(), now=st.sampled_from([3.0, 100.0, 200.0]), k=st.sampled_from([None, 2]))
def test_selectors(spark: Any, data: st.DataObject, fn: str, now: float, k: int | None) -> None:
    """Random fetches and digests (ties in fetch time, null urls and digests), indegrees from
    ``weak.count`` (a null target too); through ``opaque`` with the defaults, or directly with
    ``k = 2`` (cutting through score ties) and periodic's ``week = 400``."""
    first_columns = ["url", "digest", "fetched_at"] if fn == "adaptive" else ["url", "fetched_at"]
    first = data.draw(bases(first_columns, max_size=12))
    indegrees = counted(data.draw(bases(["target"], max_size=12)), "target")
    if k is None:
        out = W.opaque(fn, [sp(spark, first), sp(spark, indegrees)], now)
        expected = FUNCTIONS[fn](first, indegrees, now)
    else:
        extra = {"week": 400.0} if fn == "periodic" else {"k": k}
        out = W.SPARK_FUNCTIONS[fn](sp(spark, first), sp(spark, indegrees), now, **extra)
        expected = FUNCTIONS[fn](first, indegrees, now, **extra)
    assert_rows(out, expected)


# ---------------------------------------------------------------- realistic data

def generated(name: str, *args: Any, **params: Any) -> pd.DataFrame:
    return pd.concat([a.rows for a in GENERATORS[name](*args, **params)], ignore_index=True)


def test_crawl_selection_on_generated_fetches(spark: Any) -> None:
    """cs-fetches: successful, shingle and extract-links (as a base and as a delta), the
    indegrees by ``count`` (pandas ``weak.count`` against the Spark twin), and the three
    selectors at the horizon on the Spark pipeline's frames."""
    rows = generated("cs-fetches", 5, 0.25, 50, 3.0)
    frame = sp(spark, rows)
    (ok,) = W.stateless("successful", frame, split=False, outputs=1)
    (digests,) = W.stateless("shingle", frame, split=False, outputs=1)
    (links,) = W.stateless("extract-links", frame, split=False, outputs=1)
    pandas_ok, pandas_digests = FUNCTIONS["successful"](rows), FUNCTIONS["shingle"](rows)
    pandas_links = FUNCTIONS["extract-links"](rows)
    assert_rows(ok, pandas_ok.reset_index(drop=True))
    assert_rows(digests, pandas_digests.reset_index(drop=True))
    assert_rows(links, pandas_links)
    as_delta = signed(rows.iloc[:200], 1)
    (links_delta,) = W.stateless("extract-links", sp(spark, as_delta), split=False, outputs=1)
    assert_rows(links_delta, FUNCTIONS["extract-links"](as_delta))
    indegrees, spark_indegrees = K.count(pandas_links, "target"), W.count(links, "target")
    assert_rows(spark_indegrees, indegrees)
    for fn, first, pandas_first in [("top-unfetched", ok, pandas_ok), ("periodic", ok, pandas_ok),
                                    ("adaptive", digests, pandas_digests)]:
        expected = FUNCTIONS[fn](pandas_first, indegrees, 3.0)
        assert len(expected) > 0 or fn == "periodic"
        assert_rows(W.opaque(fn, [first, spark_indegrees], 3.0), expected)
    due = FUNCTIONS["periodic"](pandas_ok, indegrees, 3.0, week=2.0)
    assert len(due) > 0
    assert_rows(SF.periodic(ok, spark_indegrees, 3.0, week=2.0), due)


def test_search_and_feedback_on_generated_data(spark: Any) -> None:
    """sp-crawl pages → shingle; sp-clicks → count per site → log-score; fp-log → is-news;
    the crawl's arrivals chained and applied as deltas."""
    pages = generated("sp-crawl", 3, 0.25, 20, 1.0, initial=100)
    assert_rows(W.stateless("shingle", sp(spark, pages), split=False, outputs=1)[0],
                FUNCTIONS["shingle"](pages))
    clicks = generated("sp-clicks", 3, 0.5, 100, 1.0, crawl_initial=100, crawl_rows=20)
    per_site = K.count(clicks, "site")
    assert_rows(W.count(sp(spark, clicks), "site"), per_site)
    assert_rows(W.stateless("log-score", sp(spark, per_site), split=False, outputs=2)[1],
                FUNCTIONS["log-score"](per_site))
    log = generated("fp-log", 3, 5 / 60, 100, 0.5)
    news, other = W.stateless("is-news", sp(spark, log), split=True, outputs=2)
    mask = FUNCTIONS["is-news"](log)
    assert_rows(news, log[mask].reset_index(drop=True))
    assert_rows(other, log[~mask].reset_index(drop=True))
    arrivals = [signed(a.rows, 1) for a in GENERATORS["sp-crawl"](3, 0.25, 20, 1.0, initial=30)]
    chained = R.chain(arrivals, cancel=False)
    spark_chain = W.chain([sp(spark, a) for a in arrivals], cancel=False)
    assert_rows(spark_chain, chained)
    start = pages.iloc[:10]
    assert_rows(W.apply_delta(sp(spark, start), spark_chain), R.apply_delta(start, chained))


# ---------------------------------------------------------------- errors and empty inputs

def test_data_errors_raise_like_pandas(spark: Any) -> None:
    base = table(BASE, [("a", 1, 0.5, True)])
    absent = table(BASE + [SIGN], [("zz", 1, 0.5, True, -1)])
    with pytest.raises(ValueError, match="deleting absent row.*zz"):
        W.apply_delta(sp(spark, base), sp(spark, absent))
    assert_rows(W.apply_delta(sp(spark, base), sp(spark, absent), strict=False), base)
    ups = table(["k", SEQ, TOMB], [("a", 3, False)])
    with pytest.raises(ValueError, match=r"repeated \(key, _seq\).*'a'"):
        W.chain_upserts([sp(spark, ups), sp(spark, ups)], "k")
    counts = table(["k", "n"], [("a", 1)])
    dec = table(["k", INC], [("a", -2)])
    with pytest.raises(ValueError, match="negative count.*'a'"):
        W.apply_increment(sp(spark, counts), sp(spark, dec), "k")
    twice = table(["k", "n"], [("a", 1), ("a", 2)])
    with pytest.raises(ValueError, match="one row per key"):
        W.apply_increment(sp(spark, twice), sp(spark, dec), "k")
    with pytest.raises(ValueError, match="deletions"):
        W.records_to_upsert(sp(spark, signed(base, -1)), 1)
    with pytest.raises(ValueError, match="both input chains"):
        SPARK.sync_incremental_join(sp(spark, base), None, sp(spark, base), None, "k")


def test_schema_errors_raise_without_a_spark_job(spark: Any) -> None:
    sc = spark.sparkContext
    base = sp(spark, table(BASE, [("a", 1, 0.5, True)]))
    delta = sp(spark, table(BASE + [SIGN], [("a", 1, 0.5, True, 1)]))
    other = sp(spark, table(["k", "i"], [("a", 1)]))
    fetches = sp(spark, table(["url", "fetched_at"], [("u1", 1.0)]))
    calls: list[Callable[[], Any]] = [
        lambda: W.apply_delta(base, base), lambda: W.apply_delta(delta, delta),
        lambda: W.apply_delta(other, delta), lambda: W.delta_between(base, other),
        lambda: W.chain([]), lambda: W.chain([delta, base]), lambda: W.union(base, other),
        lambda: SPARK.join(base, base, "k"), lambda: SPARK.join(delta, other, "k"),
        lambda: SPARK.join_delta_base(base, other, "k"),
        lambda: SPARK.join_delta_base(delta, other, "k", side="middle"),
        lambda: W.chain_upserts([], "k"), lambda: W.chain_upserts([base], "k"),
        lambda: SPARK.apply_upsert(other, W.records_to_upsert(base, 1), "k"),
        lambda: W.chain_increments([], "k"), lambda: W.apply_increment(base, other, "k"),
        lambda: W.count_delta(base, "k"), lambda: W.count(base, "missing"),
        lambda: W.stateless("no-such-fn", base, split=False, outputs=1),
        lambda: W.stateless("is-news", base, split=False, outputs=1),
        lambda: W.stateless("shingle", base, split=False, outputs=1),
        lambda: W.opaque("periodic", [fetches], 1.0),
        lambda: W.opaque("adaptive", [fetches, other], 1.0),
    ]
    group = "workflow-rows-schema-checks"
    sc.setJobGroup(group, "schema checks must not run Spark jobs")
    try:
        for call in calls:
            with pytest.raises(ValueError):
                call()
        assert sc.statusTracker().getJobIdsForGroup(group) == []
        base.groupBy("k").count().collect()  # the probe sees jobs at all
        assert sc.statusTracker().getJobIdsForGroup(group) != []
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)


def test_empty_inputs(spark: Any) -> None:
    base, delta = table(BASE, []), table(BASE + [SIGN], [])
    ups, inc = table(["k", "i", "f", SEQ, TOMB], []), table(["k", INC], [])
    counts = table(["k", "n"], [])
    b, d = sp(spark, base), sp(spark, delta)
    cases: list[tuple[Any, pd.DataFrame]] = [
        (W.apply_delta(b, d), R.apply_delta(base, delta)),
        (W.delta_between(b, b), R.delta_between(base, base)),
        (W.chain([d, d]), R.chain([delta, delta])),
        (W.chain([d], cancel=False), R.chain([delta], cancel=False)),
        (W.union(d, d), R.union(delta, delta)),
        (SPARK.join(b, sp(spark, table(["k", "s"], [])), "k"), PANDAS.join(base, table(["k", "s"], []), "k")),
        (SPARK.join_delta_base(d, sp(spark, table(["k", "s"], [])), "k", side="right"),
         PANDAS.join_delta_base(delta, table(["k", "s"], []), "k", side="right")),
        (W.chain_upserts([sp(spark, ups)] * 2, "k"), K.chain_upserts([ups] * 2, "k")),
        (W.records_to_upsert(d, 7), K.records_to_upsert(delta, 7)),
        (SPARK.apply_upsert(sp(spark, base[["k", "i", "f"]]), sp(spark, ups), "k"),
         PANDAS.apply_upsert(base[["k", "i", "f"]], ups, "k")),
        (SPARK.upsert_to_delta(sp(spark, base[["k", "i", "f"]]), sp(spark, ups), "k"),
         PANDAS.upsert_to_delta(base[["k", "i", "f"]], ups, "k")),
        (W.chain_increments([sp(spark, inc)], "k"), K.chain_increments([inc], "k")),
        (W.apply_increment(sp(spark, counts), sp(spark, inc), "k"), K.apply_increment(counts, inc, "k")),
        (SPARK.increment_to_delta(sp(spark, counts), sp(spark, inc), "k"),
         PANDAS.increment_to_delta(counts, inc, "k")),
        (W.count(b, ["k", "b"]), K.count(base, ["k", "b"])),
        (W.count_delta(d, "k"), K.count_delta(delta, "k")),
        (W.distinct(b, "k"), K.distinct(base, "k")),
        (SPARK.distinct_delta(sp(spark, counts), d, "k")[0], PANDAS.distinct_delta(counts, delta, "k")[0]),
    ]
    fetches = table(FETCH, [])
    for fn in ["shingle", "successful", "extract-links"]:
        cases.append((W.stateless(fn, sp(spark, fetches), split=False, outputs=1)[0],
                      FUNCTIONS[fn](fetches).reset_index(drop=True)))
    sites = table(["site", "n"], [])
    cases.append((W.stateless("log-score", sp(spark, sites), split=False, outputs=1)[0],
                  FUNCTIONS["log-score"](sites)))
    indegrees = table(["target", "n"], [])
    for fn, first in [("top-unfetched", ["url", "fetched_at"]), ("periodic", ["url", "fetched_at"]),
                      ("adaptive", ["url", "digest", "fetched_at"])]:
        cases.append((W.opaque(fn, [sp(spark, table(first, [])), sp(spark, indegrees)], 1.0),
                      FUNCTIONS[fn](table(first, []), indegrees, 1.0)))
    for got, expected in cases:
        assert_rows(got, expected)


def test_log_score_edges_and_floor_log2(spark: Any) -> None:
    """log1p below and at -1 (Spark's is null there), and ⌊log2⌋ by ``length(bin(m)) - 1``."""
    counts = table(["site", "n"], [("a", -3), ("b", -1), ("c", 0), ("d", 1), ("e", 10**15)])
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = FUNCTIONS["log-score"](counts)
    assert_rows(SF.log_score(sp(spark, counts)), expected)
    m = [1, 2, 3, 4, 7, 8, 2**40 - 1, 2**40, 2**62]
    got = sp(spark, table(["n"], [(v,) for v in m])).select(SF.floor_log2(SF.col("n")).alias("e"))
    assert [r["e"] for r in got.collect()] == floor_log2(np.array(m)).tolist()


def test_pandas_none_is_nan(spark: Any) -> None:
    """One null in both twins: a None key meets the NaN that pandas' group-by writes for it
    (``weak._key_in`` matches keys through MultiIndex codes), so ``increment_to_delta`` of a
    None-keyed count retracts its old row in pandas as in Spark."""
    counts = pd.DataFrame({"k": pd.Series([None], dtype=object), "n": [1]})
    inc = pd.DataFrame({"k": pd.Series([None], dtype=object), INC: [1]})
    assert_rows(sp(spark, PANDAS.increment_to_delta(counts, inc, "k")),
                table(["k", "n", SIGN], [(None, 1, -1), (None, 2, 1)]))
    delta = SPARK.increment_to_delta(sp(spark, counts), sp(spark, inc), "k")
    assert_rows(delta, table(["k", "n", SIGN], [(None, 1, -1), (None, 2, 1)]))
    assert_rows(W.apply_delta(sp(spark, counts), delta), K.apply_increment(counts, inc, "k"))
