"""Seeded input generators of the three evaluation workflows (digest §5 "Workflows" rates [D],
§8 "Data"; Olston §4.1-§4.2, §7), registered by name in
:data:`~staleness_lab.workflows.registry.GENERATORS`.

A generator is called as ``GENERATORS[name](seed, every, rows, horizon, **params)`` and returns
the :class:`Arrival` list: insert-only rows (Δ⁺, no ``_sign``) arriving at ``every``,
``2·every``, ... ≤ ``horizon`` hours, plus one initial arrival at time 0 where the issue says
"N first" (``sp-crawl``'s 5,000 pages). Each registry entry is a :class:`Generator` that also
carries the columns (:attr:`Generator.schema`) and the **sizes path**
(:func:`arrival_times`, :func:`arrival_counts`): arrival times and row counts without
building a frame, for the counts-only mode of 10-week runs. The frame path slices its rows by
those very counts, so the two agree.

**Randomness [D].** Each drawn quantity has its own stream
``numpy.random.default_rng([seed, zlib.crc32(name.encode()), TAG])``, ``name`` the generator's
name, so scenarios and schedulers run on one seed see the same data (common random numbers).
Quantities are drawn for all rows up to the horizon at once, in row order, from their own
stream, so the rows of an arrival do not depend on the horizon (a 12-hour run is a prefix of a
10-week one). ``sp-clicks`` reads ``sp-crawl``'s site stream: it clicks on the very pages the
crawl produced (same seed), without redrawing them.

Generators and their issue parameters (``ISSUE_RATES`` gives every/rows):

* ``sp-crawl`` (url, site, content): ``initial`` pages at time 0, then ``rows`` new pages per
  arrival, each on a uniform one of ``sites`` sites; url ``s17.com/p1234`` (page ids in crawl
  order, unique); content a seeded token.
* ``sp-clicks`` (user, url, site): ``rows`` clicks per arrival, user uniform over ``users``
  (``u123``), page uniform over the pages crawled at or before the click arrival (``crawl_*``
  must match the crawl channel's settings).
* ``fp-log`` (record_id, query, is_news): ``rows`` records per arrival, query uniform over
  ``queries`` (``q12``) [D], news with probability ``news``.
* ``cs-fetches`` (url, ok, content, links, fetched_at): an open-loop fetcher over a link graph
  of ``urls`` URLs (``u0`` ...) built once per seed; see :func:`cs_fetches`.
* ``cascade-feed`` (key, ``column``): the inputs of the scaling workflow ``join-cascade(k)``
  (:mod:`staleness_lab.workflows.cascade`); see :func:`cascade_feed`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from staleness_lab.workflows.functions import LINK_SEP, Schema
from staleness_lab.workflows.registry import GENERATORS, register_generator

#: (every in hours, rows per arrival) of each generator as the issue states them (digest §5 [D]).
ISSUE_RATES: dict[str, tuple[float, int]] = {
    "sp-crawl": (0.25, 50),
    "sp-clicks": (1.0, 500),
    "fp-log": (5 / 60, 1000),
    "cs-fetches": (0.25, 200),
}
CRAWL_INITIAL = 5000
SITES = 50
USERS = 2000
QUERIES = 10_000
NEWS_SHARE = 0.02
URLS = 10_000
MAX_OUT_DEGREE = 15
SUCCESS = 0.9
CHANGE = 0.3
#: Candidate targets drawn per URL to find its distinct out-links (far more than 15 distinct).
_LINK_CANDIDATES = 64
#: Slack when comparing arrival times (k·every against the horizon or another grid).
_EPS = 1e-9

# The third key of each stream (ASCII tags).
_SITE, _TEXT, _USER, _PAGE = 0x73697465, 0x74657874, 0x75736572, 0x70616765
_QUERY, _NEWS = 0x71757279, 0x6E657773
_DEGREE, _LINK, _TOKEN, _FETCH, _OK, _CHANGE = (
    0x64656772, 0x6C696E6B, 0x746F6B6E, 0x66746368, 0x6F6B6179, 0x63686E67)

Sizes = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True, eq=False)
class Arrival:
    """One arrival on an input channel: ``rows`` (Δ⁺, no ``_sign``) at ``time`` hours."""

    time: float
    rows: pd.DataFrame


@dataclass(frozen=True)
class Generator:
    """A registered generator: calling it builds the arrivals; ``sizes`` gives (times, row
    counts) with the same arguments and no frames; ``schema`` the columns, or a function of
    the parameters giving them (a generator whose columns are named by a parameter)."""

    name: str
    schema: Schema | Callable[..., Schema]
    frames: Callable[..., list[Arrival]]
    sizes: Callable[..., Sizes]

    def __call__(self, seed: int, every: float, rows: int, horizon: float,
                 **params: object) -> list[Arrival]:
        return self.frames(seed, every, rows, horizon, **params)


def _register(name: str, schema: Schema | Callable[..., Schema],
              sizes: Callable[..., Sizes]) -> Callable[[Callable[..., list[Arrival]]], Generator]:
    def wrap(frames: Callable[..., list[Arrival]]) -> Generator:
        return register_generator(name)(Generator(name, schema, frames, sizes))
    return wrap


def arrival_times(name: str, seed: int, every: float, rows: int, horizon: float,
                  **params: object) -> np.ndarray:
    """Arrival times (hours) of generator ``name``, aligned with :func:`arrival_counts`."""
    return GENERATORS[name].sizes(seed, every, rows, horizon, **params)[0]


def arrival_counts(name: str, seed: int, every: float, rows: int, horizon: float,
                   **params: object) -> np.ndarray:
    """Rows per arrival of generator ``name`` (the sizes path: no frames built); equal to the
    ``len(rows)`` of the frame path for the same arguments."""
    return GENERATORS[name].sizes(seed, every, rows, horizon, **params)[1]


# ---------------------------------------------------------------- shared helpers

def _stream(seed: int, name: str, tag: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode()), tag])


def _grid(every: float, horizon: float) -> np.ndarray:
    """``every, 2·every, ... ≤ horizon``."""
    if every <= 0:
        raise ValueError(f"every must be > 0, got {every}")
    return np.arange(1, int(np.floor(horizon / every + _EPS)) + 1) * float(every)


def _periodic_sizes(every: float, rows: int, horizon: float) -> Sizes:
    if rows < 0:
        raise ValueError(f"rows must be >= 0, got {rows}")
    times = _grid(every, horizon)
    return times, np.full(len(times), rows, dtype=np.int64)


def _split(frame: pd.DataFrame, sizes: Sizes) -> list[Arrival]:
    """The consecutive slices of ``frame`` with the given counts, one per arrival."""
    times, counts = sizes
    ends = np.cumsum(counts)
    return [Arrival(float(t), frame.iloc[end - n:end].reset_index(drop=True))
            for t, n, end in zip(times, counts, ends)]


def _names(prefix: str, ids: np.ndarray) -> np.ndarray:
    """``prefix + str(id)`` for each id, as an object array."""
    return (prefix + pd.Series(ids, dtype=np.int64).astype(str)).to_numpy(dtype=object)


def _tokens(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` seeded content tokens (16 hex digits)."""
    hexed = rng.integers(0, 2**63, size=n).astype(">u8").tobytes().hex().encode()
    return np.frombuffer(hexed, dtype="S16").astype(str).astype(object)


