"""``staleness-lab budget``: the JSON keys the issue names, the human table, and bad input as one
line on stderr with exit status 2 (the real command line, forked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cli_fork import run_cli

TABLES = [{"name": "a", "period": 10, "alpha": 1, "beta": 0.1, "priority": 1, "target_lag": 60},
          {"name": "b", "period": 20, "alpha": 2, "beta": 0.1, "priority": 1, "target_lag": "downstream"},
          {"name": "v", "sources": ["a", "b"], "alpha": 1, "beta": 0, "priority": 1, "target_lag": 80}]


def workload(tmp_path: Path, tables: list[dict] = TABLES, **keys: object) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump({"tracks": 1, "horizon": 400, "seed": 3, **keys, "tables": tables}))
    return path


def test_json_has_the_public_keys(tmp_path: Path):
    proc = run_cli(["budget", workload(tmp_path), "--json", "--tracks", "2"])
    assert proc.returncode == 0 and proc.stderr == ""
    out = json.loads(proc.stdout)
    assert {"tables", "min_tracks", "blame", "policy", "tracks"} <= set(out)
    assert (out["policy"], out["tracks"], out["horizon"], out["seed"]) == ("gedf-np", 2, 400, 3)
    assert [t["table"] for t in out["tables"]] == ["a", "b", "v"]
    for row in out["tables"]:
        assert {"table", "target", "bound", "preconditions", "verdict", "observed_worst"} <= set(row)
        assert row["verdict"] in ("guaranteed", "not guaranteed", "unknown")
        assert row["observed_worst"] <= row["bound"]
    assert out["tables"][1]["target"] == 80  # downstream: the tightest reader's


def test_the_human_table_names_every_verdict_and_min_tracks(tmp_path: Path):
    proc = run_cli(["budget", workload(tmp_path), "--policy", "aus"])
    assert proc.returncode == 0 and proc.stderr == ""
    assert "lag budget under aus on 1 tracks" in proc.stdout and "min_tracks:" in proc.stdout
    assert "horizon 400, seed 3" in proc.stdout and "preconditions:" in proc.stdout


@pytest.mark.parametrize(("args", "keys", "tables", "where"), [
    (["--policy", "fifo"], {}, TABLES, "--policy"),
    (["--tracks", "0"], {}, TABLES, "--tracks"),
    (["--tracks", "x"], {}, TABLES, "--tracks"),
    ([], {}, [{**t, "target_lag": None} for t in TABLES], "target_lag"),
    ([], {}, [{**t, "target_lag": "downstream" if t["name"] == "v" else None} for t in TABLES], "target_lag"),
    ([], {}, [{**TABLES[0], "target_lag": -1}, *TABLES[1:]], "target_lag"),
])
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, args: list[str], keys: dict, tables: list[dict],
                                            where: str):
    tables = [{k: v for k, v in t.items() if v is not None} for t in tables]
    proc = run_cli(["budget", workload(tmp_path, tables, **keys), *args])
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and where in proc.stderr, proc.stderr
