"""The hybrid experiments' query sets: measured fits scaled to the paper's load (digest §6)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from staleness_lab.errors import InputError
from staleness_lab.experiments import intermittent_spark as xs

FIT = {"cost": {"kind": "linear", "S": 0.41234, "R": 0.0123}, "agg_cost": {"kind": "linear", "a0": 0.3, "a1": 0.01}}


def write_fits(folder: Path, names: tuple[str, ...]) -> None:
    for name in names:
        (folder / f"{name}.json").write_text(json.dumps({**FIT, "scale": 0.01, "parts": 20}), encoding="utf-8")


def test_the_window_is_scaled_to_the_papers_load_and_c_max_to_its_share(tmp_path: Path) -> None:
    names = ("CQ2", "Q14", "Q4")
    write_fits(tmp_path, names)
    fits = xs.read_fits(tmp_path, names)
    assert set(fits) == set(names) and fits["CQ2"] == {"cost": FIT["cost"], "agg_cost": FIT["agg_cost"]}
    qs = xs.measured_queryset(fits, 20)
    assert qs.names == {"CQ2": 0, "Q14": 1, "Q4": 2}
    q = qs.query("CQ2")
    # coefficients rounded up to the 0.01 s grid: a cost is never understated
    assert q.cost(1) == Fraction(42, 100) + Fraction(2, 100)
    assert q.agg_cost(2) == Fraction(30, 100) + 2 * Fraction(1, 100)
    total = sum((x.min_cost for x in qs.queries), Fraction(0))
    window = q.we - q.ws
    # Σ Cost(N) / W within one grid step per file of the paper's 640/4500
    assert abs(total / (window * 20 / 19) - xs.LOAD) / xs.LOAD < Fraction(1, 50)
    assert abs(qs.c_max - xs.C_MAX_SHARE * total / 3) <= xs.TIME_UNIT  # the paper: 30 s against a mean Cost(N) of 640/13 s
    assert q.n == 20 and (q.we - q.ws) / xs.TIME_UNIT == int((q.we - q.ws) / xs.TIME_UNIT)


def test_missing_or_malformed_fits_are_refused_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="CQ2.json"):
        xs.read_fits(tmp_path, ("CQ2",))
    (tmp_path / "CQ2.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match="costmodels/CQ2.json"):
        xs.read_fits(tmp_path, ("CQ2",))


def test_fig4_uses_the_batch_counts_dividing_the_parts() -> None:
    assert xs.PROFILES["full"].splits == xs.PAPER_SPLITS  # 900 parts: every count of the paper
    assert xs.PROFILES["standard"].splits == (1, 2, 9, 15, 30)
    assert xs.PROFILES["quick"].splits == (1, 2, 4)
    assert list(xs.PROFILES["full"].runs) == ["Run-1", "Run-2", "Run-3", "Run-4"]
    assert xs.fits_digest({"a": 1}) != xs.fits_digest({"a": 2})
