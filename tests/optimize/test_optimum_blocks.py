"""The exact X_w optimum cut in time (:mod:`staleness_lab.optimize.time_blocks`) and its labelling
search (:mod:`staleness_lab.optimize.block_dp`): on random instances small enough for the brute
force, blocks == brute force == the monolithic CP-SAT model (forced and relaxed); a block whose
optimum runs past its cut is merged with the next; a time limit hit mid-instance still returns a
schedule with a true bound; the search gives up past its budget."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from staleness_lab import simulate
from staleness_lab.model import parse_workload
from staleness_lab.optimize import brute_force, optimum
from staleness_lab.optimize import block_dp
from staleness_lab.optimize import staleness_optimum as so
from staleness_lab.optimize.block_dp import dive, search
from staleness_lab.optimize.time_blocks import cuts, spans
from staleness_lab.theory.bateni.metrics import measures

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_optimum import poisson_workload  # noqa: E402
from optimum_strategies import replayed_workloads  # noqa: E402


def spread_workloads() -> st.SearchStrategy[dict[str, Any]]:
    """At most 3 tables and 7 updates on p <= 2 tracks, releases spread over (0, 6] on a 0.1
    grid, so that most instances have instants with nothing running (cuts)."""
    return replayed_workloads(7, 60, alphas=(0, 0, 0.2), betas=(0.05, 0.1, 0.25, 0.5))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=spread_workloads())
def test_blocks_equal_brute_force_and_the_monolithic_model(data: dict[str, Any]) -> None:
    w = parse_workload(data)
    for relaxed in (False, True):
        blocks = optimum(w, relaxed=relaxed)
        whole = optimum(w, relaxed=relaxed, method="monolithic")
        assert blocks.status == whole.status == "optimal" and blocks.gap == 0.0
        assert blocks.objective == whole.objective == brute_force(w, forced=not relaxed).X
        assert blocks.bound == blocks.objective_X


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=spread_workloads())
def test_blocks_left_unproven_by_the_first_pass_are_solved_in_the_second(data: dict[str, Any]) -> None:
    """With no time for the first pass (only the completion floors prove blocks there) or a
    beam of one label, the second pass solves the rest and still equals the brute force."""
    w = parse_workload(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(so, "DIVE_BEAM", 1)
        for relaxed, first_pass in ((False, 0.0), (True, 0.0), (False, so.FIRST_PASS)):
            patch.setattr(so, "FIRST_PASS", first_pass)
            blocks = optimum(w, relaxed=relaxed)
            assert blocks.status == "optimal" and blocks.objective == brute_force(w, forced=not relaxed).X


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=spread_workloads(), share=st.floats(0.9, 1.0), tracks=st.integers(1, 2), relaxed=st.booleans())
def test_a_search_that_deepens_from_a_known_bound_proves_the_same_optimum(data: dict[str, Any], share: float,
                                                                         tracks: int, relaxed: bool) -> None:
    """A block solved again with the bound an earlier solve left (here any true bound, a share
    of the optimum) searches below that bound plus a sliver of the gap, then further: it proves
    the optimum the plain search proves, which the brute force agrees with."""
    w = parse_workload({**data, "tracks": tracks})
    grid = so._grid(so.exact_tables(w))
    hint = so._hint_schedule(w, grid)
    plain = so._solve(grid, tracks, relaxed, hint, 60, 1, True)
    best = so._objective(grid, plain.batches)
    assert plain.proven and so._constant(grid) + Fraction(best, grid.wscale * grid.scale**2) == brute_force(
        w, forced=not relaxed).X
    serial, end = [], 0  # without forced batching, every update alone on one track in order of arrival: a poor hint
    for r, i, j in sorted((r, i, j) for i, row in enumerate(grid.r) for j, r in enumerate(row)):
        end = max(end, r) + grid.dur(i, j, j)
        serial.append(so._Batch(i, j, j, end - grid.dur(i, j, j), end))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(so, "DIVE_BEAM", 1)  # a beam search that proves little, so that the search deepens
        for start in [hint] + ([serial] if relaxed else []):  # the serial hint taken as a beam search's answer
            deep = so._solve(grid, tracks, relaxed, start, 60, 1, True, dived=start is serial,
                             lower=int(share * best))
            assert deep.proven and so._objective(grid, deep.batches) == best == deep.lower


def test_a_block_whose_optimum_runs_past_its_cut_is_solved_with_the_next() -> None:
    """E2 (the optimum idles for B and ends A at 12.105, eager ends at 11.605) and C's update at
    11.8, an instant at which the eager hint is empty: the first block's optimum crosses it."""
    w = parse_workload({"tracks": 1, "horizon": 20, "tables": [
        {"name": "A", "arrivals": [10], "alpha": 0, "beta": 0.15, "priority": 1},
        {"name": "B", "arrivals": [10.5], "alpha": 0, "beta": 0.01, "priority": 1},
        {"name": "C", "arrivals": [11.8], "alpha": 0, "beta": 0.01, "priority": 1}]})
    hint = [(0, 0, 0, 1000, 1150), (1, 0, 0, 1150, 1160.5), (2, 0, 0, 1180, 1191.8)]  # eager, times × 100
    assert cuts([[1000], [1050], [1180]], hint) == [1180]
    for first_pass in (so.FIRST_PASS, 0.0):  # merged in the first pass, or in the second
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(so, "FIRST_PASS", first_pass)
            result = optimum(w)
        assert result.status == "optimal" and result.objective == brute_force(w).X
        ends = dict(zip(result.batches["table"], result.batches["end"]))
        assert ends["A"] == pytest.approx(12.105) and ends["A"] > 11.8


