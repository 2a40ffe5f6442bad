"""Running the ``staleness-lab`` command in-process for the intermittent CLI tests."""

from __future__ import annotations

import pytest

from staleness_lab.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``staleness-lab ARGV`` in-process: (exit status, stdout, stderr); argparse's exit counts."""
    try:
        rc = main(argv)
    except SystemExit as stop:
        rc = stop.code if isinstance(stop.code, int) else 1
    captured = capsys.readouterr()
    return rc, captured.out, captured.err
