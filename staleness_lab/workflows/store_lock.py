"""One writer per block store (issue #53: two runs started at once on the same store both
proceeded, and one crashed).

A run holds an exclusive :func:`fcntl.flock` on ``<store>/.staleness-lab.lock`` from before
Spark starts to its end; the holder writes its pid and start time into the file. The lock
belongs to the open file, so the operating system releases it when the holder's process ends
in any way (SIGKILL included): a lock file left behind blocks no one, and is reused. Another
process asking for it is refused at once (no waiting) with one line naming the holder. Within
one process the lock is re-entrant (the command line takes it before Spark starts, the run loop
again), since a second ``flock`` on a second open of the file would refuse its own process.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from staleness_lab.errors import InputError, shown
from staleness_lab.workflows.block_store import check_writable_dir
from staleness_lab.workflows.store_files import kind

LOCK_FILE = ".staleness-lab.lock"
#: How long a refused process waits for a holder that has the lock but has not yet written
#: its pid (the write follows the lock at once).
HOLDER_WAIT_S = 1.0

_held: dict[str, int] = {}  # the store's real path -> how many times this process holds it


@contextmanager
def store_lock(store: Path, field: str = "--store") -> Iterator[Path]:
    """Hold ``store``'s lock (module docstring) while the block runs; ``store`` is checked
    (:func:`~.block_store.check_writable_dir`) and created if missing. Refused (an :class:`InputError` naming ``field``): another process holds it, or
    the lock file's name is taken by something other than a regular file."""
    store = check_writable_dir(Path(store), field)
    store.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(store)
    if key in _held:
        _held[key] += 1
        try:
            yield store / LOCK_FILE
        finally:
            _held[key] -= 1
        return
    path = store / LOCK_FILE
    fd = _open(path, field)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(field, f"{store} is in use by another run ({_holder(fd)}); one run writes a store "
                                    "at a time: wait for it to end or choose another --store") from None
        record = json.dumps({"pid": os.getpid(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}) + "\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode(), 0)
        _held[key] = 1
        try:
            yield path
        finally:
            del _held[key]
    finally:
        os.close(fd)  # releases the lock


def _open(path: Path, field: str) -> int:
    """The lock file opened for writing (created if missing), refused if it is not a regular
    file (a link is not followed; a FIFO is not waited on)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as err:
        raise InputError(field, f"{path}: cannot open the store's lock file ({err.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputError(field, f"{path} is {kind(mode)}: the store's lock file must be a regular file")
    return fd


def _holder(fd: int) -> str:
    """The holder as its lock file names it (``pid 123, started ...``), waiting up to
    :data:`HOLDER_WAIT_S` for a holder that has just taken the lock to write it."""
    deadline = time.monotonic() + HOLDER_WAIT_S
    while True:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        try:
            found = json.loads(text)
            return f"pid {int(found['pid'])}, started {shown(found['started'])}"
        except (ValueError, TypeError, KeyError):
            if time.monotonic() >= deadline:
                return f"holder not recorded: {shown(text)}" if text else "holder not recorded"
        time.sleep(0.05)
