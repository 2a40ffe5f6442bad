"""What a check reports: one claim against one trace, with its bound, terms and preconditions.

Every paper's suite returns these records, and ``staleness-lab check --json`` prints them as
they are (:meth:`CheckRecord.to_dict`). A record decides ``holds`` only when every precondition
is met; otherwise ``holds`` is None and ``preconditions`` say which one failed and why, so a
bound is never reported as broken outside the theorem that states it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

#: Relative tolerance of every comparison of a bound with an observation.
REL_TOL = 1e-9


def within(observed: float, bound: float) -> bool:
    """``observed <= bound`` up to :data:`REL_TOL` relative to the larger magnitude."""
    if math.isinf(bound) and bound > 0:
        return True
    return observed <= bound + REL_TOL * max(1.0, abs(bound), abs(observed))


def equal(a: float, b: float) -> bool:
    """``a == b`` up to :data:`REL_TOL` relative to the larger magnitude (identities)."""
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


@dataclass(frozen=True)
class Precondition:
    """One hypothesis of a claim: its name, whether this run meets it, and why (or why not)."""

    name: str
    met: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "met": self.met, "why": self.why}


@dataclass(frozen=True)
class CheckRecord:
    """One claim checked on one trace.

    ``claim`` is the suite's name for it (``penalty-ratio``), ``theorem`` where the paper states
    it (``Bateni et al., Theorem 3.1``), ``table`` the table it concerns (None: the whole run).
    ``observed <= bound`` is the claim (identities use ``terms`` for their sides); ``ratio`` is
    observed / bound where that means something. ``window`` is the ``[start, end]`` time span the
    record covers (None: the whole run) and ``witness`` where the observed worst case happened.
    ``holds`` is None unless every precondition is met; a diagnostic (``diagnostic=True``) is a
    proof step that may fail where the paper's argument has a gap.
    """

    claim: str
    theorem: str
    bound: float | None
    observed: float | None
    preconditions: tuple[Precondition, ...]
    holds_if_met: bool | None
    table: str | None = None
    terms: dict[str, Any] = field(default_factory=dict)
    ratio: float | None = None
    window: tuple[float, float] | None = None
    witness: dict[str, Any] | None = None
    diagnostic: bool = False

    @property
    def preconditions_met(self) -> bool:
        return all(p.met for p in self.preconditions)

    @property
    def holds(self) -> bool | None:
        """The verdict, decided only when every precondition is met."""
        return self.holds_if_met if self.preconditions_met else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (strict: infinities and NaNs become null)."""
        return {
            "claim": self.claim,
            "theorem": self.theorem,
            "table": self.table,
            "bound": _finite(self.bound),
            "observed": _finite(self.observed),
            "preconditions_met": self.preconditions_met,
            "holds": self.holds,
            "diagnostic": self.diagnostic,
            "preconditions": [p.to_dict() for p in self.preconditions],
            "terms": {k: _finite(v) if isinstance(v, float) else v for k, v in self.terms.items()},
            "ratio": _finite(self.ratio),
            "window": None if self.window is None else [_finite(self.window[0]), _finite(self.window[1])],
            "witness": self.witness,
        }


def bound_record(
    claim: str,
    theorem: str,
    observed: float,
    bound: float,
    preconditions: tuple[Precondition, ...],
    **extra: Any,
) -> CheckRecord:
    """A record of the claim ``observed <= bound`` (ratio observed / bound when bound > 0)."""
    ratio = observed / bound if bound > 0 and math.isfinite(bound) else None
    return CheckRecord(claim=claim, theorem=theorem, bound=bound, observed=observed, preconditions=preconditions,
                       holds_if_met=within(observed, bound), ratio=ratio, **extra)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
