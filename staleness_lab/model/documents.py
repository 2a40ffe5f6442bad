"""One strict loader for every YAML or JSON input file (workloads, query sets, sweep grids).

:func:`load_document` reads a file (``.json`` as JSON, anything else as YAML) and returns the
mapping at its top; :func:`parse_document_text` does the same for text in memory. Every bad
input raises :class:`~staleness_lab.errors.InputError` -- one line, never a traceback, never a
hang or a runaway allocation -- naming the file (or the ``field`` given, e.g. ``--grid``) for
file-level faults and the dotted path inside the document (``tables[0].period``,
``fixed.horizon``) for a bad value.

The file:

* it must exist and be a regular file: a directory, FIFO, socket or device is refused from its
  ``stat``, without opening it;
* at most ``MAX_BYTES`` = 16 MiB, checked from its ``stat`` before reading (and again on the
  bytes read, should it grow meanwhile);
* UTF-8 text, not empty (nor only blanks, comments or ``null``), parsable, with a mapping at
  the top level.

The document, YAML and JSON alike:

* nesting at most ``MAX_DEPTH`` = 64 levels of mappings and lists (the top mapping is level 1);
  through a YAML alias, the depth of the node it refers to counts from where it is inserted;
* at most ``MAX_NODES`` = 2,000,000 nodes (mappings, lists, keys and scalars) once YAML aliases
  and merge keys (``<<``) are expanded, i.e. counted as if copied: a "billion laughs" file is
  refused after a few events; a YAML alias to a node that contains it is refused too;
* no duplicate key in a mapping (YAML: named with its line; merge keys may be overridden);
* every integer within the float range, ``abs(n) <= sys.float_info.max`` (about 1.8e308): an
  integer literal of more than ``MAX_INT_DIGITS`` = 320 significant digits is refused without
  ever being converted (Python's ``int()`` is slow on long literals and refuses 4,300 digits);
* every string, key or value, valid Unicode (no lone surrogate such as JSON's ``"\\ud800"``).

Floats may be infinite or NaN here (YAML ``.nan``, ``.inf``, ``1.0e+999``; JSON ``NaN``,
``Infinity``, ``1e999``): the field checks of the models refuse them with the field's own name.

YAML is parsed twice, and never recursively before the limits hold: a scan of the event stream
(an iterator) enforces depth and expanded size, keeping for every anchor the expanded size and
depth of its node; only then is the document composed and constructed (PyYAML's composer is
recursive, safe at 64 levels). libyaml (``CSafeLoader``) is used when PyYAML has it, for speed:
it changes no check. JSON's decoder is recursive in C: depth beyond the interpreter's recursion
limit is caught and refused as too deep. A last iterative walk over the data checks integers,
strings, depth and size for both syntaxes.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import Any

import yaml

from staleness_lab.errors import InputError
from staleness_lab.model.values import (FLOAT_MAX, MAX_NUMBER_DIGITS, decimal_digits, huge_int_rule,
                                         lone_surrogate_at)

MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 2_000_000
MAX_INT_DIGITS = MAX_NUMBER_DIGITS  # float max has 309 digits: a longer integer is out of range either way

_MERGE_TAG = "tag:yaml.org,2002:merge"
_SEQUENCES = (list, tuple, set)
_DEPTH_RULE = f"nested more than {MAX_DEPTH} levels deep (the limit)"
_NODES_RULE = f"holds more than {MAX_NODES:,} nodes (the limit; YAML aliases count as copies)"

#: PyYAML's safe loader, in C when available (the same checks, faster).
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: libyaml's own nesting limit (1,000 flow levels in the libyaml of PyYAML 6.0.4), as it says it
_LIBYAML_DEPTH = "exceeded maximum nesting depth"


class _Refused:
    """A value the parser would not build (an integer too long, a mapping with a duplicate key),
    left in its place so that the walk of :func:`_check_values` names its path."""

    __slots__ = ("rule",)

    def __init__(self, rule: str) -> None:
        self.rule = rule


def load_document(path: str | Path, *, what: str, field: str | None = None, lists: bool = False) -> Any:
    """The mapping at the top of a YAML or JSON file (``.json`` as JSON, anything else as YAML),
    within every limit of the module docstring, or an :class:`InputError`. ``what`` names the
    kind of file in the messages (``workload``, ``query set``, ``grid``); file-level errors
    name ``field`` if given (e.g. ``--grid``), else the path. ``lists``: a list at the top is
    taken too (a grid's explicit rows)."""
    path = Path(path)
    name = field if field is not None else str(path)
    raw = _read_bytes(path, what=what, field=name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(name, f"is not UTF-8 text (byte {err.start})") from None
    return parse_document_text(text, json_syntax=path.suffix.lower() == ".json", field=name, what=what, lists=lists)


def parse_document_text(text: str, *, json_syntax: bool, field: str, what: str, lists: bool = False) -> Any:
    """The mapping at the top of YAML (or JSON) ``text`` (or a list, with ``lists``), within the
    limits of the module docstring; errors about the text as a whole name ``field``, errors
    about a value its path."""
    if not text.strip():
        raise InputError(field, f"the {what} file is empty")
    data = _parse_json(text, field) if json_syntax else _parse_yaml(text, field)
    if data is None:
        raise InputError(field, f"the {what} file is empty")
    _check_values(data, field)
    if not isinstance(data, dict) and not (lists and isinstance(data, list)):
        wanted = "a mapping or a list" if lists else "a mapping"
        raise InputError(field, f"must hold {wanted} at the top level, got {type(data).__name__}")
    return data


# -- the file ----------------------------------------------------------------------------------
def _read_bytes(path: Path, *, what: str, field: str) -> bytes:
    """The bytes of a regular file of at most MAX_BYTES; what is missing, not a regular file or
    too big is refused from its ``stat``, before it is opened."""
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(field, f"no such {what} file") from None
    except OSError as err:
        raise InputError(field, f"cannot be read ({err.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(field, f"is a directory, not a {what} file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(field, f"is not a regular file (a FIFO, socket or device), not a {what} file")
    if info.st_size > MAX_BYTES:
        raise InputError(field, _too_big(info.st_size))
    try:
        # O_NONBLOCK: should the path be swapped for a FIFO since the stat, reading ends at once
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except OSError as err:
        raise InputError(field, f"cannot be read ({err.strerror})") from None
    if len(raw) > MAX_BYTES:
        raise InputError(field, _too_big(len(raw)))
    return raw


def _too_big(size: int) -> str:
    return f"is {size:,} bytes, over the limit of {MAX_BYTES:,} bytes ({MAX_BYTES >> 20} MiB)"


# -- JSON --------------------------------------------------------------------------------------
def _parse_json(text: str, field: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_json_object, parse_int=_json_int)
    except json.JSONDecodeError as err:
        raise InputError(field, f"cannot parse the file: {_first_line(err)}") from None
    except RecursionError:
        raise InputError(field, _DEPTH_RULE) from None


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Refused:
    """A JSON object as a dict, or refused if it gives a key twice."""
    mapping = dict(pairs)
    if len(mapping) == len(pairs):
        return mapping
    duplicate = next(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
    return _Refused(f"duplicate key {duplicate!r}")


def _json_int(literal: str) -> int | _Refused:
    """A JSON integer, or refused unconverted if it has more than MAX_INT_DIGITS digits."""
    digits = len(literal.lstrip("-"))
    return int(literal) if digits <= MAX_INT_DIGITS else _Refused(huge_int_rule(digits))


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0]


# -- YAML --------------------------------------------------------------------------------------
def _parse_yaml(text: str, field: str) -> Any:
    try:
        try:
            _scan_events(yaml.parse(text, Loader=_SafeLoader), field)
        except yaml.YAMLError as err:
            if _SafeLoader is yaml.SafeLoader or _LIBYAML_DEPTH not in str(err):
                raise
            # libyaml (from PyYAML 6.0.4) scans ahead and stops at its own nesting limit
            # before the scan sees MAX_DEPTH: the pure-Python parser names the path
            _scan_events(yaml.parse(text, Loader=yaml.SafeLoader), field)
    except yaml.YAMLError as err:
        raise InputError(field, f"cannot parse the file: {_yaml_problem(err)}") from None
    return _construct_yaml(text, field)


def _yaml_problem(err: Exception) -> str:
    """``context: problem (line L, column C)`` of a PyYAML error, else its first line."""
    problem, mark = getattr(err, "problem", None), getattr(err, "problem_mark", None)
    if problem is None or mark is None:
        return _first_line(err)
    context = getattr(err, "context", None)
    text = f"{context}: {problem}" if context else problem
    return f"{text} (line {mark.line + 1}, column {mark.column + 1})"


class _Open:
    """A mapping or sequence still open in the event scan."""

    __slots__ = ("is_mapping", "anchor", "start", "height", "children", "key")

    def __init__(self, is_mapping: bool, anchor: str | None, start: int) -> None:
        self.is_mapping = is_mapping
        self.anchor = anchor
        self.start = start  # nodes counted before this one: its expanded size is the difference
        self.height = 1  # levels of nesting within it, itself included
        self.children = 0  # nodes done inside it (a mapping alternates key, value)
        self.key: str | None = None  # the mapping's current key, for paths


def _scan_events(events: Iterable[yaml.Event], field: str) -> None:
    """Refuse a YAML event stream nested deeper than MAX_DEPTH or expanding to more than
    MAX_NODES nodes, aliases counted as copies of their node, as soon as it gets there."""
    anchors: dict[str, tuple[int, int] | None] = {}  # expanded size and height; None while open
    stack: list[_Open] = []
    total = 0
    for event in events:
        kind = type(event)
        if kind is yaml.ScalarEvent:
            total += 1
            if event.anchor is not None:
                anchors[event.anchor] = (1, 0)
            _child_done(stack, event.value, 0)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if len(stack) >= MAX_DEPTH:
                raise InputError(_scan_path(stack, field), f"{_DEPTH_RULE} at line {event.start_mark.line + 1}")
            if event.anchor is not None:
                anchors[event.anchor] = None
            stack.append(_Open(kind is yaml.MappingStartEvent, event.anchor, total))
            total += 1
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            node = stack.pop()
            if node.anchor is not None:
                anchors[node.anchor] = (total - node.start, node.height)
            _child_done(stack, None, node.height)
        elif kind is yaml.AliasEvent:
            size, height = _alias_size(event, anchors, stack, field)
            total += size
            alias = f"alias *{event.anchor} at line {event.start_mark.line + 1}"
            if total > MAX_NODES:
                rule = f"expands the document beyond {MAX_NODES:,} nodes (the limit; aliases count as copies)"
                raise InputError(_scan_path(stack, field), f"{alias} {rule}")
            if len(stack) + height > MAX_DEPTH:
                rule = f"nests its node more than {MAX_DEPTH} levels deep (the limit)"
                raise InputError(_scan_path(stack, field), f"{alias} {rule}")
            _child_done(stack, f"*{event.anchor}", height)
        if total > MAX_NODES:
            raise InputError(_scan_path(stack, field), f"{_NODES_RULE} by line {event.start_mark.line + 1}")


def _alias_size(
    event: yaml.AliasEvent, anchors: dict[str, tuple[int, int] | None], stack: list[_Open], field: str
) -> tuple[int, int]:
    """The expanded size and height of the node an alias refers to."""
    if event.anchor not in anchors:
        return 1, 0  # an undefined alias: composing the document reports it
    known = anchors[event.anchor]
    if known is None:
        alias = f"alias *{event.anchor} at line {event.start_mark.line + 1}"
        raise InputError(_scan_path(stack, field), f"{alias} refers to a node that contains it (a recursive structure)")
    return known


def _child_done(stack: list[_Open], key: str | None, height: int) -> None:
    """Account a finished node (of ``height`` levels) to the collection holding it."""
    if not stack:
        return
    parent = stack[-1]
    if parent.is_mapping and parent.children % 2 == 0:
        parent.key = key
    parent.children += 1
    if height >= parent.height:
        parent.height = height + 1


def _scan_path(stack: list[_Open], field: str) -> str:
    """The dotted path of the node the scan is at (``field`` at the top)."""
    path = ""
    for node in stack:
        if not node.is_mapping:
            path = _index(path, node.children)
        elif node.children % 2 == 1:
            path = _key(path, "?" if node.key is None else node.key)
        else:
            break  # inside a key: the mapping's path is precise enough
    return path or field


class _DuplicateKey(Exception):
    """A key given twice in the mapping node ``mapping``, at ``line`` (1-based)."""

    def __init__(self, key: Any, line: int, mapping: yaml.MappingNode) -> None:
        super().__init__(key)
        self.key, self.line, self.mapping = key, line, mapping


class _StrictLoader(_SafeLoader):
    """The safe loader, refusing duplicate keys and never converting overlong integers."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._flattened: set[yaml.MappingNode] = set()

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int | _Refused:
        """The stock integer, unless the literal has more than MAX_INT_DIGITS digits."""
        digits = len(self.construct_scalar(node).replace("_", "").lstrip("+-0"))
        if digits > MAX_INT_DIGITS:
            return _Refused(huge_int_rule(digits))
        return super().construct_yaml_int(node)

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """Merge ``<<`` keys once per node, leaving each key once with the value that wins
        (the mapping's own over merged ones; in a list of merged mappings, the earlier one),
        so that the node merges the same way when it is itself a merge source; refuse a key
        the mapping itself gives twice (a merged key overridden by its own is no duplicate).
        PyYAML's own merging is not used: 6.0.4 changed it to keep the first pair of a key
        when a flattened node is merged again, which lets a merged value beat an own one."""
        if node in self._flattened:
            return
        self._flattened.add(node)
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        own: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                if key_node.tag == "tag:yaml.org,2002:value":
                    key_node.tag = "tag:yaml.org,2002:str"
                own.append((key_node, value_node))
                continue
            for source in reversed(self._merge_sources(node, value_node)):  # earlier ones win
                self.flatten_mapping(source)
                merged.extend(source.value)
        seen: set[Any] = set()
        for key_node, _ in own:
            key = self.construct_object(key_node)
            if not isinstance(key, Hashable):
                node.value = merged + own
                return  # construct_mapping refuses it
            if key in seen:
                raise _DuplicateKey(key, key_node.start_mark.line + 1, node)
            seen.add(key)
        winners: dict[Any, tuple[yaml.Node, yaml.Node]] = {}
        for pair in merged + own:  # later pairs win; a key keeps its first position
            key = self.construct_object(pair[0])
            if not isinstance(key, Hashable):
                node.value = merged + own
                return
            winners[key] = pair
        node.value = list(winners.values())

    @staticmethod
    def _merge_sources(node: yaml.MappingNode, value: yaml.Node) -> list[yaml.MappingNode]:
        """The mappings a ``<<`` key merges: its mapping, or each of its list of mappings."""
        if isinstance(value, yaml.MappingNode):
            return [value]
        if isinstance(value, yaml.SequenceNode) and all(isinstance(v, yaml.MappingNode) for v in value.value):
            return list(value.value)
        found = value.id if not isinstance(value, yaml.SequenceNode) else "a list holding a non-mapping"
        raise yaml.constructor.ConstructorError(
            "while constructing a mapping", node.start_mark,
            f"expected a mapping or list of mappings for merging, but found {found}", value.start_mark,
        )


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)


def _construct_yaml(text: str, field: str) -> Any:
    """The data of a YAML document that passed :func:`_scan_events`."""
    loader = _StrictLoader(text)
    try:
        root = loader.get_single_node()
        return None if root is None else loader.construct_document(root)
    except _DuplicateKey as dup:
        rule = f"duplicate key {dup.key!r} at line {dup.line}"
        raise InputError(_node_path(root, dup.mapping) or field, rule) from None
    except (yaml.YAMLError, ValueError) as err:  # ValueError: e.g. the timestamp 2001-13-45
        raise InputError(field, f"cannot parse the file: {_yaml_problem(err)}") from None
    finally:
        loader.dispose()


def _node_path(root: yaml.Node, target: yaml.Node) -> str:
    """The dotted path of ``target`` in the composed document (depth first, iterative)."""
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((value, _key(path, key.value if isinstance(key, yaml.ScalarNode) else "?")))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, _index(path, k)) for k, child in enumerate(node.value))
    return ""


# -- the walk ----------------------------------------------------------------------------------
def _check_values(data: Any, field: str) -> None:
    """Refuse the first value breaking a rule: an integer beyond the float range, a string that
    is not valid Unicode, a refused value, nesting deeper than MAX_DEPTH, more than MAX_NODES
    nodes. Iterative (any depth is safe); errors name the value's dotted path."""
    problem = _scalar_problem(data)
    if problem is not None:
        raise InputError(field, problem)
    nodes = 1
    stack: list[tuple[Any, str, int]] = [(data, "", 1)] if _is_container(data) else []
    while stack:
        container, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(path or field, _DEPTH_RULE)
        if type(container) is dict:
            nodes += 2 * len(container)
            for key, value in container.items():
                problem = _scalar_problem(key)
                if problem is not None:
                    raise InputError(path or field, f"mapping key: {problem}")
                _check_child(value, _key(path, key), depth, stack)
        else:
            nodes += len(container)
            for k, value in enumerate(container):
                if type(value) is float:
                    continue
                if depth < MAX_DEPTH and _all_floats(value):
                    nodes += len(value)  # a leaf such as an arrival pair: checked, not stacked (speed)
                    continue
                _check_child(value, _index(path, k), depth, stack)
        if nodes > MAX_NODES:
            raise InputError(field, _NODES_RULE)


def _is_container(value: Any) -> bool:
    return type(value) is dict or type(value) in _SEQUENCES


def _all_floats(value: Any) -> bool:
    """True for a sequence of floats only."""
    if type(value) not in _SEQUENCES:
        return False
    for item in value:
        if type(item) is not float:
            return False
    return True


def _check_child(value: Any, path: str, depth: int, stack: list[tuple[Any, str, int]]) -> None:
    """Stack a container for the walk, or refuse a bad scalar."""
    if _is_container(value):
        stack.append((value, path, depth + 1))
        return
    problem = _scalar_problem(value)
    if problem is not None:
        raise InputError(path, problem)


def _scalar_problem(value: Any) -> str | None:
    """Why a scalar is refused, or None."""
    kind = type(value)
    if kind is _Refused:
        return value.rule
    if kind is int and abs(value) > FLOAT_MAX:
        return huge_int_rule(decimal_digits(value))
    if kind is str:
        at = lone_surrogate_at(value)
        if at is not None:
            return f"string has a lone surrogate {value[at]!r} at index {at}: not valid Unicode text"
    return None


def _index(path: str, index: int) -> str:
    return f"{path}[{index}]"


def _key(path: str, key: Any) -> str:
    text = key if isinstance(key, str) else str(key)
    if lone_surrogate_at(text) is not None:
        text = ascii(text)  # keep the message printable
    return f"{path}.{text}" if path else text
