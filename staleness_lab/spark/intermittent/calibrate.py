"""Measured cost models of the catalogue queries on Spark: S, R and AggCost (digest §6).

Chandrasekaran & Sudarshan fit each query's batch cost to its measured execution time against
the input size (paper Fig. 3: piecewise-linear fits) and show the price of splitting the input
into many batches (Fig. 4: total cost over the single-batch cost against the number of batches).
The digest's §6, "Measuring S, R and AggCost", is followed here:

* **Batch cost.** For batch sizes ``x`` in the geometric grid ``1, 2, 4, ..., P`` (``P``, the
  number of stream parts, always included), a batch of parts ``1..x`` is written by
  :func:`~staleness_lab.spark.intermittent.steps.run_partial`: ``warmups`` unmeasured runs, then
  ``repeats`` measured ones, keeping the median wall time and every sample. The fit is paper
  eq. (1), ``Cost(x) = S + R*x``, by non-negative least squares (S, R >= 0) with its R², and a
  two-segment continuous piecewise line ``S + r1*min(x, b) + r2*max(x - b, 0)`` (coefficients
  >= 0), its breakpoint ``b`` chosen among the interior measured sizes by least SSE.
* **Aggregation cost.** For ``n`` in ``2, 4, 8, 16, 32, 64`` (``n <= P``) the partials of ``n``
  equal batches are written (untimed), then
  :func:`~staleness_lab.spark.intermittent.steps.run_final` is timed the same way; the fit is
  ``AggCost(n) = a0 + a1*n`` (a0, a1 >= 0) with its R².
* **Fig. 4.** :func:`split_cost` is the measured total of running the ``P`` parts as ``k`` equal
  batches: the ``k`` batch times plus, for ``k >= 2``, the final aggregation.

:func:`calibrate` writes ``<out_dir>/<query>.json`` per query, loadable by
:func:`staleness_lab.experiments.intermittent.sweeps.paper_queries`::

    {"cost": {"kind": "linear", "S": ..., "R": ...},           # the eq. (1) fit, cost schema
     "agg_cost": {"kind": "linear", "a0": ..., "a1": ...},
     "fits": {"linear": {"S", "R", "sse", "r2", "r2_reason"},
              "piecewise": {"cost": {"kind": "piecewise", ...}, "breakpoint", "sse", "r2", "r2_reason"}
                           or null, "piecewise_reason": null or why there is no piecewise fit,
              "aggregation": {"a0", "a1", "sse", "r2", "r2_reason"}},
     "measurements": {"batches": [{"files": x, "seconds": median, "samples": [...]}, ...],
                      "aggregation": [{"partials": n, "seconds": median, "samples": [...]}, ...]},
     "query", "scale", "parts", "master", "spark_version", "generator", "warmups", "repeats",
     "measured_on": {"date", "cpu", "cores", "memory_gib", "os", "java"}}

An R² is null, with its reason, when every measured time is equal. Nothing is adjusted after the
fit: at small scale factors a batch costs about the same whatever its size (digest, second
corrections: R is not measurable at SF 0.01), so R may come out 0; an ``S`` of 0 would mean the
measurements contradict a per-batch overhead, and is written as measured.

All files of one calibration are written into a hidden temporary sibling of ``out_dir`` and
swapped into place (:func:`~staleness_lab.provenance.building_directory`): a failed calibration
leaves ``out_dir`` as it was. Fits of other catalogue queries already in ``out_dir`` are carried
over, so the 13 queries can be calibrated in several runs; any other file there is refused
before any measurement. Scratch outputs go to a temporary directory, removed afterwards.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import itertools
import json
import os
import platform
import shutil
import statistics
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.errors import InputError
from staleness_lab import outputs
from staleness_lab.provenance import building_directory
from staleness_lab.spark.intermittent.catalogue import CATALOGUE, CatalogueQuery, TpchData, batches
from staleness_lab.spark.intermittent.steps import run_final, run_partial
from staleness_lab.spark.session import machine_memory_bytes

#: The aggregation grid of digest §6 (only ``n <= P`` is measured).
AGGREGATION_COUNTS = (2, 4, 8, 16, 32, 64)
#: Fewest stream parts a calibration accepts: 3 batch sizes (1, 2, 4) and 2 aggregation counts (2, 4).
MIN_PARTS = 4
#: Fewest distinct batch sizes of a piecewise fit: 3 coefficients and an interior breakpoint.
MIN_PIECEWISE_SIZES = 4


# --- checks ----------------------------------------------------------------------------------------

def resolve_queries(names: Sequence[str]) -> list[CatalogueQuery]:
    """The catalogue queries named (one name may be given as a string), in order; an
    :class:`InputError` on ``--queries`` for an unknown or repeated name, or none at all."""
    names = [names] if isinstance(names, str) else list(names)
    if not names:
        raise InputError("--queries", f"name at least one query (valid: {', '.join(CATALOGUE)})")
    unknown = [n for n in names if n not in CATALOGUE]
    if unknown:
        raise InputError("--queries", f"unknown {', '.join(map(repr, unknown))} (valid: {', '.join(CATALOGUE)})")
    if len(set(names)) != len(names):
        raise InputError("--queries", f"names a query twice: {' '.join(names)}")
    return [CATALOGUE[n] for n in names]


def check_runs(warmups: Any, repeats: Any) -> tuple[int, int]:
    """``warmups`` an integer >= 0 and ``repeats`` an integer >= 1."""
    for field, value, low in (("--warmups", warmups, 0), ("--repeats", repeats, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InputError(field, f"must be an integer >= {low}, got {value!r}")
    return warmups, repeats


def check_calibration_parts(parts: int, field: str = "--parts") -> int:
    """A part count a calibration can fit: at least :data:`MIN_PARTS`."""
    if parts < MIN_PARTS:
        raise InputError(field, f"calibration needs at least {MIN_PARTS} parts (batch sizes 1, 2, 4 and "
                                f"aggregations of 2 and 4 partials), got {parts}")
    return parts


# --- grids and timing ------------------------------------------------------------------------------

def batch_sizes(n_parts: int) -> list[int]:
    """The geometric grid ``1, 2, 4, ...`` below ``n_parts``, then ``n_parts`` itself."""
    sizes = [2 ** k for k in range(n_parts.bit_length()) if 2 ** k < n_parts]
    return [*sizes, n_parts]


def aggregation_counts(n_parts: int) -> list[int]:
    """The partial counts of :data:`AGGREGATION_COUNTS` that ``n_parts`` parts can form."""
    return [n for n in AGGREGATION_COUNTS if n <= n_parts]


@dataclass(frozen=True)
class Measurement:
    """The median wall time of the measured runs, and every measured sample (seconds)."""

    seconds: float
    samples: tuple[float, ...]


def time_median(action: Callable[[Path], float], scratch: Path, warmups: int, repeats: int) -> Measurement:
    """Run ``action`` (a timed step of :mod:`.steps`, writing to the fresh path it is given)
    ``warmups`` times unmeasured, then ``repeats`` times measured; each output is deleted at once."""
    samples = []
    for run in range(warmups + repeats):
        path = Path(tempfile.mkdtemp(prefix="run-", dir=scratch)) / "out"
        seconds = action(path)
        shutil.rmtree(path.parent)
        if run >= warmups:
            samples.append(seconds)
    return Measurement(statistics.median(samples), tuple(samples))


def measure_batch(query: CatalogueQuery, data: TpchData, files: int, scratch: Path, *,
                  warmups: int, repeats: int) -> Measurement:
    """The wall time of ``query``'s batch over parts ``1..files``."""
    return time_median(lambda path: run_partial(query, data, 1, files, path), scratch, warmups, repeats)


