"""Row-level algebra of bases and strong deltas in pandas (Olston §2.1-§2.4; digest §1, §2, §8).

Representation (digest §1 "Encodings" [D], §8 "Rows" [D]; the Spark executor matches it):

* a base ``B`` is a DataFrame of plain rows with bag semantics (duplicates allowed);
* a strong delta ``Δ`` is the data columns plus ``_sign`` (+1 insert, -1 delete).

Every signed-bag operation is one group-by over the signed rows (digest §8 "Converters":
``groupBy(cols).sum(_sign)`` then repeat each row by its count), so results come out in the
group-by's sorted row order. The weak delta kinds (upsert, increment) and the count/distinct
operators are in :mod:`staleness_lab.workflows.weak`.

These are the pandas primitives of the row algebra; the operators built from primitives (the
batch, asynchronous and synchronous incremental joins among them) are written once for pandas
and Spark in :class:`staleness_lab.workflows.algebra.Algebra`, and
:data:`staleness_lab.workflows.pandas_rows.PANDAS` binds them to these. ``check_plain`` and
``check_delta_columns`` read only column names, so the Spark twin shares them.
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: The sign column of a strong delta (digest §8 "Rows").
SIGN = "_sign"
#: Its dtype (+1/-1 fits a byte; sums are taken in int64).
SIGN_DTYPE = "int8"

#: One key column or several.
Key = str | Sequence[str]


def keys_of(key: Key) -> list[str]:
    """``key`` as a list of column names."""
    return [key] if isinstance(key, str) else list(key)


def data_columns(df: pd.DataFrame) -> list[str]:
    """The columns of ``df`` other than ``_sign``, in order."""
    return [c for c in df.columns if c != SIGN]


# ---------------------------------------------------------------- comparison (tests, checks)

def _values_close(x: object, y: object, rel: float) -> bool:
    try:
        if bool(x == y):
            return True
    except (TypeError, ValueError):
        return False
    numeric = all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in (x, y))
    if not numeric:
        return False
    fx, fy = float(x), float(y)  # type: ignore[arg-type]
    return (math.isnan(fx) and math.isnan(fy)) or math.isclose(fx, fy, rel_tol=rel, abs_tol=0.0)


def _match_close(only_a: list[tuple], only_b: list[tuple], rel: float) -> tuple[list, list]:
    """Pair the rows left over from the exact multiset difference within ``rel``; the unpaired."""
    left_b = list(only_b)
    left_a = []
    for row in only_a:
        j = next((j for j, other in enumerate(left_b)
                  if all(_values_close(x, y, rel) for x, y in zip(row, other))), None)
        if j is None:
            left_a.append(row)
        else:
            left_b.pop(j)
    return left_a, left_b


def _tuples(df: pd.DataFrame) -> Iterable[tuple]:
    """The rows of ``df`` as tuples, every missing value (None, NaN) as None: pandas writes
    either for a null in an object column, Spark's ``toPandas`` writes None."""
    return df.astype(object).where(df.notna(), None).itertuples(index=False, name=None)


def bag_difference(a: pd.DataFrame, b: pd.DataFrame, *, rel: float = 1e-12) -> str | None:
    """None if ``a`` and ``b`` are equal as multisets of rows, else a readable difference.

    Columns are compared as sets (order-insensitive), the index is ignored, ``_sign`` is an
    ordinary column (so a delta compares row for row, ±r pairs included), floats are equal
    within relative ``rel`` and missing values (None, NaN) are one null (digest §1 "Data
    model": bag semantics [P])."""
    if a.columns.duplicated().any() or b.columns.duplicated().any():
        return f"repeated column names: {list(a.columns)}, {list(b.columns)}"
    if set(a.columns) != set(b.columns):
        return (f"columns differ: only in a {sorted(set(a.columns) - set(b.columns))}, "
                f"only in b {sorted(set(b.columns) - set(a.columns))}")
    columns = list(a.columns)
    count_a = Counter(_tuples(a[columns]))
    count_b = Counter(_tuples(b[columns]))
    only_a, only_b = _match_close(list((count_a - count_b).elements()),
                                  list((count_b - count_a).elements()), rel)
    if not only_a and not only_b:
        return None
    return f"rows {tuple(columns)}: only in a {only_a}; only in b {only_b}"


