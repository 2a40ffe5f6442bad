"""The notebooks in ``notebooks/``: committed clean, parameterized, and runnable.

Every notebook executes through papermill with the quick parameters (``profile="quick"``, and
``runner="local"`` here to keep it fast; the Spark runner is exercised by the report test in
``test_html.py``). A parameter of the wrong type or value stops the notebook in its parameter
check with a message naming the parameter, and the ``report`` command turns that into one line
and exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from papermill.exceptions import PapermillExecutionError

from staleness_lab.notebook_params import NotebookParameterError, check, repo_file
from staleness_lab.reports import KERNEL_NAME, PARAMETER_ERROR, read_claims, report_command
from notebook_runs import NOTEBOOK_DIR, QUICK, SPARK_NOTEBOOK, check_quick_run, run

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS][:1] == ["00-quickstart.ipynb"]
    assert not (NOTEBOOK_DIR / ".gitkeep").exists()


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.stem)
def notebook(request: pytest.FixtureRequest) -> Path:
    return request.param


def _read(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return nb


def test_committed_without_outputs(notebook: Path) -> None:
    nb = _read(notebook)
    for k, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {k} has outputs"
            assert cell.execution_count is None, f"cell {k} has an execution count"
    assert "papermill" not in nb.metadata
    assert nb.metadata["kernelspec"]["name"] == KERNEL_NAME
    raw = json.loads(notebook.read_text(encoding="utf-8"))  # as committed: nbformat.read fills missing ids
    assert all("id" in cell for cell in raw["cells"]), "every cell has an id (else nbformat warns on every run)"


def test_parameters_cell_then_parameter_check(notebook: Path) -> None:
    nb = _read(notebook)
    tagged = [k for k, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    k = tagged[0]
    assert nb.cells[k].cell_type == "code"
    assert "profile" in nb.cells[k].source  # every notebook takes the report's profile
    following = nb.cells[k + 1]
    assert following.cell_type == "code" and "check(locals()" in following.source
    assert any(c.cell_type == "markdown" for c in nb.cells), "notebooks explain what the reader sees"


@pytest.mark.heavy(150)  # the other notebooks' runs: the file starts beside the Spark notebook's
@pytest.mark.parametrize("notebook", [p for p in NOTEBOOKS if p != SPARK_NOTEBOOK], ids=lambda p: p.stem)
def test_executes_with_quick_parameters(notebook: Path) -> None:
    """(The Spark notebook's run: ``test_notebook_spark_run.py``.)"""
    nb = check_quick_run(notebook)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    figures = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    if notebook.stem == "00-quickstart":
        assert len(figures) == 3  # Gantt, staleness curves, the sweep
        text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
        assert "6 points (quick profile, runner local)" in text and "events per point" in text
    if notebook.stem == "04-intermittent-queries":
        check_both_cost_sets(nb)


def check_both_cost_sets(nb: nbformat.NotebookNode) -> None:
    """Report 04 runs Figs. 6-11 on the synthetic set and the shipped SF 1 fits by default: each
    figure's verdict once per cost set, read under it, Figs. 7, 10 and 11 judged on the fits only,
    and the fits described from their own records (Spark version, date, machine)."""
    from staleness_lab.experiments.intermittent import sweeps as ix
    from staleness_lab.experiments.intermittent import verdicts as checks

    claims = {c["check"]: c for c in read_claims(nb)["claims"]}
    fits = ix.fits_reading(ix.MEASURED)
    assert {c["reading"] for c in claims.values()} == {"paper", ix.SYNTHETIC_READING, fits}
    for label in checks.SOURCES:
        for reading in (ix.SYNTHETIC_READING, fits):
            assert claims[checks.labelled(label, reading)]["reading"] == reading
    for label in ("fig7", "fig10", "fig10-batches", "fig11", "fig11-last"):
        assert claims[checks.labelled(label, ix.SYNTHETIC_READING)]["reason"] == "synthetic costs"
        assert claims[checks.labelled(label, fits)]["reason"] != "synthetic costs"
    about = ix.fits_provenance(ix.MEASURED).iloc[0]
    shown = "".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells for o in c.get("outputs", []))
    for part in (f"Spark {about['spark_version']}", str(about["date"]), str(about["cpu"])):
        assert part in shown, part


def test_cache_dir_keeps_the_rows_and_serves_the_rerun(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    parameters = {**QUICK, "cache_dir": str(cache)}

    def sweep_line(nb: nbformat.NotebookNode) -> str:
        text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.output_type == "stream")
        return next(line for line in text.splitlines() if "points (quick profile" in line)

    first = run(NOTEBOOK_DIR / "00-quickstart.ipynb", parameters)
    rows = sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file())
    assert len(rows) >= 6  # one file per row of the quick sweep (6 points)
    stamps = {p: (cache / p).stat().st_mtime_ns for p in rows}
    second = run(NOTEBOOK_DIR / "00-quickstart.ipynb", parameters)
    assert sweep_line(second) == sweep_line(first)
    assert {p: (cache / p).stat().st_mtime_ns for p in rows} == stamps  # served, not rewritten