def write_partials(query: CatalogueQuery, data: TpchData, k: int, directory: Path) -> tuple[list[Path], float]:
    """``query``'s partials of the ``k`` equal batches of every part, written under ``directory``;
    their paths and the sum of their batch times."""
    paths, seconds = [], 0.0
    for i, (first, last) in enumerate(batches(data.n_parts, k), start=1):
        paths.append(directory / f"{i}.parquet")
        seconds += run_partial(query, data, first, last, paths[-1])
    return paths, seconds


def measure_aggregation(query: CatalogueQuery, data: TpchData, n: int, scratch: Path, *,
                        warmups: int, repeats: int) -> Measurement:
    """The wall time of ``query``'s final aggregation over the partials of ``n`` equal batches
    (written first, untimed)."""
    directory = Path(tempfile.mkdtemp(prefix=f"partials-{n}-", dir=scratch))
    try:
        partials, _ = write_partials(query, data, n, directory)
        return time_median(lambda path: run_final(query, data, partials, path), scratch, warmups, repeats)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def split_cost(query: CatalogueQuery | str, data: TpchData, k: int, *, warmups: int = 2, repeats: int = 3,
               scratch: Path | None = None) -> Measurement:
    """Fig. 4's measured cost of the ``P`` parts run as ``k`` equal batches: the sum of the ``k``
    batch times plus, for ``k >= 2``, the final aggregation (``AggCost(1) = 0``); the median over
    ``repeats`` whole runs after ``warmups``."""
    q = resolve_queries([query])[0] if isinstance(query, str) else query
    warmups, repeats = check_runs(warmups, repeats)
    batches(data.n_parts, k)  # refuses k outside 1..P

    def run(path: Path) -> float:
        partials, seconds = write_partials(q, data, k, path / "partials")
        return seconds + (run_final(q, data, partials, path / "result") if k >= 2 else 0.0)

    with _scratch(scratch) as directory:
        return time_median(run, directory, warmups, repeats)


