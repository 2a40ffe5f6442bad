"""Support for the parameterized notebooks: type-checking papermill's parameters, and finding
the checkout's data files from whatever directory the kernel runs in.

A notebook's second cell checks its parameters (papermill injects the given values right after
the cell tagged ``parameters``)::

    from staleness_lab.notebook_params import check
    check(locals(), {"profile": (str, {"quick", "standard", "full"}), "master": (str, None)})

so ``profile=3`` fails at once with ``NotebookParameterError: profile: notebook parameter must be
of type str (one of 'full', 'quick', 'standard'), got 3 (int)`` instead of deep inside a sweep.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from staleness_lab.errors import InputError

#: name -> (type or tuple of types, allowed values or None for any value of the type)
ParamSpec = Mapping[str, tuple[type | tuple[type, ...], Collection[Any] | None]]


class NotebookParameterError(InputError):
    """A notebook parameter is missing, of the wrong type or not an allowed value; ``field``
    is the parameter's name."""


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _is_instance(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False  # True is not a number or a count here
    if float in kinds and isinstance(value, int):
        return True
    return isinstance(value, kinds)


def check(namespace: Mapping[str, Any], spec: ParamSpec) -> None:
    """Raise :class:`NotebookParameterError` naming the first parameter in ``spec`` that is
    missing from ``namespace`` (a notebook's ``locals()``), not of its type, or not one of its
    allowed values. ``float`` accepts ints; ``bool`` is never taken for ``int`` or ``float``."""
    for name, (kind, allowed) in spec.items():
        listed = "" if allowed is None else ", ".join(repr(v) for v in sorted(allowed, key=repr))
        choices = "" if allowed is None else f" (one of {listed})"
        if name not in namespace:
            raise NotebookParameterError(name, f"notebook parameter is missing: expected {_type_name(kind)}{choices}")
        value = namespace[name]
        if not _is_instance(value, kind):
            raise NotebookParameterError(
                name, f"notebook parameter must be of type {_type_name(kind)}{choices}, got {value!r} ({type(value).__name__})"
            )
        if allowed is not None and value not in allowed:
            raise NotebookParameterError(name, f"notebook parameter must be one of {listed}, got {value!r}")


def repo_file(relative: str | Path) -> Path:
    """The checkout's file at ``relative`` (e.g. ``data/workloads/demo.yaml``): looked up from
    the working directory and its parents (papermill runs a notebook in ``notebooks/``), then
    next to the installed package (an editable install lives in the checkout)."""
    relative = Path(relative)
    here = Path.cwd().resolve()
    package_root = Path(__file__).resolve().parents[1]
    for base in (here, *here.parents, package_root):
        candidate = base / relative
        if candidate.exists():
            return candidate
    raise InputError(str(relative), f"not found from {here} or its parents, nor next to the staleness_lab package")
