"""Warm-up: one mid-sized request whose timings are kept apart from the measured ones.

The first real prompt pays for lazy allocations, graph captures and kernel compilation;
it also gives the prompt sizer a second calibration point.
"""

from __future__ import annotations

import time

from app.bench.prompts import sized_prompt, stable_seed
from app.bench.result import RequestSample
from app.bench.stages.context import RunContext

WARMUP_TARGET_TOKENS = 512


async def run_warmup(run: RunContext) -> RequestSample:
    started = time.perf_counter()
    await run.progress("warmup", 0, 1)
    target = min(WARMUP_TARGET_TOKENS, run.prompt_target(min(run.lengths)))
    prompt = sized_prompt(run.sizer, target, stable_seed(run.plan.seed, "warmup"))
    sample = await run.ask(prompt.messages, run.plan.max_tokens, prompt)
    run.sizer.observe(prompt.words, sample.prompt_tokens)
    await run.progress("warmup", 1, 1)
    run.record("warmup", started, sample.error.message if sample.error else None)
    return sample
