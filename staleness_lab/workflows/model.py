"""The immutable workflow (digest §1-§2): a validated whole, its graph queries and layouts.

A :class:`Workflow` is a DAG of channels and operators [P] (its parts are in
:mod:`staleness_lab.workflows.elements`) with per-output accepted block types and
freshness/consistency constraints on target provenance [P]. It is validated when built, by
:class:`~staleness_lab.workflows.builder.WorkflowBuilder` and by
:func:`staleness_lab.workflows.load.workflow_from_dict` alike, and every rule it breaks raises
:class:`InputError` naming the element as a YAML file spells it (``operators[0] (join).inputs[0]``,
``channels.scores.key[0]``, ``constraints[1].bound_staleness.path``).

Decisions [D] where the digest is silent:

* A derived channel without a schema takes its producer's: what its fn declares it writes
  (a registered function with ``output_schema``; a declared schema must then agree, column
  order aside), else join: left columns, then right ones not in ``on``; count: key + ``n``;
  distinct: key; union: its left input's; stateless, split, opaque: the first input's. A
  count/distinct output without a key takes the widget's key. The filled-in values are part of
  the model, so :meth:`Workflow.to_dict` round-trips. A generator declaring its columns
  (``schema``) must agree with its input channel's schema, column order aside.
* ``insert_only`` is declared on input channels only; a derived channel is insert-only iff its
  producer is stateless, split, join or union, every input of it is insert-only and it holds no
  weak kind (:meth:`Workflow.insert_only`). Correction 3: an asynchronous variant reading a delta
  from an input that may carry deletions is offered only if that channel has a key
  (:meth:`Workflow.async_offered`).
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import json
import math
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.model.values import require_str
from staleness_lab.paths import safe_name
from staleness_lab.workflows.durations import parse_duration
from staleness_lab.workflows.elements import (
    STRONG_TYPES,
    Channel,
    Constraint,
    Cost,
    InconsistencyBound,
    Operator,
    StalenessBound,
    _columns,
    _flag,
    _schema,
)
from staleness_lab.workflows.registry import FUNCTIONS, GENERATORS
from staleness_lab.workflows.size import WorkflowLimits, check_arrivals, check_counts, check_layout

#: Operators with asynchronous variants (digest §2 signature table [P]).
ASYNC_WIDGETS = ("join", "union")
#: Producers through which insert-only inputs give an insert-only channel (Correction 3 [D]).
INSERT_PRESERVING = ("stateless", "split", "join", "union")
#: Producers that may emit a declared weak kind (a user function decides what it emits).
WEAK_EMITTERS = ("stateless", "opaque")
#: The count column of a count widget's output (as ``workflows.weak.count`` writes it).
COUNT_COLUMN = "n"

Layout = tuple[tuple[str, int], ...]


def default_replay_root() -> Path:
    """``data/workflows`` of the checkout (else of the working directory): replay files may
    live there whatever the workflow file's directory."""
    from staleness_lab.provenance import project_root

    return (project_root() or Path.cwd()) / "data" / "workflows"


