"""The two dependency lists (pyproject.toml for pip, environment.yml for conda) agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _normalise(spec: str) -> tuple[str, str]:
    """(name, version range) of a requirement such as ``pandas>=2.2,<3  # comment``."""
    match = re.match(r"([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*([^#;]*)", spec.strip())
    assert match, spec
    name, _, version = match.groups()
    return name.lower().replace("_", "-"), version.replace(" ", "")


def test_environment_yml_installs_the_pyproject_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_normalise(s) for s in project["dependencies"] + project["optional-dependencies"]["dev"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = {_normalise(s) for s in pip_section if not s.startswith("-e")}
    assert listed == wanted


def test_pandas_is_pinned_below_3_with_pyspark_4() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pandas = next(s for s in deps if s.startswith("pandas"))
    assert "<3" in pandas.replace(" ", "")
    assert any(s.startswith("pyspark>=4") for s in deps)


def test_console_script_is_declared() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["staleness-lab"] == "staleness_lab.launch:main"
