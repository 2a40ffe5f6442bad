"""Hypothesis strategies for tests/test_hostile_inputs.py: valid workloads, mutated by hand.

A workload is turned into a small document tree (:class:`Map` keeps its keys as a list of pairs,
so a key can be given twice; nodes can carry a YAML anchor and be referred to by an
:class:`Alias`), mutated 1-3 times, and written as YAML or JSON text by the emitters below --
not by PyYAML or ``json`` -- so that duplicate keys, aliases, merge keys, raw tokens (``.nan``,
``Infinity``, 5,000-digit literals, YAML tags), lone surrogates and invalid UTF-8 can all be
written. tests/test_hostile_surfaces.py mutates query sets, workflows, grids and manifests the
same way.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

POLICIES = ["fifo", "edf", "max-benefit", "random", "edf-partitioned", "proportional"]


# -- valid starting points ---------------------------------------------------------------------
def _t(name: str, **keys: Any) -> dict[str, Any]:
    return {"name": name, "alpha": 1, "beta": 0.1, "priority": 1, **keys}


BASES: list[dict[str, Any]] = [
    # periodic feeds
    {"tracks": 2, "horizon": 200, "seed": 0, "tables": [
        _t("orders", period=10), _t("stock", period=7, phase=3, alpha=0.5, beta=0.2, priority=3)]},
    # replayed feeds (pairs and bare times), with a nominal period
    {"tracks": 1, "horizon": 100, "tables": [
        _t("clicks", arrivals=[[5, 5], [12, 10], [20, 18], [33, 33]], nominal_period=8, priority=2),
        _t("bare", arrivals=[3, 9.5, 40], nominal_period=12, initial_freshness=-2)]},
    # derived views over periodic and replayed feeds
    {"tracks": 2, "horizon": 150, "seed": 3, "tables": [
        _t("a", period=10), _t("b", arrivals=[[4, 4], [15, 14], [30, 28]], nominal_period=10),
        _t("v", sources=["a", "b"], alpha=0.5, beta=0.05, priority=2), _t("w", sources=["v"], priority=1.5)]},
    # slowdown, variability, warmup, chop, sporadic separation
    {"tracks": 3, "horizon": 300, "seed": 7, "variability": 0.5, "warmup": 20, "chop": 2,
     "slowdown": {"factor": 3, "normal": 40, "slow": 10}, "tables": [
        _t("p", period=12, min_separation=5), _t("q", period=30, chop=1.5, alpha=2),
        _t("r", sources=["p", "q"], beta=0.3)]},
    # Bateni-style replayed tables with declared update lengths
    {"tracks": 2, "horizon": 60, "tables": [
        _t("x", arrivals=[2, 4, 7, 9], nominal_period=2.5, length_range=[1, 4]),
        _t("y", arrivals=[[1, 0.5], [6, 6]], nominal_period=5, alpha=0, beta=1)]},
    # overloaded: the partitioning policies cannot place these tables on one track (Infeasible)
    {"tracks": 1, "horizon": 120, "tables": [
        _t("h1", period=10, alpha=6), _t("h2", period=12, alpha=7, priority=2), _t("hv", sources=["h1", "h2"])]},
]


# -- the document tree -------------------------------------------------------------------------
@dataclass(eq=False)
class Node:
    anchor: str | None = field(default=None, init=False)


@dataclass(eq=False)
class Scalar(Node):
    value: Any


@dataclass(eq=False)
class Raw(Node):
    """A token written as is: ``yaml`` in YAML files, ``json`` in JSON files."""

    yaml: str
    json: str


@dataclass(eq=False)
class Seq(Node):
    items: list[Node]


@dataclass(eq=False)
class Map(Node):
    pairs: list[tuple[Node, Node]]


@dataclass(eq=False)
class Alias(Node):
    target: Node


MERGE = Raw("<<", '"<<"')


def tree(value: Any) -> Node:
    if isinstance(value, dict):
        return Map([(Scalar(k), tree(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return Seq([tree(v) for v in value])
    return Scalar(value)


def walk(root: Node) -> list[tuple[Node, Node | None, int]]:
    """Every value node in document order (pre-order): (node, parent, index of the value in the
    parent's items or pairs). Keys are not listed; aliases are not followed."""
    out: list[tuple[Node, Node | None, int]] = []
    stack: list[tuple[Node, Node | None, int]] = [(root, None, -1)]
    while stack:
        node, parent, index = stack.pop()
        out.append((node, parent, index))
        if isinstance(node, Seq):
            stack.extend(reversed([(child, node, k) for k, child in enumerate(node.items)]))
        elif isinstance(node, Map):
            stack.extend(reversed([(value, node, k) for k, (_, value) in enumerate(node.pairs)]))
    return out


def contains(outer: Node, inner: Node) -> bool:
    return any(node is inner for node, _, _ in walk(outer))


def put(parent: Node, index: int, node: Node) -> None:
    if isinstance(parent, Seq):
        parent.items[index] = node
    elif isinstance(parent, Map):
        parent.pairs[index] = (parent.pairs[index][0], node)


# -- emitters ----------------------------------------------------------------------------------
@dataclass
class Style:
    raw_unicode: bool = True  # YAML: printable non-ASCII as is (else \u escapes); JSON: ensure_ascii off
    raw_surrogates: bool = False  # write lone surrogates as (invalid UTF-8) bytes, not escapes


def _yaml_float(x: float) -> str:
    if math.isnan(x):
        return ".nan"
    if math.isinf(x):
        return ".inf" if x > 0 else "-.inf"
    text = repr(x)
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        text = f"{mantissa}e{exponent}"  # YAML 1.1 floats need the dot (and repr gives the sign)
    return text


def _yaml_str(text: str, style: Style) -> str:
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif o < 0x20 or 0x7F <= o <= 0x9F:
            out.append(f"\\x{o:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append(ch if style.raw_surrogates else f"\\u{o:04x}")
        elif style.raw_unicode and o not in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF):
            out.append(ch)
        else:
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def _yaml_scalar(value: Any, style: Style) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _yaml_float(value)
    return _yaml_str(str(value), style)


def _yaml_flow(node: Node, style: Style) -> str:
    prefix = f"&{node.anchor} " if node.anchor else ""
    if isinstance(node, Alias):
        return f"*{node.target.anchor}"
    if isinstance(node, Raw):
        return prefix + node.yaml
    if isinstance(node, Scalar):
        return prefix + _yaml_scalar(node.value, style)
    if isinstance(node, Seq):
        return prefix + "[" + ", ".join(_yaml_flow(item, style) for item in node.items) + "]"
    assert isinstance(node, Map)
    pairs = ", ".join(f"{_yaml_key(k, style)}: {_yaml_flow(v, style)}" for k, v in node.pairs)
    return prefix + "{" + pairs + "}"


def _yaml_key(key: Node, style: Style) -> str:
    if isinstance(key, Raw):
        return key.yaml
    if isinstance(key, Scalar) and isinstance(key.value, str):
        return _yaml_str(key.value, style)
    return "? " + _yaml_flow(key, style)  # a complex key (a number, null, a list): explicit form


def emit_yaml(root: Node, style: Style) -> str:
    """Block style at the top (and for a top-level list, e.g. ``tables``), flow style inside."""
    if not isinstance(root, Map) or root.anchor:
        return _yaml_flow(root, style) + "\n"
    lines = []
    for key, value in root.pairs:
        head = _yaml_key(key, style)
        if head.startswith("? "):
            lines.append(f"{head}\n: {_yaml_flow(value, style)}")
        elif isinstance(value, Seq) and value.items and not value.anchor:
            lines.append(f"{head}:")
            lines.extend(f"  - {_yaml_flow(item, style)}" for item in value.items)
        else:
            lines.append(f"{head}: {_yaml_flow(value, style)}")
    return "\n".join(lines) + "\n"


def _json_scalar(value: Any, style: Style) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, (bool, type(None), int)):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=not style.raw_unicode and not style.raw_surrogates)