def test_report_cache_that_is_a_file_is_bad_input(tmp_path: Path) -> None:
    import subprocess
    import sys

    not_a_dir = tmp_path / "cache"
    not_a_dir.write_text("")
    proc = subprocess.run([str(Path(sys.executable).with_name("staleness-lab")), "report", "--quick", "--cache", str(not_a_dir),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"staleness-lab: error: --cache: {not_a_dir}: exists and is not a directory"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("parameters", "name", "shown"),
    [({"profile": 3}, "profile", "got 3 (int)"), ({"profile": "quick", "runner": 1}, "runner", "got 1 (int)")],
    ids=["profile=3", "runner=1"],
)
def test_wrong_parameter_type_fails_naming_it(parameters: dict, name: str, shown: str) -> None:
    with pytest.raises(PapermillExecutionError) as caught:
        run(NOTEBOOK_DIR / "00-quickstart.ipynb", parameters)
    err = caught.value
    assert err.ename == PARAMETER_ERROR
    assert err.evalue.startswith(f"{name}: notebook parameter must be of type str")
    assert shown in err.evalue
    assert "check(locals()" in err.source  # it stopped in the check, before any work


def test_report_command_bad_parameter_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "reports"
    status = report_command(quick=False, only="00-quickstart", profile="huge", out=out)
    assert status == 2
    err = capsys.readouterr().err.replace("\r", "\n")
    lines = [line for line in err.splitlines() if line.startswith("staleness-lab")]
    assert lines == [
        "staleness-lab: error: 00-quickstart.ipynb: profile: notebook parameter must be one of "
        "'full', 'quick', 'standard', got 'huge'"
    ]
    assert not out.exists()  # created for the run, left empty: removed


def test_report_command_bad_parameter_leaves_existing_reports_alone(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    out.mkdir()
    earlier = "<html><head><title>staleness-lab reports</title></head></html>"  # an index of ours
    (out / "index.html").write_text(earlier)
    assert report_command(quick=False, only="00-quickstart", profile="huge", out=out) == 2
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]
    assert (out / "index.html").read_text() == earlier


def test_report_command_unknown_notebook(tmp_path: Path) -> None:
    from staleness_lab import InputError

    with pytest.raises(InputError, match=r"--only: no notebook named 'nope' \(available: 00-quickstart"):
        report_command(quick=True, only="nope", profile="standard", out=tmp_path)


# --- the parameter check and file lookup on their own -----------------------------------------

SPEC = {"profile": (str, {"quick", "standard", "full"}), "runner": (str, {"spark", "local"}), "master": (str, None)}


def test_check_accepts_good_parameters() -> None:
    check({"profile": "quick", "runner": "local", "master": "", "other": object()}, SPEC)
    check({"n": 3, "x": 2, "flag": True}, {"n": (int, None), "x": (float, None), "flag": (bool, None)})


@pytest.mark.parametrize(
    ("namespace", "message"),
    [
        ({"profile": 3, "runner": "spark", "master": ""},
         "profile: notebook parameter must be of type str (one of 'full', 'quick', 'standard'), got 3 (int)"),
        ({"profile": "huge", "runner": "spark", "master": ""},
         "profile: notebook parameter must be one of 'full', 'quick', 'standard', got 'huge'"),
        ({"profile": "quick", "runner": "spark", "master": None},
         "master: notebook parameter must be of type str, got None (NoneType)"),
        ({"profile": "quick", "runner": "spark"}, "master: notebook parameter is missing: expected str"),
    ],
)
def test_check_names_parameter_type_and_value(namespace: dict, message: str) -> None:
    with pytest.raises(NotebookParameterError) as caught:
        check(namespace, SPEC)
    assert str(caught.value) == message
    assert caught.value.field == message.split(":")[0]


def test_check_does_not_take_bool_for_a_number() -> None:
    with pytest.raises(NotebookParameterError, match="n: notebook parameter must be of type int, got True"):
        check({"n": True}, {"n": (int, None)})


def test_repo_file_found_from_the_notebooks_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(NOTEBOOK_DIR)
    assert repo_file("data/workloads/demo.yaml") == REPO / "data" / "workloads" / "demo.yaml"
    monkeypatch.chdir(tmp_path)  # outside the checkout: next to the package
    assert repo_file("data/workloads/demo.yaml") == REPO / "data" / "workloads" / "demo.yaml"
    from staleness_lab import InputError

    with pytest.raises(InputError, match="data/nope.yaml: not found"):
        repo_file("data/nope.yaml")
