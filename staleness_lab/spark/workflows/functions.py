"""The row functions (``fn:``) of the evaluation workflows on Spark DataFrames: the Spark twins
of :mod:`staleness_lab.workflows.functions`, built from Spark SQL built-in functions only (no
Python UDFs), giving the same rows, column names and types (digest §5 "Workflows", §8 "Data").

:data:`SPARK_FUNCTIONS` maps each ``fn:`` name to its Spark version, by the pandas twin's kind
(``FUNCTIONS[name].kind``):

* ``map``: ``DataFrame -> DataFrame`` (a base or a strong delta; ``_sign`` rides along);
* ``split``: ``DataFrame -> Column``, the predicate (True rows to the first output; a null
  counts as False, as pandas' ``astype(bool)`` of ``None``);
* ``selector``: ``(*bases, now) -> DataFrame`` of (url, score).

:func:`staleness_lab.spark.workflows.rows.stateless` and ``opaque`` dispatch here by name.

Row order: where pandas breaks a tie by the input's row order (``extract-links``: a source's
latest fetch; ``adaptive``: a URL's fetches at one ``fetched_at``), the Spark twin breaks it by
``monotonically_increasing_id()`` of the input, which is the pandas row order for a frame read
by :func:`~staleness_lab.spark.workflows.rows.from_pandas` (or a union of such), not after a
shuffle. The generators give a URL distinct fetch times, so no such tie arises there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from staleness_lab.workflows.functions import (
    DIGEST_CHARS,
    LINK_SEP,
    SHINGLE_DROPS,
    TOP_K,
    WEEK,
)
from staleness_lab.workflows.rows import SIGN

# Internal column names (never in a result).
_ROW = "__wf_row"
_AT = "__wf_at"
_URL = "__wf_url"
_DEG = "__wf_deg"
_LAST = "__wf_last"
_CHANGED = "__wf_changed"
_SIZE = "__wf_size"
_RANK = "__wf_rank"


def col(name: str) -> Column:
    """The column ``name`` taken literally (back-quoted: dots and spaces are no paths)."""
    return F.col("`" + name.replace("`", "``") + "`")


def _signed(frame: DataFrame, columns: list[str]) -> list[str]:
    """``columns`` plus ``_sign`` when ``frame`` is a delta (twin of ``functions._signed``)."""
    return columns + [SIGN] if SIGN in frame.columns else columns


def _no_nan(column: Column) -> Column:
    """``column`` as a double with NaN as null: pandas sorts NaN last and its ``max`` skips
    NaN, while Spark ranks NaN above every number."""
    value = column.cast("double")
    return F.nanvl(value, F.lit(None).cast("double"))


# ---------------------------------------------------------------- map and split

def digest(content: Column) -> Column:
    """Spark twin of :func:`staleness_lab.workflows.functions.digest`:
    ``substring(sha2(content, 256), 1, 16)`` of the UTF-8 text."""
    return F.substring(F.sha2(content.cast("binary"), 256), 1, DIGEST_CHARS)


def shingle(frame: DataFrame) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.functions.shingle`: rows with content, as
    url, digest, then the other columns but content/ok/links (and ``_sign`` last)."""
    kept = [c for c in frame.columns if c not in SHINGLE_DROPS and c not in ("url", SIGN)]
    rows = frame.filter(col("content").isNotNull())
    return rows.select(col("url"), digest(col("content")).alias("digest"),
                       *[col(c) for c in _signed(frame, kept)])


def log_score(frame: DataFrame) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.functions.log_score`: ``score = log1p(n)``.
    Spark's ``log1p`` is null at or below -1 where numpy's is -inf (at -1) or NaN, so those
    two are spelled out."""
    keys = [c for c in frame.columns if c not in ("n", SIGN)]
    n = col("n").cast("double")
    score = (F.when(n > -1.0, F.log1p(n)).when(n == -1.0, F.lit(float("-inf")))
             .otherwise(F.lit(float("nan"))))
    return frame.select(*[col(c) for c in keys], score.alias("score"),
                        *[col(c) for c in _signed(frame, [])])


def is_news(frame: DataFrame) -> Column:
    """Spark twin of :func:`staleness_lab.workflows.functions.is_news`: the predicate
    ``is_news`` (null as False)."""
    return F.coalesce(col("is_news"), F.lit(False))


def successful(frame: DataFrame) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.functions.successful`:
    ``filter(ok).select(url, fetched_at)`` (and ``_sign``)."""
    return frame.filter(F.coalesce(col("ok"), F.lit(False))).select(
        *[col(c) for c in _signed(frame, ["url", "fetched_at"])])


def extract_links(frame: DataFrame) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.functions.extract_links`: per source (and
    sign) its latest successful fetch by ``fetched_at`` (NaN latest, as pandas sorts it last;
    ties to the later input row), its links exploded, empty targets dropped."""
    per = _signed(frame, ["url"])
    ok = frame.filter(F.coalesce(col("ok"), F.lit(False))).withColumn(
        _ROW, F.monotonically_increasing_id())
    latest = Window.partitionBy(*[col(c) for c in per]).orderBy(
        _no_nan(col("fetched_at")).desc_nulls_first(), col(_ROW).desc())
    ranked = ok.withColumn(_RANK, F.row_number().over(latest)).filter(col(_RANK) == 1)
    targets = F.explode(F.split(col("links"), re.escape(LINK_SEP)))
    exploded = ranked.select(col("url").alias("source"), targets.alias("target"),
                             *[col(c) for c in _signed(frame, [])])
    return exploded.filter(col("target").isNotNull() & (col("target") != ""))


