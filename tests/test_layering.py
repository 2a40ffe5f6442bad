"""The import layering: ``experiments`` (the papers) -> ``sweeps`` (registry, runner, cache) ->
``spark``, never back.

* Nothing under ``staleness_lab/spark/`` imports ``staleness_lab.experiments``, at any depth
  (module level, inside functions, under ``TYPE_CHECKING``): the Spark grid runner is handed the
  row function by :func:`staleness_lab.sweeps.runner.run_sweep`.
* Nothing under ``staleness_lab/sweeps/`` imports ``staleness_lab.experiments``, at any depth
  either (the paper modules import ``sweeps`` to register, so that would be a circle): a lookup
  that must know every paper's experiments goes through ``staleness_lab.experiments`` (the CLI's
  ``sweep`` hands the sweep command the experiment it looked up there).
* Nothing under ``staleness_lab/workflows/`` (Olston's model and its run loop) imports
  ``staleness_lab.spark``, at any depth: the loop's caller hands it the spark mode's rows
  (:data:`staleness_lab.workflows.sim.MakeRows`).

Imports are read with :mod:`ast` (``import``, ``from ... import``, relative imports resolved, and
``importlib.import_module("...")`` / ``__import__("...")`` with a literal name).

The whole package, after ARCHITECTURE.md ("No import circles, and no arrow from a lower layer to a
higher one"):

* :func:`test_no_import_cycles`: the import graph of every module has no cycle (its rule is
  :func:`_import_graph`'s docstring).
* :func:`test_layer_rule`: one test per row of :data:`RULES`, the layer table's "must not" column
  as import rules.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "staleness_lab"
FORBIDDEN = "staleness_lab.experiments"
#: What Olston's model and run loop (``workflows/``) never import.
SPARK = "staleness_lab.spark"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom, path: Path) -> str:
    if not node.level:
        return node.module or ""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@dataclass(frozen=True)
class _Statement:
    """One import as written: ``module`` (relative names resolved), the ``names`` of ``from module
    import names`` (empty for ``import module`` and ``import_module("module")``), its line, and the
    enclosing function (None at module level, ``if TYPE_CHECKING:`` blocks included)."""

    module: str
    names: tuple[str, ...]
    line: int
    function: str | None


def _statements(path: Path, source: str | None = None) -> Iterator[_Statement]:
    """Every import in ``path`` (or in ``source`` read as if it were ``path``), at any depth."""
    tree = ast.parse(path.read_text() if source is None else source, filename=str(path))

    def visit(node: ast.AST, function: str | None) -> Iterator[_Statement]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield _Statement(alias.name, (), node.lineno, function)
        elif isinstance(node, ast.ImportFrom):
            yield _Statement(_resolve(node, path), tuple(a.name for a in node.names), node.lineno, function)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                yield _Statement(node.args[0].value, (), node.lineno, function)
        inner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
        if isinstance(node, ast.Lambda):
            inner = function or "<lambda>"
        for child in ast.iter_child_nodes(node):
            yield from visit(child, inner)

    yield from visit(tree, None)


def _imports(path: Path, source: str | None = None) -> Iterator[tuple[str, int, str | None]]:
    """(imported module, line, enclosing function or None at module level) for every import in
    ``path`` (or in ``source`` read as if it were ``path``), ``from X import a`` giving both
    ``X`` and ``X.a``."""
    for statement in _statements(path, source):
        yield statement.module, statement.line, statement.function
        for name in statement.names:
            yield f"{statement.module}.{name}", statement.line, statement.function


def _is_forbidden(module: str) -> bool:
    return module == FORBIDDEN or module.startswith(FORBIDDEN + ".")


def _files(package: str) -> list[Path]:
    files = sorted((PACKAGE / package).rglob("*.py"))
    assert files, f"no sources under staleness_lab/{package}"
    return files


def test_spark_never_imports_experiments() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: imports {module}"
             for path in _files("spark") for module, line, _ in _imports(path) if _is_forbidden(module)]
    assert not found, "staleness_lab/spark must not import staleness_lab.experiments:\n" + "\n".join(found)


def test_workflows_never_import_spark() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: imports {module}"
             for path in _files("workflows") for module, line, _ in _imports(path)
             if module == SPARK or module.startswith(SPARK + ".")]
    assert not found, "staleness_lab/workflows must not import staleness_lab.spark:\n" + "\n".join(found)


def test_sweeps_never_imports_experiments() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: imports {module}"
             for path in _files("sweeps") for module, line, _ in _imports(path) if _is_forbidden(module)]
    assert not found, "staleness_lab/sweeps must not import staleness_lab.experiments:\n" + "\n".join(found)


def test_the_checker_sees_imports_in_functions_and_relative_ones() -> None:
    text = ("def f():\n    from ..experiments import golab\n"
            "def g():\n    import importlib\n    importlib.import_module('staleness_lab.experiments')\n"
            "from staleness_lab import experiments\n")
    # Read as if it lived in staleness_lab/spark/ (relative imports resolve from there).
    found = [(m, fn) for m, _, fn in _imports(PACKAGE / "spark" / "probe.py", text) if _is_forbidden(m)]
    assert ("staleness_lab.experiments", "f") in found
    assert ("staleness_lab.experiments.golab", "f") in found
    assert ("staleness_lab.experiments", "g") in found
    assert ("staleness_lab.experiments", None) in found


@pytest.mark.parametrize("module", ["staleness_lab.spark.grid", "staleness_lab.sweeps", "staleness_lab.sweeps.named"])
def test_importing_does_not_load_the_papers(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith({FORBIDDEN!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- the whole package: cycles and the layer table ------------------------------------------


@functools.cache
def _package_modules() -> dict[str, Path]:
    """Every module of the package by name (a package by its own name, for its ``__init__.py``)."""
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def _module_targets(name: str) -> tuple[tuple[str, int, str | None], ...]:
    """:func:`_targets` of package module ``name``, read once per test session."""
    modules = _package_modules()
    return tuple(_targets(modules[name], modules))


def _targets(path: Path, modules: Mapping[str, Path],
             source: str | None = None) -> Iterator[tuple[str, int, str | None]]:
    """(imported module, line, enclosing function or None) for every import in ``path``, by the
    rule of :func:`_import_graph`: ``from P import a`` is ``P.a`` when that is a module of
    ``modules``, else ``P``; ``import a.b`` and ``import_module("a.b")`` are ``a.b``. Modules
    outside the package (``pyspark``) are named as written (``from pyspark.sql import Row``:
    ``pyspark.sql``)."""
    for statement in _statements(path, source):
        if not statement.names:
            yield statement.module, statement.line, statement.function
            continue
        seen = set()
        for name in statement.names:
            target = f"{statement.module}.{name}"
            target = target if target in modules else statement.module
            if target not in seen:
                seen.add(target)
                yield target, statement.line, statement.function


def _import_graph() -> dict[str, dict[str, int]]:
    """The package's import graph: for each module, the package modules it imports (each with
    the line of its first import).

    * Nodes: every module under ``staleness_lab/``; a package is its ``__init__.py``, named by the
      package (``staleness_lab.sim``).
    * Edges: every import in the file, whatever its depth -- module level, ``if TYPE_CHECKING:``
      blocks, function and method bodies -- and ``importlib.import_module("...")`` with a literal
      name; relative imports resolved. An import of a package is an edge to its ``__init__``.
    * ``from P import a`` is an edge to ``P.a`` when that is a module, else to ``P`` (the module,
      or the package's ``__init__``, that must define ``a``), never to both: taking a submodule out
      of a package does not run more of the ``__init__`` than importing the submodule directly.
    * The parent packages Python initializes before a module (``staleness_lab.sim`` before
      ``staleness_lab.sim.engine``) are not edges: the import system does that once, before the
      module's own code, and the module uses none of it. Counted, they would put every submodule
      in a cycle with any ``__init__`` that imports one of its submodules.
    * An ``__init__``'s imports of its own submodules are edges like any other: they are what runs
      when the package is imported. So a submodule importing a name from its own package's
      ``__init__`` (``from staleness_lab.sim import Trace`` inside ``sim/``) is a cycle, and a
      real one (it works only while the ``__init__`` happens to have passed that name), and so is
      importing a package whose ``__init__`` imports back (a registry importing
      ``staleness_lab.experiments``, whose ``__init__`` imports the papers, which import the
      registry).
    * A module importing itself is no edge.
    """
    modules = _package_modules()
    graph: dict[str, dict[str, int]] = {}
    for name in modules:
        edges: dict[str, int] = {}
        for target, line, _ in _module_targets(name):
            if target in modules and target != name:
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def _cycles(graph: Mapping[str, Mapping[str, object]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one node (every import
    circle lies in one), each sorted, in order of their first node (Tarjan's algorithm, iterative
    so deep chains do not reach the recursion limit). Edges to nodes outside ``graph`` are
    ignored, and so are self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph[root]))]
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in graph:
                    continue
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(graph[succ])))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{line}"


def test_no_import_cycles() -> None:
    """No import circle in the package (the rule: :func:`_import_graph`), at any depth."""
    modules = _package_modules()
    graph = _import_graph()
    report = []
    for component in _cycles(graph):
        members = set(component)
        report.append(f"cycle of {len(component)}: " + ", ".join(component))
        report += [f"    {_where(modules[node], line)}: imports {target}"
                   for node in component for target, line in sorted(graph[node].items(), key=lambda e: e[1])
                   if target in members]
    assert not report, "import cycles in staleness_lab:\n" + "\n".join(report)


def test_the_cycle_finder_finds_exactly_the_circles() -> None:
    graph = {
        "a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1},  # a circle of three, leaving to d
        "d": {"d": 1, "e": 1},  # a self-loop is not a circle
        "e": {"f": 1, "outside": 1}, "f": {"e": 1},  # a circle of two; "outside" is not a node
        "g": {"a": 1, "e": 1},  # reaches both circles, in neither
        "h": {},
    }
    assert _cycles(graph) == [["a", "b", "c"], ["e", "f"]]
    assert _cycles({"x": {"y": 1}, "y": {}}) == []
    chain = {f"m{i}": {f"m{i + 1}": 1} for i in range(5000)} | {"m5000": {"m0": 1}}
    assert _cycles(chain) == [sorted(chain)]  # deeper than the recursion limit


def test_the_graph_follows_its_documented_rule() -> None:
    modules = _package_modules()
    text = ("from typing import TYPE_CHECKING\n"
            "from staleness_lab.sim import Trace, engine\n"
            "from . import metrics\n"
            "import staleness_lab.model.dag\n"
            "if TYPE_CHECKING:\n    from staleness_lab.policies.base import Policy\n"
            "def f():\n    from pyspark.sql import Row\n")
    # Read as if it lived in staleness_lab/sim/ (relative imports resolve from there).
    found = {(target, function) for target, _, function in _targets(PACKAGE / "sim" / "probe.py", modules, text)}
    assert found == {("typing", None), ("staleness_lab.sim", None), ("staleness_lab.sim.engine", None),
                     ("staleness_lab.sim.metrics", None), ("staleness_lab.model.dag", None),
                     ("staleness_lab.policies.base", None), ("pyspark.sql", "f")}
    graph = _import_graph()
    assert "staleness_lab.sim.engine" in graph["staleness_lab.sim"]  # an __init__'s own submodules count
    assert "staleness_lab.sim" not in graph["staleness_lab.sim.engine"]  # the implicit parent does not


@dataclass(frozen=True)
class Rule:
    """Modules under ``sources`` (top-level names under ``staleness_lab/``: a package's directory
    or a module's stem) never import a module under ``forbidden`` (dotted names, each with its
    submodules) other than those under ``allowed``; at any depth unless ``module_level``, then
    only where it runs on import (outside function bodies; ``if TYPE_CHECKING:`` blocks count)."""

    why: str
    sources: tuple[str, ...]
    forbidden: tuple[str, ...]
    allowed: tuple[str, ...] = ()
    module_level: bool = False


def _top_level() -> tuple[str, ...]:
    return tuple(sorted({p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in PACKAGE.rglob("*.py")}))


_UPPER = ("staleness_lab.experiments", "staleness_lab.sweeps", "staleness_lab.spark", "staleness_lab.viz")

#: ARCHITECTURE.md's layer table as import rules.
RULES: dict[str, Rule] = {
    "sim-knows-no-scheduler": Rule(
        "the engine runs any policy through the protocol; it knows no particular scheduler",
        ("sim",), ("staleness_lab.policies",), allowed=("staleness_lab.policies.base",)),
    "core-below-papers-and-facades": Rule(
        "the model, the engine, the policies and the theory sit below every paper's experiments, "
        "their sweeps, Spark, the figures and the entry points (api, cli, reports)",
        ("model", "sim", "policies", "theory"),
        (*_UPPER, "staleness_lab.api", "staleness_lab.cli", "staleness_lab.reports")),
    "intermittent-below-papers": Rule(
        "the intermittent-query model is handed Spark (a runner), never imports it, the sweeps or the figures",
        ("intermittent",), _UPPER),
    "optimize-below-papers": Rule(
        "the OR-Tools models import no pyspark, sweeps, experiments or figures", ("optimize",), _UPPER),
    "workflows-below-papers": Rule(
        "Olston's workflows are handed their Spark-backed algebra and store by the caller",
        ("workflows",), _UPPER),
    "pyspark-only-in-spark": Rule(
        "spark/ holds everything that imports pyspark; elsewhere it is imported lazily, if at all",
        tuple(n for n in _top_level() if n != "spark"), ("pyspark",), module_level=True),
    "spark-below-sweeps-and-experiments": Rule(
        "the Spark grid runner is handed the row function; sweeps and papers call into spark, not back",
        ("spark",), ("staleness_lab.sweeps", "staleness_lab.experiments")),
    "viz-below-experiments-and-sweeps": Rule(
        "figures draw tidy frames and traces; they do not run experiments", ("viz",),
        ("staleness_lab.experiments", "staleness_lab.sweeps")),
    "experiments-do-not-plot": Rule(
        "experiments return tidy frames; plotting is viz's, above them", ("experiments",), ("staleness_lab.viz",)),
    "widgets-at-the-top": Rule(
        "the teaching explorers sit at the top beside viz and the reports: nothing else imports them",
        tuple(n for n in _top_level() if n != "widgets"), ("staleness_lab.widgets",)),
    "widgets-build-on-the-api": Rule(
        "an explorer calls the public API, theory, the planner and viz; it runs no sweep, paper experiment or Spark",
        ("widgets",), ("staleness_lab.experiments", "staleness_lab.sweeps", "staleness_lab.spark")),
}


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("name", list(RULES))
def test_layer_rule(name: str) -> None:
    rule = RULES[name]
    modules = _package_modules()
    assert set(rule.sources) <= set(_top_level()), f"rule {name} names no such part of the package"
    found = []
    for module, path in modules.items():
        if path.relative_to(PACKAGE).parts[0].removesuffix(".py") not in rule.sources:
            continue
        for target, line, function in _module_targets(module):
            if rule.module_level and function is not None:
                continue
            if _under(target, rule.forbidden) and not _under(target, rule.allowed):
                found.append(f"{_where(path, line)}: imports {target}")
    assert not found, f"{name} ({rule.why}):\n" + "\n".join(found)