def emit_json(node: Node, style: Style, _active: tuple[int, ...] = ()) -> str:
    """JSON text: aliases copied out (a recursive one as null), merge keys as plain ``"<<"``."""
    if isinstance(node, Alias):
        if id(node.target) in _active:
            return "null"
        return emit_json(node.target, style, _active)
    active = (*_active, id(node))
    if isinstance(node, Raw):
        return node.json
    if isinstance(node, Scalar):
        return _json_scalar(node.value, style)
    if isinstance(node, Seq):
        return "[" + ", ".join(emit_json(item, style, active) for item in node.items) + "]"
    assert isinstance(node, Map)
    pairs = []
    for key, value in node.pairs:
        if isinstance(key, Raw):
            head = key.json
        elif isinstance(key, Scalar) and isinstance(key.value, str):
            head = _json_scalar(key.value, style)
        else:
            head = json.dumps(str(getattr(key, "value", "key")))
        pairs.append(f"{head}: {emit_json(value, style, active)}")
    return "{" + ", ".join(pairs) + "}"


def encode(text: str) -> bytes:
    """UTF-8, lone surrogates included as their (invalid) three-byte forms."""
    return text.encode("utf-8", "surrogatepass")


# -- hostile values ----------------------------------------------------------------------------
def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


#: Names that would lead a path elsewhere, or hide, or pass a file system's limits.
PATH_LIKE: list[str] = ["../x", "../../etc/passwd", "/abs", "a/b", "a\\b", ".", "..", ".hidden", "C:\\x", "x" * 300,
                        "\u00e9" * 200, "con", "a*b?", "[x]", "{y}"]

