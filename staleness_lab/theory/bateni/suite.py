"""Bateni et al.'s claims checked on a trace (the ``bateni`` suite of ``staleness-lab check``).

Claims (digest Sec. 3 and acceptance checks 2, 4, 7, 8, 11, 12):

* ``staleness-sandwich`` (Sec. 2.2): LOW/2 <= X <= S* <= penalty/2, X = S^H - tail per table, and
  S^H from the freshness steps equal to the engine's staleness area.
* ``penalty-ratio`` (Theorem 3.1): penalty <= R* LOW, R* = (1+alpha)^2 G(x).
* ``claim-3.5`` and ``lemma-3.4``: diagnostics (erratum A1/E5: they may fail while 3.1 holds).
* GROUPANDRUN only: ``wait`` (Lemma 4.2, per group: omega, theta <= B/6), ``stretch``
  (Theorem 4.3: < 3), ``stretch-derived`` (1 + (1+7 alpha)/3), ``weighted-staleness``
  (Theorem 5.1: X_w <= 4.5 wLOW/2).

The paper's alpha_i is the schema's ``beta`` (correction 1), so alpha = max beta; its model
needs ``alpha: 0`` (no start-up cost) and finite feeds whose data ends at arrival.
"""

from __future__ import annotations

import math

import numpy as np

from staleness_lab.model import Workload
from staleness_lab.theory.bateni.blocking import BETA_TARDY, Batches, claim_3_5, lemma_3_4
from staleness_lab.theory.bateni.bounds import (LOAD_LIMIT, STRETCH_BOUND, STRETCH_PAPER_FIGURE, WEIGHTED_FACTOR,
                                                best_beta, g_of_x, group_and_run_alpha_ok, in_theorem_range,
                                                load_factor, r_star, stretch_derived, weighted_factor_derived)
from staleness_lab.theory.bateni.eager import is_eager
from staleness_lab.theory.bateni.metrics import Measures, measures
from staleness_lab.theory.bateni.updates import TableUpdates, table_updates
from staleness_lab.theory.bateni.waits import group_waits
from staleness_lab.theory.records import CheckRecord, Precondition, bound_record, equal, within
from staleness_lab.theory.suites import CheckContext, register_suite

T31 = "Bateni et al., Theorem 3.1"


def model_precondition(w: Workload, drained: bool, drain_reason: str | None) -> Precondition:
    """``bateni-model``: the paper's model (correction 1, digest Sec. 1): finite feeds, fully
    applied (a drained run), data ending at arrival, F(0) = 0, no start-up cost, and none of the
    foundation's extensions (variability, slowdown, chop, min_separation, views)."""
    problems = []
    if not drained:
        problems.append(drain_reason or "the run is not drained")
    for k, t in enumerate(w.tables):
        where = f"tables[{k}] ({t.name!r})"
        if t.sources is not None:
            problems.append(f"{where} is derived")
        elif t.arrivals is not None and any(d != a for a, d in t.arrivals):
            problems.append(f"{where} has data_to before arrival")
        if t.initial_freshness != 0:
            problems.append(f"{where} has initial_freshness != 0")
        if t.alpha != 0:
            problems.append(f"{where} has alpha {t.alpha:g} != 0 (a start-up cost)")
        if t.min_separation:
            problems.append(f"{where} has min_separation")
    for key in ("variability", "slowdown", "chop"):
        if getattr(w, key) is not None:
            problems.append(f"{key} is set")
    problems += [f"tables[{k}] ({t.name!r}) has chop" for k, t in enumerate(w.tables) if t.chop is not None]
    if problems:
        return Precondition("bateni-model", False, "; ".join(dict.fromkeys(problems)))
    return Precondition("bateni-model", True, "finite replayed feeds with data_to = time, all applied, F(0) = 0, "
                                             "alpha = 0, no variability, slowdown, chop or min_separation")


def _alpha(w: Workload) -> float:
    """The paper's alpha = max_i alpha_i (the schema's beta) over base tables."""
    return max(t.beta for t in w.tables if t.is_base)


def _sandwich(m: Measures, trace_area: list[float], names: list[str], w: Workload) -> CheckRecord:
    """LOW/2 <= X <= S* <= penalty/2, X = S^H - tail per table, S^H = the engine's area."""
    low, x, s_star, pen = m.LOW, m.X, m.S_star, m.penalty
    relations = {
        "LOW/2 <= X": within(low / 2, x),
        "X <= S*": within(x, s_star),
        "S* <= penalty/2": within(s_star, pen / 2),
    }
    identity = [equal(row.X, row.S_H - row.tail) for row in m.tables.itertuples()]
    engine = [equal(row.S_H, trace_area[names.index(row.table)]) for row in m.tables.itertuples()]
    relations["X = S^H - tail (per table)"] = all(identity)
    relations["S^H = engine staleness area (per table)"] = all(engine)
    pre = (
        Precondition("initial-freshness-zero", all(t.initial_freshness == 0 for t in w.tables if t.is_base),
                     "every base table starts with F(0) = 0 (the sandwich's first step assumes it)"),
        Precondition("warmup-zero", w.warmup == 0, "the engine's staleness area covers [0, horizon]"
                     if w.warmup == 0 else f"warmup {w.warmup:g}: the engine's area starts later"),
    )
    return CheckRecord(
        claim="staleness-sandwich", theorem="Bateni et al., Sec. 2.2", bound=pen / 2, observed=s_star,
        preconditions=pre, holds_if_met=all(relations.values()), ratio=s_star / (pen / 2) if pen > 0 else None,
        terms={"LOW": low, "X": x, "S_star": s_star, "penalty": pen, "S_H": m.total("S_H"),
               "horizon": m.horizon, "relations": relations},
    )


