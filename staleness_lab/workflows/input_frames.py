"""The rows of a workflow's input arrivals (the data modes of the run loop): per input channel,
one strong delta (data columns and ``_sign``) per arrival of :func:`.inputs.input_arrivals`,
aligned with its times and row counts, and the bases they add up to.

A generated input takes the generator's frames (the same seeded draws as its sizes path;
insert-only), with the empty snapshot at time 0 that :mod:`.inputs` adds when the generator's
first arrival comes later. A replayed input groups its CSV's rows by the latest listed time at
or before each row, as :mod:`.inputs` counts them, and types the columns by the channel's
schema.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from staleness_lab.workflows.inputs import InputArrivals
from staleness_lab.workflows.model import Workflow
from staleness_lab.workflows.registry import GENERATORS
from staleness_lab.workflows.rows import SIGN, SIGN_DTYPE, apply_delta, signed

#: pandas dtypes of the schema types (digest §8 "Rows").
DTYPES = {"str": "object", "int": "int64", "float": "float64", "bool": "bool"}


class InputFrames:
    """Each input channel's arrival deltas and, on demand, its base after arrival ``k``."""

    def __init__(self, workflow: Workflow, seed: int, horizon: float, arrivals: Mapping[str, InputArrivals]) -> None:
        self.deltas: dict[str, list[pd.DataFrame]] = {}
        for name, a in arrivals.items():
            deltas = _generated(workflow, name, seed, horizon, len(a.times)) if workflow.channel(name).input.generator \
                else _replayed(workflow, name, len(a.times))  # type: ignore[union-attr]
            counted = [(int((d[SIGN] > 0).sum()), int((d[SIGN] < 0).sum())) for d in deltas]
            if counted != list(zip(a.inserts, a.deletes)):
                raise RuntimeError(f"input {name}: the frames' row counts differ from the sizes path (a bug)")
            self.deltas[name] = deltas
        self._bases: dict[str, dict[int, pd.DataFrame]] = {name: {} for name in arrivals}

    def delta(self, channel: str, k: int) -> pd.DataFrame:
        """The rows of arrival ``k`` on ``channel``."""
        return self.deltas[channel][k]

    def base(self, channel: str, k: int) -> pd.DataFrame:
        """``channel``'s relation after arrivals ``0..k`` (from the nearest base already made)."""
        made = self._bases[channel]
        if k in made:
            return made[k]
        below = [j for j in made if j < k]
        j = max(below) if below else -1
        base = made[j] if below else _plain(self.deltas[channel][0].iloc[:0])
        for i in range(j + 1, k + 1):
            base = apply_delta(base, self.deltas[channel][i])
        made[k] = base
        return base


def _plain(delta: pd.DataFrame) -> pd.DataFrame:
    return delta.drop(columns=[SIGN])


def _empty(workflow: Workflow, channel: str) -> pd.DataFrame:
    schema = dict(workflow.channel(channel).schema)
    frame = pd.DataFrame({c: pd.Series(dtype=DTYPES[t]) for c, t in schema.items()})
    return signed(frame, 1)


def _generated(workflow: Workflow, channel: str, seed: int, horizon: float, expected: int) -> list[pd.DataFrame]:
    """The generator's frames for the sizes path's ``expected`` arrivals (one more than the
    generator's: the empty snapshot at 0 the sizes path added, module docstring)."""
    spec = workflow.channel(channel).input
    assert spec is not None and spec.generator is not None and spec.every is not None and spec.rows is not None
    arrivals = GENERATORS[spec.generator](seed, spec.every, spec.rows, horizon, **dict(spec.params))
    deltas = [signed(a.rows.reset_index(drop=True), 1) for a in arrivals]
    if len(deltas) < expected:
        deltas.insert(0, deltas[0].iloc[:0] if deltas else _empty(workflow, channel))
    return deltas


def _replayed(workflow: Workflow, channel: str, kept: int) -> list[pd.DataFrame]:
    spec = workflow.channel(channel).input
    assert spec is not None
    schema = dict(workflow.channel(channel).schema)
    table = pd.read_csv(workflow.replay_path(channel), dtype={c: DTYPES[t] for c, t in schema.items()},
                        keep_default_na=False)
    grid = np.asarray(spec.times, dtype=float)
    k = np.maximum(0, np.searchsorted(grid, table["time"].to_numpy(dtype=float), side="right") - 1)
    data = table[list(schema)].assign(**{SIGN: table[SIGN].to_numpy().astype(SIGN_DTYPE)})
    return [data[k == i].reset_index(drop=True) for i in range(kept)]
