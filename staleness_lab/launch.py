"""The ``staleness-lab`` console script: Ctrl-C or SIGTERM while the command line is still loading
(pandas, Spark's client, OR-Tools: seconds on a busy machine) ends it as one during a run does, 130
or 143 with one line on stderr, rather than with an import traceback. This module imports nothing
of the package until its handlers are in place; :func:`staleness_lab.cli.main` takes over after."""

from __future__ import annotations

import signal
import sys
from types import FrameType


class _TerminatedWhileLoading(KeyboardInterrupt):
    """SIGTERM before the command line has loaded."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _TerminatedWhileLoading


def main() -> int:
    """Load :mod:`staleness_lab.cli` with SIGTERM raised like Ctrl-C, then run its ``main`` (which
    installs its own SIGTERM handler, so no instant is left without one)."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        from staleness_lab.cli import main as run
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, _TerminatedWhileLoading)
        sys.stderr.write(f"staleness-lab: {'terminated' if terminated else 'interrupted'}\n")
        return 143 if terminated else 130
    return run()
