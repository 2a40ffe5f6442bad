"""The row algebra of bases, strong deltas, upserts and increments on Spark DataFrames: the
Spark twins of the primitives in :mod:`staleness_lab.workflows.rows` and
:mod:`staleness_lab.workflows.weak` (Olston §2.1-§2.5; digest §1 "Encodings", §8 "Rows" and
"Converters"), bound as :data:`SPARK`. The operators composed of primitives (joins, upsert and
increment converters, incremental distinct) are written once for both backends in
:class:`staleness_lab.workflows.algebra.Algebra`.

Same representation, same rows (as a multiset: Spark keeps no row order), same column names
and types after ``toPandas()``: ``_sign`` byte (Spark sums are long and are cast back),
``_seq``, ``_inc`` and counts long, ``_tomb`` boolean. Built from Spark SQL built-ins only:
every signed-bag operation is ``groupBy(cols).sum(_sign)`` and ``explode(array_repeat)`` of
the net counts (digest §8 "Converters"); key matches are null-safe (``<=>``), so null keys
group and join together as in pandas' ``dropna=False`` group-bys, ``merge`` and key matches
(``weak._key_in``, whose MultiIndex codes make pandas' two nulls, None and NaN, one).

Checks: a schema or column mismatch raises ``ValueError`` at once, without a Spark job. The
data checks that raise in pandas run one small action each (at most six offending rows
collected): :func:`apply_delta` (``strict``) deleting an absent row, :func:`chain_upserts`
seeing one (key, ``_seq``) in two upserts, :func:`apply_increment` on counts with a repeated
key or reaching a negative count, :func:`records_to_upsert` on a delta with deletions. The
pandas check that every ``_sign`` is ±1 is not repeated here (it would cost a job per call).

:func:`stateless` and :func:`opaque` run the registered row functions by name through
:data:`~staleness_lab.spark.workflows.functions.SPARK_FUNCTIONS`, as
:class:`staleness_lab.workflows.execute.Executor` does with the pandas ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import reduce
from typing import Any

import pandas as pd
from pyspark.sql import Column, DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from staleness_lab.spark.workflows.functions import SPARK_FUNCTIONS, col
from staleness_lab.workflows.algebra import Algebra
from staleness_lab.workflows.functions import RowFunction
from staleness_lab.workflows.registry import FUNCTIONS
from staleness_lab.workflows.rows import SIGN, Key, check_delta_columns, check_plain, data_columns, keys_of
from staleness_lab.workflows.weak import INC, SEQ, TOMB

#: pandas dtype name -> Spark type (:func:`from_pandas`; ``toPandas()`` maps them back).
SPARK_TYPES: dict[str, DataType] = {
    "object": StringType(),
    "int64": LongType(),
    "float64": DoubleType(),
    "bool": BooleanType(),
    "int8": ByteType(),
}

# Internal column names (never in a result).
_N = "__wr_n"
_REP = "__wr_rep"
_NEWEST = "__wr_newest"
_KIND = "__wr_kind"
#: Rows collected by a failing data check; one more than shown tells "and more".
_SHOWN = 5


def from_pandas(spark: SparkSession, frame: pd.DataFrame) -> DataFrame:
    """``frame`` as a Spark DataFrame with the explicit schema of :data:`SPARK_TYPES` (no
    inference, so an empty frame keeps its types); ``ValueError`` on another dtype."""
    fields = []
    for name, dtype in frame.dtypes.items():
        spark_type = SPARK_TYPES.get(str(dtype))
        if spark_type is None:
            raise ValueError(f"from_pandas: column {name!r} has dtype {dtype}, "
                             f"not one of {sorted(SPARK_TYPES)}")
        fields.append(StructField(str(name), spark_type, True))
    return spark.createDataFrame(frame, schema=StructType(fields))


# ---------------------------------------------------------------- helpers

def _cols(names: Iterable[str]) -> list[Column]:
    return [col(c) for c in names]


def _need(df: DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: no column(s) {missing} in {df.columns}")


def _union_by_name(a: DataFrame, b: DataFrame) -> DataFrame:
    return a.unionByName(b)


def _union_all(frames: Sequence[DataFrame], columns: Sequence[str]) -> DataFrame:
    """Bag union of ``frames`` (by name) with ``columns`` in that order."""
    return reduce(_union_by_name, [f.select(*_cols(columns)) for f in frames])


def signed(df: DataFrame, sign: int) -> DataFrame:
    """Twin of :func:`staleness_lab.workflows.rows.signed`: plain rows with ``_sign`` (byte)."""
    check_plain(df, "signed")
    return df.withColumn(SIGN, F.lit(sign).cast(ByteType()))


def _net(frames: Sequence[DataFrame], columns: list[str]) -> DataFrame:
    """Σ ``_sign`` (long, as ``_N``) per distinct row of signed frames (nulls group)."""
    signed_rows = _union_all(frames, columns + [SIGN])
    return signed_rows.groupBy(*_cols(columns)).agg(F.sum(col(SIGN)).cast(LongType()).alias(_N))


def _expand(counts: DataFrame, columns: list[str], *, sign: bool) -> DataFrame:
    """The rows of ``counts`` repeated ``|_N|`` times (zeros dropped), with ``_sign`` (byte)
    if ``sign`` (``explode(array_repeat)``, digest §8)."""
    repeated = counts.filter(col(_N) != 0).select(
        *_cols(columns), col(_N),
        F.explode(F.array_repeat(F.lit(0), F.abs(col(_N)).cast("int"))).alias(_REP))
    signs = [F.when(col(_N) > 0, F.lit(1)).otherwise(F.lit(-1)).cast(ByteType()).alias(SIGN)]
    return repeated.select(*_cols(columns), *(signs if sign else []))


def _renamed_keys(other: DataFrame, keys: list[str]) -> tuple[DataFrame, Column]:
    """``other`` with its key columns renamed apart, and the null-safe match on them."""
    names = [f"__wr_key{i}" for i in range(len(keys))]
    renamed = other.select(*[col(k).alias(n) for k, n in zip(keys, names)],
                           *_cols(c for c in other.columns if c not in keys))
    match = reduce(lambda a, b: a & b, [col(k).eqNullSafe(col(n)) for k, n in zip(keys, names)],
                   F.lit(True))
    return renamed, match


def key_in(df: DataFrame, keys: list[str], other: DataFrame, *, keep: bool) -> DataFrame:
    """The rows of ``df`` whose key is (``keep``) or is not among ``other``'s keys: a
    null-safe semi or anti join (twin of :func:`staleness_lab.workflows.weak.key_in`)."""
    _need(df, keys, "key match")
    _need(other, keys, "key match")
    renamed, match = _renamed_keys(other.select(*_cols(keys)), keys)
    return df.join(renamed, match, "left_semi" if keep else "left_anti")


def merge(left: DataFrame, right: DataFrame, keys: list[str]) -> DataFrame:
    """Twin of :func:`staleness_lab.workflows.rows.merge`: inner join on ``keys`` (null-safe, as
    pandas ``merge``), left columns, then right's non-key columns."""
    overlap = (set(left.columns) & set(right.columns)) - set(keys)
    if overlap:
        raise ValueError(f"join: non-key columns on both sides: {sorted(overlap)}")
    _need(left, keys, "join")
    _need(right, keys, "join")
    renamed, match = _renamed_keys(right, keys)
    extra = [c for c in right.columns if c not in keys]
    return left.join(renamed, match, "inner").select(*_cols(left.columns), *_cols(extra))


