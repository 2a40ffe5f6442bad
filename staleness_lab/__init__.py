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

from importlib import import_module

#: Where each public name lives; imported on first use (PEP 562), so that importing the package,
#: as the console script does before it can handle Ctrl-C, loads neither pandas nor OR-Tools.
_PUBLIC = {
    "BudgetResult": "staleness_lab.lag_budget",
    "CheckReport": "staleness_lab.api",
    "Duel": "staleness_lab.api",
    "InputError": "staleness_lab.errors",
    "SimulationResult": "staleness_lab.api",
    "Slowdown": "staleness_lab.model",
    "Table": "staleness_lab.model",
    "Workload": "staleness_lab.model",
    "available_policies": "staleness_lab.policies",
    "budget": "staleness_lab.lag_budget",
    "check": "staleness_lab.api",
    "duel": "staleness_lab.api",
    "explain": "staleness_lab.lag_explain",
    "get_policy": "staleness_lab.policies",
    "load_workload": "staleness_lab.model",
    "optimum": "staleness_lab.optimize.staleness_optimum",
    "parse_workload": "staleness_lab.model",
    "simulate": "staleness_lab.api",
}

__all__ = sorted([*_PUBLIC, "__version__"])


def __getattr__(name: str) -> object:
    """A public name (:data:`_PUBLIC`), imported from its module on first use and kept."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
