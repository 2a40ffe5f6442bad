"""The parts of a workflow (digest §1-§2): cost model, input sources, channels, operators
(widgets) and freshness/consistency constraints, each validated on its own when built.

Every rule a part breaks raises :class:`InputError` naming the field as a YAML file spells it;
:func:`within` puts a part's errors under the element that holds it (``channels.scores.key[0]``).
Rules spanning several parts (wiring, derived schemas, layouts) are
:class:`~staleness_lab.workflows.model.Workflow`'s.

Decisions [D] where the digest is silent:

* Times and durations are hours (floats); see :mod:`staleness_lab.workflows.durations`.
* Block types are named ``"B"``, ``"delta"`` (Δ) and the weak δ kinds of :data:`DELTA_KINDS`.
  A channel holds B and Δ (converters, digest §1) plus its weak kind, if any: declared with
  ``delta_kind`` (a stateless fn or opaque operator emitting, e.g., upserts), implied
  (``increment``) on a count widget's output. A weak kind needs a key.
* A split has exactly two outputs: rows for which its fn is true go to the first.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from staleness_lab.errors import InputError
from staleness_lab.model.values import require_int, require_number, require_str
from staleness_lab.workflows.durations import parse_duration

#: Weak δ kinds (digest §1 "Encodings" [D]): name -> what a block of the kind holds. Python code
#: may add its own kinds before building workflows that name them.
DELTA_KINDS: dict[str, str] = {
    "upsert": "key -> record or tombstone, the newer wins",
    "increment": "(key, +k): create the key if absent, retire it at 0",
}
#: The strong block types every channel holds (digest §1 "Blocks" [P]).
STRONG_TYPES = ("B", "delta")
WIDGETS = ("stateless", "split", "join", "union", "count", "distinct", "opaque")
COLUMN_TYPES = ("str", "int", "float", "bool")


def block_types() -> tuple[str, ...]:
    """Every block type name: B, delta and the registered weak kinds."""
    return (*STRONG_TYPES, *DELTA_KINDS)


@contextmanager
def within(prefix: str) -> Iterator[None]:
    """Re-raise an :class:`InputError` of a part with its field under ``prefix``."""
    try:
        yield
    except InputError as err:
        raise InputError(f"{prefix}.{err.field}" if err.field else prefix, err.rule) from None


def _names(value: Any, field: str, *, repeats: bool = False, empty: bool = False) -> tuple[str, ...]:
    """A list of non-empty strings as a tuple (distinct unless ``repeats``)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InputError(field, f"must be a list of names, got {value!r:.60}")
    if not value and not empty:
        raise InputError(field, "must not be empty")
    out = tuple(require_str(v, f"{field}[{j}]") for j, v in enumerate(value))
    if not repeats:
        for j, name in enumerate(out):
            if name in out[:j]:
                raise InputError(f"{field}[{j}]", f"{name!r} is listed twice")
    return out


def _replay_path_text(value: Any) -> str:
    """A replay path as written: a non-empty string of at most 4,096 characters with no control
    character (a NUL cannot be passed to the file system)."""
    text = require_str(value, "replay")
    if len(text) > 4096:
        raise InputError("replay", f"has {len(text):,} characters: a replay path has at most 4,096")
    for k, char in enumerate(text):
        if unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            raise InputError("replay", f"holds the control character U+{ord(char):04X} at position {k}: a replay "
                                       "path holds none")
    return text


def _flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(field, f"must be true or false, got {value!r:.40}")
    return value


def _block_type(value: Any, field: str) -> str:
    if value not in block_types():
        raise InputError(field, f"unknown block type {value!r:.40} (known: {', '.join(block_types())})")
    return value