def test_cuts_and_spans_by_hand() -> None:
    arrivals = [[10, 50], [15]]
    batches = [(0, 0, 0, 10, 20), (1, 0, 0, 20, 30), (0, 1, 1, 50, 60)]
    assert cuts(arrivals, batches) == [50]  # at 15 the first batch still runs
    assert cuts(arrivals, [(0, 0, 0, 10, 12), (1, 0, 0, 15, 30), (0, 1, 1, 50, 60)]) == [15, 50]
    assert spans(arrivals, None, 50) == [(0, 1), (0, 1)] and spans(arrivals, 50, None) == [(1, 2), (1, 1)]


def test_a_time_limit_hit_mid_instance_gives_a_schedule_and_a_true_bound() -> None:
    w = poisson_workload(24, 34, 1, 0.8, 0)
    result = optimum(w, time_limit=0.5)
    assert result.status == "feasible" and result.trace is not None
    assert result.bound <= result.objective_X and result.gap == pytest.approx(
        (result.objective_X - result.bound) / result.objective_X, rel=1e-6)
    assert len(result.batches) and result.batches["end"].max() > 0
    assert result.objective == Fraction(result.objective) and float(result.objective) == result.objective_X


def test_a_hard_block_leaves_time_to_the_easy_ones_after_it_and_its_search_still_bounds_it() -> None:
    """12 x 14 at load .8 on two tracks, seed 0: a 52-update block no search proves in seconds,
    then smaller blocks. Solved left to right with all the time, the hard block left the others
    their completion floors (gap 2.9 %); the first pass's beam searches prove the small ones,
    and the hard block's search, giving up, bounds it by its open labels (gap 0.02 %)."""
    result = optimum(poisson_workload(12, 14, 2, 0.8, 0), time_limit=3)
    assert result.status == "feasible" and 0 < result.gap < 0.005
    assert result.bound <= result.objective_X


def test_the_search_gives_up_past_its_budget_and_says_when_the_hint_is_optimal() -> None:
    arrivals, coef, pieces = [[0, 1, 2], [0, 1]], [[1, 1, 1], [1, 1]], [[5, 5, 5], [5, 5]]

    def dur(i: int, first: int, last: int) -> int:
        return 5 * (last - first + 1)

    for compiled in (True, False):
        found = search(arrivals, dur, coef, pieces, 1, True, 10**9, 10**6, 1e18, compiled=compiled).batches
        assert found and all(end - start == dur(i, a, b) for i, a, b, start, end in found)
        best = block_dp._objective(found, coef)
        gave_up = search(arrivals, dur, coef, pieces, 1, True, 10**9, 1, 1e18, compiled=compiled)
        assert gave_up.batches is None and 0 < gave_up.lower <= best  # its open labels still bound the optimum
        many = [list(range(6))] * 3  # past 256 labels, where the deadline (passed) is looked at
        assert search(many, dur, [[1] * 6] * 3, [[5] * 6] * 3, 2, False, 10**9, 10**6, 0.0,
                      compiled=compiled).batches is None
        assert search(arrivals, dur, coef, pieces, 1, True, best, 10**6, 1e18, compiled=compiled) == ([], best)
    assert dive(many, dur, [[1] * 6] * 3, [[5] * 6] * 3, 2, False, 10**9, 10, 10**6, 0.0) == (None, False)
    assert dive(arrivals, dur, coef, pieces, 1, True, 10**9, 10, 1, 1e18) == (None, False)  # past its budget


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=spread_workloads(), forced=st.booleans())
def test_the_search_alone_equals_brute_force_on_one_and_two_tracks(data: dict[str, Any], forced: bool) -> None:
    """The labelling search over a whole small instance (no cut, no CP-SAT), with Smith's rule
    between adjacent batches on one track: its minimum is the brute force's."""
    _search_equals_brute_force({**data, "tables": [{**t, "arrivals": [a / 4 for a in t["arrivals"]]}
                                                   for t in data["tables"]]}, forced)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=replayed_workloads(6, 12, alphas=(0, 0.1, 0.3), betas=(0.05, 0.2, 0.5)), tracks=st.integers(2, 3),
       forced=st.booleans())