# -- the workflow ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Workflow:
    """A validated workflow (digest §1-§2). ``horizon`` in hours; ``cost`` the default cost model
    of its operators; ``strict_sync_inputs`` the literal always-strict reading of cons (digest
    §2, §6 A3). ``base_dir`` is where replay paths are resolved (default: ``data/workflows``);
    ``limits`` the size rules checked before the rest (:mod:`staleness_lab.workflows.size`).
    Neither is part of the model's identity (equality, :meth:`to_dict`, :meth:`sha256`).

    The workflow's and every channel's name becomes a directory of the spark mode's block
    store, so each must be a safe path component (:func:`staleness_lab.paths.safe_name`)."""

    name: str
    horizon: float
    cost: Cost
    channels: tuple[Channel, ...]
    operators: tuple[Operator, ...]
    constraints: tuple[Constraint, ...] = ()
    strict_sync_inputs: bool = False
    base_dir: Path | None = field(default=None, compare=False, repr=False)
    limits: WorkflowLimits = field(default_factory=WorkflowLimits, compare=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "name", safe_name(require_str(self.name, "name"), "name"))
        set_(self, "horizon", parse_duration(self.horizon, "horizon", gt=0))
        if not isinstance(self.limits, WorkflowLimits):
            raise InputError("limits", "must be a WorkflowLimits")
        if not isinstance(self.cost, Cost):
            raise InputError("cost", "must be a Cost")
        set_(self, "strict_sync_inputs", _flag(self.strict_sync_inputs, "strict_sync_inputs"))
        set_(self, "channels", _parts(self.channels, "channels", Channel))
        set_(self, "operators", _parts(self.operators, "operators", Operator))
        set_(self, "constraints", _parts(self.constraints, "constraints", (StalenessBound, InconsistencyBound),
                                         empty=True))
        if self.base_dir is not None:
            set_(self, "base_dir", Path(self.base_dir))
        check_counts(self.channels, self.operators, self.limits)
        self._check_names()
        self._check_wiring()
        order = self.topological_operators()  # refuses a cycle
        check_layout(self.channels, order, self._op_index, self.limits)  # before any layout is built
        check_arrivals(self.channels, self.horizon, self.limits)
        self._check_registered()
        self._fill_derived(order)
        for ch in self.channels:
            self._check_channel(ch)
        self._check_constraints()

    # -- validation ----------------------------------------------------------------------------
    def _label(self, op: Operator) -> str:
        return f"operators[{self._op_index[op.name]}] ({op.name})"

    def _check_names(self) -> None:
        """Channel names are safe path components and distinct; operator names distinct."""
        seen: set[str] = set()
        for k, ch in enumerate(self.channels):
            safe_name(ch.name, f"channels[{k}].name")
            if ch.name in seen:
                raise InputError(f"channels.{ch.name}", "duplicate channel name")
            seen.add(ch.name)
        ops: dict[str, int] = {}
        for k, op in enumerate(self.operators):
            if op.name in ops:
                raise InputError(f"operators[{k}] ({op.name}).name", f"duplicate operator name (also operators[{ops[op.name]}])")
            ops[op.name] = k

    def _check_wiring(self) -> None:
        """Every channel named exists; one producer per derived channel, none for an input."""
        known = {ch.name: ch for ch in self.channels}
        producers: dict[str, Operator] = {}
        for op in self.operators:
            label = self._label(op)
            for j, name in enumerate(op.inputs):
                if name not in known:
                    raise InputError(f"{label}.inputs[{j}]", f"unknown channel {name!r} (channels: {', '.join(known)})")
            for j, name in enumerate(op.outputs):
                where = f"{label}.{op.output_field(j)}"
                if name not in known:
                    raise InputError(where, f"unknown channel {name!r} (channels: {', '.join(known)})")
                if known[name].input is not None:
                    raise InputError(where, f"writes input channel {name!r} (an input channel is fed by its source only)")
                if name in producers:
                    raise InputError(where, f"channel {name!r} is already written by {self._label(producers[name])} "
                                            "(a channel has one producer)")
                producers[name] = op
        for ch in self.channels:
            where = f"channels.{ch.name}"
            if ch.input is None and ch.name not in producers:
                raise InputError(where, "no operator writes it and it has no input (give it an input: or a producer)")
            if ch.input is None and ch.insert_only:
                raise InputError(f"{where}.insert_only", "only an input channel declares it (a derived channel's "
                                                         "follows from its producer)")
            if ch.input is not None and not ch.schema:
                raise InputError(f"{where}.schema", "missing required field (an input channel declares its schema)")

    def _check_registered(self) -> None:
        """Every fn and generator named is registered (importing the standard ones first)."""
        if any(op.fn is not None for op in self.operators):
            importlib.import_module("staleness_lab.workflows.functions")
        for op in self.operators:
            if op.fn is not None and op.fn not in FUNCTIONS:
                raise InputError(f"{self._label(op)}.fn", f"unknown fn {op.fn!r} (registered: {', '.join(sorted(FUNCTIONS))})")
        if any(ch.input is not None and ch.input.generator is not None for ch in self.channels):
            importlib.import_module("staleness_lab.workflows.sources")
        for ch in self.channels:
            if ch.input is not None and ch.input.generator is not None and ch.input.generator not in GENERATORS:
                raise InputError(f"channels.{ch.name}.input.generator", f"unknown generator {ch.input.generator!r} "
                                 f"(registered: {', '.join(sorted(GENERATORS))})")

    def _fill_derived(self, order: tuple[Operator, ...]) -> None:
        """Derived schemas, keys and weak kinds from the producers, in topological order."""
        chans = {ch.name: ch for ch in self.channels}
        for op in order:
            label = self._label(op)
            inputs = [chans[name] for name in op.inputs]
            written = _fn_schema(op, label, inputs)
            derived = written if written is not None else _derived_schema(op, label, inputs)
            for name in op.outputs:
                ch = chans[name]
                changes: dict[str, Any] = {}
                if not ch.schema:
                    changes["schema"] = derived
                elif written is not None and dict(ch.schema) != dict(written):
                    raise InputError(f"channels.{name}.schema", f"{dict(ch.schema)} differs from what fn {op.fn} "
                                                                f"({label}) writes: {dict(written)}")
                if op.widget in ("count", "distinct") and not ch.key:
                    changes["key"] = op.key
                if op.widget == "count":
                    if ch.delta_kind not in (None, "increment"):
                        raise InputError(f"channels.{name}.delta_kind", f"a count widget ({label}) emits increment "
                                                                        f"deltas, got {ch.delta_kind!r}")
                    changes["delta_kind"] = "increment"
                elif ch.delta_kind is not None and op.widget not in WEAK_EMITTERS:
                    raise InputError(f"channels.{name}.delta_kind", f"a {op.widget} ({label}) emits delta blocks, "
                                                                    f"not {ch.delta_kind}")
                try:
                    chans[name] = replace(ch, **changes)
                except InputError as err:
                    raise InputError(label, f"cannot derive channel {name!r}: {err.field}: {err.rule}") from None
        object.__setattr__(self, "channels", tuple(chans[ch.name] for ch in self.channels))

    def _check_channel(self, ch: Channel) -> None:
        where = f"channels.{ch.name}"
        columns = dict(ch.schema)
        for j, col in enumerate(ch.key):
            if col not in columns:
                raise InputError(f"{where}.key[{j}]", f"column {col!r} is not in the schema ({_columns(ch.schema)})")
        if ch.delta_kind is not None and not ch.key:
            raise InputError(f"{where}.key", f"missing: a channel holding {ch.delta_kind} deltas needs a key")
        holds = self.types_on(ch.name)
        for kind in sorted(ch.accepts or ()):
            if kind not in holds:
                producer = self.producer(ch.name)
                by = f" written by {self._label(producer)}" if producer is not None else ""
                raise InputError(f"{where}.accepts", f"{kind!r} is produced by nothing: {ch.name}{by} holds "
                                                     f"{', '.join(holds)}")
        if ch.input is None:
            return
        written = getattr(GENERATORS.get(ch.input.generator or ""), "schema", None)
        if callable(written):  # the columns follow the generator's parameters
            written = written(**dict(ch.input.params))
        if isinstance(written, Mapping) and dict(written) != dict(ch.schema):
            raise InputError(f"{where}.schema", f"{dict(ch.schema)} differs from what generator "
                                                f"{ch.input.generator} writes: {dict(written)}")
        for j, kind in enumerate(ch.input.delivers):
            if kind not in holds:
                raise InputError(f"{where}.input.delivers[{j}]", f"{kind!r}: {ch.name} holds {', '.join(holds)} "
                                                                 "(declare delta_kind: for a weak kind)")
        if ch.input.replay is not None:
            _check_header(self.replay_path(ch.name), ch, f"{where}.input.replay")

    def _check_constraints(self) -> None:
        known = {ch.name for ch in self.channels}
        for k, bound in enumerate(self.constraints):
            where = f"constraints[{k}].{bound.KIND}"
            if bound.channel not in known:
                raise InputError(f"{where}.channel", f"unknown channel {bound.channel!r} (channels: {', '.join(known)})")
            if isinstance(bound, StalenessBound):
                size = len(self.layout(bound.channel))
                if bound.path >= size:
                    raise InputError(f"{where}.path", f"{bound.path} is outside the layout of {bound.channel} "
                                                      f"({size} element{'s' * (size != 1)})")

    # -- structure -----------------------------------------------------------------------------
    @cached_property
    def _op_index(self) -> dict[str, int]:
        return {op.name: k for k, op in enumerate(self.operators)}

    @cached_property
    def _channel_index(self) -> dict[str, Channel]:
        return {ch.name: ch for ch in self.channels}

    @cached_property
    def _producers(self) -> dict[str, Operator]:
        return {name: op for op in self.operators for name in op.outputs}

    @cached_property
    def _consumers(self) -> dict[str, tuple[Operator, ...]]:
        readers: dict[str, list[Operator]] = {ch.name: [] for ch in self.channels}
        for op in self.operators:
            for name in dict.fromkeys(op.inputs):
                readers[name].append(op)
        return {name: tuple(ops) for name, ops in readers.items()}

    def channel(self, name: str) -> Channel:
        """The channel called ``name`` (KeyError if none)."""
        return self._channel_index[name]

    def producer(self, channel: str) -> Operator | None:
        """The operator writing ``channel``; None for an input channel."""
        self.channel(channel)
        return self._producers.get(channel)

    def consumers(self, channel: str) -> tuple[Operator, ...]:
        """The operators reading ``channel``, in declaration order."""
        return self._consumers[channel]

    def inputs(self) -> tuple[Channel, ...]:
        """The input channels (fed by external sources)."""
        return tuple(ch for ch in self.channels if ch.input is not None)

    def outputs(self) -> tuple[Channel, ...]:
        """The output channels (those with ``accepts``)."""
        return tuple(ch for ch in self.channels if ch.accepts is not None)

    def role(self, channel: str) -> str:
        """``input``, ``output`` or ``intermediate`` (digest §1 "Graph")."""
        ch = self.channel(channel)
        return "input" if ch.input is not None else "output" if ch.accepts is not None else "intermediate"

    def topological_operators(self) -> tuple[Operator, ...]:
        """Operators, each after the producers of its inputs (declaration order among the ready
        ones). A cycle is bad input, listed ``a -> op1 -> b -> op2 -> a``."""
        return self._order

    @cached_property
    def _order(self) -> tuple[Operator, ...]:
        """The order of repeated passes over the operators in declaration order, each pass
        taking every operator whose producers are taken (earlier in this pass or before), in
        linear time: an operator's pass is the largest over its producers of theirs, plus one
        for a producer declared after it (met later in a pass), and at least 1; the order is by
        (pass, declaration index). Passes are computed in a topological order (Kahn's
        algorithm); operators never reached are on or after a cycle."""
        index = self._op_index
        feeds: dict[int, list[int]] = {k: [] for k in range(len(self.operators))}
        waiting = [0] * len(self.operators)
        for k, op in enumerate(self.operators):
            for name in op.inputs:
                producer = self._producers.get(name)
                if producer is not None:
                    feeds[index[producer.name]].append(k)
                    waiting[k] += 1
        passes = [1] * len(self.operators)
        ready = deque(k for k, n in enumerate(waiting) if n == 0)
        reached = 0
        while ready:
            j = ready.popleft()
            reached += 1
            for k in feeds[j]:
                passes[k] = max(passes[k], passes[j] + (1 if j > k else 0))
                waiting[k] -= 1
                if waiting[k] == 0:
                    ready.append(k)
        if reached < len(self.operators):
            self._refuse_cycle([op for k, op in enumerate(self.operators) if waiting[k] > 0])
        return tuple(self.operators[k] for k in sorted(range(len(self.operators)), key=lambda k: (passes[k], k)))

    def _refuse_cycle(self, left: list[Operator]) -> None:
        """Walk back from a blocked operator through producers until one repeats, then list the
        cycle in data-flow order from the first-declared operator on it."""
        blocked = {op.name for op in left}
        via: dict[str, tuple[int, str]] = {}
        walk: list[Operator] = []
        op = left[0]
        while op.name not in via:
            j, name = next((j, n) for j, n in enumerate(op.inputs)
                           if n in self._producers and self._producers[n].name in blocked)
            via[op.name] = (j, name)
            walk.append(op)
            op = self._producers[name]
        cycle = walk[walk.index(op):][::-1]  # data-flow order
        first = min(range(len(cycle)), key=lambda i: self._op_index[cycle[i].name])
        cycle = cycle[first:] + cycle[:first]
        text = " -> ".join(f"{via[o.name][1]} -> {o.name}" for o in cycle) + f" -> {via[cycle[0].name][1]}"
        raise InputError(f"{self._label(cycle[0])}.inputs[{via[cycle[0].name][0]}]", f"cycle: {text}")

    def cost_of(self, operator: Operator) -> Cost:
        """The operator's cost model: its override, else the workflow's."""
        return operator.cost if operator.cost is not None else self.cost

    # -- layouts (digest §1 [D]) ---------------------------------------------------------------
    @cached_property
    def _sources(self) -> dict[str, tuple[str, ...]]:
        """Per channel, the input channel of each layout element, before path numbering."""
        raw = {ch.name: (ch.name,) for ch in self.inputs()}
        for op in self._order:
            if op.widget in ("join", "union", "opaque"):
                flat = tuple(src for name in op.inputs for src in raw[name])
            else:
                flat = raw[op.inputs[0]]
            for name in op.outputs:
                raw[name] = flat
        return raw

    def layout(self, channel: str) -> Layout:
        """``layout(C)`` (digest §1 [D]): (input channel, path id) per element of C's provenance;
        the k-th occurrence of an input channel gets path id k. An input channel: ((itself, 0),);
        a k-input operator concatenates its inputs' layouts, the others copy theirs."""
        seen: dict[str, int] = {}
        out = []
        for src in self._sources[channel]:
            out.append((src, seen.get(src, 0)))
            seen[src] = seen.get(src, 0) + 1
        return tuple(out)

    def element_sources(self, operator: Operator, output_index: int) -> tuple[tuple[int, int], ...]:
        """For each element of ``operator``'s output ``output_index``'s layout: (input index,
        element index in that input's layout) it comes from."""
        if not 0 <= output_index < len(operator.outputs):
            raise IndexError(f"{operator.name} has {len(operator.outputs)} output(s), not index {output_index}")
        if operator.widget in ("join", "union", "opaque"):
            return tuple((i, j) for i, name in enumerate(operator.inputs) for j in range(len(self._sources[name])))
        return tuple((0, j) for j in range(len(self._sources[operator.inputs[0]])))

    # -- block types and deletions -------------------------------------------------------------
    def types_on(self, channel: str) -> tuple[str, ...]:
        """The block types ``channel`` can hold: B and delta (converters, digest §1) and its weak kind."""
        kind = self.channel(channel).delta_kind
        return STRONG_TYPES + ((kind,) if kind is not None else ())

    @cached_property
    def _insert_only(self) -> dict[str, bool]:
        flags = {ch.name: ch.insert_only for ch in self.inputs()}
        for op in self._order:
            clean = op.widget in INSERT_PRESERVING and all(flags[name] for name in op.inputs)
            for name in op.outputs:
                flags[name] = clean and self.channel(name).delta_kind is None
        return flags

    def insert_only(self, channel: str) -> bool:
        """True if ``channel`` never carries deletions: declared on an input, else derived only
        from insert-only channels through stateless/split/join/union (Correction 3 [D])."""
        return self._insert_only[channel]

    def async_offered(self, operator: Operator) -> dict[int, bool]:
        """Per input index of a join or union: is the asynchronous variant reading a delta from
        that input offered? Only if the input is insert-only or keyed (Correction 3). Other
        widgets have no asynchronous variant: an empty dict."""
        if operator.widget not in ASYNC_WIDGETS:
            return {}
        return {i: self.insert_only(name) or bool(self.channel(name).key) for i, name in enumerate(operator.inputs)}

    # -- replay files --------------------------------------------------------------------------
    def replay_path(self, channel: str) -> Path:
        """The resolved replay file of an input channel; a path outside the workflow file's
        directory tree and ``data/workflows`` is bad input."""
        spec = self.channel(channel).input
        if spec is None or spec.replay is None:
            raise ValueError(f"channel {channel!r} is not a replayed input")
        roots = [default_replay_root()] + ([self.base_dir] if self.base_dir is not None else [])
        try:
            path = ((self.base_dir if self.base_dir is not None else roots[0]) / spec.replay).resolve()
        except (OSError, ValueError, RuntimeError) as err:  # a too-long name, a symlink loop
            raise InputError(f"channels.{channel}.input.replay", f"{spec.replay!r:.200} cannot be resolved "
                                                                 f"({err.__class__.__name__}: {err})") from None
        if not any(path.is_relative_to(root.resolve()) for root in roots):
            raise InputError(f"channels.{channel}.input.replay", f"{spec.replay!r} is a path outside the layout (the "
                                                                 "workflow file's directory tree or data/workflows)")
        return path

    # -- I/O and identity ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The workflow as its YAML/JSON form; :func:`~staleness_lab.workflows.load.workflow_from_dict` reads it back."""
        out: dict[str, Any] = {
            "name": self.name, "horizon": self.horizon, "cost": self.cost.to_dict(),
            "channels": {ch.name: ch.to_dict() for ch in self.channels},
            "operators": [op.to_dict() for op in self.operators],
            "constraints": [bound.to_dict() for bound in self.constraints],
        }
        if self.strict_sync_inputs:
            out["strict_sync_inputs"] = True
        return out

    def sha256(self) -> str:
        """SHA-256 of the compact JSON of :meth:`to_dict`, in its fixed key order (not re-sorted:
        a schema's column order is part of the model)."""
        text = json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()


