"""What a reproduction record is made of, as every submission path sends it.

Units are fixed by the field names: milliseconds (``_ms``), tokens per second
(``_tokens_per_s``), decimal GB per GPU (``_gb_per_gpu``), fractions 0..1.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Outcome = Literal["ok", "load_failure", "long_context_failure", "wrong_answer"]
ReviewState = Literal["pending", "accepted", "rejected", "retracted"]
ReviewAction = Literal["accept", "reject", "retract"]

OUTCOMES: tuple[str, ...] = ("ok", "load_failure", "long_context_failure", "wrong_answer")
OUTCOME_LABELS = {
    "ok": "loaded and answered",
    "load_failure": "failed to load",
    "long_context_failure": "failed on long input",
    "wrong_answer": "answered, but missed the needle",
}
METRICS: tuple[str, ...] = (
    "ttft_ms", "decode_tokens_per_s", "itl_ms", "e2e_latency_ms", "throughput_tokens_per_s",
    "peak_memory_gb_per_gpu", "kv_cache_usage_peak", "needle_accuracy",
)

FINITE: dict[str, bool] = {"allow_inf_nan": False}


class MeasurementIn(BaseModel):
    """One measured point: a context length at a concurrency, with what was seen there."""

    model_config = ConfigDict(extra="forbid")

    context_length: int = Field(ge=1, le=10_000_000, description="prompt tokens at this point")
    concurrency: int = Field(default=1, ge=1, le=100_000, description="requests in flight")
    repetitions: int = Field(default=1, ge=1, le=1_000_000,
                             description="requests the values summarise")
    ttft_ms: float | None = Field(default=None, ge=0, le=86_400_000, **FINITE,
                                  description="time to first token, median, ms")
    decode_tokens_per_s: float | None = Field(default=None, ge=0, le=1_000_000, **FINITE,
                                              description="decode speed of one request, tokens/s")
    itl_ms: float | None = Field(default=None, ge=0, le=3_600_000, **FINITE,
                                 description="inter-token latency, median, ms")
    e2e_latency_ms: float | None = Field(default=None, ge=0, le=86_400_000, **FINITE,
                                         description="end-to-end latency of one request, ms")
    throughput_tokens_per_s: float | None = Field(default=None, ge=0, le=100_000_000, **FINITE,
                                                  description="output tokens/s over all requests")
    peak_memory_gb_per_gpu: float | None = Field(default=None, ge=0, le=100_000, **FINITE,
                                                 description="peak memory used per GPU, GB")
    kv_cache_usage_peak: float | None = Field(default=None, ge=0, le=1, **FINITE,
                                              description="peak KV-cache usage, fraction")
    needle_accuracy: float | None = Field(default=None, ge=0, le=1, **FINITE,
                                          description="share of needles found, 0..1")
    token_count_source: str | None = Field(default=None, max_length=20)
    memory_source: str | None = Field(default=None, max_length=30)
    samples: dict[str, list[float]] = Field(
        default_factory=dict, max_length=20,
        description="raw per-request values by metric name, e.g. {'ttft_ms': [...]}",
    )
    details: dict[str, Any] = Field(default_factory=dict, description="percentiles and tool extras")

    @model_validator(mode="after")
    def needs_a_value(self) -> "MeasurementIn":
        if all(getattr(self, name) is None for name in METRICS):
            raise ValueError("give at least one measured value for this point")
        return self


class EnvironmentIn(BaseModel):
    """Where it ran; free-form extras are kept as given."""

    model_config = ConfigDict(extra="allow")

    driver: str | None = Field(default=None, max_length=200, description="GPU driver, e.g. 580.95")
    os: str | None = Field(default=None, max_length=200, description="operating system and kernel")
    runtime_build: str | None = Field(default=None, max_length=200,
                                      description="runtime build, commit or image digest")


class RecordIn(BaseModel):
    """One reproduction attempt, as the form, the JSON API and the importers submit it."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, max_length=100, description="model slug")
    artifact: str = Field(min_length=1, max_length=120, description="model file (artifact) slug")
    runtime: str = Field(min_length=1, max_length=50, description="runtime slug")
    runtime_version: str = Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")
    hardware: str = Field(min_length=1, max_length=100, description="hardware slug")
    gpu_count: int | None = Field(default=None, ge=1, le=1024,
                                  description="GPUs used; default: all of the hardware's")
    profile: str | None = Field(default=None, max_length=50, description="profile slug")
    command: str = Field(default="", max_length=20_000, description="the command as run")
    applied_values: dict[str, Any] = Field(default_factory=dict, max_length=100)
    environment: EnvironmentIn = Field(default_factory=EnvironmentIn)
    outcome: Outcome
    notes: str = Field(default="", max_length=20_000)
    measurements: list[MeasurementIn] = Field(default_factory=list, max_length=500)


class FieldError(BaseModel):
    field: str
    message: str


class ErrorsOut(BaseModel):
    errors: list[FieldError]


class Flag(BaseModel):
    """Something a reviewer should look at: kept on the record, never silently dropped."""

    code: str
    field: str
    message: str


class RecordCreated(BaseModel):
    id: int
    url: str
    review_state: ReviewState
    flags: list[Flag]


class ReviewIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: ReviewAction
    reason: str = Field(default="", max_length=5_000)
    confirm_flags: bool = Field(default=False, description="accept a flagged record anyway: "
                                "the reviewer has checked every flag (needs a reason)")
