"""Figures with their evidence: accepted measured beats reported beats estimated.

Every figure is rounded here, once, to the precision every surface shows, so the table,
the detail page, the JSON and the CLI print the same digits and a headroom always equals
usable minus required as written.
"""

from collections import defaultdict
from collections.abc import Sequence
from enum import StrEnum
from statistics import median
from typing import Any

import msgspec

from app.estimate import Estimate
from app.estimate.basis import Basis
from app.estimate.messages import Code, Message, Notes, message
from app.estimate.speed.load import LoadEstimate
from app.estimate.speed.model import decode_notes
from app.i18n.messages import english, messages_json
from app.models import ReportedFigure

GB_DIGITS = 1
SPEED_DIGITS = 1


class Evidence(StrEnum):
    """Where a shown figure comes from, strongest first."""

    MEASURED = "measured"  # accepted reproduction records
    REPORTED = "reported"  # published by someone else, unverified
    CALIBRATED = "calibrated"  # the estimator, on coefficients fitted on this hardware
    ESTIMATED = "estimated"  # the estimator


def gb(value: float) -> float:
    return round(value, GB_DIGITS)


class MeasuredPoint(msgspec.Struct, frozen=True):
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


class ContextMedian(msgspec.Struct, frozen=True):
    """Medians over accepted records at one context length, single request."""

    context_length: int
    decode_tokens_per_s: float | None
    ttft_ms: float | None
    peak_memory_gb_per_gpu: float | None
    records: int


class SpeedFigure(msgspec.Struct, frozen=True):
    """Token generation per request: one value, or a range over several."""

    low: float
    high: float
    basis: Evidence
    note: Notes
    source: str | None = None
    records: int = 0
    # A reported figure the roofline or a measurement contradicts: why (a Sentence of
    # app/resolve/contradicted.py); it stays shown, marked.
    contradicted: Any = None

    @property
    def single(self) -> bool:
        return self.low == self.high

    def as_json(self) -> dict:
        why = self.contradicted
        return {
            "low": self.low,
            "high": self.high,
            "basis": self.basis.value,
            "note": english(self.note),
            "note_messages": messages_json(self.note),
            "source": self.source,
            "records": self.records,
            "contradicted": None if why is None else {**why.as_json(), "text": str(why)},
        }


class MemoryFigure(msgspec.Struct, frozen=True):
    """Memory per GPU: what the recipe needs against what each GPU offers."""

    required_gb: float
    usable_gb: float
    basis: Evidence
    note: Notes
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
    if len(lengths) == 1:
        span = message(Code.TOKENS_AT, tokens=lengths[0])
    else:
        span = message(Code.TOKENS_SPAN, low=lengths[0], high=lengths[-1])
    if records == 1:
        note = (message(Code.MEASURED_SPEED_ONE, span=span),)
    else:
        note = (message(Code.MEASURED_SPEED, records=records, span=span),)
    return SpeedFigure(min(values), max(values), Evidence.MEASURED, note, records=records)  # type: ignore[type-var]


def measured_peak(medians: Sequence[ContextMedian]) -> ContextMedian | None:
    """The context length with the largest measured peak memory."""
    peaks = [m for m in medians if m.peak_memory_gb_per_gpu is not None]
    return max(peaks, key=lambda m: m.peak_memory_gb_per_gpu or 0.0, default=None)


class Check(msgspec.Struct, frozen=True):
    """A measured value against the estimate: measured / estimated."""

    measured: float
    estimated: float
    low: float | None = None
    high: float | None = None

    @property
    def ratio(self) -> float:
        return self.measured / self.estimated

    @property
    def verdict(self) -> str:
        if self.low is not None and self.high is not None:
            if self.measured < self.low:
                return "below the estimated range"
            return "above the estimated range" if self.measured > self.high else "within range"
        return "above the estimate" if self.ratio > 1 else "at or below the estimate"

    def as_json(self) -> dict:
        return {
            "measured": self.measured,
            "estimated": self.estimated,
            "low": self.low,
            "high": self.high,
            "ratio": round(self.ratio, 3),
            "verdict": self.verdict,
        }


def memory_figure(at_load: Estimate, medians: tuple[ContextMedian, ...]) -> MemoryFigure:
    usable = gb(at_load.memory.usable.value)
    estimated = gb(at_load.memory.required)
    peak = measured_peak(medians)
    if peak is not None and peak.peak_memory_gb_per_gpu is not None:
        span = message(Code.TOKENS_AT, tokens=peak.context_length)
        if peak.records == 1:
            note = (message(Code.MEASURED_PEAK_ONE, span=span),)
        else:
            note = (message(Code.MEASURED_PEAK, records=peak.records, span=span),)
        return MemoryFigure(peak.peak_memory_gb_per_gpu, usable, Evidence.MEASURED, note, estimated)
    note = (estimated_note(at_load.basis),)
    return MemoryFigure(estimated, usable, Evidence.ESTIMATED, note, estimated)


def speed_figure(
    reported: ReportedFigure | None,
    single: LoadEstimate | None,
    medians: tuple[ContextMedian, ...],
) -> SpeedFigure | None:
    """Measured beats reported beats estimated, for one request at the starting context (the
    estimate for the request shape asked, the stated default when blank); the estimate
    counts the profile's speculative decoding, as its command sets it."""
    measured = measured_speed(medians)
    if measured is not None:
        return measured
    figure = reported
    if figure is not None:
        note = (message(Code.REPORTED, note=figure.note),)
        return SpeedFigure(figure.low, figure.high, Evidence.REPORTED, note, figure.source)
    if single is None:
        return None
    low, high = round(single.decode.low, 1), round(single.decode.high, 1)
    return SpeedFigure(low, high, estimated_evidence(single), decode_notes(single))


def estimated_evidence(load: LoadEstimate) -> Evidence:
    """An estimated speed's evidence: calibrated where its coefficients were fitted on
    this hardware."""
    return Evidence.ESTIMATED if load.calibrated_error is None else Evidence.CALIBRATED


def estimated_note(basis: Basis) -> Message:
    """An estimated figure's note: the weakest basis it rests on."""
    return message(_ESTIMATED[basis])


_ESTIMATED = {
    Basis.EXACT: Code.ESTIMATED_EXACT,
    Basis.PUBLISHED: Code.ESTIMATED_PUBLISHED,
    Basis.DERIVED: Code.ESTIMATED_DERIVED,
    Basis.ASSUMED: Code.ESTIMATED_ASSUMED,
}


def decode_check(
    single: LoadEstimate | None, medians: tuple[ContextMedian, ...], context: int
) -> Check | None:
    """Measured decode at the measured context nearest the start, against the estimate."""
    timed = [m for m in medians if m.decode_tokens_per_s is not None]
    if single is None or single.decode.high <= 0 or not timed:
        return None
    nearest = min(timed, key=lambda m: abs(m.context_length - context))
    low, high = round(single.decode.low, 1), round(single.decode.high, 1)
    return Check(nearest.decode_tokens_per_s, round((low + high) / 2, 1), low, high)  # type: ignore[arg-type]


def memory_check(memory: MemoryFigure) -> Check | None:
    if memory.basis != Evidence.MEASURED or not memory.estimated_gb:
        return None
    return Check(memory.required_gb, memory.estimated_gb)
