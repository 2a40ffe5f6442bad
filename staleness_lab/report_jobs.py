"""Running the report's notebooks several at a time (``staleness-lab report --jobs N``).

Each notebook runs in its own kernel, as now: jupyter_client starts every kernel in a session
(process group) of its own, so each has its own embedded Spark driver, and the JVM and Python
workers Spark starts share the kernel's group. :func:`run_jobs` hands the notebooks to ``jobs``
worker threads, longest first (:func:`longest_first`: the longest-processing-time rule, so the
longest notebook does not start last and run alone); the calling thread keeps the command's
signal handlers (nbclient's own go on the event loop of the thread that runs it, and only the
main thread's loop may take them) and waits for the results.

Stopping. When the waiting thread is interrupted (Ctrl-C; SIGTERM, which the command line raises
as an interrupt) or a notebook raises what ends the command (a bad notebook parameter), the
cancel event is set, so no worker starts another notebook or writes a page; every running
kernel's process group gets SIGINT (a cell raises ``KeyboardInterrupt``, its ``finally`` blocks
and temporary directories clean up, nbclient shuts the kernel down), SIGKILL for those still
alive :data:`GRACE_S` seconds later; the workers are waited for and the interruption or error
goes on to the caller. A second signal during that cleanup is held until it is done.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from staleness_lab.held_signals import signals_held

Item = TypeVar("Item")
Result = TypeVar("Result")

#: Seconds between the interrupt sent to the running kernels and SIGKILL for those still alive.
GRACE_S = 10.0
#: Seconds to wait for the workers once their kernels are killed.
KILLED_WAIT_S = 60.0
#: How often the waiting thread wakes up (a signal interrupts it at once anyway).
POLL_S = 0.5
#: Notebooks rendered at once by default at most: each kernel's Spark driver may take a quarter
#: of the memory (:func:`staleness_lab.spark.session.driver_memory_for`), so three leave a quarter
#: for everything else.
MAX_DEFAULT_JOBS = 3


class Cancelled(Exception):  # noqa: N818 - a state, not an error
    """A notebook's run was stopped by :func:`run_jobs`'s cancel event: it leaves no page."""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def default_jobs() -> int:
    """Notebooks at once by default: one per usable core, at most :data:`MAX_DEFAULT_JOBS`
    (each notebook's sweeps already use every core through Spark, but its kernel spends much
    of its time in one Python thread, and its Spark jobs wait on one driver)."""
    return min(usable_cores(), MAX_DEFAULT_JOBS)


def longest_first(items: list[Item], seconds: Callable[[Item], float]) -> list[Item]:
    """``items`` by expected ``seconds``, longest first; ties keep their order."""
    return sorted(items, key=lambda item: -seconds(item))


# --- the kernels started by the reports ---------------------------------------------------------

_kernels: weakref.WeakSet[Any] = weakref.WeakSet()
_kernels_lock = threading.Lock()


def track_kernel(manager: Any) -> None:
    """Remember a kernel manager (called from its constructor) so :func:`run_jobs` can stop its
    kernel."""
    with _kernels_lock:
        _kernels.add(manager)


def _running_kernel_groups() -> set[int]:
    """The process groups of the tracked kernels still running (jupyter_client's local
    provisioner starts each kernel as the leader of a new session and keeps its ``Popen``). A
    kernel not yet reaped keeps its pid, and a group's id is not reused while any of its
    processes lives, so a group taken here stays this kernel's (and its Spark JVM's)."""
    with _kernels_lock:
        managers = list(_kernels)
    groups = set()
    for manager in managers:
        provisioner = getattr(manager, "provisioner", None)
        process, group = getattr(provisioner, "process", None), getattr(provisioner, "pgid", None)
        if process is not None and process.poll() is None and isinstance(group, int) and group != os.getpgrp():
            groups.add(group)
    return groups


def _signal_groups(groups: set[int], sig: signal.Signals) -> None:
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, sig)


# --- the pool --------------------------------------------------------------------------------------


def _stop(cancel: threading.Event, workers: list[threading.Thread]) -> None:
    """Set ``cancel``, interrupt the running kernels, kill what is left of their process groups
    after :data:`GRACE_S`, and wait for the workers."""
    cancel.set()
    groups: set[int] = set()
    with signals_held(deliver_after=False):
        deadline = time.monotonic() + GRACE_S
        while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
            running = _running_kernel_groups()
            groups |= running
            _signal_groups(running, signal.SIGINT)  # again for a kernel that was between two cells
            for w in workers:
                w.join(0.5 / len(workers))
        _signal_groups(groups | _running_kernel_groups(), signal.SIGKILL)
        deadline = time.monotonic() + KILLED_WAIT_S
        for w in workers:
            w.join(max(0.0, deadline - time.monotonic()))


def run_jobs(items: list[Item], work: Callable[[Item, threading.Event], Result], jobs: int, *,
             started: Callable[[Item], Any] = lambda item: None,
             finished: Callable[[Item, Result], Any] = lambda item, result: None) -> dict[Item, Result]:
    """``work(item, cancel)`` for every item, ``jobs`` at a time in worker threads, taken in the
    order given; the results by item. ``started`` and ``finished`` are called on the calling
    thread as each item starts and ends (for a progress display). An exception ``work`` raises,
    or an interruption of the calling thread, stops the rest (module docstring) and is raised
    here; ``work`` should give up with :class:`Cancelled` once ``cancel`` is set."""
    todo: queue.SimpleQueue[Item] = queue.SimpleQueue()
    for item in items:
        todo.put(item)
    events: queue.SimpleQueue[tuple[str, Item, Any]] = queue.SimpleQueue()
    cancel = threading.Event()

    def worker() -> None:
        while not cancel.is_set():
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            events.put(("started", item, None))
            try:
                events.put(("finished", item, work(item, cancel)))
            except Cancelled:
                return
            except BaseException as err:  # noqa: BLE001 - raised again on the calling thread
                events.put(("failed", item, err))
                return

    workers = [threading.Thread(target=worker, name=f"report-job-{k + 1}", daemon=True)
               for k in range(max(1, min(jobs, len(items))))]
    results: dict[Item, Result] = {}
    try:
        for w in workers:
            w.start()
        while len(results) < len(items):
            try:
                kind, item, value = events.get(timeout=POLL_S)
            except queue.Empty:
                if not any(w.is_alive() for w in workers) and events.empty():
                    raise RuntimeError("the report's workers ended before every notebook ran") from None
                continue
            if kind == "failed":
                raise value
            if kind == "started":
                started(item)
            else:
                results[item] = value
                finished(item, value)
    except BaseException:
        _stop(cancel, workers)
        raise
    return results
