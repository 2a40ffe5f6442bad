"""The discrete-event engine, the trace it records, exact metrics on traces and the
unlimited-track run of relative lateness in closed form."""

from staleness_lab.sim.engine import run
from staleness_lab.sim.ideal import IdealSummary, ideal_run, ideal_summary
from staleness_lab.sim.metrics import (
    relative_lateness,
    table_metrics,
    total_weighted_staleness,
    track_utilization,
)
from staleness_lab.sim.targets import target_metrics
from staleness_lab.sim.trace import Trace

__all__ = [
    "IdealSummary", "Trace", "ideal_run", "ideal_summary", "relative_lateness", "run", "table_metrics",
    "target_metrics", "total_weighted_staleness", "track_utilization",
]
