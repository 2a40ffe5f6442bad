"""Chandrasekaran & Sudarshan's 13 intermittent queries on Spark: the catalogue.

The paper (digest §5) runs TPC-H Q1, Q3, Q4, Q6, Q9, Q10, Q12, Q14, Q19 and its custom queries
CQ1-CQ4 (Table 3) batch by batch over streamed ``orders`` and ``lineitem`` files, writing one
*partial aggregate* per batch and merging them in one final aggregation (digest §6).

:class:`TpchData` is a handle on one generation of :func:`staleness_lab.intermittent.tpch.generate`: it reads
the manifest, reads parts ``first..last`` of a stream with an explicit schema (no inference) and
loads each static table once, cached.

:data:`CATALOGUE` maps each query name to a :class:`CatalogueQuery`:

* ``partial(data, first, last)``: the query's partial aggregate over parts first..last of its
  streams, as a DataFrame plan (the static tables joined as needed). Partials carry only sums
  and counts, never averages; Q3 and Q10 keep every group (the top-N comes after the merge);
  Q14 keeps both sums (promotional and total revenue).
* ``final(partials)``: merges the union of partials (sums and counts added, AVG = Σsum/Σcount,
  Q14's ratio from the two merged sums) and only then applies ORDER BY and LIMIT.
* ``reference(data)``: the standard TPC-H text (Spark SQL, the usual validation substitution
  parameters) on all parts at once, a formulation independent of ``partial``/``final``. It is a
  :class:`SqlReference` (``sql`` text with ``{table}`` placeholders, ``tables``), so the same text
  also runs on Structured Streaming (:mod:`staleness_lab.spark.intermittent.streaming`).

Stream markers: the texts of the stream-stream queries carry three SQL comments, ignored here,
that mark where the streaming formulation adds what Spark needs for an aggregation after a
stream-stream join in append mode: ``/*within*/`` after the orders-lineitem key equality (the
join's time bound on the two arrival times), ``/*window*/`` at the head of the outermost GROUP BY
(the event-time window) and ``/*arrival*/`` in a subquery's select list (Q9: the arrival time
carried out to that GROUP BY).

Kinds: ``stream-only`` reads one stream and nothing else (Q1, Q6, CQ1-CQ4); ``stream-static``
joins one stream with static tables (Q14, Q19: lineitem with part); ``stream-stream`` joins orders
with lineitem (Q3, Q4, Q9, Q10, Q12), some of them with static tables as well (Q3 and Q10 with
customer, Q10 also nation, Q9 with part, supplier, partsupp and nation; see ``static``). Their
partials rely on the paper's same-batch assumption: part k of orders and of lineitem hold the same
order keys (true of the generated data), so every join partner of a batch is in that batch.

Ties: the standard Q3 (``revenue desc, o_orderdate``) and Q10 (``revenue desc``) orderings leave
ties unspecified, which makes ``LIMIT`` nondeterministic; both here append the group's key
(``l_orderkey``, ``c_custkey``) as the last sort key, in ``final`` and ``reference`` alike.

Types: decimals stay exact (decimal(15,2) inputs; Spark widens sums). Averages and Q14's ratio
are decimal divisions whose rounding can differ in the last digit between the merged and the
one-shot forms; ``CatalogueQuery.approx`` lists those columns (compare within a relative
tolerance), every other column compares exactly. ``keys`` lists the columns that identify a row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any

from staleness_lab.errors import InputError
from staleness_lab.intermittent import tpch

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

KINDS = ("stream-only", "stream-static", "stream-stream")

#: The two streams' columns as written by :func:`staleness_lab.intermittent.tpch.generate` (tpchgen-cli 4 with
#: ``arrival_ts`` added), as Spark DDL types. Checked against part 1's Parquet schema on open.
STREAM_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "orders": (
        ("o_orderkey", "bigint"),
        ("o_custkey", "bigint"),
        ("o_orderstatus", "string"),
        ("o_totalprice", "decimal(15,2)"),
        ("o_orderdate", "date"),
        ("o_orderpriority", "string"),
        ("o_clerk", "string"),
        ("o_shippriority", "int"),
        ("o_comment", "string"),
        ("arrival_ts", "timestamp"),
    ),
    "lineitem": (
        ("l_orderkey", "bigint"),
        ("l_partkey", "bigint"),
        ("l_suppkey", "bigint"),
        ("l_linenumber", "int"),
        ("l_quantity", "decimal(15,2)"),
        ("l_extendedprice", "decimal(15,2)"),
        ("l_discount", "decimal(15,2)"),
        ("l_tax", "decimal(15,2)"),
        ("l_returnflag", "string"),
        ("l_linestatus", "string"),
        ("l_shipdate", "date"),
        ("l_commitdate", "date"),
        ("l_receiptdate", "date"),
        ("l_shipinstruct", "string"),
        ("l_shipmode", "string"),
        ("l_comment", "string"),
        ("arrival_ts", "timestamp"),
    ),
}


def stream_schema(table: str) -> StructType:
    """The explicit Spark schema of stream ``table`` (``orders`` or ``lineitem``)."""
    from pyspark.sql.types import StructType, _parse_datatype_string

    if table not in STREAM_COLUMNS:
        raise InputError("table", f"not a stream: {table!r} (streams: {', '.join(tpch.STREAMS)})")
    schema = StructType()
    for name, ddl in STREAM_COLUMNS[table]:
        schema = schema.add(name, _parse_datatype_string(ddl), nullable=True)
    return schema


def arrow_ddl(arrow_type: Any) -> str:
    """The Spark DDL type of a pyarrow type found in the generated files (for the schema check)."""
    import pyarrow as pa

    if pa.types.is_int64(arrow_type):
        return "bigint"
    if pa.types.is_int32(arrow_type):
        return "int"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_string_view(arrow_type):
        return "string"
    if pa.types.is_decimal(arrow_type):
        return f"decimal({arrow_type.precision},{arrow_type.scale})"
    if pa.types.is_date32(arrow_type):
        return "date"
    if pa.types.is_timestamp(arrow_type) and arrow_type.tz is not None:
        return "timestamp"
    return f"unsupported({arrow_type})"


class TpchData:
    """One TPC-H generation (``tpch.generate``'s directory) as Spark DataFrames.

    ``parts(table, first, last)`` reads parts first..last (1-based, inclusive) of a stream with
    its explicit schema; ``static(name)`` loads a static table once per session and caches it.
    The session is always :func:`staleness_lab.spark.get_spark`'s.

    The directory must hold a generation of this program's: another program's manifest (or one
    that is no JSON object) is an :class:`InputError` naming ``data``, never a KeyError
    (:func:`staleness_lab.intermittent.tpch.check_generation`). Its files are checked where they
    are used (a missing part names its batch and query); ``tpch run --data`` checks every
    file's size and sha256 before Spark starts.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        manifest = tpch.check_generation(self.directory, "data", files=False)
        self.manifest: dict[str, Any] = manifest
        self.scale: float = manifest["scale"]
        self.n_parts: int = manifest["parts"]
        self._paths: dict[tuple[str, int | None], Path] = {
            (f["table"], f["part"]): self.directory / f["path"] for f in manifest["files"]}
        for table in tpch.STREAMS:
            self._check_schema(table)
        self._static: dict[str, DataFrame] = {}
        self._static_session: SparkSession | None = None
        self._references: dict[str, pd.DataFrame] = {}

    def __repr__(self) -> str:
        return f"TpchData({str(self.directory)!r}, scale={self.scale:g}, parts={self.n_parts})"

    @property
    def spark(self) -> SparkSession:
        from staleness_lab.spark import get_spark

        return get_spark()

    def path(self, table: str, part: int | None = None) -> Path:
        """The file of stream ``table``'s part ``part``, or of static ``table`` (part None)."""
        try:
            return self._paths[(table, part)]
        except KeyError:
            what = f"{table} part {part}" if part is not None else f"static table {table}"
            raise InputError("data", f"{self.directory}: the manifest lists no {what}") from None

    def _check_schema(self, table: str) -> None:
        import pyarrow.parquet as pq

        first = self.path(table, 1)
        try:
            found = tuple((f.name, arrow_ddl(f.type)) for f in pq.read_schema(first))
        except OSError as err:
            raise InputError("data", f"{first}: cannot read its Parquet schema ({err})") from None
        if found != STREAM_COLUMNS[table]:
            raise InputError("data", f"{first}: columns {found} differ from the expected {STREAM_COLUMNS[table]}")

    def part_paths(self, table: str, first: int, last: int) -> list[Path]:
        """The files of parts first..last (inclusive, 1-based) of stream ``table``."""
        if table not in tpch.STREAMS:
            raise InputError("table", f"not a stream: {table!r} (streams: {', '.join(tpch.STREAMS)})")
        for name, value in (("first", first), ("last", last)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(name, f"must be an integer, got {value!r}")
        if not 1 <= first <= last <= self.n_parts:
            raise InputError("parts", f"need 1 <= first <= last <= {self.n_parts}, got {first}..{last}")
        return [self.path(table, k) for k in range(first, last + 1)]

    def parts(self, table: str, first: int, last: int) -> DataFrame:
        """Parts first..last (inclusive, 1-based) of stream ``table``, with its explicit schema."""
        paths = self.part_paths(table, first, last)
        return self.spark.read.schema(stream_schema(table)).parquet(*(str(p) for p in paths))

    def all_parts(self, table: str) -> DataFrame:
        """Every part of stream ``table``."""
        return self.parts(table, 1, self.n_parts)

    def static(self, name: str) -> DataFrame:
        """Static table ``name``, read once and cached (reloaded if the session was replaced)."""
        if name not in tpch.STATIC:
            raise InputError("table", f"not a static table: {name!r} (static: {', '.join(tpch.STATIC)})")
        spark = self.spark
        if self._static_session is not spark:
            self._static = {}
            self._static_session = spark
        if name not in self._static:
            self._static[name] = spark.read.parquet(str(self.path(name))).cache()
        return self._static[name]

    def reference_result(self, name: str) -> pd.DataFrame:
        """``CATALOGUE[name].reference(self)`` collected as pandas, computed once per handle (the
        generation's files do not change): what every executed or streamed result is checked against."""
        if name not in self._references:
            self._references[name] = CATALOGUE[name].reference(self).toPandas()
        return self._references[name]


@dataclass(frozen=True)
class SqlReference:
    """A query's reference formulation: Spark SQL text whose ``{table}`` placeholders name
    ``tables``. Called on a :class:`TpchData`, it binds every part of the streams and the cached
    static tables (:func:`_sql`); :mod:`staleness_lab.spark.intermittent.streaming` binds the
    same text to streaming DataFrames instead."""

    sql: str
    tables: tuple[str, ...]

    def __call__(self, data: TpchData) -> DataFrame:
        return _sql(data, self.sql, self.tables)


@dataclass(frozen=True)
class CatalogueQuery:
    """One catalogue query: how to compute a batch's partial, merge partials, and the reference."""

    name: str
    kind: str
    #: The streams a batch reads (parts first..last of each).
    streams: tuple[str, ...]
    #: The static tables joined.
    static: tuple[str, ...]
    #: Columns identifying a result row (its group keys; empty for a one-row result).
    keys: tuple[str, ...]
    #: Result columns from a division (averages, Q14's ratio): compare within a relative tolerance.
    approx: tuple[str, ...]
    partial: Callable[[TpchData, int, int], DataFrame]
    final: Callable[[DataFrame], DataFrame]
    #: The reference formulation: ``reference(data)`` is the query on all parts at once.
    reference: SqlReference
    description: str = ""

    @property
    def sql(self) -> str:
        """The reference's Spark SQL text (``{table}`` placeholders, stream markers as comments)."""
        return self.reference.sql

    @property
    def tables(self) -> tuple[str, ...]:
        """The tables the reference's text names, streams and static ones."""
        return self.reference.tables


# --- helpers -------------------------------------------------------------------------------------

def _F() -> Any:
    from pyspark.sql import functions as F

    return F


def _dec(text: str) -> Any:
    return _F().lit(Decimal(text))


def _day(value: str) -> Any:
    return _F().lit(date.fromisoformat(value))


def _revenue() -> Any:
    """l_extendedprice * (1 - l_discount), as TPC-H writes it."""
    F = _F()
    return F.col("l_extendedprice") * (F.lit(1) - F.col("l_discount"))


def _sql(data: TpchData, text: str, tables: tuple[str, ...]) -> DataFrame:
    """``text`` with ``{table}`` placeholders bound to every part of the streams and the cached
    static tables (Spark's DataFrame parameters: temporary views under unique names)."""
    frames = {t: (data.all_parts(t) if t in tpch.STREAMS else data.static(t)) for t in tables}
    return data.spark.sql(text, **frames)


def _merge_sums(partials: DataFrame, keys: tuple[str, ...], sums: tuple[str, ...]) -> DataFrame:
    """Group the union of partials by ``keys`` and add up the columns ``sums``."""
    F = _F()
    aggs = [F.sum(c).alias(c) for c in sums]
    return partials.groupBy(*keys).agg(*aggs) if keys else partials.agg(*aggs)


# --- Q1: pricing summary report (lineitem only) ----------------------------------------------------

Q1_SHIPDATE = "1998-09-02"  # date '1998-12-01' - interval '90' day
Q1_SUMS = ("sum_qty", "sum_base_price", "sum_disc_price", "sum_charge", "sum_disc", "count_order")


def q1_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    li = data.parts("lineitem", first, last).where(F.col("l_shipdate") <= _day(Q1_SHIPDATE))
    return li.groupBy("l_returnflag", "l_linestatus").agg(
        F.sum("l_quantity").alias("sum_qty"),
        F.sum("l_extendedprice").alias("sum_base_price"),
        F.sum(_revenue()).alias("sum_disc_price"),
        F.sum(_revenue() * (F.lit(1) + F.col("l_tax"))).alias("sum_charge"),
        F.sum("l_discount").alias("sum_disc"),
        F.count(F.lit(1)).alias("count_order"),
    )


def q1_final(partials: DataFrame) -> DataFrame:
    F = _F()
    merged = _merge_sums(partials, ("l_returnflag", "l_linestatus"), Q1_SUMS)
    return merged.select(
        "l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "sum_disc_price", "sum_charge",
        (F.col("sum_qty") / F.col("count_order")).alias("avg_qty"),
        (F.col("sum_base_price") / F.col("count_order")).alias("avg_price"),
        (F.col("sum_disc") / F.col("count_order")).alias("avg_disc"),
        "count_order",
    ).orderBy("l_returnflag", "l_linestatus")


q1_reference = SqlReference("""
        select l_returnflag, l_linestatus,
               sum(l_quantity) as sum_qty,
               sum(l_extendedprice) as sum_base_price,
               sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
               sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
               avg(l_quantity) as avg_qty,
               avg(l_extendedprice) as avg_price,
               avg(l_discount) as avg_disc,
               count(*) as count_order
        from {lineitem}
        where l_shipdate <= date '1998-12-01' - interval '90' day
        group by l_returnflag, l_linestatus
        order by l_returnflag, l_linestatus""", ("lineitem",))


# --- Q3: shipping priority (customer, orders, lineitem) --------------------------------------------

Q3_KEYS = ("l_orderkey", "o_orderdate", "o_shippriority")


def q3_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    cust = data.static("customer").where(F.col("c_mktsegment") == "BUILDING").select("c_custkey")
    orders = data.parts("orders", first, last).where(F.col("o_orderdate") < _day("1995-03-15"))
    li = data.parts("lineitem", first, last).where(F.col("l_shipdate") > _day("1995-03-15"))
    joined = (orders.join(cust, orders.o_custkey == cust.c_custkey)
              .join(li, li.l_orderkey == orders.o_orderkey))
    return joined.groupBy(*Q3_KEYS).agg(F.sum(_revenue()).alias("revenue"))  # every group


def q3_final(partials: DataFrame) -> DataFrame:
    F = _F()
    merged = _merge_sums(partials, Q3_KEYS, ("revenue",))
    return (merged.select("l_orderkey", "revenue", "o_orderdate", "o_shippriority")
            .orderBy(F.col("revenue").desc(), "o_orderdate", "l_orderkey").limit(10))


q3_reference = SqlReference("""
        select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
        from {customer}, {orders}, {lineitem}
        where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey /*within*/
          and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
        group by /*window*/ l_orderkey, o_orderdate, o_shippriority
        order by revenue desc, o_orderdate, l_orderkey
        limit 10""", ("customer", "orders", "lineitem"))


# --- Q4: order priority checking (orders semi-join lineitem) ---------------------------------------

def q4_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    orders = data.parts("orders", first, last).where(
        (F.col("o_orderdate") >= _day("1993-07-01")) & (F.col("o_orderdate") < _day("1993-10-01")))
    late = data.parts("lineitem", first, last).where(F.col("l_commitdate") < F.col("l_receiptdate"))
    exists = orders.join(late, orders.o_orderkey == late.l_orderkey, "left_semi")
    return exists.groupBy("o_orderpriority").agg(F.count(F.lit(1)).alias("order_count"))


def q4_final(partials: DataFrame) -> DataFrame:
    return _merge_sums(partials, ("o_orderpriority",), ("order_count",)).orderBy("o_orderpriority")


#: TPC-H's ``EXISTS (select * from lineitem where ...)`` as the left semi join it is: Spark refuses
#: a subquery over a stream ([INVALID_SUBQUERY_EXPRESSION.STREAMING_QUERY]) but runs a
#: stream-stream left semi join with watermarks, so the one text serves batch and streaming.
q4_reference = SqlReference("""
        select o_orderpriority, count(*) as order_count
        from {orders} left semi join {lineitem}
          on l_orderkey = o_orderkey /*within*/ and l_commitdate < l_receiptdate
        where o_orderdate >= date '1993-07-01' and o_orderdate < date '1993-07-01' + interval '3' month
        group by /*window*/ o_orderpriority
        order by o_orderpriority""", ("orders", "lineitem"))


# --- Q6: forecasting revenue change (lineitem only) ------------------------------------------------

def q6_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    li = data.parts("lineitem", first, last).where(
        (F.col("l_shipdate") >= _day("1994-01-01")) & (F.col("l_shipdate") < _day("1995-01-01"))
        & F.col("l_discount").between(_dec("0.05"), _dec("0.07")) & (F.col("l_quantity") < F.lit(24)))
    return li.agg(F.sum(F.col("l_extendedprice") * F.col("l_discount")).alias("revenue"))


def q6_final(partials: DataFrame) -> DataFrame:
    return _merge_sums(partials, (), ("revenue",))


q6_reference = SqlReference("""
        select sum(l_extendedprice * l_discount) as revenue
        from {lineitem}
        where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval '1' year
          and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24""", ("lineitem",))


# --- Q9: product type profit measure (orders, lineitem, part, supplier, partsupp, nation) ----------

def q9_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    part = data.static("part").where(F.col("p_name").like("%green%")).select("p_partkey")
    supplier = data.static("supplier").select("s_suppkey", "s_nationkey")
    partsupp = data.static("partsupp").select("ps_partkey", "ps_suppkey", "ps_supplycost")
    nation = data.static("nation").select("n_nationkey", "n_name")
    li = data.parts("lineitem", first, last)
    orders = data.parts("orders", first, last).select("o_orderkey", "o_orderdate")
    joined = (li.join(part, li.l_partkey == part.p_partkey)
              .join(supplier, li.l_suppkey == supplier.s_suppkey)
              .join(partsupp, (partsupp.ps_suppkey == li.l_suppkey) & (partsupp.ps_partkey == li.l_partkey))
              .join(orders, orders.o_orderkey == li.l_orderkey)
              .join(nation, supplier.s_nationkey == nation.n_nationkey))
    amount = _revenue() - F.col("ps_supplycost") * F.col("l_quantity")
    profit = joined.select(F.col("n_name").alias("nation"), F.year("o_orderdate").alias("o_year"),
                           amount.alias("amount"))
    return profit.groupBy("nation", "o_year").agg(F.sum("amount").alias("sum_profit"))


def q9_final(partials: DataFrame) -> DataFrame:
    F = _F()
    return (_merge_sums(partials, ("nation", "o_year"), ("sum_profit",))
            .orderBy("nation", F.col("o_year").desc()))


q9_reference = SqlReference("""
        select nation, o_year, sum(amount) as sum_profit
        from (select /*arrival*/ n_name as nation, extract(year from o_orderdate) as o_year,
                     l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
              from {part}, {supplier}, {lineitem}, {partsupp}, {orders}, {nation}
              where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey
                and p_partkey = l_partkey and o_orderkey = l_orderkey /*within*/ and s_nationkey = n_nationkey
                and p_name like '%green%') as profit
        group by /*window*/ nation, o_year
        order by nation, o_year desc""", ("part", "supplier", "lineitem", "partsupp", "orders", "nation"))


# --- Q10: returned item reporting (customer, orders, lineitem, nation) -----------------------------

Q10_KEYS = ("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")


def q10_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    customer = data.static("customer")
    nation = data.static("nation").select("n_nationkey", "n_name")
    orders = data.parts("orders", first, last).where(
        (F.col("o_orderdate") >= _day("1993-10-01")) & (F.col("o_orderdate") < _day("1994-01-01")))
    li = data.parts("lineitem", first, last).where(F.col("l_returnflag") == "R")
    joined = (orders.join(li, li.l_orderkey == orders.o_orderkey)
              .join(customer, customer.c_custkey == orders.o_custkey)
              .join(nation, customer.c_nationkey == nation.n_nationkey))
    return joined.groupBy(*Q10_KEYS).agg(F.sum(_revenue()).alias("revenue"))  # every group


def q10_final(partials: DataFrame) -> DataFrame:
    F = _F()
    merged = _merge_sums(partials, Q10_KEYS, ("revenue",))
    return (merged.select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
            .orderBy(F.col("revenue").desc(), "c_custkey").limit(20))


q10_reference = SqlReference("""
        select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue,
               c_acctbal, n_name, c_address, c_phone, c_comment
        from {customer}, {orders}, {lineitem}, {nation}
        where c_custkey = o_custkey and l_orderkey = o_orderkey /*within*/
          and o_orderdate >= date '1993-10-01' and o_orderdate < date '1993-10-01' + interval '3' month
          and l_returnflag = 'R' and c_nationkey = n_nationkey
        group by /*window*/ c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
        order by revenue desc, c_custkey
        limit 20""", ("customer", "orders", "lineitem", "nation"))


# --- Q12: shipping modes and order priority (orders, lineitem) -------------------------------------

def q12_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    orders = data.parts("orders", first, last).select("o_orderkey", "o_orderpriority")
    li = data.parts("lineitem", first, last).where(
        F.col("l_shipmode").isin("MAIL", "SHIP") & (F.col("l_commitdate") < F.col("l_receiptdate"))
        & (F.col("l_shipdate") < F.col("l_commitdate"))
        & (F.col("l_receiptdate") >= _day("1994-01-01")) & (F.col("l_receiptdate") < _day("1995-01-01")))
    high = F.col("o_orderpriority").isin("1-URGENT", "2-HIGH")
    joined = orders.join(li, orders.o_orderkey == li.l_orderkey)
    return joined.groupBy("l_shipmode").agg(
        F.sum(F.when(high, 1).otherwise(0)).alias("high_line_count"),
        F.sum(F.when(high, 0).otherwise(1)).alias("low_line_count"))


def q12_final(partials: DataFrame) -> DataFrame:
    return _merge_sums(partials, ("l_shipmode",), ("high_line_count", "low_line_count")).orderBy("l_shipmode")


q12_reference = SqlReference("""
        select l_shipmode,
               sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end)
                   as high_line_count,
               sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end)
                   as low_line_count
        from {orders}, {lineitem}
        where o_orderkey = l_orderkey /*within*/ and l_shipmode in ('MAIL', 'SHIP')
          and l_commitdate < l_receiptdate and l_shipdate < l_commitdate
          and l_receiptdate >= date '1994-01-01' and l_receiptdate < date '1994-01-01' + interval '1' year
        group by /*window*/ l_shipmode
        order by l_shipmode""", ("orders", "lineitem"))


# --- Q14: promotion effect (lineitem, part) --------------------------------------------------------

def q14_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    part = data.static("part").select("p_partkey", "p_type")
    li = data.parts("lineitem", first, last).where(
        (F.col("l_shipdate") >= _day("1995-09-01")) & (F.col("l_shipdate") < _day("1995-10-01")))
    joined = li.join(part, li.l_partkey == part.p_partkey)
    return joined.agg(
        F.sum(F.when(F.col("p_type").startswith("PROMO"), _revenue()).otherwise(F.lit(0))).alias("promo_revenue_sum"),
        F.sum(_revenue()).alias("revenue_sum"))  # both sums: the ratio only after the merge


def q14_final(partials: DataFrame) -> DataFrame:
    F = _F()
    merged = _merge_sums(partials, (), ("promo_revenue_sum", "revenue_sum"))
    return merged.select((_dec("100.00") * F.col("promo_revenue_sum") / F.col("revenue_sum")).alias("promo_revenue"))


q14_reference = SqlReference("""
        select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
               / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
        from {lineitem}, {part}
        where l_partkey = p_partkey
          and l_shipdate >= date '1995-09-01' and l_shipdate < date '1995-09-01' + interval '1' month""",
                ("lineitem", "part"))


# --- Q19: discounted revenue (lineitem, part) ------------------------------------------------------

Q19_CLAUSES = (  # brand, containers, quantity range, size upper bound
    ("Brand#12", ("SM CASE", "SM BOX", "SM PACK", "SM PKG"), 1, 11, 5),
    ("Brand#23", ("MED BAG", "MED BOX", "MED PKG", "MED PACK"), 10, 20, 10),
    ("Brand#34", ("LG CASE", "LG BOX", "LG PACK", "LG PKG"), 20, 30, 15),
)


def q19_partial(data: TpchData, first: int, last: int) -> DataFrame:
    F = _F()
    part = data.static("part").select("p_partkey", "p_brand", "p_container", "p_size")
    li = data.parts("lineitem", first, last).where(
        F.col("l_shipmode").isin("AIR", "AIR REG") & (F.col("l_shipinstruct") == "DELIVER IN PERSON"))
    clauses = [
        (F.col("p_brand") == brand) & F.col("p_container").isin(*containers)
        & (F.col("l_quantity") >= F.lit(low)) & (F.col("l_quantity") <= F.lit(high))
        & F.col("p_size").between(1, size)
        for brand, containers, low, high, size in Q19_CLAUSES]
    joined = li.join(part, li.l_partkey == part.p_partkey).where(reduce(lambda a, b: a | b, clauses))
    return joined.agg(F.sum(_revenue()).alias("revenue"))


def q19_final(partials: DataFrame) -> DataFrame:
    return _merge_sums(partials, (), ("revenue",))


q19_reference = SqlReference("""
        select sum(l_extendedprice * (1 - l_discount)) as revenue
        from {lineitem}, {part}
        where (p_partkey = l_partkey and p_brand = 'Brand#12'
               and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
               and l_quantity >= 1 and l_quantity <= 1 + 10 and p_size between 1 and 5
               and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
           or (p_partkey = l_partkey and p_brand = 'Brand#23'
               and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
               and l_quantity >= 10 and l_quantity <= 10 + 10 and p_size between 1 and 10
               and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
           or (p_partkey = l_partkey and p_brand = 'Brand#34'
               and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
               and l_quantity >= 20 and l_quantity <= 20 + 10 and p_size between 1 and 15
               and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')""",
                ("lineitem", "part"))


# --- CQ1-CQ4: the paper's custom counts (Table 3) --------------------------------------------------

def _count_partial(table: str, key: str | None, alias: str) -> Callable[[TpchData, int, int], DataFrame]:
    def partial(data: TpchData, first: int, last: int) -> DataFrame:
        F = _F()
        rows = data.parts(table, first, last)
        count = F.count(F.lit(1)).alias(alias)
        return rows.groupBy(key).agg(count) if key else rows.agg(count)
    return partial


def _count_final(key: str | None, alias: str) -> Callable[[DataFrame], DataFrame]:
    def final(partials: DataFrame) -> DataFrame:
        merged = _merge_sums(partials, (key,) if key else (), (alias,))
        return merged.select(key, alias).orderBy(key) if key else merged
    return final


def _count_reference(table: str, key: str | None, alias: str) -> SqlReference:
    text = (f"select {key}, count(*) as {alias} from {{{table}}} group by {key} order by {key}" if key
            else f"select count(*) as {alias} from {{{table}}}")
    return SqlReference(text, (table,))


def _count_query(name: str, table: str, key: str | None, alias: str, description: str) -> CatalogueQuery:
    return CatalogueQuery(name, "stream-only", (table,), (), (key,) if key else (), (),
                          _count_partial(table, key, alias), _count_final(key, alias),
                          _count_reference(table, key, alias), description)


CATALOGUE: dict[str, CatalogueQuery] = {q.name: q for q in (
    CatalogueQuery("Q1", "stream-only", ("lineitem",), (), ("l_returnflag", "l_linestatus"),
                   ("avg_qty", "avg_price", "avg_disc"), q1_partial, q1_final, q1_reference,
                   "pricing summary report; partial: 4 sums + sum(l_discount) + count per group; "
                   "final: sums added, the 3 AVGs as Σsum/Σcount"),
    CatalogueQuery("Q3", "stream-stream", ("orders", "lineitem"), ("customer",), ("l_orderkey",), (),
                   q3_partial, q3_final, q3_reference,
                   "shipping priority; partial: revenue per order, every group; final: sum, top 10"),
    CatalogueQuery("Q4", "stream-stream", ("orders", "lineitem"), (), ("o_orderpriority",), (),
                   q4_partial, q4_final, q4_reference,
                   "order priority checking; partial: semi-join count per priority; final: counts added"),
    CatalogueQuery("Q6", "stream-only", ("lineitem",), (), (), (), q6_partial, q6_final, q6_reference,
                   "forecasting revenue change; partial: one sum; final: sums added"),
    CatalogueQuery("Q9", "stream-stream", ("orders", "lineitem"), ("part", "supplier", "partsupp", "nation"),
                   ("nation", "o_year"), (), q9_partial, q9_final, q9_reference,
                   "product type profit; partial: profit per nation and year; final: sums added"),
    CatalogueQuery("Q10", "stream-stream", ("orders", "lineitem"), ("customer", "nation"), ("c_custkey",), (),
                   q10_partial, q10_final, q10_reference,
                   "returned item reporting; partial: revenue per customer, every group; final: sum, top 20"),
    CatalogueQuery("Q12", "stream-stream", ("orders", "lineitem"), (), ("l_shipmode",), (),
                   q12_partial, q12_final, q12_reference,
                   "shipping modes; partial: high/low line counts per mode; final: counts added"),
    CatalogueQuery("Q14", "stream-static", ("lineitem",), ("part",), (), ("promo_revenue",),
                   q14_partial, q14_final, q14_reference,
                   "promotion effect; partial: promo and total revenue sums; final: 100 * Σpromo / Σtotal"),
    CatalogueQuery("Q19", "stream-static", ("lineitem",), ("part",), (), (), q19_partial, q19_final, q19_reference,
                   "discounted revenue; partial: one sum over the 3 clauses; final: sums added"),
    _count_query("CQ1", "orders", None, "total_orders", "count(*) on orders"),
    _count_query("CQ2", "orders", "o_orderpriority", "total_orders", "count(*) on orders by o_orderpriority"),
    _count_query("CQ3", "lineitem", "l_suppkey", "total_items", "count(*) on lineitem by l_suppkey"),
    _count_query("CQ4", "lineitem", "l_partkey", "total_items", "count(*) on lineitem by l_partkey"),
)}


#: Relative tolerance for ``CatalogueQuery.approx`` columns (digest §9 check 11: averages within 1e-9).
RESULT_TOLERANCE = 1e-9


def compare_results(query: CatalogueQuery | str, got: pd.DataFrame, want: pd.DataFrame,
                    rel: float = RESULT_TOLERANCE) -> str | None:
    """None when ``got`` equals ``want`` as results of ``query``, else the first difference in
    words. Rows are matched after sorting by the query's keys (row order is not compared);
    keys, counts and decimals must be equal, ``approx`` columns within ``rel`` relative."""
    import math

    q = CATALOGUE[query] if isinstance(query, str) else query
    if list(got.columns) != list(want.columns):
        return f"columns {list(got.columns)} differ from {list(want.columns)}"
    if len(got) != len(want):
        return f"{len(got)} rows where {len(want)} were expected"
    if q.keys:
        got = got.sort_values(list(q.keys), kind="stable")
        want = want.sort_values(list(q.keys), kind="stable")
    for column in want.columns:
        for row, (a, b) in enumerate(zip(got[column].tolist(), want[column].tolist())):
            if column in q.approx and a is not None and b is not None:
                same = math.isclose(float(a), float(b), rel_tol=rel, abs_tol=0.0)
            else:
                same = a == b
            if not same:
                return f"column {column!r}, row {row} (by {', '.join(q.keys) or 'position'}): {a!r} != {b!r}"
    return None


def batches(n_parts: int, k: int) -> list[tuple[int, int]]:
    """``k`` batches of ``n_parts`` parts as (first, last) ranges, sizes differing by at most 1
    (the larger ones first)."""
    if not 1 <= k <= n_parts:
        raise InputError("batches", f"need 1 <= k <= {n_parts}, got {k}")
    size, extra = divmod(n_parts, k)
    out, first = [], 1
    for i in range(k):
        last = first + size + (1 if i < extra else 0) - 1
        out.append((first, last))
        first = last + 1
    return out


def run_batches(query: CatalogueQuery | str, data: TpchData, ranges: list[tuple[int, int]]) -> DataFrame:
    """``final`` of the union of ``partial`` over each (first, last) range: the query computed
    intermittently, without writing partials (the runner writes them)."""
    q = CATALOGUE[query] if isinstance(query, str) else query
    partials = [q.partial(data, first, last) for first, last in ranges]
    return q.final(reduce(lambda a, b: a.unionByName(b), partials))
