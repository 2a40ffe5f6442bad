"""staleness-lab: a research workbench for scheduling updates in streaming data warehouses.

The short path from a notebook::

    import staleness_lab as sl
    w = sl.load_workload("data/workloads/demo.yaml")
    result = sl.simulate(w, "max-benefit")
    result.tables          # per-table staleness metrics (tidy DataFrame)
    result.jobs            # one row per completed update job
"""

from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("staleness-lab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

from staleness_lab.errors import InputError
from staleness_lab.model import Slowdown, Table, Workload, load_workload, parse_workload
from staleness_lab.api import CheckReport, SimulationResult, check, simulate
from staleness_lab.policies import available_policies, get_policy

__all__ = [
    "CheckReport",
    "InputError",
    "SimulationResult",
    "Slowdown",
    "Table",
    "Workload",
    "__version__",
    "available_policies",
    "check",
    "get_policy",
    "load_workload",
    "optimum",
    "parse_workload",
    "simulate",
]


def __getattr__(name: str) -> object:
    """``optimum`` (:func:`staleness_lab.optimize.staleness_optimum.optimum`) is imported on first
    use, so importing the package does not load OR-Tools."""
    if name == "optimum":
        from staleness_lab.optimize.staleness_optimum import optimum

        return optimum
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
