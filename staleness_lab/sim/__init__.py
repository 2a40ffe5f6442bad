"""The discrete-event engine, the trace it records and exact metrics on traces."""

from staleness_lab.sim.engine import run
from staleness_lab.sim.metrics import (
    relative_lateness,
    table_metrics,
    total_weighted_staleness,
    track_utilization,
)
from staleness_lab.sim.trace import Trace

__all__ = ["Trace", "relative_lateness", "run", "table_metrics", "total_weighted_staleness", "track_utilization"]
