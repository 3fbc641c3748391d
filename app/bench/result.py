"""Pydantic models of a benchmark plan and its result; all of them JSON-serialisable.

Units are in the field names (``_ms``, ``_tps``, ``_bytes``). Times of one request are
offsets from the moment the request was handed to the socket, measured with
``time.perf_counter_ns``; ``send_offset_ms`` places a request on the run's own timeline
(``BenchResult.started_at`` anchors that timeline to wall-clock time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from app.bench.memory_reading import MemoryReading
from app.bench.metrics import Distribution
from app.bench.plan import BenchPlan
from app.bench.quality.results import NeedleGrid, TaskRunResult, ToolCallCheck

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


# A concurrency level whose failed requests pass this share ends the run as load_failure
# (at 1,000 streams a run once said ok with 600 of 2,000 requests failed).
MAX_ERROR_SHARE = 0.10


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
