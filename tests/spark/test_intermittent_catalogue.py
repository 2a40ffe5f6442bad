"""The intermittent-query catalogue: 13 queries computed batch by batch equal the one-shot query.

One TPC-H generation (SF 0.01, 7 parts, about 2 s) for the module, in the shared local[2]
session. For every query and k in {1, 3, 7} equal-ish batches of the 7 parts,
``final(union of partial per batch)`` equals ``reference()`` (the standard TPC-H text on all
parts): counts, keys and decimals exactly, averages and Q14's ratio within 1e-9 relative.
"""

from __future__ import annotations

from decimal import Decimal
from functools import reduce
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from staleness_lab.errors import InputError
from staleness_lab.intermittent import tpch
from staleness_lab.spark.intermittent import (CATALOGUE, KINDS, STREAM_COLUMNS, TpchData, arrow_ddl, batches,
                                              compare_results, run_batches, stream_schema)

SCALE, PARTS = 0.01, 7
BATCH_COUNTS = (1, 3, 7)
NAMES = ["Q1", "Q3", "Q4", "Q6", "Q9", "Q10", "Q12", "Q14", "Q19", "CQ1", "CQ2", "CQ3", "CQ4"]


@pytest.fixture(scope="module")
def data(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> TpchData:
    directory, made = tpch.generate(SCALE, PARTS, tmp_path_factory.mktemp("tpch") / "sf-catalogue")
    assert made
    return TpchData(directory)


def reference(data: TpchData, name: str) -> pd.DataFrame:
    return data.reference_result(name)


def assert_same(name: str, got: pd.DataFrame, want: pd.DataFrame, what: str) -> None:
    difference = compare_results(name, got, want)
    assert difference is None, f"{what}: {difference}"


def test_the_catalogue_holds_the_papers_13_queries_with_their_kinds() -> None:
    assert list(CATALOGUE) == NAMES
    kinds = {name: q.kind for name, q in CATALOGUE.items()}
    assert {n for n, k in kinds.items() if k == "stream-stream"} == {"Q3", "Q4", "Q9", "Q10", "Q12"}
    assert {n for n, k in kinds.items() if k == "stream-static"} == {"Q14", "Q19"}
    assert {n for n, k in kinds.items() if k == "stream-only"} == {"Q1", "Q6", "CQ1", "CQ2", "CQ3", "CQ4"}
    for name, q in CATALOGUE.items():
        assert q.name == name and q.kind in KINDS
        assert set(q.static) <= set(tpch.STATIC) and set(q.streams) <= set(tpch.STREAMS)
        assert (q.kind == "stream-stream") == (q.streams == ("orders", "lineitem"))
        if q.kind == "stream-only":
            assert len(q.streams) == 1 and not q.static
        if q.kind == "stream-static":
            assert q.streams == ("lineitem",) and q.static == ("part",)
    assert set(CATALOGUE["Q9"].static) == {"part", "supplier", "partsupp", "nation"}


def test_equal_ish_batches_cover_every_part_once() -> None:
    assert batches(7, 1) == [(1, 7)]
    assert batches(7, 3) == [(1, 3), (4, 5), (6, 7)]
    assert batches(7, 7) == [(k, k) for k in range(1, 8)]
    with pytest.raises(InputError):
        batches(7, 8)


def test_streams_are_read_with_the_explicit_schema_of_every_part(data: TpchData) -> None:
    for table in tpch.STREAMS:
        for k in range(1, PARTS + 1):
            columns = tuple((f.name, arrow_ddl(f.type)) for f in pq.read_schema(data.path(table, k)))
            assert columns == STREAM_COLUMNS[table]
        frame = data.parts(table, 2, 4)
        assert frame.schema == stream_schema(table)
        rows = {f["part"]: f["rows"] for f in data.manifest["files"] if f["table"] == table}
        assert frame.count() == rows[2] + rows[3] + rows[4]
    assert data.parts("orders", 1, PARTS).count() == 15_000


@pytest.mark.parametrize("first,last", [(0, 1), (2, 1), (1, PARTS + 1), (1.0, 2)])
def test_a_bad_part_range_is_refused(data: TpchData, first: Any, last: Any) -> None:
    with pytest.raises(InputError):
        data.parts("orders", first, last)


def test_unknown_tables_and_a_missing_manifest_are_refused(data: TpchData, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a stream"):
        data.parts("part", 1, 1)
    with pytest.raises(InputError, match="not a static table"):
        data.static("orders")
    with pytest.raises(InputError, match="manifest"):
        TpchData(tmp_path)


def test_static_tables_are_loaded_once_and_cached(data: TpchData) -> None:
    first = data.static("part")
    assert data.static("part") is first
    assert first.is_cached
    assert first.count() == 2000  # 200,000 parts per unit of scale


def test_partials_carry_only_sums_and_counts_and_every_group(data: TpchData) -> None:
    for name, q in CATALOGUE.items():
        columns = q.partial(data, 1, 2).columns
        assert not [c for c in columns if c.startswith("avg") or c == "promo_revenue"], name
    assert set(CATALOGUE["Q14"].partial(data, 1, PARTS).columns) == {"promo_revenue_sum", "revenue_sum"}
    # Q3 and Q10: no top-N in the partial, every group is kept
    for name, limit in (("Q3", 10), ("Q10", 20)):
        assert CATALOGUE[name].partial(data, 1, PARTS).count() > limit
        assert len(reference(data, name)) == limit


@pytest.mark.parametrize("name", NAMES)
def test_k_batches_equal_the_single_batch_and_the_reference(data: TpchData, name: str) -> None:
    want = reference(data, name)
    # every query has a result at SF 0.01 with the standard parameters, and no empty aggregate
    assert len(want) >= 1
    assert not want.isna().any().any()
    for k in BATCH_COUNTS:
        got = run_batches(name, data, batches(PARTS, k)).toPandas()
        assert_same(name, got, want, f"{name} in {k} batches")


def test_partials_written_as_parquet_merge_like_in_memory(data: TpchData, tmp_path: Path) -> None:
    """The runner writes each batch's partial to Parquet and merges the files: same result."""
    spark = data.spark
    for name in ("Q1", "Q10", "Q14"):
        q = CATALOGUE[name]
        paths = []
        for i, (first, last) in enumerate(batches(PARTS, 3), start=1):
            path = tmp_path / name / f"{i}.parquet"
            q.partial(data, first, last).write.parquet(str(path))
            paths.append(str(path))
        got = q.final(spark.read.parquet(*paths)).toPandas()
        assert_same(name, got, reference(data, name), f"{name} from Parquet partials")


def test_an_empty_batch_contributes_nothing(data: TpchData) -> None:
    """A batch whose rows all miss the filter yields a NULL sum (Q6, Q14, Q19) or no group:
    the merge ignores it."""
    q = CATALOGUE["Q6"]
    empty = q.partial(data, 1, 1).where("false")
    merged = q.final(reduce(lambda a, b: a.unionByName(b), [empty, q.partial(data, 1, PARTS)])).toPandas()
    assert merged["revenue"].tolist() == reference(data, "Q6")["revenue"].tolist()
    assert isinstance(merged["revenue"][0], Decimal)


def test_result_comparison_names_the_first_difference() -> None:
    want = pd.DataFrame({"l_returnflag": ["A", "N"], "l_linestatus": ["F", "O"], "avg_qty": [Decimal("25.5"), Decimal("3")]})
    q = CATALOGUE["Q1"]
    sub = want[["l_returnflag", "l_linestatus", "avg_qty"]]
    fake = type(q)(q.name, q.kind, q.streams, q.static, q.keys, ("avg_qty",), q.partial, q.final, q.reference)
    assert compare_results(fake, sub.iloc[::-1], sub) is None  # row order is not compared
    close = sub.assign(avg_qty=[Decimal("25.5000000000001"), Decimal("3")])
    assert compare_results(fake, close, sub) is None  # approx columns within 1e-9
    far = sub.assign(avg_qty=[Decimal("25.6"), Decimal("3")])
    assert "avg_qty" in compare_results(fake, far, sub)
    assert "rows" in compare_results(fake, sub.iloc[:1], sub)
    assert "columns" in compare_results(fake, sub[["l_returnflag", "l_linestatus"]], sub)
    exact = type(q)(q.name, q.kind, q.streams, q.static, q.keys, (), q.partial, q.final, q.reference)
    assert "avg_qty" in compare_results(exact, close, sub)  # decimals compare exactly
