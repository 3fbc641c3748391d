"""What every stage of one run shares: plan, endpoint, prompt sizer, probe and step log."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import httpx

from app.bench.plan import BenchPlan
from app.bench.probes import MemoryProbe
from app.bench.prompts import PromptSizer, SizedPrompt
from app.bench.result import RequestSample, StepRecord
from app.bench.stream.request import stream_chat
from app.bench.stream.tokenize import ServerTokenizer
from app.bench.transport.endpoint import ChatEndpoint, StreamClients, chat_completions_url

ProgressCallback = Callable[[str, int, int], Awaitable[None] | None]


class RunContext:
    def __init__(
        self,
        plan: BenchPlan,
        http: httpx.AsyncClient,
        stream_clients: StreamClients,
        probe: MemoryProbe,
        on_progress: ProgressCallback | None,
        *,
        shard: bool = False,
    ) -> None:
        self.plan = plan
        self.http = http
        # Wide levels go to worker processes, which make their own clients: only when the
        # run owns its clients (a caller's client cannot cross a process boundary).
        self.shard = shard
        self.stream_clients = stream_clients
        self.probe = probe
        self.on_progress = on_progress
        self.endpoint = ChatEndpoint(
            http=http,
            url=chat_completions_url(plan.base_url),
            model=plan.model,
            request_timeout_s=plan.request_timeout_s,
            extra_body=dict(plan.extra_body),
            secret=plan.api_key.get_secret_value() if plan.api_key else None,
        )
        self.sizer = PromptSizer()
        # The server's own tokenizer, when it offers one: asked once, then not again.
        self.tokenizer = ServerTokenizer(http, plan.base_url, plan.model)
        self.steps: list[StepRecord] = []
        self.notes: list[str] = []
        # The lengths this run measures: the plan's, plus a long one found for the needle.
        self.lengths: list[int] = list(plan.lengths)
        # The context the quality checks fill (the plan's or the server's), and the one
        # the needle grid runs up to; None when unknown or not asked for.
        self.served_context: int | None = None
        self.context_asked = False
        self.quality_context: int | None = None
        self.grid_context: int | None = None
        self.started_at = datetime.now(UTC)
        self.started = time.perf_counter()

    def prompt_target(self, length: int) -> int:
        # The context holds the prompt and the answer, as in RULER's length fitting.
        return length - self.plan.max_tokens

    async def ask(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        prompt: SizedPrompt | None = None,
        *,
        tools: list[dict[str, Any]] | None = None,
    ) -> RequestSample:
        target = prompt.target_tokens if prompt is not None else None
        return await stream_chat(
            self.endpoint, messages, max_tokens, prompt_tokens_target=target, tools=tools
        )

    async def progress(self, step: str, done: int, total: int) -> None:
        if self.on_progress is None:
            return
        outcome = self.on_progress(step, done, total)
        if inspect.isawaitable(outcome):
            await outcome

    def record(
        self, name: str, started: float, error: str | None, *, failed: bool | None = None
    ) -> None:
        is_failed = error is not None if failed is None else failed
        self.steps.append(
            StepRecord(
                name=name,
                status="failed" if is_failed else "ok",
                duration_s=round(time.perf_counter() - started, 4),
                error=error,
            )
        )

    def skip(self, names: Sequence[str], reason: str) -> None:
        self.steps.extend(StepRecord(name=name, status="skipped", error=reason) for name in names)


def first_error(samples: Sequence[RequestSample]) -> str | None:
    return next((sample.error.message for sample in samples if sample.error is not None), None)


def truncation_message(reported: int | None, sent: int) -> str:
    return (
        f"the server counted {reported} prompt tokens of about {sent} sent: "
        "the prompt was truncated (context limit smaller than requested?)"
    )
