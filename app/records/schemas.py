"""What a reproduction record is made of, as every submission path sends it.

Units are fixed by the field names: milliseconds (``_ms``), tokens per second
(``_tokens_per_s``), decimal GB per GPU (``_gb_per_gpu``), fractions 0..1.
"""

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from app.catalog.openapi import catalog_field
from app.i18n.catalogs import DEFAULT_LOCALE, current_locale
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, is_registered, json_params, register, render
from app.i18n.validation_words import refusal, refused
from app.security.json_input import free_form, hostile_value_at, not_a_bool
from app.security.json_input_schema import FREE_FORM_SCHEMA, FreeForm

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
    "ttft_ms",
    "decode_tokens_per_s",
    "itl_ms",
    "e2e_latency_ms",
    "throughput_tokens_per_s",
    "peak_memory_gb_per_gpu",
    "kv_cache_usage_peak",
    "needle_accuracy",
)

FINITE: dict[str, bool] = {"allow_inf_nan": False}
MAX_SAMPLES = 10_000  # per metric: the benchmark client's largest ramp sends far fewer


NO_VALUE = register(
    "record.no_measured_value", _l("give at least one measured value for this point")
)


FiniteFloat = Annotated[float, BeforeValidator(not_a_bool), Field(allow_inf_nan=False)]


# Text with no space at either end. Each whitespace character is spelled out: `\s` and `.`
# differ between the regex engines that read this pattern (the server's, Python's, and the
# ECMAScript a client's schema validator uses), and here they must all agree.
SPACE = r"\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
TRIMMED_TEXT = rf"^[^{SPACE}]([\s\S]*[^{SPACE}])?$"
# Text with something in it besides those spaces.
NOT_BLANK = rf"[^{SPACE}]"


def blank(text: str) -> bool:
    """Whether `text` holds only spaces, as NOT_BLANK reads them in every engine."""
    return re.search(NOT_BLANK, text) is None


class MeasurementIn(BaseModel):
    """One measured point: a context length at a concurrency, with what was seen there."""

    # At least one value measured: the schema states it as one branch per metric.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": [name], "properties": {name: {"not": {"type": "null"}}}}
                for name in METRICS
            ]
        },
    )

    context_length: int = Field(ge=1, le=10_000_000, description="prompt tokens at this point")
    concurrency: int = Field(default=1, ge=1, le=100_000, description="requests in flight")
    repetitions: int = Field(
        default=1, ge=1, le=1_000_000, description="requests the values summarise"
    )
    ttft_ms: float | None = Field(
        default=None, ge=0, le=86_400_000, **FINITE, description="time to first token, median, ms"
    )
    decode_tokens_per_s: float | None = Field(
        default=None,
        ge=0,
        le=1_000_000,
        **FINITE,
        description="decode speed of one request, tokens/s",
    )
    itl_ms: float | None = Field(
        default=None, ge=0, le=3_600_000, **FINITE, description="inter-token latency, median, ms"
    )
    e2e_latency_ms: float | None = Field(
        default=None,
        ge=0,
        le=86_400_000,
        **FINITE,
        description="end-to-end latency of one request, ms",
    )
    throughput_tokens_per_s: float | None = Field(
        default=None,
        ge=0,
        le=100_000_000,
        **FINITE,
        description="output tokens/s over all requests",
    )
    peak_memory_gb_per_gpu: float | None = Field(
        default=None, ge=0, le=100_000, **FINITE, description="peak memory used per GPU, GB"
    )
    kv_cache_usage_peak: float | None = Field(
        default=None, ge=0, le=1, **FINITE, description="peak KV-cache usage, fraction"
    )
    needle_accuracy: float | None = Field(
        default=None, ge=0, le=1, **FINITE, description="share of needles found, 0..1"
    )
    token_count_source: str | None = Field(default=None, max_length=20)
    memory_source: str | None = Field(default=None, max_length=30)
    samples: dict[str, Annotated[list[FiniteFloat], Field(max_length=MAX_SAMPLES)]] = Field(
        default_factory=dict,
        max_length=20,
        description="raw per-request values by metric name, e.g. {'ttft_ms': [...]}",
    )
    details: FreeForm = Field(default_factory=dict, description="percentiles and tool extras")

    _numbers = field_validator(
        "context_length", "concurrency", "repetitions", *METRICS, mode="before"
    )(not_a_bool)

    @model_validator(mode="after")
    def needs_a_value(self) -> "MeasurementIn":
        if all(getattr(self, name) is None for name in METRICS):
            raise refusal(NO_VALUE)
        return self


class EnvironmentIn(BaseModel):
    """Where it ran; free-form extras are kept as given."""

    model_config = ConfigDict(extra="allow", json_schema_extra=FREE_FORM_SCHEMA)

    driver: str | None = Field(default=None, max_length=200, description="GPU driver, e.g. 580.95")
    os: str | None = Field(default=None, max_length=200, description="operating system and kernel")
    runtime_build: str | None = Field(
        default=None, max_length=200, description="runtime build, commit or image digest"
    )

    @model_validator(mode="before")
    @classmethod
    def bounded_extras(cls, value: Any) -> Any:
        return free_form(value) if isinstance(value, dict) else value


class ServerReportedIn(BaseModel):
    """The runtime and version the model server reported to the benchmark client."""

    model_config = ConfigDict(extra="forbid")

    runtime: str = Field(min_length=1, max_length=50, description="runtime slug, e.g. vllm")
    version: str = Field(min_length=1, max_length=100)
    source: str = Field(default="", max_length=50, description="the path that answered")


