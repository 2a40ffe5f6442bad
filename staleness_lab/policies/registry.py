"""Policies by name: what the CLI, papermill parameters and sweep grids carry."""

from __future__ import annotations

from typing import TypeVar

from staleness_lab.errors import InputError
from staleness_lab.policies.base import Policy

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
    """Registered names -> one-line summaries, in registration order."""
    return {name: (cls.__doc__ or "").strip().splitlines()[0] for name, cls in _REGISTRY.items()}


def get_policy(policy: str | Policy) -> Policy:
    """A policy object from a registry name, or the object itself."""
    if not isinstance(policy, str):
        if not hasattr(policy, "bind"):
            raise InputError("policy", "must be a registered name or an object with a bind(workload, rng) method")
        return policy
    try:
        return _REGISTRY[policy]()
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise InputError("policy", f"unknown policy {policy!r} (known: {known})") from None
