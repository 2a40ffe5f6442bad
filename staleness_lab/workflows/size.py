"""The size rules of a workflow, checked before any work (``workflow validate`` and ``run``).

A workflow file can ask for more than validation or a run can hold: a million channels, a
"union bomb" (unions of unions each reading the previous one twice, whose layouts double at
every level: 2^100 elements after 100 lines of YAML), or arrivals every microsecond over
years. Each rule below is checked on counts alone (no layout, frame or arrival list is built
first) and refuses the file with one line naming the field, the limit and the flag that
raises it:

* channels: at most :data:`MAX_CHANNELS` (``--max-channels``), checked on the file's mapping;
* operators: at most :data:`MAX_OPERATORS` (``--max-operators``), checked on the file's list;
* layout (the fan-out of joins, unions and opaque operators): every channel's layout at most
  :data:`MAX_LAYOUT` elements (``--max-layout``), its length computed per operator in
  topological order as an integer (the sum of its inputs' for a join, union or opaque
  operator, else its first input's), so the check is linear in the operators; and all
  channels' layouts together at most :data:`LAYOUT_TOTAL_FACTOR` times that (what the bounds
  report and propagation hold in memory);
* arrivals: at most :data:`MAX_ARRIVALS` input arrivals over the horizon in all
  (``--max-arrivals``): a replayed input's listed times, a generated input's
  ``floor(horizon / every) + 1`` (its grid plus a snapshot at 0). ``workflow run --horizon``
  counts with the run's horizon;
* run steps (``workflow run`` only): the arrivals over the run's horizon times the operators, at
  most :data:`MAX_RUN_STEPS` (``--max-run-steps``). Every arrival may set off an invocation of
  every operator downstream, so this bounds the run's work, which the arrival rule (sized for
  validation) and the scheduler's CPU budget (``max_scheduler_s``: the scheduler's calls only,
  not the invocations) do not: measured on a loaded two-core machine, a sizes-mode run of
  search-preprocessing takes about 2.7 ms per step (8,402 arrivals x 5 operators: 114 s over its
  10 weeks), so the default admits runs of about 20 minutes and a year of every shipped
  workflow (crawl-selection: 314,000 steps).

The defaults are far above the shipped workflows (at most 10 channels, 9 operators, layouts of
4 elements, 8,400 arrivals over their horizons) and low enough that validation stays within
seconds and memory within a few hundred MB.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from staleness_lab.errors import InputError
from staleness_lab.model.values import require_int
from staleness_lab.workflows.elements import Channel, Operator

#: Default ceilings (module docstring).
MAX_CHANNELS = 10_000
MAX_OPERATORS = 10_000
MAX_LAYOUT = 1_000
MAX_ARRIVALS = 1_000_000
MAX_RUN_STEPS = 500_000
#: The layouts of all channels together hold at most this many times the per-channel limit.
LAYOUT_TOTAL_FACTOR = 1_000
#: The command-line flag raising each limit.
FLAGS = {"channels": "--max-channels", "operators": "--max-operators", "layout": "--max-layout",
         "arrivals": "--max-arrivals", "run_steps": "--max-run-steps"}


@dataclass(frozen=True)
class WorkflowLimits:
    """The size rules' ceilings (module docstring); each an integer >= 1."""

    channels: int = MAX_CHANNELS
    operators: int = MAX_OPERATORS
    layout: int = MAX_LAYOUT
    arrivals: int = MAX_ARRIVALS
    run_steps: int = MAX_RUN_STEPS

    def __post_init__(self) -> None:
        for name, flag in FLAGS.items():
            require_int(getattr(self, name), flag, minimum=1)

    @classmethod
    def given(cls, **values: int | None) -> WorkflowLimits:
        """The defaults, with the values given (None: the default), as the flags pass them."""
        return cls(**{name: value for name, value in values.items() if value is not None})

    def refuse(self, field: str, what: str, limit: str) -> InputError:
        """The refusal: ``<field>: <what>, above the limit of <n> (raise it with <flag>)``."""
        return InputError(field, f"{what}, above the limit of {getattr(self, limit):,} (raise it with {FLAGS[limit]})")


