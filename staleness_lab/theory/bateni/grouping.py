"""GROUPANDRUN's grouping and processor allocation (Bateni et al., Sec. 2, Fig. 2), as pure
functions: no simulation, no workload, only table positions, names and declared update lengths.

A table is *B-quasiperiodic* when every update length lies in ``[B/2, B]``; given declared
bounds ``(Lmin, Lmax)`` on its lengths, the feasible B form the interval ``[Lmax, 2*Lmin]``. A
*group* is a set of tables that are all B-quasiperiodic for one B, i.e. whose intervals meet:
``max Lmax <= 2 * min Lmin``. The paper only says that periods within a group differ by at most
a factor of two; the greedy stabbing below is the digest's reading (its Sec. 2, example E9).

Allocation (Fig. 2, step 2): with ``g`` groups, ``t`` tables and ``p`` processors, group k gets
``p_k = ceil((p - g) * |T_k| / t)`` consecutive processors, in group order; since
``p_k < (p - g)|T_k|/t + 1``, ``sum p_k <= p``. It needs ``p > g``.
"""

from __future__ import annotations

from collections.abc import Sequence

from staleness_lab.errors import Infeasible, InputError

#: (Lmin, Lmax): a table's declared shortest and longest update length.
Lengths = tuple[float, float]


def b_interval(lengths: Lengths) -> tuple[float, float]:
    """The feasible B of one table, ``[Lmax, 2*Lmin]`` (empty when ``Lmax > 2*Lmin``)."""
    lmin, lmax = lengths
    return (lmax, 2 * lmin)


def is_quasiperiodic(lengths: Sequence[Lengths]) -> bool:
    """Whether the tables share one B: ``max Lmax <= 2 * min Lmin`` (Sec. 2)."""
    return max(lmax for _, lmax in lengths) <= 2 * min(lmin for lmin, _ in lengths)


def stab_groups(lengths: Sequence[Lengths], names: Sequence[str] | None = None) -> list[list[int]]:
    """The minimum number of groups, by greedy stabbing of the intervals ``[Lmax_i, 2*Lmin_i]``.

    Sort the tables by right end (ties: position); the smallest right end R is the group's B,
    and every remaining table with ``Lmax_i <= R`` joins the group; repeat with the rest. Groups
    come in creation order (increasing B), members in table position order. Greedy stabbing of
    intervals by their right ends is optimal, so g is the minimum (digest, Sec. 2, E9).

    Raises :class:`InputError` naming ``tables[k].length_range`` for a table whose interval is
    empty (its lengths vary by more than a factor of two, so it is quasiperiodic for no B);
    ``names`` (optional) names the table in the message.
    """
    for k, pair in enumerate(lengths):
        low, high = b_interval(pair)
        if low > high:
            raise InputError(
                f"tables[{k}].length_range",
                f"update lengths [{pair[0]:g}, {pair[1]:g}] vary by more than a factor of 2, so the table is "
                "B-quasiperiodic for no B (Bateni et al., Sec. 2)",
                table=None if names is None else names[k],
            )
    remaining = sorted(range(len(lengths)), key=lambda k: (b_interval(lengths[k])[1], k))
    groups: list[list[int]] = []
    while remaining:
        b = b_interval(lengths[remaining[0]])[1]
        groups.append(sorted(k for k in remaining if lengths[k][1] <= b))
        remaining = [k for k in remaining if lengths[k][1] > b]
    return groups


def parse_groups(text: str, names: Sequence[str], lengths: Sequence[Lengths]) -> list[list[int]]:
    """User-given groups: table names separated by ``,`` within a group and ``;`` between
    groups (``"a,b;c"``), as table positions in the order given.

    Every table must appear exactly once and every group must be B-quasiperiodic
    (``max Lmax <= 2 * min Lmin``, Sec. 2); otherwise :class:`InputError` naming
    ``option groups``.
    """
    where = "option groups"
    index = {name: k for k, name in enumerate(names)}
    groups: list[list[int]] = []
    seen: set[int] = set()
    for part in text.split(";"):
        members = [name.strip() for name in part.split(",")]
        if not all(members):
            raise InputError(where, f"an empty table name or group in {text!r} (expected e.g. 'a,b;c')")
        group: list[int] = []
        for name in members:
            if name not in index:
                raise InputError(where, f"unknown table {name!r}")
            k = index[name]
            if k in seen:
                raise InputError(where, f"table {name!r} is listed more than once")
            seen.add(k)
            group.append(k)
        if not is_quasiperiodic([lengths[k] for k in group]):
            listed = ", ".join(f"{names[k]} [{lengths[k][0]:g}, {lengths[k][1]:g}]" for k in group)
            raise InputError(
                where,
                f"group {','.join(members)} is not B-quasiperiodic: max Lmax > 2 * min Lmin over "
                f"(Lmin, Lmax) {listed} (Bateni et al., Sec. 2)",
            )
        groups.append(group)
    missing = [names[k] for k in range(len(names)) if k not in seen]
    if missing:
        raise InputError(where, f"every table must be in a group; missing: {', '.join(missing)}")
    return groups


def allocate(sizes: Sequence[int], p: int) -> list[int]:
    """Processors per group, ``p_k = ceil((p - g) * |T_k| / t)`` (Fig. 2, step 2), in exact
    integer arithmetic; ``sum p_k <= p``. Raises :class:`Infeasible` when ``p <= g``."""
    g, t = len(sizes), sum(sizes)
    if p <= g:
        raise Infeasible(f"group-and-run needs more processors than groups (p > g), but p = {p} and g = {g}")
    return [-(-(p - g) * size // t) for size in sizes]


def track_ranges(allocation: Sequence[int]) -> list[range]:
    """The consecutive processors of each group, in group order (Fig. 2, step 2):
    group k gets ``sum p_<k .. sum p_<=k - 1``; the rest are leftover."""
    out: list[range] = []
    start = 0
    for count in allocation:
        out.append(range(start, start + count))
        start += count
    return out
