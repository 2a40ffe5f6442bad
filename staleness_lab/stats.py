"""Small statistics shared by the layers that summarize repeated runs.

:func:`t_quantile_975` is the Student t quantile behind every 95 % confidence band over seeds:
the figures' bands (:mod:`staleness_lab.viz.figures`) and the experiments' half-widths
(:mod:`staleness_lab.experiments.olston.verdicts`). It lives here, below both, so that an
experiment never imports the plotting layer.
"""

from __future__ import annotations

from staleness_lab.errors import InputError

#: Two-sided 95 % Student t quantiles t_{0.975, df} for df = 1..30.
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)


def t_quantile_975(df: int) -> float:
    """t_{0.975, df}: tabulated for df <= 30, beyond that the Cornish-Fisher expansion around
    z = 1.959964 (error below 1e-4 for df > 30)."""
    if df < 1:
        raise InputError("df", f"must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963985
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
