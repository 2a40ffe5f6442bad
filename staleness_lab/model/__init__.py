"""Immutable, validated workload descriptions and their YAML/JSON I/O."""

from staleness_lab.model.io import dump_workload, load_workload, parse_workload
from staleness_lab.model.table import DERIVED, PERIODIC, REPLAYED, Table
from staleness_lab.model.workload import Slowdown, Workload

__all__ = [
    "DERIVED", "PERIODIC", "REPLAYED", "Slowdown", "Table", "Workload",
    "dump_workload", "load_workload", "parse_workload",
]
