"""Teaching explorers: ipywidgets panels over the public API and ``viz`` (they compute nothing).

Each explorer is a class whose ``.widget`` is the box to display, ``.controls`` its ipywidgets by
name, ``.summary`` / ``.figures`` what is shown now and ``.reason`` why the last change could not
be drawn (None when it was), so Python drives it exactly as a student does::

    from staleness_lab.widgets import ScheduleExplorer
    ex = ScheduleExplorer("data/workloads/demo.yaml", horizon=1000)
    ex.controls["tracks"].value = 2
    ex.controls["policy"].value = "edf-p"
    ex.summary   # == sl.simulate(workload, "edf-p", tracks=2, horizon=1000).summary()

:class:`ScheduleExplorer` (one warehouse, one scheduler), :class:`SchedulerDuel` (two schedulers,
common random numbers), :class:`BoundExplorer` (AUS / GEDF-NP with Leontyev et al.'s bounds) and
:class:`BatchPlanExplorer` (intermittent queries against deadlines); :func:`check_answer` marks
a teaching notebook's exercise against a value computed when it is checked. Nothing below this package
imports it (``tests/test_layering.py``).
"""

from staleness_lab.widgets.bounds import BoundExplorer
from staleness_lab.widgets.duel import SchedulerDuel
from staleness_lab.widgets.exercises import check_answer
from staleness_lab.widgets.plans import BatchPlanExplorer
from staleness_lab.widgets.schedule import ScheduleExplorer

__all__ = ["BatchPlanExplorer", "BoundExplorer", "ScheduleExplorer", "SchedulerDuel", "check_answer"]
