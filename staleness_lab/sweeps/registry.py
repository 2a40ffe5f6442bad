"""Named, parameterized experiments: ``params -> tidy DataFrame``, and parameter grids.

An experiment declares its parameters (name, type, default); a grid maps some of them to lists
of values (their cartesian product) plus an optional ``fixed:`` mapping; every row is completed
with the defaults and type-checked, so a sweep fails before any work on a bad grid.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from staleness_lab.errors import InputError, shown
from staleness_lab.model.values import FLOAT_MAX, decimal_digits, huge_int_rule
from staleness_lab.paths import SAFE_NAME_RULE, name_problem

ParamValue = int | float | str | bool


@dataclass(frozen=True)
class Param:
    """One experiment parameter: its type (int, float, str or bool), default and meaning, and
    the rule its values obey, checked like a workload key (one line naming the parameter):
    numeric bounds ``ge``/``gt``/``le`` and, for labels, the allowed ``choices``."""

    name: str
    type: type
    default: ParamValue
    doc: str = ""
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    choices: tuple[ParamValue, ...] | None = None

    def check(self, value: Any, where: str) -> ParamValue:
        """The value converted to the parameter's type, or an InputError naming ``where``.
        NumPy scalars (``np.float64`` from ``np.arange``, say) count as their Python types."""
        if isinstance(value, np.generic):
            value = value.item()
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            if abs(value) > FLOAT_MAX:
                raise InputError(where, huge_int_rule(decimal_digits(value)))
            value = float(value)
        if self.type is float and isinstance(value, float) and not math.isfinite(value):
            raise InputError(where, f"must be a finite number, got {value}")
        if type(value) is not self.type:
            raise InputError(where, f"must be of type {self.type.__name__}, got {shown(value)} ({type(value).__name__})")
        if self.choices is not None and value not in self.choices:
            raise InputError(where, f"must be one of {', '.join(map(repr, self.choices))}, got {shown(value)}")
        if self.type in (int, float):
            self._check_bounds(value, where)
        return value

    def _check_bounds(self, value: float, where: str) -> None:
        for bound, ok, word in ((self.ge, lambda b: value >= b, ">="), (self.gt, lambda b: value > b, ">"),
                                (self.le, lambda b: value <= b, "<=")):
            if bound is not None and not ok(bound):
                raise InputError(where, f"must be {word} {_number(bound)}, got {_number(value)}")


def _number(value: float) -> str:
    """An integer in full (a seed bound of 2^63 - 1 shown as such), anything else as ``:g``."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**64 else f"{value:g}"


@dataclass(frozen=True)
class Experiment:
    """A named experiment: ``run(**params)`` returns observations as a tidy DataFrame."""

    name: str
    run: Callable[..., pd.DataFrame]
    params: tuple[Param, ...]
    doc: str

    @property
    def defaults(self) -> dict[str, ParamValue]:
        return {p.name: p.default for p in self.params}

    def complete(self, values: Mapping[str, Any], where: str = "parameters") -> dict[str, ParamValue]:
        """A full parameter row: defaults overridden by ``values``, each type-checked."""
        known = {p.name: p for p in self.params}
        for key in values:
            if key not in known:
                raise InputError(f"{where}.{key}", f"experiment {self.name!r} takes no parameter {key!r} (it takes: {', '.join(known)})")
        return {name: param.check(values.get(name, param.default), f"{where}.{name}") for name, param in known.items()}


def check_choice(value: Any, allowed: Iterable[Any], name: str) -> None:
    """An :class:`InputError` naming parameter ``name`` unless ``value`` is one of ``allowed``
    (a label such as a policy, variant or profile)."""
    allowed = list(allowed)
    if value not in allowed:
        raise InputError(name, f"must be one of {', '.join(map(repr, allowed))}, got {value!r}")


_EXPERIMENTS: dict[str, Experiment] = {}

#: The most rows one grid may expand to (each row is at least one run; a sweep of 10^5 rows of
#: the quick experiments already takes hours on 2 cores).
MAX_GRID_POINTS = 100_000


