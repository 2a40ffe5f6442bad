"""The seeded input generators of the evaluation workflows (``workflows/sources.py``; digest §5
rates, §8 "Data"): determinism, the sizes path, arrival grids and the issue's rates and shares."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from staleness_lab.workflows.registry import GENERATORS
from staleness_lab.workflows.sources import (
    ISSUE_RATES,
    Arrival,
    Generator,
    arrival_counts,
    arrival_times,
)

NAMES = sorted(ISSUE_RATES)
DAY = 24.0


def _run(name: str, seed: int, horizon: float, **params: object) -> list[Arrival]:
    every, rows = ISSUE_RATES[name]
    return GENERATORS[name](seed, every, rows, horizon, **params)


def _all_rows(arrivals: list[Arrival]) -> pd.DataFrame:
    return pd.concat([a.rows for a in arrivals], ignore_index=True)


def _same(a: list[Arrival], b: list[Arrival]) -> None:
    assert [x.time for x in a] == [y.time for y in b]
    for x, y in zip(a, b):
        pd.testing.assert_frame_equal(x.rows, y.rows)


@pytest.mark.parametrize("name", NAMES)
def test_registered_with_schema(name: str) -> None:
    gen = GENERATORS[name]
    assert isinstance(gen, Generator) and gen.name == name
    rows = _run(name, 1, 1.0)[-1].rows
    assert list(rows.columns) == list(gen.schema)
    assert "_sign" not in rows.columns  # insert-only inputs
    kinds = {"str": "O", "int": "i", "float": "f", "bool": "b"}
    assert {c: rows[c].dtype.kind for c in rows} == {c: kinds[t] for c, t in gen.schema.items()}


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_frames_other_seed_differs(name: str) -> None:
    _same(_run(name, 7, 3.0), _run(name, 7, 3.0))
    a, b = _all_rows(_run(name, 7, 3.0)), _all_rows(_run(name, 8, 3.0))
    assert not a.equals(b)


@pytest.mark.parametrize("name", NAMES)
def test_rows_do_not_depend_on_horizon(name: str) -> None:
    """Arrival k's rows are drawn in row order from per-quantity streams: a short run is a
    prefix of a long one (common random numbers across run lengths)."""
    short, long = _run(name, 3, 6.0), _run(name, 3, 12.0)
    _same(short, long[:len(short)])


@pytest.mark.parametrize("name", NAMES)
def test_counts_path_matches_frames(name: str) -> None:
    every, rows = ISSUE_RATES[name]
    frames = _run(name, 5, 5.3)
    counts = arrival_counts(name, 5, every, rows, 5.3)
    times = arrival_times(name, 5, every, rows, 5.3)
    assert counts.tolist() == [len(a.rows) for a in frames]
    assert times.tolist() == [a.time for a in frames]


def test_counts_path_with_params() -> None:
    frames = GENERATORS["sp-crawl"](2, 0.5, 7, 3.0, initial=0, sites=3)
    assert arrival_counts("sp-crawl", 2, 0.5, 7, 3.0, initial=0, sites=3).tolist() == [7] * 6
    assert [len(a.rows) for a in frames] == [7] * 6
    assert set(_all_rows(frames)["site"]) <= {"s0.com", "s1.com", "s2.com"}


def test_sizes_path_builds_no_frames_and_scales(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_frames(*args: object, **kwargs: object) -> None:
        raise AssertionError("the sizes path built a frame")

    monkeypatch.setattr(pd, "DataFrame", no_frames)
    monkeypatch.setattr(pd, "Series", no_frames)
    ten_weeks = 10 * 168.0
    start = time.perf_counter()
    sizes = {name: arrival_counts(name, 1, *ISSUE_RATES[name], ten_weeks) for name in NAMES}
    assert time.perf_counter() - start < 0.1
    assert len(sizes["cs-fetches"]) == 6720 and sizes["cs-fetches"].sum() == 6720 * 200
    assert sizes["sp-crawl"][0] == 5000 and len(sizes["sp-crawl"]) == 1 + 6720
    assert len(sizes["fp-log"]) == 12 * ten_weeks


def test_arrival_grid() -> None:
    """Times every, 2·every, ... ≤ horizon; sp-crawl's 5,000 pages first at time 0."""
    crawl = _run("sp-crawl", 1, 1.1)
    assert [a.time for a in crawl] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert [len(a.rows) for a in crawl] == [5000, 50, 50, 50, 50]
    log = arrival_times("fp-log", 1, *ISSUE_RATES["fp-log"], DAY)
    assert len(log) == 288 and log[-1] == pytest.approx(DAY) and log[0] == pytest.approx(5 / 60)
    assert _run("sp-clicks", 1, 0.5) == []
    with pytest.raises(ValueError, match="every"):
        arrival_counts("fp-log", 1, 0.0, 10, 1.0)


def test_generation_is_fast() -> None:
    """24 h of each workflow's inputs (the CS graph included): 0.1 s at most (cs-fetches); the limit
    is a hang guard ten times that and more, not a benchmark."""
    for name in NAMES:
        start = time.perf_counter()
        _run(name, 11, DAY)
        assert time.perf_counter() - start < 10.0, name


