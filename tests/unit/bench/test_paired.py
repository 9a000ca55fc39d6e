"""The A/B tool's paired comparison: per-round ratios, which way is better, the sign test."""

from __future__ import annotations

import math

import pytest

from tests.bench.paired import paired, sign_test


def rows(*values: float) -> list[dict[str, float] | None]:
    return [{"actions/s": v, "view p99": v} for v in values]


def test_each_round_is_compared_with_the_base_of_the_same_round() -> None:
    # the machine slows in round 2 for both: the variant is 10% ahead in each round
    result = paired(rows(1000, 500), rows(1100, 550), "actions/s", higher_is_better=True)
    assert result.ratios == pytest.approx((1.1, 1.1))
    assert (result.ahead, result.behind) == (2, 0)
    assert result.median == pytest.approx(1.1)


def test_lower_is_better_for_latencies() -> None:
    result = paired(rows(30, 30, 30), rows(27, 33, 24), "view p99", higher_is_better=False)
    assert (result.ahead, result.behind) == (2, 1)


def test_a_round_that_failed_for_either_variant_is_left_out() -> None:
    base = [{"actions/s": 1000.0}, None, {"actions/s": 900.0}]
    other = [{"actions/s": 1200.0}, {"actions/s": 1.0}, None]
    result = paired(base, other, "actions/s", higher_is_better=True)
    assert result.ratios == pytest.approx((1.2,))


def test_ties_count_for_neither_side() -> None:
    result = paired(rows(10, 10), rows(10, 11), "actions/s", higher_is_better=True)
    assert (result.ahead, result.behind) == (1, 0)


def test_sign_test_against_the_binomial_tails() -> None:
    assert sign_test(6, 0) == pytest.approx(2 / 64)  # 6 of 6: p = 0.03
    assert sign_test(8, 0) == pytest.approx(2 / 256)
    assert sign_test(7, 1) == pytest.approx(2 * 9 / 256)  # 7 of 8 is not quite 0.05
    assert sign_test(4, 4) == 1.0
    assert sign_test(0, 0) == 1.0
    assert sign_test(3, 5) == sign_test(5, 3)


def test_no_paired_round_has_no_median() -> None:
    result = paired([None], [None], "actions/s", higher_is_better=True)
    assert math.isnan(result.median)
    assert "no paired rounds" in result.line()
