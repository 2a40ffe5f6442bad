"""What every explorer shares: controls by name, one redraw path, a reason line, figure panes.

An explorer is driven by its :attr:`Explorer.controls` (ipywidgets, by name): a change of any
control's ``value`` runs :meth:`Explorer.refresh`, which asks the subclass's :meth:`compute` for
a :class:`View` (the summary, the figures and a few lines of HTML, all from the public API and
``viz``) and shows it. A combination the model refuses (bad input, a scheduler that cannot run
it, a plan that cannot be made) puts the reason in :attr:`Explorer.reason`, shows it above the
figures and keeps the last good view: nothing raises into the page.

Sliders and number fields send their value when released or entered (``continuous_update`` off),
so a drag redraws once, not at every pixel.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from staleness_lab.errors import Infeasible, InputError
from staleness_lab.widgets.pane import PlotPane, plotly_loader

#: Wide enough for labels like ``orders.period``.
STYLE = {"description_width": "initial"}
CONTROL_LAYOUT = W.Layout(width="260px")


class Refused(Exception):
    """A combination an explorer will not draw (e.g. a plan with no schedule): ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class View:
    """What one redraw shows: the summary (the API's own object), the figures by pane name (one
    for every pane) and notes (HTML: totals, verdicts)."""

    summary: Any
    figures: dict[str, go.Figure]
    notes: str = ""


def slider(value: float, low: float, high: float, description: str, step: float | None = None) -> W.FloatSlider:
    """A float slider that redraws on release."""
    return W.FloatSlider(value=value, min=low, max=max(high, value), step=step or max((high - low) / 100, 1e-3),
                         description=description, continuous_update=False, style=STYLE, layout=CONTROL_LAYOUT,
                         readout_format=".3g")


def int_slider(value: int, low: int, high: int, description: str) -> W.IntSlider:
    """An integer slider that redraws on release."""
    return W.IntSlider(value=value, min=low, max=max(high, value), description=description, continuous_update=False,
                       style=STYLE, layout=CONTROL_LAYOUT)


def number(value: float, description: str) -> W.FloatText:
    """A number field that redraws when the number is entered."""
    return W.FloatText(value=value, description=description, continuous_update=False, style=STYLE,
                       layout=CONTROL_LAYOUT)


def choice(options: Sequence[Any], value: Any, description: str) -> W.Dropdown:
    """A drop-down list (``options``: values, or (label, value) pairs)."""
    return W.Dropdown(options=list(options), value=value, description=description, style=STYLE,
                      layout=CONTROL_LAYOUT)


class Explorer:
    """The shared frame (module docstring). Subclasses build their controls, call
    ``super().__init__(controls, rows, main)`` (``rows``: pane names, each row side by side;
    ``main``: the control an offline handout precomputes, :mod:`staleness_lab.widgets.handout`)
    and implement :meth:`compute`."""

    def __init__(self, controls: Mapping[str, W.ValueWidget], rows: Sequence[Sequence[str]], main: str) -> None:
        if main not in controls:
            raise InputError("main", f"no control named {main!r} (controls: {', '.join(controls)})")
        self.controls: dict[str, W.ValueWidget] = dict(controls)
        self.main = main
        self.summary: Any = None
        self.figures: dict[str, go.Figure] = {}
        self.reason: str | None = None
        self.notes = ""
        self._reason = W.HTML(layout=W.Layout(display="none"))
        self._notes = W.HTML()
        self._panes = {name: PlotPane() for row in rows for name in row}
        boxes = [W.HBox([self._panes[name].widget for name in row]) for row in rows]
        panel = W.Box(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap"))
        self.widget = W.VBox([plotly_loader(), panel, self._reason, *boxes, self._notes])
        for control in self.controls.values():
            control.observe(self._changed, names="value")
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """A notebook cell ending in the explorer shows its :attr:`widget`."""
        return self.widget._repr_mimebundle_(**kwargs)

    def compute(self) -> View:
        """The view for the controls' current values (subclasses)."""
        raise NotImplementedError

    def _changed(self, change: Mapping[str, Any]) -> None:
        self.refresh()

    def refresh(self) -> bool:
        """Redraw for the current controls; False (the reason shown, the last view kept) when the
        combination cannot be drawn."""
        try:
            view = self.compute()
        except InputError as err:
            return self._refuse(str(err))
        except (Infeasible, Refused) as err:
            return self._refuse(err.reason)
        except Exception as err:  # noqa: BLE001 - a page must never receive a traceback
            return self._refuse(f"this combination could not be drawn ({type(err).__name__}: {err})")
        self.summary, self.figures, self.notes, self.reason = view.summary, view.figures, view.notes, None
        for name, pane in self._panes.items():
            pane.show(view.figures[name])
        self._notes.value = view.notes
        self._reason.value = ""
        self._reason.layout.display = "none"
        return True

    def _refuse(self, reason: str) -> bool:
        self.reason = reason
        kept = " The figures below are the last combination that could be drawn." if self.figures else ""
        self._reason.value = (f'<div style="color:#b00020;font-weight:600">Cannot draw this: '
                              f"{html.escape(reason)}.{kept}</div>")
        self._reason.layout.display = None
        return False