def test_the_earliest_free_track_loses_no_schedule_on_crowded_tracks(data: dict[str, Any], tracks: int,
                                                                     forced: bool) -> None:
    """Each batch goes on the earliest-free track (block_dp's docstring: an exchange of two
    tracks' futures): on 2-3 tracks with every release within 1.2 time units of each other, so
    that tracks are busy at once, the search's minimum is still the brute force's, which tries
    every track."""
    _search_equals_brute_force({**data, "tracks": tracks}, forced)


def _search_equals_brute_force(data: dict[str, Any], forced: bool) -> None:
    w = parse_workload(data)
    grid = so._grid(so.exact_tables(w))
    hint = so._hint_schedule(w, grid)
    coef = [[grid.w[i] * grid.length(i, j) for j in range(t.n)] for i, t in enumerate(grid.tables)]
    pieces = [[grid.piece(i, j) for j in range(t.n)] for i, t in enumerate(grid.tables)]
    upper = so._objective(grid, hint) + 1  # so that the search returns its minimum, the hint's own included
    truth = brute_force(w, forced=forced).X

    def on_x(objective: float) -> Fraction:  # the search's objective (or a bound) on the grid, as X_w
        return so._constant(grid) + Fraction(objective) / (grid.wscale * grid.scale**2)

    def x_of(batches: list[tuple[int, int, int, int, int]]) -> Fraction:
        assert all(end - start == grid.dur(i, a, b) for i, a, b, start, end in batches)
        return on_x(sum(end * sum(coef[i][a:b + 1]) for i, a, b, _, end in batches))

    for compiled in (True, False):  # the compiled search and its Python reference
        found = search(grid.r, grid.dur, coef, pieces, w.tracks, forced, upper, 10**7, 1e18, compiled=compiled)
        assert found.batches and x_of(found.batches) == truth and x_of(found.batches) == on_x(found.lower)
        for budget in (1, 3, 10, 30):  # given up early: the open labels' bound is still at most OPT
            gave_up = search(grid.r, grid.dur, coef, pieces, w.tracks, forced, upper, budget, 1e18, compiled=compiled)
            assert gave_up.batches is not None or on_x(gave_up.lower) <= truth
    root = block_dp._Label(0, 0, (0,) * w.tracks, (0,) * len(coef), None, None)  # nothing placed: its bound is OPT's
    own = [[c * grid.dur(i, j, j) for j, c in enumerate(row)] for i, row in enumerate(coef)]
    rest = block_dp._rest(grid.r, coef, pieces, own, grid.dur, forced, (0,) * len(coef), root)
    assert on_x(rest) <= truth
    # the beam search: exact when no layer is cut (a beam wider than any layer), a true schedule when one is
    assert x_of(dive(grid.r, grid.dur, coef, pieces, w.tracks, forced, upper, 10**6, 10**7, 1e18)[0]) == truth
    narrow, proven = dive(grid.r, grid.dur, coef, pieces, w.tracks, forced, upper, 2, 10**7, 1e18)
    assert narrow is not None
    assert x_of(narrow) == truth if proven else not narrow or x_of(narrow) >= truth


def test_a_block_too_large_to_model_keeps_the_hint_with_a_true_bound() -> None:
    """One table of 300 updates at full load on one track never empties: one block, past
    MAX_BLOCK, so the answer is the hint's schedule with each update's earliest end as bound."""
    arrivals = [round(0.01 * k, 2) for k in range(1, 301)]
    w = parse_workload({"tracks": 1, "horizon": 10, "tables": [
        {"name": "a", "arrivals": arrivals, "alpha": 0.01, "beta": 1, "priority": 1}]})
    result = optimum(w, time_limit=5)
    assert 300 > so.MAX_BLOCK and result.status == "feasible"
    assert 0 < result.bound < result.objective_X and result.gap > 0


