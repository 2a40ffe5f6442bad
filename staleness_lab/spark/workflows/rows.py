"""The row algebra of bases, strong deltas, upserts and increments on Spark DataFrames: the
Spark twins of :mod:`staleness_lab.workflows.rows` and :mod:`staleness_lab.workflows.weak`
(Olston §2.1-§2.5; digest §1 "Encodings", §8 "Rows" and "Converters").

Same representation, same rows (as a multiset: Spark keeps no row order), same column names
and types after ``toPandas()``: ``_sign`` byte (Spark sums are long and are cast back),
``_seq``, ``_inc`` and counts long, ``_tomb`` boolean. Built from Spark SQL built-ins only:
every signed-bag operation is ``groupBy(cols).sum(_sign)`` and ``explode(array_repeat)`` of
the net counts (digest §8 "Converters"); key matches are null-safe (``<=>``), so null keys
group and join together as in pandas' ``dropna=False`` group-bys and ``merge``. Spark has one
null where pandas has two: ``Series.isin`` (``weak._key_in`` on a single key) does not match a
None key with the NaN that pandas' own group-bys write, so e.g. ``weak.increment_to_delta``
misses a None-keyed old count that this module finds.

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
from staleness_lab.workflows.functions import RowFunction
from staleness_lab.workflows.registry import FUNCTIONS
from staleness_lab.workflows.rows import SIGN, Key, data_columns, keys_of
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


def _check_plain(df: DataFrame, what: str) -> None:
    if SIGN in df.columns:
        raise ValueError(f"{what}: a base has no {SIGN} column")


def _check_delta(delta: DataFrame, columns: Sequence[str], what: str) -> None:
    if SIGN not in delta.columns:
        raise ValueError(f"{what}: a strong delta needs a {SIGN} column")
    if set(data_columns(delta)) != set(columns):
        raise ValueError(f"{what}: delta columns {data_columns(delta)} != {list(columns)}")


def _union_by_name(a: DataFrame, b: DataFrame) -> DataFrame:
    return a.unionByName(b)


def _union_all(frames: Sequence[DataFrame], columns: Sequence[str]) -> DataFrame:
    """Bag union of ``frames`` (by name) with ``columns`` in that order."""
    return reduce(_union_by_name, [f.select(*_cols(columns)) for f in frames])


def _signed(df: DataFrame, sign: int) -> DataFrame:
    """Twin of :func:`staleness_lab.workflows.rows.signed`: plain rows with ``_sign`` (byte)."""
    _check_plain(df, "signed")
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


def _key_in(df: DataFrame, keys: list[str], other: DataFrame, *, keep: bool) -> DataFrame:
    """The rows of ``df`` whose key is (``keep``) or is not among ``other``'s keys: a
    null-safe semi or anti join (twin of ``weak._key_in``, pandas ``isin``)."""
    _need(df, keys, "key match")
    _need(other, keys, "key match")
    renamed, match = _renamed_keys(other.select(*_cols(keys)), keys)
    return df.join(renamed, match, "left_semi" if keep else "left_anti")


def _merge(left: DataFrame, right: DataFrame, keys: list[str]) -> DataFrame:
    """Inner join on ``keys`` (null-safe, as pandas ``merge``): left columns, then right's
    non-key columns."""
    overlap = (set(left.columns) & set(right.columns)) - set(keys)
    if overlap:
        raise ValueError(f"join: non-key columns on both sides: {sorted(overlap)}")
    _need(left, keys, "join")
    _need(right, keys, "join")
    renamed, match = _renamed_keys(right, keys)
    extra = [c for c in right.columns if c not in keys]
    return left.join(renamed, match, "inner").select(*_cols(left.columns), *_cols(extra))


def _records(rows: list[Row], columns: Sequence[str]) -> list[dict[str, Any]]:
    return [{c: row[c] for c in columns} for row in rows[:_SHOWN]]


def _more(rows: list[Row]) -> str:
    return " and more" if len(rows) > _SHOWN else ""


# ---------------------------------------------------------------- signed bags

def apply_delta(base: DataFrame, delta: DataFrame, *, strict: bool = True) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.apply_delta` (digest §8
    "Converters"): ``B + Δ`` by ``groupBy(cols).sum(_sign)``; with ``strict`` one small action
    looks for a negative count (a deletion of an absent row) and raises, else those clamp."""
    _check_plain(base, "apply_delta")
    columns = list(base.columns)
    _check_delta(delta, columns, "apply_delta")
    counts = _net([_signed(base, 1), delta], columns)
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
    _check_plain(old, "delta_between")
    _check_plain(new, "delta_between")
    columns = list(old.columns)
    if set(new.columns) != set(columns):
        raise ValueError(f"delta_between: columns {list(new.columns)} != {columns}")
    return _expand(_net([_signed(old, -1), _signed(new, 1)], columns), columns, sign=True)


