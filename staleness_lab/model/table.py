"""One warehouse table: a base table fed by a periodic or replayed feed, or a derived view.

Cost model (Golab et al., Sec. 2.2): an update loading a freshness delta of ``n`` time units of
data costs ``E(n) = alpha + beta * n``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.model.values import require_label, require_list, require_number, require_str

PERIODIC = "periodic"
REPLAYED = "replayed"
DERIVED = "derived"
#: The ``target_lag`` value that defers to the table's dependents (:mod:`staleness_lab.model.targets`).
DOWNSTREAM = "downstream"


@dataclass(frozen=True)
class Table:
    """An immutable, validated table description.

    Exactly one of ``period`` (periodic feed: arrivals at ``phase + k*period``, k = 1, 2, ...,
    each making data up to its arrival time available), ``arrivals`` (a replayed feed: pairs
    ``(time, data_to)``) or ``sources`` (a derived table over other tables) is given.
    ``nominal_period`` gives a replayed feed the period that period-based policies need.
    ``length_range`` declares the update lengths ``[Lmin, Lmax]`` of a base table, for Bateni et
    al.'s grouping of B-quasiperiodic tables (Sec. 2, Fig. 2; digest example E9); see
    :meth:`declared_lengths` for its default.
    ``chop`` caps one job at ``chop`` periods of data; ``min_separation`` delays a release until
    that long after the previous one (the sporadic rule).

    Leontyev et al.'s AUS model (Def. 2, Def. 10, Sec. 2.4) adds, per table:

    * ``outages`` ``((start, end), ...)`` on a base table (periodic or replayed): sorted,
      disjoint, ``0 <= start < end``; a file arriving in ``[start, end)`` lands at ``end`` with its
      timestamp unchanged (:mod:`staleness_lab.model.feeds`);
    * ``arrival_jitter`` J in ``[0, period]`` and ``timestamp_jitter`` kappa >= 0 on a periodic
      table: file k arrives at ``phase + k*period - J*u_k`` with timestamp ``arrival - kappa*v_k``
      (seeded uniforms; timestamps kept non-decreasing);
    * ``budget`` e_k > 0, ``recovery_period`` p_k^[r] > 0 and ``recovery_threshold`` Delta F >= 0.
      Def. 10's ``e_k <= p_k^[r] <= p_k`` is checked when a scheduler binds; here only as far as
      the table itself gives both sides (``budget`` and ``recovery_period``; ``period`` or
      ``nominal_period`` and ``recovery_period``).

    ``target_lag`` is a freshness target (a number > 0 in the workload's time unit, end-to-end)
    or ``downstream``; :mod:`staleness_lab.model.targets` resolves it through the view DAG.

    ``nominal_period`` is also valid on a derived table (its p_k, in place of the largest period of
    its base ancestors); never on a periodic one. A table with outages or a nonzero jitter has a
    :attr:`compiled_feed`: its files are compiled once (:attr:`Workload.files`) and replayed.
    """

    name: str
    alpha: float
    beta: float
    priority: float = 1.0
    period: float | None = None
    phase: float = 0.0
    arrivals: tuple[tuple[float, float], ...] | None = None
    nominal_period: float | None = None
    sources: tuple[str, ...] | None = None
    initial_freshness: float = 0.0
    chop: float | None = None
    min_separation: float = 0.0
    length_range: tuple[float, float] | None = None
    outages: tuple[tuple[float, float], ...] | None = None
    arrival_jitter: float = 0.0
    timestamp_jitter: float = 0.0
    budget: float | None = None
    recovery_period: float | None = None
    recovery_threshold: float | None = None
    target_lag: float | str | None = None

    def __post_init__(self) -> None:
        name = require_label(self.name, "name")
        kinds = [k for k in ("period", "arrivals", "sources") if getattr(self, k) is not None]
        if len(kinds) != 1:
            rule = "none given" if not kinds else f"more than one given ({', '.join(kinds)})"
            raise InputError("period|arrivals|sources", f"exactly one of period, arrivals, sources is required: {rule}", table=name)
        self._set("alpha", require_number(self.alpha, "alpha", ge=0, table=name))
        self._set("beta", require_number(self.beta, "beta", ge=0, table=name))
        if self.alpha == 0 and self.beta == 0:
            raise InputError("alpha", "alpha and beta must not both be 0 (an update must cost something)", table=name)
        self._set("priority", require_number(self.priority, "priority", gt=0, table=name))
        self._set("initial_freshness", require_number(self.initial_freshness, "initial_freshness", le=0, table=name))
        self._set("min_separation", require_number(self.min_separation, "min_separation", ge=0, table=name))
        if self.chop is not None:
            self._set("chop", require_number(self.chop, "chop", ge=1, table=name))
        if self.period is not None:
            self._set("period", require_number(self.period, "period", gt=0, table=name))
            self._set("phase", require_number(self.phase, "phase", ge=0, table=name))
        elif self.phase != 0:
            raise InputError("phase", "applies only to a table with a period", table=name)
        if self.nominal_period is not None:
            if self.period is not None:
                raise InputError("nominal_period", "applies only to a table with arrivals or sources "
                                 "(a periodic table's period is its own)", table=name)
            self._set("nominal_period", require_number(self.nominal_period, "nominal_period", gt=0, table=name))
        if self.arrivals is not None:
            self._set("arrivals", _check_arrivals(self.arrivals, name))
        if self.sources is not None:
            sources = tuple(require_str(s, f"sources[{k}]", table=name) for k, s in enumerate(require_list(self.sources, "sources", table=name)))
            if len(set(sources)) != len(sources):
                raise InputError("sources", "lists a source more than once", table=name)
            self._set("sources", sources)
        if self.length_range is not None:
            if self.sources is not None:
                raise InputError("length_range", "applies only to a base table (a feed's update lengths)", table=name)
            self._set("length_range", _check_length_range(self.length_range, name))
        self._check_feed_keys(name)
        self._check_task_keys(name)
        if self.target_lag is not None:
            self._set("target_lag", _check_target_lag(self.target_lag, name))

    def _check_feed_keys(self, name: str) -> None:
        """``outages`` (base tables) and the jitters (periodic tables)."""
        if self.outages is not None:
            if self.sources is not None:
                raise InputError("outages", "applies only to a base table (a feed's files)", table=name)
            self._set("outages", _check_outages(self.outages, name))
        for key in ("arrival_jitter", "timestamp_jitter"):
            value = require_number(getattr(self, key), key, ge=0, table=name)
            if value and self.period is None:
                raise InputError(key, "applies only to a periodic table", table=name)
            self._set(key, value)
        if self.period is not None and self.arrival_jitter > self.period:
            raise InputError("arrival_jitter", f"must be <= the period {self.period:g} (Def. 2: J in [0, p]), "
                             f"got {self.arrival_jitter:g}", table=name)

    def _check_task_keys(self, name: str) -> None:
        """``budget`` > 0, ``recovery_period`` > 0 (within ``[budget, p_k]`` as far as this table
        gives them), ``recovery_threshold`` >= 0."""
        if self.budget is not None:
            self._set("budget", require_number(self.budget, "budget", gt=0, table=name))
        if self.recovery_period is not None:
            self._set("recovery_period", _check_recovery_period(self, name))
        if self.recovery_threshold is not None:
            self._set("recovery_threshold", require_number(self.recovery_threshold, "recovery_threshold", ge=0, table=name))

    def _set(self, key: str, value: Any) -> None:
        """Store a normalised value on the frozen instance (validation only)."""
        object.__setattr__(self, key, value)

    @property
    def kind(self) -> str:
        """``periodic``, ``replayed`` or ``derived``."""
        if self.period is not None:
            return PERIODIC
        if self.arrivals is not None:
            return REPLAYED
        return DERIVED

    @property
    def is_base(self) -> bool:
        return self.sources is None

    @property
    def compiled_feed(self) -> bool:
        """Whether the feed's files must be compiled (outages, or a nonzero jitter) rather than
        generated on the plain periodic path or replayed as listed."""
        return self.outages is not None or self.arrival_jitter > 0 or self.timestamp_jitter > 0

    def cost(self, n: float) -> float:
        """Nominal update cost E(n) = alpha + beta*n (Golab et al., Sec. 2.2)."""
        return self.alpha + self.beta * n

    def updates(self) -> tuple[tuple[float, float], ...]:
        """A replayed feed's updates: its ``(time, data_to)`` arrivals that add data beyond
        ``initial_freshness`` and every earlier arrival (Bateni et al., Sec. 1: an arrival adding
        no data is no update)."""
        if self.arrivals is None:
            raise ValueError(f"table {self.name!r} has no listed arrivals")
        out, edge = [], self.initial_freshness
        for time, data_to in self.arrivals:
            if data_to > edge:
                out.append((time, data_to))
                edge = data_to
        return tuple(out)

    def update_lengths(self) -> tuple[float, ...]:
        """A replayed feed's update lengths L_j = d_j - d_{j-1} (d_0 = ``initial_freshness``)
        over :meth:`updates`."""
        ends = [self.initial_freshness, *(d for _, d in self.updates())]
        return tuple(b - a for a, b in zip(ends, ends[1:]))

    def declared_lengths(self) -> tuple[float, float] | None:
        """``(Lmin, Lmax)`` for grouping (Bateni et al., Sec. 2): ``length_range`` when given,
        else the listed minimum and maximum update length (replayed) or the period (periodic);
        None for a derived table or a replayed feed adding no data."""
        if self.length_range is not None:
            return self.length_range
        if self.period is not None:
            return (self.period, self.period)
        if self.arrivals is not None:
            lengths = self.update_lengths()
            return (min(lengths), max(lengths)) if lengths else None
        return None

    def to_dict(self) -> dict[str, Any]:
        """The YAML/JSON form: only keys that differ from their defaults, in schema order."""
        out: dict[str, Any] = {"name": self.name}
        if self.period is not None:
            out["period"] = self.period
            if self.phase:
                out["phase"] = self.phase
        if self.arrivals is not None:
            out["arrivals"] = [list(a) for a in self.arrivals]
        if self.sources is not None:
            out["sources"] = list(self.sources)
        if self.nominal_period is not None:
            out["nominal_period"] = self.nominal_period
        out.update(alpha=self.alpha, beta=self.beta, priority=self.priority)
        if self.initial_freshness:
            out["initial_freshness"] = self.initial_freshness
        if self.chop is not None:
            out["chop"] = self.chop
        if self.min_separation:
            out["min_separation"] = self.min_separation
        if self.length_range is not None:
            out["length_range"] = list(self.length_range)
        if self.outages is not None:
            out["outages"] = [list(o) for o in self.outages]
        for key in ("arrival_jitter", "timestamp_jitter"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        for key in ("budget", "recovery_period", "recovery_threshold", "target_lag"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def _check_target_lag(value: Any, name: str) -> float | str:
    """A table's own ``target_lag``: a number > 0 or :data:`DOWNSTREAM`."""
    if value == DOWNSTREAM:
        return DOWNSTREAM
    if isinstance(value, str):
        raise InputError("target_lag", f"must be a number > 0 or {DOWNSTREAM!r}, got {value!r}", table=name)
    return require_number(value, "target_lag", gt=0, table=name)


def _check_arrivals(arrivals: Any, name: str) -> tuple[tuple[float, float], ...]:
    """Replayed feed: entries ``t`` (an update arriving at t with data up to t, Bateni et al.'s
    form) or pairs ``[time, data_to]``, mixed freely and stored as pairs; times >= 0 strictly
    increasing, ``data_to <= time`` and non-decreasing."""
    out: list[tuple[float, float]] = []
    for k, pair in enumerate(require_list(arrivals, "arrivals", table=name)):
        field_ = f"arrivals[{k}]"
        if isinstance(pair, (int, float)) and not isinstance(pair, bool):
            time = require_number(pair, field_, ge=0, table=name)
            data_to = time
        elif not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InputError(field_, "must be a time t or a pair [time, data_to]", table=name)
        else:
            time = require_number(pair[0], field_ + "[0]", ge=0, table=name)
            data_to = require_number(pair[1], field_ + "[1]", le=time, table=name)
        if out and time <= out[-1][0]:
            raise InputError(field_, f"times must increase: {time:g} after {out[-1][0]:g}", table=name)
        if out and data_to < out[-1][1]:
            raise InputError(field_, f"data_to must not decrease: {data_to:g} after {out[-1][1]:g}", table=name)
        out.append((time, data_to))
    return tuple(out)


def _check_length_range(value: Any, name: str) -> tuple[float, float]:
    """``[Lmin, Lmax]`` with 0 < Lmin <= Lmax."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise InputError("length_range", "must be a pair [Lmin, Lmax]", table=name)
    low = require_number(value[0], "length_range[0]", gt=0, table=name)
    high = require_number(value[1], "length_range[1]", ge=low, table=name)
    return (low, high)


def _check_recovery_period(table: Table, name: str) -> float:
    """``recovery_period`` > 0, and within Def. 10's ``[e_k, p_k]`` where the table gives
    ``budget`` (e_k) or its own ``period`` / ``nominal_period`` (p_k)."""
    value = require_number(table.recovery_period, "recovery_period", gt=0, table=name)
    if table.budget is not None and value < table.budget:
        raise InputError("recovery_period", f"must be >= the budget {table.budget:g} (Def. 10: e_k <= p_k^[r]), "
                         f"got {value:g}", table=name)
    own = table.period if table.period is not None else table.nominal_period
    if own is not None and value > own:
        raise InputError("recovery_period", f"must be <= the period {own:g} (Def. 10: p_k^[r] <= p_k), "
                         f"got {value:g}", table=name)
    return value


def _check_outages(value: Any, name: str) -> tuple[tuple[float, float], ...] | None:
    """``[[start, end], ...]`` with ``0 <= start < end``, sorted and disjoint (each start at or
    after the previous end); an empty list is no outage (None)."""
    out: list[tuple[float, float]] = []
    for k, pair in enumerate(require_list(value, "outages", table=name, non_empty=False)):
        field_ = f"outages[{k}]"
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InputError(field_, "must be a pair [start, end]", table=name)
        start = require_number(pair[0], field_ + "[0]", ge=0, table=name)
        end = require_number(pair[1], field_ + "[1]", gt=start, table=name)
        if out and start < out[-1][1]:
            raise InputError(field_ + "[0]", f"outages must be sorted and disjoint: start {start:g} is before "
                             f"the end {out[-1][1]:g} of outages[{k - 1}]", table=name)
        out.append((start, end))
    return tuple(out) or None
