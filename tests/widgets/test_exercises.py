"""check_answer: right answers accepted (numbers within 1 %, text in any case), wrong ones
rejected with the hint, and the right value computed only when an answer is checked."""

from __future__ import annotations

import staleness_lab as sl
from staleness_lab.widgets import check_answer
from tests.widgets.helpers import DEMO


def test_a_number_within_one_percent_is_right_and_another_is_wrong() -> None:
    compute = lambda: sl.load_workload(DEMO).tables[0].cost(10)  # noqa: E731 - 2 + 0.2 * 10
    right = check_answer(4.01, compute, "E(n) = alpha + beta n")
    assert right.right is True and bool(right) and right.message.startswith("Right: 4.")
    wrong = check_answer(5, compute, "E(n) = alpha + beta n")
    assert wrong.right is False and "Not quite: 5" in wrong.message and "alpha + beta n" in wrong.message
    assert "4" not in wrong.message.split("is not it")[1]  # a wrong answer is not told the value
    assert 'color:#b00020' in wrong._repr_html_()


def test_text_answers_ignore_case_and_nothing_is_computed_before_an_answer() -> None:
    calls = []

    def compute() -> str:
        calls.append(1)
        return "max-benefit"

    assert check_answer(None, compute, "compare the totals").right is None and calls == []
    assert check_answer(" Max-Benefit ", compute, "compare the totals").right is True
    assert check_answer("edf-p", compute, "compare the totals").right is False
    assert check_answer(3, compute, "compare the totals").right is False and len(calls) == 3
