"""The ground truth a data-mode run is checked against: a channel's relation at a provenance,
recomputed from the input snapshots by the batch variants alone (no deltas, no converters).

Defined where every element of the provenance is one snapshot time; an element with several
times (an asynchronous mix) or none (the other side of an asynchronous union) has no batch
equivalent, and opaque operators (the crawl selectors) depend on the instant they run.
"""

from __future__ import annotations

import pandas as pd

from staleness_lab.workflows import rows, weak
from staleness_lab.workflows.input_frames import InputFrames
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.pandas_rows import PANDAS
from staleness_lab.workflows.provenance import Layout, Provenance
from staleness_lab.workflows.registry import FUNCTIONS


def batch_relation(workflow: Workflow, layouts: dict[str, Layout], frames: InputFrames,
                   times: dict[str, tuple[float, ...]], channel: str, p: Provenance) -> pd.DataFrame | None:
    """``channel`` at ``p`` by the batch variants; None where undefined (module docstring)."""
    if any(len(e) != 1 for e in p):
        return None
    if channel in times:
        (t,) = p[0]
        return frames.base(channel, times[channel].index(t))
    (op,) = [o for o in workflow.operators if channel in o.outputs]
    if op.widget == "opaque":
        return None
    parts, start = [], 0
    for name in op.inputs:
        width = len(layouts[name])
        part = batch_relation(workflow, layouts, frames, times, name, p[start:start + width])
        if part is None:
            return None
        parts.append(part)
        start += width
    if op.widget == "stateless":
        return FUNCTIONS[op.fn](parts[0]).reset_index(drop=True)
    if op.widget == "split":
        keep = FUNCTIONS[op.fn](parts[0]).to_numpy(dtype=bool)
        return parts[0][keep if op.outputs.index(channel) == 0 else ~keep].reset_index(drop=True)
    if op.widget == "join":
        return PANDAS.join(parts[0], parts[1], op.on)
    if op.widget == "union":
        return rows.union(parts[0], parts[1])
    if op.widget == "count":
        return weak.count(parts[0], op.key, "n")
    if op.widget == "distinct":
        return weak.distinct(parts[0], op.key)
    raise AssertionError(f"no batch variant for widget {op.widget!r}")
