"""A query's input: how many of its ``N`` tuples have arrived by time ``t``.

Digest §1 [R]: tuple ``k`` of a fixed-rate window arrives at ``InputTime(k) = ws + (k-1)/λ``, so
``A(t) = min(N, floor(λ(t - ws)) + 1)`` for ``t >= ws`` (0 before) and ``we = InputTime(N)``; the
paper's example (ws = 1, λ = 1, N = 10: tuple k at time k) fixes this reading. A variable rate is
any non-decreasing step function, given as a table of ``[time, count]`` steps ending at ``N``.

Generators (digest §6, Fig. 9): ``fixed_rate`` (FR) and the seeded profiles VR1-VR4, drawn as
piecewise-linear cumulative curves over the nominal window ``W = (N-1)/λ``:

* VR1: faster, the last tuple at ``ws + 0.9 W``;
* VR2: faster and bursty, bursts at 5x the rate separated by pauses, the last tuple at ``0.9 W``;
* VR3, VR4: slower, the last tuple ``20/4500 W`` and ``7/4500 W`` late.

The paper gives no numeric curves, so the shapes between those ends are our reading: seeded
random rates on ten equal segments (VR1, VR3, VR4) and five bursts of seeded sizes (VR2).
Generated times sit on a 0.01 grid so plans stay exact and CP-SAT stays on its time grid.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from staleness_lab.errors import InputError
from staleness_lab.intermittent.numbers import exact, show
from staleness_lab.model.values import check_keys

#: The rate profiles of Fig. 9.
PROFILES = ("FR", "VR1", "VR2", "VR3", "VR4")
#: Generated arrival times are multiples of this (seconds).
GRID = Fraction(1, 100)


@dataclass(frozen=True)
class FixedRate:
    """``N`` tuples at rate ``rate`` (λ) from ``ws``: tuple k at ``ws + (k-1)/λ``."""

    ws: Fraction
    rate: Fraction
    n: int

    @property
    def we(self) -> Fraction:
        return self.input_time(self.n)

    def available(self, t: Fraction) -> int:
        """``A(t)``: tuples arrived by ``t`` (inclusive)."""
        if t < self.ws:
            return 0
        return min(self.n, math.floor((t - self.ws) * self.rate) + 1)

    def input_time(self, k: int) -> Fraction:
        """``InputTime(k)``: when tuple ``k`` (1-based) arrives."""
        return self.ws + Fraction(k - 1) / self.rate

    def next_arrival(self, t: Fraction) -> Fraction | None:
        """The first arrival strictly after ``t``, or None when all have arrived by ``t``."""
        k = self.available(t)
        return None if k >= self.n else self.input_time(k + 1)

    def nominal_time(self, k: int) -> Fraction:
        """When tuple ``k`` arrives at the nominal rate: for a fixed rate, ``InputTime(k)``."""
        return self.input_time(k)

    def to_dict(self) -> dict[str, Any]:
        return {"ws": float(self.ws), "rate": float(self.rate), "N": self.n}


@dataclass(frozen=True)
class StepProfile:
    """A tabulated ``A(t)``: ``counts[j]`` tuples have arrived from ``times[j]`` on (times
    strictly increasing, counts strictly increasing from >= 1, the last count is ``N``).

    ``nominal_rate`` is the rate the window was planned for (the generators' λ); the dispatcher's
    time triggers (§4.4) compare arrivals against it. Without it the nominal rate is the
    profile's own average, ``(N - 1) / (we - ws)``."""

    times: tuple[Fraction, ...]
    counts: tuple[int, ...]
    nominal_rate: Fraction | None = None

    @property
    def n(self) -> int:
        return self.counts[-1]

    @property
    def ws(self) -> Fraction:
        return self.times[0]

    @property
    def we(self) -> Fraction:
        return self.times[-1]

    def available(self, t: Fraction) -> int:
        j = bisect.bisect_right(self.times, t) - 1
        return 0 if j < 0 else self.counts[j]

    def input_time(self, k: int) -> Fraction:
        return self.times[bisect.bisect_left(self.counts, k)]

    def next_arrival(self, t: Fraction) -> Fraction | None:
        j = bisect.bisect_right(self.times, t)
        return None if j >= len(self.times) else self.times[j]

    def nominal_time(self, k: int) -> Fraction:
        """When tuple ``k`` would arrive at the nominal rate from ``ws``."""
        if self.nominal_rate is not None:
            return self.ws + Fraction(k - 1) / self.nominal_rate
        if self.n == 1 or self.we == self.ws:
            return self.ws
        return self.ws + (self.we - self.ws) * (k - 1) / (self.n - 1)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"profile": [[float(t), c] for t, c in zip(self.times, self.counts)]}
        if self.nominal_rate is not None:
            data["nominal_rate"] = float(self.nominal_rate)
        return data


Arrivals = FixedRate | StepProfile