def bag_equal(a: pd.DataFrame, b: pd.DataFrame, *, rel: float = 1e-12) -> bool:
    """``a == b`` as multisets of rows (see :func:`bag_difference`)."""
    return bag_difference(a, b, rel=rel) is None


# ---------------------------------------------------------------- signed bags

def check_plain(df: Any, what: str) -> None:
    """``ValueError`` if ``df`` (pandas or Spark) has a ``_sign`` column: a base has none."""
    if SIGN in df.columns:
        raise ValueError(f"{what}: a base has no {SIGN} column")


def check_delta_columns(delta: Any, columns: Sequence[str], what: str) -> None:
    """``ValueError`` unless ``delta`` (pandas or Spark) has ``_sign`` and the data columns
    ``columns`` (in any order)."""
    if SIGN not in delta.columns:
        raise ValueError(f"{what}: a strong delta needs a {SIGN} column")
    if set(data_columns(delta)) != set(columns):
        raise ValueError(f"{what}: delta columns {data_columns(delta)} != {list(columns)}")


def check_delta(delta: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """:func:`check_delta_columns`, and every ``_sign`` is +1 or -1."""
    check_delta_columns(delta, columns, what)
    if not delta[SIGN].isin([1, -1]).all():
        raise ValueError(f"{what}: {SIGN} must be +1 or -1, got {sorted(set(delta[SIGN]))}")


def _concat(frames: Iterable[pd.DataFrame], template: pd.DataFrame) -> pd.DataFrame:
    """Bag union of frames with ``template``'s columns; empty frames are skipped (dtypes)."""
    columns = list(template.columns)
    parts = [f[columns] for f in frames if len(f)]
    if not parts:
        return template.iloc[0:0].reset_index(drop=True)
    return pd.concat(parts, ignore_index=True)


def _net_counts(frames: Sequence[pd.DataFrame], columns: list[str]) -> pd.Series:
    """Σ ``_sign`` per distinct row of signed frames (same columns, any order), indexed by the
    row in sorted order; pandas sums integer groups in int64."""
    parts = [f for f in frames if len(f)]
    if not parts:
        return pd.Series(dtype="int64")
    return pd.concat(parts, ignore_index=True).groupby(columns, dropna=False, sort=True)[SIGN].sum()


def _expand(counts: pd.Series, template: pd.DataFrame, *, sign: bool) -> pd.DataFrame:
    """The rows of ``counts`` repeated ``|count|`` times (zeros dropped), with ``_sign`` if
    ``sign`` (digest §8 ``explode(array_repeat)``); ``template`` gives columns when empty."""
    counts = counts[counts != 0]
    if counts.empty:
        empty = template.iloc[0:0][data_columns(template)].reset_index(drop=True)
        return empty.assign(**{SIGN: pd.Series(dtype=SIGN_DTYPE)}) if sign else empty
    reps = counts.to_numpy()
    rows = counts.index.to_frame(index=False)
    out = rows.iloc[np.repeat(np.arange(len(rows)), np.abs(reps))].reset_index(drop=True)
    if sign:
        out[SIGN] = np.repeat(np.sign(reps), np.abs(reps)).astype(SIGN_DTYPE)
    return out


def _describe(counts: pd.Series, limit: int = 5) -> str:
    rows = counts.index.to_frame(index=False).head(limit).to_dict("records")
    shown = ", ".join(f"{row} (count {n})" for row, n in zip(rows, counts.to_numpy()))
    return shown + (f" and {len(counts) - limit} more" if len(counts) > limit else "")


def signed(df: pd.DataFrame, sign: int) -> pd.DataFrame:
    """The plain rows of ``df`` as a strong delta of inserts (+1) or deletes (-1) (§8 "Rows")."""
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign}")
    check_plain(df, "signed")
    return df.assign(**{SIGN: np.full(len(df), sign, dtype=SIGN_DTYPE)})


