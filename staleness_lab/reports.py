"""``staleness-lab report``: execute the notebooks with papermill, render offline HTML reports.

Each ``notebooks/*.ipynb`` runs in a fresh kernel with cwd ``notebooks/`` and
the parameters ``profile`` (``quick`` with ``--quick``) and ``cache_dir`` (``--cache``), ``--jobs``
of them at once, the longest first (:mod:`staleness_lab.report_jobs`), then becomes ``<out>/<name>.html``
through nbconvert's lab template, adapted so the page needs no network: no require.js, MathJax,
mermaid or widget scripts from a CDN, and plotly.js (from the installed plotly package) inline
once in the head. Figures must be displayed with
:func:`staleness_lab.viz.use_offline_renderer`, whose HTML output expects that copy.

A notebook states its conclusion with :func:`record_verdict`, a paper's report its verdict
table and conclusion with :func:`record_verdicts`; ``<out>/index.html`` links every
report with its verdict, the claims ledger of every report's verdicts (:mod:`staleness_lab.ledger`,
also written as ``<out>/claims.csv``) and the run's provenance (version, git commit, profile, Python, NumPy,
pandas and PySpark versions, date). Each page also carries its verdict and provenance as inert JSON at the top of
its head (``<script type="application/json" id="staleness-lab-report">``), so an ``--only`` run
still indexes the reports of earlier runs.

The teaching notebooks (``notebooks/teaching/*.ipynb``) become offline handouts,
``<out>/teaching/<name>.html``, run with their own defaults in handout mode
(:mod:`staleness_lab.handouts`): each explorer's first view plus a precomputed plotly slider over
its main control. The index lists them under their own heading; ``--only`` takes their names too.

Failures: a notebook that raises gets no report (a stale one is removed), the others still run,
the index says ``failed: <first line of the error>`` and the exit status is 1. A notebook
parameter of the wrong type or value (:class:`~staleness_lab.notebook_params.NotebookParameterError`
in the notebook) stops the command with one line and exit status 2, leaving no partial file.
Every file is written under a temporary name and renamed into place. Ctrl-C or SIGTERM stops
every running kernel (:mod:`staleness_lab.report_jobs`) and writes nothing more: the pages of
earlier runs and the index stay as they were. ``--out`` follows the rule of
:mod:`staleness_lab.outputs` (:func:`check_report_dir`): a new or empty directory, or one holding
only pages this program rendered; anything else, or a symbolic link, is refused before any
notebook runs.
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any

from staleness_lab.errors import InputError, shown
from staleness_lab.handouts import TEACHING, handout_source, is_teaching, teaching_notebooks, without_handout_cell

#: The mime type of a verdict in a notebook's outputs (its data: ``{"verdict": "..."}``).
VERDICT_MIMETYPE = "application/x.staleness-lab.verdict+json"
#: The mime type of a report's verdict table (its data: ``{"paper": "...", "claims": [row, ...]}``).
CLAIMS_MIMETYPE = "application/x.staleness-lab.claims+json"
#: The ledger's tidy copy in a report directory.
CLAIMS_CSV = "claims.csv"
#: The kernelspec the notebooks name; reports fall back to ``python3`` when it is not installed.
KERNEL_NAME = "staleness-lab"
#: The exception the notebooks' parameter check raises (see ``staleness_lab.notebook_params``).
PARAMETER_ERROR = "NotebookParameterError"

_PLOTLY_JS_SLOT = "<!-- staleness-lab: plotly.js -->"

# nbconvert's lab template (index.html.j2) with every network script removed and one slot for
# plotly.js; code cells are folded under a <details> so the prose and figures lead.
_PAGE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}
<script type="application/json" id="staleness-lab-report">{{ resources.sl_meta }}</script>
""" + _PLOTLY_JS_SLOT + """
{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block extra_css %}
<style type="text/css">
details.sl-code > summary { cursor: pointer; color: #666; font-size: 0.85em; margin: 0.3em 0 0.3em 0.5em; }
p.sl-provenance { color: #666; font-size: 0.85em; margin: 1em 1.5em 0 1.5em; }
</style>
{% endblock extra_css %}
{% block input_group -%}
<details class="sl-code"><summary>code</summary>
{{ super() }}
</details>
{%- endblock input_group %}
{%- block body_header -%}
{{ super() }}
<p class="sl-provenance">{{ resources.sl_provenance | e }} &middot; <a href="{{ resources.sl_index | e }}">all reports</a></p>
{%- endblock body_header -%}
"""


