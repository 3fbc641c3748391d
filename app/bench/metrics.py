"""Statistics computed once, from raw per-request samples.

Percentiles use linear interpolation between closest ranks (numpy's default ``linear``
method, also what vLLM's ``bench serve`` reports), so results stay comparable with the
most common tool. Nothing here averages averages: callers pass the raw values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel


class Distribution(BaseModel):
    """Summary of one metric over a set of requests; ``None`` fields mean no data."""

    count: int = 0
    mean: float | None = None
    min: float | None = None
    max: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Linear-interpolation percentile; ``fraction`` in [0, 1]."""
    if not values:
        return None
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be within [0, 1], got {fraction}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    lower = math.floor(position)
    upper = math.ceil(position)
    if lower == upper:
        return float(ordered[lower])
    weight = position - lower
    return float(ordered[lower] + (ordered[upper] - ordered[lower]) * weight)


def median(values: Sequence[float]) -> float | None:
    return percentile(values, 0.5)


def present(values: Iterable[float | None]) -> list[float]:
    return [value for value in values if value is not None]


def distribution(values: Iterable[float | None]) -> Distribution:
    data = present(values)
    if not data:
        return Distribution()
    return Distribution(
        count=len(data),
        mean=sum(data) / len(data),
        min=min(data),
        max=max(data),
        p50=percentile(data, 0.5),
        p90=percentile(data, 0.9),
        p99=percentile(data, 0.99),
    )


def decode_tokens_per_second(
    output_tokens: int, first_token_ns: int, last_token_ns: int
) -> float | None:
    """Tokens after the first one divided by the time between first and last token."""
    if output_tokens < 2 or last_token_ns <= first_token_ns:
        return None
    return (output_tokens - 1) / ((last_token_ns - first_token_ns) / 1e9)


def time_per_output_token_ms(output_tokens: int, ttft_ms: float, e2e_ms: float) -> float | None:
    if output_tokens < 2 or e2e_ms <= ttft_ms:
        return None
    return (e2e_ms - ttft_ms) / (output_tokens - 1)


def throughput_per_second(count: float, duration_s: float) -> float | None:
    if duration_s <= 0:
        return None
    return count / duration_s