def split_costs(query: CatalogueQuery | str, data: TpchData, ks: Sequence[int], *, warmups: int = 2,
                repeats: int = 3, scratch: Path | None = None) -> pd.DataFrame:
    """Fig. 4's rows for ``query``: one per batch count in ``ks`` (k = 1 always added), with
    ``files_per_batch`` (the largest batch), ``seconds`` (:func:`split_cost`) and ``relative``,
    the cost over the single-batch cost."""
    name = query if isinstance(query, str) else query.name
    rows = []
    for k in sorted({1, *ks}):
        measured = split_cost(query, data, k, warmups=warmups, repeats=repeats, scratch=scratch)
        rows.append({"query": name, "batches": k, "files_per_batch": -(-data.n_parts // k),
                     "seconds": measured.seconds, "samples": list(measured.samples)})
    frame = pd.DataFrame(rows)
    frame["relative"] = frame["seconds"] / frame.loc[frame["batches"] == 1, "seconds"].iloc[0]
    return frame


@contextlib.contextmanager
def _scratch(parent: Path | None) -> Iterator[Path]:
    """A temporary directory under ``parent`` (the system's temp dir by default), removed on exit."""
    directory = Path(tempfile.mkdtemp(prefix="staleness-lab-calibrate-", dir=parent))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# --- fits ------------------------------------------------------------------------------------------

def nnls(a: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Non-negative least squares, ``min |a c - y|²`` over ``c >= 0``, exactly, for the few columns
    used here: the optimum is the least-squares fit on its own support (the columns with ``c > 0``),
    so every support of independent columns is tried (2^k of them) and the best feasible one kept.
    Returns the coefficients and the SSE."""
    a, y = np.asarray(a, dtype=float), np.asarray(y, dtype=float)
    best, best_sse = np.zeros(a.shape[1]), float(y @ y)
    for size in range(1, a.shape[1] + 1):
        for support in itertools.combinations(range(a.shape[1]), size):
            columns = a[:, support]
            if np.linalg.matrix_rank(columns) < size:
                continue
            coef = np.linalg.lstsq(columns, y, rcond=None)[0]
            if np.any(coef < 0):
                continue
            sse = float(np.sum((columns @ coef - y) ** 2))
            if sse < best_sse:
                best, best_sse = np.zeros(a.shape[1]), sse
                best[list(support)] = coef
    return best, best_sse


def r_squared(y: Sequence[float], sse: float) -> tuple[float | None, str | None]:
    """``1 - SSE/SST`` and None, or None and why it is undefined (every ``y`` equal). Below 0 only
    when a constraint (a coefficient held at 0) makes the fit worse than the mean. A fit that
    *is* the mean (its slope held at 0) has SSE = SST up to rounding: a value within 1e-12 below
    0 is that rounding and reported as 0."""
    values = np.asarray(y, dtype=float)
    sst = float(np.sum((values - values.mean()) ** 2))
    if sst == 0:
        return None, f"undefined: all {len(values)} measured times are equal"
    r2 = 1 - sse / sst
    return (0.0 if -1e-12 < r2 < 0 else r2), None


@dataclass(frozen=True)
class LinearFit:
    """``intercept + slope*x`` with both >= 0 (eq. (1)'s S and R, or AggCost's a0 and a1)."""

    intercept: float
    slope: float
    sse: float
    r2: float | None
    r2_reason: str | None


def fit_linear(xs: Sequence[float], ys: Sequence[float]) -> LinearFit:
    """The non-negative least-squares line through ``(xs, ys)`` (needs 2 distinct ``xs``)."""
    x = np.asarray(xs, dtype=float)
    if len(set(xs)) < 2 or len(xs) != len(ys):
        raise InputError("fit", f"a line needs ys matching xs at 2 or more distinct xs, got xs={list(xs)}")
    (intercept, slope), sse = nnls(np.column_stack([np.ones_like(x), x]), np.asarray(ys, dtype=float))
    return LinearFit(float(intercept), float(slope), sse, *r_squared(ys, sse))


@dataclass(frozen=True)
class PiecewiseFit:
    """Fig. 3's two-segment line, continuous at ``breakpoint``:
    ``S + slopes[0]*min(x, b) + slopes[1]*max(x - b, 0)``, every coefficient >= 0, fitted up to ``xmax``."""

    S: float
    breakpoint: float
    slopes: tuple[float, float]
    xmax: float
    sse: float
    r2: float | None
    r2_reason: str | None

    def to_cost(self) -> dict[str, Any]:
        """The fit in the cost schema of :mod:`staleness_lab.intermittent.costs` (kind ``piecewise``)."""
        b, (r1, r2) = self.breakpoint, self.slopes
        return {"kind": "piecewise", "S": self.S,
                "points": [[0.0, 0.0], [b, r1 * b], [self.xmax, r1 * b + r2 * (self.xmax - b)]]}


def fit_piecewise(xs: Sequence[float], ys: Sequence[float]) -> tuple[PiecewiseFit | None, str | None]:
    """The least-SSE two-segment fit over breakpoints at the interior measured sizes (hinge basis
    ``1, min(x, b), max(x - b, 0)`` by :func:`nnls`), and None; or None and why there is none
    (fewer than :data:`MIN_PIECEWISE_SIZES` distinct sizes)."""
    distinct = sorted(set(xs))
    if len(distinct) < MIN_PIECEWISE_SIZES:
        return None, (f"needs {MIN_PIECEWISE_SIZES} or more distinct batch sizes (3 coefficients and an "
                      f"interior breakpoint), got {len(distinct)}")
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    candidates = [(b, *nnls(np.column_stack([np.ones_like(x), np.minimum(x, b), np.maximum(x - b, 0)]), y))
                  for b in distinct[1:-1]]
    b, (s, r1, r2), sse = min(candidates, key=lambda c: c[2])  # the first (smallest b) on a tie
    return PiecewiseFit(float(s), float(b), (float(r1), float(r2)), float(distinct[-1]), sse,
                        *r_squared(ys, sse)), None


# --- calibration ------------------------------------------------------------------------------------

def fit_query(measurements: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The ``cost``, ``agg_cost`` and ``fits`` entries of a query's JSON from its measurements."""
    sizes = [m["files"] for m in measurements["batches"]]
    times = [m["seconds"] for m in measurements["batches"]]
    linear = fit_linear(sizes, times)
    piecewise, reason = fit_piecewise(sizes, times)
    agg = fit_linear([m["partials"] for m in measurements["aggregation"]],
                     [m["seconds"] for m in measurements["aggregation"]])
    return {
        "cost": {"kind": "linear", "S": linear.intercept, "R": linear.slope},
        "agg_cost": {"kind": "linear", "a0": agg.intercept, "a1": agg.slope},
        "fits": {
            "linear": {"S": linear.intercept, "R": linear.slope, "sse": linear.sse, "r2": linear.r2,
                       "r2_reason": linear.r2_reason},
            "piecewise": None if piecewise is None else {
                "cost": piecewise.to_cost(), "breakpoint": piecewise.breakpoint, "sse": piecewise.sse,
                "r2": piecewise.r2, "r2_reason": piecewise.r2_reason},
            "piecewise_reason": reason,
            "aggregation": {"a0": agg.intercept, "a1": agg.slope, "sse": agg.sse, "r2": agg.r2,
                            "r2_reason": agg.r2_reason},
        },
    }


def fit_document(name: str, measurements: dict[str, list[dict[str, Any]]], data: TpchData, warmups: int,
                 repeats: int, master_label: str | None = None) -> dict[str, Any]:
    """A query's JSON document: its fits (:func:`fit_query`), its measurements and where they
    were taken (scale, parts, the Spark master or ``master_label``, Spark's and the generator's
    versions, the warm-ups and repeats) and when and on what (:func:`measured_on`): a fit is a
    measurement of one machine, to be read beside its description."""
    spark = data.spark
    return {**outputs.marker(FIT_KIND, FIT_VERSION), "query": name, **fit_query(measurements),
            "measurements": measurements, "scale": data.scale,
            "parts": data.n_parts, "master": master_label or spark.sparkContext.master,
            "spark_version": spark.version, "generator": data.manifest["generator"],
            "warmups": warmups, "repeats": repeats, "measured_on": measured_on(spark)}


def measured_on(spark: Any) -> dict[str, Any]:
    """The UTC date and the machine of a measurement: the driver's CPU model and core count, its
    memory (GiB, the cgroup's limit when lower), the operating system and the JVM's Java version."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"date": _dt.datetime.now(_dt.timezone.utc).date().isoformat(), "cpu": cpu, "cores": os.cpu_count(),
            "memory_gib": round(machine_memory_bytes() / 2**30, 1), "os": platform.platform(),
            "java": spark.sparkContext._jvm.java.lang.System.getProperty("java.version")}


def summary_row(name: str, fit: dict[str, Any]) -> dict[str, Any]:
    """One row of :func:`calibrate`'s table from a query's JSON."""
    fits, piecewise = fit["fits"], fit["fits"]["piecewise"] or {}
    return {"query": name, "S": fits["linear"]["S"], "R": fits["linear"]["R"], "r2": fits["linear"]["r2"],
            "breakpoint": piecewise.get("breakpoint"), "piecewise_sse": piecewise.get("sse"),
            "a0": fits["aggregation"]["a0"], "a1": fits["aggregation"]["a1"], "agg_r2": fits["aggregation"]["r2"],
            "r2_reason": fits["linear"]["r2_reason"], "piecewise_reason": fits["piecewise_reason"],
            "agg_r2_reason": fits["aggregation"]["r2_reason"]}


#: The marker of a cost-model JSON (:func:`staleness_lab.outputs.marker`); version 1 had none.
FIT_KIND, FIT_VERSION = "cost-model", 2


def _query_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path`` when it is a regular file (not a link) ``<query>.json`` of a
    catalogue query, else None (a file that is not one, unreadable, or not a JSON object)."""
    if path.suffix != ".json" or path.stem not in CATALOGUE or path.is_symlink() or not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def fit_is_ours(path: Path) -> bool:
    """True when ``path`` is a regular file ``<query>.json`` (a catalogue query) holding a fit
    this program wrote: the marker ``{"producer": "staleness-lab", "kind": "cost-model",
    "version": 2}``, or the unmarked form of version 1 (``query`` naming the file, ``fits`` and
    ``measurements`` objects, no ``producer``); both with ``query`` equal to the file's stem."""
    path = Path(path)
    document = _query_json(path)
    if document is None or document.get("query") != path.stem:
        return False
    if "producer" in document:
        return outputs.manifest_is_ours(document, FIT_KIND, (FIT_VERSION,))
    return isinstance(document.get("fits"), dict) and isinstance(document.get("measurements"), dict)


def cost_model_kept(path: Path) -> bool:
    """True when ``path`` is a regular file ``<query>.json`` holding a cost model in the form
    the planners read (an object with a ``cost`` mapping): a fit of another query, hand-written
    or calibrated, which a calibration carries over byte for byte and never rewrites."""
    document = _query_json(Path(path))
    return document is not None and isinstance(document.get("cost"), dict)


def check_out_dir(out_dir: Path, queries: Sequence[str] = tuple(CATALOGUE)) -> None:
    """The rule of :mod:`staleness_lab.outputs` for ``--out``: absent, empty, or a directory
    holding only cost models: the fits of the ``queries`` calibrated now (rewritten) must be
    this program's (:func:`fit_is_ours`), other queries' need only be cost models
    (:func:`cost_model_kept`; copied over unchanged). A symbolic link, a file, a device, a FIFO
    or a directory with anything else is refused before any measurement."""
    rewritten = {f"{name}.json" for name in queries}

    def stranger(directory: Path) -> str | None:
        for entry in sorted(Path(directory).iterdir()):
            if not (fit_is_ours(entry) if entry.name in rewritten else cost_model_kept(entry)):
                return entry.name
        return None

    outputs.check_output_directory(Path(out_dir), "--out", stranger,
                                   hint="give a new or empty directory or an earlier calibration's")


def calibrate(queries: Sequence[str], data: TpchData, out_dir: Path, *, warmups: int = 2, repeats: int = 3,
              master_label: str | None = None, progress: bool = False, scratch: Path | None = None) -> pd.DataFrame:
    """Measure and fit every query named (module docstring), write ``out_dir/<query>.json`` all
    or nothing, and return one row per query: ``S``, ``R``, ``r2``, ``breakpoint``,
    ``piecewise_sse``, ``a0``, ``a1``, ``agg_r2`` and the reasons of any null.

    ``master_label`` is recorded as ``master`` instead of the session's master URL (e.g. a
    cluster's name); ``scratch`` is where the temporary outputs go (default: the system's temp dir)."""
    chosen = resolve_queries(queries)
    warmups, repeats = check_runs(warmups, repeats)
    check_calibration_parts(data.n_parts, "data")
    out_dir = Path(out_dir)
    check_out_dir(out_dir, [q.name for q in chosen])
    tasks = [(q, "batches", x) for q in chosen for x in batch_sizes(data.n_parts)]
    tasks += [(q, "aggregation", n) for q in chosen for n in aggregation_counts(data.n_parts)]
    if progress:
        from tqdm.auto import tqdm

        tasks = tqdm(tasks, desc="calibrating", unit="measurement")
    measured: dict[str, dict[str, list[dict[str, Any]]]] = {q.name: {"batches": [], "aggregation": []} for q in chosen}
    with _scratch(scratch) as directory:
        for q, kind, size in tasks:
            measure = measure_batch if kind == "batches" else measure_aggregation
            m = measure(q, data, size, directory, warmups=warmups, repeats=repeats)
            key = "files" if kind == "batches" else "partials"
            measured[q.name][kind].append({key: size, "seconds": m.seconds, "samples": list(m.samples)})
    fits = {name: fit_document(name, m, data, warmups, repeats, master_label) for name, m in measured.items()}
    write_fits(fits, out_dir)
    return pd.DataFrame([summary_row(name, fit) for name, fit in fits.items()])


def write_fits(fits: dict[str, dict[str, Any]], out_dir: Path) -> None:
    """``out_dir/<query>.json`` for every fit, with the other queries' fits already there carried
    over, written into a temporary sibling and swapped into place."""
    with building_directory(out_dir) as work:
        if out_dir.is_dir():
            for kept in out_dir.glob("*.json"):
                if kept.stem not in fits:
                    shutil.copy2(kept, work / kept.name)
        for name, fit in fits.items():
            (work / f"{name}.json").write_text(json.dumps(fit, indent=1, allow_nan=False) + "\n", encoding="utf-8")