HOSTILE_SCALARS: list[Any] = [
    None, True, False, "", "x", "10", "1e3", 0, -1, -10, 1, 3, 2**31, 2**63, -(2**63), 10**18,
    10**400, -(10**400), 1e308, -1e308, 1.7976931348623157e308, 1e-320, -1e-320, 5e-324, 0.0, -0.0,
    math.nan, math.inf, -math.inf, 1e300, 1e155, 1e-9, 1e12, 0.5, 1.5, 2.5e-5, 99999.0,
    "\U0001F600", "\u202eevil\u202c", "\u05e9\u05dc\u05d5\u05dd", "a\x00b", "\ud800", "x\udc00y", "a\nb", "\t",
    "\ufeffname", "<script>alert(1)</script>", "x" * 100_000, "orders", "a", "v", "clicks",
    *PATH_LIKE,
]

HOSTILE_CONTAINERS: list[Any] = [
    [], {}, [1, 2], [[1, 1]], {"a": 1}, ["orders"], [None], [[5, 5], [4, 4]], [[1, 2, 3]],
    _deep(70), _deep(30), [[float(k), float(k)] for k in range(1, 2000)], list(range(1, 300)),
    {"factor": 2, "normal": 1, "slow": 1}, [{"name": "z", "period": 1, "alpha": 1, "beta": 0, "priority": 1}],
]

RAW_TOKENS: list[Raw] = [
    Raw("9" * 5000, "9" * 5000), Raw("-" + "9" * 400, "-" + "9" * 400), Raw("1." + "0" * 400 + "1", "1." + "0" * 400 + "1"),
    Raw("1" + "0" * 400 + ".0", "1" + "0" * 400 + ".0"), Raw(".nan", "NaN"), Raw(".inf", "Infinity"),
    Raw("-.inf", "-Infinity"), Raw("1.0e+999", "1e999"), Raw("-1.0e+999", "-1e999"), Raw("1.0e-400", "1e-400"),
    Raw("1e308", "1e308"), Raw("-0", "-0"), Raw("0x7fffffffffffffff", "0x7f"), Raw("0b1010", "0b1"), Raw("0o17", "017"),
    Raw("1_000", "1000"), Raw("1:20", '"1:20"'), Raw("2001-12-14", '"2001-12-14"'), Raw("2001-13-45", "2001"),
    Raw("2001-12-14t21:59:43.10-05:00", '"t"'), Raw("!!binary aGVsbG8=", '"aGVsbG8="'), Raw("!!set {a, b}", "[]"),
    Raw("!!omap [{a: 1}]", "{}"), Raw("!!python/object/apply:os.system ['true']", "nul"),
    Raw("!!python/name:os.system", "tru"), Raw("!!float 1e5", "1e5"), Raw("!!int 1.5", "1.5"), Raw("!!str 5", '"5"'),
    Raw("~", "null"), Raw("'single'", "'single'"), Raw("[1, 2", "[1, 2"), Raw("{a: }", '{"a": }'),
    Raw('"\\ud83d\\ude00"', '"\\ud83d\\ude00"'), Raw('"\\udfff"', '"\\udfff"'), Raw("*undefined", "undefined"),
    Raw("!!null ''", "null"), Raw("|\n  block", '"block"'), Raw("@reserved", "@"), Raw("%", "%"),
]

