"""The row algebra of Olston's blocks as one interface, its operators that do not depend on the
backend written once (Olston §2.1-§2.5; digest §1 "Encodings", "Converters", §2 "Widgets", §8
"Rows" and "Converters").

:class:`~staleness_lab.workflows.execute.Executor` runs invocations on an :class:`Algebra`:
:data:`staleness_lab.workflows.pandas_rows.PANDAS` in the ``memory`` mode, its Spark twin
:data:`staleness_lab.spark.workflows.rows.SPARK` in the ``spark`` mode. A backend provides the
**primitives**, where pandas and Spark differ: the signed-bag group-bys (apply, between, chain),
unions, joins on keys, key semi/anti joins, the weak kinds' group-bys and windows, the row
functions, and the data checks (a Spark check costs a job, so some pandas checks are not
repeated there). The **composites** below are built from primitives only, so both backends
compose them alike:

* :meth:`Algebra.join`, :meth:`Algebra.join_delta_base`, :meth:`Algebra.sync_incremental_join`
  (bases and strong deltas; pandas primitives in :mod:`.rows`);
* :meth:`Algebra.apply_upsert`, :meth:`Algebra.upsert_to_delta` (upserts),
  :meth:`Algebra.increment_to_delta` (increments), :meth:`Algebra.distinct_delta` (the
  incremental distinct over its count per key; pandas primitives in :mod:`.weak`).

A frame is the backend's (a pandas or a Spark DataFrame); every primitive keeps the pandas
representation (``_sign``, ``_seq``, ``_tomb``, ``_inc``, the count column).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any

from staleness_lab.workflows.rows import SIGN, Key, check_plain, data_columns, keys_of
from staleness_lab.workflows.weak import SEQ, TOMB

#: A frame of the algebra in use (pandas or Spark).
Frame = Any


class Algebra(ABC):
    """A backend's row algebra: its primitives (abstract here) and the composites over them
    (module docstring)."""

    # -- primitives: bases and strong deltas ---------------------------------------------------
    @abstractmethod
    def apply_delta(self, base: Frame, delta: Frame, *, strict: bool = True) -> Frame:
        """``c^{ΔB}``: ``B + Δ``; with ``strict`` a deletion of an absent row raises, else it
        clamps (:func:`staleness_lab.workflows.rows.apply_delta`)."""

    @abstractmethod
    def delta_between(self, old: Frame, new: Frame) -> Frame:
        """``c^{BΔ}``: the minimal strong delta turning ``old`` into ``new``."""

    @abstractmethod
    def chain(self, deltas: Iterable[Frame], *, cancel: bool = True) -> Frame:
        """Abutting strong deltas as one; ``cancel`` nets ±r pairs, else every row is kept."""

    @abstractmethod
    def union(self, a: Frame, b: Frame) -> Frame:
        """Bag union of two bases or two deltas in ``a``'s column order, signed rows kept."""

    @abstractmethod
    def signed(self, frame: Frame, sign: int) -> Frame:
        """The plain rows of ``frame`` as a strong delta of inserts (+1) or deletes (-1)."""

    @abstractmethod
    def check_delta(self, delta: Frame, columns: Sequence[str], what: str) -> None:
        """``ValueError`` unless ``delta`` is a strong delta of data columns ``columns``."""

    @abstractmethod
    def merge(self, left: Frame, right: Frame, keys: list[str]) -> Frame:
        """Inner join on ``keys`` (null keys match): left columns, then right's non-key ones;
        ``ValueError`` when a non-key column is on both sides."""

    @abstractmethod
    def select(self, frame: Frame, columns: Sequence[str]) -> Frame:
        """The columns ``columns`` of ``frame``, in that order."""

    @abstractmethod
    def key_in(self, frame: Frame, keys: list[str], other: Frame, *, keep: bool) -> Frame:
        """The rows of ``frame`` whose key is (``keep``) or is not among ``other``'s keys: a
        semi or anti join; a null key matches a null key."""

    # -- primitives: upserts and increments ----------------------------------------------------
    @abstractmethod
    def chain_upserts(self, upserts: Iterable[Frame], key: Key) -> Frame:
        """Per key, the rows of its newest ``_seq``; one (key, ``_seq``) in two upserts raises."""

    @abstractmethod
    def records_to_upsert(self, records: Frame, seq: int) -> Frame:
        """Plain (or all-insert signed) rows as the upsert making them their keys' records."""

    @abstractmethod
    def live(self, latest: Frame, columns: list[str]) -> Frame:
        """The non-tombstoned records of resolved upserts, as base rows of ``columns``."""

    @abstractmethod
    def sort_rows(self, frame: Frame) -> Frame:
        """``frame`` in the backend's canonical row order (pandas: sorted by every column)."""

    @abstractmethod
    def chain_increments(self, increments: Iterable[Frame], key: Key) -> Frame:
        """The sum of ``_inc`` per key, zero sums dropped."""

    @abstractmethod
    def apply_increment(self, counts: Frame, inc: Frame, key: Key, count: str = "n") -> Frame:
        """``c^{δB}`` for increments: new count = old + Σ inc per key; a key reaching 0 is
        retired, a repeated key in ``counts`` or a negative count raises."""

    @abstractmethod
    def count(self, base: Frame, key: Key, count: str = "n") -> Frame:
        """Batch count: (key, ``count``) per key."""

    @abstractmethod
    def count_delta(self, delta: Frame, key: Key) -> Frame:
        """Incremental count: Σ ``_sign`` per key of a strong delta, as an increment."""

    @abstractmethod
    def distinct(self, base: Frame, key: Key) -> Frame:
        """Batch distinct of the key columns."""

    # -- primitives: row functions and state ---------------------------------------------------
    @abstractmethod
    def stateless(self, fn: str, frame: Frame, *, split: bool, outputs: int) -> tuple[Frame, ...]:
        """A stateless widget's output frames: the map ``fn`` once per output, or for a split
        the predicate's True rows then its False rows, the first ``outputs`` of the two."""

    @abstractmethod
    def opaque(self, fn: str, frames: Sequence[Frame], now: float) -> Frame:
        """An opaque widget's output: the selector ``fn`` of one base per input and ``now``."""

    @abstractmethod
    def keep(self, frame: Frame) -> Frame:
        """An operator's internal state as kept between invocations."""

    # -- composites: joins ---------------------------------------------------------------------
    def join(self, left: Frame, right: Frame, on: Key) -> Frame:
        """Batch (sync) join ``L ⋈ R`` of two bases: left columns, then right's non-key columns;
        bag semantics multiply counts (§2 table "join batch" [P])."""
        check_plain(left, "join")
        check_plain(right, "join")
        return self.merge(left, right, keys_of(on))

    def join_delta_base(self, delta: Frame, base: Frame, on: Key, *, side: str = "left") -> Frame:
        """``ΔL ⋈ B`` (``side="left"``: the delta is the left input) or ``B ⋈ ΔR``
        (``side="right"``), each row signed as its delta row (§2 table "join async left/right"
        [P]). Columns as in :meth:`join` with left-then-right inputs, then ``_sign``."""
        if side not in ("left", "right"):
            raise ValueError(f"join_delta_base: side must be 'left' or 'right', got {side!r}")
        self.check_delta(delta, data_columns(delta), "join_delta_base")
        check_plain(base, "join_delta_base")
        left, right = (delta, base) if side == "left" else (base, delta)
        out = self.merge(left, right, keys_of(on))
        return self.select(out, data_columns(out) + [SIGN])

    def sync_incremental_join(self, l_old: Frame, dl: Frame | None, r_old: Frame, dr: Frame | None,
                              on: Key) -> Frame:
        """Synchronous incremental join ``ΔL ⋈ R_new + L_old ⋈ ΔR``, ``R_new = R_old + ΔR`` (§2
        table "join incr (sync)" [P]; Gupta & Mumick). ``L_new ⋈ R_new - L_old ⋈ R_old``
        exactly, possibly with ±r pairs (compact with :meth:`chain`). A side with no chain is
        None; not both (digest §2 [D])."""
        if dl is None and dr is None:
            raise ValueError("sync_incremental_join: both input chains are empty")
        parts = []
        if dl is not None:
            r_new = r_old if dr is None else self.apply_delta(r_old, dr)
            parts.append(self.join_delta_base(dl, r_new, on, side="left"))
        if dr is not None:
            parts.append(self.join_delta_base(dr, l_old, on, side="right"))
        return parts[0] if len(parts) == 1 else self.union(*parts)

    # -- composites: upserts -------------------------------------------------------------------
    def _latest(self, base: Frame, upsert: Frame, keys: list[str]) -> Frame:
        """``upsert`` resolved per key, its columns checked against ``base``'s."""
        latest = self.chain_upserts([upsert], keys)
        if set(latest.columns) - {SEQ, TOMB} != set(base.columns):
            raise ValueError(f"upsert columns {list(latest.columns)} do not match {list(base.columns)}")
        return latest

    def apply_upsert(self, base: Frame, upsert: Frame, key: Key) -> Frame:
        """``c^{δB}`` for upserts: drop the base rows of every upserted key (left anti join), add
        the non-tombstoned records (§2.1 upserts [P]; §8 "Upsert c^{δB}" [D])."""
        keys = keys_of(key)
        latest = self._latest(base, upsert, keys)
        kept = self.key_in(base, keys, latest, keep=False)
        return self.sort_rows(self.union(kept, self.live(latest, list(base.columns))))

    def upsert_to_delta(self, base: Frame, upsert: Frame, key: Key) -> Frame:
        """``c^{δΔ}`` for upserts: -old row(s) of each upserted key, +its new record unless a
        tombstone (§1 "Converters" [P]; §8 "join the δ keys to the old base and emit -old +new"
        [D]). An unchanged record gives a lossless -r +r pair."""
        keys = keys_of(key)
        latest = self._latest(base, upsert, keys)
        old = self.key_in(base, keys, latest, keep=True)
        return self.union(self.signed(old, -1), self.signed(self.live(latest, list(base.columns)), 1))

    # -- composites: increments, distinct ------------------------------------------------------
    def increment_to_delta(self, counts: Frame, inc: Frame, key: Key, count: str = "n") -> Frame:
        """``c^{δΔ}`` for increments: -(k, old) +(k, new) per incremented key; no -row for a
        created key, no +row for a retired one (§1 "Converters" [P]; §8 [D])."""
        keys = keys_of(key)
        total = self.chain_increments([inc], keys)
        old = self.key_in(counts, keys, total, keep=True)
        new = self.apply_increment(old, total, keys, count)
        return self.union(self.signed(self.select(old, keys + [count]), -1), self.signed(new, 1))

    def distinct_delta(self, counts_old: Frame, delta: Frame, key: Key,
                       count: str = "n") -> tuple[Frame, Frame]:
        """Incremental distinct over an internal count per key (§2 "Widgets" [P]; [D]): +k when
        the count goes 0 → >0, -k when it goes >0 → 0. Returns (Δ of keys, new internal counts)."""
        keys = keys_of(key)
        inc = self.count_delta(delta, keys)
        before = self.key_in(counts_old, keys, inc, keep=True)
        counts_new = self.apply_increment(counts_old, inc, keys, count)
        after = self.key_in(counts_new, keys, inc, keep=True)
        born = self.select(self.key_in(after, keys, before, keep=False), keys)
        retired = self.select(self.key_in(before, keys, after, keep=False), keys)
        return self.union(self.signed(retired, -1), self.signed(born, 1)), counts_new
