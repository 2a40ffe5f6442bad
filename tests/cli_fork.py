"""The ``staleness-lab`` command run as a forked copy of a process that has already loaded it.

Most command-line tests feed a bad input and read one line back; each used to start a new
interpreter and import the command line (pandas, pyarrow, the package: about 0.5 s of CPU), which
was most of their cost. :func:`run_cli` instead asks a server (this file run as a script, one per
test process) to ``fork`` a child that runs the console script's own entry point
(:func:`staleness_lab.launch.main`) with the test's arguments, working directory, environment,
umask and resource limits, its stdout and stderr in files of the test's; the child ends as the
console script does (exit status, traceback, ``atexit`` handlers, flushed streams) less the
teardown of its modules, and the test gets a :class:`subprocess.CompletedProcess` as from
:func:`subprocess.run`.

What the fork skips is the interpreter's start, the imports and loading the engine's compiled core
from its cache (:func:`staleness_lab.api.warm`), which the tests that start the
real console script keep covering: the signal tests (a signal while loading, during a run, while
writing) and ``tests/test_launch.py`` run ``bin/staleness-lab`` itself. The server is
single-threaded when it forks, and a child is a fresh copy of it, so no state passes from one
run to the next.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

CLI = Path(sys.executable).with_name("staleness-lab")


def _child(request: Mapping[str, Any]) -> int:
    """In the forked child: become the command the request describes and run it (its status)."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        os.dup2(os.open(request[name], os.O_WRONLY | os.O_TRUNC), fd)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if request["umask"] is not None:
        os.umask(request["umask"])
    for name, limit in request["limits"].items():
        resource.setrlimit(getattr(resource, name), (limit, limit))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = [str(CLI), *request["args"]]
    from staleness_lab.launch import main

    return main()


def _exit(request: Mapping[str, Any]) -> NoReturn:
    """Run the request in this (forked) child and end the process as the interpreter would, less
    the teardown of its modules: a status from ``SystemExit`` as the interpreter reads it, an
    uncaught exception printed as a traceback (status 1), the streams flushed and the ``atexit``
    handlers run (Spark's session stop among them), then ``os._exit``. Tearing down pandas,
    pyarrow and the compiled engine's modules took about a second per run on a busy machine."""
    try:
        code: Any = _child(request)
    except SystemExit as stop:
        code = stop.code
    except BaseException:  # noqa: BLE001 - printed as the interpreter prints it
        sys.excepthook(*sys.exc_info())
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


def _wait(pid: int, timeout: float) -> int | None:
    """The child's wait status, or None when it ran past ``timeout`` (then killed)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.002)


def serve() -> None:
    """The server: load the command line and the engine's compiled core, then fork a child per
    request line (JSON) read on stdin and answer with its exit status (or ``null`` on a timeout)
    on stdout."""
    import staleness_lab.cli  # noqa: F401  (loaded once; every child is a copy)
    from staleness_lab.api import warm

    warm()

    requests = os.fdopen(os.dup(0), "r")
    answers = os.fdopen(os.dup(1), "w")
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            requests.close()
            answers.close()
            _exit(request)
        status = _wait(pid, request["timeout"])
        answers.write(json.dumps(None if status is None else os.waitstatus_to_exitcode(status)) + "\n")
        answers.flush()


class _Server:
    """One server process per test process, started on first use; calls are serialized."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None

    def _started(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          text=True, env={k: v for k, v in os.environ.items() if k != "SPARK_MASTER"})
            atexit.register(self._stop)
        return self._proc

    def _stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.stdin.close()  # type: ignore[union-attr]
            self._proc.wait(timeout=30)

    def run(self, request: dict[str, Any]) -> int | None:
        with self._lock:
            proc = self._started()
            proc.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            answer = proc.stdout.readline()  # type: ignore[union-attr]
        if not answer:
            raise RuntimeError("the command-line fork server stopped")
        return json.loads(answer)


_SERVER = _Server()


def run_cli(args: Sequence[str | Path], *, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
            umask: int | None = None, limits: Mapping[str, int] | None = None,
            timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """``staleness-lab ARGS`` as a forked child of the server (module docstring): exit status,
    stdout and stderr as :func:`subprocess.run` with ``capture_output=True, text=True`` gives
    them; ``limits`` maps ``resource`` names (``"RLIMIT_AS"``) to a soft and hard limit.
    Raises :class:`subprocess.TimeoutExpired` past ``timeout`` seconds (the child killed)."""
    argv = [str(a) for a in args]
    with tempfile.TemporaryDirectory(prefix="cli-fork-") as scratch:
        out, err = Path(scratch, "stdout"), Path(scratch, "stderr")
        out.touch()
        err.touch()
        code = _SERVER.run({"args": argv, "cwd": str(cwd or os.getcwd()), "env": dict(os.environ if env is None else env),
                            "umask": umask, "limits": dict(limits or {}), "timeout": timeout,
                            "stdout": str(out), "stderr": str(err)})
        if code is None:
            raise subprocess.TimeoutExpired([str(CLI), *argv], timeout)
        return subprocess.CompletedProcess([str(CLI), *argv], code, out.read_text(),
                                           err.read_text())


if __name__ == "__main__":
    serve()
