"""Seeded instances of Bateni et al.'s model for the experiments X1-X5 (digest §1, §5).

A Bateni table is a replayed feed ``{"name", "arrivals": [t, ...], "alpha": 0, "beta": α_i,
"priority": w}`` (digest, Corrections 1 and 9): update j carries the data of ``(r_{j-1}, r_j]``,
so its length is ``L_j = r_j - r_{j-1}`` with ``r_0 = 0``; the workload has ``tracks = p``.

Release times lie on a 0.01 grid (the CP-SAT optimum scales them to integers, digest §5,
correction 7) and increase strictly per table; every generator works in integer hundredths
and draws from ``numpy.random.default_rng`` seeded by the caller. The five arrival kinds:

* ``poisson``: exponential gaps of mean ``scale``;
* ``periodic``: period ``scale`` with a jitter of up to ±25 % of it per release;
* ``bursty``: bursts of 2-6 releases 0.01-0.05·``scale`` apart, separated by exponential
  silences of mean 4·``scale``;
* ``big-then-tiny``: a long update (1-3·``scale``) followed by 1-4 tiny ones (0.01-0.05·``scale``),
  repeated: digest E3's shape, where lock waits and large stretches arise (§6 A1);
* ``quasiperiodic``: B-quasiperiodic with ``B = scale``: every length, the first included, in
  ``[B/2, B]`` (digest §1, A6).

The load factor is ``x = α t / p`` with ``α = max_i α_i`` (digest §1, "Symbols"):
:func:`alphas` sets ``α = x p / t`` on table 0 and either the same on every table (``equal``)
or ``U(0, α]`` on the others (``uniform``), rounded to a few decimal places so that the exact
optimum's integer scale stays exact (correction 7); x is the target up to that rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from staleness_lab.errors import InputError

#: The arrival kinds of X1 (digest §5) and the B-quasiperiodic kind of X4/X5.
KINDS = ("poisson", "periodic", "bursty", "big-then-tiny", "quasiperiodic")
#: The kinds X1 draws (digest §5, X1).
X1_KINDS = KINDS[:4]
ALPHA_MODES = ("equal", "uniform")
#: The release-time grid (0.01) as a count per time unit.
GRID = 100


def _hundredths(value: float, name: str) -> int:
    """``value`` in whole hundredths (at least 1)."""
    count = int(round(value * GRID))
    if count < 1:
        raise InputError(name, f"must be at least 0.01, got {value}")
    return count


def _gaps(kind: str, n: int, rng: np.random.Generator, scale: int) -> np.ndarray:
    """``n`` gaps in hundredths (each >= 1) of an arrival kind at a scale in hundredths."""
    if kind == "poisson":
        return np.maximum(1, np.rint(rng.exponential(scale, n))).astype(np.int64)
    if kind == "periodic":
        jitter = np.rint(rng.uniform(-0.25, 0.25, n) * scale).astype(np.int64)
        times = scale * np.arange(1, n + 1) + jitter
        gaps = np.diff(np.concatenate([[0], times]))
        return np.maximum(1, gaps)
    if kind == "bursty":
        out: list[int] = []
        while len(out) < n:
            out.append(max(1, int(round(rng.exponential(4 * scale)))))
            size = int(rng.integers(2, 7))
            tiny = max(1, scale // 100)
            out += [int(g) for g in rng.integers(tiny, 5 * tiny + 1, size - 1)]
        return np.array(out[:n], dtype=np.int64)
    if kind == "big-then-tiny":
        out = []
        tiny = max(1, scale // 100)
        while len(out) < n:
            out.append(int(rng.integers(scale, 3 * scale + 1)))
            out += [int(g) for g in rng.integers(tiny, 5 * tiny + 1, int(rng.integers(1, 5)))]
        return np.array(out[:n], dtype=np.int64)
    if kind == "quasiperiodic":
        low, high = _quasi_range(scale)
        return rng.integers(low, high + 1, n).astype(np.int64)
    raise InputError("kind", f"must be one of {', '.join(map(repr, KINDS))}, got {kind!r}")


def _quasi_range(b: int) -> tuple[int, int]:
    """The lengths in hundredths allowed by B (in hundredths): ``[ceil(B/2), B]``."""
    if b < 2:
        raise InputError("B", f"must be at least 0.02 (two grid steps), got {b / GRID}")
    return (b + 1) // 2, b


def arrivals(kind: str, n: int, rng: np.random.Generator, scale: float = 1.0) -> list[float]:
    """``n`` strictly increasing release times on the 0.01 grid, the first > 0, of an arrival
    kind (module docstring) at ``scale`` (mean gap, period or B)."""
    if n < 1:
        raise InputError("n", f"must be >= 1, got {n}")
    ticks = np.cumsum(_gaps(kind, n, rng, _hundredths(scale, "scale")))
    return [round(int(k) / GRID, 2) for k in ticks]


def distinct_quasiperiodic(counts: Sequence[int], bs: Sequence[float], rng: np.random.Generator) -> list[list[float]]:
    """B-quasiperiodic releases for several tables (table i: ``counts[i]`` releases, B =
    ``bs[i]``) with no two releases equal across tables (Lemma 4.2 and Theorem 4.3 assume
    distinct releases, digest §1 and correction 6): each gap is drawn uniformly among the
    lengths in ``[B/2, B]`` whose release is still free (a draw that collides is redrawn among
    those)."""
    used: set[int] = set()
    out = []
    for count, b in zip(counts, bs):
        low, high = _quasi_range(_hundredths(b, "B"))
        now, times = 0, []
        for _ in range(count):
            gap = int(rng.integers(low, high + 1))
            if now + gap in used:  # then uniform among the free ones: overall uniform over them
                free = [g for g in range(low, high + 1) if now + g not in used]
                if not free:
                    raise InputError("B", f"no free release left on the 0.01 grid for B = {b}")
                gap = free[int(rng.integers(len(free)))]
            now += gap
            used.add(now)
            times.append(round(now / GRID, 2))
        out.append(times)
    return out


def alphas(t: int, p: int, x: float, mode: str, rng: np.random.Generator, decimals: int = 4) -> list[float]:
    """Per-table α_i for the load ``x = α t / p`` (digest §1): ``α = x p / t`` on table 0 and
    ``equal`` (α on every table) or ``uniform`` (U(0, α] on the others), each rounded to
    ``decimals`` places (at least one unit of the last place). The exact optimum reads numbers
    as written (correction 7), so 4 places keep its integer scale exact; x is then the target
    up to that rounding (the experiments report the actual load)."""
    if mode not in ALPHA_MODES:
        raise InputError("alphas", f"must be one of {', '.join(map(repr, ALPHA_MODES))}, got {mode!r}")
    if not x > 0:
        raise InputError("x", f"must be > 0, got {x}")
    unit = 10.0**-decimals
    alpha = max(unit, round(x * p / t, decimals))
    if mode == "equal":
        return [alpha] * t
    return [alpha] + [max(unit, round(alpha * (1.0 - u), decimals)) for u in rng.uniform(0.0, 1.0, t - 1)]


def zipf_weights(t: int, rng: np.random.Generator, s: float = 1.0) -> list[float]:
    """Zipf weights for X5 (digest §5): ranks 1..t shuffled over the tables, weight ``1/rank^s``
    rounded to 4 places (so the optimum's weights stay exact)."""
    ranks = rng.permutation(t) + 1
    return [round(float(1.0 / r**s), 4) for r in ranks]


def tables(times: Sequence[Sequence[float]], betas: Sequence[float], weights: Sequence[float] | None = None,
           length_ranges: Sequence[tuple[float, float]] | None = None) -> list[dict[str, Any]]:
    """Bateni tables ``t0, t1, ...`` (``alpha: 0, beta: α_i``, digest correction 1), with
    weights as ``priority`` and optional declared ``length_range`` (for grouping, correction 9)."""
    out = []
    for k, (arr, beta) in enumerate(zip(times, betas)):
        table: dict[str, Any] = {"name": f"t{k}", "arrivals": list(arr), "alpha": 0, "beta": float(beta),
                                 "priority": 1.0 if weights is None else float(weights[k])}
        if length_ranges is not None:
            table["length_range"] = list(length_ranges[k])
        out.append(table)
    return out


def workload(tables_: list[dict[str, Any]], p: int, seed: int = 0) -> dict[str, Any]:
    """A workload dict on ``p`` tracks; the horizon is the last release (runs are drained)."""
    last = max(table["arrivals"][-1] for table in tables_)
    return {"tracks": p, "horizon": float(last), "seed": seed, "tables": tables_}


def instance(kind: str, t: int, p: int, n: int, x: float, mode: str, seed: int, decimals: int = 4) -> dict[str, Any]:
    """One seeded instance: ``t`` tables of ``n`` releases of an arrival kind, ``p`` tracks,
    load ``x`` with α_i by ``mode`` rounded to ``decimals`` places (digest §5, X1-X3). The
    releases depend only on (seed, t, p, n, kind), so the loads and α modes of one seed share
    them (common random numbers)."""
    if not 1 <= p <= t:
        raise InputError("p", f"must satisfy 1 <= p <= t = {t}, got {p}")
    rng = np.random.default_rng([seed, t, p, n, KINDS.index(kind) if kind in KINDS else 99, 5])
    times = [arrivals(kind, n, rng) for _ in range(t)]
    return workload(tables(times, alphas(t, p, x, mode, rng, decimals)), p, seed)


def quasiperiodic_groups(sizes: Sequence[int], bs: Sequence[float], n: int, rng: np.random.Generator
                         ) -> tuple[list[list[float]], list[tuple[float, float]]]:
    """Releases for groups of B-quasiperiodic tables (group k: ``sizes[k]`` tables with
    ``B = bs[k]``, ``n`` releases each, distinct across all tables) and each table's declared
    ``length_range = [B/2, B]`` (digest §1, E9)."""
    per_table = [b for size, b in zip(sizes, bs) for _ in range(size)]
    times = distinct_quasiperiodic([n] * len(per_table), per_table, rng)
    return times, [(b / 2, b) for b in per_table]


def e3_style(rng: np.random.Generator, b: float = 1.0) -> dict[str, Any]:
    """Digest E3's shape, seeded: one table with α = 1/2, p = 1, a long update of length
    ``S1 ~ U(5, 20)·b`` then a tiny one ``S2 ~ U(0.01, 0.1)·b`` (on the grid): any schedule's
    stretch is at least about ``α S1 / S2`` (§3, "Stretch impossibility")."""
    long_ = int(rng.integers(500, 2001)) * _hundredths(b, "B") // GRID
    tiny = max(1, int(rng.integers(1, 11)) * _hundredths(b, "B") // GRID)
    return workload(tables([[long_ / GRID, (long_ + tiny) / GRID]], [0.5]), 1)


def e4_style(rng: np.random.Generator, b: float = 1.0) -> dict[str, Any]:
    """Digest E4's shape, seeded: p = 1 < g = 2, α = 1/40; table A releases at ``(k + 1/2)·b``
    through ``L + 100 b`` (B_A = b), table B once at ``L ~ U(500, 1500)·b``: an eager schedule's
    stretch is about ``α L / b`` (E4: 26.125 at L = 1000)."""
    step = _hundredths(b, "B")
    long_ = int(rng.integers(500, 1501)) * step
    a = [(k * step + step // 2) / GRID for k in range(long_ // step + 100)]
    return workload(tables([a, [long_ / GRID]], [1 / 40, 1 / 40]), 1)


def scaled(data: dict[str, Any], factor: float) -> dict[str, Any]:
    """The workload with every release multiplied by ``factor`` (acceptance check 5)."""
    return {**data, "horizon": data["horizon"] * factor,
            "tables": [{**t, "arrivals": [a * factor for a in t["arrivals"]]} for t in data["tables"]]}
