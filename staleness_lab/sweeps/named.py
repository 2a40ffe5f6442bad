"""Named sweeps: a paper's figure, table or check as the grid of one registered experiment at a
profile, and the one way every paper runs them.

A :class:`NamedSweep` names the registered experiment whose rows it runs, says what the paper
claims there and gives its grid per profile (:data:`PROFILES`): ``quick`` (tests, seconds to
minutes), ``standard`` (what ``make run`` renders) and ``full`` (the paper's scale). Each paper
in :mod:`staleness_lab.experiments` keeps its sweeps in one mapping by name, ``SWEEPS`` (a
figure of Golab's or the intermittent paper's, a table of Olston's, a check of Leontyev's or Bateni's);
:meth:`NamedSweep.run` runs one at a profile through :func:`~staleness_lab.sweeps.runner.run_grid`,
locally or on Spark, cached per row, so the rows' cache keys are those of the experiment and its
parameters whichever way the sweep is reached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from staleness_lab.sweeps.registry import check_choice
from staleness_lab.sweeps.runner import run_grid

#: The sizes every paper's sweeps come in: tests, the rendered reports, the paper's scale.
PROFILES = ("quick", "standard", "full")

#: A sweep's grid at a profile, as :func:`~staleness_lab.sweeps.runner.run_grid` takes it: a
#: mapping parameter -> values (plus ``fixed``) or a list of explicit parameter rows.
Grid = Mapping[str, Any] | list[dict[str, Any]]


def check_profile(profile: str) -> None:
    """An :class:`~staleness_lab.errors.InputError` naming ``profile`` unless it is one of
    :data:`PROFILES`."""
    check_choice(profile, PROFILES, "profile")


@dataclass(frozen=True)
class NamedSweep:
    """One sweep of a paper: the registered ``experiment`` whose rows it runs, its ``title``
    and the paper's ``claim`` there, and ``rows(profile, **options)``, its grid at a profile
    (the options are the paper's: the intermittent figures take ``costmodels``).

    ``curve`` is the parameter that tells the sweep's curves apart (``policy``, ``S``, ...;
    empty when the sweep draws none) and ``curves`` its values in the figure's order, where the
    paper fixes them. ``stepwise`` runs a sweep whose later rows depend on the earlier ones'
    results (Bateni's frontier stops a series at its first lost size): given the profile, a
    function running one grid and the options, it returns the sweep's frame; None runs the
    whole grid at once."""

    name: str
    experiment: str
    title: str
    claim: str
    rows: Callable[..., Grid]
    curve: str = ""
    curves: tuple[Any, ...] = ()
    stepwise: Callable[..., pd.DataFrame] | None = None

    def grid(self, profile: str, **options: Any) -> Grid:
        """The sweep's grid at ``profile`` (all of it, for a stepwise sweep)."""
        check_profile(profile)
        return self.rows(profile, **options)

    def run(self, profile: str, *, runner: str = "local", master: str | None = None, cache_dir: Any = None,
            use_cache: bool = True, progress: bool = False, **options: Any) -> pd.DataFrame:
        """The sweep at ``profile`` as one tidy frame: ``run_grid`` over :meth:`grid` (or the
        grids ``stepwise`` chooses), with ``runner``, ``master``, ``cache_dir``, ``use_cache``
        and ``progress`` as there; ``cache_dir=None`` (the default) recomputes every row.
        ``options`` go to ``rows`` (or ``stepwise``)."""

        def run_rows(grid: Grid) -> pd.DataFrame:
            return run_grid(self.experiment, grid, runner=runner, master=master, cache_dir=cache_dir,
                            use_cache=use_cache, progress=progress)

        if self.stepwise is None:
            return run_rows(self.grid(profile, **options))
        check_profile(profile)
        return self.stepwise(profile, run_rows, **options)