def _columns(schema: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(col for col, _ in schema)


# -- parts -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cost:
    """Per-operator cost model in CPU-hours (digest §3 "Cost model" [D]): ``alpha`` fixed,
    ``beta`` per row read, ``gamma`` per row written, ``pi`` per index probe."""

    alpha: float = 0.0
    beta: float = 1.0
    gamma: float = 1.0
    pi: float = 0.0

    def __post_init__(self) -> None:
        for name in ("alpha", "beta", "gamma", "pi"):
            object.__setattr__(self, name, require_number(getattr(self, name), name, ge=0))

    def to_dict(self) -> dict[str, float]:
        return {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma, "pi": self.pi}


@dataclass(frozen=True)
class InputSpec:
    """Where an input channel's arrivals come from (digest §1 "Graph" [P]; form [D]).

    Replayed: ``replay`` (a CSV ``time,_sign,<columns>`` relative to the workflow file's
    directory) and ``times`` (every arrival, empty ones too, non-decreasing, >= 0). Generated:
    ``generator`` (a registered name), ``every`` (hours > 0), ``rows`` per arrival and free scalar
    ``params``. ``delivers``: the block types the source emits (default ``("delta",)``).
    """

    replay: str | None = None
    times: tuple[float, ...] = ()
    delivers: tuple[str, ...] = ("delta",)
    generator: str | None = None
    every: float | None = None
    rows: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if (self.replay is None) == (self.generator is None):
            raise InputError("replay", "give either replay: (with times:) or generator: (with every:, rows:)")
        delivers = _names(self.delivers, "delivers")
        set_(self, "delivers", tuple(_block_type(t, f"delivers[{j}]") for j, t in enumerate(delivers)))
        if self.replay is not None:
            set_(self, "replay", _replay_path_text(self.replay))
            for name in ("every", "rows", "params"):
                if getattr(self, name) not in (None, ()):
                    raise InputError(name, "only a generated input has it (this one is replayed)")
            set_(self, "times", self._checked_times())
            return
        set_(self, "generator", require_str(self.generator, "generator"))
        if self.times:
            raise InputError("times", "only a replayed input lists times (this one is generated)")
        if self.every is None or self.rows is None:
            raise InputError("every" if self.every is None else "rows", "missing required field (generated input)")
        set_(self, "every", parse_duration(self.every, "every", gt=0))
        set_(self, "rows", require_int(self.rows, "rows", minimum=0))
        set_(self, "params", self._checked_params())

    def _checked_times(self) -> tuple[float, ...]:
        if isinstance(self.times, str) or not isinstance(self.times, (list, tuple)):
            raise InputError("times", f"must be a list of arrival times, got {self.times!r:.40}")
        if not self.times:
            raise InputError("times", "must not be empty (list every arrival, empty ones too)")
        times = tuple(parse_duration(t, f"times[{k}]", ge=0) for k, t in enumerate(self.times))
        for k in range(1, len(times)):
            if times[k] < times[k - 1]:
                raise InputError(f"times[{k}]", f"must be >= times[{k - 1}] (non-decreasing), got {times[k]:g} "
                                                f"after {times[k - 1]:g}")
        return times

    def _checked_params(self) -> tuple[tuple[str, Any], ...]:
        pairs = list(self.params.items()) if isinstance(self.params, Mapping) else self.params
        if isinstance(pairs, str) or not isinstance(pairs, (list, tuple)):
            raise InputError("params", f"must be a mapping name -> value, got {self.params!r:.40}")
        out: dict[str, Any] = {}
        for name, value in pairs:
            require_str(name, "params")
            if not isinstance(value, (str, int, float, bool)):
                raise InputError(f"params.{name}", f"must be a string, number or boolean, got {value!r:.40}")
            if isinstance(value, float):
                require_number(value, f"params.{name}")
            out[name] = value
        return tuple(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        if self.replay is not None:
            out: dict[str, Any] = {"replay": self.replay, "times": list(self.times)}
        else:
            out = {"generator": self.generator, "every": self.every, "rows": self.rows}
            if self.params:
                out["params"] = dict(self.params)
        if self.delivers != ("delta",):
            out["delivers"] = list(self.delivers)
        return out


@dataclass(frozen=True)
class Channel:
    """A channel (digest §1 [P]): ``schema`` (column, type) pairs, ``key`` columns, the source of
    an input channel (``input``), the block types an output's consumers accept (``accepts``; set
    iff the channel is an output) and the weak δ kind it holds (``delta_kind``)."""

    name: str
    schema: tuple[tuple[str, str], ...] = ()
    key: tuple[str, ...] = ()
    insert_only: bool = False
    input: InputSpec | None = None
    accepts: frozenset[str] | None = None
    delta_kind: str | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "name", require_str(self.name, "name"))
        set_(self, "schema", _schema(self.schema))
        set_(self, "key", _names(self.key, "key", empty=True))
        set_(self, "insert_only", _flag(self.insert_only, "insert_only"))
        if self.input is not None and not isinstance(self.input, InputSpec):
            raise InputError("input", "must be an InputSpec")
        if self.accepts is not None:
            if self.input is not None:
                raise InputError("accepts", "an input channel is not an output (accepts: is for derived channels)")
            set_(self, "accepts", self._checked_accepts())
        if self.delta_kind is not None:
            if self.delta_kind not in DELTA_KINDS:
                raise InputError("delta_kind", f"unknown weak delta kind {self.delta_kind!r:.40} "
                                               f"(known: {', '.join(DELTA_KINDS)})")
            if self.insert_only:
                raise InputError("delta_kind", f"an insert-only channel cannot hold {self.delta_kind} deltas")

    def _checked_accepts(self) -> frozenset[str]:
        given = self.accepts
        if isinstance(given, (set, frozenset)):
            given = sorted(given, key=str)
        types = _names(given, "accepts")
        return frozenset(_block_type(t, f"accepts[{j}]") for j, t in enumerate(types))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.schema:
            out["schema"] = dict(self.schema)
        if self.key:
            out["key"] = list(self.key)
        if self.insert_only:
            out["insert_only"] = True
        if self.delta_kind is not None:
            out["delta_kind"] = self.delta_kind
        if self.input is not None:
            out["input"] = self.input.to_dict()
        if self.accepts is not None:
            out["accepts"] = sorted(self.accepts)
        return out


def _schema(value: Any) -> tuple[tuple[str, str], ...]:
    """(column, type) pairs from a mapping or a sequence of pairs."""
    pairs = list(value.items()) if isinstance(value, Mapping) else value
    if isinstance(pairs, str) or not isinstance(pairs, (list, tuple)):
        raise InputError("schema", f"must be a mapping column -> type, got {value!r:.40}")
    out: list[tuple[str, str]] = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InputError(f"schema[{k}]", f"must be a (column, type) pair, got {pair!r:.40}")
        col, kind = pair
        if not isinstance(col, str) or not col:
            raise InputError("schema", f"column names must be non-empty strings, got {col!r:.40} "
                                       "(quote YAML's yes, no, on, off)")
        if col.startswith("_"):
            raise InputError(f"schema.{col}", "column names starting with '_' are reserved (_sign, _seq, _tomb, _inc)")
        if any(col == seen for seen, _ in out):
            raise InputError(f"schema.{col}", "duplicate column")
        if kind not in COLUMN_TYPES:
            raise InputError(f"schema.{col}", f"unknown column type {kind!r:.40} (known: {', '.join(COLUMN_TYPES)})")
        out.append((col, kind))
    return tuple(out)


@dataclass(frozen=True)
class Operator:
    """An operator or widget (digest §2 [P]): ``widget`` is one of :data:`WIDGETS`; ``on`` the
    join columns, ``key`` the count/distinct key, ``fn`` a registered row function (stateless:
    optional, identity without; split and opaque: required), ``sigma`` its selectivity and
    ``cost`` an override of the workflow's cost model. Arity: join and union exactly 2 inputs (a
    3-way union is two cascaded unions), opaque at least 1, others 1; a split 2 outputs, others 1.
    """

    name: str
    widget: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    on: tuple[str, ...] = ()
    key: tuple[str, ...] = ()
    fn: str | None = None
    sigma: float = 1.0
    cost: Cost | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "name", require_str(self.name, "name"))
        widget = self.widget
        if widget not in WIDGETS:
            raise InputError("widget", f"unknown widget {widget!r:.40} (known: {', '.join(WIDGETS)})")
        set_(self, "inputs", _names(self.inputs, "inputs", repeats=True))
        arity = {"join": 2, "union": 2}.get(widget, 1)
        n = len(self.inputs)
        if widget != "opaque" and n != arity:
            hint = " (a 3-way union is two cascaded unions)" if widget == "union" else ""
            raise InputError("inputs", f"a {widget} takes exactly {arity} input{'s' * (arity > 1)}, got {n}{hint}")
        outputs = _names(self.outputs, "outputs" if widget == "split" else "output")
        set_(self, "outputs", outputs)
        if len(outputs) != (2 if widget == "split" else 1):
            rule = "a split writes exactly 2 channels (fn true: the first)" if widget == "split" else \
                f"a {widget} writes one channel"
            raise InputError("outputs" if widget == "split" else "output", f"{rule}, got {len(outputs)}")
        set_(self, "on", self._listed("on", "join"))
        set_(self, "key", self._listed("key", "count", "distinct"))
        if self.fn is not None:
            if widget not in ("stateless", "split", "opaque"):
                raise InputError("fn", f"a {widget} takes no fn")
            set_(self, "fn", require_str(self.fn, "fn"))
        elif widget in ("split", "opaque"):
            raise InputError("fn", f"missing required field (a {widget} runs a fn)")
        set_(self, "sigma", require_number(self.sigma, "sigma", ge=0))
        if self.cost is not None and not isinstance(self.cost, Cost):
            raise InputError("cost", "must be a Cost")

    def _listed(self, name: str, *widgets: str) -> tuple[str, ...]:
        """``on``/``key``: required and non-empty for ``widgets``, absent for the others."""
        value = getattr(self, name)
        if self.widget in widgets:
            return _names(value, name)
        if value not in ((), []):
            raise InputError(name, f"only a {' or '.join(widgets)} has {name}")
        return ()

    def output_field(self, j: int) -> str:
        """The YAML field naming output ``j``: ``outputs[j]`` for a split, else ``output``."""
        return f"outputs[{j}]" if self.widget == "split" else "output"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "widget": self.widget, "inputs": list(self.inputs)}
        if self.widget == "split":
            out["outputs"] = list(self.outputs)
        else:
            out["output"] = self.outputs[0]
        if self.on:
            out["on"] = list(self.on)
        if self.key:
            out["key"] = list(self.key)
        if self.fn is not None:
            out["fn"] = self.fn
        if self.sigma != 1.0:
            out["sigma"] = self.sigma
        if self.cost is not None:
            out["cost"] = self.cost.to_dict()
        return out


