"""Weak delta kinds δ_upsert and δ_inc, their converters, and the count/distinct operators
(Olston §2.1 "Weak delta data block", §2.4, §2.5 Fig 3; digest §1 "Encodings", "Combining",
"Converters", §2 "Widgets", §8 "Rows").

Representation [D] (digest §8; the Spark executor matches it):

* upsert: key columns + value columns + ``_seq`` (newer wins: Parquet and shuffles keep no row
  order, digest correction 8) + ``_tomb`` (True deletes the key); a keyed base holds at most
  one row per key;
* increment: key columns + ``_inc``; applied to a counts base (key columns + a count column,
  ``n`` by default) it creates an absent key and retires a key whose count reaches 0.

These are pandas primitives; the converters and operators built from them (``apply_upsert``,
``upsert_to_delta``, ``increment_to_delta``, ``distinct_delta``) are written once for pandas and
Spark in :class:`staleness_lab.workflows.algebra.Algebra`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from staleness_lab.workflows.rows import (
    SIGN,
    Key,
    _concat,
    chain,
    data_columns,
    keys_of,
)

#: Upsert sequence number (a larger one is newer).
SEQ = "_seq"
#: Upsert tombstone flag.
TOMB = "_tomb"
#: Increment amount.
INC = "_inc"


def _key_in(df: pd.DataFrame, keys: list[str], other: pd.DataFrame) -> np.ndarray:
    """Per row of ``df``: is its key among ``other``'s keys (a semi-join mask)? A MultiIndex
    even for one key: its codes make None and NaN one null, as the group-bys do (``Series.isin``
    would not match a None key with the NaN a group-by wrote for it)."""
    return pd.MultiIndex.from_frame(df[keys]).isin(pd.MultiIndex.from_frame(other[keys]))


def key_in(df: pd.DataFrame, keys: list[str], other: pd.DataFrame, *, keep: bool) -> pd.DataFrame:
    """The rows of ``df`` whose key is (``keep``) or is not among ``other``'s keys: a semi or
    anti join by :func:`_key_in`'s mask, index labels kept."""
    mask = _key_in(df, keys, other)
    return df[mask if keep else ~mask]


