"""The workflow model (digest §1-§2): builder and YAML agree, ``to_dict`` round-trips, layouts
and element sources [D], derived schemas, insert-only/keyed inputs (Correction 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from staleness_lab.errors import InputError
from staleness_lab.workflows.builder import WorkflowBuilder
from staleness_lab.workflows.elements import DELTA_KINDS, Channel, Cost, Operator
from staleness_lab.workflows.load import load_workflow, workflow_from_dict
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.registry import FUNCTIONS

DATA = Path(__file__).resolve().parents[2] / "data" / "workflows"
FILES = sorted(DATA.glob("*.yaml"))
FETCHES = tuple(("fetches", k) for k in range(6))


def olston_builder(base_dir: Path = DATA) -> WorkflowBuilder:
    """Olston's running example (digest §4), as ``data/workflows/olston-example.yaml`` states it."""
    return (
        WorkflowBuilder("olston-example", horizon=90, base_dir=base_dir)
        .input("digests", schema={"url": "str", "digest": "str", "site": "str"}, insert_only=True,
               replay="olston-example/digests.csv", times=[15, 32, 59, 65, 86])
        .input("scores", schema={"site": "str", "score": "int"}, key=["site"], replay="olston-example/scores.csv",
               times=[0, 25, 49, 73], delivers=["B", "delta"])
        .op("join", ["digests", "scores"], on=["site"], out="output")
        .output("output", accepts={"B", "delta"})
        .bound_staleness("output", 0, 0)
        .bound_staleness("scores", 0, "1d")
        .bound_inconsistency("output", "1d")
    )


def search_preprocessing_builder() -> WorkflowBuilder:
    return (
        WorkflowBuilder("search-preprocessing", horizon="10w", cost=Cost(alpha=0.01, beta=1e-6, gamma=1e-6, pi=1e-7))
        .input("pages", schema={"url": "str", "site": "str", "content": "str"}, insert_only=True,
               generator="sp-crawl", every="15min", rows=50)
        .input("clicks", schema={"user": "str", "url": "str", "site": "str"}, insert_only=True,
               generator="sp-clicks", every="1h", rows=500)
        .channel("digests", schema={"url": "str", "digest": "str", "site": "str"})
        .op("stateless", ["pages"], fn="shingle", out="digests")
        .op("distinct", ["clicks"], key=["user", "site"], out="user_site", sigma=0.5)
        .op("count", ["user_site"], key=["site"], out="click_counts", sigma=0.1)
        .channel("click_scores", schema={"site": "str", "score": "float"}, key=["site"])
        .op("stateless", ["click_counts"], fn="log-score", out="click_scores")
        .op("join", ["digests", "click_scores"], on=["site"], out="output")
        .output("output", accepts=["B", "delta"])
        .bound_staleness("output", 0, 0)
        .bound_staleness("click_scores", 0, "1d")
        .bound_inconsistency("output", "1w")
    )