# --- inside the notebooks ---------------------------------------------------------------------


def record_verdict(text: str) -> None:
    """Display a notebook's one-line conclusion; the report index shows it beside the link."""
    from IPython.display import display

    line = " ".join(str(text).split())
    display(
        {
            VERDICT_MIMETYPE: {"verdict": line},
            "text/html": f'<p class="sl-verdict"><strong>Verdict:</strong> {html.escape(line)}</p>',
            "text/plain": f"Verdict: {line}",
        },
        raw=True,
    )


def record_verdicts(table: Any, paper: str, summary: str) -> None:
    """Display a paper's verdict table (each row anchored for the claims ledger's link) and its
    one-line conclusion ``summary`` (its ``summary_line`` of the same table); the rows go to the
    ledger as the report's claims of ``paper``. A table outside the verdict vocabulary is refused."""
    from IPython.display import display

    from staleness_lab.experiments.verdicts import check_table
    from staleness_lab.ledger import verdict_table_html

    check_table(table)
    rows = [{k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}  # NaN: not JSON
            for row in table.astype(object).to_dict("records")]
    display({CLAIMS_MIMETYPE: {"paper": paper, "claims": rows}, "text/html": verdict_table_html(table),
             "text/plain": f"{len(rows)} verdicts on {paper}"}, raw=True)
    record_verdict(summary)


def read_claims(nb: Any) -> dict[str, Any] | None:
    """The last verdict table recorded in an executed notebook (``{"paper", "claims"}``), if any."""
    found = None
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if CLAIMS_MIMETYPE in data:
                found = {"paper": str(data[CLAIMS_MIMETYPE]["paper"]), "claims": list(data[CLAIMS_MIMETYPE]["claims"])}
    return found


def read_verdict(nb: Any) -> str | None:
    """The last verdict recorded in an executed notebook's outputs, if any."""
    found = None
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if VERDICT_MIMETYPE in data:
                found = str(data[VERDICT_MIMETYPE].get("verdict", ""))
    return found


# --- provenance -------------------------------------------------------------------------------


def report_provenance(profile: str) -> dict[str, Any]:
    """:func:`staleness_lab.provenance.provenance` of this run plus its ``profile``; PySpark's
    version is the installed one, since Spark runs in the notebooks' kernels, not here."""
    from staleness_lab.provenance import provenance

    info = provenance({"profile": profile})
    if info.get("pyspark") is None:
        try:
            info["pyspark"] = version("pyspark")
        except PackageNotFoundError:
            info["pyspark"] = "not installed"
    if info.get("git_commit") is None:
        info["git_commit"] = "none (not a git checkout)"
    return info


def _page_line(prov: dict[str, Any]) -> str:
    keys = ("version", "profile", "git_commit", "pyspark", "python")
    return " · ".join(f"{'staleness-lab' if k == 'version' else k} {prov.get(k)}" for k in keys)


# --- execution and rendering ------------------------------------------------------------------


def kernel_name() -> str:
    """``staleness-lab`` when that kernelspec is installed, else ``python3``."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        installed = KernelSpecManager().find_kernel_specs()
    except Exception:  # noqa: BLE001 - a broken Jupyter config must not hide the fallback
        installed = {}
    return KERNEL_NAME if KERNEL_NAME in installed else "python3"


def notebooks_dir() -> Path:
    """The checkout's ``notebooks/`` (reports need a source checkout)."""
    from staleness_lab.provenance import project_root

    root = project_root()
    if root is None or not (root / "notebooks").is_dir():
        raise InputError("report", "needs a source checkout: notebooks/ not found next to the package")
    return root / "notebooks"