@pytest.mark.parametrize(("tables", "updates", "tracks", "x", "seed"), [
    (28, 40, 1, 0.5, 9),  # a decimal grid: the replay's rounded times drift from the engine's
    (40, 60, 1, 0.5, 4),  # an exact grid, where the engine's float sums break ties otherwise
    (32, 50, 2, 0.5, 7),
])
def test_the_hint_is_myopics_schedule_on_the_grid(tables: int, updates: int, tracks: int, x: float, seed: int) -> None:
    """The hint replays myopic's schedule: its X_w is myopic's within the grid's rounding. A
    replayed batch that takes the updates the engine left to its table's next job used to leave
    that job waiting, its track idle, for the table's next arrival: the hint's X_w was 6,738
    against myopic's 1,124 on the first instance, 3,140 against 2,326 on the second, and the
    optimum returned it, unproven, in about a second."""
    w = poisson_workload(tables, updates, tracks, x, seed)
    grid = so._grid(so.exact_tables(w))
    _, _, hint_x = so._schedule(w, grid, so._hint_schedule(w, grid))
    myopic = measures(simulate(w, "myopic", horizon=10 * updates).trace).X_w
    assert float(hint_x) == pytest.approx(myopic, rel=1e-5)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), tables=st.integers(1, 4), tracks=st.integers(1, 3), forced=st.booleans())
def test_the_compiled_bound_equals_the_python_reference(data: st.DataObject, tables: int, tracks: int,
                                                        forced: bool) -> None:
    """The search's bound on a label's pending updates (release and mean-busy-time bounds, with
    forced batching's first batch of each table as one job or not) as compiled equals
    :func:`block_dp._rest`, on random tables, labels and free times."""
    from staleness_lab.optimize.block_bound import bounds, instance_arrays

    ints = st.integers(0, 10**7) | st.integers(0, 20)  # small values tie ready times across tables
    n = [data.draw(st.integers(0, 5)) for _ in range(tables)]
    arrivals = [sorted(data.draw(st.lists(ints, min_size=k, max_size=k))) for k in n]
    coef = [data.draw(st.lists(st.integers(0, 10**5), min_size=k, max_size=k)) for k in n]
    pieces = [data.draw(st.lists(st.integers(0, 10**5), min_size=k, max_size=k)) for k in n]
    alpha = [data.draw(st.integers(0, 10**5)) for _ in n]

    def dur(i: int, a: int, b: int) -> int:
        return alpha[i] + sum(pieces[i][a:b + 1])

    own = [[c * dur(i, j, j) for j, c in enumerate(cs)] for i, cs in enumerate(coef)]
    durations = np.zeros((tables, max(n, default=0), max(n, default=0)), dtype=np.int64)
    for i, k in enumerate(n):
        for a in range(k):
            for b in range(a, k):
                durations[i, a, b] = dur(i, a, b)
    pending = tuple(data.draw(st.integers(0, k)) for k in n)
    label = block_dp._Label(0, 0, tuple(sorted(data.draw(st.lists(ints, min_size=tracks, max_size=tracks)))),
                            tuple(data.draw(st.lists(ints, min_size=tables, max_size=tables))), None, None)
    arrays = instance_arrays(arrivals, coef, pieces, own, n)
    free, busy_tables = np.array(label.tracks, dtype=np.int64), np.array(label.tables, dtype=np.int64)
    release, busy, fits = bounds(*arrays, durations, forced, np.array(pending, dtype=np.int64), free, busy_tables,
                                 math.inf)
    assert fits
    reference = block_dp._rest(arrivals, coef, pieces, own, dur, forced, pending, label)
    assert max(release, busy) == pytest.approx(reference, rel=1e-12, abs=1e-9)
    cutoff = data.draw(st.floats(0, 2 * reference + 1))  # a search's question: does the bound reach the cutoff?
    cut = bounds(*arrays, durations, forced, np.array(pending, dtype=np.int64), free, busy_tables, cutoff)
    if max(release, busy) < cutoff:
        assert cut == (release, busy, True)
    else:
        assert cutoff <= max(cut[0], cut[1]) <= max(release, busy)


def test_a_signal_inside_the_compiled_search_raises_its_own_exception() -> None:
    """A signal handler runs in the compiled search's clock check (Python, every 256 labels); its
    exception ends the search and reaches the caller as itself, not as a SystemError. The
    search is over a whole 168-update instance with no deadline, which it cannot finish."""
    import signal

    w = poisson_workload(12, 14, 1, 0.8, 7)
    grid = so._grid(so.exact_tables(w))
    coef = [[grid.w[i] * grid.length(i, j) for j in range(t.n)] for i, t in enumerate(grid.tables)]
    pieces = [[grid.piece(i, j) for j in range(t.n)] for i, t in enumerate(grid.tables)]

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt("the test's alarm")

    from staleness_lab.optimize.block_labels import compile_search

    compile_search()  # loaded before the alarm, so that it goes off inside the search
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt, match="the test's alarm"):
            search(grid.r, grid.dur, coef, pieces, 1, True, 2**61, 10**7, math.inf)  # bounded, should the alarm miss
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
