"""SIGINT and SIGTERM held back while a short block runs, whichever thread the kernel picks."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

HELD = (signal.SIGINT, signal.SIGTERM)


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
