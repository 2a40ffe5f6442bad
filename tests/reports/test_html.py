"""``staleness-lab report --quick --only 00-quickstart``, run as a real process (the notebook's
default runner, so its sweep runs on an embedded local Spark session inside the kernel), and
the HTML it writes opened in headless Chromium.

The pages must work offline: no ``<script src>`` (or stylesheet) from the network, plotly.js
inline exactly once in the notebook page, no JavaScript error while loading, no request for
anything but the page's own file, and every figure rendered to SVG. Chromium reports errors and
requests through the DevTools protocol (``--remote-debugging-port``), read with the
``websocket-client`` package.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from staleness_lab.reports import read_page_meta
from staleness_lab.viz.offline import plotly_js

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "00-quickstart"
REPORT_TIMEOUT = 600  # seconds for the whole report command (Spark start-up included)
PAGE_TIMEOUT = 60  # seconds for Chromium to load and render one page

REMOTE_SCRIPT = re.compile(r"""<script\b[^>]*\ssrc\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)
REMOTE_LINK = re.compile(r"""<link\b[^>]*\shref\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


# --- the report, made once for the module -------------------------------------------------------


def _command() -> list[str]:
    script = Path(sys.executable).with_name("staleness-lab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "staleness_lab.cli"]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("reports")
    started = time.perf_counter()
    proc = subprocess.run(
        [*_command(), "report", "--quick", "--only", NOTEBOOK, "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=REPORT_TIMEOUT,
    )
    return {"out": out, "proc": proc, "seconds": time.perf_counter() - started}


@pytest.fixture(scope="module")
def pages(report: dict[str, Any]) -> dict[str, str]:
    proc = report["proc"]
    assert proc.returncode == 0, f"report failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    out: Path = report["out"]
    return {name: (out / f"{name}.html").read_text(encoding="utf-8") for name in ("index", NOTEBOOK)}


def test_report_writes_the_page_and_the_index(report: dict[str, Any], pages: dict[str, str]) -> None:
    out: Path = report["out"]
    assert sorted(p.name for p in out.iterdir()) == ["00-quickstart.html", "claims.csv", "index.html"]  # no temp files left
    assert f'href="{NOTEBOOK}.html"' in pages["index"]
    meta = read_page_meta(out / f"{NOTEBOOK}.html")
    assert meta is not None and meta["status"] == "ok"
    verdict = meta["verdict"]
    assert verdict and "lowest mean relative lateness" in verdict
    assert verdict in report["proc"].stdout
    assert verdict in pages["index"]  # html.escape leaves this verdict's characters alone
    # provenance of the run in the index
    for fact in ("version", "git_commit", "profile", "python", "pyspark", "created_utc"):
        assert f"<th>{fact}</th>" in pages["index"]
    assert "<th>profile</th><td>quick</td>" in pages["index"]


def test_no_script_or_stylesheet_from_the_network(pages: dict[str, str]) -> None:
    for name, page in pages.items():
        assert not REMOTE_SCRIPT.search(page), f"{name}.html loads a script from the network"
        assert not REMOTE_LINK.search(page), f"{name}.html loads a stylesheet from the network"


def test_plotly_js_is_embedded_exactly_once(pages: dict[str, str]) -> None:
    library = plotly_js()
    probe = library[len(library) // 2 : len(library) // 2 + 200]  # a stretch of minified code
    assert pages[NOTEBOOK].count(probe) == 1
    assert pages[NOTEBOOK].count(library[:40]) == 1  # its licence header
    assert probe not in pages["index"]
    assert pages[NOTEBOOK].count('class="plotly-graph-div"') >= 3  # Gantt, staleness, sweep


def test_spark_ran_the_sweep(pages: dict[str, str]) -> None:
    assert re.search(r"\d+ points \(quick profile, runner spark\)", pages[NOTEBOOK])


# --- headless Chromium over the DevTools protocol -----------------------------------------------


class DevTools:
    """A minimal Chrome DevTools protocol client over one websocket (flattened sessions)."""

    def __init__(self, ws_url: str) -> None:
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=PAGE_TIMEOUT, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + PAGE_TIMEOUT
        while time.monotonic() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)
        raise TimeoutError(f"no reply to {method} within {PAGE_TIMEOUT} s")

    def wait_for(self, method: str, session: str) -> None:
        if any(e["method"] == method and e.get("sessionId") == session for e in self.events):
            return
        deadline = time.monotonic() + PAGE_TIMEOUT
        while time.monotonic() < deadline:
            event = json.loads(self.ws.recv())
            if "method" in event:
                self.events.append(event)
                if event["method"] == method and event.get("sessionId") == session:
                    return
        raise TimeoutError(f"no {method} within {PAGE_TIMEOUT} s")

    def close(self) -> None:
        self.ws.close()


@pytest.fixture(scope="module")
def browser(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen(
        [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank",
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        active = profile / "DevToolsActivePort"  # "<port>\n/devtools/browser/<id>" once listening
        deadline = time.monotonic() + PAGE_TIMEOUT
        while not (active.exists() and len(active.read_text().split()) == 2):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not open its DevTools port (exit status {proc.poll()})")
            time.sleep(0.1)
        port, path = active.read_text().split()
        client = DevTools(f"ws://127.0.0.1:{port}{path}")
        try:
            yield client
        finally:
            try:
                client.call("Browser.close")
            except Exception:  # noqa: BLE001 - it may close the socket before replying
                pass
            client.close()
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


_PAGE_STATE = """JSON.stringify({
  graphs: document.querySelectorAll('.plotly-graph-div').length,
  rendered: Array.from(document.querySelectorAll('.js-plotly-plot')).filter(d => d.querySelector('svg.main-svg')).length,
  plotly: typeof window.Plotly,
  text: document.body ? document.body.innerText : ''
})"""


def open_page(browser: DevTools, path: Path, min_graphs: int) -> dict[str, Any]:
    """Load ``path`` in a fresh tab; its JavaScript errors, non-local requests and DOM state."""
    target = browser.call("Target.createTarget", url="about:blank")["targetId"]
    session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    first = len(browser.events)
    for domain in ("Runtime", "Log", "Network", "Page"):
        browser.call(f"{domain}.enable", session)
    browser.call("Page.navigate", session, url=path.as_uri())
    browser.wait_for("Page.loadEventFired", session)
    deadline = time.monotonic() + PAGE_TIMEOUT
    while True:  # plotly draws right after load; wait until every graph has its SVG
        state = json.loads(browser.call("Runtime.evaluate", session, expression=_PAGE_STATE, returnByValue=True)["result"]["value"])
        if (state["graphs"] >= min_graphs and state["rendered"] >= state["graphs"]) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    time.sleep(0.5)  # let late errors or requests arrive
    browser.call("Runtime.evaluate", session, expression="1")  # drains pending events
    events = [e for e in browser.events[first:] if e.get("sessionId") == session]
    errors = []
    for e in events:
        p = e["params"]
        if e["method"] == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            errors.append(d.get("exception", {}).get("description") or d.get("text"))
        elif e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
            errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
            errors.append(f"{p['entry'].get('source')}: {p['entry'].get('text')} {p['entry'].get('url', '')}")
    requests = [
        e["params"]["request"]["url"] for e in events
        if e["method"] == "Network.requestWillBeSent" and not e["params"]["request"]["url"].startswith(LOCAL_SCHEMES)
    ]
    browser.call("Target.closeTarget", targetId=target)
    return {"errors": errors, "requests": requests, **state}


def test_notebook_page_renders_offline(report: dict[str, Any], pages: dict[str, str], browser: DevTools) -> None:
    expected = pages[NOTEBOOK].count('class="plotly-graph-div"')
    seen = open_page(browser, report["out"] / f"{NOTEBOOK}.html", min_graphs=expected)
    assert seen["errors"] == []
    assert seen["requests"] == []
    assert seen["plotly"] == "object"
    assert seen["graphs"] == expected >= 3
    assert seen["rendered"] == expected
    assert "Verdict:" in seen["text"]


def test_index_page_loads_offline(report: dict[str, Any], pages: dict[str, str], browser: DevTools) -> None:
    seen = open_page(browser, report["out"] / "index.html", min_graphs=0)
    assert seen["errors"] == []
    assert seen["requests"] == []
    assert NOTEBOOK in seen["text"]


# --- a failing notebook -------------------------------------------------------------------------


def _toy_notebook(path: Path, body: str) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    params = new_code_cell('profile = "standard"')
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[params, new_code_cell(body)])
    nb.metadata["kernelspec"] = {"name": "staleness-lab", "display_name": "staleness-lab", "language": "python"}
    nbformat.write(nb, path)


def test_a_failing_notebook_gets_no_report_and_the_others_go_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from staleness_lab import reports

    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    _toy_notebook(notebooks / "a-fails.ipynb", 'raise ValueError("bad thing\\nsecond line")')
    _toy_notebook(notebooks / "b-works.ipynb", 'from staleness_lab.reports import record_verdict\nrecord_verdict(f"fine <{profile}>")')
    monkeypatch.setattr(reports, "notebooks_dir", lambda: notebooks)
    out = tmp_path / "out"
    out.mkdir()
    # a stale report of ours (it carries the page JSON); a page without it would be refused as the user's
    (out / "a-fails.html").write_text('<script type="application/json" id="staleness-lab-report">{}</script>')

    assert reports.report_command(quick=True, only=None, profile="standard", out=out) == 1
    assert sorted(p.name for p in out.iterdir()) == ["b-works.html", "claims.csv", "index.html"]  # the stale one is gone
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "failed: ValueError: bad thing" in index and "second line" not in index
    assert 'href="a-fails.html"' not in index
    assert 'href="b-works.html"' in index and "fine &lt;quick&gt;" in index
    # a later --only run keeps indexing this report, from what the page itself carries
    earlier = reports._earlier(notebooks / "b-works.ipynb", out)
    assert (earlier.status, earlier.verdict, earlier.provenance["profile"]) == ("earlier", "fine <quick>", "quick")
    assert "created_utc" not in earlier.provenance  # the date is in the index only


def test_a_kernel_that_dies_is_a_failure_naming_its_last_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capfd: pytest.CaptureFixture[str]) -> None:
    """What a kernel process writes to its own stderr stays out of the command's (several kernels
    run at once); when the kernel dies, the failure names its last line."""
    from staleness_lab import reports

    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    _toy_notebook(notebooks / "dies.ipynb", 'import os\nos.write(2, b"first words\\nlast words\\n")\nos._exit(3)')
    monkeypatch.setattr(reports, "notebooks_dir", lambda: notebooks)
    out = tmp_path / "out"
    assert reports.report_command(quick=True, only=None, profile="standard", out=out, jobs=1) == 1
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "failed: DeadKernelError" in index and "(the kernel&#x27;s last words: last words)" in index, index[-2000:]
    assert "first words" not in capfd.readouterr().err  # the kernel's stderr itself never reached ours
