"""``make teach`` end to end: the Makefile's target (its ``setup`` step, then ``staleness-lab
teach``) started as a lecturer starts it, in a process group of its own, on a free port through
``TEACH_PORT``; it answers on loopback and serves a teaching notebook (Voila runs it in a kernel
of its own), and stopping the group leaves no process behind: not make, not the command, not
Voila, not the kernel.

The setup step is cheap when the checkout's ``.venv`` is current (``scripts/setup.sh``
reinstalls only when ``pyproject.toml`` is newer than ``.venv/.installed``), as it is wherever
``make test`` ran; where it is not, the test is skipped rather than reinstalling everything.
"""

from __future__ import annotations

import shutil
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.teach_browser import PAGE_TIMEOUT_MS, teach_server

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "01-what-is-staleness"


def setup_is_current() -> str | None:
    """Why ``make setup`` would do more than check (None when it would only check)."""
    venv = ROOT / ".venv"
    if shutil.which("make") is None:
        return "make is not installed"
    if Path(sys.prefix).resolve() != venv.resolve():
        return f"the tests do not run in the checkout's .venv ({sys.prefix})"
    stamp = venv / ".installed"
    if not stamp.is_file() or (ROOT / "pyproject.toml").stat().st_mtime > stamp.stat().st_mtime:
        return ".venv is older than pyproject.toml: make setup would reinstall"
    return None


def test_make_teach_serves_the_notebooks_and_stops_with_its_process_group(tmp_path: Path) -> None:
    why = setup_is_current()
    if why is not None:
        pytest.skip(why)
    log = tmp_path / "make-teach.log"
    with teach_server(log, command=lambda port: ["make", "--no-print-directory", "-C", str(ROOT), "teach",
                                                 f"TEACH_PORT={port}"]) as served:
        with urllib.request.urlopen(f"{served.url}voila/render/{NOTEBOOK}.ipynb", timeout=PAGE_TIMEOUT_MS / 1000) as page:
            rendered = page.read().decode()
        served.note_processes()  # make, the command, Voila and the notebook's kernel
        commands = {pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    for pid in served.spawned}
    text = log.read_text(errors="replace")
    assert "setup: ready" in text and "setup: installing" not in text  # setup only checked
    assert f"serving teaching/ at {served.url}" in text
    assert "What is staleness?" in rendered and "check_answer(" not in rendered  # run, code cells hidden
    assert any("voila" in c for c in commands.values()) and any("ipykernel" in c for c in commands.values())
    assert not served.survivors, {pid: commands.get(pid) for pid in served.survivors}
