"""The import layering: ``experiments`` (the papers) -> ``sweeps`` (registry, runner, cache) ->
``spark``, never back.

* Nothing under ``staleness_lab/spark/`` imports ``staleness_lab.experiments``, at any depth
  (module level, inside functions, under ``TYPE_CHECKING``): the Spark grid runner is handed the
  row function by :func:`staleness_lab.sweeps.runner.run_sweep`.
* Nothing under ``staleness_lab/sweeps/`` imports ``staleness_lab.experiments``, at any depth
  either (the paper modules import ``sweeps`` to register, so that would be a circle): a lookup
  that must know every paper's experiments goes through ``staleness_lab.experiments`` (the CLI's
  ``sweep`` hands the sweep command the experiment it looked up there).

Imports are read with :mod:`ast` (``import``, ``from ... import``, relative imports resolved, and
``importlib.import_module("...")`` / ``__import__("...")`` with a literal name).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "staleness_lab"
FORBIDDEN = "staleness_lab.experiments"


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


def _imports(path: Path, source: str | None = None) -> Iterator[tuple[str, int, str | None]]:
    """(imported module, line, enclosing function or None at module level) for every import in
    ``path`` (or in ``source`` read as if it were ``path``), ``from X import a`` giving both
    ``X`` and ``X.a``."""
    tree = ast.parse(path.read_text() if source is None else source, filename=str(path))

    def visit(node: ast.AST, function: str | None) -> Iterator[tuple[str, int, str | None]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, function
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node, path)
            yield module, node.lineno, function
            for alias in node.names:
                yield f"{module}.{alias.name}", node.lineno, function
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                yield node.args[0].value, node.lineno, function
        inner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
        if isinstance(node, ast.Lambda):
            inner = function or "<lambda>"
        for child in ast.iter_child_nodes(node):
            yield from visit(child, inner)

    yield from visit(tree, None)


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
