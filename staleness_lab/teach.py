"""``staleness-lab teach``: serve the teaching notebooks to a class with Voila.

Voila runs each notebook of ``notebooks/teaching/`` in its own kernel per visitor and shows the
prose, the explorers and the exercises with every code cell hidden (``strip_sources``). It
listens on loopback unless told otherwise: any other address lets anyone who reaches it on that
network run the notebooks (and whatever code their kernels will run), which the command says in
one line before it starts.

The port is checked before Voila starts (an integer in 1..65535 that nothing on this machine
listens on at that address), so a mistyped port or a busy one is one line and exit status 2, never a
server that quietly moved to another port. Ctrl-C and SIGTERM reach Voila as SIGTERM, which shuts
down every kernel it started before it exits; the command then ends as every command does
(130 or 143, one line).
"""

from __future__ import annotations

import errno
import ipaddress
import signal
import socket
import subprocess
import sys
from pathlib import Path

from staleness_lab.errors import InputError, shown
from staleness_lab.held_signals import signals_held, wait

#: Voila's own default port.
DEFAULT_PORT = 8866
DEFAULT_IP = "127.0.0.1"
#: Seconds Voila gets to shut its kernels down after SIGTERM before it is killed.
STOP_TIMEOUT = 30.0


def check_port(port: object) -> int:
    """``port`` as an int in 1..65535, or :class:`InputError` naming ``--port``."""
    text = str(port).strip()
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise InputError("--port", f"must be a whole number from 1 to 65535, got {shown(port)}")
    return int(text)


def check_ip(ip: str) -> str:
    """``ip`` as an IP address (v4 or v6) in its normal form, or :class:`InputError` naming ``--ip``."""
    try:
        return str(ipaddress.ip_address(ip.strip()))
    except ValueError:
        raise InputError("--ip", f"must be an IP address such as 127.0.0.1 or 0.0.0.0, got {shown(ip)}") from None


def is_loopback(ip: str) -> bool:
    """True when ``ip`` (checked by :func:`check_ip`) is only reachable from this machine."""
    return ipaddress.ip_address(ip).is_loopback


def check_free(ip: str, port: int) -> None:
    """Bind ``ip:port`` as the server will (address reuse on, as tornado sets it) and let go;
    :class:`InputError` when it is taken or not an address of this machine."""
    family = socket.AF_INET6 if ipaddress.ip_address(ip).version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise InputError("--port", f"{port} is already in use on {ip}; give a free one") from None
            if err.errno == errno.EACCES:
                raise InputError("--port", f"{port} needs privileges to listen on; give one above 1023") from None
            raise InputError("--ip", f"cannot listen on {ip}: {err.strerror or err}") from None


def teaching_dir() -> Path:
    """The checkout's ``notebooks/teaching/`` (serving needs a source checkout)."""
    from staleness_lab.reports import notebooks_dir

    found = notebooks_dir() / "teaching"
    if not found.is_dir():
        raise InputError("teach", "needs a source checkout: notebooks/teaching/ not found")
    return found


def voila_command(notebooks: Path, ip: str, port: int) -> list[str]:
    """The Voila server for ``notebooks`` on ``ip:port``: sources stripped, no browser opened, no
    other port tried, errors only in its log (the address is printed by :func:`serve`; "notebook
    not trusted" is every committed notebook), and the kernels' channels encrypted where the
    kernelspec supports it, as the reports' kernels are."""
    return [sys.executable, "-m", "voila", str(notebooks), "--no-browser", "--strip_sources=True",
            f"--port={port}", f"--Voila.ip={ip}", "--Voila.port_retries=0", "--Voila.log_level=ERROR",
            "--KernelManager.transport_encryption=auto"]


def url(ip: str, port: int) -> str:
    """The address a browser opens (IPv6 in brackets)."""
    host = f"[{ip}]" if ipaddress.ip_address(ip).version == 6 else ip
    return f"http://{host}:{port}/"


def serve(port: object = DEFAULT_PORT, ip: str = DEFAULT_IP) -> int:
    """Check the address, warn when it is not loopback, run Voila until it ends or a signal
    stops it (re-raised as KeyboardInterrupt after Voila has shut its kernels down; waited for in
    slices, so a signal that another thread took counts too); Voila's exit status otherwise."""
    port = check_port(port)
    ip = check_ip(ip)
    notebooks = teaching_dir()
    check_free(ip, port)
    if not is_loopback(ip):
        print(f"staleness-lab: warning: --ip {ip} is not loopback: anyone who can reach this machine on that "
              f"network can open {url(ip, port)} and run the notebooks", file=sys.stderr)
    print(f"staleness-lab: serving {notebooks.name}/ at {url(ip, port)} (Ctrl-C stops)", file=sys.stderr, flush=True)
    server: subprocess.Popen[bytes] | None = None
    try:
        # held while Popen starts Voila: a signal that lands before Popen returns a handle would
        # leave a server nothing stops; held, it is raised here, once ``server`` is set
        with signals_held():
            server = subprocess.Popen(voila_command(notebooks, ip, port))
        return wait(server)
    except KeyboardInterrupt:
        if server is not None:
            stop(server)
        raise


def stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM to Voila (it shuts down its kernels, then exits); killed if it has not ended
    within :data:`STOP_TIMEOUT` seconds. Signals arriving meanwhile do not cut the wait short."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
