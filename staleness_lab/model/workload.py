"""A workload: tracks, horizon, seed, tables and the global execution-model keys."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field as dataclass_field, replace
from functools import cached_property
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.model.dag import ancestors, topological_order
from staleness_lab.model.feeds import Files, compile_files, last_landing
from staleness_lab.model.table import Table
from staleness_lab.model.targets import resolve_target_lags
from staleness_lab.model.values import require_int, require_number, require_str


#: The most tracks a workload may declare. At most one job per table runs at a time, so tracks
#: beyond the number of tables are never used (the engine does not allocate them).
MAX_TRACKS = 10_000
#: Seeds are stored as 64-bit integers in traces and Parquet metadata.
MAX_SEED = 2**63 - 1
#: Totals (weighted staleness, costs) must stay below this, far from float overflow (1.8e308).
MAGNITUDE_LIMIT = 1e300
#: Leontyev et al.'s budget provisioning (Sec. VII): e_k from the worst or the average cost.
PROVISIONING = ("worst", "average")


@dataclass(frozen=True)
class Slowdown:
    """Alternating normal and slow periods, starting normal (Golab et al., Sec. 5, type-2 runs).

    A job that starts in a slow period costs ``factor`` times as much. ``normal == 0`` means
    always slow; ``slow == 0`` never slow.
    """

    factor: float
    normal: float
    slow: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "factor", require_number(self.factor, "slowdown.factor", gt=0))
        object.__setattr__(self, "normal", require_number(self.normal, "slowdown.normal", ge=0))
        object.__setattr__(self, "slow", require_number(self.slow, "slowdown.slow", ge=0))
        if self.normal + self.slow <= 0:
            raise InputError("slowdown.slow", "normal and slow must not both be 0")

    def multiplier(self, t: float) -> float:
        """The cost multiplier for a job starting at time ``t``."""
        if self.normal == 0:
            return self.factor
        return self.factor if t % (self.normal + self.slow) >= self.normal else 1.0


@dataclass(frozen=True)
class Workload:
    """An immutable, validated warehouse workload (see the README for the schema).

    ``tracks`` identical processors, simulated and measured over ``[0, horizon]`` (metrics over
    ``[warmup, horizon]``). ``variability`` b draws each actual cost uniformly from
    ``[b*E, (1+b)*E]`` (Golab et al., Sec. 5); ``cost_noise`` ``(lo, hi)`` from ``[lo*E, hi*E]``
    on the same streams (Leontyev et al., Sec. VII; not both); ``provisioning`` (``worst`` or
    ``average``) is how AUS sizes default budgets. ``chop`` is the default for tables without one.
    """

    tables: tuple[Table, ...]
    tracks: int = 1
    horizon: float = 100.0
    seed: int = 0
    variability: float | None = None
    slowdown: Slowdown | None = None
    warmup: float = 0.0
    chop: float | None = None
    cost_noise: tuple[float, float] | None = None
    provisioning: str = "worst"
    #: Per table (file order), its freshness target with ``downstream`` resolved, or None
    #: (:func:`staleness_lab.model.targets.resolve_target_lags`); computed, not a key.
    target_lags: tuple[float | None, ...] = dataclass_field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "tracks", require_int(self.tracks, "tracks", minimum=1, maximum=MAX_TRACKS))
        set_(self, "horizon", require_number(self.horizon, "horizon", gt=0))
        set_(self, "seed", require_int(self.seed, "seed", minimum=0, maximum=MAX_SEED))
        set_(self, "warmup", require_number(self.warmup, "warmup", ge=0, lt=self.horizon))
        if self.variability is not None:
            set_(self, "variability", require_number(self.variability, "variability", ge=0))
        if self.chop is not None:
            set_(self, "chop", require_number(self.chop, "chop", ge=1))
        if self.cost_noise is not None:
            set_(self, "cost_noise", self._checked_cost_noise())
        if require_str(self.provisioning, "provisioning") not in PROVISIONING:
            raise InputError("provisioning", f"must be one of {', '.join(PROVISIONING)}, got {self.provisioning!r}")
        if self.slowdown is not None and not isinstance(self.slowdown, Slowdown):
            raise InputError("slowdown", "must be a Slowdown {factor, normal, slow}")
        if not isinstance(self.tables, (list, tuple)):
            raise InputError("tables", "must be a list of tables")
        if not self.tables:
            raise InputError("tables", "must not be empty")
        set_(self, "tables", tuple(self.tables))
        order = self._check_tables()
        self._check_magnitudes()
        set_(self, "target_lags", resolve_target_lags(self.tables, self.children, order))

    def _checked_cost_noise(self) -> tuple[float, float]:
        """``[lo, hi]`` with 0 <= lo <= hi and hi > 0, and no ``variability`` beside it."""
        if self.variability is not None:
            raise InputError("cost_noise", "not both with variability (variability b is cost_noise [b, 1+b])")
        value = self.cost_noise
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise InputError("cost_noise", f"must be a pair [lo, hi], got {value!r}")
        lo = require_number(value[0], "cost_noise[0]", ge=0)
        return (lo, require_number(value[1], "cost_noise[1]", ge=lo, gt=0))

    def _check_tables(self) -> list[int]:
        """Tables are Tables with distinct names, sources known, no cycle, initial freshness within
        the sources'; returns the positions in topological order (each source first)."""
        seen: dict[str, int] = {}
        for k, table in enumerate(self.tables):
            if not isinstance(table, Table):
                raise InputError(f"tables[{k}]", "must be a Table")
            if table.name in seen:
                raise InputError(f"tables[{k}].name", f"duplicate name (also tables[{seen[table.name]}])", table=table.name)
            seen[table.name] = k
        for k, table in enumerate(self.tables):
            for j, src in enumerate(table.sources or ()):
                if src not in seen:
                    raise InputError(f"tables[{k}].sources[{j}]", f"unknown source {src!r}", table=table.name)
        order = [self.index[name] for name in topological_order([t.name for t in self.tables], self.source_map)]
        for k, table in enumerate(self.tables):
            if table.sources:
                edge = min(self.table(s).initial_freshness for s in table.sources)
                if table.initial_freshness > edge:
                    raise InputError(
                        f"tables[{k}].initial_freshness",
                        f"must be <= the trailing edge of its sources at time 0 ({edge:g})",
                        table=table.name,
                    )
        return order

    def _check_magnitudes(self) -> None:
        """Refuse weights and costs whose totals would overflow a float (an ``inf`` total is no
        result): every table's weighted staleness area is at most ``priority * H * (H - F(0))``
        and one job's cost at most ``(alpha + beta * (H - F(0))) * noise * slowdown``, with H
        the horizon (or the landing of the last listed arrival, if later) and noise the largest
        cost multiplier (``1 + b``, ``cost_noise``'s hi, else 1); each, and their sum, must stay
        below :data:`MAGNITUDE_LIMIT`."""
        end = max([self.horizon, *(last_landing(t) for t in self.tables if t.arrivals)])
        noise = self.cost_noise[1] if self.cost_noise is not None else 1.0 + (self.variability or 0.0)
        scale = noise * (self.slowdown.factor if self.slowdown else 1.0)
        total = 0.0
        for k, table in enumerate(self.tables):
            span = end - table.initial_freshness
            if span * span > MAGNITUDE_LIMIT:
                field = "horizon" if end == self.horizon else f"tables[{k}].arrivals"
                raise InputError(field, f"{end:g} makes staleness areas overflow (span {span:g} squared is above "
                                        f"{MAGNITUDE_LIMIT:g})", table=None if field == "horizon" else table.name)
            area = table.priority * end * span
            if not area < MAGNITUDE_LIMIT:
                raise InputError(f"tables[{k}].priority", f"{table.priority:g} makes the weighted staleness overflow "
                                 f"(up to {area:g} over horizon {end:g}, above {MAGNITUDE_LIMIT:g})", table=table.name)
            total += area
            if not total < MAGNITUDE_LIMIT:
                raise InputError(f"tables[{k}].priority", f"the total weighted staleness could overflow (up to "
                                 f"{total:g}, above {MAGNITUDE_LIMIT:g})", table=table.name)
            cost = (table.alpha + table.beta * span) * scale
            if not cost < MAGNITUDE_LIMIT:
                key = "alpha" if table.alpha * scale >= MAGNITUDE_LIMIT / 2 else "beta"
                raise InputError(f"tables[{k}].{key}", f"{getattr(table, key):g} makes one update's cost overflow "
                                 f"(up to {cost:g}, above {MAGNITUDE_LIMIT:g})", table=table.name)

    # -- structure -------------------------------------------------------------------------
    @cached_property
    def index(self) -> dict[str, int]:
        """Table name -> position in the file (the tie-break of every order)."""
        return {t.name: k for k, t in enumerate(self.tables)}

    @cached_property
    def source_map(self) -> dict[str, tuple[str, ...]]:
        return {t.name: tuple(t.sources or ()) for t in self.tables}

    def table(self, name: str) -> Table:
        return self.tables[self.index[name]]

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """For each table, the positions of the tables it feeds directly."""
        kids: list[list[int]] = [[] for _ in self.tables]
        for k, table in enumerate(self.tables):
            for src in table.sources or ():
                kids[self.index[src]].append(k)
        return tuple(tuple(c) for c in kids)

    @cached_property
    def ancestor_sets(self) -> tuple[frozenset[int], ...]:
        """For each table, the positions of every table feeding it, directly or transitively."""
        return tuple(frozenset(self.index[a] for a in ancestors(t.name, self.source_map)) for t in self.tables)

    @cached_property
    def periods(self) -> tuple[float | None, ...]:
        """Each table's period as EDF deadlines and chopping use it (Golab et al., Sec. 2.4).

        Periodic: its period; replayed: its ``nominal_period`` (None when absent); derived: its
        ``nominal_period``, else the largest period among its base ancestors (None when one of
        them has none).
        """
        own = [t.period if t.period is not None else t.nominal_period for t in self.tables]
        out: list[float | None] = []
        for k, table in enumerate(self.tables):
            if table.is_base or table.nominal_period is not None:
                out.append(own[k])
                continue
            base = [own[a] for a in self.ancestor_sets[k] if self.tables[a].is_base]
            out.append(None if any(p is None for p in base) else max(base))  # type: ignore[type-var]
        return tuple(out)

    @cached_property
    def files(self) -> tuple[Files | None, ...]:
        """Per table, the ``(arrival, timestamp)`` files of its feed in arrival order (several
        may share an arrival time): every replayed feed (all its listed files, outages applied)
        and every compiled periodic feed (:attr:`Table.compiled_feed`; its files arriving in
        ``[0, horizon]``); None for a plain periodic feed (generated on the fly) and a derived
        table. See :mod:`staleness_lab.model.feeds`. Compiling costs memory per file: check the
        run size first (:func:`staleness_lab.sim.size.check_run_size`)."""
        return tuple(compile_files(t, self.horizon, self.seed) for t in self.tables)

    def require_periods(self, who: str) -> tuple[float, ...]:
        """The periods, or a clear error naming the first replayed feed without one (a derived
        table lacks a period only when one of its base ancestors does)."""
        for k, table in enumerate(self.tables):
            if table.is_base and self.periods[k] is None:
                rule = f"{who} needs a period: give this replayed table a nominal_period"
                raise InputError(f"tables[{k}].nominal_period", rule, table=table.name)
        return self.periods  # type: ignore[return-value]

    def chop_of(self, k: int) -> float | None:
        """The chop factor of table ``k`` (its own, else the workload's)."""
        own = self.tables[k].chop
        return own if own is not None else self.chop

    def utilization(self) -> list[float | None]:
        """Nominal utilization E_i(P_i)/P_i of each table (None where it has no period)."""
        return [None if p is None else t.cost(p) / p for t, p in zip(self.tables, self.periods)]

    # -- I/O and identity --------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tracks": self.tracks, "horizon": self.horizon, "seed": self.seed}
        if self.warmup:
            out["warmup"] = self.warmup
        if self.variability is not None:
            out["variability"] = self.variability
        if self.cost_noise is not None:
            out["cost_noise"] = list(self.cost_noise)
        if self.provisioning != "worst":
            out["provisioning"] = self.provisioning
        if self.slowdown is not None:
            s = self.slowdown
            out["slowdown"] = {"factor": s.factor, "normal": s.normal, "slow": s.slow}
        if self.chop is not None:
            out["chop"] = self.chop
        out["tables"] = [t.to_dict() for t in self.tables]
        return out

    def digest(self) -> str:
        """A stable SHA-256 of the workload's canonical JSON form (provenance of traces)."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def with_overrides(self, **overrides: Any) -> "Workload":
        """A copy with the given global keys replaced (``tracks``, ``horizon``, ``seed``, ...),
        re-validated. Every key given is applied as is: ``None`` clears an optional key
        (``variability``, ``cost_noise``, ``slowdown``, ``chop``) and is bad input for a required
        one."""
        unknown = set(overrides) - {"tracks", "horizon", "seed", "variability", "cost_noise", "provisioning", "slowdown",
                                    "warmup", "chop", "tables"}
        if unknown:
            raise InputError(sorted(unknown)[0], "is not a workload key that can be overridden")
        return replace(self, **overrides)
