"""Task: the user's own prompts, each asked ``repeat`` times after the warm-up and checked.

The score is what the checks say (``total`` counts every prompt x repeat; a request that
failed counts as not passed); the speed is measured on the task's own prompts, to sit next
to the synthetic lengths.
"""

from __future__ import annotations

import time

from app.bench import metrics
from app.bench.memory_reading import MemoryReading
from app.bench.prompts import user_messages
from app.bench.quality.results import TaskFailure, TaskPromptResult, TaskRunResult
from app.bench.quality.task_checks import check_answer
from app.bench.quality.task_spec import TaskSpec
from app.bench.result import RequestSample
from app.bench.stages.context import RunContext, first_error

MAX_FAILURES_KEPT = 50
MAX_ANSWER_CHARS = 500


async def run_task(run: RunContext) -> TaskRunResult | None:
    task = run.plan.task
    if task is None:
        return None
    started = time.perf_counter()
    name = f"task:{task.name}"
    repeat = run.plan.repeat
    total = len(task.prompts) * repeat
    failures: list[TaskFailure] = []
    prompts: list[TaskPromptResult] = []
    every_sample: list[RequestSample] = []
    dropped = 0
    async with run.probe.window() as window:
        for index, item in enumerate(task.prompts):
            max_tokens = item.max_tokens or task.max_tokens or run.plan.max_tokens
            samples: list[RequestSample] = []
            passed = 0
            for round_ in range(repeat):
                await run.progress(name, index * repeat + round_, total)
                sample = await run.ask(user_messages(item.prompt), max_tokens)
                samples.append(sample)
                reason = check_answer(item.check, sample.answer) if sample.ok else "no answer"
                if reason is None:
                    passed += 1
                elif len(failures) < MAX_FAILURES_KEPT:
                    failures.append(_failure(index, round_, reason, sample))
                else:
                    dropped += 1
            prompts.append(_prompt_result(index, item.check.kind, passed, samples))
            every_sample += samples
        await run.progress(name, total, total)
    error = first_error(every_sample)
    run.record(name, started, error, failed=error is not None)
    result = _task_result(task, prompts, failures, dropped, every_sample, window.reading)
    result.duration_s = round(time.perf_counter() - started, 4)
    return result


def _failure(index: int, round_: int, reason: str, sample: RequestSample) -> TaskFailure:
    return TaskFailure(
        prompt_index=index,
        repeat=round_,
        reason=reason,
        answer=sample.answer[:MAX_ANSWER_CHARS],
        error=sample.error.message if sample.error else None,
    )


def _prompt_result(
    index: int, kind: str, passed: int, samples: list[RequestSample]
) -> TaskPromptResult:
    good = [sample for sample in samples if sample.ok]
    return TaskPromptResult(
        index=index,
        check=kind,
        passed=passed,
        total=len(samples),
        prompt_tokens=next((s.prompt_tokens for s in good if s.prompt_tokens is not None), None),
        ttft_ms=metrics.median(metrics.present(s.ttft_ms for s in good)),
        decode_tps=metrics.median(metrics.present(s.decode_tps for s in good)),
        e2e_ms=metrics.median(metrics.present(s.e2e_ms for s in good)),
    )


def _task_result(
    task: TaskSpec,
    prompts: list[TaskPromptResult],
    failures: list[TaskFailure],
    dropped: int,
    samples: list[RequestSample],
    memory: MemoryReading | None,
) -> TaskRunResult:
    passed = sum(prompt.passed for prompt in prompts)
    total = sum(prompt.total for prompt in prompts)
    good = [sample for sample in samples if sample.ok]
    return TaskRunResult(
        id=task.id,
        name=task.name,
        version=task.version,
        pass_rate=round(passed / total, 4) if total else None,
        passed=passed,
        total=total,
        errors=len(samples) - len(good),
        ttft_ms=metrics.median(metrics.present(s.ttft_ms for s in good)),
        decode_tps=metrics.median(metrics.present(s.decode_tps for s in good)),
        e2e_ms=metrics.median(metrics.present(s.e2e_ms for s in good)),
        prompts=prompts,
        failures=failures,
        failures_dropped=dropped,
        memory=memory,
    )
