"""Styled tables for the notebooks and reports, with every piece of text HTML-escaped.

A pandas :class:`~pandas.io.formats.style.Styler` puts cell values, labels, axis names and the
caption into its HTML as they are, so a table or query name like ``<script>...</script>`` taken
from a workload would run as script in a rendered report. :func:`styled` is the one way the
notebooks build a Styler: it takes the number formatting the caller wants and escapes the rest.
"""

from __future__ import annotations

import datetime as _dt
import html
import numbers
from collections.abc import Callable, Mapping
from typing import Any, Union

import pandas as pd
from pandas.io.formats.style import Styler

#: What ``Styler.format`` / ``format_index`` take: a format string (``"{:.3g}"``) or a function.
Formatter = Union[str, Callable[[Any], str]]


def styled(
    frame: pd.DataFrame,
    formatter: Formatter | Mapping[Any, Formatter] | None = None,
    *,
    precision: int | None = None,
    na_rep: str | None = None,
    index_format: Formatter | None = None,
    index_precision: int | None = None,
    columns_format: Formatter | None = None,
    columns_precision: int | None = None,
    caption: str | None = None,
    hide_index: bool = False,
) -> Styler:
    """``frame.style`` with its cells, row and column labels, axis names and caption escaped.

    ``formatter``, ``precision`` and ``na_rep`` go to ``Styler.format`` (a mapping formats some
    columns; the others get the default format with ``precision``), ``index_format`` /
    ``index_precision`` to ``format_index(axis=0)`` and ``columns_format`` /
    ``columns_precision`` to ``format_index(axis=1)``, each with ``escape="html"``.
    ``caption`` is escaped and set; ``hide_index`` hides the row labels. Values that are
    neither text nor numbers (lists, sets, arbitrary objects) are shown as their ``str``, escaped.

    Call ``format`` / ``format_index`` on the result only with ``escape="html"``: a later call
    without it replaces these formatters and shows the text raw again.
    """
    shown = _as_text(frame)
    style = shown.style.format(
        dict(formatter) if isinstance(formatter, Mapping) else formatter,
        precision=precision, na_rep=na_rep, escape="html",
    )
    style = style.format_index(index_format, axis=0, precision=index_precision, escape="html")
    style = style.format_index(columns_format, axis=1, precision=columns_precision, escape="html")
    if caption is not None:
        style = style.set_caption(html.escape(caption))
    if hide_index:
        style = style.hide(axis="index")
    return style


def _plain(value: Any) -> bool:
    """Shown by the Styler as it is: text (escaped), numbers, missing values, times."""
    return value is None or isinstance(value, (str, numbers.Number, _dt.date, _dt.time, _dt.timedelta)) or _missing(value)


def _missing(value: Any) -> bool:
    return pd.api.types.is_scalar(value) and bool(pd.isna(value))


def _text(value: Any) -> Any:
    return value if _plain(value) else str(value)


def _escaped_name(name: Any) -> Any:
    return name if name is None or isinstance(name, numbers.Number) else html.escape(str(name))


def _labels(index: pd.Index) -> pd.Index:
    """``index`` with non-plain labels as their ``str`` and its names escaped (the Styler shows
    level values through ``format_index`` but the names of the levels as they are)."""
    names = [_escaped_name(n) for n in index.names]
    if isinstance(index, pd.MultiIndex):
        levels = [lvl if lvl.dtype != object else lvl.map(_text) for lvl in index.levels]
        return index.set_levels(levels, verify_integrity=False).set_names(names)
    if index.dtype == object:
        index = index.map(_text)
    return index.set_names(names)


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """A shallow copy of ``frame`` for display: object cells that are not plain as ``str``,
    labels and axis names as in :func:`_labels`. ``frame`` itself is not changed."""
    shown = frame.copy(deep=False)
    for k, dtype in enumerate(shown.dtypes):
        if pd.api.types.is_object_dtype(dtype):
            shown.isetitem(k, shown.iloc[:, k].map(_text))
    shown.index = _labels(shown.index)
    shown.columns = _labels(shown.columns)
    return shown