def chain(deltas: Iterable[DataFrame], *, cancel: bool = True) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.chain` (digest §1 "Combining"):
    ``cancel`` nets ±r pairs by the group-by, else the bag union of every row."""
    deltas = list(deltas)
    if not deltas:
        raise ValueError("chain: no deltas (the columns are unknown)")
    columns = data_columns(deltas[0])
    for delta in deltas:
        _check_delta(delta, columns, "chain")
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


def join(left: DataFrame, right: DataFrame, on: Key) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.join`: inner join of two bases on
    ``on`` (null keys match, as in pandas), left columns then right's non-key columns."""
    _check_plain(left, "join")
    _check_plain(right, "join")
    return _merge(left, right, keys_of(on))


def join_delta_base(delta: DataFrame, base: DataFrame, on: Key, *,
                    side: str = "left") -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.join_delta_base`: ``ΔL ⋈ B`` or
    ``B ⋈ ΔR``, each row signed as its delta row, ``_sign`` last."""
    if side not in ("left", "right"):
        raise ValueError(f"join_delta_base: side must be 'left' or 'right', got {side!r}")
    _check_delta(delta, data_columns(delta), "join_delta_base")
    _check_plain(base, "join_delta_base")
    left, right = (delta, base) if side == "left" else (base, delta)
    out = _merge(left, right, keys_of(on))
    return out.select(*_cols(data_columns(out) + [SIGN]))


def sync_incremental_join(l_old: DataFrame, dl: DataFrame | None, r_old: DataFrame,
                          dr: DataFrame | None, on: Key) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.rows.sync_incremental_join`:
    ``ΔL ⋈ (R_old + ΔR) + L_old ⋈ ΔR``; a side without a chain is None, not both."""
    if dl is None and dr is None:
        raise ValueError("sync_incremental_join: both input chains are empty")
    parts = []
    if dl is not None:
        r_new = r_old if dr is None else apply_delta(r_old, dr)
        parts.append(join_delta_base(dl, r_new, on, side="left"))
    if dr is not None:
        parts.append(join_delta_base(dr, l_old, on, side="right"))
    return parts[0] if len(parts) == 1 else union(*parts)


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


def _latest(base: DataFrame, upsert: DataFrame, keys: list[str]) -> DataFrame:
    latest = chain_upserts([upsert], keys)
    if set(latest.columns) - {SEQ, TOMB} != set(base.columns):
        raise ValueError(f"upsert columns {list(latest.columns)} do not match {list(base.columns)}")
    return latest


def _live(latest: DataFrame, columns: list[str]) -> DataFrame:
    """The non-tombstoned records of resolved upserts, as base rows."""
    return latest.filter(~F.coalesce(col(TOMB), F.lit(False))).select(*_cols(columns))


def apply_upsert(base: DataFrame, upsert: DataFrame, key: Key) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.apply_upsert` (digest §8 "Upsert
    c^{δB}"): ``left_anti`` join of the base with the upserted keys, plus the live records."""
    keys = keys_of(key)
    latest = _latest(base, upsert, keys)
    kept = _key_in(base, keys, latest, keep=False)
    return kept.unionByName(_live(latest, list(base.columns)))


def upsert_to_delta(base: DataFrame, upsert: DataFrame, key: Key) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.upsert_to_delta`: -old row(s) of each
    upserted key, +its live record."""
    keys = keys_of(key)
    latest = _latest(base, upsert, keys)
    old = _key_in(base, keys, latest, keep=True)
    return union(_signed(old, -1), _signed(_live(latest, list(base.columns)), 1))


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


def increment_to_delta(counts: DataFrame, inc: DataFrame, key: Key, count: str = "n") -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.weak.increment_to_delta`: -(k, old)
    +(k, new) per incremented key."""
    keys = keys_of(key)
    total = chain_increments([inc], keys)
    old = _key_in(counts, keys, total, keep=True)
    new = apply_increment(old, total, keys, count)
    return union(_signed(old.select(*_cols(keys + [count])), -1), _signed(new, 1))


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


def distinct_delta(counts_old: DataFrame, delta: DataFrame, key: Key,
                   count: str = "n") -> tuple[DataFrame, DataFrame]:
    """Spark twin of :func:`staleness_lab.workflows.weak.distinct_delta`: +k when a key's
    internal count goes 0 → >0, -k when >0 → 0; returns (Δ of keys, new internal counts)."""
    keys = keys_of(key)
    inc = count_delta(delta, keys)
    before = _key_in(counts_old, keys, inc, keep=True)
    counts_new = apply_increment(counts_old, inc, keys, count)
    after = _key_in(counts_new, keys, inc, keep=True)
    born = _key_in(after, keys, before, keep=False).select(*_cols(keys))
    retired = _key_in(before, keys, after, keep=False).select(*_cols(keys))
    return union(_signed(retired, -1), _signed(born, 1)), counts_new


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
