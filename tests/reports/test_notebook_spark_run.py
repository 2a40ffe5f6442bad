"""Notebook 05 (the intermittent queries measured on Spark) executed with the quick parameters.

Its run is the suite's longest (about five minutes on 2 cores), so it has a file of its own:
pytest-xdist keeps a file on one worker, and ``tests/conftest.py`` starts this file first, so
the other worker runs the other notebooks meanwhile instead of queueing them behind it.
"""

from __future__ import annotations

import pytest

from notebook_runs import SPARK_NOTEBOOK, check_quick_run


@pytest.mark.heavy(300)
def test_the_spark_notebook_executes_with_quick_parameters() -> None:
    check_quick_run(SPARK_NOTEBOOK)
