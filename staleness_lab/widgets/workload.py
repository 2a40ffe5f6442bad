"""The warehouse controls the schedule explorers share, and the workload they describe.

A workload is edited as its own mapping (:meth:`~staleness_lab.model.Workload.to_dict`) and
parsed again by the model, so every value a student sets is validated by the same rules as a
workload file: a period of 0 comes back as the model's own one-line reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ipywidgets as W

from staleness_lab.api import as_workload
from staleness_lab.errors import InputError
from staleness_lab.model import Workload
from staleness_lab.widgets.base import choice, int_slider, number, slider

#: The warehouse sizes an explorer shows (a Gantt chart of more tables is unreadable in class).
MIN_TABLES, MAX_TABLES = 2, 8
#: The most tracks the slider offers (or the workload's own, if more).
MAX_TRACKS = 8
#: Per-table keys a student may change: (key, applies to derived tables).
TABLE_KEYS = (("period", False), ("alpha", True), ("beta", True), ("priority", True))
#: Update chopping: the workload-wide ``chop`` (periods of data per job; 0 is off).
CHOPS = (("off", 0.0), ("1 period", 1.0), ("2 periods", 2.0), ("4 periods", 4.0))
#: The outage feed's "none" choice: the workload's own outages, unchanged.
NO_OUTAGE = ""


def warehouse(workload: Workload | str | Path | dict[str, Any]) -> Workload:
    """The workload, refused (:class:`InputError`) unless it has 2 to 8 tables."""
    w = as_workload(workload)
    if not MIN_TABLES <= len(w.tables) <= MAX_TABLES:
        raise InputError("tables", f"an explorer shows {MIN_TABLES} to {MAX_TABLES} tables, the workload has {len(w.tables)}")
    return w


def run_controls(w: Workload, horizon: float | None, tracks: int | None) -> dict[str, W.ValueWidget]:
    """``tracks`` and ``horizon``."""
    return {"tracks": int_slider(tracks or w.tracks, 1, max(MAX_TRACKS, w.tracks), "tracks"),
            "horizon": number(float(horizon or w.horizon), "horizon")}


def table_controls(w: Workload) -> dict[str, W.ValueWidget]:
    """``<table>.period`` (periodic feeds), ``<table>.alpha``, ``<table>.beta`` and
    ``<table>.priority``: sliders from 0 (refused by the model where it must be positive) to
    four times the table's value."""
    out: dict[str, W.ValueWidget] = {}
    for table in w.tables:
        for key, derived_too in TABLE_KEYS:
            value = getattr(table, key)
            if value is None or (table.sources is not None and not derived_too):
                continue
            out[f"{table.name}.{key}"] = slider(float(value), 0.0, max(4.0 * float(value), 1.0), f"{table.name}.{key}")
    return out


def outage_controls(w: Workload, horizon: float) -> dict[str, W.ValueWidget]:
    """``outage_feed`` (a base table, or none: the workload's own outages) and ``outage``, the
    interval ``[start, end)`` its files are held back (a range over the horizon)."""
    feeds = [t.name for t in w.tables if t.sources is None]
    return {"outage_feed": choice([("none", NO_OUTAGE), *((f, f) for f in feeds)], NO_OUTAGE, "outage on"),
            "outage": W.FloatRangeSlider(value=(0.3 * horizon, 0.45 * horizon), min=0.0, max=horizon,
                                         step=horizon / 200, description="outage [start, end)",
                                         continuous_update=False, style={"description_width": "initial"},
                                         layout=W.Layout(width="360px"), readout_format=".4g")}


def edited(w: Workload, values: Mapping[str, Any]) -> dict[str, Any]:
    """``w`` as a mapping with the values of the controls present in ``values`` applied: the
    per-table keys, ``chop`` (0: off) and the outage. Parsing it is the model's (bad values are
    refused there)."""
    doc = w.to_dict()
    for k, table in enumerate(w.tables):
        for key, _ in TABLE_KEYS:
            name = f"{table.name}.{key}"
            if name in values:
                doc["tables"][k][key] = values[name]
    if "chop" in values:
        doc["chop"] = values["chop"] or None
    feed = values.get("outage_feed", NO_OUTAGE)
    if feed != NO_OUTAGE:
        start, end = values["outage"]
        doc["tables"][w.index[feed]]["outages"] = [[start, end]]
    return doc


def values_of(controls: Mapping[str, W.ValueWidget]) -> dict[str, Any]:
    """The controls' current values by name."""
    return {name: control.value for name, control in controls.items()}
