"""join-cascade(k), the scheduler's scaling workflow: its shape, its bounds, its generated
inputs, and runs in the sizes and memory modes."""

from __future__ import annotations

import pandas as pd
import pytest

from staleness_lab.errors import InputError
from staleness_lab.workflows.cascade import MAX_K, join_cascade
from staleness_lab.workflows.sim import RunConfig, run
from staleness_lab.workflows.sources import GENERATORS


def test_the_cascade_is_left_deep_with_one_layout_element_per_input() -> None:
    wf = join_cascade(4)
    assert [op.name for op in wf.operators] == ["join1", "join2", "join3"]
    assert [op.inputs for op in wf.operators] == [("in0", "in1"), ("j1", "in2"), ("j2", "in3")]
    assert [ch.name for ch in wf.outputs()] == ["output"]
    assert [c for c, _ in wf.layout("output")] == ["in0", "in1", "in2", "in3"]
    assert dict(wf.channel("output").schema) == {"key": "str", "v0": "str", "v1": "str", "v2": "str", "v3": "str"}
    stale = sorted((c.path, c.t) for c in wf.constraints if type(c).__name__ == "StalenessBound")
    assert stale == [(0, 0.0), (1, 24.0), (2, 24.0), (3, 24.0)]
    assert [c.t for c in wf.constraints if type(c).__name__ == "InconsistencyBound"] == [168.0]
    assert all(wf.channel(f"in{i}").insert_only for i in range(4))


@pytest.mark.parametrize("k", [1, MAX_K + 1, 2.0, True])
def test_a_bad_k_is_refused(k: object) -> None:
    with pytest.raises(InputError, match="^k"):
        join_cascade(k)  # type: ignore[arg-type]


def test_the_feeds_draw_independently_and_repeat_per_seed() -> None:
    feed = GENERATORS["cascade-feed"]
    a = feed(1, 0.25, 50, 1.0, column="v0")
    b = feed(1, 0.25, 50, 1.0, column="v1")
    assert [x.time for x in a] == [0.25, 0.5, 0.75, 1.0] and all(len(x.rows) == 50 for x in a)
    assert list(a[0].rows.columns) == ["key", "v0"] and a[0].rows["key"].str.match(r"^k\d+$").all()
    assert not a[0].rows["key"].equals(b[0].rows["key"])
    pd.testing.assert_frame_equal(a[2].rows, feed(1, 0.25, 50, 3.0, column="v0")[2].rows)  # a prefix of a longer run
    with pytest.raises(ValueError, match="column"):
        feed(1, 0.25, 5, 1.0, column="not a name")


def test_memory_and_sizes_modes_decide_alike() -> None:
    """Sizes mode decides on estimated sizes, memory mode on real rows: here the same plans;
    the output holds only rows of the full three-way join of the rows that arrived."""
    wf = join_cascade(3, rows=20, keys=10)
    sizes = run(wf, RunConfig(horizon=3.0, seed=2))
    memory = run(wf, RunConfig(horizon=3.0, seed=2, mode="memory"))
    assert sizes.summary["status"] == memory.summary["status"] == "ok"
    assert sizes.summary["plans"] == 12  # one call per in0 arrival
    columns = ["operator", "variant", "inputs", "outputs"]
    pd.testing.assert_frame_equal(sizes.frames["invocations"][columns], memory.frames["invocations"][columns])
    feed = GENERATORS["cascade-feed"]
    arrived = [pd.concat([a.rows for a in feed(2, 0.25 if i == 0 else 1.0, 20, 3.0, keys=10, column=f"v{i}")])
               for i in range(3)]
    full = arrived[0].merge(arrived[1], on="key").merge(arrived[2], on="key")
    output = memory.outputs["output"][["key", "v0", "v1", "v2"]]
    assert len(output) > 0
    assert len(output.merge(full.drop_duplicates(), how="left", indicator=True).query("_merge != 'both'")) == 0
    calls = sizes.frames["scheduler_calls"]
    assert calls["blocks"].min() >= 6  # the inputs' and joins' bases (5) and the in0 delta that calls


def test_a_feed_channel_must_declare_the_columns_its_parameters_name() -> None:
    from staleness_lab.workflows.builder import WorkflowBuilder

    b = WorkflowBuilder("bad", horizon="1d").input("a", schema={"key": "str", "other": "str"}, insert_only=True,
                                                  generator="cascade-feed", every="1h", rows=5, params={"column": "v0"})
    b.op("union", ["a", "a"], out="out").output("out")
    with pytest.raises(InputError, match=r"^channels\.a\.schema: .*'v0': 'str'"):
        b.build()