hostile_values = st.one_of(
    st.sampled_from(HOSTILE_SCALARS),
    st.sampled_from(HOSTILE_CONTAINERS).map(copy.deepcopy),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.text(max_size=12),
)

HOSTILE_KEYS = ["extra", "Name", "name ", "tables ", "\U0001F600", "\ud800", "", "a\nb", "<<x", "x" * 100_000,
                "period", "arrivals", "sources", "tracks", "horizon", "priority", "slowdown", "alpha", "seed"]

#: Numbers at the edges of the float range (denormals included), for numeric fields.
EXTREMES: list[Any] = [1e-320, 5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 1e-9, 1e300, 1e308, -1e308,
                       1.7976931348623157e308, 10**400, -(10**400), 2**63, 2**1024, math.nan, math.inf, -math.inf,
                       0, -0.0, -1e-320, 1e155, 1e150]

MUTATIONS = ["replace", "replace", "replace", "raw", "delete", "unknown-key", "duplicate-key", "number", "number",
             "extreme", "extreme", "alias", "merge", "empty-list", "grow", "nul-text", "path-name"]


@dataclass
class Document:
    """A generated file: its bytes, suffix and what was done (for failure reports)."""

    data: bytes
    suffix: str
    steps: list[str]

    def __repr__(self) -> str:  # what Hypothesis prints for a failing example
        head = self.data[:300].decode("utf-8", "backslashreplace")
        return f"Document({self.suffix}, steps={self.steps}, {len(self.data)} bytes, head={head!r})"


def _numbers(nodes: list[tuple[Node, Node | None, int]]) -> list[tuple[Node, Node | None, int]]:
    return [n for n in nodes if isinstance(n[0], Scalar) and isinstance(n[0].value, (int, float))
            and not isinstance(n[0].value, bool) and n[1] is not None]


def _number_change(value: float, how: str) -> Any:
    if how == "negate":
        return -value
    if how == "huge":
        return value * 1e300 if value else 1e300
    if how == "tiny":
        return value * 1e-300 if value else 1e-320
    if how == "zero":
        return 0
    if how == "int-huge":
        return int(value) * 10**400 if value else 10**400
    if how == "float":
        return float(value) + 0.5
    return str(value)  # "string": the number as text


