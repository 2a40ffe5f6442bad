"""The row functions (``fn:``) of the three evaluation workflows, in pandas (digest §5
"Workflows", §8 "Data"; Olston §4.1-§4.2). A Spark version (``spark/``) must give the same rows,
so every function is deterministic and each docstring names its Spark SQL equivalent.

**Signature convention [D].** Each name in :data:`~staleness_lab.workflows.registry.FUNCTIONS`
maps to a :class:`RowFunction`: a frozen dataclass wrapping the pandas callable (calling it calls
the function) and declaring

* ``kind``: ``"map"`` (a stateless block → block function, digest §2 "stateless f"), ``"split"``
  (a predicate: a boolean Series, True rows go to the split's first output, the others to its
  second) or ``"selector"`` (an opaque batch function of one base per input plus ``now``);
* ``requires``: the columns each input must carry, one set per input;
* :meth:`RowFunction.output_schema`: the output schema from the input schemas (a split gives
  its input schema to both outputs).

A :data:`Schema` is an ordered ``{column: type}`` with types ``"str"``, ``"int"``, ``"float"``,
``"bool"``; ``_sign`` is never part of a schema (the row algebra adds it to deltas).

**Bases and deltas.** Map and split functions accept a base or a strong delta: ``_sign`` is
carried through, and the row-preserving ones (``shingle``, ``successful``, ``log-score``,
``is-news``) keep the input's index labels, so they also compose with
:func:`staleness_lab.workflows.rows.map_rows`. ``extract-links`` makes several rows of one and
returns a fresh index.

**Crawl selectors** (digest §5 CrawlSelection; Olston §4.2) read the *successful* fetches base
``(url, fetched_at)`` (digest correction 6), the content digests ``(url, digest, fetched_at)``
and the indegrees ``(target, n)`` (the count widget's (key, n) output). Each returns a base
``(url, score)``, sorted by score descending then url, so the three union into one crawl queue.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from staleness_lab.workflows.registry import register_function
from staleness_lab.workflows.rows import SIGN

#: An ordered ``{column: type}``; types are ``"str"``, ``"int"``, ``"float"``, ``"bool"``.
Schema = dict[str, str]
Kind = Literal["map", "split", "selector"]

#: Hex characters kept of a content digest (64 bits) [D].
DIGEST_CHARS = 16
#: Columns ``shingle`` drops besides ``content``: the fetch payload (CS) [D].
SHINGLE_DROPS = ("content", "ok", "links")
#: Separator of a fetch's out-links (``"u12|u873"``), as the ``cs-fetches`` generator writes them.
LINK_SEP = "|"
#: URLs returned by ``top-unfetched`` and ``adaptive`` (the issue's k) [D].
TOP_K = 100
#: One week in hours: ``periodic``'s base recrawl interval (the issue).
WEEK = 168.0

#: The selectors' output (digest §5: selectors → 3-way union → crawl_queue).
SELECTION: Schema = {"url": "str", "score": "float"}


@dataclass(frozen=True)
class RowFunction:
    """A named row function and its declared signature (see the module docstring)."""

    name: str
    kind: Kind
    requires: tuple[frozenset[str], ...]
    derive: Callable[..., Schema]
    fn: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def output_schema(self, *inputs: Schema) -> Schema:
        """The output schema for these input schemas; ``ValueError`` if an input lacks a
        required column or the number of inputs is wrong."""
        if len(inputs) != len(self.requires):
            raise ValueError(f"{self.name}: {len(inputs)} input(s), expected {len(self.requires)}")
        for i, (schema, needed) in enumerate(zip(inputs, self.requires)):
            missing = needed - schema.keys()
            if missing:
                raise ValueError(f"{self.name}: input {i} lacks column(s) {sorted(missing)}")
        return self.derive(*inputs)


def _row_function(name: str, kind: Kind, requires: tuple[set[str], ...],
                  derive: Callable[..., Schema]) -> Callable[[Callable[..., Any]], RowFunction]:
    """Wrap a pandas function as a :class:`RowFunction` and register it under ``name``."""
    def wrap(fn: Callable[..., Any]) -> RowFunction:
        row_function = RowFunction(name, kind, tuple(frozenset(r) for r in requires), derive, fn)
        return register_function(name)(row_function)
    return wrap


def _signed(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    """``columns`` plus ``_sign`` when ``frame`` is a delta."""
    return columns + [SIGN] if SIGN in frame.columns else columns


# ---------------------------------------------------------------- map and split

def digest(content: pd.Series) -> pd.Series:
    """The content digest: the first 16 hex characters of SHA-256 of the UTF-8 text [D]
    (Spark: ``substring(sha2(content, 256), 1, 16)``); same index."""
    return content.map(lambda text: hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS])


def _shingle_schema(schema: Schema) -> Schema:
    kept = {c: t for c, t in schema.items() if c not in SHINGLE_DROPS and c != "url"}
    return {"url": schema["url"], "digest": "str", **kept}


@_row_function("shingle", "map", ({"url", "content"},), _shingle_schema)
def shingle(frame: pd.DataFrame) -> pd.DataFrame:
    """Replace ``content`` by its :func:`digest` (digest §5: pages → shingle → digests; fetches
    → shingle → content_digests). Columns: url, digest, then the other columns but ``ok`` and
    ``links`` (SP: url, digest, site; CS: url, digest, fetched_at -- ``adaptive`` orders a URL's
    digests by fetch time) [D]. Rows without content (failed fetches, whose content is null as
    in Olston §4.2) are dropped, so content_digests holds successful fetches only (digest
    correction 6) [D]. Spark: ``filter(content.isNotNull())`` and a ``select``."""
    rows = frame[frame["content"].notna()]
    kept = [c for c in frame.columns if c not in SHINGLE_DROPS and c not in ("url", SIGN)]
    out = rows[["url"]].assign(digest=digest(rows["content"]))
    return pd.concat([out, rows[_signed(frame, kept)]], axis=1)


def _log_score_schema(schema: Schema) -> Schema:
    return {**{c: t for c, t in schema.items() if c != "n"}, "score": "float"}


@_row_function("log-score", "map", ({"site", "n"},), _log_score_schema)
def log_score(frame: pd.DataFrame) -> pd.DataFrame:
    """(site, n) → (site, score = ln(1 + n)) (digest §5 SP: count per site → log →
    click_scores). Spark: ``log1p(n)``."""
    keys = [c for c in frame.columns if c not in ("n", SIGN)]
    out = frame[keys].assign(score=np.log1p(frame["n"].to_numpy(dtype=float)))
    if SIGN in frame.columns:
        out[SIGN] = frame[SIGN]
    return out


@_row_function("is-news", "split", ({"is_news"},), dict)
def is_news(frame: pd.DataFrame) -> pd.Series:
    """The FP split predicate (digest §5 FeedbackPrioritization; Olston §4.1): True for a log
    record with news links (first output), False otherwise. Spark: ``filter(is_news)`` and
    ``filter(NOT is_news)``."""
    return frame["is_news"].astype(bool)


@_row_function("successful", "map", ({"url", "ok", "fetched_at"},),
               lambda schema: {"url": "str", "fetched_at": "float"})
def successful(frame: pd.DataFrame) -> pd.DataFrame:
    """The successful fetches (url, fetched_at) (digest §5 CS: fetches → successful_fetches;
    Olston §4.2 "logs all successful fetches"). Spark: ``filter(ok).select(url, fetched_at)``."""
    return frame.loc[frame["ok"].astype(bool), _signed(frame, ["url", "fetched_at"])]


@_row_function("extract-links", "map", ({"url", "ok", "links", "fetched_at"},),
               lambda schema: {"source": "str", "target": "str"})
def extract_links(frame: pd.DataFrame) -> pd.DataFrame:
    """One (source, target) row per out-link of each successful fetch (digest §5 CS: fetches →
    extract links (upsert by source)). The block's rows for a source are its link set: the
    latest successful fetch of that source in the block, by ``fetched_at`` [D] (a source
    fetched twice in one block gives its links once). Replacing older link sets is the upsert's
    job (the row algebra). Spark: a ``row_number`` window per url by ``fetched_at`` desc, then
    ``explode(split(links, '\\|'))``, dropping empty targets."""
    columns = _signed(frame, ["url", "links"])
    ok = frame[frame["ok"].astype(bool)].sort_values("fetched_at", kind="stable")
    latest = ok.drop_duplicates(_signed(frame, ["url"]), keep="last")[columns]
    out = latest.rename(columns={"url": "source", "links": "target"})
    out["target"] = out["target"].str.split(LINK_SEP)
    out = out.explode("target")
    out = out[out["target"].notna() & (out["target"] != "")]
    return out.reset_index(drop=True)


# ---------------------------------------------------------------- crawl selectors

_FETCHES = {"url", "fetched_at"}
_DIGESTS = {"url", "digest", "fetched_at"}
_INDEGREES = {"target", "n"}


def _indegree(indegrees: pd.DataFrame) -> pd.Series:
    """Indegree per URL (the count widget's one row per target)."""
    return indegrees.set_index("target")["n"].rename_axis("url")


def _ranked(score: pd.Series, k: int | None = None) -> pd.DataFrame:
    """(url, score) by score descending, ties by url ascending; the first ``k`` if given."""
    out = score.astype(float).rename("score").rename_axis("url").reset_index()
    out = out.sort_values(["score", "url"], ascending=[False, True], kind="stable")
    return (out if k is None else out.head(k)).reset_index(drop=True)


def floor_log2(m: np.ndarray) -> np.ndarray:
    """⌊log2 m⌋ of positive integers, exactly (no float log: Spark's ``log2`` is
    ``ln x / ln 2`` and can land just below an integer). Spark: ``length(bin(m)) - 1``."""
    return np.frexp(np.asarray(m, dtype=float))[1] - 1


@_row_function("top-unfetched", "selector", (_FETCHES, _INDEGREES), lambda *s: dict(SELECTION))
def top_unfetched(fetches: pd.DataFrame, indegrees: pd.DataFrame, now: float,
                  k: int = TOP_K) -> pd.DataFrame:
    """The ``k`` highest-indegree URLs never successfully fetched, score = indegree, ties by
    url (digest §5 CS; Olston §4.2 "top k pages by indegree that have not already been
    fetched"). ``now`` is unused. Spark: ``left_anti`` join, ``orderBy(n desc, url).limit(k)``."""
    degree = _indegree(indegrees)
    return _ranked(degree[~degree.index.isin(fetches["url"])], k)


@_row_function("periodic", "selector", (_FETCHES, _INDEGREES), lambda *s: dict(SELECTION))
def periodic(fetches: pd.DataFrame, indegrees: pd.DataFrame, now: float,
             week: float = WEEK) -> pd.DataFrame:
    """URLs whose last successful fetch is older than ``week / (1 + ⌊log2(1 + indegree)⌋)``
    hours (strictly), score = hours since that fetch (digest §5 CS; Olston §4.2 "not been
    successfully fetched in the past x minutes, x a function of indegree"; the issue's x).
    A URL without an indegree row has indegree 0. Spark: ``groupBy(url).max(fetched_at)``,
    left join, filter."""
    last = fetches.groupby("url")["fetched_at"].max()
    degree = _indegree(indegrees).reindex(last.index, fill_value=0).to_numpy()
    interval = week / (1 + floor_log2(1 + degree))
    age = now - last
    return _ranked(age[age.to_numpy() > interval])


@_row_function("adaptive", "selector", (_DIGESTS, _INDEGREES), lambda *s: dict(SELECTION))
def adaptive(content_digests: pd.DataFrame, indegrees: pd.DataFrame, now: float,
             k: int = TOP_K) -> pd.DataFrame:
    """The ``k`` URLs of highest priority = indegree × changed share × hours since the last
    fetch, ties by url; only priority > 0 (digest §5 CS; Olston §4.2 "extrapolation of how much
    their content has changed ... weighted by indegree"; the issue's formula). Changed share =
    the fraction of a URL's fetches after its first whose digest differs from the previous
    fetch's, in ``fetched_at`` order; 0 for a URL fetched once [D]. Spark: ``lag(digest)`` over
    a window per url by ``fetched_at``, then ``groupBy(url)``."""
    rows = content_digests.sort_values(["url", "fetched_at"], kind="stable")
    previous = rows.groupby("url")["digest"].shift()
    changed = (previous.notna() & (rows["digest"] != previous)).groupby(rows["url"]).sum()
    per_url = rows.groupby("url")["fetched_at"].agg(["size", "max"])
    share = (changed / (per_url["size"] - 1)).fillna(0.0)
    degree = _indegree(indegrees).reindex(per_url.index, fill_value=0)
    priority = degree * share * (now - per_url["max"])
    return _ranked(priority[priority > 0], k)
