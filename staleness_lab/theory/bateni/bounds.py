"""Bateni et al.'s bounds in closed form (digest Sec. 3; the paper's alpha_i is the schema's ``beta``).

* load factor ``x = alpha * t / p`` with alpha = max_i alpha_i;
* Theorem 3.1 for a choice (beta, delta): precondition ``alpha/(1-x) <= C_{beta,delta} * p/t`` with
  ``C = sqrt(delta)(1-beta)/sqrt(3)``, bound ``(1+alpha)^2 / (beta^4 (1-delta))``, and the proof's
  sharper ``(1+alpha)^2 / (beta^4 (1 - t*gamma))``, ``t*gamma = 3x^2 / ((1-beta)^2 (1-x)^2)``;
* the best bound over (beta, delta): ``R* = (1+alpha)^2 G(x)``,
  ``G(x) = min_{0<beta<1-gamma0} 1/(beta^4 (1 - gamma0^2/(1-beta)^2))``, ``gamma0 = sqrt(3) x/(1-x)``,
  finite iff ``0 <= x < (sqrt(3)-1)/2`` (correction 2: for x >= 1 the paper's test passes
  vacuously; outside the range the theorem says nothing);
* Corollary 3.2's mapping from ``alpha = C p/t``;
* Theorem 4.3's stretch figures (3, the paper's 2.625 and the derived ``1 + (1+7 alpha)/3``) and
  Theorem 5.1's weighted-staleness factors (4.5 and the derived ``(16/9)(1+alpha)^2``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: x must stay below this for Theorem 3.1 (gamma0 < 1).
LOAD_LIMIT = (math.sqrt(3) - 1) / 2


def load_factor(alpha: float, tables: int, tracks: int) -> float:
    """x = alpha * t / p (digest Sec. 1, "Symbols")."""
    return alpha * tables / tracks


def gamma0(x: float) -> float:
    """gamma0 = sqrt(3) x / (1 - x): the bound exists iff 0 <= gamma0 < 1."""
    return math.sqrt(3) * x / (1 - x)


def in_theorem_range(x: float) -> bool:
    """Whether Theorem 3.1 applies at load x: 0 <= x < (sqrt(3)-1)/2 (correction 2)."""
    return 0 <= x < LOAD_LIMIT


def best_beta(x: float) -> float:
    """The beta minimising 1/(beta^4 (1 - gamma0^2/(1-beta)^2)) on (0, 1-gamma0).

    The log of the objective has derivative ``-4/beta + 2 g^2 / ((1-beta)((1-beta)^2 - g^2))``,
    increasing in beta from -inf to +inf on the interval, so its root (found by bisection to
    machine precision) is the unique minimiser. At x = 0 the infimum is approached as beta -> 1.
    """
    if not in_theorem_range(x):
        raise ValueError(f"Theorem 3.1 needs 0 <= x < {LOAD_LIMIT:.6f}, got {x}")
    g = gamma0(x)
    if g == 0:
        return 1.0
    lo, hi = 0.0, min(1.0 - g, math.nextafter(1.0, 0.0))  # 1 - g rounds to 1 for a tiny load
    for _ in range(200):
        mid = (lo + hi) / 2
        one = 1 - mid
        edge = one * (one * one - g * g)
        slope = -4 / mid + 2 * g * g / edge if edge > 0 else math.inf
        if slope < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def g_of_x(x: float) -> float:
    """G(x) (Theorem 3.1's best constant without the (1+alpha)^2 factor); inf outside the range."""
    if not in_theorem_range(x):
        return math.inf
    g = gamma0(x)
    if g == 0:
        return 1.0
    beta = best_beta(x)
    return 1 / (beta**4 * (1 - g * g / (1 - beta) ** 2))


def r_star(alpha: float, x: float) -> float:
    """R* = (1+alpha)^2 G(x): the best penalty/LOW bound of Theorem 3.1 (inf outside it)."""
    return (1 + alpha) * (1 + alpha) * g_of_x(x)  # inf, not OverflowError, for a huge alpha


@dataclass(frozen=True)
class Theorem31:
    """Theorem 3.1 for one choice of (beta, delta): whether its precondition holds and its bounds."""

    beta: float
    delta: float
    c: float
    precondition_lhs: float
    precondition_rhs: float
    holds: bool
    bound: float
    sharp_bound: float


def theorem_3_1(alpha: float, tables: int, tracks: int, beta: float, delta: float) -> Theorem31:
    """Theorem 3.1 at (beta, delta) in (0,1)^2 (digest Sec. 3; E8 gives 20.808 and 19.5414).

    Precondition ``alpha/(1-x) <= C p/t`` with ``C = sqrt(delta)(1-beta)/sqrt(3)``, and x in the
    theorem's range (correction 2). ``bound`` is the theorem's ``(1+alpha)^2/(beta^4(1-delta))``;
    ``sharp_bound`` the proof's ``(1+alpha)^2/(beta^4(1-t gamma))``.
    """
    if not (0 < beta < 1 and 0 < delta < 1):
        raise ValueError("beta and delta must lie in (0, 1)")
    x = load_factor(alpha, tables, tracks)
    c = math.sqrt(delta) * (1 - beta) / math.sqrt(3)
    lhs = alpha / (1 - x) if x < 1 else math.inf
    rhs = c * tracks / tables
    t_gamma = 3 * x * x / ((1 - beta) ** 2 * (1 - x) ** 2) if x < 1 else math.inf
    ok = in_theorem_range(x) and lhs <= rhs
    scale = (1 + alpha) ** 2 / beta**4
    sharp = scale / (1 - t_gamma) if t_gamma < 1 else math.inf
    return Theorem31(beta=beta, delta=delta, c=c, precondition_lhs=lhs, precondition_rhs=rhs, holds=ok,
                     bound=scale / (1 - delta), sharp_bound=sharp)


@dataclass(frozen=True)
class Corollary32:
    """Corollary 3.2's choice for ``alpha = C p/t``: C' = C/(1-C), valid iff C' sqrt(3) < 1."""

    c: float
    c_prime: float
    c_prime_sqrt3: float
    valid: bool

    def delta_for(self, beta: float) -> float:
        """delta = (C' sqrt(3) / (1-beta))^2, for any beta < 1 - C' sqrt(3)."""
        if not (0 < beta < 1 - self.c_prime_sqrt3):
            raise ValueError(f"beta must lie in (0, {1 - self.c_prime_sqrt3:.6f})")
        return (self.c_prime_sqrt3 / (1 - beta)) ** 2


def corollary_3_2(c: float) -> Corollary32:
    """The mapping of Corollary 3.2 (E8: C = .1, .2, .3 give C' sqrt(3) = .19245, .43301, .74231)."""
    c_prime = c / (1 - c)
    return Corollary32(c=c, c_prime=c_prime, c_prime_sqrt3=c_prime * math.sqrt(3), valid=c < LOAD_LIMIT)


#: Theorem 4.3's headline stretch bound and the paper's computed figure (7/3)(1 + 1/8).
STRETCH_BOUND = 3.0
STRETCH_PAPER_FIGURE = 21 / 8
#: Theorem 5.1's headline factor on wLOW/2.
WEIGHTED_FACTOR = 4.5


def stretch_derived(alpha: float) -> float:
    """The sharper stretch bound 1 + (1 + 7 alpha)/3 (digest Sec. 3, [derived])."""
    return 1 + (1 + 7 * alpha) / 3


def weighted_factor_derived(alpha: float) -> float:
    """The valid Theorem 5.1 factor on wLOW/2: (16/9)(1+alpha)^2 (digest Sec. 3, [derived])."""
    return 16 / 9 * (1 + alpha) ** 2


def group_and_run_alpha_ok(alpha: float, tables: int, tracks: int, groups: int) -> tuple[bool, str]:
    """Theorem 4.3's precondition: alpha <= (p-g)/(8t) and alpha <= 1/8, or, when g <= p/2,
    alpha <= p/(16t)."""
    main = min((tracks - groups) / (8 * tables), 1 / 8)
    if alpha <= main:
        return True, f"alpha {alpha:g} <= min((p-g)/(8t), 1/8) = {main:g}"
    if groups <= tracks / 2 and alpha <= tracks / (16 * tables):
        return True, f"g <= p/2 and alpha {alpha:g} <= p/(16t) = {tracks / (16 * tables):g}"
    return False, f"alpha {alpha:g} > min((p-g)/(8t), 1/8) = {main:g} (and not g <= p/2 with alpha <= p/(16t))"
