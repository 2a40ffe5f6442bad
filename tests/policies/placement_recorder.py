"""A policy wrapper that records every placement decision (shared by the partitioner tests)."""

from __future__ import annotations


class Recorder:
    """Wraps a policy and records every placement decision: (order, idle, chosen)."""

    def __init__(self, policy):
        self.policy = policy
        self.name = policy.name
        self.calls: list[tuple[list[int], list[int], list[tuple[int, int]]]] = []

    def bind(self, workload, rng):
        bound = self.policy.bind(workload, rng)
        inner = bound.place

        def place(order, idle, now, view):
            chosen = inner(order, idle, now, view)
            self.calls.append((list(order), list(idle), list(chosen)))
            return chosen

        return type(bound)(key=bound.key, rekey_on_data=bound.rekey_on_data, place=place)
