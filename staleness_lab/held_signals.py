"""SIGINT and SIGTERM held back while a short block runs, whichever thread the kernel picks, and
waits for a child process that such a signal interrupts, whichever thread took it."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

HELD = (signal.SIGINT, signal.SIGTERM)
_T = TypeVar("_T")
#: The longest a wait for a child blocks before the main thread runs Python code again.
WAIT_SLICE_S = 0.1


@contextlib.contextmanager
def signals_held(*, deliver_after: bool = True) -> Iterator[list[int]]:
    """Inside the block SIGINT and SIGTERM are recorded, not acted on; the list of those that came.

    The handlers are swapped, not the signal mask: a process-directed signal goes to any thread
    that does not block it (OpenBLAS and Arrow keep worker threads), and Python then runs its
    handler in the main thread regardless of the main thread's mask, so ``pthread_sigmask`` held
    nothing once such threads existed. After the block the handlers are restored and, with
    ``deliver_after``, each recorded signal is raised again, so its own handler acts on it then.
    A signal ignored before stays ignored. Off the main thread Python runs no handlers, and the
    block runs as it is."""
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield came
        return
    previous = {sig: signal.getsignal(sig) for sig in HELD}
    for sig, handler in previous.items():
        if handler not in (signal.SIG_IGN, None):
            signal.signal(sig, lambda signum, frame: came.append(signum))
    try:
        yield came
    finally:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)
        if deliver_after:
            for sig in dict.fromkeys(came):
                signal.raise_signal(sig)


def wait(child: subprocess.Popen[Any]) -> int:
    """The child's exit status, waited for in slices of at most :data:`WAIT_SLICE_S`.

    A process-directed signal goes to any thread that does not block it, and Python runs its
    handler in the main thread only when that thread runs Python code again. One blocking
    ``waitpid`` is not interrupted by a signal another thread took, so a Ctrl-C waited until
    the child ended by itself; between slices the handler runs (and its exception is raised)."""
    return _in_slices(child.wait)


def communicate(child: subprocess.Popen[Any]) -> tuple[Any, Any]:
    """``child.communicate()`` in slices, as :func:`wait` (retrying after a timeout loses no
    output)."""
    return _in_slices(child.communicate)


def _in_slices(step: Callable[..., _T]) -> _T:
    """``step(timeout=WAIT_SLICE_S)`` until it returns without timing out."""
    while True:
        try:
            return step(timeout=WAIT_SLICE_S)
        except subprocess.TimeoutExpired:
            continue