def select(df: DataFrame, columns: Sequence[str]) -> DataFrame:
    """The columns ``columns`` of ``df``, in that order."""
    return df.select(*_cols(columns))


def _records(rows: list[Row], columns: Sequence[str]) -> list[dict[str, Any]]:
    return [{c: row[c] for c in columns} for row in rows[:_SHOWN]]


def _more(rows: list[Row]) -> str:
    return " and more" if len(rows) > _SHOWN else ""


# ---------------------------------------------------------------- signed bags

def apply_delta(base: DataFrame, delta: DataFrame, *, strict: bool = True) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.apply_delta` (digest §8
    "Converters"): ``B + Δ`` by ``groupBy(cols).sum(_sign)``; with ``strict`` one small action
    looks for a negative count (a deletion of an absent row) and raises, else those clamp."""
    check_plain(base, "apply_delta")
    columns = list(base.columns)
    check_delta_columns(delta, columns, "apply_delta")
    counts = _net([signed(base, 1), delta], columns)
    if strict:
        negative = counts.filter(col(_N) < 0).limit(_SHOWN + 1).collect()
        if negative:
            shown = ", ".join(f"{row} (count {n})" for row, n in
                              zip(_records(negative, columns), (r[_N] for r in negative)))
            raise ValueError(f"apply_delta: deleting absent row(s): {shown}{_more(negative)}")
    return _expand(counts.filter(col(_N) > 0), columns, sign=False)


def delta_between(old: DataFrame, new: DataFrame) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.delta_between` (digest §8
    "Converters"): the group-by over old(-1) ∪ new(+1), zeros dropped, ±1 rows."""
    check_plain(old, "delta_between")
    check_plain(new, "delta_between")
    columns = list(old.columns)
    if set(new.columns) != set(columns):
        raise ValueError(f"delta_between: columns {list(new.columns)} != {columns}")
    return _expand(_net([signed(old, -1), signed(new, 1)], columns), columns, sign=True)


def chain(deltas: Iterable[DataFrame], *, cancel: bool = True) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.chain` (digest §1 "Combining"):
    ``cancel`` nets ±r pairs by the group-by, else the bag union of every row."""
    deltas = list(deltas)
    if not deltas:
        raise ValueError("chain: no deltas (the columns are unknown)")
    columns = data_columns(deltas[0])
    for delta in deltas:
        check_delta_columns(delta, columns, "chain")
    if cancel:
        return _expand(_net(deltas, columns), columns, sign=True)
    return _union_all(deltas, columns + [SIGN])