def check_counts(channels: Mapping[Any, Any] | Sequence[Any], operators: Sequence[Any],
                 limits: WorkflowLimits) -> None:
    """The channel and operator counts of a file, before any part of it is read."""
    if len(channels) > limits.channels:
        raise limits.refuse("channels", f"{len(channels):,} channels", "channels")
    if len(operators) > limits.operators:
        raise limits.refuse("operators", f"{len(operators):,} operators", "operators")


def check_layout(channels: Sequence[Channel], order: Sequence[Operator], index: Mapping[str, int],
                 limits: WorkflowLimits) -> None:
    """Every channel's layout length, as integers with the operators in topological ``order``
    (module docstring), refused at the first operator whose output passes ``limits.layout``;
    ``index``: each operator's position in the file (for the message)."""
    size = {ch.name: 1 for ch in channels if ch.input is not None}
    total, most = len(size), limits.layout * LAYOUT_TOTAL_FACTOR
    for op in order:
        if op.widget in ("join", "union", "opaque"):
            n = 0
            for name in op.inputs:
                n += size[name]
                if n > limits.layout:
                    break
        else:
            n = size[op.inputs[0]]
        if n > limits.layout:
            label = f"operators[{index[op.name]}] ({op.name}).inputs"
            raise limits.refuse(label, f"the layout of its output {op.outputs[0]!r} (one element per input path "
                                       f"through joins, unions and opaque operators) reaches {n:,} elements",
                                "layout")
        for name in op.outputs:
            size[name] = n
        total += n * len(op.outputs)
        if total > most:
            label = f"operators[{index[op.name]}] ({op.name}).output"
            raise InputError(label, f"the layouts of the channels up to its output hold {total:,} elements in all, "
                                    f"above {most:,} ({LAYOUT_TOTAL_FACTOR:,} times the per-channel limit of "
                                    f"{limits.layout:,}; raise it with {FLAGS['layout']})")


def arrival_count(channel: Channel, horizon: float) -> float:
    """Arrivals of an input channel over ``[0, horizon]`` (module docstring); may be inf."""
    spec = channel.input
    assert spec is not None
    if spec.generator is None:
        return float(len(spec.times))
    assert spec.every is not None
    count = horizon / spec.every
    return math.floor(count) + 1.0 if math.isfinite(count) else math.inf


def check_arrivals(channels: Sequence[Channel], horizon: float, limits: WorkflowLimits,
                   field: str | None = None) -> None:
    """The arrivals of the input ``channels`` over ``horizon`` hours; a refusal names ``field``
    if given (``--horizon``), else the input bringing the most (its ``every`` or its ``times``)."""
    inputs = {ch.name: ch for ch in channels if ch.input is not None}
    counts = {name: arrival_count(ch, horizon) for name, ch in inputs.items()}
    total = sum(counts.values())
    if total <= limits.arrivals:
        return
    name = max(counts, key=counts.__getitem__)
    spec = inputs[name].input
    assert spec is not None
    key = "every" if spec.generator is not None else "times"
    raise limits.refuse(field or f"channels.{name}.input.{key}", f"{total:.4g} input arrivals over horizon {horizon:g} h, "
                                                       f"{counts[name]:.4g} of them on {name!r}", "arrivals")


def check_run_steps(channels: Sequence[Channel], operators: Sequence[Operator], horizon: float,
                    limits: WorkflowLimits, field: str | None = None) -> None:
    """A run's steps (module docstring: arrivals over ``horizon`` times operators), before the
    run starts; a refusal names ``field`` if given (``--horizon``), else ``operators``."""
    arrivals = sum(arrival_count(ch, horizon) for ch in channels if ch.input is not None)
    steps = arrivals * max(1, len(operators))
    if steps > limits.run_steps:
        raise limits.refuse(field or "operators", f"{arrivals:.4g} input arrivals over horizon {horizon:g} h times "
                                                  f"{len(operators):,} operators give {steps:.4g} run steps",
                            "run_steps")