def _parts(value: Any, field: str, kind: type | tuple[type, ...], *, empty: bool = False) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise InputError(field, f"must be a list, got {type(value).__name__}")
    if not value and not empty:
        raise InputError(field, "must not be empty")
    for k, part in enumerate(value):
        if not isinstance(part, kind):
            raise InputError(f"{field}[{k}]", f"must be a {getattr(kind, '__name__', 'constraint')}, "
                                              f"got {type(part).__name__}")
    return tuple(value)


def _derived_schema(op: Operator, label: str, inputs: list[Channel]) -> tuple[tuple[str, str], ...]:
    """The schema ``op`` writes (see the module docstring), checking its columns exist."""
    first = inputs[0].schema
    if op.widget == "join":
        left, right = (dict(ch.schema) for ch in inputs)
        for j, col in enumerate(op.on):
            for i, ch in enumerate(inputs):
                if col not in dict(ch.schema):
                    raise InputError(f"{label}.on[{j}]", f"column {col!r} is not in the schema of inputs[{i}] "
                                                         f"{ch.name!r} ({_columns(ch.schema)})")
            if left[col] != right[col]:
                raise InputError(f"{label}.on[{j}]", f"column {col!r} is {left[col]} in {inputs[0].name!r} but "
                                                     f"{right[col]} in {inputs[1].name!r}")
        return first + tuple(pair for pair in inputs[1].schema if pair[0] not in op.on)
    if op.widget == "union":
        if inputs[0].schema != inputs[1].schema:
            raise InputError(f"{label}.inputs[1]", f"a union needs equal schemas: {inputs[1].name!r} has "
                                                   f"{dict(inputs[1].schema)}, {inputs[0].name!r} {dict(first)}")
        return first
    if op.widget in ("count", "distinct"):
        types = dict(first)
        for j, col in enumerate(op.key):
            if col not in types:
                raise InputError(f"{label}.key[{j}]", f"column {col!r} is not in the schema of {inputs[0].name!r} "
                                                      f"({_columns(first)})")
        keyed = tuple((col, types[col]) for col in op.key)
        return keyed + ((COUNT_COLUMN, "int"),) if op.widget == "count" else keyed
    return first


