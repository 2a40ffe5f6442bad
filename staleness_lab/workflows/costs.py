"""The estimated cost (CPU-hours) and output size of each operator variant and converter
(digest §3 "Cost model" [D]: the paper only says "standard relational cost/selectivity
estimates"). ``alpha`` is fixed per invocation, ``beta`` per row read, ``gamma`` per row
written, ``pi`` per index probe, ``sigma`` the operator's selectivity; ``n(X)`` a block's rows.

Chains cost 0 (footnote 12 [P]). Estimates of a chain's size add its parts (no cancellation of
+-r pairs is assumed before the data is seen; digest correction 5)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rates:
    """The cost coefficients of one operator (CPU-hours)."""

    alpha: float = 0.0
    beta: float = 1.0
    gamma: float = 1.0
    pi: float = 0.0

    def scan(self, read: float, written: float) -> float:
        """``alpha + beta * read + gamma * written``: the shape of every variant below."""
        return self.alpha + self.beta * read + self.gamma * written


def stateless(r: Rates, n_in: float, sigma: float) -> tuple[float, float]:
    """``alpha + beta n(in) + gamma sigma n(in)``; output ``sigma n(in)`` rows."""
    out = sigma * n_in
    return r.scan(n_in, out), out


def batch_join(r: Rates, n_left: float, n_right: float, sigma: float) -> tuple[float, float]:
    """``alpha + beta (n(B_L) + n(B_R)) + gamma n(out)``, ``n(out) = sigma n(B_L)`` [D: the left
    side references one right row per key, as the paper's (url, site) to (site, score)]."""
    out = sigma * n_left
    return r.scan(n_left + n_right, out), out


def async_left_join(r: Rates, n_dl: float, n_right: float, sigma: float) -> tuple[float, float]:
    """``alpha + beta (n(dL) + n(B_R)) + gamma sigma n(dL)``."""
    out = sigma * n_dl
    return r.scan(n_dl + n_right, out), out


def async_right_join(r: Rates, n_left: float, n_dr: float, n_right: float, sigma: float) -> tuple[float, float]:
    """``alpha + beta (n(B_L) + n(dR)) + gamma n(out)``, ``n(out) = sigma fanout n(dR)`` with
    ``fanout = n(B_L) / n(B_R)`` (a changed score rewrites all its pages)."""
    out = sigma * _fanout(n_left, n_right) * n_dr
    return r.scan(n_left + n_dr, out), out


def sync_incremental_join(
    r: Rates, n_left: float, n_dl: float, n_right: float, n_dr: float, sigma: float
) -> tuple[float, float]:
    """``alpha + beta (n(dL) + n(dR)) + [beta (n(B_L) + n(B_R)) scan | pi (n(dL) + n(dR)) index]
    + gamma n(out)``, ``n(out) = sigma (n(dL) + fanout n(dR))``. The index is used when the
    operator declares ``pi > 0`` [D]; with ``pi = 0`` the join scans both bases (E8: "joins
    read every row of their inputs")."""
    out = sigma * (n_dl + _fanout(n_left, n_right) * n_dr)
    probe = r.pi * (n_dl + n_dr) if r.pi > 0 else r.beta * (n_left + n_right)
    return r.scan(n_dl + n_dr, out) + probe, out


def union(r: Rates, n_left: float, n_right: float) -> tuple[float, float]:
    """Bag union of two inputs (bases or deltas): read both, write both."""
    return r.scan(n_left + n_right, n_left + n_right), n_left + n_right


def count_batch(r: Rates, n_in: float, sigma: float) -> tuple[float, float]:
    """A batch count B -> B of (key, n): ``sigma n(in)`` keys."""
    return stateless(r, n_in, sigma)


def count_incremental(r: Rates, n_delta: float, sigma: float) -> tuple[float, float]:
    """``alpha + beta n(delta) + gamma keys``, ``keys = sigma n(delta)``: delta -> increment."""
    return stateless(r, n_delta, sigma)


def distinct_incremental(r: Rates, n_delta: float, sigma: float) -> tuple[float, float]:
    """Distinct on its internal count [D]: read the delta, probe the counts, write the keys
    that appear or vanish (``sigma n(delta)``)."""
    out = sigma * n_delta
    return r.scan(n_delta, out) + r.pi * n_delta, out


def to_base(r: Rates, n_base: float, n_delta: float, n_new: float) -> float:
    """``c^{delta B}`` (and weak ``c^{deltaB}``): ``alpha + beta (n(B) + n(delta)) + gamma n(B')``."""
    return r.scan(n_base + n_delta, n_new)


def to_delta(r: Rates, n_old: float, n_new: float, n_delta: float) -> float:
    """``c^{B delta}``: ``alpha + beta (n(B1) + n(B2)) + gamma n(delta)``."""
    return r.scan(n_old + n_new, n_delta)


def weak_to_delta(r: Rates, n_weak: float) -> tuple[float, float]:
    """``c^{weak delta}``: ``alpha + (beta + pi) n(weak) + 2 gamma n(weak)``; ``2 n(weak)`` rows
    (an old row out, a new one in, per key)."""
    return r.alpha + (r.beta + r.pi) * n_weak + 2 * r.gamma * n_weak, 2 * n_weak


def _fanout(n_left: float, n_right: float) -> float:
    return n_left / n_right if n_right > 0 else 0.0
