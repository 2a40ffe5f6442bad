"""The shared statistics (:mod:`staleness_lab.stats`)."""

from __future__ import annotations

import pytest

from staleness_lab import InputError
from staleness_lab.stats import t_quantile_975


def test_t_quantiles() -> None:
    assert t_quantile_975(1) == pytest.approx(12.7062, abs=1e-4)
    assert t_quantile_975(30) == pytest.approx(2.0423, abs=1e-4)
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=2e-4)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=2e-4)


def test_fewer_than_one_degree_of_freedom_is_refused() -> None:
    with pytest.raises(InputError, match="df"):
        t_quantile_975(0)
