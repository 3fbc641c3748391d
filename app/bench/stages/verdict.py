"""The run's outcome, and the result assembled from every stage's part."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime

from app.bench.plan import BenchPlan
from app.bench.quality.results import NeedleGrid, TaskRunResult, ToolCallCheck
from app.bench.result import (
    MAX_ERROR_SHARE,
    BenchResult,
    ConcurrencyRamp,
    LengthResult,
    NeedleLength,
    Outcome,
    RequestSample,
    SmokeResult,
)
from app.bench.stages.context import RunContext
from app.bench.stages.needle import needle_error
from app.bench.stream.arrival import burst_verdict


def classify(
    smoke: SmokeResult,
    lengths: list[LengthResult],
    needles: list[NeedleLength],
    task: TaskRunResult | None = None,
    task_min_pass_rate: float | None = None,
    ramp: ConcurrencyRamp | None = None,
) -> tuple[Outcome, str | None]:
    """load_failure > long_context_failure > wrong_answer > inconclusive > ok, with the
    first error text. ``inconclusive``: most answers arrived in bursts, so the run's decode
    figures cannot be measured (app/bench/stream/arrival.py).

    Only for a server that answered: an unreachable one raised ``TargetUnreachable`` first.
    A task's score decides the outcome only when the plan sets a minimum pass rate.
    """
    if not smoke.ok:
        return "load_failure", smoke.sample.error.message if smoke.sample.error else None
    for level in ramp.levels if ramp else []:
        share = level.errors / level.requests if level.requests else 0.0
        if share > MAX_ERROR_SHARE:
            return "load_failure", (
                f"{level.errors:,} of {level.requests:,} requests ({share:.0%}) failed at "
                f"concurrency {level.concurrency:,}, past the {MAX_ERROR_SHARE:.0%} a run "
                f"may lose: {level.first_error or 'no error text'}"
            )
    for result in lengths:
        if result.status == "failed":
            return "long_context_failure", result.error
    for needle in needles:
        failed = [cell for cell in needle.cells if not cell.sample.ok or cell.truncated]
        if failed:
            return "long_context_failure", needle_error(failed)
    for needle in needles:
        for cell in needle.cells:
            if not cell.found:
                answer = cell.sample.answer.strip()[:200]
                return "wrong_answer", (
                    f"needle {cell.passkey} missed at length {cell.length}, depth {cell.depth:g}: "
                    f"answered {answer!r}"
                )
    if task is not None and task_min_pass_rate is not None:
        rate = task.pass_rate or 0.0
        if rate < task_min_pass_rate:
            return "wrong_answer", (
                f"task {task.name!r} passed {task.passed} of {task.total} "
                f"({rate:.0%}), below the required {task_min_pass_rate:.0%}"
            )
    timed = [sample for result in lengths for sample in result.samples]
    timed += [sample for level in ramp.levels for sample in level.samples] if ramp else []
    reason = burst_verdict(timed)
    if reason is not None:
        return "inconclusive", reason
    return "ok", None


def quality_failure(
    outcome: Outcome,
    error: str | None,
    grid: NeedleGrid | None,
    tool_calls: ToolCallCheck | None,
) -> tuple[Outcome, str | None]:
    """A server that echoes the needle prompt or writes tool calls as text is failing.

    Misses alone do not fail a run: the grid's ceiling and the valid-call rate say how far
    the configuration can be trusted, which is the finding.
    """
    if outcome != "ok":
        return outcome, error
    for reason in (grid and grid.failing_reason, tool_calls and tool_calls.failing_reason):
        if reason:
            return "wrong_answer", reason
    return outcome, error


def token_count_source(samples: Sequence[RequestSample]) -> str | None:
    sources = {sample.token_count_source for sample in samples if sample.token_count_source}
    if not sources:
        return None
    return sources.pop() if len(sources) == 1 else "mixed"


def assemble(
    run: RunContext,
    outcome: Outcome,
    error: str | None,
    *,
    smoke: SmokeResult,
    warmup: RequestSample | None = None,
    lengths: list[LengthResult] | None = None,
    ramp: ConcurrencyRamp | None = None,
    needles: list[NeedleLength] | None = None,
    task: TaskRunResult | None = None,
    grid: NeedleGrid | None = None,
    tool_calls: ToolCallCheck | None = None,
) -> BenchResult:
    every_sample = _all_samples(smoke, warmup, lengths or [], ramp, needles or [])
    return BenchResult(
        plan=run.plan,
        started_at=run.started_at,
        finished_at=datetime.now(UTC),
        duration_s=round(time.perf_counter() - run.started, 3),
        outcome=outcome,
        outcome_error=error,
        token_count_source=token_count_source(every_sample),
        steps=run.steps,
        smoke=smoke,
        warmup=warmup,
        lengths=lengths or [],
        concurrency=ramp,
        needle=needles or [],
        task=task,
        needle_grid=grid,
        tool_calls=tool_calls,
        notes=run.notes
        + _calibration_note(run, smoke)
        + _prefix_cache_note(run.plan)
        + held_notes(ramp),
    )


def held_notes(ramp: ConcurrencyRamp | None) -> list[str]:
    """One note per level that held under 90% of the streams it asked for."""
    notes = []
    for level in ramp.levels if ramp else []:
        held = level.held_concurrency
        if level.held_short and held is not None:
            notes.append(
                f"concurrency {level.concurrency} held {held.mean:.2f} requests in flight on "
                f"average (at least {held.min} most of the time), under 90% of what was "
                "asked: its figures describe a lighter load"
            )
    return notes


def _calibration_note(run: RunContext, smoke: SmokeResult) -> list[str]:
    if not smoke.ok or run.sizer.calibrated:
        return []
    return [
        "the server reported no prompt token counts: prompt lengths are estimates "
        f"({run.sizer.default_tokens_per_word} tokens per word) and truncation was not checked"
    ]


def _all_samples(
    smoke: SmokeResult,
    warmup: RequestSample | None,
    lengths: list[LengthResult],
    ramp: ConcurrencyRamp | None,
    needles: list[NeedleLength],
) -> list[RequestSample]:
    samples = [smoke.sample, *([warmup] if warmup else [])]
    samples += [sample for result in lengths for sample in result.samples]
    if ramp is not None:
        samples += [sample for level in ramp.levels for sample in level.samples]
    samples += [cell.sample for needle in needles for cell in needle.cells]
    return [sample for sample in samples if sample.ok]


def _prefix_cache_note(plan: BenchPlan) -> list[str]:
    if plan.repeat < 2:
        return []
    return [
        "the repeats at one length are identical requests: on servers with automatic prefix "
        "caching the later repeats may reuse the first one's KV cache; lengths, ramp requests "
        "and needle cells each use their own filler so they do not share prefixes"
    ]
