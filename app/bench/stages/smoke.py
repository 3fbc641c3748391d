"""Smoke: one short question, to learn whether the server serves at all and how it streams.

It is the request the recipe page's streaming smoke test prints (app.recipes.presenters
reads these constants): the same prompt and the same 512 tokens, which leave a reasoning
model room to finish thinking and answer. The plan's output tokens govern the measured
requests, not this one."""

from __future__ import annotations

import time

from app.bench.prompts import DEFAULT_TOKENS_PER_WORD, QUESTION, user_messages
from app.bench.result import RequestSample, SmokeResult
from app.bench.stages.context import RunContext

SMOKE_PROMPT = "Say hello in five words."
SMOKE_MAX_TOKENS = 512


async def run_smoke(run: RunContext) -> SmokeResult:
    started = time.perf_counter()
    max_tokens = SMOKE_MAX_TOKENS
    await run.progress("smoke", 0, 1)
    sample = await run.ask(user_messages(SMOKE_PROMPT), max_tokens)
    if not sample.ok and rejects_stream_options(sample):
        # Some servers answer 400 to stream_options; fall back to counting chunks.
        run.endpoint.include_usage = False
        run.notes.append("server rejected stream_options.include_usage; token counts from chunks")
        sample = await run.ask(user_messages(SMOKE_PROMPT), max_tokens)
    if sample.ok:  # a failed smoke test is not a finished stage: the bar stays short of it
        await run.progress("smoke", 1, 1)
    note = None
    if sample.ok and not sample.streamed:
        note = "the answer arrived in a single chunk: the server did not stream"
    run.sizer.observe(0, question_overhead(sample.prompt_tokens))
    run.record("smoke", started, sample.error.message if sample.error else None)
    return SmokeResult(ok=sample.ok, streamed=sample.streamed, sample=sample, note=note)


def question_overhead(smoke_prompt_tokens: int | None) -> int | None:
    """The sized prompts' overhead (chat template and closing question) from the smoke's
    reported prompt: the sized prompts close with QUESTION, not the smoke's prompt, so the
    words QUESTION has beyond it are added at the default rate (the warm-up and the lengths
    then refine the fit)."""
    if smoke_prompt_tokens is None:
        return None
    extra_words = len(QUESTION.split()) - len(SMOKE_PROMPT.split())
    return smoke_prompt_tokens + round(extra_words * DEFAULT_TOKENS_PER_WORD)


def rejects_stream_options(sample: RequestSample) -> bool:
    error = sample.error
    return (
        error is not None
        and error.kind == "http"
        and error.http_status in (400, 422)
        and "stream_options" in error.message
    )
