from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.bench import metrics


def test_percentile_interpolates_linearly_like_numpy() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert metrics.percentile(values, 0.5) == 25.0
    assert metrics.percentile(values, 0.9) == pytest.approx(37.0)
    assert metrics.percentile(values, 0.0) == 10.0
    assert metrics.percentile(values, 1.0) == 40.0
    assert metrics.percentile([], 0.5) is None


def test_median_of_three_repeats_is_the_middle_one() -> None:
    assert metrics.median([31.0, 95.0, 30.0]) == 31.0


def test_distribution_skips_missing_values() -> None:
    summary = metrics.distribution([1.0, None, 3.0])
    assert summary.count == 2
    assert summary.mean == 2.0
    assert summary.p50 == 2.0
    assert metrics.distribution([]).p90 is None


def test_decode_rate_excludes_the_first_token() -> None:
    # 11 tokens after the first, spread over 110 ms: 100 tokens/s.
    assert metrics.decode_tokens_per_second(12, 0, 110_000_000) == pytest.approx(100.0)
    assert metrics.decode_tokens_per_second(1, 0, 10) is None
    assert metrics.time_per_output_token_ms(12, 40.0, 150.0) == pytest.approx(10.0)


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=50), st.floats(0, 1))
def test_percentile_stays_within_the_data(values: list[float], fraction: float) -> None:
    result = metrics.percentile(values, fraction)
    assert result is not None
    assert min(values) - 1e-6 <= result <= max(values) + 1e-6
