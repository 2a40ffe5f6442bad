"""The registry of check suites: every paper's claims, run on one trace by ``staleness-lab check``.

A suite is a function of a :class:`CheckContext` (the workload as given, the trace to judge,
the policy and its options) returning :class:`~staleness_lab.theory.records.CheckRecord` s. It
never simulates: :func:`staleness_lab.api.check` runs the policy (a drained run where the feeds
are finite) and hands the trace to every registered suite, which reports each claim with its
preconditions, so a suite runs on any workload and policy and says where its theorems apply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from staleness_lab.model import Workload
from staleness_lab.sim.trace import Trace
from staleness_lab.theory.records import CheckRecord

#: Modules whose import registers a suite (one per paper).
SUITE_MODULES = ("staleness_lab.theory.bateni.suite", "staleness_lab.theory.leontyev.suite")


@dataclass(frozen=True)
class CheckContext:
    """What a suite judges: ``workload`` as given, ``trace`` (of the drained run when
    ``drained``; ``drain_reason`` says why not), the ``policy`` name and its ``options``."""

    workload: Workload
    trace: Trace
    policy: str
    options: dict[str, Any] = field(default_factory=dict)
    drained: bool = False
    drain_reason: str | None = None


Suite = Callable[[CheckContext], list[CheckRecord]]
_SUITES: dict[str, Suite] = {}


def register_suite(name: str) -> Callable[[Suite], Suite]:
    """Decorator: register a paper's suite under ``name``."""

    def add(suite: Suite) -> Suite:
        if name in _SUITES:
            raise ValueError(f"suite {name!r} registered twice")
        _SUITES[name] = suite
        return suite

    return add


def suites() -> dict[str, Suite]:
    """Every registered suite by name (importing the paper modules on first use)."""
    for module in SUITE_MODULES:
        import_module(module)
    return dict(_SUITES)


def run_suites(context: CheckContext) -> list[CheckRecord]:
    """Every suite's records on one context, in registration order."""
    return [record for suite in suites().values() for record in suite(context)]