# ---------------------------------------------------------------- SearchPreprocessing

def _crawl_sizes(seed: int, every: float, rows: int, horizon: float, *,
                 initial: int = CRAWL_INITIAL, sites: int = SITES) -> Sizes:
    times, counts = _periodic_sizes(every, rows, horizon)
    if initial <= 0:
        return times, counts
    return np.concatenate([[0.0], times]), np.concatenate([[initial], counts]).astype(np.int64)


def _page_sites(seed: int, pages: int, sites: int) -> np.ndarray:
    """The site of each of the first ``pages`` crawled pages (the crawl's own site stream)."""
    return _stream(seed, "sp-crawl", _SITE).integers(0, sites, size=pages)


def _page_urls(site_names: np.ndarray, page_ids: np.ndarray) -> np.ndarray:
    return site_names + _names("/p", page_ids)


@_register("sp-crawl", {"url": "str", "site": "str", "content": "str"}, _crawl_sizes)
def sp_crawl(seed: int, every: float, rows: int, horizon: float, *,
             initial: int = CRAWL_INITIAL, sites: int = SITES) -> list[Arrival]:
    """SP crawl: ``initial`` pages at 0, then ``rows`` new pages each ``every`` hours, site
    uniform over ``sites`` (the issue: 5,000 first, 50 every 15 min, 50 sites; digest §8)."""
    sizes = _crawl_sizes(seed, every, rows, horizon, initial=initial, sites=sites)
    n = int(sizes[1].sum())
    site = _names("s", np.arange(sites)) + ".com"
    page_site = site[_page_sites(seed, n, sites)]
    frame = pd.DataFrame({"url": _page_urls(page_site, np.arange(n)), "site": page_site,
                          "content": _tokens(_stream(seed, "sp-crawl", _TEXT), n)})
    return _split(frame, sizes)


def _click_sizes(seed: int, every: float, rows: int, horizon: float, *, users: int = USERS,
                 sites: int = SITES, crawl_every: float = ISSUE_RATES["sp-crawl"][0],
                 crawl_rows: int = ISSUE_RATES["sp-crawl"][1],
                 crawl_initial: int = CRAWL_INITIAL) -> Sizes:
    return _periodic_sizes(every, rows, horizon)


