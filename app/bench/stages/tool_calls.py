"""Tool calls: each schema asked at a short and at a long context, repeated; the share of
calls that parse as JSON and validate, with its 95% band.

The long prompts put the request after seeded filler that fills the context (less room
for the tools' definitions and the answer): quantised KV caches have been seen to break
calls only past tens of thousands of tokens. Seeds make the prompts the same in every run
with the same plan seed, so two runs can be compared call by call.
"""

from __future__ import annotations

import time
from typing import Literal

from app.bench.prompts import filler_sentences, stable_seed, user_messages
from app.bench.quality.results import Band, ToolCallCheck, ToolCallTrial
from app.bench.quality.stats import wilson_interval
from app.bench.quality.tool_schemas import SCHEMA_NAMES, check_call, tool_case
from app.bench.stages.context import RunContext
from app.bench.stages.sizing import sized_to

STEP = "tool_calls"
TOOL_MAX_TOKENS = 256
# The tools' definitions and the chat template's tool preamble, kept free of filler.
TOOLS_ROOM = 1024
LONG_AT_LEAST = 2048


def long_target(run: RunContext) -> int | None:
    context = run.quality_context
    if context is None:
        return None
    target = context - TOOL_MAX_TOKENS - TOOLS_ROOM
    return target if target >= LONG_AT_LEAST else None


async def run_tool_calls(run: RunContext) -> ToolCallCheck | None:
    plan = run.plan
    if not plan.tool_calls:
        return None
    started = time.perf_counter()
    long_tokens = long_target(run)
    contexts: list[Literal["short", "long"]] = ["short"] + (["long"] if long_tokens else [])
    if long_tokens is None:
        run.notes.append(
            "tool calls were checked at short context only: the context is unknown or too short"
        )
    plan_of = [
        (name, context, repeat)
        for context in contexts
        for name in SCHEMA_NAMES
        for repeat in range(plan.tool_call_repeat)
    ]
    trials: list[ToolCallTrial] = []
    for done, (name, context, repeat) in enumerate(plan_of):
        await run.progress(STEP, done, len(plan_of))
        seed = stable_seed(plan.seed, "tools", name, context, repeat)
        case = tool_case(name, seed)
        messages = user_messages(case.request)
        if context == "long" and long_tokens:
            messages, _ = await sized_to(
                run,
                long_tokens,
                lambda words, request=case.request, seed=seed: long_messages(seed, words, request),
                lambda built: built,
            )
        sample = await run.ask(messages, TOOL_MAX_TOKENS, tools=case.tools)
        valid, reason = check_call(sample, case)
        trials.append(
            ToolCallTrial(
                schema_name=name,
                context=context,
                repeat=repeat,
                seed=seed,
                valid=valid,
                reason=reason,
                prompt_tokens=sample.prompt_tokens,
            )
        )
    await run.progress(STEP, len(plan_of), len(plan_of))
    check = summarise_tool_calls(trials, long_tokens)
    errors = [trial.reason for trial in trials if trial.reason and trial.reason.startswith("error")]
    run.record(STEP, started, check.failing_reason or (errors[0] if errors else None))
    return check


def long_messages(seed: int, words: int, request: str) -> list[dict[str, str]]:
    """The request after about ``words`` words of seeded filler."""
    return user_messages(" ".join(filler_sentences(seed, words)) + "\n\n" + request)


def summarise_tool_calls(trials: list[ToolCallTrial], long_tokens: int | None) -> ToolCallCheck:
    valid = sum(trial.valid for trial in trials)
    total = len(trials)
    band = None
    if total:
        low, high = wilson_interval(valid, total)
        band = Band(low=round(low, 4), high=round(high, 4))
    as_text = [trial for trial in trials if trial.reason and trial.reason.startswith("plain")]
    failing = None
    if as_text and 2 * len(as_text) >= total:
        failing = (
            f"tool calls came back as plain text, not as tool_calls ({len(as_text)} of "
            f"{total} calls)"
        )
    return ToolCallCheck(
        valid=valid,
        total=total,
        valid_rate=round(valid / total, 4) if total else None,
        band=band,
        long_context_tokens=long_tokens,
        trials=trials,
        failing_reason=failing,
    )
