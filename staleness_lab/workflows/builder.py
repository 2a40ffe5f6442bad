"""Building a :class:`~staleness_lab.workflows.model.Workflow` in Python (digest §2 "API" [D]):
:class:`WorkflowBuilder`, the chained-call form of what a YAML workflow file states."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from staleness_lab.workflows.elements import (
    Channel,
    Constraint,
    Cost,
    InconsistencyBound,
    InputSpec,
    Operator,
    StalenessBound,
    within,
)
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.size import WorkflowLimits


class WorkflowBuilder:
    """Build a :class:`Workflow` in Python (digest §2 "API" [D]): the same model, and the same
    errors, as the YAML form. Output channels of :meth:`op` are created on first mention; give a
    derived channel's schema, key or weak kind with :meth:`channel`. ``limits``: the size rules
    (None: the defaults of :mod:`staleness_lab.workflows.size`). Each call takes constant time
    (no scan of what was added), so building a large workflow is linear."""

    def __init__(self, name: str, *, horizon: float | str, cost: Cost | None = None,
                 strict_sync_inputs: bool = False, base_dir: Path | None = None,
                 limits: WorkflowLimits | None = None) -> None:
        self._head: dict[str, Any] = {"name": name, "horizon": horizon, "cost": cost if cost is not None else Cost(),
                                      "strict_sync_inputs": strict_sync_inputs, "base_dir": base_dir}
        if limits is not None:
            self._head["limits"] = limits
        self._channels: list[dict[str, Any]] = []
        self._latest: dict[str, dict[str, Any]] = {}  # name -> its latest entry (constant-time lookups)
        self._operators: list[Operator] = []
        self._taken: set[str] = set()
        self._constraints: list[Constraint] = []

    def _append(self, entry: dict[str, Any]) -> dict[str, Any]:
        self._channels.append(entry)
        self._latest[entry["name"]] = entry
        return entry

    def _entry(self, name: str) -> dict[str, Any]:
        """The latest entry of channel ``name``, created on first mention."""
        found = self._latest.get(name)
        return found if found is not None else self._append({"name": name})

    def input(self, name: str, *, schema: Mapping[str, str] | Iterable[tuple[str, str]], key: Iterable[str] = (),
              insert_only: bool = False, delta_kind: str | None = None, replay: str | None = None,
              times: Iterable[float | str] = (), delivers: Iterable[str] = ("delta",), generator: str | None = None,
              every: float | str | None = None, rows: int | None = None,
              params: Mapping[str, Any] | None = None) -> WorkflowBuilder:
        """An input channel, replayed (``replay``, ``times``) or generated (``generator``, ``every``, ``rows``)."""
        with within(f"channels.{name}.input"):
            spec = InputSpec(replay=replay, times=tuple(times), delivers=tuple(delivers), generator=generator,
                             every=every, rows=rows, params=tuple((params or {}).items()))
        self._append({"name": name, "schema": schema, "key": tuple(key), "insert_only": insert_only,
                      "delta_kind": delta_kind, "input": spec})
        return self

    def channel(self, name: str, *, schema: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
                key: Iterable[str] | None = None, delta_kind: str | None = None) -> WorkflowBuilder:
        """Set a channel's schema, key or weak δ kind (those given; typically of a derived channel)."""
        given = {"schema": schema, "key": None if key is None else tuple(key), "delta_kind": delta_kind}
        self._entry(name).update({field: value for field, value in given.items() if value is not None})
        return self

    def op(self, widget: str, inputs: Iterable[str], *, out: str | Iterable[str], name: str | None = None,
           on: Iterable[str] = (), key: Iterable[str] = (), fn: str | None = None, sigma: float = 1.0,
           cost: Cost | None = None) -> WorkflowBuilder:
        """An operator; ``out`` is its output channel (a split: a list of two). ``name`` defaults
        to its fn, else its widget, suffixed ``-2``, ``-3``... when taken."""
        outputs = (out,) if isinstance(out, str) else tuple(out)
        label = base = name or fn or widget
        taken = self._taken
        suffix = 2
        while name is None and label in taken:
            label, suffix = f"{base}-{suffix}", suffix + 1
        with within(f"operators[{len(self._operators)}] ({label})"):
            self._operators.append(Operator(name=label, widget=widget, inputs=tuple(inputs), outputs=outputs,
                                            on=tuple(on), key=tuple(key), fn=fn, sigma=sigma, cost=cost))
        taken.add(label)
        for channel in outputs:
            self._entry(channel)
        return self

    def output(self, name: str, *, accepts: Iterable[str] = ("B", "delta")) -> WorkflowBuilder:
        """Mark ``name`` an output whose consumers accept the block types ``accepts``."""
        self._entry(name)["accepts"] = tuple(accepts)
        return self

    def bound_staleness(self, channel: str, path: int, t: float | str) -> WorkflowBuilder:
        """``bound_staleness(channel, path, t)``; ``path`` indexes ``layout(channel)``."""
        with within(f"constraints[{len(self._constraints)}]"):
            self._constraints.append(StalenessBound(channel, path, t))
        return self

    def bound_inconsistency(self, channel: str, t: float | str) -> WorkflowBuilder:
        """``bound_inconsistency(channel, t)``."""
        with within(f"constraints[{len(self._constraints)}]"):
            self._constraints.append(InconsistencyBound(channel, t))
        return self

    def build(self) -> Workflow:
        """The validated :class:`Workflow`."""
        channels = []
        for entry in self._channels:
            with within(f"channels.{entry['name']}"):
                channels.append(Channel(**entry))
        return Workflow(channels=tuple(channels), operators=tuple(self._operators),
                        constraints=tuple(self._constraints), **self._head)
