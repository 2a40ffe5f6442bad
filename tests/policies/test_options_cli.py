"""Policy options of Golab et al.'s schedulers from the command line and from Python: typed,
ranged, listed, and one-line errors naming the option; partitioners report infeasibility."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import staleness_lab as sl
from staleness_lab.cli import main
from staleness_lab.policies import available_policies, policy_options

ROOT = Path(__file__).resolve().parents[2]
TABLE2 = ROOT / "data" / "workloads" / "golab-table2.yaml"
CLI = Path(sys.executable).parent / "staleness-lab"

NEW = ["max-benefit-lookahead", "edf-partitioned", "proportional"]


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_issue_command_runs_as_a_real_process():
    proc = subprocess.run(
        [
            str(CLI), "simulate", str(TABLE2), "--policy", "proportional",
            "--option", "k=1", "--option", "tracks_mode=all", "--option", "aggressive=true", "--option", "inheritance=max",
            "--horizon", "2000", "--json",
        ],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "ok" and summary["policy"] == "proportional"
    assert summary["jobs"] > 0 and summary["total_weighted_staleness"] > 0


@pytest.mark.parametrize(
    ("policy", "options"),
    [
        ("max-benefit-lookahead", ["max_set=2", "candidates=8", "inheritance=max-plus", "plus=10"]),
        ("edf-partitioned", ["basic=edf", "aggressive=yes", "inheritance=sum"]),
        ("proportional", ["k=10", "tracks_mode=basic", "clustering=cost", "basic=edf-p"]),
        ("edf", ["inheritance=max"]),
        ("edf-p", ["inheritance=max-plus", "plus=1.5"]),
        ("max-benefit", ["inheritance=sum"]),
    ],
)
def test_options_are_accepted(capsys, policy, options):
    args = ["simulate", TABLE2, "--policy", policy, "--horizon", "500", "--tracks", "5", "--json"]
    for o in options:
        args += ["--option", o]
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    assert json.loads(out)["status"] == "ok"


def test_list_policies_names_every_policy_with_its_options(capsys):
    code, out, _ = cli(capsys, "simulate", "--list-policies")
    assert code == 0
    lines = out.splitlines()
    names = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert names == list(available_policies())
    for name in ["edf", "edf-p", "max-benefit", "random", *NEW]:
        assert name in names
    for name in names:
        for option in policy_options(name):
            assert f"    --option {option.describe()}" in lines
    # the declared types, rules and defaults, as printed
    text = "\n".join(lines)
    for expected in [
        "k: float > 0 = 1.0",
        "tracks_mode: str in {basic, all} = 'all'",
        "aggressive: bool = False",
        "clustering: str in {period, cost} = 'period'",
        "basic: str in {edf, edf-p, max-benefit} = 'max-benefit'",
        "inheritance: str in {none, sum, max, max-plus} = 'none'",
        "plus: float > 1 = 2.0",
        "max_set: int >= 1 = 3",
    ]:
        assert expected in text, expected
    # every basic algorithm and every scheduler built on one takes inheritance
    for name in ["edf", "edf-p", "max-benefit", *NEW]:
        assert {"inheritance", "plus"} <= {o.name for o in policy_options(name)}


@pytest.mark.parametrize(
    ("policy", "option", "message"),
    [
        ("proportional", "bogus=1", "--option bogus: policy 'proportional' has no option 'bogus'"),
        ("proportional", "k=abc", "--option k: must be of type float"),
        ("proportional", "k=0", "--option k: must be > 0"),
        ("proportional", "k=-2", "--option k: must be > 0"),
        ("proportional", "tracks_mode=some", "--option tracks_mode: must be one of basic, all"),
        ("proportional", "clustering=energy", "--option clustering: must be one of period, cost"),
        ("edf-partitioned", "aggressive=maybe", "--option aggressive: must be of type bool"),
        ("edf-partitioned", "basic=random", "--option basic: must be one of edf, edf-p, max-benefit"),
        ("max-benefit", "inheritance=min", "--option inheritance: must be one of none, sum, max, max-plus"),
        ("edf-p", "plus=1", "--option plus: must be > 1"),
        ("max-benefit-lookahead", "max_set=0", "--option max_set: must be >= 1"),
        ("max-benefit-lookahead", "candidates=2.5", "--option candidates: must be of type int"),
        ("random", "inheritance=max", "--option inheritance: policy 'random' has no option 'inheritance'"),
    ],
)
def test_bad_options_exit_2_with_one_line_naming_the_option(capsys, policy, option, message):
    code, out, err = cli(capsys, "simulate", TABLE2, "--policy", policy, "--option", option)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("staleness-lab: error: " + message), err


def test_bad_options_from_python_name_the_option():
    with pytest.raises(sl.InputError, match=r"^option k: must be > 0"):
        sl.simulate(TABLE2, "proportional", options={"k": 0.0})
    with pytest.raises(sl.InputError, match=r"^option aggressive: must be of type bool"):
        sl.simulate(TABLE2, "edf-partitioned", options={"aggressive": "yes"})
    with pytest.raises(sl.InputError, match=r"^option nope: policy 'max-benefit-lookahead' has no option"):
        sl.simulate(TABLE2, "max-benefit-lookahead", options={"nope": 1})


def test_infeasible_partitioning_is_a_result_not_an_error(capsys):
    # Table 2 workload: u = 0.12 -> 7 tables per track -> 5 tracks, and the file has 4
    code, out, err = cli(capsys, "simulate", TABLE2, "--policy", "edf-partitioned", "--json")
    assert code == 0 and err == ""
    result = json.loads(out)
    assert result["status"] == "infeasible" and result["policy"] == "edf-partitioned"
    assert "needs 5 tracks" in result["reason"] and "has 4" in result["reason"]
    code, out, err = cli(capsys, "simulate", TABLE2, "--policy", "edf-partitioned", "--option", "aggressive=true")
    assert code == 0 and err == ""
    assert out.startswith("infeasible: ") and "needs 5 tracks" in out
    assert out.count("\n") == 1
    # with a fifth track it runs
    code, out, _ = cli(capsys, "simulate", TABLE2, "--policy", "edf-partitioned", "--tracks", "5", "--horizon", "500", "--json")
    assert code == 0 and json.loads(out)["status"] == "ok"
