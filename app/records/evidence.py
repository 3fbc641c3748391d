"""What accepted records say about one model on one hardware configuration.

The detail page shows these beside the estimate: measured points per context length, the
last known-good configuration, and how far the estimator was off.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from fastapi import Request
from sqlalchemy.orm import Session

from app.estimate import Estimate
from app.models import Artifact, Hardware, LlmModel, Measurement, Profile, Record, Runtime
from app.records.repository import RecordRepository


@dataclass(frozen=True)
class ContextPoint:
    """Medians over accepted records at one context length, single request."""

    context_length: int
    decode_tokens_per_s: float | None
    ttft_ms: float | None
    peak_memory_gb_per_gpu: float | None
    records: int


@dataclass(frozen=True)
class Ratio:
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
        return {"measured": round(self.measured, 2), "estimated": round(self.estimated, 2),
                "low": self.low, "high": self.high, "ratio": round(self.ratio, 3),
                "verdict": self.verdict}


@dataclass
class DetailEvidence:
    records: list[Record]
    last_known_good: Record | None
    last_known_good_same_profile: bool
    points: list[ContextPoint]
    decode_check: Ratio | None
    memory_check: Ratio | None
    compared_records: int
    context: int | None = None

    @property
    def accepted(self) -> list[Record]:
        return [r for r in self.records if r.review_state == "accepted"]


def accepted_ok(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.review_state == "accepted" and r.outcome == "ok"]


def single_stream(records: Sequence[Record]) -> list[tuple[Record, Measurement]]:
    return [(r, m) for r in records for m in r.measurements if m.concurrency == 1]


def med(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(median(present), 2) if present else None


def context_points(records: Sequence[Record]) -> list[ContextPoint]:
    by_length: dict[int, list[tuple[Record, Measurement]]] = defaultdict(list)
    for record, point in single_stream(records):
        by_length[point.context_length].append((record, point))
    return [
        ContextPoint(
            context_length=length,
            decode_tokens_per_s=med([m.decode_tokens_per_s for _, m in pairs]),
            ttft_ms=med([m.ttft_ms for _, m in pairs]),
            peak_memory_gb_per_gpu=max((m.peak_memory_gb_per_gpu for _, m in pairs
                                        if m.peak_memory_gb_per_gpu is not None), default=None),
            records=len({r.id for r, _ in pairs}),
        )
        for length, pairs in sorted(by_length.items())
    ]


def last_known_good(records: Sequence[Record], profile: Profile) -> tuple[Record | None, bool]:
    """The newest accepted working record, preferring this profile's."""
    good = accepted_ok(records)
    same = [r for r in good if r.profile_id == profile.id]
    if same:
        return same[0], True
    return (good[0], False) if good else (None, False)


def nearest_context(points: list[tuple[Record, Measurement]],
                    context: int | None) -> list[tuple[Record, Measurement]]:
    """The points measured closest to the context the estimate was made for."""
    timed = [(r, m) for r, m in points if m.decode_tokens_per_s is not None]
    if context is None or not timed:
        return timed
    best = min(abs(m.context_length - context) for _, m in timed)
    return [(r, m) for r, m in timed if abs(m.context_length - context) == best]


def estimate_checks(records: Sequence[Record], artifact: Artifact, runtime: Runtime,
                    estimate: Estimate | None,
                    context: int | None) -> tuple[Ratio | None, Ratio | None, int]:
    """Measured decode and peak memory of the same route against the estimate."""
    same_route = [r for r in accepted_ok(records)
                  if r.artifact_id == artifact.id and r.runtime_id == runtime.id]
    if estimate is None or not same_route:
        return None, None, 0
    points = nearest_context(single_stream(same_route), context)
    decode = med([m.decode_tokens_per_s for _, m in points])
    speed = estimate.decode_tokens_per_s
    decode_check = None
    if decode is not None and speed is not None and speed.high > 0:
        decode_check = Ratio(decode, (speed.low + speed.high) / 2, speed.low, speed.high)
    peaks = [m.peak_memory_gb_per_gpu for r in same_route for m in r.measurements
             if m.peak_memory_gb_per_gpu is not None]
    required = estimate.memory.required
    memory_check = Ratio(max(peaks), required) if peaks and required > 0 else None
    return decode_check, memory_check, len(same_route)


def load_detail_evidence(
    session: Session,
    model: LlmModel,
    hardware: Hardware,
    profile: Profile,
    route: tuple[Artifact, Runtime] | None,
    estimate: Estimate | None,
    context: int | None = None,
) -> DetailEvidence:
    records = list(RecordRepository(session).for_model_hardware(model.id, hardware.id))
    good, same_profile = last_known_good(records, profile)
    checks: tuple[Ratio | None, Ratio | None, int] = (None, None, 0)
    if route is not None:
        checks = estimate_checks(records, route[0], route[1], estimate, context)
    return DetailEvidence(
        records=records,
        last_known_good=good,
        last_known_good_same_profile=same_profile,
        points=context_points(accepted_ok(records)),
        decode_check=checks[0],
        memory_check=checks[1],
        compared_records=checks[2],
        context=context,
    )


def record_summary(request: Request, record: Record) -> dict:
    return {
        "id": record.id,
        "url": str(request.url_for("records:detail", record_id=record.id)),
        "review_state": record.review_state,
        "outcome": record.outcome,
        "artifact": record.artifact.slug,
        "runtime": record.runtime.slug,
        "runtime_version": record.runtime_version,
        "profile": record.profile.slug if record.profile else None,
        "flags": [flag["code"] for flag in record.flags],
    }


def evidence_out(request: Request, evidence: DetailEvidence | None) -> dict | None:
    """The JSON twin of the detail page's records section."""
    if evidence is None:
        return None
    good = evidence.last_known_good
    return {
        "records": [record_summary(request, r) for r in evidence.records],
        "last_known_good": None if good is None else {
            **record_summary(request, good),
            "command": good.command,
            "applied_values": good.applied_values,
            "same_profile": evidence.last_known_good_same_profile,
        },
        "measured": [point.__dict__ for point in evidence.points],
        "estimate_vs_measured": {
            "records": evidence.compared_records,
            "context": evidence.context,
            "decode": evidence.decode_check.as_json() if evidence.decode_check else None,
            "memory": evidence.memory_check.as_json() if evidence.memory_check else None,
        },
    }