# ---------------------------------------------------------------- crawl selectors

def _ranked(scores: DataFrame, k: int | None = None) -> DataFrame:
    """(url, score double) by score descending, url ascending (nulls last, as pandas); the
    first ``k`` if given (twin of ``functions._ranked``)."""
    out = scores.select(col("url"), col("score").cast("double").alias("score")).orderBy(
        col("score").desc_nulls_last(), col("url").asc_nulls_last())
    return out if k is None else out.limit(k)


def _with_degree(per_url: DataFrame, indegrees: DataFrame) -> DataFrame:
    """``per_url`` (non-null urls) with its indegree as ``_DEG``, 0 when absent."""
    degree = indegrees.select(col("target").alias(_URL), col("n").alias(_DEG))
    joined = per_url.join(degree, col("url") == col(_URL), "left").drop(_URL)
    return joined.withColumn(_DEG, F.coalesce(col(_DEG), F.lit(0)))


def floor_log2(m: Column) -> Column:
    """Spark twin of :func:`staleness_lab.workflows.functions.floor_log2` (exact on positive
    integers): ``length(bin(m)) - 1``."""
    return F.length(F.bin(m.cast("long"))) - 1


def top_unfetched(fetches: DataFrame, indegrees: DataFrame, now: float,
                  k: int = TOP_K) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.functions.top_unfetched`: ``left_anti``
    join (null-safe, as pandas ``isin``), ``orderBy(n desc, url).limit(k)``."""
    fetched = fetches.select(col("url").alias(_URL))
    unfetched = indegrees.join(fetched, col("target").eqNullSafe(col(_URL)), "left_anti")
    return _ranked(unfetched.select(col("target").alias("url"), col("n").alias("score")), k)


def periodic(fetches: DataFrame, indegrees: DataFrame, now: float,
             week: float = WEEK) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.functions.periodic`:
    ``groupBy(url).max(fetched_at)`` (null urls dropped, NaN skipped, as pandas), left join
    of the indegrees, ``now - last > week / (1 + floor_log2(1 + degree))``."""
    last = fetches.filter(col("url").isNotNull()).groupBy(col("url")).agg(
        F.max(_no_nan(col("fetched_at"))).alias(_LAST))
    rows = _with_degree(last, indegrees)
    interval = F.lit(float(week)) / (1 + floor_log2(1 + col(_DEG)))
    age = F.lit(float(now)) - col(_LAST)
    return _ranked(rows.filter(age > interval).select(col("url"), age.alias("score")))


def adaptive(content_digests: DataFrame, indegrees: DataFrame, now: float,
             k: int = TOP_K) -> DataFrame:
    """Spark twin of :func:`staleness_lab.workflows.functions.adaptive`: ``lag(digest)`` over
    a window per url by ``fetched_at`` (NaN last, ties by input row), changed share, priority
    ``degree * share * (now - last)`` in that order, priority > 0, top ``k``."""
    rows = (content_digests.filter(col("url").isNotNull())
            .withColumn(_AT, _no_nan(col("fetched_at")))
            .withColumn(_ROW, F.monotonically_increasing_id()))
    order = Window.partitionBy(col("url")).orderBy(col(_AT).asc_nulls_last(), col(_ROW).asc())
    previous = F.lag(col("digest")).over(order)
    changed = previous.isNotNull() & ~col("digest").eqNullSafe(previous)
    per_url = rows.withColumn(_CHANGED, changed.cast("long")).groupBy(col("url")).agg(
        F.sum(col(_CHANGED)).alias(_CHANGED), F.count(F.lit(1)).alias(_SIZE),
        F.max(col(_AT)).alias(_LAST))
    share = F.when(col(_SIZE) > 1, col(_CHANGED) / (col(_SIZE) - 1)).otherwise(F.lit(0.0))
    priority = col(_DEG) * share * (F.lit(float(now)) - col(_LAST))
    scored = _with_degree(per_url, indegrees).select(col("url"), priority.alias("score"))
    return _ranked(scored.filter(col("score") > 0), k)


#: fn name -> its Spark version (module docstring for the calling conventions).
SPARK_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "shingle": shingle,
    "log-score": log_score,
    "is-news": is_news,
    "successful": successful,
    "extract-links": extract_links,
    "top-unfetched": top_unfetched,
    "periodic": periodic,
    "adaptive": adaptive,
}
