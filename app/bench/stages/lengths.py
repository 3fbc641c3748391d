"""Per-length repeats: the single-request TTFT, decode speed and memory at each length.

Lengths run from the shortest up; once one fails (or the server truncates it) the longer
ones are skipped, since they cannot succeed and each failure may cost a full timeout.
"""

from __future__ import annotations

import time

from app.bench import metrics
from app.bench.memory_reading import MemoryReading
from app.bench.prompts import SizedPrompt, is_truncated, sized_prompt, stable_seed
from app.bench.result import LengthResult, RequestSample, StepRecord
from app.bench.stages.context import RunContext, first_error, truncation_message


async def run_lengths(run: RunContext) -> list[LengthResult]:
    results: list[LengthResult] = []
    blocked_by: str | None = None
    for length in run.lengths:
        name = f"length:{length}"
        if blocked_by is not None:
            results.append(
                LengthResult(
                    length=length,
                    status="skipped",
                    error=blocked_by,
                    prompt_tokens_target=run.prompt_target(length),
                )
            )
            run.steps.append(StepRecord(name=name, status="skipped", error=blocked_by))
            continue
        result = await _one_length(run, length)
        results.append(result)
        if result.status == "failed":
            blocked_by = f"skipped: length {length} failed"
    return results


async def _one_length(run: RunContext, length: int) -> LengthResult:
    started = time.perf_counter()
    plan = run.plan
    name = f"length:{length}"
    seed = stable_seed(plan.seed, "length", length)
    prompt = sized_prompt(run.sizer, run.prompt_target(length), seed)
    samples: list[RequestSample] = []
    async with run.probe.window() as window:
        for done in range(plan.repeat):
            await run.progress(name, done, plan.repeat)
            samples.append(await run.ask(prompt.messages, plan.max_tokens, prompt))
        await run.progress(name, plan.repeat, plan.repeat)
    result = length_result(length, prompt, samples, window.reading, plan.truncation_tolerance)
    if result.status == "ok":
        run.sizer.observe(prompt.words, result.prompt_tokens_reported)
    run.record(name, started, result.error, failed=result.status == "failed")
    return result


def length_result(
    length: int,
    prompt: SizedPrompt,
    samples: list[RequestSample],
    memory: MemoryReading | None,
    truncation_tolerance: float,
) -> LengthResult:
    good = [sample for sample in samples if sample.ok]
    reported = next((s.prompt_tokens for s in samples if s.prompt_tokens is not None), None)
    truncated = is_truncated(reported, prompt.expected_tokens, truncation_tolerance)
    error = first_error(samples)
    if truncated:
        error = truncation_message(reported, prompt.expected_tokens)
    failed = bool(truncated) or len(good) < len(samples)
    return LengthResult(
        length=length,
        status="failed" if failed else "ok",
        error=error,
        prompt_tokens_target=prompt.target_tokens,
        prompt_tokens_reported=reported,
        truncated=truncated,
        ttft_ms=metrics.median(metrics.present(s.ttft_ms for s in good)),
        decode_tps=metrics.median(metrics.present(s.decode_tps for s in good)),
        tpot_ms=metrics.median(metrics.present(s.tpot_ms for s in good)),
        decode_measurable=any(s.decode_measurable for s in good) if good else None,
        e2e_ms=metrics.median(metrics.present(s.e2e_ms for s in good)),
        output_tokens=metrics.median(metrics.present(s.output_tokens for s in good)),
        samples=samples,
        memory=memory,
    )
