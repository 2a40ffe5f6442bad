"""One batch and one final aggregation, executed and timed (digest §6).

A batch reads parts ``first..last`` of its query's streams, joins the cached static tables and
writes its partial aggregate as one Parquet directory; the final aggregation reads the partials
back, merges them (``CatalogueQuery.final``) and writes the result (one file, in the query's
order); a query run as one batch writes ``final(partial)`` directly. The measured time is the wall
time of the whole action, plan construction and the write included, as the paper measures cost:
the runner (:mod:`.runner`) feeds it back as the step's duration, and calibration
(:mod:`.calibrate`) fits cost models to it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from staleness_lab.spark.intermittent.catalogue import CatalogueQuery, TpchData


def run_partial(query: CatalogueQuery, data: TpchData, first: int, last: int, path: Path) -> float:
    """Write ``query``'s partial over parts ``first..last`` to ``path``; the wall seconds it took."""
    start = time.perf_counter()
    query.partial(data, first, last).write.mode("error").parquet(str(path))
    return time.perf_counter() - start


def run_whole(query: CatalogueQuery, data: TpchData, first: int, last: int, path: Path) -> float:
    """Write ``query``'s result over parts ``first..last`` as one batch, ``final(partial)``, to
    ``path``; the wall seconds it took (the single-batch cost, no partial written)."""
    start = time.perf_counter()
    query.final(query.partial(data, first, last)).coalesce(1).write.mode("error").parquet(str(path))
    return time.perf_counter() - start


def run_final(query: CatalogueQuery, data: TpchData, partials: Sequence[Path], path: Path) -> float:
    """Merge the partials written at ``partials`` into ``query``'s result at ``path``; the wall
    seconds it took (reading the partials back included)."""
    start = time.perf_counter()
    merged = data.spark.read.parquet(*(str(p) for p in partials))
    query.final(merged).coalesce(1).write.mode("error").parquet(str(path))
    return time.perf_counter() - start
