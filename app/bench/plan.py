"""What a benchmark run is asked to measure, and where: the plan the CLI, a queued job and a
remote worker all hand the client, with the bounds every entry shares."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

from app.bench.quality.needle_grid import GRID_DEPTHS, GRID_FIRST_LENGTH
from app.bench.quality.task_spec import TaskSpec
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.i18n.validation_words import refusal
from app.security.json_input_schema import FreeForm

# The most requests the client keeps in flight at once. Each stream holds a socket, a
# parser and its samples; at 10,000 a run never finished (838 MB over 8 processes), while
# 1,024 stays bounded and is past any single server's batch.
MAX_CONCURRENCY = 1024
# Requests per stream a ramp level sends unless told: eight samples put the median
# between the lowest and the highest with 99% confidence (six would give 97%).
MIN_LEVEL_ROUNDS = 8
# A level run for a time (`level_seconds`): at most an hour and this many requests.
MAX_LEVEL_SECONDS = 3600
MAX_LEVEL_REQUESTS = 20_000
LENGTH_BELOW_OUTPUT = register(
    "bench.length_below_output",
    _l("every context length must exceed the output tokens per request (%(max_tokens)s)"),
)


DepthFraction = Annotated[float, Field(ge=0, le=1)]


class BenchPlan(BaseModel):
    """What to measure and where. ``api_key`` is sent as a Bearer token, never serialised."""

    base_url: str = Field(
        description="server root or its /v1 prefix, e.g. http://127.0.0.1:8000/v1"
    )
    model: str
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    # A plain default (pydantic copies it per plan), so the schema states it and the
    # relation with max_tokens (`x-below`) holds for a plan that leaves lengths out too.
    lengths: list[Annotated[int, Field(ge=1)]] = Field(
        default=[1024], min_length=1, description="context lengths, tokens"
    )
    repeat: int = Field(default=3, ge=1)
    # JSON Schema cannot compare fields: `x-below` says every length exceeds it.
    max_tokens: int = Field(
        default=128,
        ge=1,
        description="output tokens asked per request, below every length (409 otherwise)",
        json_schema_extra={"x-below": "lengths"},
    )
    concurrency_levels: list[Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]] = Field(
        default_factory=lambda: [1, 2, 4, 8], min_length=1
    )
    concurrency_length: int | None = Field(
        default=None, description="context length for the ramp; default the smallest length"
    )
    requests_per_stream: int | None = Field(
        default=None,
        ge=1,
        description="requests each stream sends per level; default repeat, and at least "
        f"{MIN_LEVEL_ROUNDS}: enough for a median and a 95% band of decode and first token "
        "even at one stream",
    )
    level_seconds: float | None = Field(
        default=None,
        ge=1,
        le=MAX_LEVEL_SECONDS,
        allow_inf_nan=False,
        description="run each concurrency level this long instead: each stream sends requests "
        f"until the time is up (one at least; at most {MAX_LEVEL_REQUESTS} at a level)",
    )
    ttft_limit_ms: float | None = Field(default=None, gt=0)
    needle: bool | Literal["auto"] = "auto"
    needle_min_length: int = Field(
        default=16 * 1024, description="'auto' runs the needle above this"
    )
    needle_depths: list[DepthFraction] = Field(
        default_factory=lambda: [0.1, 0.5, 0.9], min_length=1
    )
    request_timeout_s: float = Field(default=600.0, gt=0, description="whole-request deadline")
    connect_timeout_s: float = Field(default=10.0, gt=0)
    metrics_url: str | None = Field(default=None, description="a Prometheus /metrics URL to sample")
    probe_interval_s: float = Field(default=0.25, gt=0)
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="hosts allowed besides loopback (127.0.0.0/8, ::1, localhost)",
    )
    truncation_tolerance: float = Field(
        default=0.1,
        ge=0,
        lt=1,
        description="flag truncation when reported prompt tokens fall short by more",
    )
    seed: int = 0
    extra_body: FreeForm = Field(
        default_factory=dict, description="extra JSON fields for every request, e.g. ignore_eos"
    )
    add_long_length: bool = Field(
        default=False,
        description="add a length past needle_min_length when the context allows it",
    )
    context_length: int | None = Field(
        default=None, ge=1, description="the configuration's context; else the server's own"
    )
    needle_grid: bool | Literal["auto"] = Field(
        default=False,
        description="the needle at 5 depths of every length from 4,096 up to the context; "
        "'auto' when the context is known and past needle_min_length",
    )
    grid_depths: list[DepthFraction] = Field(
        default_factory=lambda: list(GRID_DEPTHS), min_length=1
    )
    grid_first_length: int = Field(
        default=GRID_FIRST_LENGTH, ge=256, description="the grid's shortest length; it doubles"
    )
    grid_threshold: float = Field(
        default=0.95, gt=0, le=1, description="a length is safe when every depth reaches this"
    )
    tool_calls: bool = Field(default=False, description="check OpenAI tool calls")
    tool_call_repeat: int = Field(default=5, ge=1, le=50)
    measure_speed: bool = Field(
        default=True,
        description="false runs the quality checks alone: no warm-up, lengths, ramp or needle",
    )
    task: TaskSpec | None = Field(default=None, description="prompts with checks, run after")
    task_min_pass_rate: float | None = Field(
        default=None, ge=0, le=1, description="below this pass rate the outcome is wrong_answer"
    )

    @field_validator("lengths", "concurrency_levels")
    @classmethod
    def _ascending(cls, values: list[int]) -> list[int]:
        return sorted(set(values))

    @model_validator(mode="after")
    def _lengths_leave_room_for_output(self) -> BenchPlan:
        if min(self.lengths) <= self.max_tokens:
            raise refusal(LENGTH_BELOW_OUTPUT, max_tokens=self.max_tokens)
        return self

    def needle_lengths(self) -> list[int]:
        if self.needle is True:
            return list(self.lengths)
        if self.needle == "auto":
            return [length for length in self.lengths if length > self.needle_min_length]
        return []

    def ramp_length(self) -> int:
        return self.concurrency_length or min(self.lengths)

    def level_rounds(self) -> int:
        """Requests each stream of a ramp level sends: as asked, else ``repeat`` (one
        figure's samples, as at every stage) but at least ``MIN_LEVEL_ROUNDS``."""
        return self.requests_per_stream or max(self.repeat, MIN_LEVEL_ROUNDS)