def parse_arrivals(data: Any, field: str) -> Arrivals:
    """``{ws, rate, N}`` or ``{profile: [[time, count], ...], nominal_rate: λ, N}`` (the last two
    optional; a given ``N`` must be the profile's last count)."""
    if not isinstance(data, dict):
        raise InputError(field, f"must be a mapping ({{ws, rate, N}} or {{profile}}), got {data!r}")
    if "profile" in data:
        check_keys(data, field, allowed={"profile", "nominal_rate", "N"}, required={"profile"})
        profile = _parse_profile(data["profile"], f"{field}.profile")
        if "N" in data and _count(data["N"], f"{field}.N") != profile.n:
            raise InputError(f"{field}.profile", f"must end at N = {data['N']}, ends at {profile.n}")
        if data.get("nominal_rate") is not None:
            rate = exact(data["nominal_rate"], f"{field}.nominal_rate", gt=0)
            profile = StepProfile(times=profile.times, counts=profile.counts, nominal_rate=rate)
        return profile
    check_keys(data, field, allowed={"ws", "rate", "N"}, required={"ws", "rate", "N"})
    n = _count(data["N"], f"{field}.N")
    return FixedRate(ws=exact(data["ws"], f"{field}.ws", ge=0), rate=exact(data["rate"], f"{field}.rate", gt=0), n=n)


def _count(value: Any, field: str) -> int:
    """``N``: an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(field, f"must be an integer, got {value!r}")
    if value < 1:
        raise InputError(field, f"must be >= 1, got {value}")
    return value


def _parse_profile(raw: Any, field: str) -> StepProfile:
    if not isinstance(raw, (list, tuple)) or not raw:
        raise InputError(field, "must be a non-empty list of [time, count] steps")
    times: list[Fraction] = []
    counts: list[int] = []
    for k, step in enumerate(raw):
        if not isinstance(step, (list, tuple)) or len(step) != 2:
            raise InputError(f"{field}[{k}]", f"must be a pair [time, count], got {step!r}")
        t = exact(step[0], f"{field}[{k}][0]", ge=0)
        c = step[1]
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise InputError(f"{field}[{k}][1]", f"must be an integer count >= 1, got {c!r}")
        if times and t <= times[-1]:
            raise InputError(f"{field}[{k}][0]", f"times must be strictly increasing: {show(t)} after {show(times[-1])}")
        if counts and c <= counts[-1]:
            raise InputError(f"{field}[{k}][1]", f"the profile must be increasing: count {c} after {counts[-1]}")
        times.append(t)
        counts.append(c)
    return StepProfile(times=tuple(times), counts=tuple(counts))


# -- generators (Fig. 9) ---------------------------------------------------------------------


def fixed_rate(n: int, rate: float | Fraction = 1, ws: float | Fraction = 1) -> FixedRate:
    """FR: ``n`` tuples at a fixed rate from ``ws``."""
    return FixedRate(ws=exact(ws, "ws", ge=0), rate=exact(rate, "rate", gt=0), n=n)


def rate_profile(kind: str, n: int, rate: float | Fraction = 1, ws: float | Fraction = 1, seed: int = 0) -> Arrivals:
    """One of Fig. 9's profiles (module docstring) for a window of ``n`` tuples nominally at
    ``rate`` from ``ws``; FR is exact, VR1-VR4 are seeded step profiles on a 0.01 grid."""
    if kind not in PROFILES:
        raise InputError("profile", f"must be one of {', '.join(PROFILES)}, got {kind!r}")
    return _rate_profile(kind, fixed_rate(n, rate, ws), seed)


@lru_cache(maxsize=128)
def _rate_profile(kind: str, base: FixedRate, seed: int) -> Arrivals:
    """:func:`rate_profile` on its checked, exact nominal window ``base``, built once per process
    (the result is immutable): every policy of Figs. 10-11 runs on the same 13 windows of a seed
    and profile."""
    n = base.n
    if kind == "FR" or n == 1:
        return base
    width = float((n - 1) / base.rate)
    rng = np.random.default_rng([seed, PROFILES.index(kind)])
    if kind == "VR2":
        # five bursts at 5x the nominal rate carrying seeded shares of the window, equal pauses
        # between them, ending at 0.9 W
        bursts = 5
        shares = rng.uniform(0.5, 1.5, size=bursts)
        shares /= shares.sum()
        gap = (0.9 * width - width / 5) / (bursts - 1)
        knots: list[tuple[float, float]] = []
        start, done = 0.0, 0.0
        for share in shares:
            knots += [(start, done), (start + share * width / 5, done + share)]
            start, done = start + share * width / 5 + gap, done + share
        knots_t, knots_c = zip(*knots)
        curve_t, curve_c = np.array(knots_t), np.array(knots_c)
    else:
        end = {"VR1": 0.9, "VR3": 1 + 20 / 4500, "VR4": 1 + 7 / 4500}[kind] * width
        lo, hi = (1.0, 2.0) if kind == "VR1" else (0.5, 1.5)
        weights = rng.uniform(lo, hi, size=10)
        curve_t = np.linspace(0.0, end, 11)
        curve_c = np.concatenate([[0.0], np.cumsum(weights) / weights.sum()])
    # tuple k (1..n) arrives where the cumulative curve reaches (k-1)/(n-1)
    share = np.arange(n) / (n - 1)
    offsets = np.interp(share, curve_c, curve_t)
    ticks = np.maximum.accumulate(np.round(offsets / float(GRID)).astype(np.int64))
    # one step per distinct tick (ticks never fall), counting every tuple arrived by it; its time
    # ws + tick·GRID written as one fraction: a window of 4500 tuples was 4500 Fraction sums
    last = np.flatnonzero(np.diff(ticks, append=ticks[-1] + 1))
    num, den = base.ws.numerator * GRID.denominator, base.ws.denominator * GRID.denominator
    step = base.ws.denominator * GRID.numerator
    times = tuple(Fraction(num + tick * step, den) for tick in ticks[last].tolist())
    return StepProfile(times=times, counts=tuple((last + 1).tolist()), nominal_rate=base.rate)
