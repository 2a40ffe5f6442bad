"""Which of the package's sources an experiment's rows depend on: the ``version`` part of the
sweep cache's keys (:func:`staleness_lab.sweeps.cache.code_identity`).

A digest of every source would make any edit anywhere (a scheduler of another paper, a report
helper) invalidate every cached row, so a paper-scale sweep measured over several sittings
(hours of Spark on the full intermittent profile) could never resume once the code moved on.
The digest covers instead the sources the experiment's module reaches by its imports, read
from the files (:mod:`ast`, no import executed):

* ``import a.b`` and ``from a.b import x`` (anywhere in a file, function bodies included,
  relative imports resolved) **follow** module ``a.b``: its file counts and its own imports are
  read in turn. ``from a import b`` with ``b`` a submodule follows ``a.b``.
* A package's ``__init__`` runs when anything in the package is imported (the experiment's own
  module included: ``experiments/golab/__init__`` runs for ``experiments.golab.sweeps``): it
  counts as a file, and its imports are not followed (they re-export: ``staleness_lab/__init__``
  imports the simulator for the notebook's short path). A name taken from a package follows the module
  its ``__init__`` takes it from (``from staleness_lab.intermittent import QuerySet`` follows
  ``intermittent.model``) and the submodules the ``__init__`` imports as modules, which are
  registrations (``from staleness_lab.policies import get_policy`` follows every policy module,
  so that a row choosing a policy by name depends on its code); a name the ``__init__`` defines
  itself (``__version__``) is the ``__init__`` file alone.
* A string constant naming a package module is an import by name: a module is followed (the
  theory suites and workflow functions are imported so), a package counts as its ``__init__``
  file alone.

An experiment defined outside the package (a notebook, a test) depends on what it pleases:
its rows take the digest of every source, as before. ``tests/experiments/test_code_scope.py``
runs rows of the papers' experiments under a profiler and checks that every package function
they call lies in the scope.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from staleness_lab.provenance import source_digest

PACKAGE = "staleness_lab"
ROOT = Path(__file__).resolve().parents[1]  # the package directory


def module_file(name: str) -> Path | None:
    """The source file of package module ``name`` (a package's ``__init__.py``), or None."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    parts = name.split(".")[1:]
    base = ROOT.joinpath(*parts)
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _is_package(name: str) -> bool:
    path = module_file(name)
    return path is not None and path.name == "__init__.py"


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module an ``ImportFrom`` in (a module of) ``package`` names, relative ones resolved."""
    if not node.level:
        return node.module or ""
    anchor = package.split(".")
    anchor = anchor[: len(anchor) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


@functools.cache
def _tree(name: str) -> ast.Module:
    """The parsed source of package module ``name`` (each file is read once per process)."""
    path = module_file(name)
    assert path is not None
    return ast.parse(path.read_bytes(), filename=str(path))


def _provider(package: str, name: str, seen: frozenset[str] = frozenset()) -> str:
    """The module that gives ``name`` to ``from package import name`` (``package`` a package):
    the submodule its ``__init__`` re-exports it from, or the package itself when the name is
    defined there (or cannot be told apart: a star import)."""
    if package in seen:
        return package
    for node in _tree(package).body:
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, package)
            for alias in node.names:
                if alias.name == "*":
                    return package
                if (alias.asname or alias.name) != name:
                    continue
                sub = f"{source}.{alias.name}"
                if module_file(sub) is not None:
                    return sub
                if _is_package(source):
                    return _provider(source, alias.name, seen | {package})
                return source
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == name:
                    return alias.name
    return package


@functools.cache
def _registrations(package: str) -> frozenset[str]:
    """The submodules a package's ``__init__`` imports as modules: registrations (the policies'
    ``__init__`` imports every policy module so that ``get_policy`` finds it by name)."""
    out = set()
    for node in _tree(package).body:
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, package)
            out.update(f"{source}.{a.name}" for a in node.names if module_file(f"{source}.{a.name}") is not None)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if module_file(a.name) is not None)
    return frozenset(out)


def _imports(name: str) -> tuple[set[str], set[str]]:
    """The modules module ``name`` follows and those it counts as files only (module docstring)."""
    package = name if _is_package(name) else name.rpartition(".")[0]
    follow: set[str] = set()
    files: set[str] = set()

    def parents(module: str) -> None:
        parts = module.split(".")
        files.update(".".join(parts[:k]) for k in range(1, len(parts)))

    parents(name)
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                follow.add(alias.name)
                parents(alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, package)
            parents(module)
            if module_file(module) is None:
                continue
            if not _is_package(module):
                follow.add(module)
                continue
            files.add(module)  # its __init__ runs
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                if module_file(sub) is not None:
                    follow.add(sub)
                elif alias.name == "*":
                    follow.add(module)
                else:
                    provider = _provider(module, alias.name)
                    (files if provider == module else follow).add(provider)
                    follow.update(_registrations(module))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(PACKAGE + "."):
            if module_file(node.value) is not None:  # a module imported by name
                (files if _is_package(node.value) else follow).add(node.value)
                parents(node.value)
    own = lambda names: {m for m in names if module_file(m) is not None}  # noqa: E731
    return own(follow), own(files) - own(follow)


@functools.cache
def scope(module: str) -> frozenset[Path]:
    """The source files module ``module`` depends on (module docstring), itself included."""
    followed: set[str] = set()
    counted: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in followed:
            continue
        followed.add(name)
        follow, files = _imports(name)
        todo.extend(follow - followed)
        counted |= files
    return frozenset(p for p in (module_file(m) for m in followed | counted) if p is not None)


def scoped_digest(module: str) -> str:
    """:func:`~staleness_lab.provenance.source_digest` of :func:`scope` for a package module;
    of every source for any other."""
    return source_digest(scope(module) if module_file(module) is not None else None)
