"""``staleness-lab report --jobs N``: notebooks rendered several at a time, longest first.

The pool itself (:func:`staleness_lab.report_jobs.run_jobs`) on plain Python work: it runs
``jobs`` items at once, and an error stops the rest. The command: a bad ``--jobs`` is one line
naming it; Ctrl-C or SIGTERM with two notebooks' kernels in flight stops both kernels (their
process groups, Spark's JVM included, are gone) and leaves the earlier reports as they were;
and a quick render with ``--jobs 2`` gives the verdicts and the claims ledger of one with
``--jobs 1`` (on the quick notebooks, :data:`CHEAP`).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from cli_fork import run_cli
from cli_signals import ended, stopped_by
from tests.conftest import TEST_JVM_OPTION
from staleness_lab.report_jobs import Cancelled, longest_first, run_jobs
from staleness_lab.reports import TYPICAL_SECONDS, expected_seconds, notebooks_dir, page_path

REPO = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).with_name("staleness-lab")
#: Seconds for a notebook kernel to start (Python, the package's imports) on a loaded machine.
KERNELS_START_S = 180.0
#: From the signal to the exit: an interrupted cell and the kernel's shutdown, at most the grace
#: period (10 s) and then the killed kernels' clean-up; ten times that for a loaded machine.
STOPPED_WITHIN = 120.0


# --- the pool ---------------------------------------------------------------------------------


def test_run_jobs_runs_jobs_items_at_once_in_the_order_given() -> None:
    both = threading.Barrier(2, timeout=30)  # passes only when two items run at the same time
    began: list[str] = []

    def work(item: str, cancel: threading.Event) -> str:
        began.append(item)
        if item in ("a", "b"):
            both.wait()
        return item.upper()

    results = run_jobs(["a", "b", "c", "d"], work, 2)
    assert results == {"a": "A", "b": "B", "c": "C", "d": "D"}
    assert set(began[:2]) == {"a", "b"} and began[2:] in (["c", "d"], ["d", "c"])


def test_run_jobs_stops_the_others_and_raises_the_first_error() -> None:
    stopped: list[str] = []

    def work(item: str, cancel: threading.Event) -> str:
        if item == "bad":
            time.sleep(0.2)
            raise ValueError("bad item")
        if not cancel.wait(30):
            return item
        stopped.append(item)
        raise Cancelled(item)

    with pytest.raises(ValueError, match="bad item"):
        run_jobs(["slow", "bad", "never"], work, 2)
    assert stopped == ["slow"]  # cancelled, and "never" was not started


def test_longest_first_keeps_ties_in_order() -> None:
    assert longest_first(["a", "b", "c", "d"], {"a": 1, "b": 5, "c": 1, "d": 9}.__getitem__) == ["d", "b", "a", "c"]


def _page(out: Path, notebook: Path, profile: str, seconds: float) -> Path:
    """A page of ours as an earlier run left it (the JSON every rendered page carries)."""
    path = page_path(out, notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<html><head><script type="application/json" id="staleness-lab-report">'
                    f'{{"name": "{notebook.stem}", "status": "ok", "seconds": {seconds}, '
                    f'"provenance": {{"profile": "{profile}"}}}}</script></head><body></body></html>', encoding="utf-8")
    return path


def test_expected_seconds_are_the_earlier_pages_at_the_profile_else_the_typical_ones(tmp_path: Path) -> None:
    notebooks = sorted(notebooks_dir().glob("*.ipynb"))[:3]
    for k, nb in enumerate(notebooks):
        _page(tmp_path, nb, "quick", 10.0 + k)
    assert expected_seconds(notebooks, tmp_path, "quick") == {nb: 10.0 + k for k, nb in enumerate(notebooks)}
    typical = {nb: TYPICAL_SECONDS[nb.stem] for nb in notebooks}
    assert expected_seconds(notebooks, tmp_path, "standard") == typical  # other profile: not comparable
    _page(tmp_path, notebooks[0], "standard", 1.0)
    assert expected_seconds(notebooks, tmp_path, "quick") == typical  # one missing: every one typical


# --- the command --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_a_bad_jobs_value_is_one_line_naming_it(value: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli(["report", "--quick", "--jobs", value, "--out", out], cwd=tmp_path)
    shown = repr(value) if value == "x" else value
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [
        f"staleness-lab: error: --jobs: must be a whole number of notebooks at a time, at least 1, got {shown}"]
    assert not out.exists()


def test_only_takes_several_names_and_names_the_unknown_one(tmp_path: Path) -> None:
    from staleness_lab.errors import InputError
    from staleness_lab.reports import report_command

    with pytest.raises(InputError, match=r"^--only: no notebook named 'nope' \(available: 00-quickstart, "):
        report_command(quick=True, only=["00-quickstart", "nope"], profile="standard", out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _kernels(parent: int) -> list[int]:
    """The pids of ``parent``'s children that are Jupyter kernels."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"ipykernel" in cmdline:
            found.append(int(entry.name))
    return found


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.heavy(60)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_with_two_notebooks_in_flight_stops_both_kernels_and_leaves_the_earlier_reports(
        sig: signal.Signals, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    for nb in [*notebooks_dir().glob("*.ipynb"), *notebooks_dir().glob("teaching/*.ipynb")]:
        _page(out, nb, "standard", 1.0)  # another profile's: the typical order, the two longest first
    (out / "index.html").write_text("<html><head><title>staleness-lab reports</title></head></html>", encoding="utf-8")
    before = _tree(out)
    # SIGINT as a terminal gives it: a command started from a background shell job inherits it ignored
    with ended(subprocess.Popen([str(CLI), "report", "--quick", "--jobs", "2", "--out", str(out)], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))) as proc:
        deadline = time.monotonic() + KERNELS_START_S
        while len(kernels := _kernels(proc.pid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(kernels) == 2, f"two kernels expected in flight, found {kernels}"
        groups = [os.getpgid(k) for k in kernels]
        assert proc.pid not in groups  # each kernel leads a process group of its own (its Spark JVM joins it)
        time.sleep(5)  # into the notebooks' cells
        assert proc.poll() is None, "the report ended before the signal"
        stopped_by(proc, sig, STOPPED_WITHIN)
    assert not [g for g in groups if _group_alive(g)], "a kernel (or its Spark JVM) outlived the report"
    assert _tree(out) == before  # no page replaced, none removed, no temporary file


#: A page's line on stdout: the page, its seconds, its verdict line.
PAGE_LINE = re.compile(r"^(?P<page>.+[.]html)  [(][0-9.]+ s[)]  (?P<verdict>.*)$")


def _verdict_lines(stdout: str) -> list[tuple[str, str]]:
    """Each rendered page's name and verdict line, by name."""
    return sorted((Path(m["page"]).name, m["verdict"]) for m in map(PAGE_LINE.match, stdout.splitlines()) if m)


#: The notebooks the jobs-2-against-jobs-1 test renders: two quick ones (every notebook's quick
#: render is tested on its own, tests/reports/test_notebooks.py and
#: tests/widgets/test_teaching_notebooks.py), one of them with verdicts and claims, so two kernels
#: with Spark drivers run side by side and the ledger is compared. Two are all ``--jobs 2`` needs
#: to run at once; each more notebook costs a kernel and a Spark driver in both renders.
CHEAP = ("00-quickstart", "07-target-lags")


@pytest.mark.heavy(240)
def test_jobs_2_renders_the_verdicts_and_ledger_of_jobs_1(tmp_path: Path) -> None:
    # on the default JIT, as the report runs (tests/reports/test_notebook_spark_run.py says why)
    env = {**os.environ, "SPARK_SUBMIT_OPTS": os.environ.get("SPARK_SUBMIT_OPTS", "").replace(TEST_JVM_OPTION, "").strip()}
    ledgers, lines = {}, {}
    only = [arg for name in CHEAP for arg in ("--only", name)]
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs-{jobs}"
        # --out relative to the command's directory, as `make run` gives it: every page and the
        # index land there (papermill's cwd moved the whole process into notebooks/ while a
        # notebook ran, and another thread's pages went to notebooks/jobs-2/)
        proc = subprocess.run([str(CLI), "report", "--quick", "--jobs", jobs, *only, "--out", out.name], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert not (notebooks_dir() / out.name).exists()
        assert sorted(p.name for p in out.glob("*.html")) == sorted(f"{name}.html" for name in CHEAP) + ["index.html"]
        ledgers[jobs] = pd.read_csv(out / "claims.csv", keep_default_na=False).drop(columns=["margin"])
        lines[jobs] = _verdict_lines(proc.stdout)
    assert [page for page, _ in lines["1"]] == sorted(f"{name}.html" for name in CHEAP)
    assert set(ledgers["1"]["report"]) == {"07-target-lags"} and len(ledgers["1"]) >= 5
    pd.testing.assert_frame_equal(ledgers["2"], ledgers["1"])  # every claim, verdict, reason, reading, in one order
    assert lines["2"] == lines["1"]  # each page's verdict line