# ---------------------------------------------------------------- operators

def union(a: DataFrame, b: DataFrame) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.union`: ``unionByName`` in ``a``'s
    column order, signed rows kept."""
    if set(a.columns) != set(b.columns):
        raise ValueError(f"union: columns {list(a.columns)} != {list(b.columns)}")
    return a.unionByName(b)


# ---------------------------------------------------------------- upserts

def chain_upserts(upserts: Iterable[DataFrame], key: Key) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.chain_upserts`: per key the rows of
    its newest ``_seq`` (``max`` over a window per key); one (key, ``_seq``) in two of the
    chained upserts raises (one small action)."""
    upserts = list(upserts)
    if not upserts:
        raise ValueError("chain_upserts: no upserts (the columns are unknown)")
    keys = keys_of(key)
    columns = list(upserts[0].columns)
    for u in upserts:
        if set(u.columns) != set(columns) or not {SEQ, TOMB} <= set(u.columns):
            raise ValueError(f"chain_upserts: columns {list(u.columns)} (need {SEQ}, {TOMB})")
    _need(upserts[0], keys, "chain_upserts")
    versions = keys + [SEQ]
    if len(upserts) > 1:
        distinct_versions = [u.select(*_cols(versions)).distinct() for u in upserts]
        repeated = (_union_all(distinct_versions, versions).groupBy(*_cols(versions))
                    .agg(F.count(F.lit(1)).alias(_N)).filter(col(_N) > 1)
                    .limit(_SHOWN + 1).collect())
        if repeated:
            raise ValueError(f"chain_upserts: repeated (key, {SEQ}): "
                             f"{_records(repeated, versions)}{_more(repeated)}")
    rows = _union_all(upserts, columns)
    newest = F.max(col(SEQ)).over(Window.partitionBy(*_cols(keys)))
    return rows.withColumn(_NEWEST, newest).filter(col(SEQ) == col(_NEWEST)).select(*_cols(columns))


def records_to_upsert(records: DataFrame, seq: int) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.records_to_upsert`: the rows with
    ``_tomb = false``, ``_seq = seq``; a delta with a deletion raises (one small action)."""
    if SIGN in records.columns:
        if records.filter(col(SIGN) < 0).limit(1).collect():
            raise ValueError("records_to_upsert: a delta with deletions has no upsert form")
        records = records.drop(SIGN)
    return records.select(*_cols(records.columns), F.lit(False).alias(TOMB),
                          F.lit(int(seq)).cast(LongType()).alias(SEQ))