class PinnedIn(BaseModel):
    """Exactly what ran: builds, revisions and digests, and what the record does not cover."""

    model_config = ConfigDict(extra="forbid")

    server_reported: ServerReportedIn | None = Field(
        default=None, description="kept only when the benchmark client read it from the server"
    )
    image_digest: str | None = Field(
        default=None, max_length=200, description="container image digest, e.g. sha256:..."
    )
    wheel_version: str | None = Field(
        default=None, max_length=200, description="the installed package, e.g. vllm==0.12.0"
    )
    model_revision: str | None = Field(
        default=None, max_length=200, description="the model repository's commit"
    )
    file_digests: dict[str, Annotated[str, Field(max_length=200)]] = Field(
        default_factory=dict, max_length=100, description="file name -> sha256"
    )
    driver: str | None = Field(default=None, max_length=200, description="GPU driver version")
    cuda: str | None = Field(default=None, max_length=100, description="CUDA version")
    rocm: str | None = Field(default=None, max_length=100, description="ROCm version")
    out_of_scope: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(
        default_factory=list, max_length=50, description="what this record does not cover"
    )

    def stored(self) -> dict[str, Any]:
        """What the record keeps: the fields given, nothing empty."""
        return {
            key: value
            for key, value in self.model_dump(mode="json", exclude_none=True).items()
            if value not in ({}, [], "")
        }


class RecordIn(BaseModel):
    """One reproduction attempt, as the form, the JSON API and the importers submit it."""

    model_config = ConfigDict(extra="forbid")

    # `x-catalog`: the served OpenAPI document lists the slugs the catalog holds here
    # (app.catalog.openapi).
    model: str = Field(
        min_length=1,
        max_length=100,
        description="model slug",
        json_schema_extra=catalog_field("model"),
    )
    artifact: str = Field(
        min_length=1,
        max_length=120,
        description="model file (artifact) slug",
        json_schema_extra=catalog_field("artifact"),
    )
    runtime: str = Field(
        min_length=1,
        max_length=50,
        description="runtime slug",
        json_schema_extra=catalog_field("runtime"),
    )
    runtime_version: str = Field(min_length=1, max_length=100, pattern=TRIMMED_TEXT)
    hardware: str = Field(
        min_length=1,
        max_length=100,
        description="hardware slug",
        json_schema_extra=catalog_field("hardware"),
    )
    gpu_count: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="GPUs used, at most the hardware's (409 otherwise); default: all of them",
        json_schema_extra=catalog_field("gpu_count"),
    )
    profile: str | None = Field(
        default=None,
        max_length=50,
        description="profile slug",
        json_schema_extra=catalog_field("profile"),
    )
    command: str = Field(default="", max_length=20_000, description="the command as run")
    applied_values: FreeForm = Field(default_factory=dict, max_length=100)
    environment: EnvironmentIn = Field(default_factory=EnvironmentIn)
    outcome: Outcome
    notes: str = Field(default="", max_length=20_000)
    measurements: list[MeasurementIn] = Field(default_factory=list, max_length=500)
    pinned: PinnedIn = Field(default_factory=PinnedIn)

    _numbers = field_validator("gpu_count", mode="before")(not_a_bool)

    @model_validator(mode="before")
    @classmethod
    def valid_input(cls, value: Any) -> Any:
        """The input gate every entry shares (app.security.json_input.hostile_value_at):
        the form, importers and Python callers skip the JSON parser's checks at the edge.
        The error names the field through its `field` param."""
        said = hostile_value_at(value, "") if isinstance(value, dict) else None
        if said is not None:
            raise refused(said)
        return value


class FieldError(BaseModel):
    """One problem with one field. `message` is English; `code` and `params`, when given,
    let a page word it in the reader's language."""

    field: str
    message: str
    code: str | None = None
    params: dict[str, Any] | None = None

    @classmethod
    def of(cls, field: str, said: Sentence) -> "FieldError":
        return cls(
            field=field, message=english(said), code=said.code, params=json_params(said.params)
        )

    def text(self) -> str:
        """The message in the reader's language (English as given when it has no code)."""
        if current_locale() == DEFAULT_LOCALE or not is_registered(self.code):
            return self.message
        return render(Sentence(str(self.code), self.params or {}))


class ErrorsOut(BaseModel):
    errors: list[FieldError]


class Flag(BaseModel):
    """Something a reviewer should look at: kept on the record, never silently dropped."""

    code: str
    field: str
    message: str  # English; `params` carries the figures a page words it from
    params: dict[str, Any] = Field(default_factory=dict)


class RecordCreated(BaseModel):
    id: int
    url: str
    review_state: ReviewState
    flags: list[Flag]


# Rejecting or retracting a record says why: its schema states that, so a body valid by the
# schema is one the review accepts.
REASON_REQUIRED = frozenset({"reject", "retract"})


class ReviewIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"properties": {"action": {"enum": sorted(REASON_REQUIRED)}}},
            "then": {
                "required": ["reason"],
                "properties": {"reason": {"pattern": NOT_BLANK}},
            },
        },
    )

    action: ReviewAction
    reason: str = Field(default="", max_length=5_000)
    confirm_flags: bool = Field(
        default=False,
        description="accept a flagged record anyway: "
        "the reviewer has checked every flag (needs a reason)",
    )