def sort_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``df`` sorted by every column (stable), index reset: the order results come
    out in."""
    return df.sort_values(list(df.columns), kind="stable", ignore_index=True)


# ---------------------------------------------------------------- upserts

def chain_upserts(upserts: Iterable[pd.DataFrame], key: Key) -> pd.DataFrame:
    """Chain of upsert δs: per key, the rows of its newest ``_seq`` (§1 "Combining" [P]; the
    explicit sequence: correction 8 [D]). A key's record is the set of its rows at one
    ``_seq`` (CrawlSelection's links: a source's link set), a tombstone deletes them all. One
    (key, ``_seq``) in two of the chained upserts is ambiguous and raises."""
    upserts = list(upserts)
    if not upserts:
        raise ValueError("chain_upserts: no upserts (the columns are unknown)")
    keys = keys_of(key)
    for u in upserts:
        if set(u.columns) != set(upserts[0].columns) or not {SEQ, TOMB} <= set(u.columns):
            raise ValueError(f"chain_upserts: columns {list(u.columns)} (need {SEQ}, {TOMB})")
    if len(upserts) > 1:
        versions = _concat([u[keys + [SEQ]].drop_duplicates() for u in upserts], upserts[0][keys + [SEQ]])
        repeated = versions.duplicated(keep=False)
        if repeated.any():
            raise ValueError(f"chain_upserts: repeated (key, {SEQ}): "
                             f"{versions.loc[repeated, keys + [SEQ]].drop_duplicates().to_dict('records')}")
    rows = _concat(upserts, upserts[0])
    newest = rows.groupby(keys, dropna=False, sort=False)[SEQ].transform("max")
    return sort_rows(rows[(rows[SEQ] == newest).to_numpy()])


def records_to_upsert(records: pd.DataFrame, seq: int) -> pd.DataFrame:
    """Plain (or all-insert signed) rows as the upsert that makes them their keys' records at
    ``seq``: the weak output of a stateless fn on a channel declaring ``delta_kind: upsert``
    (digest §2 "Widgets" [P]: CrawlSelection's extract links upserts by source). A key the
    rows do not mention keeps its records; deletions have no upsert form and raise."""
    if SIGN in records.columns:
        if (records[SIGN] < 0).any():
            raise ValueError("records_to_upsert: a delta with deletions has no upsert form")
        records = records.drop(columns=[SIGN])
    return records.assign(**{TOMB: False, SEQ: np.int64(seq)}).reset_index(drop=True)


def live(latest: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The non-tombstoned records of resolved upserts, as base rows."""
    return latest.loc[~latest[TOMB].astype(bool).to_numpy(), columns]


def delta_to_upsert(delta: pd.DataFrame, key: Key, *, seq: int = 0) -> pd.DataFrame:
    """``c^{Δδ}`` for a keyed channel (at most one row per key before and after): per key of
    the net delta, its inserted row, else a tombstone (carrying the deleted row's values). The
    one converter that needs no old base (§2.4 [P]). All records get ``_seq = seq``."""
    keys = keys_of(key)
    net = chain([delta])
    inserted, deleted = net[net[SIGN] > 0], net[net[SIGN] < 0]
    if inserted.duplicated(keys).any():
        raise ValueError(f"delta_to_upsert: several rows inserted for key(s) "
                         f"{inserted.loc[inserted.duplicated(keys), keys].to_dict('records')}")
    tombs = deleted[~_key_in(deleted, keys, inserted)].drop_duplicates(keys)
    rows = _concat([inserted.assign(**{TOMB: False}), tombs.assign(**{TOMB: True})],
                   net.assign(**{TOMB: False}))
    out = rows[data_columns(net) + [TOMB]].assign(**{SEQ: np.int64(seq)})
    return out.sort_values(keys, kind="stable", ignore_index=True)


# ---------------------------------------------------------------- increments

def chain_increments(increments: Iterable[pd.DataFrame], key: Key) -> pd.DataFrame:
    """Chain of increment δs: the sum per key, zero sums dropped (§1 "Combining" [P])."""
    increments = list(increments)
    if not increments:
        raise ValueError("chain_increments: no increments (the columns are unknown)")
    keys = keys_of(key)
    rows = _concat([i[keys + [INC]].astype({INC: "int64"}) for i in increments],
                   increments[0][keys + [INC]].astype({INC: "int64"}))
    total = rows.groupby(keys, dropna=False, sort=True)[INC].sum().reset_index()
    return total[total[INC] != 0].reset_index(drop=True)


def apply_increment(counts: pd.DataFrame, inc: pd.DataFrame, key: Key,
                    count: str = "n") -> pd.DataFrame:
    """``c^{δB}`` for increments: new count = old + Σ inc per key; an absent key is created,
    a key reaching 0 retired, a negative count raises (§2.1 example [P]; digest §1 "Encodings"
    [D]; §8 "full outer join, sum, drop zeros"). Sorted by key."""
    keys = keys_of(key)
    if set(counts.columns) != set(keys + [count]) or counts.duplicated(keys).any():
        raise ValueError(f"apply_increment: counts must be one row per key of {keys + [count]}")
    rows = chain_increments([counts.rename(columns={count: INC}), inc], keys)
    negative = rows[rows[INC] < 0]
    if len(negative):
        raise ValueError(f"apply_increment: negative count(s): "
                         f"{negative.to_dict('records')}")
    return rows.rename(columns={INC: count})[keys + [count]]


def delta_to_increment(delta: pd.DataFrame, key: Key, count: str | None = None) -> pd.DataFrame:
    """``c^{Δδ}`` into increments: Σ sign per key, i.e. +1 per inserted row and -1 per deleted
    row; with ``count`` each row weighs its ``count`` column (a Δ of a counts base, the inverse
    of :meth:`~staleness_lab.workflows.algebra.Algebra.increment_to_delta`) (§1 "Converters"
    [P]; [D])."""
    keys = keys_of(key)
    weight = delta[SIGN].astype("int64")
    if count is not None:
        weight = weight * delta[count].astype("int64")
    return chain_increments([delta[keys].assign(**{INC: weight})], keys)


# ---------------------------------------------------------------- count, distinct

def count(base: pd.DataFrame, key: Key, count: str = "n") -> pd.DataFrame:
    """Batch count B → B of (key, n), sorted by key (§2 table "count batch" [P], Fig 3)."""
    keys = keys_of(key)
    return base.groupby(keys, dropna=False, sort=True).size().rename(count).reset_index()


def count_delta(delta: pd.DataFrame, key: Key) -> pd.DataFrame:
    """Incremental count Δ → δ_inc (§2 table "count incr" [P], Fig 3 [R]): the row count per
    key of the delta, :func:`delta_to_increment` with unit weights."""
    return delta_to_increment(delta, key)


def distinct(base: pd.DataFrame, key: Key) -> pd.DataFrame:
    """Batch distinct of the key columns, sorted (§2 "Widgets": built on count [P])."""
    keys = keys_of(key)
    return base[keys].drop_duplicates().sort_values(keys, kind="stable", ignore_index=True)
