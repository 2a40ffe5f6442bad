"""Loading workloads from YAML and JSON files, dumping them back, and their digests."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from staleness_lab import InputError, Workload, load_workload, parse_workload
from staleness_lab.model import dump_workload
from example_workloads import EXAMPLE_YAML, with_entry

EXAMPLE_JSON = """\
{
  "tracks": 2, "horizon": 100, "seed": 0,
  "tables": [
    {"name": "a", "period": 10, "phase": 0, "alpha": 1, "beta": 0.1, "priority": 1},
    {"name": "v", "sources": ["a"], "alpha": 1, "beta": 0.1, "priority": 1}
  ]
}
"""

#: Every key of the schema, most with non-default values.
RICH: dict[str, Any] = {
    "tracks": 3,
    "horizon": 500.5,
    "seed": 42,
    "variability": 0.25,
    "slowdown": {"factor": 2.5, "normal": 40, "slow": 10},
    "warmup": 50,
    "chop": 2,
    "tables": [
        {
            "name": "orders",
            "period": 10,
            "phase": 2.5,
            "alpha": 1,
            "beta": 0.1,
            "priority": 1,
            "initial_freshness": -4,
            "chop": 1.5,
            "min_separation": 3,
        },
        {
            "name": "clicks",
            "arrivals": [[5, 5], [12, 10], [20, 18.5]],
            "nominal_period": 8,
            "alpha": 0.5,
            "beta": 0,
            "priority": 2.5,
        },
        {"name": "raw", "arrivals": [[0, 0], [7, 6]], "alpha": 0, "beta": 0.3, "priority": 0.5},
        {"name": "summary", "sources": ["orders", "clicks"], "alpha": 1, "beta": 0.1, "priority": 1, "initial_freshness": -6},
        {"name": "report", "sources": ["summary", "raw"], "alpha": 2, "beta": 0.2, "priority": 3, "initial_freshness": -8},
    ],
}


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- loading ---------------------------------------------------------------------------------
def test_load_yaml_example(tmp_path: Path) -> None:
    w = load_workload(write(tmp_path / "example.yaml", EXAMPLE_YAML))
    assert w == parse_workload(yaml.safe_load(EXAMPLE_YAML))
    assert [t.name for t in w.tables] == ["a", "v"]
    assert (w.tracks, w.horizon, w.seed) == (2, 100, 0)
    assert w.tables[0].period == 10 and w.tables[1].sources == ("a",)


def test_load_json_example(tmp_path: Path) -> None:
    from_json = load_workload(write(tmp_path / "example.json", EXAMPLE_JSON))
    from_yaml = load_workload(write(tmp_path / "example.yaml", EXAMPLE_YAML))
    assert from_json == from_yaml
    assert from_json.digest() == from_yaml.digest()


@pytest.mark.parametrize("name", ["w.yml", "w.YAML", "w.txt", "workload"], ids=["yml", "upper-yaml", "txt", "no-suffix"])
def test_anything_but_json_is_read_as_yaml(name: str, tmp_path: Path) -> None:
    assert load_workload(write(tmp_path / name, EXAMPLE_YAML)) == parse_workload(yaml.safe_load(EXAMPLE_YAML))


def test_upper_case_json_suffix_is_json(tmp_path: Path) -> None:
    assert load_workload(write(tmp_path / "W.JSON", EXAMPLE_JSON)) == parse_workload(json.loads(EXAMPLE_JSON))


def test_load_accepts_str_and_path(tmp_path: Path) -> None:
    path = write(tmp_path / "example.yaml", EXAMPLE_YAML)
    assert load_workload(str(path)) == load_workload(path)


def test_yaml_flow_style_and_comments(tmp_path: Path) -> None:
    text = (
        "# a comment\n"
        "{tracks: 2, horizon: 100, seed: 0,  # inline comment\n"
        " tables: [{name: a, period: 10, phase: 0, alpha: 1, beta: 0.1, priority: 1},\n"
        "          {name: v, sources: [a], alpha: 1, beta: 0.1, priority: 1}]}\n"
    )
    assert load_workload(write(tmp_path / "w.yaml", text)) == load_workload(write(tmp_path / "x.yaml", EXAMPLE_YAML))


def test_yaml_exponent_numbers(tmp_path: Path) -> None:
    text = EXAMPLE_YAML.replace("horizon: 100", "horizon: 1.0e+2")
    assert load_workload(write(tmp_path / "w.yaml", text)).horizon == 100


def test_load_rich_yaml(tmp_path: Path) -> None:
    path = write(tmp_path / "rich.yaml", yaml.safe_dump(RICH, sort_keys=False))
    w = load_workload(path)
    assert w == parse_workload(RICH)
    assert w.slowdown is not None and (w.slowdown.factor, w.slowdown.normal, w.slowdown.slow) == (2.5, 40, 10)
    assert (w.variability, w.warmup, w.chop) == (0.25, 50, 2)
    assert w.tables[1].arrivals == ((5, 5), (12, 10), (20, 18.5))
    assert w.periods == (10, 8, None, 10, None)


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        pytest.param("w.yaml", "", "empty", id="empty"),
        pytest.param("w.yaml", "\n  \n", "empty", id="blank"),
        pytest.param("w.yaml", "# only a comment\n", "empty", id="comment-only"),
        pytest.param("w.yaml", "---\n", "empty", id="document-marker-only"),
        pytest.param("w.json", "", "empty", id="empty-json"),
        pytest.param("w.yaml", "tracks: [1, 2\n", "parse", id="unclosed-flow"),
        pytest.param("w.yaml", "a: b: c\n", "parse", id="bad-mapping"),
        pytest.param("w.yaml", "tracks: 1\n\tbad: tab\n", "parse", id="tab-indent"),
        pytest.param("w.json", '{"tracks": 1,', "parse", id="truncated-json"),
        pytest.param("w.json", "tracks: 2\n", "parse", id="yaml-in-json-file"),
        pytest.param("w.yaml", "- 1\n- 2\n", "mapping", id="list"),
        pytest.param("w.yaml", "42\n", "mapping", id="int"),
        pytest.param("w.yaml", "just text\n", "mapping", id="string"),
        pytest.param("w.json", "[]", "mapping", id="json-list"),
        pytest.param("w.json", '"text"', "mapping", id="json-string"),
        pytest.param("w.json", "null", "empty", id="json-null"),
    ],
)
def test_load_rejects_bad_files(name: str, text: str, fragment: str, tmp_path: Path) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(InputError) as info:
        load_workload(path)
    message = str(info.value)
    assert "\n" not in message
    assert name in info.value.field
    assert fragment in info.value.rule


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_workload(tmp_path / "absent.yaml")
    assert "absent.yaml" in info.value.field
    assert "no such" in info.value.rule


def test_load_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_workload(tmp_path)
    assert str(tmp_path) in info.value.field


@pytest.mark.parametrize(
    ("literal", "field"),
    [
        pytest.param("horizon: .nan", "horizon", id="yaml-nan"),
        pytest.param("horizon: .inf", "horizon", id="yaml-inf"),
        pytest.param("horizon: -.inf", "horizon", id="yaml-minus-inf"),
        pytest.param("horizon: .NaN", "horizon", id="yaml-NaN"),
    ],
)
def test_yaml_non_finite_numbers(literal: str, field: str, tmp_path: Path) -> None:
    text = EXAMPLE_YAML.replace("horizon: 100", literal)
    with pytest.raises(InputError) as info:
        load_workload(write(tmp_path / "w.yaml", text))
    assert info.value.field == field
    assert "finite" in info.value.rule


@pytest.mark.parametrize(
    ("old", "new", "field", "table"),
    [
        pytest.param('"horizon": 100', '"horizon": NaN', "horizon", None, id="nan-horizon"),
        pytest.param('"period": 10', '"period": Infinity', "tables[0].period", "a", id="inf-period"),
        pytest.param('"beta": 0.1, "priority": 1}\n', '"beta": -Infinity, "priority": 1}\n', "tables[1].beta", "v", id="minus-inf-beta"),
        pytest.param('"priority": 1}\n  ]', '"priority": NaN}\n  ]', "tables[1].priority", "v", id="nan-priority"),
    ],
)
def test_json_non_finite_numbers(old: str, new: str, field: str, table: str | None, tmp_path: Path) -> None:
    assert old in EXAMPLE_JSON
    with pytest.raises(InputError) as info:
        load_workload(write(tmp_path / "w.json", EXAMPLE_JSON.replace(old, new, 1)))
    assert (info.value.field, info.value.table) == (field, table)
    assert "finite" in info.value.rule


def test_load_reports_table_errors_with_their_position(tmp_path: Path) -> None:
    text = EXAMPLE_YAML.replace("period: 10", "period: -1")
    with pytest.raises(InputError) as info:
        load_workload(write(tmp_path / "w.yaml", text))
    assert (info.value.field, info.value.table) == ("tables[0].period", "a")
    assert str(info.value).startswith("tables[0].period (table 'a')")


# -- dumping ---------------------------------------------------------------------------------
WORKLOADS = {
    "example": yaml.safe_load(EXAMPLE_YAML),
    "rich": RICH,
    "minimal": {"tracks": 1, "horizon": 1, "tables": [{"name": "t", "period": 1, "alpha": 1, "beta": 0, "priority": 1}]},
    "zero-variability": {**RICH, "variability": 0},
    "always-slow": {**RICH, "slowdown": {"factor": 0.5, "normal": 0, "slow": 3}},
}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
@pytest.mark.parametrize("which", list(WORKLOADS))
def test_dump_round_trips(which: str, suffix: str, tmp_path: Path) -> None:
    w = parse_workload(copy.deepcopy(WORKLOADS[which]))
    path = tmp_path / f"dumped{suffix}"
    dump_workload(w, path)
    back = load_workload(path)
    assert back == w
    assert back.digest() == w.digest()
    # and again: dumping what was loaded gives the same text
    again = tmp_path / f"again{suffix}"
    dump_workload(back, again)
    assert again.read_text() == path.read_text()


def test_dump_writes_the_requested_format(tmp_path: Path) -> None:
    w = parse_workload(RICH)
    dump_workload(w, tmp_path / "w.json")
    data = json.loads((tmp_path / "w.json").read_text())
    assert parse_workload(data) == w
    dump_workload(w, tmp_path / "w.yaml")
    data = yaml.safe_load((tmp_path / "w.yaml").read_text())
    assert parse_workload(data) == w


def test_dump_of_the_example_keeps_its_values(tmp_path: Path) -> None:
    w = load_workload(write(tmp_path / "in.yaml", EXAMPLE_YAML))
    dump_workload(w, tmp_path / "out.yaml")
    data = yaml.safe_load((tmp_path / "out.yaml").read_text())
    assert (data["tracks"], data["horizon"], data["seed"]) == (2, 100, 0)
    a, v = data["tables"]
    assert (a["name"], a["period"], a["alpha"], a["beta"], a["priority"]) == ("a", 10, 1, 0.1, 1)
    assert (v["name"], v["sources"]) == ("v", ["a"])


def test_to_dict_round_trips_through_parse() -> None:
    w = parse_workload(RICH)
    assert parse_workload(w.to_dict()) == w
    assert json.loads(json.dumps(w.to_dict())) == w.to_dict()


# -- digests ---------------------------------------------------------------------------------
def test_digest_is_a_stable_sha256(tmp_path: Path) -> None:
    w = parse_workload(RICH)
    assert re.fullmatch(r"[0-9a-f]{64}", w.digest())
    assert w.digest() == parse_workload(copy.deepcopy(RICH)).digest()
    assert w.digest() == w.digest()


def test_digest_ignores_how_numbers_are_spelled(tmp_path: Path) -> None:
    a = load_workload(write(tmp_path / "a.yaml", EXAMPLE_YAML))
    b = load_workload(write(tmp_path / "b.yaml", EXAMPLE_YAML.replace("horizon: 100", "horizon: 100.0").replace("period: 10", "period: 1.0e+1")))
    assert a == b
    assert a.digest() == b.digest()


def test_digest_ignores_key_order_and_explicit_defaults() -> None:
    data = yaml.safe_load(EXAMPLE_YAML)
    reordered = {"tables": [dict(reversed(list(t.items()))) for t in data["tables"]], "seed": 0, "horizon": 100, "tracks": 2}
    explicit = copy.deepcopy(data)
    explicit["warmup"] = 0
    explicit["tables"][0].update(initial_freshness=0, min_separation=0)
    base = parse_workload(data).digest()
    assert parse_workload(reordered).digest() == base
    assert parse_workload(explicit).digest() == base


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param(("tracks",), 4, id="tracks"),
        pytest.param(("horizon",), 600, id="horizon"),
        pytest.param(("seed",), 43, id="seed"),
        pytest.param(("variability",), 0.3, id="variability"),
        pytest.param(("warmup",), 10, id="warmup"),
        pytest.param(("chop",), 3, id="chop"),
        pytest.param(("slowdown", "factor"), 3, id="slowdown-factor"),
        pytest.param(("tables", 0, "period"), 11, id="period"),
        pytest.param(("tables", 0, "phase"), 0, id="phase"),
        pytest.param(("tables", 0, "alpha"), 1.5, id="alpha"),
        pytest.param(("tables", 0, "beta"), 0.2, id="beta"),
        pytest.param(("tables", 0, "priority"), 2, id="priority"),
        pytest.param(("tables", 0, "initial_freshness"), -5, id="initial-freshness"),
        pytest.param(("tables", 0, "chop"), 2, id="table-chop"),
        pytest.param(("tables", 0, "min_separation"), 4, id="min-separation"),
        pytest.param(("tables", 1, "arrivals"), [[5, 5], [12, 11], [20, 18.5]], id="arrivals"),
        pytest.param(("tables", 1, "nominal_period"), 9, id="nominal-period"),
        pytest.param(("tables", 4, "sources"), ["summary"], id="sources"),
        pytest.param(("tables", 4, "name"), "final", id="name"),
    ],
)
def test_digest_changes_when_a_value_changes(path: tuple[Any, ...], value: Any) -> None:
    base = parse_workload(RICH)
    changed = parse_workload(with_entry(RICH, path, value))
    assert changed != base
    assert changed.digest() != base.digest()


def test_digest_follows_overrides() -> None:
    w = parse_workload(RICH)
    assert w.with_overrides(seed=7).digest() != w.digest()
    assert w.with_overrides(seed=42).digest() == w.digest()
    assert w.with_overrides(tracks=5).digest() == parse_workload({**RICH, "tracks": 5}).digest()


def test_workload_type() -> None:
    assert isinstance(parse_workload(RICH), Workload)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"\xff\xfe\x00tracks: 2\n", id="not-utf8"),
        pytest.param(b"tracks: 2\nhorizon: \xe9\n", id="latin1-byte"),
    ],
)
def test_load_rejects_undecodable_files(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert "w.yaml" in info.value.field
    assert "\n" not in str(info.value)


def _bateni_table(arrivals: list) -> dict:
    return {"tracks": 1, "horizon": 10, "tables": [{"name": "a", "arrivals": arrivals, "alpha": 0, "beta": 0.5, "priority": 1}]}


@pytest.mark.parametrize(
    "arrivals",
    [
        pytest.param([4, 5, 5.5], id="numbers"),
        pytest.param([[4, 4], [5, 5], [5.5, 5.5]], id="pairs"),
        pytest.param([4, [5, 5], 5.5], id="mixed"),
    ],
)
def test_arrivals_as_numbers_pairs_or_mixed_load_alike(tmp_path: Path, arrivals: list) -> None:
    """Bateni et al.'s form ``t`` is the pair ``[t, t]``: stored and written as pairs, so the
    workload digest does not depend on the spelling."""
    reference = parse_workload(_bateni_table([[4, 4], [5, 5], [5.5, 5.5]]))
    w = load_workload(write(tmp_path / "w.yaml", yaml.safe_dump(_bateni_table(arrivals))))
    assert w == reference
    assert w.tables[0].arrivals == ((4, 4), (5, 5), (5.5, 5.5))
    assert w.digest() == reference.digest()
    assert w.to_dict()["tables"][0]["arrivals"] == [[4, 4], [5, 5], [5.5, 5.5]]


def test_length_range_round_trips_and_defaults(tmp_path: Path) -> None:
    data = _bateni_table([1, 2, 3.5])
    w = parse_workload(data)
    assert w.tables[0].declared_lengths() == (1, 1.5)
    data["tables"][0]["length_range"] = [0.8, 1.6]
    w = parse_workload(data)
    assert w.tables[0].declared_lengths() == (0.8, 1.6)
    path = tmp_path / "w.yaml"
    dump_workload(w, path)
    assert load_workload(path) == w
    assert w.digest() != parse_workload(_bateni_table([1, 2, 3.5])).digest()