def test_sp_crawl_pages() -> None:
    pages = _all_rows(_run("sp-crawl", 2, DAY))
    assert len(pages) == 5000 + 96 * 50 and pages["url"].is_unique
    assert (pages["url"].str.split("/").str[0] == pages["site"]).all()
    assert pages["url"].tolist()[:2] == [f"{pages['site'][0]}/p0", f"{pages['site'][1]}/p1"]
    assert pages["site"].nunique() == 50
    assert pages["content"].is_unique


def test_sp_clicks_reuse_the_crawl() -> None:
    """Users uniform over 2,000; pages uniform over the crawl's pages (same seed) arrived at or
    before the click arrival, with the crawl's site."""
    seed = 4
    crawl = _run("sp-crawl", seed, DAY)
    site_of = dict(zip(*_all_rows(crawl)[["url", "site"]].to_numpy().T))
    clicks = _run("sp-clicks", seed, DAY)
    assert [a.time for a in clicks] == [float(h) for h in range(1, 25)]
    for arrival in clicks:
        rows = arrival.rows
        assert len(rows) == 500
        crawled = sum(len(a.rows) for a in crawl if a.time <= arrival.time)
        page_ids = rows["url"].str.split("/p").str[1].astype(int)
        assert page_ids.max() < crawled
        assert (rows["site"] == rows["url"].map(site_of)).all()
    every = _all_rows(clicks)
    users = every["user"].str[1:].astype(int)
    assert users.min() >= 0 and users.max() < 2000 and users.nunique() > 1900
    assert (every["url"].str.split("/p").str[1].astype(int) >= 5000).any()  # new pages too


def test_sp_clicks_need_pages() -> None:
    with pytest.raises(ValueError, match="before any"):
        GENERATORS["sp-clicks"](1, 0.1, 5, 1.0, crawl_initial=0)


def test_fp_log_news_share() -> None:
    log = _all_rows(_run("fp-log", 3, DAY))
    n = len(log)
    assert n == 288 * 1000 and log["record_id"].tolist() == list(range(n))
    sd = np.sqrt(n * 0.02 * 0.98)
    assert abs(log["is_news"].sum() - 0.02 * n) < 5 * sd
    assert log["query"].str.match(r"^q\d+$").all()


@pytest.fixture(scope="module")
def fetches() -> pd.DataFrame:
    arrivals = _run("cs-fetches", 6, DAY)
    frame = _all_rows(arrivals)
    frame["arrival"] = np.repeat([a.time for a in arrivals], [len(a.rows) for a in arrivals])
    return frame


def test_cs_fetches_shape(fetches: pd.DataFrame) -> None:
    n = len(fetches)
    assert n == 96 * 200
    assert abs(fetches["ok"].mean() - 0.9) < 5 * np.sqrt(0.09 / n)
    failed = fetches[~fetches["ok"]]
    assert failed["content"].isna().all() and (failed["links"] == "").all()
    ok = fetches[fetches["ok"]]
    assert ok["content"].notna().all()
    # fetch times: within the arrival's interval, the last at the arrival, distinct per URL
    assert ((fetches["fetched_at"] <= fetches["arrival"] + 1e-12)
            & (fetches["fetched_at"] > fetches["arrival"] - 0.25)).all()
    assert fetches["fetched_at"].is_unique


def test_cs_link_graph(fetches: pd.DataFrame) -> None:
    ok = fetches[fetches["ok"]]
    links = ok.drop_duplicates("url").set_index("url")["links"].str.split("|")
    degree = links.map(len)
    assert degree.min() >= 1 and degree.max() <= 15 and {1, 15} <= set(degree)
    assert links.map(lambda t: len(set(t)) == len(t)).all()  # distinct targets
    assert all(url not in targets for url, targets in links.items())  # no self-links
    assert ok.groupby("url")["links"].nunique().max() == 1  # one fixed link set per URL
    again = _all_rows(_run("cs-fetches", 6, 1.0))
    again_links = again[again["ok"]].drop_duplicates("url").set_index("url")["links"]
    assert all(again_links[u] == "|".join(links[u]) for u in again_links.index if u in links)


def test_cs_zipf_skew(fetches: pd.DataFrame) -> None:
    """Zipf(1) over 10,000 URLs: the top 1 % get about H(100)/H(10^4) ≈ 53 % of the fetches."""
    per_url = fetches["url"].value_counts()
    assert per_url.head(100).sum() / len(fetches) > 0.4
    assert per_url.index[0] == "u0"


def test_cs_content_changes(fetches: pd.DataFrame) -> None:
    """Between consecutive successful fetches of a URL the content changes with probability
    0.3, else it is the previous content."""
    ok = fetches[fetches["ok"]].sort_values(["url", "fetched_at"])
    previous = ok.groupby("url")["content"].shift()
    pairs = previous.notna()
    changed = (ok["content"] != previous)[pairs]
    share, n = changed.mean(), int(pairs.sum())
    assert abs(share - 0.3) < 5 * np.sqrt(0.21 / n)
    token = ok["content"].str.split(".").str[0]
    assert (token.groupby(ok["url"]).nunique() == 1).all()
