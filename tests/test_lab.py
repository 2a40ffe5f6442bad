"""``make lab``: a real JupyterLab server, started exactly as a person would start it.

The server must listen on loopback only, answer with the token it was given, serve notebooks/
and offer the project's own kernel ("staleness-lab", registered by scripts/setup.sh into
.venv). The test stops the server itself (the whole process group) and checks the port is free
again afterwards. Nothing is mocked.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KERNEL = "staleness-lab"
START_TIMEOUT = 60.0  # seconds for `make lab` (setup included) to answer /api/status
STOP_TIMEOUT = 20.0  # seconds between SIGTERM and SIGKILL


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _outward_address() -> str | None:
    """This machine's address on its default route (no packet is sent), if it is not loopback."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere real
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def _get(url: str, timeout: float = 10.0) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member exists but is not ours to signal: still alive
        return True
    return True


def _stop(proc: subprocess.Popen, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM the whole group (make, and the server it runs), SIGKILL it if it outlives `timeout`."""
    pgid = proc.pid  # start_new_session=True: the group id is make's pid
    if _group_alive(pgid):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _group_alive(pgid) and time.monotonic() < deadline:
        proc.poll()  # reap make as soon as it exits
        time.sleep(0.1)
    if _group_alive(pgid):
        os.killpg(pgid, signal.SIGKILL)
    proc.wait(timeout=timeout)


def test_make_lab_serves_the_project_kernel_on_loopback_and_stops(tmp_path: Path) -> None:
    port = _free_port()
    token = secrets.token_hex(16)
    runtime = tmp_path / "runtime"
    env = {
        k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    }
    env.update(
        JUPYTER_TOKEN=token,
        JUPYTER_RUNTIME_DIR=str(runtime),  # the server's jpserver-*.json lands here, not in $HOME
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),  # no personal config changes the server
    )
    log_path = tmp_path / "lab.log"
    base = f"http://127.0.0.1:{port}"

    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "lab", f"LAB_PORT={port}"],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        # 1. It comes up on the port asked for, and answers with the token given.
        deadline = time.monotonic() + START_TIMEOUT
        status = None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(
                    f"`make lab` exited with {proc.returncode} before answering:\n"
                    + log_path.read_text(errors="replace")
                )
            try:
                status, _, _ = _get(f"{base}/api/status?token={token}", timeout=2.0)
                if status == 200:
                    break
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        assert status == 200, (
            f"no answer from {base}/api/status within {START_TIMEOUT:.0f} s:\n"
            + log_path.read_text(errors="replace")
        )

        # ... and not without it.
        try:
            _get(f"{base}/api/status")
        except urllib.error.HTTPError as err:
            assert err.code == 403, err.code
        else:
            raise AssertionError("the API answered without the token")

        # 2. Loopback only: not reachable on this machine's outward address.
        outward = _outward_address()
        if outward is not None:
            assert not _port_open(outward, port), f"the server is reachable on {outward}:{port}"

        # 3. It serves notebooks/ of this checkout (the server's own record says so).
        records = [json.loads(p.read_text()) for p in runtime.glob("jpserver-*.json")]
        assert [r["port"] for r in records] == [port], records
        assert Path(records[0]["root_dir"]).resolve() == (REPO / "notebooks").resolve()

        # 4. The project's kernel is offered, and runs this checkout's .venv.
        status, ctype, body = _get(f"{base}/api/kernelspecs?token={token}")
        assert status == 200 and ctype.startswith("application/json"), (status, ctype)
        specs = json.loads(body)["kernelspecs"]
        assert KERNEL in specs, sorted(specs)
        spec = specs[KERNEL]["spec"]
        assert spec["display_name"] == "Python (staleness-lab)"
        assert spec["language"] == "python"
        assert Path(spec["argv"][0]) == REPO / ".venv" / "bin" / "python", spec["argv"]

        # 5. The Lab page itself.
        status, ctype, body = _get(f"{base}/lab?token={token}")
        assert status == 200 and ctype.startswith("text/html"), (status, ctype)
        assert b"JupyterLab" in body
    finally:
        _stop(proc)

    # Stopped by us: nothing of the group is left, and the port is free again.
    assert not _group_alive(proc.pid)
    deadline = time.monotonic() + 5.0
    while _port_open("127.0.0.1", port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _port_open("127.0.0.1", port), f"port {port} still open after the server was stopped"
