"""The row functions of the evaluation workflows (``workflows/functions.py``; digest §5, §8):
declared signatures, per-row maps on bases and deltas, and the crawl selectors on hand-built
frames with ties."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd
import pytest

from staleness_lab.workflows import sources
from staleness_lab.workflows.functions import RowFunction, floor_log2
from staleness_lab.workflows.registry import FUNCTIONS, GENERATORS
from staleness_lab.workflows.rows import SIGN, bag_equal, map_rows, signed
from staleness_lab.workflows.weak import count

KINDS = {"shingle": "map", "log-score": "map", "is-news": "split", "successful": "map",
         "extract-links": "map", "top-unfetched": "selector", "periodic": "selector",
         "adaptive": "selector"}


def frame(rows: list[tuple], columns: str) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns.split())


def fetch_rows(rows: list[tuple]) -> pd.DataFrame:
    return frame(rows, "url ok content links fetched_at")


def test_registered_signatures() -> None:
    assert {n: f.kind for n, f in FUNCTIONS.items() if n in KINDS} == KINDS
    assert all(isinstance(FUNCTIONS[n], RowFunction) for n in KINDS)
    sp, cs = GENERATORS["sp-crawl"].schema, GENERATORS["cs-fetches"].schema
    assert list(FUNCTIONS["shingle"].output_schema(sp).items()) == [
        ("url", "str"), ("digest", "str"), ("site", "str")]
    digests = FUNCTIONS["shingle"].output_schema(cs)
    assert list(digests) == ["url", "digest", "fetched_at"]
    assert FUNCTIONS["log-score"].output_schema({"site": "str", "n": "int"}) == {
        "site": "str", "score": "float"}
    log = GENERATORS["fp-log"].schema
    assert FUNCTIONS["is-news"].output_schema(log) == log
    ok = FUNCTIONS["successful"].output_schema(cs)
    links = FUNCTIONS["extract-links"].output_schema(cs)
    assert (ok, links) == ({"url": "str", "fetched_at": "float"},
                           {"source": "str", "target": "str"})
    indegrees = {"target": "str", "n": "int"}
    for name, first in [("top-unfetched", ok), ("periodic", ok), ("adaptive", digests)]:
        assert FUNCTIONS[name].output_schema(first, indegrees) == {"url": "str", "score": "float"}
    with pytest.raises(ValueError, match="lacks column"):
        FUNCTIONS["adaptive"].output_schema(ok, indegrees)
    with pytest.raises(ValueError, match="input"):
        FUNCTIONS["shingle"].output_schema(sp, sp)


def test_shingle_base_and_delta() -> None:
    pages = frame([("a.com/x", "a.com", "abc"), ("b.com/y", "b.com", "abc"),
                   ("a.com/z", "a.com", "other")], "url site content")
    out = FUNCTIONS["shingle"](pages)
    assert list(out.columns) == ["url", "digest", "site"]
    assert out["digest"].tolist()[:2] == ["ba7816bf8f01cfea"] * 2  # sha256("abc")[:16]
    assert out["digest"][2] == hashlib.sha256(b"other").hexdigest()[:16]
    delta = pages.assign(**{SIGN: np.array([1, -1, 1], dtype="int8")})
    out_delta = FUNCTIONS["shingle"](delta)
    assert list(out_delta.columns) == ["url", "digest", "site", SIGN]
    assert out_delta[SIGN].tolist() == [1, -1, 1]
    assert bag_equal(map_rows(delta, FUNCTIONS["shingle"]), out_delta)


def test_shingle_fetches_drops_failed() -> None:
    fetches = fetch_rows([("u1", True, "c1", "u2", 0.5), ("u2", False, None, "", 0.75),
                          ("u1", True, "c2", "u2", 1.0)])
    out = FUNCTIONS["shingle"](signed(fetches, 1))
    assert list(out.columns) == ["url", "digest", "fetched_at", SIGN]
    assert out["url"].tolist() == ["u1", "u1"] and out["fetched_at"].tolist() == [0.5, 1.0]


def test_log_score_exact() -> None:
    counts = frame([("a", 0), ("b", 1), ("c", 3), ("d", 10)], "site n")
    out = FUNCTIONS["log-score"](counts)
    assert list(out.columns) == ["site", "score"]
    assert out["score"].tolist() == [0.0, math.log(2), math.log(4), math.log1p(10)]
    delta = signed(counts, -1)
    assert FUNCTIONS["log-score"](delta)[SIGN].tolist() == [-1] * 4


def test_is_news_split_predicate() -> None:
    log = frame([(0, "q1", False), (1, "q2", True), (2, "q3", False)], "record_id query is_news")
    log.index = [10, 11, 12]
    mask = FUNCTIONS["is-news"](log)
    assert mask.dtype == bool and mask.index.tolist() == [10, 11, 12]
    assert log[mask]["record_id"].tolist() == [1] and log[~mask]["record_id"].tolist() == [0, 2]


def test_successful() -> None:
    fetches = fetch_rows([("u1", True, "c", "u2", 0.5), ("u2", False, None, "", 0.75)])
    assert FUNCTIONS["successful"](fetches).to_dict("list") == {"url": ["u1"], "fetched_at": [0.5]}
    assert FUNCTIONS["successful"](signed(fetches, 1))[SIGN].tolist() == [1]


def test_extract_links_latest_fetch_per_source() -> None:
    fetches = fetch_rows([("s1", True, "c", "t1|t2", 2.0), ("s1", True, "c", "t3", 2.5),
                          ("s2", False, None, "", 1.0), ("s3", True, "c", "t1", 0.5),
                          ("s1", True, "c", "t9", 1.0)])
    expected = frame([("s1", "t3"), ("s3", "t1")], "source target")
    assert bag_equal(FUNCTIONS["extract-links"](fetches), expected)
    assert bag_equal(FUNCTIONS["extract-links"](signed(fetches, 1)), signed(expected, 1))
    assert list(FUNCTIONS["extract-links"](fetches.iloc[0:0]).columns) == ["source", "target"]


def test_floor_log2_is_exact() -> None:
    m = np.arange(1, 1 << 20)
    assert (floor_log2(m) == [int(x).bit_length() - 1 for x in m]).all()


def test_top_unfetched_ties_by_url() -> None:
    indegrees = frame([("a", 5), ("b", 3), ("c", 3), ("d", 3), ("e", 9), ("f", 3)], "target n")
    fetched = frame([("e", 1.0), ("c", 2.0)], "url fetched_at")
    out = FUNCTIONS["top-unfetched"](fetched, indegrees, 5.0, k=3)
    assert out.to_dict("list") == {"url": ["a", "b", "d"], "score": [5.0, 3.0, 3.0]}
    assert len(FUNCTIONS["top-unfetched"](fetched, indegrees, 5.0)) == 4  # k = 100


def test_periodic_thresholds() -> None:
    """Interval 1w / (1 + ⌊log2(1 + n)⌋): 168 h (n = 0 or absent), 84 h (n = 1), 56 h
    (n = 3), 42 h (n = 7); strictly older is due; the last fetch counts."""
    fetched = frame([("p0", 31.9), ("p0b", 32.0), ("p1", 10.0), ("p1", 116.0), ("p1b", 115.0),
                     ("p3", 143.0), ("p7", 158.0), ("p7b", 157.5)], "url fetched_at")
    indegrees = frame([("p0b", 0), ("p1", 1), ("p1b", 1), ("p3", 3), ("p7", 7), ("p7b", 7),
                       ("never", 50)], "target n")
    out = FUNCTIONS["periodic"](fetched, indegrees, 200.0)
    assert out["url"].tolist() == ["p0", "p1b", "p3", "p7b"]
    assert out["score"].tolist() == pytest.approx([168.1, 85.0, 57.0, 42.5])


def test_adaptive_priority_and_ties() -> None:
    """Priority = indegree × changed share × hours since the last fetch, a URL's digests taken
    in fetch-time order (a's rows are shuffled: in time order x, y, x is two changes)."""
    digests = frame([("a", "x", 3.0), ("a", "x", 1.0), ("a", "y", 2.0),
                     ("b", "p", 1.0), ("b", "p", 4.0), ("b", "q", 6.0),
                     ("c", "m", 2.0), ("c", "n", 3.0),
                     ("d", "z", 1.0),                       # fetched once: share 0
                     ("e", "s", 1.0), ("e", "t", 2.0),      # no indegree
                     ("f", "u", 1.0), ("f", "u", 5.0)],     # never changed
                    "url digest fetched_at")
    indegrees = frame([("a", 2), ("b", 3), ("c", 2), ("d", 10), ("f", 4)], "target n")
    out = FUNCTIONS["adaptive"](digests, indegrees, 10.0)
    assert out.to_dict("list") == {"url": ["a", "c", "b"], "score": [14.0, 14.0, 6.0]}
    assert FUNCTIONS["adaptive"](digests, indegrees, 10.0, k=2)["url"].tolist() == ["a", "c"]


@pytest.mark.parametrize("name", ["top-unfetched", "periodic", "adaptive"])
def test_selectors_on_empty_inputs(name: str) -> None:
    first = frame([], "url digest fetched_at")
    out = FUNCTIONS[name](first, frame([], "target n"), 1.0)
    assert list(out.columns) == ["url", "score"] and out.empty


def test_crawl_selection_on_generated_day() -> None:
    """The CS chain on a generated day: successful fetches, digests and indegrees feed the
    three selectors (digest §5 CrawlSelection, correction 6)."""
    fetches = sources.cs_fetches(9, 0.25, 200, 24.0)
    rows = pd.concat([a.rows for a in fetches], ignore_index=True)
    ok = FUNCTIONS["successful"](rows)
    digests = FUNCTIONS["shingle"](rows)
    indegrees = count(FUNCTIONS["extract-links"](rows), "target")
    top = FUNCTIONS["top-unfetched"](ok, indegrees, 24.0)
    assert len(top) == 100 and not top["url"].isin(ok["url"]).any()
    assert top["score"].is_monotonic_decreasing
    due = FUNCTIONS["periodic"](ok, indegrees, 24.0)
    assert due["url"].isin(ok["url"]).all() and due["url"].is_unique
    adaptive = FUNCTIONS["adaptive"](digests, indegrees, 24.0)
    assert 0 < len(adaptive) <= 100 and (adaptive["score"] > 0).all()
    assert adaptive["url"].isin(digests["url"]).all()
