"""Where the project's files live by default, and the two rules for paths built from input.

:func:`data_root` is the parent of ``data/``, under which the sweeps' cache and results, the
TPC-H data, the cost models, the workflow warehouse and the Spark runs go. Every layer that
writes there asks this module (read at call time where a test or a notebook may repoint it).

A name read from an input file that becomes part of a path (a workflow's, a channel's) must be
one safe path component (:func:`safe_name`), checked when the file is loaded; and before a
writer creates anything, the resolved path must stay under its root (:func:`path_within`),
so neither a name nor a symbolic link inside the root can lead a write elsewhere.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.provenance import project_root

#: The longest safe name, in characters.
MAX_NAME_CHARS = 128
#: The longest safe name, in bytes of UTF-8 (most file systems allow 255 per component).
MAX_NAME_BYTES = 255
#: Characters a safe name never holds: path separators, and what Windows and Hadoop paths
#: (Spark reads them as URIs and glob patterns) treat specially.
UNSAFE_CHARS = frozenset('/\\:*?"<>|[]{}')
#: The rule of :func:`safe_name` as its error messages state it.
SAFE_NAME_RULE = (f"a name used as a path component must be 1 to {MAX_NAME_CHARS} characters "
                  f"({MAX_NAME_BYTES} bytes of UTF-8), not start with '.', and hold no control character "
                  f"and none of {''.join(sorted(UNSAFE_CHARS))}")


def data_root() -> Path:
    """Where ``data/`` lives by default: the checkout's root, else the working directory."""
    return project_root() or Path.cwd()


def name_problem(value: Any) -> str | None:
    """Why ``value`` is not a safe path component (None if it is); the rule of :func:`safe_name`."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "is empty"
    if len(value) > MAX_NAME_CHARS:
        return f"has {len(value):,} characters, more than {MAX_NAME_CHARS}"
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    if size > MAX_NAME_BYTES:
        return f"has {size:,} bytes of UTF-8, more than {MAX_NAME_BYTES}"
    if value.startswith("."):
        return "starts with '.' (hidden, or the directory itself or its parent)"
    for k, char in enumerate(value):
        if unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            return f"holds the control character U+{ord(char):04X} at position {k}"
        if char in UNSAFE_CHARS:
            return f"holds {char!r} at position {k}"
    return None


def safe_name(value: Any, field: str) -> str:
    """``value`` if it is a safe path component, else an :class:`InputError` naming ``field``.

    The rule (:data:`SAFE_NAME_RULE`): a string of 1 to :data:`MAX_NAME_CHARS` characters and at
    most :data:`MAX_NAME_BYTES` bytes of UTF-8 (so valid Unicode); no leading ``.`` (which also
    refuses ``.`` and ``..``); no control character (Unicode Cc, line and paragraph separators,
    NUL included); none of :data:`UNSAFE_CHARS` (``/`` and ``\\`` among them). Such a name
    joined to a directory is one entry of that directory, on every platform and in Spark.
    """
    problem = name_problem(value)
    if problem is not None:
        raise InputError(field, f"{problem}: {SAFE_NAME_RULE}")
    return value


def path_within(root: Path, path: Path, field: str) -> Path:
    """``path`` resolved (symbolic links followed), if it lies under ``root`` resolved, else an
    :class:`InputError` naming ``field``. Call it before creating anything at ``path``: a name
    with ``..`` or an absolute name, or a link inside ``root`` pointing out, is refused."""
    base = Path(root).resolve()
    resolved = Path(path).resolve()
    if resolved != base and not resolved.is_relative_to(base):
        raise InputError(field, f"{path} resolves to {resolved}, outside {base}: a path built from input "
                                "must stay under its root")
    return resolved
