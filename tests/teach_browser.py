"""Driving ``staleness-lab teach`` as a class does: the server as a real process, pages in headless
Chromium through Playwright (the Debian ``chromium`` binary, never a browser download), every
request that does not go to loopback refused. Shared by the teaching tests and
``benchmarks/bench_teach.py``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

COMMAND = [str(Path(sys.executable).with_name("staleness-lab"))]
START_TIMEOUT = 120.0  # seconds for the server to answer (Voila's start on a busy machine)
STOP_TIMEOUT = 60.0  # seconds from SIGTERM to the whole group gone
PAGE_TIMEOUT_MS = 120_000  # a page: a kernel started, the notebook run, the widgets drawn
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}

#: Each plot on the page: its traces' name, visibility, x and y as plain arrays, from what
#: plotly.js drew (``_fullData``: plotly's base64 arrays decoded).
PLOTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => (gd._fullData || []).map(t => ({
  name: t.name ?? null, visible: t.visible, x: t.x ? Array.from(t.x) : [], y: t.y ? Array.from(t.y) : []})))"""


def free_port() -> int:
    """A port nothing listens on now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (Voila and the kernels it started), from /proc."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        here = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{here}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{here}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@dataclass
class Served:
    """A running ``teach`` server: its base URL, process and log file; ``stopped`` the exit
    status and the processes still alive after the stop (filled by :func:`teach_server`)."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    spawned: set[int] = field(default_factory=set)
    returncode: int | None = None
    survivors: set[int] = field(default_factory=set)

    def note_processes(self) -> None:
        """Remember every process below the command (Voila, its kernels) to check after stopping."""
        self.spawned |= descendants(self.proc.pid)


def teach_command(port: int, ip: str | None = None) -> list[str]:
    """``staleness-lab teach --port P [--ip ADDR]``."""
    return [*COMMAND, "teach", "--port", str(port), *(["--ip", ip] if ip else [])]


@contextmanager
def teach_server(log: Path, *, ip: str | None = None, stop: int = signal.SIGTERM,
                 command: Callable[[int], list[str]] | None = None) -> Iterator[Served]:
    """``staleness-lab teach --port P [--ip ADDR]`` (a free port, loopback unless ``ip``), or
    ``command(P)`` when given (e.g. ``make teach``), in its own session, answering on loopback;
    stopped by ``stop`` to its process group (SIGKILL if it outlives :data:`STOP_TIMEOUT`)."""
    port = free_port()
    argv = command(port) if command is not None else teach_command(port, ip)
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    served = Served(f"http://127.0.0.1:{port}/", proc, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"teach exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(served.url, timeout=5):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise AssertionError(f"teach did not answer on {served.url}:\n{log.read_text(errors='replace')}")
                time.sleep(0.25)
        yield served
    finally:
        served.note_processes()
        os.killpg(proc.pid, stop)
        try:
            served.returncode = proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            served.returncode = proc.wait()
        deadline = time.monotonic() + STOP_TIMEOUT
        while any(alive(p) for p in served.spawned) and time.monotonic() < deadline:
            time.sleep(0.1)
        served.survivors = {p for p in served.spawned if alive(p)}


def loopback_only(page: Any, blocked: list[str]) -> None:
    """Route every request of ``page``: loopback (and data/blob URLs) goes through, anything
    else is aborted and its URL appended to ``blocked``."""

    def route(r: Any) -> None:
        parts = urlsplit(r.request.url)
        if parts.scheme in ("data", "blob") or parts.hostname in LOOPBACK:
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)


def launch(playwright: Any, chromium: str) -> Any:
    """Headless Chromium from ``chromium`` (the system binary)."""
    return playwright.chromium.launch(executable_path=chromium, headless=True,
                                      args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])


def open_notebook(browser: Any, url: str, plots: int, blocked: list[str]) -> Any:
    """A new page on ``url`` (loopback only) once ``plots`` plotly figures have drawn."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    loopback_only(page, blocked)
    page.goto(url, timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {plots}",
                           timeout=PAGE_TIMEOUT_MS)
    return page


#: Before a slider moves: mark its explorer's figures (the nearest box around the slider that
#: holds plots) as old, note the time, and return how many there are.
MARK = """label => {
  const box = Array.from(document.querySelectorAll('.widget-slider'))
    .find(b => (b.querySelector('.widget-label') || {}).textContent.trim() === label);
  let root = box;
  while (root && !root.querySelector('.js-plotly-plot')) { root = root.parentElement; }
  window.__slRoot = root;
  const plots = root.querySelectorAll('.js-plotly-plot');
  plots.forEach(gd => { gd.__slOld = true; });
  window.__slMarkAt = performance.now();
  return plots.length;
}"""
#: After: the time (performance.now()) once every figure of that explorer has been drawn anew
#: (an explorer redraws each pane's element in place and stamps it with ``__slDrawnAt``,
#: ``staleness_lab/widgets/pane.py``; a new element counts too), else false.
REDRAWN = """n => { const plots = Array.from(window.__slRoot.querySelectorAll('.js-plotly-plot'));
  return plots.length >= n && plots.every(gd => (!gd.__slOld || gd.__slDrawnAt > window.__slMarkAt)
    && gd._fullLayout && gd.querySelector('.main-svg')) ? performance.now() : false; }"""


def slider_handle(page: Any, label: str) -> Any:
    """The handle of the slider whose description is ``label``."""
    box = page.locator(".widget-slider").filter(has=page.locator(".widget-label", has_text=label)).first
    return box.locator(".noUi-handle").first


def step_slider(page: Any, label: str, key: str = "ArrowRight") -> float:
    """Move the slider ``label`` one step with the keyboard (as a student does; the slider sends
    its value on release) and wait until its explorer has drawn every figure anew; the seconds
    from the key press to the last figure drawn, polled at each animation frame."""
    count = page.evaluate(MARK, label)
    handle = slider_handle(page, label)
    handle.focus()
    started = page.evaluate("performance.now()")
    handle.press(key)
    done = page.wait_for_function(REDRAWN, arg=count, polling="raf", timeout=PAGE_TIMEOUT_MS)
    return (done.json_value() - started) / 1000.0
