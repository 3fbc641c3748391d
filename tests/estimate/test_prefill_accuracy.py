"""The published prefill rows of tests/accuracy/prefill.yaml (Apple silicon with llama.cpp
and MLX, llama.cpp with an MoE's experts in system memory) against the step model's
prefill: each checked row's point within POINT_TOLERANCE of the measured time, and the
measured time within BAND_TOLERANCE of the first-token band
(`python -m tests.accuracy.prefill_check` prints the errors)."""

import pytest

from tests.accuracy.prefill_check import BAND_TOLERANCE, POINT_TOLERANCE, case, rows


def _label(row: dict) -> str:
    return f"{row['model']}-{row['hardware']}-{row['runtime']}-{row['prompt_tokens']}"


def test_every_row_quotes_its_source():
    for row in rows(checked_only=False):
        assert row["source"].startswith("https://") and row["publisher"] and row["quote"]
        assert row["prefill_tokens_per_s"] > 0 and row["prompt_tokens"] > 0
    assert len(rows()) >= 8


@pytest.mark.parametrize("row", rows(), ids=_label)
def test_the_first_token_agrees_with_the_published_prefill(row):
    found = case(row)
    assert 1 / POINT_TOLERANCE <= found.point_s / found.measured_s <= POINT_TOLERANCE
    low, high = found.band_s
    assert low / BAND_TOLERANCE <= found.measured_s <= high * BAND_TOLERANCE
