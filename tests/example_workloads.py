"""Workloads shared by the model and CLI tests."""

from __future__ import annotations

import copy
from typing import Any

import yaml

#: The two-table example of the foundation issue, exactly as written there.
EXAMPLE_YAML = """\
tracks: 2
horizon: 100
seed: 0
tables:
  - name: a
    period: 10
    phase: 0
    alpha: 1
    beta: 0.1
    priority: 1
  - name: v
    sources: [a]
    alpha: 1
    beta: 0.1
    priority: 1
"""

EXAMPLE: dict[str, Any] = yaml.safe_load(EXAMPLE_YAML)

#: One table of each kind: periodic, replayed with a nominal period, derived.
BASE: dict[str, Any] = {
    "tracks": 2,
    "horizon": 100,
    "seed": 0,
    "tables": [
        {"name": "orders", "period": 10, "phase": 0, "alpha": 1, "beta": 0.1, "priority": 1},
        {
            "name": "clicks",
            "arrivals": [[5, 5], [12, 10], [20, 18]],
            "nominal_period": 8,
            "alpha": 0.5,
            "beta": 0.2,
            "priority": 2,
        },
        {"name": "summary", "sources": ["orders", "clicks"], "alpha": 1, "beta": 0.1, "priority": 1},
    ],
}


def with_entry(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of the workload document ``data`` with the entry at ``path`` (keys and list
    indices, e.g. ``("tables", 0, "budget")``) set to ``value``."""
    out = copy.deepcopy(data)
    target: Any = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out
