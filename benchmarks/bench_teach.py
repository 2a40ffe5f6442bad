"""The teaching notebooks as a class meets them: redraw latency in the browser, a class-sized load
on one ``staleness-lab teach`` server, and the offline handouts' sizes.

1. **Redraw per explorer**: one ``teach`` server on a free loopback port, each teaching
   notebook's main explorer opened in headless Chromium (Playwright on the system ``chromium``,
   every request off loopback refused) and its main slider stepped ``--redraws`` times with the
   keyboard, right and left in turn; one redraw is the time from the key press to the explorer's
   last figure drawn anew (each pane's element redrawn in place, ``widgets/pane.py``, or a new
   one), polled at each animation frame. The time to open the page (the notebook run in a fresh
   kernel, every figure drawn) is reported too. The kernel's share alone is ``bench_widgets.py``.
   The load average (1 min) before and after each part is printed and kept: the machine is
   shared, and a redraw on a loaded one is slower.
2. **A class**: ``--sessions`` pages (browser contexts) open the first notebook at once on one
   fresh server (one run per number given) and each steps its period slider ``--moves`` times; the p95 of every redraw, and the
   resident memory of the server (Voila) and of its kernels (one per page), per session.
3. **Handouts**: ``staleness-lab report --only <name>`` for each teaching notebook; each page's
   size (plotly.js, about 4.8 MB, is in every page once).

Usage::

    python benchmarks/bench_teach.py [--redraws 20] [--sessions 10 ...] [--moves 20] [--skip-handouts]
        [--out bench-teach.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.teach_browser import (COMMAND, LOOPBACK, MARK, PAGE_TIMEOUT_MS, REDRAWN, descendants,  # noqa: E402
                                 launch, open_notebook, step_slider, teach_server)

#: Each teaching notebook's main explorer: (notebook, its slider's description, figures on the page).
EXPLORERS = {
    "ScheduleExplorer": ("01-what-is-staleness", "orders.period", 2),
    "SchedulerDuel": ("02-priorities-and-partitioning", "tracks", 3),
    "BoundExplorer": ("03-recovering-from-an-outage", "outage length λ", 6),
    "BatchPlanExplorer": ("04-batching-against-deadlines", "deadline factor ρ", 1),
}


def quantiles(seconds: list[float]) -> dict[str, float]:
    """Median and 95th percentile (ms) of ``seconds``."""
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"n": len(ordered), "median_ms": round(1000 * statistics.median(ordered), 1), "p95_ms": round(1000 * p95, 1)}


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def load_average() -> float:
    """The machine's load average over the last minute."""
    return round(os.getloadavg()[0], 2)


def redraws_per_explorer(browser: Any, url: str, redraws: int) -> dict[str, Any]:
    """Open each explorer's notebook in a page of its own and step its main slider ``redraws`` times."""
    results = {}
    for explorer, (notebook, label, plots) in EXPLORERS.items():
        load = load_average()
        started = time.perf_counter()
        page = open_notebook(browser, f"{url}voila/render/{notebook}.ipynb", plots, [])
        opened = time.perf_counter() - started
        step_slider(page, label)  # warm-up: the first redraw compiles and caches
        times = [step_slider(page, label, "ArrowLeft" if k % 2 else "ArrowRight") for k in range(redraws)]
        page.close()
        results[explorer] = {"notebook": notebook, "slider": label, **quantiles(times), "open_s": round(opened, 2),
                             "load_before": load, "load_after": load_average()}
        r = results[explorer]
        print(f"{explorer:18s} {label:18s} median {r['median_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms  "
              f"page open {r['open_s']:5.1f} s  load {r['load_before']:.2f} -> {r['load_after']:.2f}", flush=True)
    return results