def render_html(nb: Any, title: str, provenance_line: str, meta: dict[str, Any] | None = None,
                index_href: str = "index.html") -> str:
    """An executed notebook as one offline HTML page (plotly.js inline once, nothing from the
    network, code folded); ``meta`` goes into the page as inert JSON (see :func:`read_page_meta`),
    ``index_href`` is where its "all reports" link points."""
    from markupsafe import Markup
    from nbconvert import HTMLExporter

    from staleness_lab.viz.offline import plotly_js_script, strip_network_assets

    exporter = HTMLExporter(
        template_name="lab", raw_template=_PAGE_TEMPLATE, exclude_input_prompt=True, exclude_output_prompt=True
    )
    meta_json = json.dumps(meta or {}, ensure_ascii=True).replace("</", "<\\/")
    resources = {"metadata": {"name": title}, "sl_provenance": provenance_line, "sl_meta": Markup(meta_json),
                 "sl_index": index_href}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    body = strip_network_assets(body)
    if body.count(_PLOTLY_JS_SLOT) != 1:
        raise RuntimeError("the report template lost its plotly.js slot")
    return body.replace(_PLOTLY_JS_SLOT, plotly_js_script())


def _write_atomic(path: Path, text: str) -> None:
    """Write ``path`` under a temporary name in its directory, then rename it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else ""


@dataclass
class Outcome:
    """One notebook's entry in the index."""

    name: str
    status: str  # "ok", "failed", "earlier" (rendered by an earlier run) or "not run"
    verdict: str | None = None
    error: str | None = None
    seconds: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    claims: dict[str, Any] | None = None  # its verdict table (:func:`read_claims`), for the ledger


class _ParameterError(Exception):
    """A notebook rejected its parameters (exit status 2)."""

    def __init__(self, notebook: str, message: str) -> None:
        super().__init__(f"{notebook}: {message}")


class _NotebookFailed(Exception):
    """A cell raised; the message is the first line of ``ename: evalue``."""


