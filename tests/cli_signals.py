"""Stopping a command-line process with a signal in a test: the exit every command owes Ctrl-C
and SIGTERM (130 / 143, one line on stderr, nothing on stdout), and no process left behind when
a test fails half-way."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: The exit status and the one stderr line of a command stopped by each signal.
STOPS = {signal.SIGINT: (130, "staleness-lab: interrupted"), signal.SIGTERM: (143, "staleness-lab: terminated")}


def survivors(pattern: str) -> str:
    """The pids (one per line) of the processes whose command line matches ``pattern``, each
    killed, so none outlives the test that asserts there are none."""
    left = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    if left:
        subprocess.run(["pkill", "-KILL", "-f", pattern])
    return left


@contextmanager
def ended(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """``proc`` for the block, killed (and reaped) at its end if it is still running."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def paused(proc: subprocess.Popen[str], timeout: float = 10.0) -> None:
    """Stop ``proc`` with SIGSTOP and return once the kernel shows it stopped (state ``T``), so
    that what the test then sees on disk is where the process stands; :func:`stopped_by` with
    ``resume=True`` continues it after its signal."""
    proc.send_signal(signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    stat = Path(f"/proc/{proc.pid}/stat")
    while stat.read_text().rpartition(")")[2].split()[0] not in ("T", "t"):
        assert time.monotonic() < deadline, "the process did not stop"
        time.sleep(0.001)


def stopped_by(proc: subprocess.Popen[str], sig: signal.Signals, timeout: float, *, resume: bool = False) -> float:
    """Send ``sig`` to ``proc`` (then SIGCONT, if ``resume``: a :func:`paused` process gets the
    signal as its first act) and wait up to ``timeout`` seconds for its end; assert the exit
    :data:`STOPS` names, exactly, with nothing on stdout. Returns the seconds from the signal
    to the end."""
    proc.send_signal(sig)
    if resume:
        proc.send_signal(signal.SIGCONT)
    signalled = time.monotonic()
    stdout, stderr = proc.communicate(timeout=timeout)
    stopped = time.monotonic() - signalled
    code, message = STOPS[sig]
    assert (proc.returncode, stderr, stdout) == (code, message + "\n", ""), stderr[-3000:]
    return stopped