def _theorem_3_1(m: Measures, w: Workload, model: Precondition, eager_pre: Precondition) -> tuple[CheckRecord, tuple[Precondition, ...], float]:
    alpha = _alpha(w)
    t, p = sum(1 for tb in w.tables if tb.is_base), w.tracks
    x = load_factor(alpha, t, p)
    inside = in_theorem_range(x)
    pre = (
        model,
        Precondition("alpha-le-1", alpha <= 1, f"alpha = max beta = {alpha:g}" + ("" if alpha <= 1 else " > 1")),
        Precondition("p-le-t", p <= t, f"p = {p}, t = {t}"),
        Precondition("load", inside, f"x = alpha t/p = {x:g}" + (f" < {LOAD_LIMIT:.6f}" if inside else
                     f" is outside the theorem (needs 0 <= x < (sqrt 3 - 1)/2 = {LOAD_LIMIT:.6f}, correction 2)")),
        eager_pre,
    )
    bound = r_star(alpha, x)
    observed = m.penalty / m.LOW if m.LOW > 0 else 0.0
    record = bound_record(
        "penalty-ratio", T31, observed, bound, pre,
        terms={"LOW": m.LOW, "penalty": m.penalty, "x": x, "alpha": alpha,
               "beta_star": best_beta(x) if inside else None, "G": g_of_x(x) if inside else None},
    )
    return record, pre, x


def _diagnostics(updates: list[TableUpdates], w: Workload, pre: tuple[Precondition, ...], x: float) -> list[CheckRecord]:
    """Claim 3.5 and Lemma 3.4 at beta_tardy = .6 (erratum A1/E5)."""
    alpha = _alpha(w)
    t, p = sum(1 for tb in w.tables if tb.is_base), w.tracks
    out = []
    usable = x < 1 and alpha > 0
    dag = Batches.of(updates).arcs(BETA_TARDY) if usable else None
    for claim, fn, theorem, direction in (
        ("claim-3.5", claim_3_5, "Bateni et al., Claim 3.5", ">="),
        ("lemma-3.4", lemma_3_4, "Bateni et al., Lemma 3.4", "<="),
    ):
        worst = fn(dag, alpha, t, p, x) if dag is not None else None
        terms = {"beta_tardy": BETA_TARDY, "direction": direction}
        if worst is None:
            terms["tardy_batches"] = 0
            out.append(CheckRecord(claim=claim, theorem=theorem, bound=None, observed=None, preconditions=pre,
                                   holds_if_met=True, terms=terms, diagnostic=True))
            continue
        holds = within(worst.rhs, worst.lhs) if direction == ">=" else within(worst.lhs, worst.rhs)
        terms.update(tardy_batches=worst.tardy_batches, lhs=worst.lhs, rhs=worst.rhs, own_table_wait=worst.own_table_wait)
        out.append(CheckRecord(
            claim=claim, theorem=theorem, bound=worst.rhs, observed=worst.lhs, preconditions=pre, holds_if_met=holds,
            ratio=worst.lhs / worst.rhs if worst.rhs > 0 else None, terms=terms, diagnostic=True,
            witness={"table": w.tables[worst.table].name, "batch_start": worst.start, "own_table_wait": worst.own_table_wait},
        ))
    return out


def _distinct_releases(updates: list[TableUpdates]) -> Precondition:
    times = np.sort(np.concatenate([u.arrival for u in updates])) if updates else np.empty(0)
    clash = np.flatnonzero(np.diff(times) == 0)
    if len(clash):
        return Precondition("distinct-releases", False, f"two updates are released at t={times[clash[0]]:g} (Sec. 4 assumes none)")
    return Precondition("distinct-releases", True, "no two releases coincide")


def _quasiperiodic(group: list[TableUpdates], bound: float) -> tuple[bool, str]:
    """Every update length, the first included, in [B/2, B] (A6)."""
    for u in group:
        bad = np.flatnonzero((u.length < bound / 2 * (1 - 1e-9)) | (u.length > bound * (1 + 1e-9)))
        if len(bad):
            return False, f"table {u.name!r}: update {int(bad[0])} has length {u.length[bad[0]]:g} outside [B/2, B] = [{bound / 2:g}, {bound:g}]"
    return True, f"every update length in [B/2, B] = [{bound / 2:g}, {bound:g}]"


