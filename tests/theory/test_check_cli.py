"""``staleness-lab check``: its JSON keys, exit codes and one-line bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from staleness_lab.cli import main

WORKLOADS = Path(__file__).resolve().parents[2] / "data" / "workloads"
TOP_KEYS = {"status", "policy", "horizon", "seed", "tracks", "workload_sha256", "version", "summary", "X", "checks"}
RECORD_KEYS = {"claim", "theorem", "table", "bound", "observed", "preconditions_met", "holds", "preconditions", "terms",
               "ratio", "window", "witness"}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_json_on_e5(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", str(WORKLOADS / "bateni-e5.yaml"), "--policy", "fifo", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert TOP_KEYS <= set(data) and data["status"] == "ok" and data["policy"] == "fifo"
    assert data["X"] == pytest.approx(3087.4) and "X_reason" not in data
    assert len(data["workload_sha256"]) == 64 and data["tracks"] == 4
    claims = {r["claim"]: r for r in data["checks"]}
    for record in data["checks"]:
        assert RECORD_KEYS <= set(record)
        for pre in record["preconditions"]:
            assert set(pre) == {"name", "met", "why"}
    assert claims["penalty-ratio"]["holds"] is True
    assert claims["claim-3.5"]["holds"] is False  # erratum A1/E5, a diagnostic: exit 0 all the same
    assert data["summary"]["failed"] == 0 and data["summary"]["diagnostics_failed"] >= 1


def test_check_on_a_periodic_workload_has_null_x_with_a_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(WORKLOADS / "golab-table2.yaml"), "--policy", "edf-p", "--horizon", "300",
                       "--json")
    data = json.loads(out)
    assert code == 0 and data["X"] is None and "periodic" in data["X_reason"] and data["horizon"] == 300


def test_check_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(WORKLOADS / "bateni-e1.yaml"), "--policy", "fifo")
    assert code == 0 and "penalty-ratio" in out and "X 19" in out


@pytest.mark.parametrize(
    ("args", "field"),
    [
        pytest.param(["--policy", "nope"], "policy", id="unknown-policy"),
        pytest.param(["--policy", "fifo", "--option", "k=1"], "--option k", id="unknown-option"),
        pytest.param(["--policy", "fifo", "--tracks", "0"], "tracks", id="tracks-zero"),
        pytest.param(["--policy", "fifo", "--horizon", "-1"], "horizon", id="horizon-negative"),
    ],
)
def test_check_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], field: str) -> None:
    code, out, err = run(capsys, "check", str(WORKLOADS / "bateni-e1.yaml"), *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"staleness-lab: error: {field}")


def test_check_bad_workload_names_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = yaml.safe_load((WORKLOADS / "bateni-e1.yaml").read_text())
    data["tables"][0]["arrivals"] = [4, 3]
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(data))
    code, _, err = run(capsys, "check", str(path), "--policy", "fifo")
    assert code == 2 and "tables[0].arrivals[1]" in err and "increase" in err
