"""The Random baseline is uniform over the ready set at every decision, not only the first."""

from __future__ import annotations

from collections import Counter

import staleness_lab as sl


def _ready_at(time: float, name: str) -> dict:
    return {"name": name, "arrivals": [[time, time]], "initial_freshness": -1.0, "alpha": 1, "beta": 0, "priority": 1}


def _workload(seed: int) -> dict:
    # one track, unit costs: three tables ready at 0, two more released at 1
    tables = [_ready_at(0.0, f"old{k}") for k in range(3)] + [_ready_at(1.0, f"new{k}") for k in range(2)]
    return {"tracks": 1, "horizon": 10, "seed": seed, "tables": tables}


def _started_at(result: sl.SimulationResult, time: float) -> str:
    jobs = result.jobs
    return str(jobs.loc[jobs["start"] == time, "table"].iloc[0])


def test_first_choice_is_uniform_over_the_ready_tables() -> None:
    counts = Counter(_started_at(sl.simulate(_workload(seed), "random"), 0.0) for seed in range(1500))
    assert set(counts) == {"old0", "old1", "old2"}
    for name, count in counts.items():  # expected 500 each; sd ~18, allow 4.5 sd
        assert abs(count - 500) < 82, (name, count)


def test_waiting_tables_are_not_disadvantaged_at_later_decisions() -> None:
    # At time 1 two old tables still wait and two new ones arrive: each of the four is chosen
    # with probability 1/4, so a new table wins half the time. A key drawn once per release
    # (without the exponential race's clock) would favour the new tables.
    runs = 2000
    new_wins = sum(_started_at(sl.simulate(_workload(seed), "random"), 1.0).startswith("new") for seed in range(runs))
    assert abs(new_wins / runs - 0.5) < 0.05, new_wins  # sd ~0.011


def test_random_is_reproducible_per_seed_and_differs_across_seeds() -> None:
    orders = [tuple(sl.simulate(_workload(seed), "random").jobs["table"]) for seed in (1, 1, 2, 3, 4)]
    assert orders[0] == orders[1]
    assert len(set(orders[1:])) > 1