@_register("sp-clicks", {"user": "str", "url": "str", "site": "str"}, _click_sizes)
def sp_clicks(seed: int, every: float, rows: int, horizon: float, *, users: int = USERS,
              sites: int = SITES, crawl_every: float = ISSUE_RATES["sp-crawl"][0],
              crawl_rows: int = ISSUE_RATES["sp-crawl"][1],
              crawl_initial: int = CRAWL_INITIAL) -> list[Arrival]:
    """SP clicks: ``rows`` clicks each ``every`` hours, user uniform over ``users``, page
    uniform over the ``sp-crawl`` pages (same seed, ``crawl_*`` settings) arrived at or before
    the click arrival (the issue: 500 per hour, 2,000 users). ``ValueError`` if clicks arrive
    before any page."""
    sizes = _click_sizes(seed, every, rows, horizon)
    times, counts = sizes
    crawl_times, crawl_counts = _crawl_sizes(seed, crawl_every, crawl_rows, horizon,
                                             initial=crawl_initial, sites=sites)
    crawled = np.concatenate([[0], np.cumsum(crawl_counts)])
    pages = np.repeat(crawled[np.searchsorted(crawl_times, times + _EPS, side="right")], counts)
    if (pages == 0).any():
        raise ValueError("sp-clicks: clicks arrive before any sp-crawl page")
    n = int(counts.sum())
    page = np.floor(_stream(seed, "sp-clicks", _PAGE).random(n) * pages).astype(np.int64)
    site = _names("s", np.arange(sites)) + ".com"
    page_site = site[_page_sites(seed, int(pages.max(initial=0)), sites)[page]]
    frame = pd.DataFrame({
        "user": _names("u", _stream(seed, "sp-clicks", _USER).integers(0, users, size=n)),
        "url": _page_urls(page_site, page), "site": page_site})
    return _split(frame, sizes)


# ---------------------------------------------------------------- FeedbackPrioritization

def _log_sizes(seed: int, every: float, rows: int, horizon: float, *,
               news: float = NEWS_SHARE, queries: int = QUERIES) -> Sizes:
    return _periodic_sizes(every, rows, horizon)


@_register("fp-log", {"record_id": "int", "query": "str", "is_news": "bool"}, _log_sizes)
def fp_log(seed: int, every: float, rows: int, horizon: float, *,
           news: float = NEWS_SHARE, queries: int = QUERIES) -> list[Arrival]:
    """FP search log: ``rows`` records each ``every`` hours, each news with probability
    ``news`` (the issue: 1,000 every 5 min, 2 %); record ids 0, 1, ... in arrival order."""
    sizes = _log_sizes(seed, every, rows, horizon)
    n = int(sizes[1].sum())
    vocabulary = _names("q", np.arange(queries))
    frame = pd.DataFrame({
        "record_id": np.arange(n, dtype=np.int64),
        "query": vocabulary[_stream(seed, "fp-log", _QUERY).integers(0, queries, size=n)],
        "is_news": _stream(seed, "fp-log", _NEWS).random(n) < news})
    return _split(frame, sizes)


# ---------------------------------------------------------------- CrawlSelection

@dataclass(frozen=True)
class _Graph:
    names: np.ndarray  # "u0", "u1", ...
    links: np.ndarray  # per URL: its out-links joined by LINK_SEP
    tokens: np.ndarray  # per URL: its content token (version 0)
    cdf: np.ndarray  # Zipf(1) over URL ids (u0 the most popular)


def _zipf(rng: np.random.Generator, cdf: np.ndarray, size: int | tuple[int, int]) -> np.ndarray:
    """URL ids drawn with P(i) ∝ 1/(i+1) by inverting ``cdf`` (prefix-stable)."""
    return np.searchsorted(cdf, rng.random(size), side="right")