@st.composite
def documents(draw: st.DrawFn, formats: tuple[str, ...] = ("yaml", "json"),
              bases: list[Any] | None = None, most: int = 3) -> Document:
    """A valid base document (default: a workload of :data:`BASES`; tests/test_hostile_surfaces.py
    passes query sets, workflows, grids and manifests) with 1 to ``most`` hostile mutations, as
    YAML or JSON bytes."""
    bases = BASES if bases is None else bases
    base = draw(st.integers(0, len(bases) - 1))
    root = tree(copy.deepcopy(bases[base]))
    steps = [f"base {base}"]
    anchors = 0
    for _ in range(draw(st.integers(1, most))):
        kind = draw(st.sampled_from(MUTATIONS))
        nodes = walk(root)
        inner = [n for n in nodes if n[1] is not None]
        maps = [n[0] for n in nodes if isinstance(n[0], Map)]
        if kind in ("replace", "raw") and inner:
            node, parent, index = inner[draw(st.integers(0, len(inner) - 1))]
            value = draw(st.sampled_from(RAW_TOKENS)) if kind == "raw" else tree(draw(hostile_values))
            if kind == "raw":
                value = Raw(value.yaml, value.json)
            put(parent, index, value)
            steps.append(f"{kind} #{nodes.index((node, parent, index))} -> {_short(value)}")
        elif kind == "delete" and maps:
            target = maps[draw(st.integers(0, len(maps) - 1))]
            if target.pairs:
                k = draw(st.integers(0, len(target.pairs) - 1))
                steps.append(f"delete {_short(target.pairs[k][0])}")
                del target.pairs[k]
        elif kind in ("unknown-key", "duplicate-key") and maps:
            target = maps[draw(st.integers(0, len(maps) - 1))]
            if kind == "duplicate-key" and target.pairs:
                key = target.pairs[draw(st.integers(0, len(target.pairs) - 1))][0]
                key = Scalar(key.value) if isinstance(key, Scalar) else key
            else:
                key = Scalar(draw(st.one_of(st.sampled_from(HOSTILE_KEYS), st.text(max_size=8))))
            value = tree(draw(hostile_values))
            at = draw(st.integers(0, len(target.pairs)))
            target.pairs.insert(at, (key, value))
            steps.append(f"{kind} {_short(key)} at {at} -> {_short(value)}")
        elif kind == "number":
            numbers = _numbers(nodes)
            if numbers:
                node, parent, index = numbers[draw(st.integers(0, len(numbers) - 1))]
                how = draw(st.sampled_from(["negate", "huge", "tiny", "zero", "int-huge", "float", "string"]))
                try:
                    changed = _number_change(node.value, how)
                except (OverflowError, ValueError):
                    changed = 10**400
                put(parent, index, Scalar(changed))
                steps.append(f"number {how} {node.value!r}")
        elif kind == "extreme":
            numbers = _numbers(nodes)
            if numbers:
                node, parent, index = numbers[draw(st.integers(0, len(numbers) - 1))]
                value = draw(st.sampled_from(EXTREMES))
                put(parent, index, Scalar(value))
                steps.append(f"extreme {node.value!r} -> {value!r}"[:80])
        elif kind in ("alias", "merge") and len(nodes) > 1:
            i = draw(st.integers(0, len(nodes) - 2))
            j = draw(st.integers(i + 1, len(nodes) - 1))
            source, (target, parent, index) = nodes[i][0], nodes[j]
            if isinstance(source, (Alias, Raw)) or (kind == "merge" and not (isinstance(source, Map) and isinstance(target, Map))):
                continue
            if source.anchor is None:
                anchors += 1
                source.anchor = f"a{anchors}"
            if kind == "alias" and parent is not None:
                put(parent, index, Alias(source))
                steps.append(f"alias #{j} -> *#{i}")
            elif kind == "merge":
                assert isinstance(target, Map)
                target.pairs.insert(0, (MERGE, Alias(source)))
                steps.append(f"merge *#{i} into #{j}")
        elif kind == "empty-list":
            seqs = [n for n in inner if isinstance(n[0], Seq)]
            if seqs:
                node, parent, index = seqs[draw(st.integers(0, len(seqs) - 1))]
                put(parent, index, Seq([]))
                steps.append("empty-list")
        elif kind == "grow":
            seqs = [n[0] for n in nodes if isinstance(n[0], Seq) and n[0].items]
            if seqs:
                seq = seqs[draw(st.integers(0, len(seqs) - 1))]
                times = min(draw(st.sampled_from([2, 10, 200])), max(1, 2000 // len(seq.items)))  # a few MB at most
                seq.items = [copy.deepcopy(item) for item in seq.items for _ in range(times)]
                steps.append(f"grow x{times}")
        elif kind == "nul-text":
            strings = [n for n in inner if isinstance(n[0], Scalar) and isinstance(n[0].value, str)]
            if strings:
                node, parent, index = strings[draw(st.integers(0, len(strings) - 1))]
                extra = draw(st.sampled_from(["\x00", "\ud800", "\U0001F600", "\u202e", "\n", "x" * 100_000, "\x85",
                                              "/..", "/../x"]))
                put(parent, index, Scalar(node.value + extra))
                steps.append(f"nul-text {extra[:3]!r}")
        elif kind == "path-name":  # a name (any text value) that would lead a path elsewhere
            strings = [n for n in inner if isinstance(n[0], Scalar) and isinstance(n[0].value, str)]
            if strings:
                node, parent, index = strings[draw(st.integers(0, len(strings) - 1))]
                name = draw(st.sampled_from(PATH_LIKE))
                put(parent, index, Scalar(name))
                steps.append(f"path-name {name[:20]!r}")
    fmt = draw(st.sampled_from(formats))
    style = Style(raw_unicode=draw(st.booleans()), raw_surrogates=draw(st.integers(0, 9)) == 0)
    text = emit_yaml(root, style) if fmt == "yaml" else emit_json(root, style)
    steps.append(f"{fmt} raw_unicode={style.raw_unicode} raw_surrogates={style.raw_surrogates}")
    return Document(data=encode(text), suffix=".yaml" if fmt == "yaml" else ".json", steps=steps)


def _short(node: Node) -> str:
    if isinstance(node, Scalar):
        text = repr(node.value)
    elif isinstance(node, Raw):
        text = f"raw {node.yaml!r}"
    else:
        text = type(node).__name__
    return text if len(text) <= 40 else text[:37] + "..."
