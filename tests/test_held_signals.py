"""signals_held: SIGINT and SIGTERM wait for the end of the block, whichever thread takes them;
wait and communicate: a wait for a child ends at a SIGINT, whichever thread takes it."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

from staleness_lab.held_signals import communicate, signals_held, wait


@pytest.fixture
def other_thread() -> Iterator[None]:
    """A thread that does not block signals, as OpenBLAS's and Arrow's workers do not: the kernel
    may hand it a signal sent to the process."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait, daemon=True)
    thread.start()
    yield
    done.set()
    thread.join()


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """SIGINT at Python's own handler for the test (a Spark session started earlier in this
    process leaves its own installed), the handler before put back after it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


#: How long a test waits for a signal it sent to be taken (a busy machine may be slow to run the
#: thread the kernel handed it to); the wait ends as soon as it is.
TAKEN_WITHIN_S = 10.0


def taken(came: list[int]) -> None:
    """Return once ``came`` records a signal (Python acts on one between instructions, once the
    thread that received it has run), or after :data:`TAKEN_WITHIN_S`."""
    deadline = time.monotonic() + TAKEN_WITHIN_S
    while not came and time.monotonic() < deadline:
        pass


def test_sigint_sent_to_the_process_waits_for_the_end_of_the_block(other_thread: None, python_sigint: None) -> None:
    steps: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with signals_held() as came:
            os.kill(os.getpid(), signal.SIGINT)
            taken(came)
            steps.append("the block ended")
    assert steps == ["the block ended"] and came == [signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_reaches_its_own_handler_after_the_block(other_thread: None) -> None:
    handled: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: handled.append(signum))
    try:
        with signals_held() as came:
            os.kill(os.getpid(), signal.SIGTERM)
            taken(came)
            assert handled == [] and came == [signal.SIGTERM]
        assert handled == [signal.SIGTERM]  # raise_signal runs the handler before it returns
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_without_delivery_the_signals_are_only_recorded(other_thread: None, python_sigint: None) -> None:
    with signals_held(deliver_after=False) as came:
        os.kill(os.getpid(), signal.SIGINT)
        taken(came)
    assert came == [signal.SIGINT]  # and no KeyboardInterrupt after the block


def test_an_ignored_signal_stays_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals_held() as came:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # a signal that were taken would be recorded by now; none is
        assert came == [] and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("waiting", [wait, communicate])
def test_a_sigint_another_thread_takes_ends_the_wait_for_a_child(waiting: object, python_sigint: None) -> None:
    """The signal is sent to a second thread itself while the main thread waits for a child that
    would run 60 s: one blocking ``waitpid`` (or ``poll``) is not interrupted by it, so the
    KeyboardInterrupt came only when the child had ended."""
    child = subprocess.Popen(["sleep", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT))
    try:
        with pytest.raises(KeyboardInterrupt):
            timer.start()
            waiting(child)  # type: ignore[operator]
        assert child.poll() is None  # the wait ended, not the child
    finally:
        timer.join()
        child.kill()
        child.communicate()
