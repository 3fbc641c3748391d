"""What the records API answers: a record as exported, a page of records, an acceptance
and its consequences, a conflict. What a record is made of on the way in is in
`app.records.schemas`."""

from typing import Any

from pydantic import BaseModel, Field

from app.records.schemas import Flag, Outcome, ReviewState


class MeasurementOut(BaseModel):
    context_length: int
    concurrency: int
    repetitions: int
    ttft_ms: float | None
    decode_tokens_per_s: float | None
    itl_ms: float | None
    e2e_latency_ms: float | None
    throughput_tokens_per_s: float | None
    peak_memory_gb_per_gpu: float | None
    kv_cache_usage_peak: float | None
    needle_accuracy: float | None
    token_count_source: str | None
    memory_source: str | None
    details: dict[str, Any] = Field(description="percentiles, tool extras and raw samples")


class EventOut(BaseModel):
    action: str
    reason: str | None
    actor: str
    at: str = Field(description="ISO 8601, UTC")


class RecordOut(BaseModel):
    """One record as exported; the CSV columns are the scalar fields here."""

    record_id: int
    review_state: ReviewState
    outcome: Outcome
    model: str
    artifact: str
    artifact_format: str
    runtime: str
    runtime_version: str
    hardware: str
    gpu_count: int
    profile: str | None
    provenance: str
    submitted_by: str
    submitted_at: str = Field(description="ISO 8601, UTC")
    flags: list[str] = Field(description="flag codes")
    command: str
    url: str
    applied_values: dict[str, Any]
    environment: dict[str, Any]
    notes: str
    provenance_detail: dict[str, Any]
    pinned: dict[str, Any] = Field(default_factory=dict, description="builds, revisions, digests")
    sentinel_verdict: str | None = Field(
        default=None, description="no_regression, improved or regressed, for a sentinel run"
    )
    flag_details: list[Flag]
    measurements: list[MeasurementOut]
    events: list[EventOut]


class RecordListOut(BaseModel):
    count: int = Field(description="records on this page")
    limit: int
    next: str | None = Field(description="the next, older page; null on the last page")
    records: list[RecordOut]


class RecordExportOut(BaseModel):
    """A page of matching records (at most 10,000), streamed; the count and the next
    page's address come after the records."""

    records: list[RecordOut]
    count: int = Field(description="the records in this response")
    next: str | None = Field(description="the next page's address; null on the last page")


class ChangeOut(BaseModel):
    hardware: str
    hardware_name: str
    profile: str
    what: str
    before: str
    after: str
    url: str


class AcceptanceOut(BaseModel):
    record: int
    review_state: ReviewState
    flags: list[Flag]
    needs_confirmation: bool
    quality_drop: dict[str, Any] | None = Field(
        default=None, description="a significant paired loss against the known-good record"
    )
    changes: list[ChangeOut]


class ConflictOut(BaseModel):
    detail: str
    record_id: int