@lru_cache(maxsize=4)
def _graph(seed: int, urls: int, max_out: int) -> _Graph:
    """The CS link graph of one seed: out-degree uniform on 1..``max_out``, distinct Zipf(1)
    targets other than the source (the issue; self-links excluded [D]). Built once per seed."""
    cdf = np.cumsum(1.0 / np.arange(1, urls + 1))
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    degree = _stream(seed, "cs-fetches", _DEGREE).integers(1, max_out + 1, size=urls)
    candidates = _zipf(_stream(seed, "cs-fetches", _LINK), cdf, (urls, _LINK_CANDIDATES))
    order = np.argsort(candidates, axis=1, kind="stable")
    ranked = np.take_along_axis(candidates, order, axis=1)
    repeat = np.zeros_like(ranked, dtype=bool)
    repeat[:, 1:] = ranked[:, 1:] == ranked[:, :-1]  # a later draw of an earlier target
    keep = np.empty_like(repeat)
    np.put_along_axis(keep, order, ~repeat, axis=1)
    keep &= candidates != np.arange(urls)[:, None]
    keep &= np.cumsum(keep, axis=1) <= degree[:, None]
    names = _names("u", np.arange(urls))
    per_source = keep.sum(axis=1)
    starts = (np.cumsum(per_source) - per_source)[per_source > 0]
    links = np.full(urls, "", dtype=object)  # "|u12|u873" summed per source, then the "|" cut
    links[per_source > 0] = [s[1:] for s in np.add.reduceat(LINK_SEP + names[candidates[keep]],
                                                             starts)]
    return _Graph(names, links, _tokens(_stream(seed, "cs-fetches", _TOKEN), urls), cdf)


def _fetch_sizes(seed: int, every: float, rows: int, horizon: float, *, urls: int = URLS,
                 max_out: int = MAX_OUT_DEGREE, success: float = SUCCESS,
                 change: float = CHANGE) -> Sizes:
    return _periodic_sizes(every, rows, horizon)


@_register("cs-fetches", {"url": "str", "ok": "bool", "content": "str", "links": "str",
                          "fetched_at": "float"}, _fetch_sizes)
def cs_fetches(seed: int, every: float, rows: int, horizon: float, *, urls: int = URLS,
               max_out: int = MAX_OUT_DEGREE, success: float = SUCCESS,
               change: float = CHANGE) -> list[Arrival]:
    """CS fetches (the issue; digest §5, §8; Olston §4.2 "(url, timestamp, error code, page
    content)"): ``rows`` fetches each ``every`` hours of Zipf(1)-chosen URLs, open loop (they
    do not depend on the selectors). A fetch succeeds with probability ``success``; a failed
    one has null content and empty links. A successful fetch's content is the URL's token and
    version, the version moving on with probability ``change`` per successful fetch (a failed
    fetch observes nothing, so changes nothing [D]); links are the URL's fixed out-links. The
    fetches of one arrival are spread over its interval, the last at the arrival time [D], so
    a URL's fetch times are distinct (a total order for change detection)."""
    graph = _graph(seed, urls, max_out)
    sizes = _fetch_sizes(seed, every, rows, horizon)
    times, counts = sizes
    n = int(counts.sum())
    url = _zipf(_stream(seed, "cs-fetches", _FETCH), graph.cdf, n)
    ok = _stream(seed, "cs-fetches", _OK).random(n) < success
    moved = ok & (_stream(seed, "cs-fetches", _CHANGE).random(n) < change)
    version = pd.Series(moved.astype(np.int64)).groupby(url).cumsum().to_numpy()
    content = graph.tokens[url] + _names(".", version)
    position = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)  # within arrival
    per_arrival = np.repeat(counts, counts)
    frame = pd.DataFrame({
        "url": graph.names[url], "ok": ok,
        "content": np.where(ok, content, None),
        "links": np.where(ok, graph.links[url], ""),
        "fetched_at": np.repeat(times, counts) - (per_arrival - 1 - position) * every
        / np.maximum(per_arrival, 1)})
    return _split(frame, sizes)


# ---------------------------------------------------------------- join-cascade(k)

CASCADE_KEYS = 100


def _cascade_sizes(seed: int, every: float, rows: int, horizon: float, *,
                   keys: int = CASCADE_KEYS, column: str = "value") -> Sizes:
    return _periodic_sizes(every, rows, horizon)


def _cascade_schema(*, column: str = "value", **_: object) -> Schema:
    return {"key": "str", column: "str"}


@_register("cascade-feed", _cascade_schema, _cascade_sizes)
def cascade_feed(seed: int, every: float, rows: int, horizon: float, *,
                 keys: int = CASCADE_KEYS, column: str = "value") -> list[Arrival]:
    """An input of ``join-cascade(k)`` [D] (the issue's scaling workflow): ``rows`` insert-only
    rows each ``every`` hours, ``key`` uniform over ``keys`` keys (``k17``) and a seeded token
    in ``column``. Each input names its own ``column``, which also names its streams, so the
    k inputs of one seed draw independently."""
    if not column.isidentifier():
        raise ValueError(f"column must be an identifier, got {column!r}")
    sizes = _cascade_sizes(seed, every, rows, horizon)
    n = int(sizes[1].sum())
    name = f"cascade-feed:{column}"
    frame = pd.DataFrame({"key": _names("k", _stream(seed, name, _PAGE).integers(0, keys, size=n)),
                          column: _tokens(_stream(seed, name, _TOKEN), n)})
    return _split(frame, sizes)
