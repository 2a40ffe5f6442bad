"""The experiment registry and grid expansion."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from staleness_lab.errors import InputError
from staleness_lab.experiments import get_experiment, list_experiments
from staleness_lab.sweeps import Experiment, Param, expand_grid
from staleness_lab.sweeps.registry import experiment

EXP = Experiment(
    name="toy",
    run=lambda **kw: pd.DataFrame([kw]),
    params=(Param("policy", str, "edf"), Param("u", float, 0.5), Param("seed", int, 0), Param("quick", bool, False)),
    doc="A toy.",
)


def test_rows_are_the_product_in_key_order_last_key_fastest() -> None:
    rows = expand_grid(EXP, {"policy": ["a", "b"], "seed": [1, 2, 3]})
    assert [(r["policy"], r["seed"]) for r in rows] == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
    # The key order of the grid decides, not the parameter order.
    rows = expand_grid(EXP, {"seed": [1, 2], "policy": ["a", "b"]})
    assert [(r["policy"], r["seed"]) for r in rows] == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]


def test_rows_are_complete_in_parameter_order_with_defaults() -> None:
    (row,) = expand_grid(EXP, {"seed": 4})  # a scalar is a one-value list
    assert list(row) == ["policy", "u", "seed", "quick"]
    assert row == {"policy": "edf", "u": 0.5, "seed": 4, "quick": False}
    assert expand_grid(EXP, None) == [EXP.defaults]
    assert expand_grid(EXP, {}) == [EXP.defaults]


def test_fixed_values_apply_to_every_row() -> None:
    rows = expand_grid(EXP, {"policy": ["a", "b"], "fixed": {"u": 0.9, "quick": True}})
    assert [r["policy"] for r in rows] == ["a", "b"]
    assert all(r["u"] == 0.9 and r["quick"] is True for r in rows)
    assert expand_grid(EXP, {"fixed": None}) == [EXP.defaults]


def test_an_int_is_accepted_for_a_float_and_converted() -> None:
    (row,) = expand_grid(EXP, {"u": [1]})
    assert row["u"] == 1.0 and type(row["u"]) is float


@pytest.mark.parametrize(
    ("grid", "field", "fragment"),
    [
        ({"bogus": [1]}, "grid.bogus", "takes no parameter 'bogus'"),
        ({"fixed": {"bogus": 1}}, "grid.fixed.bogus", "takes no parameter 'bogus'"),
        ({"seed": [1, 2.5]}, "grid.seed", "must be of type int"),
        ({"seed": [True]}, "grid.seed", "must be of type int"),
        ({"u": ["0.5"]}, "grid.u", "must be of type float"),
        ({"u": [True]}, "grid.u", "must be of type float"),
        ({"u": [math.inf]}, "grid.u", "finite"),
        ({"quick": [1]}, "grid.quick", "must be of type bool"),
        ({"policy": [3]}, "grid.policy", "must be of type str"),
        ({"policy": []}, "grid.policy", "at least one value"),
        ({"fixed": [1]}, "grid.fixed", "mapping"),
        ({"policy": ["a"], "fixed": {"policy": "b"}}, "grid.policy", "both in the grid and under fixed"),
    ],
)
def test_bad_grids_name_the_key(grid: dict, field: str, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        expand_grid(EXP, grid)
    assert info.value.field == field
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"{field}: ")


def test_unknown_key_lists_the_parameters_taken() -> None:
    with pytest.raises(InputError, match=r"it takes: policy, u, seed, quick"):
        EXP.complete({"nope": 1})


def test_registry_lookup() -> None:
    """Every paper's experiments are found through the experiments package (which registers them)."""
    names = [e.name for e in list_experiments()]
    assert "baseline-utilization" in names and "golab-fig4" in names and "olston-run" in names
    exp = get_experiment("baseline-utilization")
    assert exp.name == "baseline-utilization" and exp.doc
    assert {p.name for p in exp.params} >= {"policy", "utilization", "seed", "horizon"}
    with pytest.raises(InputError) as info:
        get_experiment("no-such")
    assert info.value.field == "experiment" and "baseline-utilization" in str(info.value)


def test_registering_a_name_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        experiment("baseline-utilization")(lambda: pd.DataFrame())


def test_baseline_utilization_returns_one_tidy_row() -> None:
    exp = get_experiment("baseline-utilization")
    frame = exp.run(**exp.complete({"horizon": 500.0, "n_tables": 4, "utilization": 0.8}))
    assert len(frame) == 1
    assert frame["offered_utilization"].iloc[0] == pytest.approx(0.8, rel=1e-12)
    assert {"relative_lateness", "weighted_staleness", "events", "jobs"} <= set(frame.columns)


def test_numpy_values_count_as_their_python_types() -> None:
    import numpy as np

    exp = get_experiment("baseline-utilization")
    rows = expand_grid(exp, {"utilization": list(np.array([0.5, 0.6, 0.7])), "seed": [np.int64(3)]})
    assert [type(r["utilization"]) for r in rows] == [float, float, float]
    assert all(type(r["seed"]) is int and r["seed"] == 3 for r in rows)