@dataclass(frozen=True)
class StalenessBound:
    """``bound_staleness(C, i, t)`` [P]: keep ``lo(T[i]) + t >= now`` on C's latest block
    (digest §2); ``path`` is an element index into ``layout(C)``, t in hours (0 is legal)."""

    KIND: ClassVar[str] = "bound_staleness"
    channel: str
    path: int
    t: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "channel", require_str(self.channel, f"{self.KIND}.channel"))
        object.__setattr__(self, "path", require_int(self.path, f"{self.KIND}.path", minimum=0))
        object.__setattr__(self, "t", parse_duration(self.t, f"{self.KIND}.t", ge=0))

    def to_dict(self) -> dict[str, Any]:
        return {self.KIND: {"channel": self.channel, "path": self.path, "t": self.t}}


@dataclass(frozen=True)
class InconsistencyBound:
    """``bound_inconsistency(C, t)`` [P]: keep ``hi(T) < lo(T) + t`` (digest §2); hours."""

    KIND: ClassVar[str] = "bound_inconsistency"
    channel: str
    t: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "channel", require_str(self.channel, f"{self.KIND}.channel"))
        object.__setattr__(self, "t", parse_duration(self.t, f"{self.KIND}.t", ge=0))

    def to_dict(self) -> dict[str, Any]:
        return {self.KIND: {"channel": self.channel, "t": self.t}}


Constraint = StalenessBound | InconsistencyBound
