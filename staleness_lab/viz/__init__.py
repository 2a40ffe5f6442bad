"""Plotly figures from traces and tidy frames (they plot; they compute no results).

``gantt(trace)`` and ``staleness_curves(trace)`` show one run; ``metric_vs_utilization(frame)``
compares policies over a sweep; ``bound_vs_observed(frame, ...)`` sets a theorem's bound beside
what was observed; ``batch_gantt(plan)`` draws an intermittent-query plan with its deadlines.
``schedules_gantt(...)`` stacks schedules of one workload (an engine run beside the exact
optimum) and ``ratio_vs_bound(frame, ...)`` sets a sweep's observed ratios against a bound
(Bateni et al.); ``gap_panels``, ``mode_timeline`` and ``gantt_with_modes`` draw Leontyev et
al.'s Fig. 9 gaps, AUS's recovery stays and a schedule with its modes; ``staleness_with_bounds``
and ``response_with_bounds`` draw A(V_k), t_0 + x_k and Theta_k over what a run shows (unmet
preconditions drawn apart) and
``duel_difference(frame, left, right)`` two schedulers' weighted staleness per table. ``styled(frame, ...)`` is a pandas Styler with every text HTML-escaped (the
one way the notebooks show formatted tables). ``use_offline_renderer()`` makes figures display
without network access, in JupyterLab and in the HTML reports. ``workflow_graph(wf)``,
``cost_over_time(...)``, ``lag_over_time(...)`` and ``scheduler_scaling(...)`` draw Olston's workflows, their
runs and the scheduler's cost against the workflow's size.
"""

from staleness_lab.viz.figures import (
    TEMPLATE,
    bound_vs_observed,
    gantt,
    metric_vs_utilization,
    staleness_curves,
)
from staleness_lab.viz.bateni import ratio_vs_bound, schedules_gantt
from staleness_lab.viz.compare import duel_difference
from staleness_lab.viz.leontyev import (gantt_with_modes, gap_panels, mode_timeline, recovery_intervals,
                                        response_with_bounds, staleness_with_bounds)
from staleness_lab.viz.offline import use_offline_renderer
from staleness_lab.viz.targets import dag_lags, guarantee_curve, lags_vs_bounds, misses_and_excess
from staleness_lab.viz.plans import batch_gantt, category_heatmap, cost_fits, ratio_boxes
from staleness_lab.viz.tables import styled
from staleness_lab.viz.workflows import (
    cost_over_time,
    lag_over_time,
    scheduler_scaling,
    sensitivity_map,
    workflow_graph,
)

__all__ = [
    "TEMPLATE",
    "dag_lags",
    "guarantee_curve",
    "lags_vs_bounds",
    "misses_and_excess",
    "cost_over_time",
    "lag_over_time",
    "scheduler_scaling",
    "sensitivity_map",
    "workflow_graph",
    "batch_gantt",
    "bound_vs_observed",
    "category_heatmap",
    "cost_fits",
    "duel_difference",
    "gantt",
    "gantt_with_modes",
    "gap_panels",
    "metric_vs_utilization",
    "mode_timeline",
    "ratio_boxes",
    "ratio_vs_bound",
    "recovery_intervals",
    "response_with_bounds",
    "schedules_gantt",
    "staleness_curves",
    "staleness_with_bounds",
    "styled",
    "use_offline_renderer",
]
