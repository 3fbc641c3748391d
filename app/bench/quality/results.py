"""Result models of the quality checks: the needle depth x length grid, the tool calls and
the reader's own task.

Every trial keeps its seed, so two runs with the same plan seed ask the same prompts and
can be compared prompt by prompt (``app.records.comparison.paired``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.bench.memory_reading import MemoryReading

TokenCounting = Literal["server_tokenizer", "estimated"]


class Band(BaseModel):
    """A two-sided 95% interval of a rate."""

    low: float
    high: float


class GridTrial(BaseModel):
    """One needle question of a grid cell."""

    repeat: int
    seed: int
    passkey: str
    found: bool
    prompt_tokens: int | None = Field(default=None, description="counted before sending")
    reason: str | None = Field(default=None, description="why it did not count as found")
    answer: str = Field(default="", description="the first 200 characters")


class GridCell(BaseModel):
    length: int
    depth: float
    found: int = Field(description="trials whose answer held the passkey")
    repeats: int = Field(description="trials run")
    accuracy: float | None = None
    trials: list[GridTrial] = Field(default_factory=list)


class CeilingConfidence(BaseModel):
    """How sure the ceiling is: the lower bound of the accuracy measured up to it."""

    level: float = 0.95
    accuracy_low: float
    trials: int


class NeedleGrid(BaseModel):
    lengths: list[int]
    depths: list[float]
    cells: list[GridCell] = Field(default_factory=list)
    safe_context_tokens: int | None = Field(
        default=None,
        description="the longest length where this and every shorter length reached the "
        "threshold at every depth",
    )
    threshold: float
    confidence: CeilingConfidence | None = None
    token_counting: TokenCounting = "estimated"
    failing_reason: str | None = Field(
        default=None, description="why the server fails the check outright (an echo)"
    )


class ToolCallTrial(BaseModel):
    schema_name: str
    context: Literal["short", "long"]
    repeat: int
    seed: int
    valid: bool
    reason: str | None = None
    prompt_tokens: int | None = None


class ToolCallCheck(BaseModel):
    valid: int
    total: int
    valid_rate: float | None
    band: Band | None
    long_context_tokens: int | None = Field(default=None, description="the long prompts' size")
    trials: list[ToolCallTrial] = Field(default_factory=list)
    failing_reason: str | None = Field(
        default=None, description="why the server fails the check outright (calls as text)"
    )


class TaskFailure(BaseModel):
    prompt_index: int
    repeat: int
    reason: str
    answer: str = Field(description="as received, cut to its first 500 characters")
    error: str | None = Field(default=None, description="the request's error, if it failed")


class TaskPromptResult(BaseModel):
    """One prompt's repeats: how many passed, and the speed measured on it."""

    index: int
    check: str
    passed: int
    total: int
    prompt_tokens: int | None = Field(default=None, description="as reported by the server")
    ttft_ms: float | None = Field(default=None, description="median of the repeats")
    decode_tps: float | None = None
    e2e_ms: float | None = None


class TaskRunResult(BaseModel):
    """A task's score (``total`` counts every prompt x repeat) and its measured speed."""

    id: int | None = None
    name: str
    version: int
    pass_rate: float | None
    passed: int
    total: int
    errors: int = Field(description="requests that failed outright (counted as not passed)")
    ttft_ms: float | None = Field(default=None, description="median over every answered request")
    decode_tps: float | None = None
    e2e_ms: float | None = None
    prompts: list[TaskPromptResult] = Field(default_factory=list)
    failures: list[TaskFailure] = Field(default_factory=list, description="the first 50")
    failures_dropped: int = 0
    memory: MemoryReading | None = None
    duration_s: float | None = Field(
        default=None, description="wall time of the task's requests, one after another"
    )
