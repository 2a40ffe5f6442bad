"""The teaching notebooks in a real browser, headless Chromium driven by Playwright (the system
``chromium``). Served: ``staleness-lab teach`` started as a lecturer starts it, "What is staleness"
opened with every request off loopback refused, a slider moved, and the redrawn plot checked
against the simulation the API gives for the same values; the server is stopped through its
process group and must take Voila's kernels with it. Offline: the same notebook's handout from
``staleness-lab report``, opened from disk with every other request refused, its precomputed
slider moved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from staleness_lab import viz
from staleness_lab.api import simulate
from tests.teach_browser import COMMAND, PLOTS, launch, open_notebook, step_slider, teach_server

NOTEBOOK = "01-what-is-staleness"
#: The notebook's workload at its default horizon (its explorer runs FIFO on it).
WORKLOAD = {"tracks": 1, "horizon": 200.0, "tables": [
    {"name": "orders", "period": 10, "alpha": 2, "beta": 0.2, "priority": 1},
    {"name": "report", "sources": ["orders"], "alpha": 1, "beta": 0.05, "priority": 1},
]}


def curves(period: float) -> list[dict[str, Any]]:
    """The staleness figure's traces for FIFO with ``orders`` every ``period`` time units, as the
    API and viz draw them."""
    workload = {**WORKLOAD, "tables": [{**WORKLOAD["tables"][0], "period": period}, WORKLOAD["tables"][1]]}
    fig = viz.staleness_curves(simulate(workload, "fifo", tracks=1, horizon=200.0).trace)
    return [{"name": t.name, "x": np.asarray(t.x, float), "y": np.asarray(t.y, float)} for t in fig.data]


def close(drawn: list[float], expected: np.ndarray) -> bool:
    found = np.asarray(drawn, float)
    return found.shape == expected.shape and np.allclose(found, expected)


def same_curves(page: list[dict[str, Any]], expected: list[dict[str, Any]]) -> bool:
    """The page's traces are the expected ones: names, x and y (to float precision)."""
    return len(page) == len(expected) and all(
        p["name"] == e["name"] and close(p["x"], e["x"]) and close(p["y"], e["y"]) for p, e in zip(page, expected))


def test_a_slider_in_the_served_notebook_redraws_what_the_api_computes(chromium: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []
    with teach_server(tmp_path / "teach.log") as served:
        with sync_playwright() as pw:
            browser = launch(pw, chromium)
            try:
                page = open_notebook(browser, f"{served.url}voila/render/{NOTEBOOK}.ipynb", 2, blocked)
                text = page.inner_text("body")
                assert "What is staleness?" in text and "check_answer(" not in text  # code cells hidden
                before = page.evaluate(PLOTS)
                assert same_curves(before[1], curves(10.0))  # the initial view
                step_slider(page, "orders.period")  # one step of its slider (0 to 40 in 100 steps)
                after = page.evaluate(PLOTS)
                shot = tmp_path / "teach-01-period-10.4.png"
                page.screenshot(path=str(shot), full_page=True)
                print(f"screenshot: {shot}; refused off loopback: {blocked}")
                served.note_processes()  # Voila and the page's kernel, to be gone after the stop
            finally:
                browser.close()
        log = served.log.read_text(errors="replace")
        assert f"serving teaching/ at {served.url}" in log and "warning" not in log
    assert same_curves(after[1], curves(10.4)) and not same_curves(after[1], curves(10.0))
    assert "total weighted staleness" in text and shot.stat().st_size > 0
    assert served.returncode == 143 and "staleness-lab: terminated" in served.log.read_text()
    assert len(served.spawned) >= 2 and not served.survivors  # Voila and its kernel stopped with it



def test_the_offline_handout_responds_with_no_kernel_and_no_network(chromium: str, tmp_path: Path) -> None:
    """``report --only`` renders the handout; opened from disk with every request but the file's
    own refused, its figures draw and its precomputed slider redraws both panes."""
    import subprocess

    from playwright.sync_api import sync_playwright

    out = tmp_path / "reports"
    proc = subprocess.run([*COMMAND, "report", "--only", NOTEBOOK, "--out", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    page_file = out / "teaching" / f"{NOTEBOOK}.html"
    assert f'href="teaching/{NOTEBOOK}.html"' in (out / "index.html").read_text()
    refused: list[str] = []
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = launch(pw, chromium)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
                       else (refused.append(r.request.url), r.abort()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_file.as_uri())
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2")
            before = page.evaluate(PLOTS)
            rail = page.locator(".slider-rail-touch-rect").first
            rail.scroll_into_view_if_needed()
            box = rail.bounding_box()
            page.mouse.click(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)  # the last step: 40
            page.wait_for_function("(s => s.active === s.steps.length - 1)(document.querySelector('.js-plotly-plot')"
                                   ".layout.sliders[0])")
            after = page.evaluate(PLOTS)
            page.screenshot(path=str(tmp_path / "handout-01-period-40.png"))
        finally:
            browser.close()
    shown = [[t for t in plot if t["visible"] is True] for plot in (before[1], after[1])]
    assert same_curves(shown[0], curves(10.0)) and same_curves(shown[1], curves(40.0))
    assert not refused and not errors