async def _session(browser: Any, url: str, label: str, moves: int, times: list[float]) -> None:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()

    async def loopback_only(route: Any) -> None:
        parts = urlsplit(route.request.url)
        await (route.continue_() if parts.scheme in ("data", "blob") or parts.hostname in LOOPBACK else route.abort())

    await page.route("**/*", loopback_only)
    await page.goto(url, timeout=PAGE_TIMEOUT_MS)
    await page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2",
                                 timeout=PAGE_TIMEOUT_MS)
    handle = page.locator(".widget-slider").filter(has=page.locator(".widget-label", has_text=label)).first \
        .locator(".noUi-handle").first
    for k in range(moves):
        count = await page.evaluate(MARK, label)
        await handle.focus()
        started = await page.evaluate("performance.now()")
        await handle.press("ArrowLeft" if k % 2 else "ArrowRight")
        done = await page.wait_for_function(REDRAWN, arg=count, polling="raf", timeout=PAGE_TIMEOUT_MS)
        times.append((await done.json_value() - started) / 1000.0)


async def _class(chromium: str, url: str, label: str, sessions: int, moves: int, server_pid: int) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    times: list[float] = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, headless=True,
                                           args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            started = time.perf_counter()
            await asyncio.gather(*(_session(browser, url, label, moves, times) for _ in range(sessions)))
            wall = time.perf_counter() - started
            below = descendants(server_pid)
            memory = {pid: rss_mb(pid) for pid in below}
        finally:
            await browser.close()
    kernels = [mb for pid, mb in memory.items() if "ipykernel" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")] \
        if memory else []
    server = sum(mb for mb in memory.values()) - sum(kernels)
    return {"sessions": sessions, "moves": moves, "wall_s": round(wall, 1), **quantiles(times),
            "kernels": len(kernels), "kernel_rss_mb_per_session": round(statistics.mean(kernels), 1) if kernels else None,
            "server_rss_mb": round(server, 1)}


def handout_sizes() -> dict[str, int]:
    """Render each teaching notebook's handout into a temporary directory; its size in bytes."""
    sizes = {}
    out = Path(tempfile.mkdtemp(prefix="bench-teach-")) / "reports"
    try:
        for notebook, _, _ in EXPLORERS.values():
            subprocess.run([*COMMAND, "report", "--only", notebook, "--out", str(out)], check=True,
                           capture_output=True)
            sizes[notebook] = (out / "teaching" / f"{notebook}.html").stat().st_size
            print(f"handout {notebook:34s} {sizes[notebook] / 1e6:6.2f} MB", flush=True)
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redraws", type=int, default=20, help="slider steps per explorer (default 20; 0 skips)")
    parser.add_argument("--sessions", type=int, nargs="*", default=[10],
                        help="concurrent pages in each class run (default: one run of 10)")
    parser.add_argument("--moves", type=int, default=20, help="slider steps per page in the class run (default 20)")
    parser.add_argument("--skip-handouts", action="store_true", help="do not render the handouts")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("bench_teach: needs `chromium` on PATH (scripts/ensure-chromium.sh)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    results: dict[str, Any] = {}
    log = Path(tempfile.mkdtemp(prefix="bench-teach-")) / "teach.log"
    if args.redraws > 0:
        with teach_server(log) as served, sync_playwright() as pw:
            browser = launch(pw, chromium)
            try:
                results["redraw"] = redraws_per_explorer(browser, served.url, args.redraws)
            finally:
                browser.close()
    for sessions in args.sessions:
        load = load_average()
        with teach_server(log) as served:  # a fresh server: only the class's kernels in its memory
            notebook, label, _ = EXPLORERS["ScheduleExplorer"]
            c = asyncio.run(_class(chromium, f"{served.url}voila/render/{notebook}.ipynb", label, sessions, args.moves,
                                   served.proc.pid))
        c.update(load_before=load, load_after=load_average())
        results.setdefault("class", []).append(c)
        print(f"class: {c['sessions']} sessions x {c['moves']} moves: median {c['median_ms']} ms, p95 {c['p95_ms']} ms; "
              f"{c['kernels']} kernels, {c['kernel_rss_mb_per_session']} MB each, server {c['server_rss_mb']} MB; "
              f"load {c['load_before']:.2f} -> {c['load_after']:.2f}", flush=True)
    if not args.skip_handouts:
        results["handouts_bytes"] = handout_sizes()
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
