"""Reading workflow files (YAML or JSON) into :class:`~staleness_lab.workflows.model.Workflow`.

The shape (digest §2 "Programming model"; keys [D])::

    name: olston-example
    horizon: 90                       # hours, or "15min", "2h", "1d", "1w"
    cost: {alpha: 0, beta: 1, gamma: 1, pi: 0}
    channels:
      digests: {schema: {url: str, digest: str, site: str}, insert_only: true,
                input: {replay: olston-example/digests.csv, times: [15, 32, 59, 65, 86]}}
      scores:  {schema: {site: str, score: int}, key: [site],
                input: {replay: olston-example/scores.csv, times: [0, 25, 49, 73], delivers: [B, delta]}}
      links:   {schema: {source: str, target: str}, key: [source], delta_kind: upsert}
      output:  {accepts: [B, delta]}
    operators:
      - {name: join, widget: join, on: [site], inputs: [digests, scores], output: output}
    constraints:
      - {bound_staleness: {channel: output, path: 0, t: 0}}
      - {bound_inconsistency: {channel: output, t: 1d}}

A generated input reads ``input: {generator: NAME, every: 15min, rows: 50, params: {...}}``; a
split writes ``outputs: [a, b]``, every other operator ``output: c``. Unknown keys are refused
wherever they appear. YAML 1.1 reads a bare ``on`` key as ``true``: in an operator that key is
taken as ``on``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.model.documents import load_document
from staleness_lab.model.values import check_keys, require_mapping, require_str
from staleness_lab.paths import safe_name
from staleness_lab.workflows.elements import (
    Channel,
    Cost,
    InconsistencyBound,
    InputSpec,
    Operator,
    StalenessBound,
    within,
)
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.size import WorkflowLimits, check_counts

TOP_KEYS = {"name", "horizon", "cost", "channels", "operators", "constraints", "strict_sync_inputs"}
TOP_REQUIRED = {"name", "horizon", "channels", "operators"}
COST_KEYS = {"alpha", "beta", "gamma", "pi"}
CHANNEL_KEYS = {"schema", "key", "insert_only", "delta_kind", "input", "accepts"}
INPUT_KEYS = {"replay", "times", "delivers", "generator", "every", "rows", "params"}
OPERATOR_KEYS = {"name", "widget", "inputs", "output", "outputs", "on", "key", "fn", "sigma", "cost"}
BOUND_KEYS = {StalenessBound.KIND: {"channel", "path", "t"}, InconsistencyBound.KIND: {"channel", "t"}}


def load_workflow(path: str | Path, *, limits: WorkflowLimits | None = None) -> Workflow:
    """Read and validate a workflow file; replay paths are relative to its directory;
    ``limits``: the size rules (None: the defaults of :mod:`staleness_lab.workflows.size`)."""
    path = Path(path)
    return workflow_from_dict(load_document(path, what="workflow"), base_dir=path.parent, limits=limits)


def workflow_from_dict(data: Any, *, base_dir: str | Path | None, limits: WorkflowLimits | None = None) -> Workflow:
    """A :class:`Workflow` from its mapping form (as :meth:`Workflow.to_dict` writes it);
    ``base_dir`` resolves replay paths (None: ``data/workflows``).

    Before any part is read: the size rules on counts (channels, operators, listed arrival
    times; :mod:`staleness_lab.workflows.size`) and the names that become paths (the
    workflow's, ``name``; each channel's, ``channels[k].name``) as safe path components
    (:func:`staleness_lab.paths.safe_name`)."""
    limits = limits if limits is not None else WorkflowLimits()
    data = require_mapping(data, "workflow")
    check_keys(data, "", allowed=TOP_KEYS, required=TOP_REQUIRED)
    channels = require_mapping(data["channels"], "channels")
    operators = data["operators"]
    if not isinstance(operators, list):
        raise InputError("operators", f"must be a list of operators, got {type(operators).__name__}")
    constraints = data.get("constraints", [])
    if not isinstance(constraints, list):
        raise InputError("constraints", f"must be a list of constraints, got {type(constraints).__name__}")
    check_counts(channels, operators, limits)
    safe_name(require_str(data["name"], "name"), "name")
    for k, name in enumerate(channels):
        safe_name(name, f"channels[{k}].name")
    _check_listed_times(channels, limits)
    return Workflow(
        name=data["name"], horizon=data["horizon"],
        cost=_cost(data["cost"], "cost") if "cost" in data else Cost(),
        channels=tuple(_channel(name, raw) for name, raw in channels.items()),
        operators=tuple(_operator(raw, k) for k, raw in enumerate(operators)),
        constraints=tuple(_constraint(raw, k) for k, raw in enumerate(constraints)),
        strict_sync_inputs=data.get("strict_sync_inputs", False),
        base_dir=Path(base_dir) if base_dir is not None else None,
        limits=limits,
    )


def _check_listed_times(channels: dict[str, Any], limits: WorkflowLimits) -> None:
    """The replayed inputs' listed arrival times, counted before any is parsed: at most
    ``limits.arrivals`` in all (the size rule on arrivals)."""
    listed = 0
    for name, raw in channels.items():
        spec = raw.get("input") if isinstance(raw, dict) else None
        times = spec.get("times") if isinstance(spec, dict) else None
        if isinstance(times, list):
            listed += len(times)
            if listed > limits.arrivals:
                raise limits.refuse(f"channels.{name}.input.times", f"at least {listed:,} listed arrival times "
                                                                   "in all", "arrivals")


def _cost(raw: Any, field: str) -> Cost:
    raw = require_mapping(raw, field)
    check_keys(raw, field, allowed=COST_KEYS, required=set())
    with within(field):
        return Cost(**raw)


def _channel(name: str, raw: Any) -> Channel:
    field = f"channels.{name}"
    raw = require_mapping({} if raw is None else raw, field)
    check_keys(raw, field, allowed=CHANNEL_KEYS, required=set())
    given = dict(raw)
    if "input" in given:
        spec = require_mapping(given["input"], f"{field}.input")
        check_keys(spec, f"{field}.input", allowed=INPUT_KEYS, required=set())
        if "params" in spec:
            require_mapping(spec["params"], f"{field}.input.params")
        with within(f"{field}.input"):
            given["input"] = InputSpec(**spec)
    with within(field):
        return Channel(name=name, **given)


def _operator(raw: Any, k: int) -> Operator:
    field = f"operators[{k}]"
    raw = require_mapping(raw, field)
    if True in raw and "on" not in raw:  # YAML 1.1 reads a bare `on` key as true
        raw = {("on" if key is True else key): value for key, value in raw.items()}
    name = raw.get("name")
    label = f"{field} ({name})" if isinstance(name, str) else field
    check_keys(raw, label, allowed=OPERATOR_KEYS, required={"name", "widget", "inputs"})
    given = dict(raw)
    split = given.get("widget") == "split"
    plural, single = "outputs" in given, "output" in given
    if plural and not split:
        raise InputError(f"{label}.outputs", "only a split writes several channels: give output: <channel>")
    if single and split:
        raise InputError(f"{label}.output", "a split writes two channels: give outputs: [<channel>, <channel>]")
    if not plural and not single:
        raise InputError(f"{label}.{'outputs' if split else 'output'}", "missing required field")
    given["outputs"] = given.pop("outputs") if plural else (given.pop("output"),)
    if "cost" in given:
        given["cost"] = _cost(given["cost"], f"{label}.cost")
    with within(label):
        return Operator(**given)


def _constraint(raw: Any, k: int) -> StalenessBound | InconsistencyBound:
    field = f"constraints[{k}]"
    raw = require_mapping(raw, field)
    check_keys(raw, field, allowed=set(BOUND_KEYS), required=set())
    if len(raw) != 1:
        raise InputError(field, f"must hold exactly one of {', '.join(BOUND_KEYS)}")
    kind, body = next(iter(raw.items()))
    body = require_mapping(body, f"{field}.{kind}")
    check_keys(body, f"{field}.{kind}", allowed=BOUND_KEYS[kind], required=BOUND_KEYS[kind])
    with within(field):
        return StalenessBound(**body) if kind == StalenessBound.KIND else InconsistencyBound(**body)
