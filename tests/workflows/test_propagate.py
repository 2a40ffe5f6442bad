"""Constraint propagation, heuristic (c) (digest §3), and E9 (digest §4) exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from staleness_lab.workflows.load import load_workflow
from staleness_lab.workflows.propagate import EffectiveBounds, bounds_report, own_bounds, propagate
from staleness_lab.workflows.registry import FUNCTIONS

from tests.workflows.test_model import DATA, replay_inputs

DAY, WEEK = 24.0, 168.0


def test_e9_search_preprocessing() -> None:
    bounds = propagate(load_workflow(DATA / "search-preprocessing.yaml"))
    for name in ("digests", "pages"):
        assert bounds[name] == EffectiveBounds((0.0,), WEEK), name
    for name in ("click_scores", "click_counts", "user_site", "clicks"):
        assert bounds[name] == EffectiveBounds((DAY,), WEEK), name
    assert bounds["output"] == EffectiveBounds((0.0, None), WEEK)


def test_e9_crawl_selection() -> None:
    bounds = propagate(load_workflow(DATA / "crawl-selection.yaml"))
    for name in ("successful_fetches", "content_digests"):  # their own 0 beats 1h, 1d, 4h
        assert bounds[name] == EffectiveBounds((0.0,), WEEK), name
    for name in ("indegrees", "links"):  # the inconsistency bound only
        assert bounds[name] == EffectiveBounds((None,), WEEK), name
    assert bounds["top"] == EffectiveBounds((1.0, None), WEEK)
    assert bounds["periodic"] == EffectiveBounds((DAY, None), WEEK)
    assert bounds["adaptive"] == EffectiveBounds((4.0, None), WEEK)
    assert bounds["top_periodic"] == EffectiveBounds((1.0, None, DAY, None), WEEK)
    assert bounds["crawl_queue"] == EffectiveBounds((1.0, None, DAY, None, 4.0, None), WEEK)
    assert bounds["fetches"] == EffectiveBounds((0.0,), WEEK)


def test_feedback_and_olston_example() -> None:
    fp = propagate(load_workflow(DATA / "feedback-prioritization.yaml"))
    assert fp["news"] == EffectiveBounds((0.0,), None)
    assert fp["nonnews"] == EffectiveBounds((DAY,), None)
    assert fp["log"] == EffectiveBounds((0.0,), None)
    olston = load_workflow(DATA / "olston-example.yaml")
    assert propagate(olston)["scores"] == EffectiveBounds((DAY,), DAY)
    assert own_bounds(olston)["scores"] == EffectiveBounds((DAY,), None)
    assert own_bounds(olston)["digests"] == EffectiveBounds((None,), None)


def test_min_over_consumers_and_clamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """a feeds two consumers: per-element min; staleness is clamped to the inconsistency bound;
    several bounds on one element keep the smallest."""
    monkeypatch.setitem(FUNCTIONS, "test-identity", lambda frame: frame)
    workflow = (replay_inputs(tmp_path)
                .op("stateless", ["a"], fn="test-identity", out="x")
                .op("stateless", ["a"], fn="test-identity", out="y")
                .op("union", ["x", "b"], out="u")
                .output("u").output("y")
                .bound_staleness("u", 0, "2d").bound_staleness("u", 0, "3d").bound_staleness("u", 1, "1w")
                .bound_inconsistency("u", "4d")
                .bound_staleness("y", 0, "5h")
                .build())
    own = own_bounds(workflow)
    assert own["u"] == EffectiveBounds((48.0, WEEK), 96.0)
    bounds = propagate(workflow)
    assert bounds["u"] == EffectiveBounds((48.0, 96.0), 96.0)  # 1w clamped to 4d
    assert bounds["x"] == EffectiveBounds((48.0,), 96.0)
    assert bounds["b"] == EffectiveBounds((96.0,), 96.0)
    assert bounds["a"] == EffectiveBounds((5.0,), 96.0)  # min(2d via x, 5h via y)


def test_bounds_report() -> None:
    report = bounds_report(load_workflow(DATA / "crawl-selection.yaml"))
    queue = next(c for c in report["channels"] if c["name"] == "crawl_queue")
    assert queue["layout"] == [["fetches", k] for k in range(6)]
    assert queue["propagated"] == {"staleness": [1.0, None, 24.0, None, 4.0, None], "inconsistency": 168.0}
    withheld = [(v["operator"], v["input"], v["channel"]) for v in report["async_variants"] if not v["offered"]]
    assert withheld == [("union-2", 0, "top_periodic")]
