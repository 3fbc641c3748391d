"""Chart data for a record page: every point is a measurement of this record."""

from collections.abc import Sequence
from typing import Any

from app.models import Measurement


def by_context(points: Sequence[Measurement]) -> dict[str, list[Any]]:
    """TTFT and decode speed against context length, single requests only."""
    single = sorted(
        (
            p
            for p in points
            if p.concurrency == 1
            and not p.details.get("ramp")
            and (p.ttft_ms is not None or p.decode_tokens_per_s is not None)
        ),
        key=lambda p: p.context_length,
    )
    return {
        "context": [p.context_length for p in single],
        "ttft_ms": [p.ttft_ms for p in single],
        "decode_tokens_per_s": [p.decode_tokens_per_s for p in single],
    }


def latency_of(point: Measurement) -> float | None:
    return point.e2e_latency_ms if point.e2e_latency_ms is not None else point.ttft_ms


def ramp(points: Sequence[Measurement]) -> list[dict[str, Any]]:
    """Total throughput against per-request latency, one point per concurrency level."""
    levels = sorted(
        (p for p in points if p.throughput_tokens_per_s is not None and latency_of(p) is not None),
        key=lambda p: p.concurrency,
    )
    return [
        {
            "concurrency": p.concurrency,
            "latency_ms": latency_of(p),
            "ttft_ms": p.ttft_ms,
            "throughput_tokens_per_s": p.throughput_tokens_per_s,
        }
        for p in levels
    ]


def record_charts(points: Sequence[Measurement]) -> dict[str, Any] | None:
    """Both charts' series, or None when there is nothing to draw."""
    lengths = by_context(points)
    levels = ramp(points)
    if len(lengths["context"]) < 1 and not levels:
        return None
    return {"by_context": lengths, "ramp": levels}
