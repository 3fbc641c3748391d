"""Figures with their evidence: accepted measured beats reported beats estimated.

Every figure is rounded here, once, to the precision every surface shows, so the table,
the detail page, the JSON and the CLI print the same digits and a headroom always equals
usable minus required as written.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import median

GB_DIGITS = 1
SPEED_DIGITS = 1


class Evidence(StrEnum):
    """Where a shown figure comes from, strongest first."""

    MEASURED = "measured"  # accepted reproduction records
    REPORTED = "reported"  # published by someone else, unverified
    ESTIMATED = "estimated"  # the estimator


def gb(value: float) -> float:
    return round(value, GB_DIGITS)


@dataclass(frozen=True)
class MeasuredPoint:
    """One accepted single-request measurement of a working record."""

    record_id: int
    hardware_id: int
    profile_id: int | None
    artifact_id: int
    runtime_id: int
    context_length: int
    decode_tokens_per_s: float | None
    ttft_ms: float | None
    peak_memory_gb_per_gpu: float | None


@dataclass(frozen=True)
class ContextMedian:
    """Medians over accepted records at one context length, single request."""

    context_length: int
    decode_tokens_per_s: float | None
    ttft_ms: float | None
    peak_memory_gb_per_gpu: float | None
    records: int


@dataclass(frozen=True)
class SpeedFigure:
    """Token generation per request: one value, or a range over several."""

    low: float
    high: float
    basis: Evidence
    note: str
    source: str | None = None
    records: int = 0

    @property
    def single(self) -> bool:
        return self.low == self.high

    def as_json(self) -> dict:
        return {
            "low": self.low,
            "high": self.high,
            "basis": self.basis.value,
            "note": self.note,
            "source": self.source,
            "records": self.records,
        }


@dataclass(frozen=True)
class MemoryFigure:
    """Memory per GPU: what the recipe needs against what each GPU offers."""

    required_gb: float
    usable_gb: float
    basis: Evidence
    note: str
    estimated_gb: float | None  # the estimator's figure, also when a measurement replaces it

    @property
    def headroom_gb(self) -> float:
        return gb(self.usable_gb - self.required_gb)

    @property
    def fits(self) -> bool:
        return self.required_gb <= self.usable_gb


def medians_by_context(points: Sequence[MeasuredPoint]) -> list[ContextMedian]:
    """Per context length: median decode and TTFT, the largest peak memory seen."""
    by_length: dict[int, list[MeasuredPoint]] = defaultdict(list)
    for point in points:
        by_length[point.context_length].append(point)
    return [
        ContextMedian(
            context_length=length,
            decode_tokens_per_s=median_of([p.decode_tokens_per_s for p in group], SPEED_DIGITS),
            ttft_ms=median_of([p.ttft_ms for p in group], 0),
            peak_memory_gb_per_gpu=max(
                (gb(p.peak_memory_gb_per_gpu) for p in group if p.peak_memory_gb_per_gpu),
                default=None,
            ),
            records=len({p.record_id for p in group}),
        )
        for length, group in sorted(by_length.items())
    ]


def median_of(values: list[float | None], digits: int) -> float | None:
    present = [v for v in values if v is not None]
    return round(median(present), digits) if present else None


def measured_speed(medians: Sequence[ContextMedian]) -> SpeedFigure | None:
    """The range spans the per-length medians; one length measured is one value."""
    timed = [m for m in medians if m.decode_tokens_per_s is not None]
    if not timed:
        return None
    values = [m.decode_tokens_per_s for m in timed]
    records = max(m.records for m in timed)
    lengths = [m.context_length for m in timed]
    span = f"{lengths[0]:,}" if len(lengths) == 1 else f"{lengths[0]:,}–{lengths[-1]:,}"
    plural = "s" if records != 1 else ""
    note = f"median of {records} accepted record{plural} at {span} tokens, one request"
    return SpeedFigure(min(values), max(values), Evidence.MEASURED, note, records=records)  # type: ignore[type-var]


def measured_peak(medians: Sequence[ContextMedian]) -> ContextMedian | None:
    """The context length with the largest measured peak memory."""
    peaks = [m for m in medians if m.peak_memory_gb_per_gpu is not None]
    return max(peaks, key=lambda m: m.peak_memory_gb_per_gpu or 0.0, default=None)
