"""Workloads shared by the model and CLI tests."""

from __future__ import annotations

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
