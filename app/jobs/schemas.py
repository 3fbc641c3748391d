"""What a person asks the benchmark client to do, from the page or the API."""

import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StrictBool,
    WithJsonSchema,
    field_validator,
)

from app.bench.plan import MAX_CONCURRENCY
from app.bench.transport.url_schema import bench_url_field
from app.catalog.openapi import catalog_field
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.i18n.validation_words import refusal
from app.records.schemas import TRIMMED_TEXT
from app.security.json_input import not_a_bool
from app.web import MAX_ROW_ID

# A worker label names a machine or a pool ("gpu-a", "h100.lab"): nothing to escape.
LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
LABEL_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, e.g. gpu-a"
PLAIN_LABEL = register(
    "job.worker_label",
    _l(
        "a worker label is letters, digits, '.', '_' and '-', starting with a letter or digit, "
        "e.g. gpu-a (at most 100)"
    ),
)
AT_LEAST_ONE = register("job.at_least_one", _l("every value must be at least 1"))


def plain_label(value: str) -> str:
    if not re.fullmatch(LABEL_PATTERN, value):
        raise refusal(PLAIN_LABEL)
    return value


WorkerLabel = Annotated[
    str, AfterValidator(plain_label), WithJsonSchema({"type": "string", "pattern": LABEL_PATTERN})
]


def int_list(value: Any) -> Any:
    """Accept "1024, 8192" from a form as well as a JSON list."""
    if isinstance(value, str):
        parts = [p for p in value.replace(";", ",").replace(" ", ",").split(",") if p]
        return [int(p) if p.isdigit() else p for p in parts]
    if isinstance(value, list):
        return [not_a_bool(item) for item in value]
    return value


class JobIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The server to measure.
    base_url: str = Field(
        min_length=8,
        max_length=300,
        description="e.g. http://127.0.0.1:8000/v1",
        json_schema_extra=bench_url_field(),
    )
    served_model: str = Field(
        min_length=1, max_length=200, description="model name the server serves"
    )
    api_key: SecretStr | None = Field(default=None, description="sent to the server; never stored")
    metrics_url: str | None = Field(
        default=None, max_length=300, json_schema_extra=bench_url_field()
    )
    worker_label: WorkerLabel | None = Field(
        default=None,
        description="only a worker started with this --label runs the job (e.g. the GPU "
        "host's name); its URLs are then as that machine sees them",
    )
    # The plan.
    # Item bounds stated in the schema (the `positive` check below says the same in words).
    lengths: list[Annotated[int, Field(ge=1, le=10_000_000)]] = Field(
        default=[1024, 4096], min_length=1, max_length=12
    )
    concurrency: list[Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]] = Field(
        default=[1, 2, 4, 8],
        min_length=1,
        max_length=12,
        description=f"requests in flight per level, at most {MAX_CONCURRENCY:,}",
    )
    repeat: int = Field(default=3, ge=1, le=20)
    # JSON Schema cannot compare fields: `x-below` says every context length exceeds it.
    max_tokens: int = Field(
        default=128,
        ge=8,
        le=4096,
        description="output tokens per request, below every context length (409 otherwise)",
        json_schema_extra={"x-below": "lengths"},
    )
    needle: StrictBool = False
    needle_grid: StrictBool | None = Field(
        default=None,
        description="the needle at 5 depths of every length from 4,096 up to the context, "
        "for the safe context ceiling; left out: when the lengths are left at their default "
        "and the context is known; true: always; false: never",
    )
    context_length: int | None = Field(
        default=None,
        ge=1024,
        le=10_000_000,
        description="the configuration's context, where the grid stops; else the server's own",
    )
    tool_calls: StrictBool = Field(
        default=False,
        description="check that the server answers OpenAI tool calls whose arguments fit "
        "the tool's schema",
    )
    ttft_limit_ms: float | None = Field(default=None, gt=0, le=86_400_000, allow_inf_nan=False)
    request_timeout_s: float = Field(default=600, gt=0, le=7200, allow_inf_nan=False)
    task_id: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ROW_ID,
        description="a stored task to run and score (an id of GET /api/tasks); one not "
        "stored is answered 404, naming the field",
    )
    # What the record will be about (catalog slugs).
    model: str = Field(min_length=1, max_length=100, json_schema_extra=catalog_field("model"))
    artifact: str = Field(min_length=1, max_length=120, json_schema_extra=catalog_field("artifact"))
    runtime: str = Field(min_length=1, max_length=50, json_schema_extra=catalog_field("runtime"))
    # As a record's: no space at either end.
    runtime_version: str = Field(min_length=1, max_length=100, pattern=TRIMMED_TEXT)
    hardware: str = Field(min_length=1, max_length=100, json_schema_extra=catalog_field("hardware"))
    profile: str | None = Field(
        default=None, max_length=50, json_schema_extra=catalog_field("profile")
    )
    command: str = Field(default="", max_length=20_000)

    _lists = field_validator("lengths", "concurrency", mode="before")(int_list)
    _numbers = field_validator(
        "repeat",
        "max_tokens",
        "ttft_limit_ms",
        "request_timeout_s",
        "task_id",
        "context_length",
        mode="before",
    )(not_a_bool)

    @field_validator(
        "api_key",
        "metrics_url",
        "worker_label",
        "profile",
        "ttft_limit_ms",
        "task_id",
        "context_length",
        mode="before",
    )
    @classmethod
    def blank_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("lengths", "concurrency")
    @classmethod
    def positive(cls, values: list[int]) -> list[int]:
        if any(v < 1 for v in values):
            raise refusal(AT_LEAST_ONE)
        return sorted(set(values))

    def plan(self, allowed_hosts: list[str]) -> dict[str, Any]:
        """The benchmark plan as stored with the job (no API key)."""
        return {
            "base_url": self.base_url,
            "model": self.served_model,
            "lengths": self.lengths,
            "repeat": self.repeat,
            "max_tokens": self.max_tokens,
            "concurrency_levels": self.concurrency,
            "needle": True if self.needle else "auto",
            "ttft_limit_ms": self.ttft_limit_ms,
            "request_timeout_s": self.request_timeout_s,
            "metrics_url": self.metrics_url,
            "allowed_hosts": allowed_hosts,
            # Lengths left at their default gain one for the needle when the context allows.
            "add_long_length": "lengths" not in self.model_fields_set,
            # ... and the needle grid, up to the context (at most 64K) when it is known.
            "needle_grid": self._needle_grid(),
            "context_length": self.context_length,
            "tool_calls": self.tool_calls,
        }

    def _needle_grid(self) -> bool | str:
        if self.needle_grid is not None:
            return self.needle_grid
        return "auto" if "lengths" not in self.model_fields_set else False

    def target(self) -> dict[str, Any]:
        return self.model_dump(
            include={
                "model",
                "artifact",
                "runtime",
                "runtime_version",
                "hardware",
                "profile",
                "command",
            }
        )


class JobOut(BaseModel):
    """A benchmark job as the API shows it."""

    id: int
    kind: str = Field(description="benchmark, calibration or sentinel")
    status: str = Field(description="queued, running, done or failed")
    url: str
    progress: dict[str, Any]
    attempts: int
    worker_label: str | None = Field(description="the only worker label that may run it")
    error: str | None
    outcome: str | None
    outcome_error: str | None
    record_id: int | None
    record_url: str | None
    plan: dict[str, Any]
    target: dict[str, Any]


class JobListOut(BaseModel):
    """One page of jobs, newest first."""

    count: int = Field(description="jobs on this page")
    limit: int
    next: str | None = Field(description="the next, older page; null on the last page")
    jobs: list[JobOut]
