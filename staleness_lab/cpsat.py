"""Running CP-SAT under the command line's rules: a bounded number of workers, and a solve that
Ctrl-C and SIGTERM stop at once.

Both CP-SAT entry points (``plan --scheme optimal``, :mod:`staleness_lab.optimize.batch_plan`;
``optimum``, :mod:`staleness_lab.optimize.staleness_optimum`) go through here. This module does
not import OR-Tools: the solver and the model are handed to :func:`solve`.

**Workers.** :func:`check_workers`: an integer from 1 to :data:`MAX_WORKERS` (64). CP-SAT runs
one thread per worker; thousands of them end in an error from inside the solver (a traceback),
and past the machine's cores they only compete for it.

**Signals.** Left to itself, CP-SAT catches SIGINT during a solve (its parameter
``catch_sigint_signal``, on by default) and ends the search as if the time limit had passed, so
Ctrl-C gave an unproven plan with exit status 0; and a Python signal handler (the command line's
SIGTERM, raised as :class:`KeyboardInterrupt`) cannot run while the main thread is inside the
solver, so SIGTERM waited for the time limit. :func:`solve` turns CP-SAT's own catching off and
keeps the solve on the main thread; the interpreter's wakeup file descriptor
(:func:`signal.set_wakeup_fd`) receives every signal at once, even while the main thread is in
the solver, and a watcher thread reading it calls ``stop_search``. The solver returns (within a
few seconds on a large model; CP-SAT checks its stop flag between steps), the Python handler then
runs as usual, and its exception goes on to the command line (exit 130 or 143, one line,
temporary files removed). The solver's threads are all joined before it returns, so nothing of
it is left running at exit (a solve on a helper thread, tried first, could abort the process at
exit with "terminate called without an active exception").
"""

from __future__ import annotations

import os
import select
import signal
import threading
from typing import Any

from staleness_lab.errors import InputError, shown

#: The most CP-SAT workers (threads) a solve may ask for.
MAX_WORKERS = 64


def check_workers(workers: Any, field: str = "workers") -> int:
    """``workers`` if it is an integer from 1 to :data:`MAX_WORKERS`, else an
    :class:`InputError` naming ``field`` and the rule."""
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise InputError(field, f"must be an integer from 1 to {MAX_WORKERS} (CP-SAT worker threads), "
                                f"got {shown(workers)}")
    return workers


def solve(solver: Any, model: Any) -> int:
    """``solver.solve(model)`` (a ``cp_model.CpSolver`` and ``cp_model.CpModel``), stopped at
    once by a signal that has a Python handler (Ctrl-C; the command line's SIGTERM): the search
    stops and, as soon as the solver returns, the handler raises as usual (module docstring).
    Returns the solve's status. Off the main thread (where no signal handler runs) it is a plain
    solve, without CP-SAT's own SIGINT catching either."""
    solver.parameters.catch_sigint_signal = False
    if threading.current_thread() is not threading.main_thread():
        return int(solver.solve(model))
    signalled, wakeup = os.pipe()  # the interpreter writes every signal's number here, even in C++
    done, finished = os.pipe()
    for fd in (signalled, wakeup, done, finished):
        os.set_blocking(fd, False)
    previous = signal.set_wakeup_fd(wakeup, warn_on_full_buffer=False)
    watcher = threading.Thread(target=_watch, args=(solver, signalled, done), name="cp-sat-stop", daemon=True)
    watcher.start()
    try:
        return int(solver.solve(model))
    finally:
        os.write(finished, b"x")  # first: should the handler raise in this block, the watcher still ends
        signal.set_wakeup_fd(previous)
        watcher.join()
        for fd in (signalled, wakeup, done, finished):
            os.close(fd)


#: The signals that stop a solve (others that have a Python handler leave it running).
STOPPING = frozenset({signal.SIGINT, signal.SIGTERM})


def _watch(solver: Any, signalled: int, done: int) -> None:
    """Wait for SIGINT or SIGTERM (:data:`STOPPING`) or for the solve's end; on the signal,
    stop the search."""
    while True:
        ready, _, _ = select.select([signalled, done], [], [])
        if done in ready:
            return
        try:
            numbers = os.read(signalled, 64)
        except BlockingIOError:
            continue
        if any(number in STOPPING for number in numbers):
            solver.stop_search()
            return
