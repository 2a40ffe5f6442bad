"""Cost models of one batch, ``Cost(x)``, and of the final aggregation, ``AggCost(n)``.

Chandrasekaran & Sudarshan, Sec. 3 (digest §1): a batch of ``x`` tuples costs ``Cost(x)``
seconds, non-decreasing with ``Cost(0) = 0``; the final aggregation over the partial aggregates
of ``n`` batches costs ``AggCost(n)``, with ``AggCost(1) = 0`` (one batch needs no merge).

The JSON schema (plain JSON, so part 2's measured fits load unchanged)::

    cost:     {"kind": "linear", "S": 2, "R": 0.1}             # S + R*x for x >= 1 (eq. 1)
              {"kind": "piecewise", "S": 0.4,                  # S + the line through the points,
               "points": [[0, 0], [100, 1.5], [450, 5.1]]}     #   its last slope beyond them
              {"kind": "table", "values": [c1, c2, ..., cN]}   # Cost(x) = values[x-1]
    agg_cost: {"kind": "linear", "a0": 0.5, "a1": 0.5}         # a0 + a1*n for n >= 2 (digest [R])
              {"kind": "table", "values": [g2, g3, ...]}       # AggCost(n) = values[n-2], the last
                                                               #   step repeated beyond them
              {"kind": "none"}                                  # no final aggregation cost

Every coefficient is >= 0 and every table non-decreasing; the numbers are exact Fractions
(:mod:`staleness_lab.intermittent.numbers`).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, Protocol

from staleness_lab.errors import InputError
from staleness_lab.intermittent.numbers import exact, show
from staleness_lab.model.values import check_keys


class BatchCost(Protocol):
    """``Cost(x)`` of one batch of ``x`` tuples; non-decreasing, ``Cost(0) = 0``."""

    def __call__(self, x: int) -> Fraction: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class LinearCost:
    """Paper eq. (1): ``Cost(x) = S + R*x`` for ``x >= 1`` (S the per-batch overhead, R per tuple)."""

    S: Fraction
    R: Fraction

    def __call__(self, x: int) -> Fraction:
        return Fraction(0) if x <= 0 else self.S + self.R * x

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "linear", "S": float(self.S), "R": float(self.R)}


@dataclass(frozen=True)
class PiecewiseCost:
    """``S`` plus the piecewise-linear curve through ``points`` (x strictly increasing from 0,
    cost non-decreasing from 0), extended with its last slope: the concave fits of Fig. 3."""

    S: Fraction
    points: tuple[tuple[Fraction, Fraction], ...]

    def __call__(self, x: int) -> Fraction:
        if x <= 0:
            return Fraction(0)
        k = self._segment(x)
        (x0, c0), (x1, c1) = self.points[k], self.points[k + 1]
        return self.S + c0 + (c1 - c0) * (x - x0) / (x1 - x0)

    @cached_property
    def _xs(self) -> tuple[Fraction, ...]:
        """The points' x, searched on every call."""
        return tuple(p[0] for p in self.points)

    def _segment(self, x: int) -> int:
        """The segment whose line gives ``Cost(x)``, from ``points[k]`` to ``points[k + 1]`` (the
        first below the points, the last beyond them)."""
        return min(max(bisect.bisect_right(self._xs, x) - 1, 0), len(self.points) - 2)

    def values(self, n: int) -> tuple[Fraction, ...]:
        """``Cost(x)`` for x = 0..n, equal to calling it for each: per segment the line
        ``(A + B·x) / D`` in integers, one Fraction made per x (a paper-scale query's 4,500 values
        in about 12 ms, where a call each, a dozen Fractions, took 85 ms)."""
        out = [Fraction(0)]
        lines: dict[int, tuple[int, int, int]] = {}
        for x in range(1, n + 1):
            k = self._segment(x)
            if k not in lines:
                (x0, c0), (x1, c1) = self.points[k], self.points[k + 1]
                slope = (c1 - c0) / (x1 - x0)
                base = self.S + c0 - slope * x0
                den = math.lcm(base.denominator, slope.denominator)
                lines[k] = (base.numerator * (den // base.denominator), slope.numerator * (den // slope.denominator), den)
            a, b, den = lines[k]
            out.append(Fraction(a + b * x, den))
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "piecewise", "S": float(self.S), "points": [[float(x), float(c)] for x, c in self.points]}


@dataclass(frozen=True)
class TableCost:
    """``Cost(x) = values[x-1]``: a measured or rounded cost per batch size, defined up to ``len(values)``."""

    values: tuple[Fraction, ...]

    def __call__(self, x: int) -> Fraction:
        if x <= 0:
            return Fraction(0)
        if x > len(self.values):
            raise ValueError(f"the cost table covers batch sizes up to {len(self.values)}, asked for {x}")
        return self.values[x - 1]

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        """The values' hash, computed once: a table of N Fractions is hashed in O(N), and the
        MinBatch cache (:mod:`staleness_lab.intermittent.minbatch`) hashes its costs on every call."""
        return hash(self.values)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "table", "values": [float(v) for v in self.values]}


