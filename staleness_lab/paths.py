"""Where the project's files live by default.

:func:`data_root` is the parent of ``data/``, under which the sweeps' cache and results, the
TPC-H data, the cost models, the workflow warehouse and the Spark runs go. Every layer that
writes there asks this module (read at call time where a test or a notebook may repoint it).
"""

from __future__ import annotations

from pathlib import Path

from staleness_lab.provenance import project_root


def data_root() -> Path:
    """Where ``data/`` lives by default: the checkout's root, else the working directory."""
    return project_root() or Path.cwd()
