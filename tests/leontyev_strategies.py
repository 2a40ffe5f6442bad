"""Hypothesis strategies for Leontyev et al.'s AUS model (digest ``specs/leontyev-aus.md``), shared by
the check suites' property tests (``theory/test_leontyev_checks.py``), the sporadic engine's eq.-4
invariants (``sim/test_sporadic.py``) and the local-vs-Spark determinism test
(``spark/test_sporadic_traces_on_spark.py``)."""

from __future__ import annotations

from hypothesis import strategies as st

from staleness_lab.model import Table, Workload
from staleness_lab.model.feeds import compile_files

HORIZON = 80.0


def replayed_files(name: str, period: float, phase: float, jitter: float, kappa: float, seed: int) -> list[list[float]]:
    """The ``(arrival, timestamp)`` files of a periodic feed (jittered when ``jitter`` or ``kappa``)
    arriving in ``[0, HORIZON]``, as a replayed table lists them: the same span per file, so the
    same largest update length as the periodic feed."""
    feed = Table(name, alpha=1.0, beta=0.0, period=period, phase=phase, arrival_jitter=jitter, timestamp_jitter=kappa)
    files = compile_files(feed, HORIZON, seed)
    if files is None:  # a plain periodic feed: files at phase + k p, timestamp = arrival
        count = int((HORIZON - phase) // period)
        files = tuple((phase + k * period, phase + k * period) for k in range(1, count + 1))
    return [list(f) for f in files]


@st.composite
def leontyev_workloads(draw, *, outages: bool = True, thresholds: bool = True, replayed: bool = False) -> Workload:
    """m in {1, 2, 3}, 2-6 periodic base tables (some with jitter, some with an outage) and
    sometimes a derived table over 1-2 of them; U_sum <= 0.95 m by construction and worst-case
    budgets (default ``provisioning``), so no job exceeds its e_k; random thresholds.

    ``replayed=True`` also turns some base tables into replayed feeds (``arrivals`` with a
    ``nominal_period``): the files a periodic feed of the drawn period, phase and jitters would
    deliver, listed, under the table's outage if it has one."""
    m = draw(st.integers(1, 3))
    n = draw(st.integers(2, 6))
    derived = draw(st.booleans())
    noisy = draw(st.booleans())
    hi = 1.2 if noisy else 1.0
    weights = draw(st.lists(st.floats(0.2, 1.0), min_size=n + derived, max_size=n + derived))
    load = draw(st.floats(0.2, 0.95)) * m
    u = [min(0.9, load * w / sum(weights)) for w in weights]
    tables, periods = [], []
    for k in range(n):
        period = draw(st.sampled_from([2.0, 3.0, 4.0, 5.0, 6.0]))
        phase = draw(st.sampled_from([0.0, 0.5, 1.0, 2.5]))
        jitter, kappa = draw(st.sampled_from([(0.0, 0.0), (0.0, 0.0), (0.5, 0.0), (1.0, 0.5)]))
        beta = draw(st.sampled_from([0.0, 0.02, 0.05]))
        alpha = u[k] * period / hi - beta * max(phase + period, period + jitter + kappa)  # e_k = u_k p_k
        if alpha < 0.01:
            alpha, beta = u[k] * period / hi, 0.0
        keys: dict = {"arrival_jitter": jitter, "timestamp_jitter": kappa}
        if outages and draw(st.booleans()):
            start = draw(st.floats(3.0, 45.0))
            keys["outages"] = [[start, start + draw(st.floats(period + jitter + 0.5, 25.0))]]
        if thresholds and draw(st.booleans()):
            keys["recovery_threshold"] = draw(st.floats(0.5, 3.0)) * period
        if replayed and draw(st.booleans()):
            files = replayed_files(f"B{k}", period, phase, jitter, kappa, draw(st.integers(0, 5)))
            del keys["arrival_jitter"], keys["timestamp_jitter"]
            tables.append(Table(f"B{k}", alpha=alpha, beta=beta, arrivals=files, nominal_period=period, **keys))
        else:
            tables.append(Table(f"B{k}", alpha=alpha, beta=beta, period=period, phase=phase, **keys))
        periods.append(period)
    if derived:
        sources = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2, unique=True))
        p = max(periods[i] for i in sources)
        tables.append(Table("D", alpha=u[n] * p / hi, beta=0.0, sources=[f"B{i}" for i in sources]))
    return Workload(tables=tuple(tables), tracks=m, horizon=HORIZON, seed=draw(st.integers(0, 5)),
                    cost_noise=(0.8, 1.2) if noisy else None)
