"""``staleness-lab teach`` as a real process: a bad or busy port and a bad address are one line
and exit status 2 before Voila starts; another address than loopback is served with a one-line
warning; Ctrl-C (SIGINT to the group) ends it with 130 and its kernels' server with it. The page
itself, in a browser, is ``tests/widgets/test_teach_browser.py``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import urllib.request
from pathlib import Path

import pytest

from staleness_lab.teach import serve, teaching_dir
from tests.cli_signals import survivors
from tests.teach_browser import COMMAND, free_port, teach_server


def teach(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, "teach", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("args", "message"), [
    (["--port", "0"], "--port: must be a whole number from 1 to 65535, got '0'"),
    (["--port", "65536"], "--port: must be a whole number from 1 to 65535, got '65536'"),
    (["--port", "80a"], "--port: must be a whole number from 1 to 65535, got '80a'"),
    (["--ip", "class-room"], "--ip: must be an IP address such as 127.0.0.1 or 0.0.0.0, got 'class-room'"),
    (["--ip", "192.0.2.1", "--port", "18866"], "--ip: cannot listen on 192.0.2.1: Cannot assign requested address"),
])
def test_bad_input_is_one_line_and_status_2(args: list[str], message: str) -> None:
    proc = teach(*args)
    assert proc.returncode == 2
    assert proc.stderr == f"staleness-lab: error: {message}\n" and proc.stdout == ""


def test_a_busy_port_is_refused_rather_than_moved() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = teach("--port", str(port))
    assert proc.returncode == 2
    assert proc.stderr == f"staleness-lab: error: --port: {port} is already in use on 127.0.0.1; give a free one\n"


def test_another_address_warns_in_one_line_and_ctrl_c_stops_it(tmp_path: Path) -> None:
    with teach_server(tmp_path / "teach.log", ip="0.0.0.0", stop=signal.SIGINT) as served:
        with urllib.request.urlopen(served.url, timeout=30) as page:
            assert page.status == 200 and b"voila" in page.read().lower()
        log = served.log.read_text()
    warnings = [line for line in log.splitlines() if "warning" in line]
    assert warnings == [f"staleness-lab: warning: --ip 0.0.0.0 is not loopback: anyone who can reach this machine "
                        f"on that network can open http://0.0.0.0:{served.url.rsplit(':', 1)[1]} and run the notebooks"]
    assert served.returncode == 130 and served.log.read_text().endswith("staleness-lab: interrupted\n")
    assert served.spawned and not served.survivors


def test_a_signal_while_voila_starts_leaves_no_server_running() -> None:
    """A Ctrl-C that lands at any instant of ``serve`` (before, during or after Voila is started)
    ends with no Voila left running: without the start held, one that came while ``Popen`` was
    still starting the server raised before ``serve`` had a handle to stop it by. SIGINT is sent
    from a second thread at delays spread over the start (a few milliseconds)."""
    port = free_port()
    teaching_dir()  # its lazy imports done first: a signal inside an import leaves the module half-made
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal gives it
    try:
        for k in range(60):
            _interrupted_serve(port, threading.Timer(k * 1e-4, os.kill, (os.getpid(), signal.SIGINT)))
            assert not survivors(f"voila .*--port={port}"), f"a Voila server still runs after a Ctrl-C at {k * 1e-4:.4f} s"
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_sigint_another_thread_receives_still_stops_serve() -> None:
    """A process-directed signal goes to any thread that does not block it; Python then runs its
    handler in the main thread, but only once the main thread runs Python code again. ``serve``
    waited for Voila in one blocking ``waitpid``, which a signal taken by another thread does not
    interrupt: the Ctrl-C was acted on only when Voila ended by itself (the signal test above hung
    so in about one fresh clone in five, with the suite's other threads about). Here the signal is
    sent to a second thread itself, once ``serve`` is waiting."""
    port = free_port()
    teaching_dir()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        to_itself = threading.Timer(1.0, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT))
        resent = _interrupted_serve(port, to_itself)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not resent, "serve went on waiting for Voila after a SIGINT another thread received"
    assert not survivors(f"voila .*--port={port}")


def _interrupted_serve(port: int, signal_timer: threading.Timer) -> bool:
    """``serve`` on ``port``, ``signal_timer`` started as it begins, ended by KeyboardInterrupt;
    whether the watchdog had to send SIGINT again after :data:`LOST_SIGNAL_AFTER_S`."""
    returned, resent = threading.Event(), []
    watchdog = threading.Thread(target=lambda: resent.append(_interrupt_unless(returned, LOST_SIGNAL_AFTER_S)),
                                daemon=True)
    watchdog.start()  # before the signal's timer, which could otherwise interrupt its start
    with pytest.raises(KeyboardInterrupt):
        try:
            signal_timer.start()
            serve(port=port)
        finally:
            returned.set()
    signal_timer.join()
    watchdog.join()
    return resent[0]


#: How long the signal tests wait for ``serve`` to end before they send SIGINT again. One fresh
#: clone in four or five hung in ``test_a_signal_while_voila_starts_leaves_no_server_running``
#: before ``serve`` waited in slices: the SIGINT had gone to another of the suite's threads, and
#: ``serve`` went on waiting for Voila (``test_a_sigint_another_thread_receives_still_stops_serve``
#: reproduces that). Sent again, the test goes on to check what it is for, that no server is left.
LOST_SIGNAL_AFTER_S = 20.0


def _interrupt_unless(returned: threading.Event, seconds: float) -> bool:
    """SIGINT to this process, once, unless ``returned`` is set within ``seconds``; whether it
    was sent."""
    if returned.wait(seconds):
        return False
    os.kill(os.getpid(), signal.SIGINT)
    return True
