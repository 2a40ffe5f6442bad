"""Reading a block store without trusting it (issue #53: ``workflow verify`` blocked forever on
a FIFO placed where a manifest should be, and a resume followed links out of the store).

Only regular files are opened: the entry is checked with :func:`os.lstat` first (a symbolic
link, FIFO, device, socket or directory is named, never opened), then opened with
``O_NOFOLLOW | O_NONBLOCK`` and checked again on the open descriptor, so an entry swapped
between the check and the open is refused too and an open never waits for a FIFO's writer.
Directories are recognised the same way (a link to a directory is a link, not a directory).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import IO, Any

#: What an entry is, for the file types that are not what the store holds.
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISREG, "a regular file"))


class NotRegular(OSError):
    """An entry that is not a regular file where one should be (its message says what it is)."""


def kind(mode: int) -> str:
    """The file type of an ``st_mode``, in words (``a symbolic link``, ``a FIFO``, ...)."""
    return next((name for test, name in _KINDS if test(mode)), "an unknown kind of file")


def not_a(path: Path, want: str) -> str | None:
    """None when ``path`` itself (a link not followed) is a ``"file"`` (regular) or a
    ``"directory"``; else what it is instead (``is a FIFO``, ``is missing``)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "is missing"
    except OSError as err:
        return f"cannot be examined ({err.strerror})"
    found = stat.S_ISREG(mode) if want == "file" else stat.S_ISDIR(mode)
    return None if found else f"is {kind(mode)}, not a {'regular file' if want == 'file' else want}"


def is_dir(path: Path) -> bool:
    """Whether ``path`` itself is a directory (a link to one is not)."""
    return not_a(path, "directory") is None


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for reading if it is a regular file (module docstring), else
    :class:`NotRegular` saying what it is."""
    problem = not_a(path, "file")
    if problem is not None:
        raise NotRegular(f"{path.name} {problem}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise NotRegular(f"{path.name} cannot be opened ({err.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegular(f"{path.name} is {kind(mode)}, not a regular file")
    return os.fdopen(fd, "rb")


def read_json(path: Path) -> Any:
    """The JSON value of the regular file ``path`` (:class:`NotRegular`, ``OSError`` or
    ``ValueError`` otherwise)."""
    with open_regular(path) as f:
        return json.loads(f.read().decode("utf-8"))


def file_sum(f: IO[bytes]) -> tuple[int, str]:
    """The byte size and SHA-256 (hex) of an open file, read from its start."""
    f.seek(0)
    digest = hashlib.file_digest(f, "sha256")
    return f.tell(), digest.hexdigest()


def part_sum(path: Path) -> tuple[int, str]:
    """The byte size and SHA-256 of the regular file ``path``."""
    with open_regular(path) as f:
        return file_sum(f)