def replay_inputs(tmp_path: Path) -> WorkflowBuilder:
    """Two replayed inputs a(k, v) (insert-only), b(k, v) in ``tmp_path``, no fn."""
    (tmp_path / "a.csv").write_text("time,_sign,k,v\n1,1,x,1\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("time,_sign,k,v\n", encoding="utf-8")
    return (WorkflowBuilder("small", horizon=10, base_dir=tmp_path)
            .input("a", schema={"k": "str", "v": "int"}, insert_only=True, replay="a.csv", times=[0, 1])
            .input("b", schema={"k": "str", "v": "int"}, replay="b.csv", times=[0]))


# -- identity ----------------------------------------------------------------------------------
def test_builder_and_yaml_give_equal_workflows() -> None:
    built, loaded = olston_builder().build(), load_workflow(DATA / "olston-example.yaml")
    assert built == loaded
    assert built.sha256() == loaded.sha256()
    assert search_preprocessing_builder().build() == load_workflow(DATA / "search-preprocessing.yaml")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_to_dict_round_trips(path: Path) -> None:
    workflow = load_workflow(path)
    again = workflow_from_dict(workflow.to_dict(), base_dir=path.parent)
    assert again == workflow
    assert again.to_dict() == workflow.to_dict()
    assert again.sha256() == workflow.sha256()


def test_sha256_is_stable_and_tracks_the_model(tmp_path: Path) -> None:
    workflow = load_workflow(DATA / "olston-example.yaml")
    assert workflow.sha256() == load_workflow(DATA / "olston-example.yaml").sha256()
    assert len(workflow.sha256()) == 64
    # the file's directory is not part of the identity
    moved = tmp_path / "olston-example.yaml"
    moved.write_text((DATA / "olston-example.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "olston-example").mkdir()
    for name in ("digests.csv", "scores.csv"):
        (tmp_path / "olston-example" / name).write_bytes((DATA / "olston-example" / name).read_bytes())
    assert load_workflow(moved).sha256() == workflow.sha256()
    # a bound or the order of a schema's columns changes it
    assert olston_builder().bound_inconsistency("output", "2d").build().sha256() != workflow.sha256()
    data = workflow.to_dict()
    data["channels"]["output"]["schema"] = dict(reversed(data["channels"]["output"]["schema"].items()))
    assert workflow_from_dict(data, base_dir=DATA).sha256() != workflow.sha256()


def test_durations_are_hours() -> None:
    workflow = load_workflow(DATA / "crawl-selection.yaml")
    assert workflow.horizon == 1680.0
    assert workflow.channel("fetches").input.every == 0.25
    assert [b.t for b in workflow.constraints] == [0.0, 0.0, 1.0, 24.0, 4.0, 168.0]


# -- structure ---------------------------------------------------------------------------------
def test_layouts() -> None:
    olston = load_workflow(DATA / "olston-example.yaml")
    assert olston.layout("output") == (("digests", 0), ("scores", 0))
    assert olston.layout("scores") == (("scores", 0),)
    assert load_workflow(DATA / "feedback-prioritization.yaml").layout("output") == (("log", 0), ("log", 1))
    crawl = load_workflow(DATA / "crawl-selection.yaml")
    assert crawl.layout("crawl_queue") == FETCHES
    assert crawl.layout("top_periodic") == FETCHES[:4]
    assert crawl.layout("adaptive") == FETCHES[:2]
    assert crawl.layout("indegrees") == (("fetches", 0),)
    sp = load_workflow(DATA / "search-preprocessing.yaml")
    assert sp.layout("output") == (("pages", 0), ("clicks", 0))


def test_element_sources() -> None:
    crawl = load_workflow(DATA / "crawl-selection.yaml")
    union_2 = crawl.producer("crawl_queue")
    assert union_2.name == "union-2"
    assert crawl.element_sources(union_2, 0) == ((0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1))
    assert crawl.element_sources(crawl.producer("top"), 0) == ((0, 0), (1, 0))
    assert crawl.element_sources(crawl.producer("indegrees"), 0) == ((0, 0),)
    fp = load_workflow(DATA / "feedback-prioritization.yaml")
    split = fp.producer("news")
    assert fp.element_sources(split, 1) == ((0, 0),)
    with pytest.raises(IndexError):
        fp.element_sources(split, 2)


def test_graph_queries() -> None:
    crawl = load_workflow(DATA / "crawl-selection.yaml")
    assert [ch.name for ch in crawl.inputs()] == ["fetches"]
    assert [ch.name for ch in crawl.outputs()] == ["crawl_queue"]
    assert crawl.producer("fetches") is None
    assert [op.name for op in crawl.consumers("indegrees")] == ["top-unfetched", "periodic", "adaptive"]
    order = [op.name for op in crawl.topological_operators()]
    assert order.index("count") < order.index("top-unfetched") < order.index("union") < order.index("union-2")
    assert (crawl.role("fetches"), crawl.role("links"), crawl.role("crawl_queue")) == ("input", "intermediate", "output")
    with pytest.raises(KeyError):
        crawl.channel("nope")


def test_derived_schemas_keys_and_kinds() -> None:
    sp = load_workflow(DATA / "search-preprocessing.yaml")
    assert dict(sp.channel("output").schema) == {"url": "str", "digest": "str", "site": "str", "score": "float"}
    assert [col for col, _ in sp.channel("output").schema] == ["url", "digest", "site", "score"]
    assert sp.channel("user_site").schema == (("user", "str"), ("site", "str"))
    assert sp.channel("user_site").key == ("user", "site")
    counts = sp.channel("click_counts")
    assert counts.schema == (("site", "str"), ("n", "int")) and counts.key == ("site",)
    assert counts.delta_kind == "increment" and sp.types_on("click_counts") == ("B", "delta", "increment")
    crawl = load_workflow(DATA / "crawl-selection.yaml")
    assert dict(crawl.channel("successful_fetches").schema) == {"url": "str", "fetched_at": "float"}  # from the fn
    assert crawl.channel("links").delta_kind == "upsert" and crawl.channel("links").key == ("source",)
    assert crawl.channel("top_periodic").schema == (("url", "str"), ("score", "float"))


def test_insert_only_and_async_offered() -> None:
    sp = load_workflow(DATA / "search-preprocessing.yaml")
    assert sp.insert_only("digests") and not sp.insert_only("click_counts") and not sp.insert_only("click_scores")
    assert sp.async_offered(sp.producer("output")) == {0: True, 1: True}  # click_scores has a key
    assert sp.async_offered(sp.producer("click_counts")) == {}  # a count has no asynchronous variant
    fp = load_workflow(DATA / "feedback-prioritization.yaml")
    assert fp.insert_only("news") and fp.insert_only("output")
    crawl = load_workflow(DATA / "crawl-selection.yaml")
    assert not crawl.insert_only("links")  # upserts replace a source's links
    assert crawl.async_offered(crawl.producer("crawl_queue")) == {0: False, 1: True}  # top_periodic: no key


def test_async_withheld_on_an_unkeyed_channel_with_deletions(tmp_path: Path) -> None:
    """Correction 3: b may carry deletions; keyless, its asynchronous side is withheld."""
    base = replay_inputs(tmp_path).op("union", ["a", "b"], out="u").output("u").build()
    assert base.insert_only("a") and not base.insert_only("b")
    assert base.async_offered(base.producer("u")) == {0: True, 1: False}
    keyed = (replay_inputs(tmp_path).channel("b", key=["k"]).op("union", ["a", "b"], out="u").output("u").build())
    assert keyed.async_offered(keyed.producer("u")) == {0: True, 1: True}


def test_builder_names_operators_and_costs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(FUNCTIONS, "test-identity", lambda frame: frame)
    workflow = (replay_inputs(tmp_path)
                .op("stateless", ["a"], fn="test-identity", out="a1")
                .op("stateless", ["b"], fn="test-identity", out="b1", sigma=0.5, cost=Cost(alpha=2))
                .op("union", ["a", "b"], out="u1")
                .op("union", ["a1", "b1"], out="u2")
                .op("count", ["u2"], key=["k"], out="counted", name="tally")
                .output("counted").build())
    assert [op.name for op in workflow.operators] == ["test-identity", "test-identity-2", "union", "union-2", "tally"]
    assert workflow.cost_of(workflow.operators[0]) == Cost()
    assert workflow.cost_of(workflow.operators[1]) == Cost(alpha=2)
    assert workflow.operators[1].sigma == 0.5
    assert workflow_from_dict(workflow.to_dict(), base_dir=tmp_path) == workflow


def test_custom_delta_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(DELTA_KINDS, "maximum", "(key, value): keep the larger")
    monkeypatch.setitem(FUNCTIONS, "test-identity", lambda frame: frame)
    workflow = (replay_inputs(tmp_path).channel("m", key=["k"], delta_kind="maximum")
                .op("stateless", ["a"], fn="test-identity", out="m").output("m", accepts=["maximum"]).build())
    assert workflow.types_on("m") == ("B", "delta", "maximum")
    assert workflow.channel("m").to_dict()["delta_kind"] == "maximum"


def test_workflow_checks_its_parts_directly() -> None:
    channel = Channel("x", schema={"k": "str"}, input=None)
    op = Operator("o", "stateless", ("x",), ("y",))
    with pytest.raises(InputError) as err:
        Workflow("w", 1, Cost(), (channel, channel), (op,))
    assert (err.value.field, err.value.rule) == ("channels.x", "duplicate channel name")
    with pytest.raises(InputError) as err:
        Workflow("w", 1, Cost(), [channel], ["not an operator"])
    assert err.value.field == "operators[0]"