def _fn_schema(op: Operator, label: str, inputs: list[Channel]) -> tuple[tuple[str, str], ...] | None:
    """The schema ``op``'s fn declares it writes for these inputs (a registered function with an
    ``output_schema`` method, as :mod:`staleness_lab.workflows.functions` has), else None; an
    input lacking a column the fn requires is bad input."""
    declared = getattr(FUNCTIONS.get(op.fn or ""), "output_schema", None)
    if not callable(declared):
        return None
    try:
        return _schema(declared(*(dict(ch.schema) for ch in inputs)))
    except ValueError as err:
        raise InputError(f"{label}.fn", str(err)) from None


#: How each schema type's cells of a replay CSV must read (what pandas parses as that dtype).
_CELL_RULES: dict[str, tuple[str, Any]] = {
    "int": ("an integer", re.compile(r"[+-]?[0-9]+").fullmatch),
    "float": ("a number", lambda text: _is_float(text)),
    "bool": ("True or False", {"True", "False", "true", "false", "TRUE", "FALSE"}.__contains__),
}


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_header(path: Path, ch: Channel, field: str) -> None:
    """A replay CSV exists, its header is ``time,_sign`` and the schema's columns, and every
    row reads as the run reads it: as many cells as the header, no NUL, ``time`` a finite
    number, ``_sign`` 1 or -1, int/float/bool cells an integer (within int64), a number, True or
    False. A file breaking a rule is refused when the workflow loads, naming its line."""
    expected = ["time", "_sign", *(col for col, _ in ch.schema)]
    try:
        if not path.is_file():
            raise InputError(field, f"no such replay file {path}")
        with path.open(newline="", encoding="utf-8") as file:
            rows = csv.reader(file)
            header = next(rows, None)
            if header != expected:
                shown = "nothing (an empty file)" if header is None else ",".join(header)
                raise InputError(field, f"{path.name}: header {shown[:200]} does not match {','.join(expected)}")
            types = [kind for _, kind in ch.schema]
            for row in rows:
                problem = _row_problem(row, expected, types)
                if problem is not None:
                    raise InputError(field, f"{path.name} line {rows.line_num}: {problem}")
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise InputError(field, f"{path}: cannot be read ({err})") from None


def _row_problem(row: list[str], header: list[str], types: list[str]) -> str | None:
    """Why one replay row breaks :func:`_check_header`'s rules, or None."""
    if len(row) != len(header):
        return f"{len(row)} cells, the header has {len(header)}"
    for col, cell in zip(header, row):
        if "\0" in cell:
            return f"column {col} holds a NUL character"
    try:
        time = float(row[0])
    except ValueError:
        return f"time {row[0]!r:.40} is not a number"
    if not math.isfinite(time):
        return f"time {row[0]!r:.40} is not finite"
    if row[1].strip() not in ("1", "-1", "+1"):
        return f"_sign {row[1]!r:.40} is not 1 or -1"
    for col, kind, cell in zip(header[2:], types, row[2:]):
        if kind in _CELL_RULES:
            what, ok = _CELL_RULES[kind]
            if not ok(cell.strip()) or (kind == "int" and not -2**63 <= int(cell) < 2**63):
                return f"column {col} ({kind}) holds {cell!r:.40}, not {what}"
    return None