def _kernel_manager_class(kernel_stderr: IO[bytes] | None = None) -> type:
    """nbclient's kernel manager, provisioning CurveZMQ keys when pyzmq supports them, so the
    kernel's channels are encrypted (and ipykernel does not warn about plain TCP), and tracked
    (:func:`staleness_lab.report_jobs.track_kernel`) so an interrupted report stops its kernel.
    ``kernel_stderr``: a file for the kernel process's own stderr (what it writes outside a
    cell's output, such as ipykernel's notice of an interrupt that came between two cells);
    None leaves it on this process's stderr."""
    import zmq
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    from staleness_lab.report_jobs import track_kernel

    class TrackedKernelManager(AsyncKernelManager):
        """Known to :mod:`staleness_lab.report_jobs`, which stops its kernel on an interruption."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            track_kernel(self)

        async def start_kernel(self, **kw: Any) -> None:
            if kernel_stderr is not None:
                kw.setdefault("stderr", kernel_stderr)  # a Popen keyword of the kernel's launch
            await super().start_kernel(**kw)

    if not zmq.has("curve"):
        return TrackedKernelManager

    class EncryptedKernelManager(TrackedKernelManager):
        @default("transport_encryption")
        def _encrypt_when_supported(self) -> str:
            return "auto"  # when the kernelspec declares support (ipykernel's does)

    return EncryptedKernelManager


def execute_notebook(path: Path, parameters: dict[str, Any], *, progress: bool = True, source: Any = None,
                     kernel_stderr: IO[bytes] | None = None) -> Any:
    """Run a notebook with papermill (nothing saved) in :func:`kernel_name`'s kernel, with cwd
    its directory; the executed notebook, or papermill's ``PapermillExecutionError``.
    ``source``: the notebook to run instead of the file's own cells (an edited copy);
    ``kernel_stderr``: where the kernel process's own stderr goes (:func:`_kernel_manager_class`).
    The kernel gets its directory from nbclient's ``resources``, not from papermill's ``cwd``,
    which changes this whole process's working directory for the run: with notebooks running in
    several threads (``report --jobs``) a relative path of the command then pointed into
    ``notebooks/``, and two overlapping runs could leave it there."""
    import papermill as pm

    return pm.execute_notebook(
        str(path) if source is None else source, None, parameters=parameters, kernel_name=kernel_name(),
        progress_bar=progress, log_output=False, request_save_on_cell_execute=False,
        kernel_manager_class=_kernel_manager_class(kernel_stderr), resources={"metadata": {"path": str(path.parent)}},
    )


def _execute(path: Path, parameters: dict[str, Any], source: Any = None, progress: bool = True) -> Any:
    """Run a notebook for a page. The kernel's own stderr is kept apart: several kernels run at
    once and the command owes one line when stopped; a failure the cells do not explain (a
    kernel that died) names its last line."""
    from papermill.exceptions import PapermillExecutionError

    with tempfile.TemporaryFile() as kernel_stderr:
        try:
            return execute_notebook(path, parameters, source=source, progress=progress, kernel_stderr=kernel_stderr)
        except PapermillExecutionError as err:
            if err.ename == PARAMETER_ERROR:
                raise _ParameterError(path.name, _first_line(err.evalue)) from None
            raise _NotebookFailed(_first_line(f"{err.ename}: {err.evalue}")) from None
        except Exception as err:
            kernel_stderr.seek(0)
            said = [line for line in kernel_stderr.read().decode(errors="replace").splitlines() if line.strip()]
            last = f" (the kernel's last words: {said[-1].strip()[:300]})" if said else ""
            raise _NotebookFailed(f"{type(err).__name__}: {_first_line(str(err))}{last}") from None


def page_path(out: Path, notebook: Path) -> Path:
    """Where ``notebook``'s page goes: ``<out>/<name>.html``, a teaching notebook's handout
    ``<out>/teaching/<name>.html``."""
    return (out / TEACHING if is_teaching(notebook) else out) / f"{notebook.stem}.html"


def _run_one(path: Path, out: Path, parameters: dict[str, Any], prov: dict[str, Any], cancel: threading.Event,
             progress: bool = True) -> Outcome:
    """Run one notebook and write its page; a teaching notebook runs with its own defaults in
    handout mode (:mod:`staleness_lab.handouts`). Once ``cancel`` is set (the command is
    stopping) it writes and removes nothing: :class:`~staleness_lab.report_jobs.Cancelled`.
    ``progress``: papermill's bar over the cells."""
    from staleness_lab.report_jobs import Cancelled

    name = path.stem
    target = page_path(out, path)
    handout = is_teaching(path)
    start = time.perf_counter()
    try:
        if handout:
            executed = without_handout_cell(_execute(path, {}, source=handout_source(path), progress=progress))
        else:
            executed = _execute(path, parameters, progress=progress)
        outcome = Outcome(name, "ok", verdict=read_verdict(executed), seconds=time.perf_counter() - start, provenance=prov,
                          claims=read_claims(executed))
        page_prov = {k: v for k, v in prov.items() if k != "created_utc"}  # the date goes in the index only
        page = render_html(executed, name, _page_line(page_prov), meta={**asdict(outcome), "provenance": page_prov},
                           index_href="../index.html" if handout else "index.html")
    except _ParameterError:
        raise
    except Exception as err:  # noqa: BLE001 - any failure is this notebook's, the others go on
        if cancel.is_set():  # its kernel was stopped: not a failure of the notebook
            raise Cancelled(name) from None
        message = str(err) if isinstance(err, _NotebookFailed) else f"{type(err).__name__}: {_first_line(str(err))}"
        target.unlink(missing_ok=True)  # no stale report beside the failure
        return Outcome(name, "failed", error=message, seconds=time.perf_counter() - start, provenance=prov)
    if cancel.is_set():
        raise Cancelled(name)
    target.parent.mkdir(exist_ok=True)
    _write_atomic(target, page)
    return outcome


_PAGE_META = re.compile(r'<script\b[^>]*\bid="staleness-lab-report"[^>]*>(.*?)</script>', re.DOTALL)


def read_page_meta(page: Path) -> dict[str, Any] | None:
    """The verdict and provenance a report page carries, or None (not one of ours, unreadable)."""
    try:
        with page.open(encoding="utf-8") as fh:
            head = fh.read(1 << 18)  # the JSON sits at the top of <head>, before plotly.js
    except OSError:
        return None
    match = _PAGE_META.search(head)
    if match is None:
        return None
    try:
        meta = json.loads(match.group(1))
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def _earlier(path: Path, out: Path) -> Outcome:
    name = path.stem
    meta = read_page_meta(page_path(out, path))
    if meta is None:
        return Outcome(name, "not run")
    claims = meta.get("claims")
    return Outcome(name, "earlier", verdict=meta.get("verdict"), seconds=meta.get("seconds"),
                   provenance=dict(meta.get("provenance") or {}), claims=claims if isinstance(claims, dict) else None)