def _group_and_run(ctx: CheckContext, updates: list[TableUpdates], m: Measures, model: Precondition) -> list[CheckRecord]:
    """Lemma 4.2 per group, Theorems 4.3 and 5.1 (GROUPANDRUN's claims)."""
    from staleness_lab.theory.bateni.grouping import allocate, parse_groups, stab_groups

    w = ctx.workload
    lengths = [t.declared_lengths() for t in w.tables]
    if any(length is None for length in lengths):
        return []
    text = ctx.options.get("groups") or ""
    groups = parse_groups(text, [t.name for t in w.tables], lengths) if text else stab_groups(lengths)
    t, p, g = len(w.tables), w.tracks, len(groups)
    alpha = _alpha(w)
    by_table = {u.table: u for u in updates}
    distinct = _distinct_releases(updates)
    if p <= g:
        return []
    tracks = allocate([len(members) for members in groups], p)
    out: list[CheckRecord] = []
    quasi_all: list[str] = []
    for k, (members, p_k) in enumerate(zip(groups, tracks)):
        group = [by_table[i] for i in members if i in by_table]
        bound_b = max(lengths[i][1] for i in members)  # type: ignore[index]
        quasi, why = _quasiperiodic(group, bound_b)
        if not quasi:
            quasi_all.append(why)
        t_k = len(members)
        lemma_alpha = alpha <= p_k / (8 * t_k) and alpha <= 1 / 8
        waits = group_waits(group, p_k)
        pre = (
            model,
            Precondition("alpha-lemma-4.2", lemma_alpha, f"alpha {alpha:g} vs min(p'/(8t'), 1/8) = {min(p_k / (8 * t_k), 1 / 8):g}"),
            Precondition("quasiperiodic", quasi, why),
            distinct,
        )
        observed = max(waits.max_wait, waits.max_tight)
        out.append(bound_record(
            "wait", "Bateni et al., Lemma 4.2", observed, bound_b / 6, pre,
            terms={"group": k, "tables": [w.tables[i].name for i in members], "tracks": p_k, "B": bound_b,
                   "omega": waits.max_wait, "theta": waits.max_tight},
            window=waits.tight_window,
            witness={"table": waits.wait_table, "arrival": waits.wait_arrival},
        ))
    alpha_ok, alpha_why = group_and_run_alpha_ok(alpha, t, p, g)
    pre = (
        model,
        Precondition("p-gt-g", p > g, f"p = {p}, g = {g}"),
        Precondition("alpha", alpha_ok, alpha_why),
        Precondition("quasiperiodic", not quasi_all, "; ".join(quasi_all) or "every group is B-quasiperiodic for its largest Lmax"),
        distinct,
    )
    stretch = m.max_stretch if len(m.tables) else math.nan
    out.append(bound_record("stretch", "Bateni et al., Theorem 4.3", stretch, STRETCH_BOUND, pre,
                            terms={"paper_figure": STRETCH_PAPER_FIGURE, "derived": stretch_derived(alpha), "alpha": alpha}))
    out.append(bound_record("stretch-derived", "Bateni et al., Theorem 4.3 (sharper, digest Sec. 3)", stretch,
                            stretch_derived(alpha), pre, terms={"alpha": alpha}))
    w_low = m.total("LOW", weighted=True)
    out.append(bound_record(
        "weighted-staleness", "Bateni et al., Theorem 5.1", m.X_w, WEIGHTED_FACTOR * w_low / 2, pre,
        terms={"wLOW": w_low, "X_w": m.X_w, "derived_bound": weighted_factor_derived(alpha) * w_low / 2,
               "derived_holds": within(m.X_w, weighted_factor_derived(alpha) * w_low / 2)},
    ))
    return out


@register_suite("bateni")
def bateni_suite(ctx: CheckContext) -> list[CheckRecord]:
    """Every Bateni et al. claim on ``ctx.trace`` (see the module docstring)."""
    if ctx.trace.job_model == "sporadic":  # Leontyev et al.'s job model: these claims are about Golab's
        return []
    w = ctx.workload
    trace = ctx.trace
    updates = table_updates(trace)
    if not updates:
        return []
    m = measures(trace, updates)
    names = [t.name for t in w.tables]
    model = model_precondition(w, ctx.drained, ctx.drain_reason)
    verdict = is_eager(trace)
    eager_pre = Precondition("eager", verdict.eager, verdict.why)
    records = [_sandwich(m, trace.staleness_area, names, trace.workload)]
    penalty, pre, x = _theorem_3_1(m, w, model, eager_pre)
    records.append(penalty)
    records.extend(_diagnostics(updates, w, pre, x))
    if ctx.policy == "group-and-run":
        records.extend(_group_and_run(ctx, updates, m, model))
    return records