@dataclass(frozen=True)
class AggCost:
    """``AggCost(n)``: 0 for ``n <= 1``; ``a0 + a1*n`` (linear) or ``values[n-2]`` (table, its
    last step repeated beyond it) for ``n >= 2``."""

    a0: Fraction = Fraction(0)
    a1: Fraction = Fraction(0)
    values: tuple[Fraction, ...] | None = None

    def __call__(self, n: int) -> Fraction:
        if n <= 1:
            return Fraction(0)
        if self.values is None:
            return self.a0 + self.a1 * n
        if n - 2 < len(self.values):
            return self.values[n - 2]
        step = self.values[-1] - self.values[-2] if len(self.values) >= 2 else Fraction(0)
        return self.values[-1] + step * (n - 1 - len(self.values))

    def to_dict(self) -> dict[str, Any]:
        if self.values is not None:
            return {"kind": "table", "values": [float(v) for v in self.values]}
        if self.a0 == 0 and self.a1 == 0:
            return {"kind": "none"}
        return {"kind": "linear", "a0": float(self.a0), "a1": float(self.a1)}


NO_AGG = AggCost()


def est(cost: BatchCost, budget: Fraction, limit: int) -> int:
    """``EstimateTuplesProcessed`` (digest §1): the largest ``x <= limit`` with ``Cost(x) <= budget``
    (0 when even one tuple does not fit). Binary search: Cost is non-decreasing."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


# -- JSON ------------------------------------------------------------------------------------


def _kind(data: Any, field: str, kinds: tuple[str, ...]) -> tuple[dict[str, Any], str]:
    if not isinstance(data, dict):
        raise InputError(field, f"must be a mapping with a 'kind' ({', '.join(kinds)}), got {data!r}")
    kind = data.get("kind")
    if kind not in kinds:
        raise InputError(f"{field}.kind", f"must be one of {', '.join(kinds)}, got {kind!r}")
    return data, kind


def _keys(data: dict[str, Any], field: str, allowed: set[str]) -> None:
    check_keys(data, field, allowed=allowed, required=allowed)


def _non_decreasing(values: list[Fraction], field: str) -> None:
    for k in range(1, len(values)):
        if values[k] < values[k - 1]:
            raise InputError(f"{field}[{k}]", f"must be non-decreasing: {show(values[k])} after {show(values[k - 1])}")


def _values(raw: Any, field: str) -> list[Fraction]:
    if not isinstance(raw, (list, tuple)) or not raw:
        raise InputError(field, f"must be a non-empty list of numbers, got {raw!r}")
    values = [exact(v, f"{field}[{k}]", ge=0) for k, v in enumerate(raw)]
    _non_decreasing(values, field)
    return values


def parse_cost(data: Any, field: str = "cost") -> BatchCost:
    """A batch cost model from its JSON form (schema in the module docstring)."""
    data, kind = _kind(data, field, ("linear", "piecewise", "table"))
    if kind == "linear":
        _keys(data, field, {"kind", "S", "R"})
        return LinearCost(S=exact(data["S"], f"{field}.S", ge=0), R=exact(data["R"], f"{field}.R", ge=0))
    if kind == "table":
        _keys(data, field, {"kind", "values"})
        return TableCost(values=tuple(_values(data["values"], f"{field}.values")))
    _keys(data, field, {"kind", "S", "points"})
    raw = data["points"]
    if not isinstance(raw, (list, tuple)) or len(raw) < 2:
        raise InputError(f"{field}.points", "must list at least two [x, cost] points")
    points: list[tuple[Fraction, Fraction]] = []
    for k, point in enumerate(raw):
        if not isinstance(point, (list, tuple)) or len(point) != 2:
            raise InputError(f"{field}.points[{k}]", f"must be a pair [x, cost], got {point!r}")
        points.append((exact(point[0], f"{field}.points[{k}][0]", ge=0), exact(point[1], f"{field}.points[{k}][1]", ge=0)))
    if points[0] != (0, 0):
        raise InputError(f"{field}.points[0]", "must be [0, 0] (the overhead is S)")
    for k in range(1, len(points)):
        if points[k][0] <= points[k - 1][0]:
            raise InputError(f"{field}.points[{k}][0]", "x must be strictly increasing")
    _non_decreasing([c for _, c in points], f"{field}.points")
    return PiecewiseCost(S=exact(data["S"], f"{field}.S", ge=0), points=tuple(points))


def parse_agg_cost(data: Any, field: str = "agg_cost") -> AggCost:
    """An aggregation cost model from its JSON form (schema in the module docstring)."""
    data, kind = _kind(data, field, ("linear", "table", "none"))
    if kind == "none":
        _keys(data, field, {"kind"})
        return NO_AGG
    if kind == "linear":
        _keys(data, field, {"kind", "a0", "a1"})
        return AggCost(a0=exact(data["a0"], f"{field}.a0", ge=0), a1=exact(data["a1"], f"{field}.a1", ge=0))
    _keys(data, field, {"kind", "values"})
    return AggCost(values=tuple(_values(data["values"], f"{field}.values")))