def _index_rows(outcomes: list[Outcome], folder: str = "") -> str:
    """One table row per notebook: its link (pages under ``folder``), verdict or failure, time."""
    e = html.escape
    rows = []
    for o in outcomes:
        link = f'<a href="{e(folder + o.name)}.html">{e(o.name)}</a>' if o.status in ("ok", "earlier") else e(o.name)
        if o.status == "failed":
            what = f'<span class="failed">failed: {e(o.error or "")}</span>'
        elif o.status == "not run":
            what = '<span class="muted">not run yet</span>'
        else:
            what = e(o.verdict) if o.verdict else '<span class="muted">no verdict recorded</span>'
            if o.status == "earlier":
                earlier = ", ".join(f"{k} {o.provenance[k]}" for k in ("profile", "git_commit") if k in o.provenance)
                what += f' <span class="muted">(earlier run{": " if earlier else ""}{e(earlier)})</span>'
        took = f"{o.seconds:.1f} s" if o.seconds is not None else ""
        rows.append(f"<tr><td>{link}</td><td>{what}</td><td class=\"num\">{took}</td></tr>")
    return chr(10).join(rows)


def claims_ledger(outcomes: list[Outcome]) -> Any:
    """The claims ledger (:func:`staleness_lab.ledger.ledger`) of the reports with a page (run
    now or earlier) and a recorded verdict table, in the index's order."""
    import pandas as pd

    from staleness_lab.experiments.verdicts import COLUMNS
    from staleness_lab.ledger import ledger

    return ledger({o.name: (o.claims["paper"], pd.DataFrame(o.claims["claims"], columns=COLUMNS))
                   for o in outcomes if o.claims is not None and o.status in ("ok", "earlier")})