def live(latest: DataFrame, columns: list[str]) -> DataFrame:
    """Twin of :func:`staleness_lab.workflows.weak.live`: the non-tombstoned records of
    resolved upserts, as base rows."""
    return latest.filter(~F.coalesce(col(TOMB), F.lit(False))).select(*_cols(columns))


def sort_rows(df: DataFrame) -> DataFrame:
    """``df`` itself: Spark keeps no row order, so there is none to settle (the pandas twin,
    :func:`staleness_lab.workflows.weak.sort_rows`, sorts)."""
    return df


# ---------------------------------------------------------------- increments

def chain_increments(increments: Iterable[DataFrame], key: Key) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.chain_increments`: Σ ``_inc`` (long)
    per key, zero sums dropped."""
    increments = list(increments)
    if not increments:
        raise ValueError("chain_increments: no increments (the columns are unknown)")
    keys = keys_of(key)
    for i in increments:
        _need(i, keys + [INC], "chain_increments")
    rows = reduce(_union_by_name,
                  [i.select(*_cols(keys), col(INC).cast(LongType()).alias(INC)) for i in increments])
    total = rows.groupBy(*_cols(keys)).agg(F.sum(col(INC)).cast(LongType()).alias(INC))
    return total.filter(col(INC) != 0)


def apply_increment(counts: DataFrame, inc: DataFrame, key: Key, count: str = "n") -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.apply_increment` (digest §8 "full
    outer join, sum, drop zeros"): one small action looks for a repeated key in ``counts``
    and for a negative count, and raises as pandas does."""
    keys = keys_of(key)
    if set(counts.columns) != set(keys + [count]):
        raise ValueError(f"apply_increment: counts must be one row per key of {keys + [count]}")
    rows = chain_increments([counts.withColumnRenamed(count, INC), inc], keys)
    repeated = (counts.groupBy(*_cols(keys)).agg(F.count(F.lit(1)).alias(_N))
                .filter(col(_N) > 1)
                .select(F.lit(0).alias(_KIND), *_cols(keys), F.lit(None).cast(LongType()).alias(INC)))
    negative = rows.filter(col(INC) < 0).select(F.lit(1).alias(_KIND), *_cols(keys), col(INC))
    bad = repeated.unionByName(negative).orderBy(col(_KIND)).limit(_SHOWN + 1).collect()
    if bad and bad[0][_KIND] == 0:
        raise ValueError(f"apply_increment: counts must be one row per key of {keys + [count]}")
    if bad:
        raise ValueError(f"apply_increment: negative count(s): "
                         f"{_records(bad, keys + [INC])}{_more(bad)}")
    return rows.select(*_cols(keys), col(INC).alias(count))


# ---------------------------------------------------------------- count, distinct

def count(base: DataFrame, key: Key, count: str = "n") -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.count`: ``groupBy(key).count()`` as
    (key, ``count``) long."""
    keys = keys_of(key)
    _need(base, keys, "count")
    return base.groupBy(*_cols(keys)).agg(F.count(F.lit(1)).cast(LongType()).alias(count))


def count_delta(delta: DataFrame, key: Key) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.count_delta`: Σ ``_sign`` per key as
    an increment, zeros dropped."""
    keys = keys_of(key)
    if SIGN not in delta.columns:
        raise ValueError(f"count_delta: a strong delta needs a {SIGN} column")
    return chain_increments([delta.select(*_cols(keys), col(SIGN).cast(LongType()).alias(INC))], keys)


def distinct(base: DataFrame, key: Key) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.distinct`: the distinct keys."""
    keys = keys_of(key)
    _need(base, keys, "distinct")
    return base.select(*_cols(keys)).distinct()


# ---------------------------------------------------------------- row functions

def _row_function(fn: str, kind: str, frames: Sequence[DataFrame]) -> Any:
    """The Spark version of ``fn`` after the pandas twin's declared checks (kind, inputs,
    required columns): ``ValueError`` without a Spark job."""
    spark_fn = SPARK_FUNCTIONS.get(fn)
    declared = FUNCTIONS.get(fn)
    if spark_fn is None or not isinstance(declared, RowFunction):
        raise ValueError(f"no Spark version of fn {fn!r} (known: {sorted(SPARK_FUNCTIONS)})")
    if declared.kind != kind:
        raise ValueError(f"{fn}: a {declared.kind} function, used as a {kind}")
    if len(frames) != len(declared.requires):
        raise ValueError(f"{fn}: {len(frames)} input(s), expected {len(declared.requires)}")
    for i, (frame, needed) in enumerate(zip(frames, declared.requires)):
        missing = needed - set(frame.columns)
        if missing:
            raise ValueError(f"{fn}: input {i} lacks column(s) {sorted(missing)}")
    return spark_fn


def stateless(fn: str, frame: DataFrame, *, split: bool, outputs: int) -> tuple[DataFrame, ...]:
    """Spark twin of ``Executor._stateless`` (:mod:`staleness_lab.workflows.execute`): the
    map ``fn`` on a base or a delta (``_sign`` rides along), once per output; for a split, the
    predicate's True rows then the others, the first ``outputs`` of the two."""
    spark_fn = _row_function(fn, "split" if split else "map", [frame])
    if split:
        keep = spark_fn(frame)
        return (frame.filter(keep), frame.filter(~keep))[:outputs]
    out = spark_fn(frame)
    return tuple(out for _ in range(outputs))


