"""The batch plan's Gantt chart (:func:`staleness_lab.viz.batch_gantt`): a bar per batch on its
executor and each query's deadline as a dashed line in the query's colour."""

from __future__ import annotations

from staleness_lab import viz
from staleness_lab.intermittent import load_queryset
from staleness_lab.intermittent.schemes import make_plan
from staleness_lab.notebook_params import repo_file


def test_each_deadline_is_a_dashed_line_in_its_querys_colour() -> None:
    plan = make_plan(load_queryset(repo_file("data/intermittent/e5.yaml")), "edf")
    fig = viz.batch_gantt(plan)
    colours = {trace.name: trace.marker.color for trace in fig.data if trace.type == "bar"}
    deadlines = {q.name: float(q.deadline) for q in plan.queryset.queries}
    lines = [(s.x0, s.x1, s.y0, s.y1, s.yref, s.line.dash, s.line.color) for s in fig.layout.shapes]
    assert sorted(lines) == sorted((d, d, 0, 1, "y domain", "dash", colours[name]) for name, d in deadlines.items())
    drawn = {(trace.name, float(b), float(b + x)) for trace in fig.data if trace.type == "bar"
             for b, x in zip(trace.base, trace.x)}
    assert drawn == {(r.query, float(r.start), float(r.end)) for r in plan.batches.itertuples()}