def render_index(outcomes: list[Outcome], prov: dict[str, Any], handouts: list[Outcome] | None = None,
                 claims: Any = None) -> str:
    """The index page: one row per notebook (link, verdict or failure, time), the claims ledger
    (``claims``, :func:`claims_ledger`; none when empty), one row per teaching handout, and
    provenance."""
    from staleness_lab.ledger import ledger_html

    e = html.escape
    ledger_section = "" if claims is None or not len(claims) else ledger_html(claims)
    teaching = "" if not handouts else f"""<h2>Teaching handouts</h2>
<p class="muted">The teaching notebooks offline: each explorer's first view and a slider over its main control,
precomputed (the live explorers: <code>staleness-lab teach</code>).</p>
<table>
<thead><tr><th>handout</th><th>verdict</th><th>time</th></tr></thead>
<tbody>
{_index_rows(handouts, TEACHING + "/")}
</tbody>
</table>
"""
    facts = "".join(f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in prov.items())
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>staleness-lab reports</title>
{_INDEX_MARK}{{"producer": "staleness-lab", "kind": "report-index", "version": 1}}</script>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }}
table {{ border-collapse: collapse; width: 100%; margin-bottom: 2em; }}
th, td {{ text-align: left; padding: 0.4em 0.8em; border-bottom: 1px solid #ddd; vertical-align: top; }}
td.num {{ text-align: right; white-space: nowrap; }}
table.ledger {{ font-size: 0.85em; }}
.v-holds {{ color: #1b5e20; }}
.v-differs, .v-finding {{ color: #b00020; }}
.v-undecided {{ color: #777; }}
.failed {{ color: #b00020; }}
.muted {{ color: #777; }}
</style>
</head>
<body>
<h1>staleness-lab reports</h1>
<table>
<thead><tr><th>report</th><th>verdict</th><th>time</th></tr></thead>
<tbody>
{_index_rows(outcomes)}
</tbody>
</table>
{ledger_section}{teaching}<h2>Provenance of this run</h2>
<table class="provenance">{facts}</table>
</body>
</html>
"""


_INDEX_MARK = '<script type="application/json" id="staleness-lab-index">'
_LEGACY_INDEX = "<title>staleness-lab reports</title>"


def claims_csv_is_ours(path: Path) -> bool:
    """True when ``path`` is a regular file (not a link) named ``claims.csv`` whose first line is
    the ledger's header, as :func:`write_claims_csv` writes it."""
    from staleness_lab.ledger import LEDGER_COLUMNS

    if path.name != CLAIMS_CSV or path.is_symlink() or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as fh:
            return fh.readline().rstrip("\r\n") == ",".join(LEDGER_COLUMNS)
    except (OSError, ValueError):
        return False


def write_claims_csv(out: Path, claims: Any) -> Path:
    """The ledger's rows as ``<out>/claims.csv`` (tidy: one row per verdict, a header line),
    written under a temporary name and renamed into place."""
    path = out / CLAIMS_CSV
    _write_atomic(path, claims.to_csv(index=False))
    return path


def page_is_ours(path: Path) -> bool:
    """True when ``path`` is a regular file (not a link) this program rendered: a report page
    carrying its JSON (:func:`read_page_meta`), or the index (its marker, or the title an
    earlier version wrote)."""
    if path.is_symlink() or not path.is_file() or path.suffix != ".html":
        return False
    if path.name != "index.html":
        return read_page_meta(path) is not None
    try:
        with path.open(encoding="utf-8") as fh:
            head = fh.read(1 << 16)
    except (OSError, ValueError):
        return False
    return _INDEX_MARK in head or _LEGACY_INDEX in head


def _report_stranger(directory: Path, handouts: bool = True) -> str | None:
    """The first entry of a report directory that is not ours: besides our pages and a
    ``.gitkeep``, a ``teaching/`` folder (not a link) holding only our handout pages."""
    for entry in sorted(directory.iterdir()):
        if entry.name == ".gitkeep" and entry.is_file() and not entry.is_symlink():
            continue
        if handouts and entry.name == TEACHING and entry.is_dir() and not entry.is_symlink():
            inner = _report_stranger(entry, handouts=False)
            if inner is None:
                continue
            return f"{TEACHING}/{inner}"
        if not page_is_ours(entry) and not (handouts and claims_csv_is_ours(entry)):
            return entry.name
    return None


def check_report_dir(out: Path) -> None:
    """The rule of :mod:`staleness_lab.outputs` for ``report --out`` (pages in it are replaced):
    absent, empty, or a directory holding only pages this program rendered (:func:`page_is_ours`),
    a ``.gitkeep`` and a ``teaching/`` folder of handouts it rendered; a symbolic link, a file, a device, a FIFO or a directory with anything
    else is refused before any notebook runs."""
    from staleness_lab.outputs import check_output_directory

    check_output_directory(Path(out), "--out", _report_stranger,
                           hint="give a new or empty directory or an earlier report --out directory")


#: Seconds of each notebook at the standard profile on 2 cores, from one render with ``--jobs 2``
#: (load 4-6 from the render itself; report 06 then ran Table 6 on two seeds, about 50 s less):
#: only their order matters, :func:`expected_seconds` falls back on it when the output directory
#: has no earlier page of every notebook at the run's profile. A notebook not listed counts as longest.
TYPICAL_SECONDS = {
    "05-intermittent-on-spark": 940.0, "04-intermittent-queries": 540.0, "06-olston-async-workflows": 510.0,
    "03-bateni-staleness-stretch": 265.0, "01-golab-scalable-scheduling": 100.0, "07-target-lags": 30.0,
    "02-leontyev-aus": 25.0, "00-quickstart": 20.0,
    "01-what-is-staleness": 5.0, "02-priorities-and-partitioning": 5.0, "03-recovering-from-an-outage": 5.0,
    "04-batching-against-deadlines": 5.0,
}


def expected_seconds(notebooks: list[Path], out: Path, profile: str) -> dict[Path, float]:
    """How long each notebook is expected to take, to start the longest first: the seconds of
    its earlier page in ``out`` when every one of ``notebooks`` has one rendered at ``profile``,
    else :data:`TYPICAL_SECONDS` (a notebook not listed there counts as longest)."""
    earlier = {}
    for path in notebooks:
        meta = read_page_meta(page_path(out, path)) or {}
        seconds, prov = meta.get("seconds"), meta.get("provenance")
        if isinstance(prov, dict) and prov.get("profile") == profile and isinstance(seconds, (int, float)):
            earlier[path] = float(seconds)
    if len(earlier) == len(notebooks):
        return earlier
    longest = max(TYPICAL_SECONDS.values())
    return {path: TYPICAL_SECONDS.get(path.stem, 2 * longest) for path in notebooks}


def report_command(quick: bool, only: str | Sequence[str] | None, profile: str, out: Path, cache: Path | None = None,
                   jobs: int | str | None = None) -> int:
    """Run the notebooks (all, or those ``only`` names) and write the reports; the exit status (0, 1 when a notebook failed,
    2 for a bad notebook parameter). ``cache``: a directory where the notebooks reuse and store
    sweep rows (keyed by the code, so an edit never reuses a stale row); ``None`` recomputes.
    ``jobs``: notebooks rendered at once, each in its own kernel, longest first
    (:mod:`staleness_lab.report_jobs`; default :func:`~staleness_lab.report_jobs.default_jobs`);
    anything but a whole number >= 1 is refused naming ``--jobs``."""
    from tqdm import tqdm

    from staleness_lab.report_jobs import default_jobs, longest_first, run_jobs

    jobs = default_jobs() if jobs is None else jobs
    if type(jobs) is not int or jobs < 1:
        raise InputError("--jobs", f"must be a whole number of notebooks at a time, at least 1, got {shown(jobs)}")
    nb_dir = notebooks_dir()
    available = sorted(nb_dir.glob("*.ipynb"))
    if not available:
        raise InputError("report", f"no notebooks in {nb_dir.name}/")
    teaching = teaching_notebooks(nb_dir)
    chosen = available + teaching
    if only is not None:
        wanted = [only] if isinstance(only, str) else list(only)
        for name in wanted:
            if not any(name in (p.stem, p.name) for p in chosen):
                names = ", ".join(p.stem for p in chosen)
                raise InputError("--only", f"no notebook named {name!r} (available: {names})")
        chosen = [p for p in chosen if p.stem in wanted or p.name in wanted]
    run_profile = "quick" if quick else profile
    check_report_dir(out)
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError("--out", f"cannot create directory {str(out)!r}: {err.strerror or err}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise InputError("--out", f"directory {str(out)!r} is not writable")
    prov = report_provenance(run_profile)
    # the kernels run in notebooks/: hand them an absolute cache path
    parameters = {"profile": run_profile, "cache_dir": "" if cache is None else str(cache.resolve())}
    expected = expected_seconds(chosen, out, run_profile)
    running: list[str] = []
    with tqdm(total=len(chosen), desc="notebooks", unit="notebook", file=sys.stderr, disable=None) as bar:

        def started(path: Path) -> None:
            running.append(path.stem)
            bar.set_postfix_str(", ".join(running))

        def finished(path: Path, outcome: Outcome) -> None:
            running.remove(path.stem)
            bar.set_postfix_str(", ".join(running))
            bar.update()

        try:  # one notebook at a time keeps papermill's bar over its cells; several would interleave
            results = run_jobs(longest_first(chosen, expected.__getitem__),
                               lambda path, cancel: _run_one(path, out, parameters, prov, cancel, progress=jobs == 1),
                               jobs, started=started, finished=finished)
        except _ParameterError as err:
            bar.close()
            if created and not any(out.iterdir()):
                out.rmdir()
            print(f"staleness-lab: error: {err}", file=sys.stderr)
            return 2
    outcomes = [results.get(p) or _earlier(p, out) for p in available]
    handouts = [results.get(p) or _earlier(p, out) for p in teaching]
    from staleness_lab.experiments.verdicts import counts_text, verdict_counts

    claims = claims_ledger(outcomes)
    csv_path = write_claims_csv(out, claims)
    _write_atomic(out / "index.html", render_index(outcomes, prov, handouts, claims))
    for path in chosen:
        o = results[path]
        if o.status == "ok":
            print(f"{page_path(out, path)}  ({o.seconds:.1f} s)  {o.verdict or 'no verdict recorded'}")
        else:
            print(f"{o.name}: failed: {o.error}", file=sys.stderr)
    print(f"{out / 'index.html'}")
    print(f"{csv_path}  {len(claims)} claims of {claims['report'].nunique()} reports: "
          f"{counts_text(verdict_counts(claims))}")
    return 1 if any(o.status == "failed" for o in results.values()) else 0
