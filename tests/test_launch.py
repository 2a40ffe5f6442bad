"""The console script's loading phase: Ctrl-C or SIGTERM while ``staleness_lab.cli`` is still being
imported exits 130 / 143 with one line, like a signal during a run (tests/test_hostile_inputs.py,
section (m)), instead of an import traceback; and importing the package itself is light."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from cli_signals import ended, stopped_by

#: A child that runs :func:`staleness_lab.launch.main` with the import of ``staleness_lab.cli``
#: held open (a finder that says "loading" and then sleeps), so the signal lands mid-import.
CHILD = """
import sys, time
class Slow:
    def find_spec(self, name, path=None, target=None):
        if name == "staleness_lab.cli":
            print("loading", flush=True)
            time.sleep(60)
        return None
sys.meta_path.insert(0, Slow())
from staleness_lab.launch import main
raise SystemExit(main())
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_command_line_loads_is_one_line(sig: signal.Signals) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with ended(child) as proc:
        assert proc.stdout is not None and proc.stdout.readline() == "loading\n"
        stopped_by(proc, sig, 60)


def test_importing_the_package_loads_no_pandas_until_a_name_is_used() -> None:
    code = ("import sys, staleness_lab as sl; before = 'pandas' in sys.modules; sl.simulate; "
            "print(before, 'pandas' in sys.modules, sorted(sl.__all__) == sorted(dir(sl)) or set(sl.__all__) <= set(dir(sl)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]