def apply_delta(base: pd.DataFrame, delta: pd.DataFrame, *, strict: bool = True) -> pd.DataFrame:
    """``c^{ΔB}``: ``B + Δ`` (§1 "Converters" [P]; §8 ``groupBy(cols).sum(_sign)`` [D]).

    count(row) = base count + Σ signs. A negative count (a deletion of an absent row) raises
    ``ValueError`` naming the row when ``strict`` (digest §1 "Encodings"), else it is clamped
    at 0. Plain rows, repeated by count, sorted by the columns."""
    check_plain(base, "apply_delta")
    columns = list(base.columns)
    check_delta(delta, columns, "apply_delta")
    counts = _net_counts([signed(base, 1), delta], columns)
    negative = counts[counts < 0]
    if strict and len(negative):
        raise ValueError(f"apply_delta: deleting absent row(s): {_describe(negative)}")
    return _expand(counts.clip(lower=0), base, sign=False)


def delta_between(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """``c^{BΔ}``: the minimal strong delta turning ``old`` into ``new`` (§1 "Converters" [P];
    §8: the group-by over old(-1) ∪ new(+1), zeros dropped, ±1 rows) [D]."""
    check_plain(old, "delta_between")
    check_plain(new, "delta_between")
    columns = list(old.columns)
    if set(new.columns) != set(columns):
        raise ValueError(f"delta_between: columns {list(new.columns)} != {columns}")
    return _expand(_net_counts([signed(old, -1), signed(new, 1)], columns), old, sign=True)


def chain(deltas: Iterable[pd.DataFrame], *, cancel: bool = True) -> pd.DataFrame:
    """Δ chaining: abutting ``Δ(Ta▷T1), …, Δ(Tn▷Tb)`` ≡ ``Δ(Ta▷Tb)`` as a signed bag sum (§1
    "Combining, chain" [P]). ``cancel`` drops ±r pairs (lossless compaction, sorted rows);
    ``cancel=False`` keeps every row in order (row counts enter costs: digest correction 5)."""
    deltas = list(deltas)
    if not deltas:
        raise ValueError("chain: no deltas (the columns are unknown)")
    columns = data_columns(deltas[0])
    for delta in deltas:
        check_delta(delta, columns, "chain")
    if cancel:
        return _expand(_net_counts(deltas, columns), deltas[0], sign=True)
    return _concat(deltas, deltas[0][columns + [SIGN]])


# ---------------------------------------------------------------- operators

def union(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Bag union of two bases or two deltas, in ``a``'s column order (§2 table "union batch /
    incr" [P]); signed rows are kept, not cancelled."""
    if set(a.columns) != set(b.columns):
        raise ValueError(f"union: columns {list(a.columns)} != {list(b.columns)}")
    return _concat([a, b], a)


def merge(left: pd.DataFrame, right: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Inner join on ``keys`` (``pd.merge``: null keys match): left columns, then right's non-key
    columns; a non-key column on both sides raises."""
    overlap = (set(left.columns) & set(right.columns)) - set(keys)
    if overlap:
        raise ValueError(f"join: non-key columns on both sides: {sorted(overlap)}")
    return pd.merge(left, right, on=keys, how="inner", sort=False)


def select(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The columns ``columns`` of ``df``, in that order."""
    return df[list(columns)]


def map_rows(df: pd.DataFrame, fn: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
    """A stateless per-row operator (map, filter, split branch) on a base or a delta (§2 table
    "stateless f / split" [P]): ``fn`` gets the data columns (RangeIndex) and returns the
    surviving rows under their own index labels; a delta's ``_sign`` follows its row."""
    data = df[data_columns(df)].reset_index(drop=True)
    out = fn(data)
    if not out.index.is_unique or not out.index.isin(data.index).all():
        raise ValueError("map_rows: fn must keep the index labels of the rows it returns")
    if SIGN not in df.columns:
        return out.reset_index(drop=True)
    signs = df[SIGN].reset_index(drop=True)
    return out.assign(**{SIGN: signs.loc[out.index].to_numpy()}).reset_index(drop=True)
