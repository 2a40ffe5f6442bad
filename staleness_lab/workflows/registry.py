"""The named row functions (``fn:``) and input generators (``generator:``) a workflow file may
refer to. Registering under a name makes it valid in YAML; an unknown name is bad input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: fn name -> the pandas implementation (the Spark one registers in ``spark/``, same rows).
FUNCTIONS: dict[str, Callable[..., Any]] = {}
#: generator name -> the seeded generator of an input channel's arrivals.
GENERATORS: dict[str, Callable[..., Any]] = {}


def register_function(name: str) -> Callable[[F], F]:
    """Register a row function under ``name`` (a decorator)."""
    def add(fn: F) -> F:
        FUNCTIONS[name] = fn
        return fn
    return add


def register_generator(name: str) -> Callable[[F], F]:
    """Register an input generator under ``name`` (a decorator)."""
    def add(gen: F) -> F:
        GENERATORS[name] = gen
        return gen
    return add
