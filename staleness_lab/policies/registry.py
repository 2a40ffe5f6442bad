"""Policies by name: what the CLI, papermill parameters and sweep grids carry."""

from __future__ import annotations

from typing import Any, TypeVar

from staleness_lab.errors import InputError
from staleness_lab.policies.base import Policy
from staleness_lab.policies.options import Option

_REGISTRY: dict[str, type] = {}

P = TypeVar("P", bound=type)


def register(cls: P) -> P:
    """Class decorator: make a policy available under its ``name``."""
    name = cls.name  # type: ignore[attr-defined]
    if name in _REGISTRY:
        raise ValueError(f"policy {name!r} registered twice")
    _REGISTRY[name] = cls
    return cls


def available_policies() -> dict[str, str]:
    """Registered names -> their docstring's first paragraph on one line, in registration order."""
    return {name: " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split()) for name, cls in _REGISTRY.items()}


def policy_options(name: str) -> tuple[Option, ...]:
    """The options a registered policy takes."""
    return getattr(_policy_class(name), "OPTIONS", ())


def get_policy(policy: str | Policy, **options: Any) -> Policy:
    """A policy object from a registry name and its options, or the object itself."""
    if not isinstance(policy, str):
        if not hasattr(policy, "bind"):
            raise InputError("policy", "must be a registered name or an object with a bind(workload, rng) method")
        if options:
            raise InputError("options", "options go with a policy name; configure a policy object directly")
        return policy
    return _policy_class(policy)(**options)


def parse_options(name: str, pairs: list[str]) -> dict[str, Any]:
    """``["k=1", "aggressive=true"]`` from the command line -> typed options of policy ``name``."""
    declared = {o.name: o for o in policy_options(name)}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError("--option", f"expects key=value, got {pair!r}")
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise InputError(f"--option {key}", f"policy {name!r} has no option {key!r} (options: {known})")
        out[key] = declared[key].parse(text, f"--option {key}")
    return out


def _policy_class(name: str) -> type:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise InputError("policy", f"unknown policy {name!r} (known: {known})") from None
