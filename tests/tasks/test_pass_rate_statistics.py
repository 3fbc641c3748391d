"""The statistics behind a task's results, against published and hand-computed values."""

import math

import pytest

from app.estimate.costs import cost_per_million_tokens, cost_per_solved_task
from app.records.comparison.statistics import fisher_exact, prompts_per_arm, wilson_interval


def test_fisher_exact_matches_published_values() -> None:
    # Fisher's tea-tasting experiment: 3 of 4 cups right either way, p = 17/35.
    assert fisher_exact(3, 4, 1, 4) == pytest.approx(17 / 35, rel=1e-12)
    # The dieting example in the usual textbook table (1 of 12 men, 9 of 12 women):
    # two-sided p = 0.002759 (R's fisher.test gives the same).
    assert fisher_exact(1, 12, 9, 12) == pytest.approx(0.0027594562, rel=1e-8)


def test_fisher_exact_by_hand_on_a_small_table() -> None:
    # 2/2 against 0/2: the margins allow x = 0, 1, 2 passes in arm A with weights
    # C(2,x) C(2,2-x) = 1, 4, 1 of C(4,2) = 6; the observed x = 2 and x = 0 are as likely.
    assert fisher_exact(2, 2, 0, 2) == pytest.approx(2 / 6, rel=1e-12)
    assert fisher_exact(1, 2, 1, 2) == 1.0


def test_fisher_exact_is_symmetric_and_refuses_impossible_counts() -> None:
    assert fisher_exact(14, 20, 9, 20) == fisher_exact(9, 20, 14, 20)
    assert fisher_exact(14, 20, 9, 20) == fisher_exact(6, 20, 11, 20)  # failures for passes
    for bad in ((5, 4, 1, 4), (-1, 4, 1, 4), (1, 0, 1, 4)):
        with pytest.raises(ValueError):
            fisher_exact(*bad)


def test_prompts_per_arm_matches_the_two_proportion_formula() -> None:
    # R: power.prop.test(p1 = .50, p2 = .75, power = .90) gives n = 76.65 per group.
    assert prompts_per_arm(0.5, 0.75, power=0.9) == 77
    # 70 % against 45 % at 80 % power, alpha 0.05, by hand:
    # (1.959964 sqrt(2 x .575 x .425) + 0.841621 sqrt(.21 + .2475))^2 / .25^2 = 60.19
    assert prompts_per_arm(0.7, 0.45) == 61
    assert prompts_per_arm(0.45, 0.7) == 61
    assert prompts_per_arm(0.6, 0.6) is None
    # A smaller difference needs more prompts.
    assert prompts_per_arm(0.7, 0.6) > prompts_per_arm(0.7, 0.45)


def test_wilson_interval_known_values_and_edges() -> None:
    # 14/20: the Wilson score interval at 95 % is 0.481 - 0.855.
    band = wilson_interval(14, 20)
    assert (round(band.low, 3), round(band.high, 3)) == (0.481, 0.855)
    none_passed, all_passed = wilson_interval(0, 20), wilson_interval(20, 20)
    assert none_passed.low == 0 and 0 < none_passed.high < 0.2
    assert all_passed.high == 1 and 0.8 < all_passed.low < 1
    assert wilson_interval(0, 0) is None and wilson_interval(3, 2) is None


def test_costs_follow_their_formulas() -> None:
    # price x GPUs / (throughput x 3600) x 1e6
    assert cost_per_million_tokens(2.0, 8, 1000.0) == round(2.0 * 8 / 3_600_000 * 1e6, 4)
    assert cost_per_million_tokens(2.0, 8, 0.0) is None
    # price x GPUs x hours / solved: 8 GPUs at 3 an hour for 30 minutes, 12 solved
    assert cost_per_solved_task(3.0, 8, 1800, 12) == 1.0
    assert cost_per_solved_task(3.0, 8, 1800, 0) is None
    assert math.isclose(cost_per_solved_task(1.0, 1, 3600, 1), 1.0)
