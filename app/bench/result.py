"""Pydantic models of a benchmark plan and its result; all of them JSON-serialisable.

Units are in the field names (``_ms``, ``_tps``, ``_bytes``). Times of one request are
offsets from the moment the request was handed to the socket, measured with
``time.perf_counter_ns``; ``send_offset_ms`` places a request on the run's own timeline
(``BenchResult.started_at`` anchors that timeline to wall-clock time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

from app.bench.memory_reading import MemoryReading
from app.bench.metrics import Distribution
from app.bench.quality.needle_grid import GRID_DEPTHS, GRID_FIRST_LENGTH
from app.bench.quality.results import NeedleGrid, TaskRunResult, ToolCallCheck
from app.bench.quality.task_spec import TaskSpec
from app.security.json_input_schema import FreeForm

TokenCountSource = Literal["usage", "chunks"]
Outcome = Literal["ok", "load_failure", "long_context_failure", "wrong_answer", "inconclusive"]
# How an answer whose decode cannot be timed arrived (app/bench/stream/arrival.py):
# "short": too few tokens to time; "one_piece": the whole answer in one arrival;
# "last_piece": most of it in the last arrival; "merged": chunks sent apart arrived
# together, a few at a time; "packed": each chunk carried several tokens.
BurstShape = Literal["short", "one_piece", "last_piece", "merged", "packed"]
StepStatus = Literal["ok", "failed", "skipped"]
ErrorKind = Literal[
    "connect",  # no connection opened (refused, host not resolved, connect timeout)
    "timeout",  # the request's overall deadline passed, or a read or write timed out
    "http",  # non-2xx status; message from the JSON body when there is one
    "stream_error",  # an error object inside a 200 stream
    "connection_cut",  # the connection closed mid-stream
    "protocol",  # malformed HTTP or SSE payload
    "no_output",  # the stream ended cleanly without a single token
]

SCHEMA_VERSION = 1


# The most requests the client keeps in flight at once. Each stream holds a socket, a
# parser and its samples; at 10,000 a run never finished (838 MB over 8 processes), while
# 1,024 stays bounded and is past any single server's batch.
MAX_CONCURRENCY = 1024
# A concurrency level whose failed requests pass this share ends the run as load_failure
# (at 1,000 streams a run once said ok with 600 of 2,000 requests failed).
MAX_ERROR_SHARE = 0.10
# Requests per stream a ramp level sends unless told: eight samples put the median
# between the lowest and the highest with 99% confidence (six would give 97%).
MIN_LEVEL_ROUNDS = 8
# A level run for a time (`level_seconds`): at most an hour and this many requests.
MAX_LEVEL_SECONDS = 3600
MAX_LEVEL_REQUESTS = 20_000


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
        description="output tokens asked per request, below every length",
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
            raise ValueError(
                "every length must exceed max_tokens (the prompt gets length - max_tokens)"
            )
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


class RequestError(BaseModel):
    kind: ErrorKind
    message: str
    http_status: int | None = None


class ToolCallSeen(BaseModel):
    """One function call a stream built: its name and argument text, as received."""

    name: str
    arguments: str = Field(description="the first 4,000 characters")


class RequestSample(BaseModel):
    """One streamed request, with the raw timings that every statistic is computed from."""

    ok: bool
    error: RequestError | None = None
    send_offset_ms: float = Field(
        default=0.0, description="when the request was written, on the run's clock"
    )
    client_wait_ms: float | None = Field(
        default=None, description="waiting for a connection before sending; not part of TTFT"
    )
    prompt_tokens_target: int | None = None
    prompt_tokens: int | None = Field(default=None, description="as reported by the server")
    output_tokens: int | None = None
    token_count_source: TokenCountSource | None = None
    finish_reason: str | None = None
    headers_ms: float | None = None
    first_chunk_ms: float | None = Field(default=None, description="first SSE event of any kind")
    ttft_ms: float | None = Field(
        default=None, description="first content, reasoning or tool-call delta"
    )
    first_content_ms: float | None = Field(default=None, description="first non-reasoning content")
    e2e_ms: float | None = Field(default=None, description="send to last token-bearing chunk")
    end_ms: float | None = Field(default=None, description="send to end of stream")
    decode_tps: float | None = Field(
        default=None, description="null when the decode could not be measured"
    )
    tpot_ms: float | None = None
    decode_measurable: bool | None = Field(
        default=None,
        description="false when the tokens did not arrive apart (bursts): no decode speed; "
        "null for a failed request",
    )
    burst: BurstShape | None = Field(
        default=None, description="how the answer arrived, when its decode is not measurable"
    )
    token_chunks: int = 0
    arrivals: int = Field(default=0, description="token chunks that arrived at distinct times")
    tokens_per_chunk: float | None = Field(
        default=None, description="output tokens (from the usage) per token chunk"
    )
    longest_gap_ms: float | None = Field(
        default=None, description="the longest wait between two token chunks"
    )
    last_chunk_share: float | None = Field(
        default=None, description="share of the answer's text in its last arrival, 0..1"
    )
    chunk_offsets_ms: list[float] = Field(
        default_factory=list, description="send to each token-bearing chunk, the first 2,049"
    )
    itl_ms: list[float] = Field(
        default_factory=list, description="gaps between token-bearing chunks, the first 2,048"
    )
    sse_comments: int = 0
    usage_ignored: str | None = Field(
        default=None, description="why the server's usage figures were not used"
    )
    answer: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallSeen] = Field(default_factory=list)

    @property
    def streamed(self) -> bool:
        return self.token_chunks > 1


class StepRecord(BaseModel):
    name: str
    status: StepStatus
    duration_s: float = 0.0
    error: str | None = None


class SmokeResult(BaseModel):
    ok: bool
    streamed: bool = False
    sample: RequestSample
    note: str | None = None


class LengthResult(BaseModel):
    length: int
    status: StepStatus
    error: str | None = None
    prompt_tokens_target: int
    prompt_tokens_reported: int | None = None
    truncated: bool | None = Field(
        default=None, description="None when the server reports no count"
    )
    ttft_ms: float | None = Field(default=None, description="median of the repeats")
    decode_tps: float | None = None
    tpot_ms: float | None = None
    decode_measurable: bool | None = Field(
        default=None, description="false when no answer at this length could be timed"
    )
    e2e_ms: float | None = None
    output_tokens: float | None = None
    samples: list[RequestSample] = Field(default_factory=list)
    memory: MemoryReading | None = None


class HeldConcurrency(BaseModel):
    """Requests in flight while a level ran: the time-weighted mean over the level's
    steady span (every stream started, none finished), and the fewest held over all but
    the briefest 5% of that span (a stream's hand-over between two requests)."""

    mean: float
    min: int


# A level that held less than this share of the streams it asked for is marked.
HELD_SHARE = 0.9


class ConcurrencyLevel(BaseModel):
    concurrency: int
    requests: int
    errors: int
    duration_s: float
    held_concurrency: HeldConcurrency | None = None
    held_short: bool = Field(
        default=False, description="held under 90% of the concurrency asked; figures marked"
    )
    decode_measurable: bool | None = Field(
        default=None, description="false when no answer at this level could be timed"
    )
    stream_output_tps: list[float] = Field(
        default_factory=list,
        description="each stream's output tokens over its own span, times the streams: "
        "the level's throughput as each stream saw it (its spread is the level's band)",
    )
    output_tps: float | None = Field(default=None, description="all output tokens / level duration")
    request_rate: float | None = None
    ttft_ms: Distribution
    tpot_ms: Distribution
    e2e_ms: Distribution
    decode_tps: Distribution
    over_ttft_limit: bool = False
    first_error: str | None = None
    samples: list[RequestSample] = Field(default_factory=list)
    memory: MemoryReading | None = None


class ConcurrencyRamp(BaseModel):
    length: int
    prompt_tokens_target: int
    levels: list[ConcurrencyLevel] = Field(default_factory=list)
    stopped_reason: str | None = None


class NeedleCell(BaseModel):
    length: int
    depth: float
    passkey: str
    found: bool
    truncated: bool | None = None
    sample: RequestSample


class NeedleLength(BaseModel):
    length: int
    accuracy: float | None
    cells: list[NeedleCell] = Field(default_factory=list)
    memory: MemoryReading | None = None


class ServerVersion(BaseModel):
    """The runtime and version the server reported about itself (app/bench/server_version.py)."""

    runtime: str = Field(description="runtime slug, e.g. vllm, sglang, llama-cpp, ollama")
    version: str
    source: str = Field(description="the path that answered, e.g. /version")


class BenchResult(BaseModel):
    schema_version: int = SCHEMA_VERSION
    plan: BenchPlan
    started_at: datetime
    finished_at: datetime
    duration_s: float
    outcome: Outcome
    outcome_error: str | None = Field(default=None, description="the server's own error text")
    token_count_source: TokenCountSource | Literal["mixed"] | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    smoke: SmokeResult | None = None
    warmup: RequestSample | None = None
    lengths: list[LengthResult] = Field(default_factory=list)
    concurrency: ConcurrencyRamp | None = None
    needle: list[NeedleLength] = Field(default_factory=list)
    task: TaskRunResult | None = None
    needle_grid: NeedleGrid | None = None
    tool_calls: ToolCallCheck | None = None
    notes: list[str] = Field(default_factory=list)
    server_version: ServerVersion | None = Field(
        default=None, description="as the server reported it; None when it said nothing"
    )