def experiment(name: str, *params: Param) -> Callable[[Callable[..., pd.DataFrame]], Callable[..., pd.DataFrame]]:
    """Decorator registering ``func(**params) -> DataFrame`` as the experiment ``name``."""

    def wrap(func: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
        if name in _EXPERIMENTS:
            raise ValueError(f"experiment {name!r} registered twice")
        problem = name_problem(name)
        if problem is not None:  # the name is a path component of the cache and the results
            raise ValueError(f"experiment name {name!r} {problem}: {SAFE_NAME_RULE}")
        doc = (func.__doc__ or "").strip().splitlines()[0] if func.__doc__ else ""
        _EXPERIMENTS[name] = Experiment(name=name, run=func, params=tuple(params), doc=doc)
        return func

    return wrap


def get_experiment(name: str) -> Experiment:
    """The experiment registered as ``name`` in this process, or an InputError naming the known
    ones. The papers register theirs when :mod:`staleness_lab.experiments` is imported (this
    layer never imports them): look a paper's experiment up by name there."""
    try:
        return _EXPERIMENTS[name]
    except KeyError:
        raise InputError("experiment", f"unknown experiment {name!r} (known: {', '.join(_EXPERIMENTS)})") from None


def list_experiments() -> list[Experiment]:
    """The experiments registered in this process, in the order they registered (every paper's
    once :mod:`staleness_lab.experiments` is imported)."""
    return list(_EXPERIMENTS.values())


def expand_grid(exp: Experiment, grid: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None) -> list[dict[str, ParamValue]]:
    """Complete, type-checked parameter rows of a grid, in one of two shapes.

    A mapping: each key maps to a list of values (a scalar is a one-value list), the rows are
    their cartesian product (in the grid's key order, last key fastest), and the optional
    ``fixed`` mapping sets parameters shared by every row. A list: explicit rows, each a mapping
    completed with the defaults; rows may set different parameters (a sweep mixing two
    variants does), and a bad key or value is named with its row, ``rows[K].KEY``. A grid of more
    than :data:`MAX_GRID_POINTS` rows is refused before any row is built; anything else is an
    :class:`InputError` naming ``grid``."""
    if isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        return _explicit_rows(exp, grid)
    if grid is not None and not isinstance(grid, Mapping):
        raise InputError("grid", f"must be a mapping (parameter -> values) or a list of parameter rows, "
                                 f"got {type(grid).__name__}")
    grid = dict(grid or {})
    fixed = grid.pop("fixed", None) or {}
    if not isinstance(fixed, Mapping):
        raise InputError("grid.fixed", "must be a mapping of parameter -> value")
    both = set(fixed) & set(grid)
    if both:
        raise InputError(f"grid.{sorted(both)[0]}", "is given both in the grid and under fixed")
    axes = []
    for key, values in grid.items():
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if not values:
            raise InputError(f"grid.{key}", "must list at least one value")
        axes.append([(key, v) for v in values])
    points = math.prod(len(axis) for axis in axes)
    if points > MAX_GRID_POINTS:
        widest = max(axes, key=len)[0][0]
        raise InputError(f"grid.{widest}", _too_many(points))
    exp.complete(fixed, where="grid.fixed")  # names a bad key under fixed: as grid.fixed.KEY
    return [exp.complete({**fixed, **dict(combo)}, where="grid") for combo in itertools.product(*axes)]


def _explicit_rows(exp: Experiment, rows: Sequence[Any]) -> list[dict[str, ParamValue]]:
    """The list shape of :func:`expand_grid`."""
    if len(rows) > MAX_GRID_POINTS:
        raise InputError("rows", _too_many(len(rows)))
    out = []
    for k, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InputError(f"rows[{k}]", f"must be a mapping of parameter -> value, got {type(row).__name__}")
        out.append(exp.complete(row, where=f"rows[{k}]"))
    return out


def _too_many(points: int) -> str:
    return (f"the grid has {points:,} points (the product of its lists, or its rows), above the limit of "
            f"{MAX_GRID_POINTS:,}: split it into several sweeps")
