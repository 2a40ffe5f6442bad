"""Olston's ``spark`` mode: every invocation of the run loop runs on Spark and every block is
committed to the Parquet block store (digest §8 "Driver" [D]; the issue's "Spark store and
commit").

The run loop (:mod:`staleness_lab.workflows.sim`) owns virtual time and PLAN; :class:`SparkRows`
is its :class:`~staleness_lab.workflows.block_rows.BlockRows` for this mode, handed to the loop
by its caller (:func:`spark_rows`: the CLI's ``workflow run --mode spark``, the Olston
experiment's spark runs), so the loop itself imports no Spark:

* an input arrival is written by pyarrow (a feed landing as a file; no Spark job) and committed;
* an invocation runs the :class:`~staleness_lab.workflows.execute.Executor` on
  :data:`staleness_lab.spark.workflows.rows.SPARK` (the Spark twin of the pandas algebra) over frames
  read from committed blocks; each output is written by Spark (one part file) into the store's
  hidden temporary directory and committed, then read back from its final directory, so no
  frame's lineage reaches past a committed block;
* a chain (``<channel>.chain``, a plan's or heuristic (b)'s) commits a manifest listing its
  parts and moves no data (digest §8 "Chain"); reading it chains the parts' frames again;
* a block's size is what its manifest says (Parquet footers and its ``_sign`` column; a chain
  of strong deltas keeps every ± row, so its size is its parts' sum, and a chain of weak deltas
  is counted by one Spark job), the same rows the ``memory`` mode counts, so both modes decide
  alike; the seconds Spark took are recorded in the manifest (``measured_s``) and the summary,
  never fed back (correction 8);
* a manifest carries its block's Spark schema, so reading a block lists its files and reads no
  footer.

**Resume.** Ids are deterministic (:func:`~staleness_lab.workflows.block_store.block_id`), so a
rerun with the same ``run.json`` replays the loop and, where an output's manifest exists,
reads the committed block instead of writing it again (every committed block's parts were
checked against their checksums when the store opened: a damaged block is never read).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from staleness_lab.spark.session import get_spark
from staleness_lab.spark.workflows.rows import SPARK, SPARK_TYPES, from_pandas
from staleness_lab.workflows.block_rows import Compute
from staleness_lab.workflows.block_store import BlockStore, block_id
from staleness_lab.workflows.blocks import DELTA, Block, Invocation
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.rows import SIGN
from staleness_lab.workflows.sim import RunConfig, block_store

#: pyarrow types of the pandas dtypes a block's frame carries (object columns are strings).
ARROW_TYPES = {"object": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
               "int8": pa.int8()}


def arrow_table(frame: pd.DataFrame) -> pa.Table:
    """``frame`` as an Arrow table with explicit types (an all-null or empty string column is
    still a string column)."""
    schema = pa.schema([(c, ARROW_TYPES[str(frame[c].dtype)]) for c in frame.columns])
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


class SparkRows:
    """The rows of the ``spark`` mode's blocks (module docstring)."""

    algebra = SPARK

    def __init__(self, spark: SparkSession, store: BlockStore) -> None:
        self.spark = spark
        self.store = store
        self.resumed = store.open()
        self.ids: dict[Block, str] = {}
        self.sizes: dict[str, tuple[int, int]] = {}  # id -> (rows, deletions), from manifests
        self.spark_s = 0.0
        self.skipped = 0
        self.written = 0

    # -- BlockRows ----------------------------------------------------------------------------
    def arrival(self, block: Block, frame: pd.DataFrame, at: float) -> DataFrame:
        bid = block_id(block, f"input@{at!r}")
        self.ids[block] = bid
        manifest = self.store.manifest(block.channel, bid)
        if manifest is None:
            table = arrow_table(frame)
            schema = StructType([StructField(str(c), SPARK_TYPES[str(t)], True)
                                 for c, t in frame.dtypes.items()])

            def write(directory: Path) -> None:
                directory.mkdir()
                pq.write_table(table, directory / "part-00000.parquet")
            manifest = self.store.commit_data(block, bid, write, {
                "op": "input", "variant": "", "input_ids": [], "virtual_time": at, "measured_s": 0.0,
                "schema": schema.json()})
            self.written += 1
        else:
            self.skipped += 1
        return self._read(manifest)

    def made(self, inv: Invocation, producer: str, at: float, compute: Compute) -> tuple[tuple[Block, ...], tuple[DataFrame, ...]]:
        input_ids = [self.ids[b] for b in inv.inputs]
        key = f"{producer}|{inv.operator}|{inv.variant}|{','.join(input_ids)}|{at!r}"
        ids = [block_id(b, key) for b in inv.outputs]
        manifests = [self.store.manifest(b.channel, bid) for b, bid in zip(inv.outputs, ids)]
        chain = inv.operator.endswith(".chain")
        started = time.perf_counter()
        lazy: Sequence[DataFrame] = compute() if chain or any(m is None for m in manifests) else ()
        meta = {"op": inv.operator, "variant": inv.variant, "input_ids": input_ids, "virtual_time": at,
                "est_cost": inv.cost}
        frames, made = [], []
        for k, (b, bid, manifest) in enumerate(zip(inv.outputs, ids, manifests)):
            if chain:
                frame = lazy[k]
                if manifest is None:
                    rows, deletes = self._chain_size(b, input_ids, frame)
                    manifest = self.store.commit_chain(b, bid, input_ids, rows, deletes, {**meta, "chain": True})
                self.sizes[bid] = (int(manifest["rows"]), int(manifest["deletes"]))
            else:
                if manifest is None:
                    manifest = self._commit(b, bid, lazy[k], meta, started)
                    self.written += 1
                else:
                    self.skipped += 1
                frame = self._read(manifest)
            self.ids[b] = bid
            frames.append(frame)
            made.append(Block(b.channel, b.kind, b.to, b.frm, float(manifest["rows"]), float(manifest["deletes"])))
        self.spark_s += time.perf_counter() - started
        return tuple(made), tuple(frames)

    def from_pandas(self, frame: pd.DataFrame) -> DataFrame:
        return from_pandas(self.spark, frame)

    def to_pandas(self, frame: DataFrame) -> pd.DataFrame:
        return frame.toPandas()

    def summary(self) -> dict[str, Any]:
        return {"store": str(self.store.dir), "resumed": self.resumed, "spark_s": self.spark_s,
                "blocks_written": self.written, "blocks_skipped": self.skipped}

    # -- the store -----------------------------------------------------------------------------
    def _commit(self, block: Block, bid: str, frame: DataFrame, meta: dict[str, Any], started: float) -> dict[str, Any]:
        """Write ``frame`` with Spark (one part file) and commit it; ``measured_s``: from the
        invocation's start to the end of this write (the write is the Spark job)."""
        recorded = {**meta, "schema": frame.schema.json()}

        def write(directory: Path) -> None:
            frame.coalesce(1).write.mode("errorifexists").parquet(str(directory))
            recorded["measured_s"] = time.perf_counter() - started
        return self.store.commit_data(block, bid, write, recorded)

    def _read(self, manifest: dict[str, Any]) -> DataFrame:
        """A committed block's frame, with the schema its manifest records."""
        self.sizes[manifest["id"]] = (int(manifest["rows"]), int(manifest["deletes"]))
        schema = StructType.fromJson(json.loads(manifest["schema"]))
        return self.spark.read.schema(schema).parquet(str(self.store.data_dir(manifest["channel"], manifest["id"])))

    def _chain_size(self, block: Block, parts: list[str], frame: DataFrame) -> tuple[int, int]:
        """A chain's rows and deletions: its parts' sums for strong deltas (every ± row is
        kept), one Spark job for a weak kind (chaining merges rows per key)."""
        if block.kind == DELTA:
            known = [self.sizes[p] for p in parts]
            return sum(r for r, _ in known), sum(d for _, d in known)
        if SIGN not in frame.columns:
            return frame.count(), 0
        row = frame.agg(F.count(F.lit(1)).alias("rows"),
                        F.sum(F.when(F.col(SIGN) < 0, 1).otherwise(0)).alias("deletes")).first()
        return int(row["rows"]), int(row["deletes"] or 0)


def spark_rows(workflow: Workflow, config: RunConfig, horizon: float) -> SparkRows:
    """The spark mode's rows for one run (a :data:`staleness_lab.workflows.sim.MakeRows`): the
    process's Spark session (:func:`~staleness_lab.spark.session.get_spark`) and the run's block
    store (:func:`staleness_lab.workflows.sim.block_store`), checked before Spark starts
    (:meth:`~staleness_lab.workflows.block_store.BlockStore.check`), then opened (a rerun
    resumes it)."""
    store = block_store(workflow, config, horizon)
    store.check()
    return SparkRows(get_spark(), store)
