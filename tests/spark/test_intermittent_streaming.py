"""The catalogue's queries on Structured Streaming equal the batch results, at a measured cost.

One TPC-H generation (SF 0.01, 6 parts) for the module, in the shared local[2] session. CQ2
streams at 1 file per trigger once for the module (with ``recentProgress`` lowered to 2 updates,
restored after), which three tests read: equality with the batch reference, cost above the single
batch, and a listener that saw every micro-batch. Q12 (stream-stream, append mode behind a
sentinel part) equals the batch result, and so does Q4's left semi join; TPC-H's own EXISTS text
for Q4 is refused with Spark's reason.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from staleness_lab.errors import InputError
from staleness_lab.intermittent import tpch
from staleness_lab.spark.intermittent.catalogue import CATALOGUE, SqlReference, TpchData
from staleness_lab.spark.intermittent.steps import run_final, run_partial
from staleness_lab.spark.intermittent.streaming import (TRIGGERS, StreamRun, _stage, compare_to_batch,
                                                        files_per_trigger, split_order, stream_query, stream_rows)

SCALE, PARTS = 0.01, 6
RETENTION = "spark.sql.streaming.numRecentProgressUpdates"


@pytest.fixture(scope="module")
def data(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> TpchData:
    directory, made = tpch.generate(SCALE, PARTS, tmp_path_factory.mktemp("tpch") / "sf-streaming")
    assert made
    return TpchData(directory)


@pytest.fixture(scope="module")
def cq2_one_per_trigger(data: TpchData) -> StreamRun:
    """CQ2 at 1 file per trigger, with recentProgress keeping only 2 updates during the run."""
    spark = data.spark
    before = spark.conf.get(RETENTION, None)
    spark.conf.set(RETENTION, "2")
    try:
        return stream_query("CQ2", data, "default")
    finally:
        if before is None:
            spark.conf.unset(RETENTION)
        else:
            spark.conf.set(RETENTION, before)


def test_trigger_names_map_to_files_per_trigger() -> None:
    # the paper's own P: 4500 files, one per second
    assert [files_per_trigger(t, 4500) for t in TRIGGERS] == [1, 300, 600, 1800, 2400, None]
    # P = 450: the bench profile
    assert [files_per_trigger(t, 450) for t in TRIGGERS] == [1, 30, 60, 180, 240, None]
    # P = 7: 0.47 -> at least 1, 0.93 -> 1, 2.8 -> 3, 3.73 -> 4
    assert [files_per_trigger(t, 7) for t in TRIGGERS] == [1, 1, 1, 3, 4, None]
    assert files_per_trigger("5min", 22) == 1  # 1.47
    assert files_per_trigger("5min", 23) == 2  # 1.53
    assert files_per_trigger("10min", 15) == 2  # exactly 2
    assert files_per_trigger(3, 7) == 3 and files_per_trigger(None, 7) is None


@pytest.mark.parametrize("trigger", ["2min", "oneshot", "", 0, -1, True, 1.5])
def test_a_bad_trigger_is_refused(trigger: Any) -> None:
    with pytest.raises(InputError, match="trigger"):
        files_per_trigger(trigger, 7)


def test_a_bad_query_or_part_count_is_refused(data: TpchData) -> None:
    with pytest.raises(InputError, match="parts"):
        files_per_trigger("default", 0)
    with pytest.raises(InputError, match="query"):
        stream_query("Q99", data)


def test_the_final_order_by_is_split_off_at_the_top_level() -> None:
    body, tail = split_order(CATALOGUE["Q3"].sql)
    assert " ".join(tail.split()) == "order by revenue desc, o_orderdate, l_orderkey limit 10"
    assert "order by" not in body.lower()
    assert split_order(CATALOGUE["CQ1"].sql) == (CATALOGUE["CQ1"].sql, "")
    text = "select a from (select a from t order by a) x"
    assert split_order(text) == (text, "")


def test_every_stream_stream_text_carries_its_stream_markers() -> None:
    for q in CATALOGUE.values():
        marked = "/*within*/" in q.sql and "/*window*/" in q.sql
        assert marked == (q.kind == "stream-stream"), q.name


def test_cq2_streamed_equals_the_batch_result(data: TpchData, cq2_one_per_trigger: StreamRun) -> None:
    run = cq2_one_per_trigger
    assert (run.status, run.reason, run.output_mode, run.files_per_trigger) == ("ok", "", "complete", 1)
    assert compare_to_batch(run, data) is None
    once = stream_query("CQ2", data, "one-shot")
    assert (once.status, once.trigger, once.files_per_trigger, once.micro_batches) == ("ok", "one-shot", None, 1)
    assert compare_to_batch(once, data) is None


def test_one_file_per_trigger_costs_more_than_the_single_batch(data: TpchData, cq2_one_per_trigger: StreamRun,
                                                                tmp_path: Path) -> None:
    q = CATALOGUE["CQ2"]

    def single_batch(i: int) -> float:
        partial = tmp_path / f"partial-{i}"
        return run_partial(q, data, 1, PARTS, partial) + run_final(q, data, [partial], tmp_path / f"final-{i}")

    single_batch(0)  # warm-up
    batch = single_batch(1)
    assert cq2_one_per_trigger.cost_seconds is not None
    assert cq2_one_per_trigger.cost_seconds > batch, (cq2_one_per_trigger.cost_seconds, batch)


def test_the_listener_sees_every_micro_batch_past_the_progress_retention(data: TpchData,
                                                                         cq2_one_per_trigger: StreamRun) -> None:
    run = cq2_one_per_trigger
    assert run.micro_batches == PARTS  # one per part, no sentinel and no no-data batch in complete mode
    assert 1 <= run.progress_retained <= 2 < run.micro_batches  # what recentProgress still held
    assert data.spark.conf.get(RETENTION, None) in (None, "100")  # restored


def test_a_stream_stream_join_equals_the_batch_result_behind_a_sentinel(data: TpchData) -> None:
    run = stream_query("Q12", data, "default")
    assert (run.status, run.reason, run.output_mode) == ("ok", "", "append")
    # every part, the sentinel part, and the no-data batch that closes the window
    assert run.micro_batches == PARTS + 2
    assert compare_to_batch(run, data) is None


#: Q4 as TPC-H writes it: Spark refuses an EXISTS subquery over a stream.
Q4_EXISTS = dataclasses.replace(CATALOGUE["Q4"], reference=SqlReference("""
        select o_orderpriority, count(*) as order_count
        from {orders}
        where o_orderdate >= date '1993-07-01' and o_orderdate < date '1993-07-01' + interval '3' month
          and exists (select * from {lineitem}
                      where l_orderkey = o_orderkey /*within*/ and l_commitdate < l_receiptdate)
        group by /*window*/ o_orderpriority
        order by o_orderpriority""", ("orders", "lineitem")))


def test_a_refused_stream_stream_query_is_unsupported_with_sparks_reason(data: TpchData) -> None:
    assert Q4_EXISTS.reference(data).count() == 5  # the batch engine runs the text
    run = stream_query(Q4_EXISTS, data, "one-shot")
    assert run.status == "unsupported"
    assert run.reason.startswith("[") and "\n" not in run.reason
    assert (run.cost_seconds, run.micro_batches, run.result) == (None, 0, None)
    assert compare_to_batch(run, data).startswith("no streaming result (unsupported")


def test_parts_are_copied_in_order_when_their_times_do_not_order_them(data: TpchData, tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(data.directory, copy)
    tied = TpchData(copy)
    for k in range(1, PARTS + 1):
        os.utime(tied.path("orders", k), ns=(10**18, 10**18))
    staged = _stage(tied, "orders", tmp_path / "staged", tpch.T0)
    parts = [staged / f"orders.{k}.parquet" for k in range(1, PARTS + 1)] + [staged / "orders.sentinel.parquet"]
    assert not any(p.is_symlink() for p in parts)
    stamps = [p.stat().st_mtime_ns for p in parts]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    linked = _stage(data, "orders", tmp_path / "linked", None)
    assert all((linked / f"orders.{k}.parquet").is_symlink() for k in range(1, PARTS + 1))



def test_stream_rows_tabulate_one_row_per_query_and_trigger(data: TpchData) -> None:
    rows = stream_rows(["CQ1", "Q4"], data, ["one-shot"])
    assert list(rows["query"]) == ["CQ1", "Q4"] and set(rows["trigger"]) == {"one-shot"}
    assert list(rows["status"]) == ["ok", "ok"] and list(rows["kind"]) == ["stream-only", "stream-stream"]
    assert rows["files_per_trigger"].isna().all()  # no limit
    assert rows["equal_to_batch"].tolist() == [True, True] and rows["difference"].isna().all()
    assert (rows["cost_seconds"] > 0).all()
    # CQ1 in one micro-batch; Q4's left semi join in one, then the no-data batch closing the window
    assert rows["micro_batches"].tolist() == [1, 2]