def opaque(fn: str, frames: Sequence[DataFrame], now: float) -> DataFrame:
    """Spark twin of the executor's opaque widget: the selector ``fn`` on one base per input
    and ``now`` (:func:`staleness_lab.workflows.functions.top_unfetched`, ``periodic``,
    ``adaptive``)."""
    frames = list(frames)
    return _row_function(fn, "selector", frames)(*frames, now)


def keep(frame: DataFrame) -> DataFrame:
    """An operator's internal state kept between invocations (distinct's count per key): the
    frame checkpointed on the executors, so the next invocation's plan does not replay every
    earlier one (twin of :func:`staleness_lab.workflows.pandas_rows.keep`)."""
    return frame.localCheckpoint(eager=True)


class SparkAlgebra(Algebra):
    """The row algebra on Spark DataFrames (module docstring)."""

    apply_delta = staticmethod(apply_delta)
    delta_between = staticmethod(delta_between)
    chain = staticmethod(chain)
    union = staticmethod(union)
    signed = staticmethod(signed)
    check_delta = staticmethod(check_delta_columns)
    merge = staticmethod(merge)
    select = staticmethod(select)
    key_in = staticmethod(key_in)
    chain_upserts = staticmethod(chain_upserts)
    records_to_upsert = staticmethod(records_to_upsert)
    live = staticmethod(live)
    sort_rows = staticmethod(sort_rows)
    chain_increments = staticmethod(chain_increments)
    apply_increment = staticmethod(apply_increment)
    count = staticmethod(count)
    count_delta = staticmethod(count_delta)
    distinct = staticmethod(distinct)
    stateless = staticmethod(stateless)
    opaque = staticmethod(opaque)
    keep = staticmethod(keep)


#: The Spark algebra (the ``spark`` mode's).
SPARK = SparkAlgebra()
