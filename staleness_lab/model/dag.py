"""The view DAG: sources -> derived tables. Cycle detection, topological order, ancestors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from staleness_lab.errors import InputError


def topological_order(names: Sequence[str], sources: Mapping[str, Sequence[str]]) -> list[str]:
    """Tables ordered so every source comes before the tables it feeds.

    Raises :class:`InputError` on a cycle, naming every table on it (a self-loop included),
    e.g. ``cycle in the view DAG: a -> b -> a``.
    """
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    order: list[str] = []
    for root in names:
        if root in state:
            continue
        path: list[str] = [root]
        stack: list[tuple[str, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            node, k = stack[-1]
            srcs = sources.get(node, ())
            if k < len(srcs):
                stack[-1] = (node, k + 1)
                nxt = srcs[k]
                if state.get(nxt) == 1:
                    cycle = path[path.index(nxt):] + [nxt]
                    # report in data-flow direction: source -> view
                    cycle.reverse()
                    raise InputError(
                        f"tables[{names.index(nxt)}].sources",
                        "cycle in the view DAG: " + " -> ".join(cycle),
                        table=nxt,
                    )
                if nxt not in state:
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, 0))
            else:
                stack.pop()
                path.pop()
                state[node] = 2
                order.append(node)
    return order


def ancestors(name: str, sources: Mapping[str, Sequence[str]]) -> set[str]:
    """Every table feeding ``name`` directly or transitively (Golab et al., Sec. 2.1)."""
    seen: set[str] = set()
    stack = list(sources.get(name, ()))
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(sources.get(node, ()))
    return seen
