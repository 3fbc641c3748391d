"""Concurrency ramp: more streams at one length until errors or a TTFT limit stop it."""

from __future__ import annotations

import math
import time

from app.bench import metrics
from app.bench.memory_reading import MemoryReading
from app.bench.plan import MAX_LEVEL_REQUESTS, BenchPlan
from app.bench.prompts import SizedPrompt, sized_prompt, stable_seed
from app.bench.result import (
    HELD_SHARE,
    ConcurrencyLevel,
    ConcurrencyRamp,
    HeldConcurrency,
    LengthResult,
    RequestSample,
)
from app.bench.shards import Turn, quiet_gc, run_sharded, run_streams, shard_count
from app.bench.stages.context import RunContext, first_error

# With no request timed at one stream, a level run for a time prepares for requests this
# quick (twenty a second per stream).
QUICKEST_REQUEST_S = 0.05


async def run_ramp(run: RunContext, lengths: list[LengthResult]) -> ConcurrencyRamp:
    ramp_length = run.plan.ramp_length()
    target = run.prompt_target(ramp_length)
    ramp = ConcurrencyRamp(length=ramp_length, prompt_tokens_target=target)
    same_length = next((result for result in lengths if result.length == ramp_length), None)
    levels = list(run.plan.concurrency_levels)
    if lengths[0].status != "ok" or (same_length is not None and same_length.status != "ok"):
        ramp.stopped_reason = "skipped: the single-request step failed"
        run.skip([f"concurrency:{level}" for level in levels], ramp.stopped_reason)
        return ramp
    # The quickest whole request at one stream: no request at load is quicker.
    quickest_ms = min((r.e2e_ms for r in lengths if r.e2e_ms), default=None)
    while levels:
        result = await _one_level(run, levels.pop(0), target, quickest_ms)
        ramp.levels.append(result)
        stop = ramp_stop_reason(result, run.plan.ttft_limit_ms)
        if stop is not None:
            ramp.stopped_reason = stop
            run.skip([f"concurrency:{level}" for level in levels], f"skipped: {stop}")
            break
    return ramp


def level_turns(plan: BenchPlan, level: int, quickest_ms: float | None) -> int:
    """Requests each stream of a level prepares: the plan's rounds, or for a level run for
    a time, as many as its streams could send in that time, were every request as quick as
    the quickest one at one stream (never quicker at load), and one more."""
    seconds = plan.level_seconds
    if seconds is None:
        return plan.level_rounds()
    each_s = max((quickest_ms or 0.0) / 1000, QUICKEST_REQUEST_S)
    return max(1, min(math.ceil(seconds / each_s) + 1, MAX_LEVEL_REQUESTS // level))


async def _one_level(
    run: RunContext, level: int, target: int, quickest_ms: float | None
) -> ConcurrencyLevel:
    started = time.perf_counter()
    rounds = level_turns(run.plan, level, quickest_ms)
    total = level * rounds
    streams = [
        [
            _turn(
                sized_prompt(
                    run.sizer, target, stable_seed(run.plan.seed, "ramp", level, stream, turn)
                )
            )
            for turn in range(rounds)
        ]
        for stream in range(level)
    ]
    name = f"concurrency:{level}"
    await run.progress(name, 0, total)
    async with run.probe.window() as window:
        by_stream = await _level_samples(run, name, streams, total)
    if run.plan.level_seconds is not None:  # a level run for a time sends fewer than total
        await run.progress(name, total, total)
    samples = [sample for stream in by_stream for sample in stream]
    result = level_summary(
        level, samples, run.plan.ttft_limit_ms, window.reading, held=held_concurrency(by_stream)
    )
    result.stream_output_tps = stream_throughputs(by_stream)
    run.record(name, started, result.first_error, failed=result.errors > 0)
    return result


async def _level_samples(
    run: RunContext, name: str, streams: list[list[Turn]], total: int
) -> list[list[RequestSample]]:
    """The level's streams, in this event loop or, when wide, over worker processes."""
    shards = shard_count(len(streams)) if run.shard else 1
    if shards > 1:
        samples = await run_sharded(
            run.endpoint,
            streams,
            run.plan.max_tokens,
            shards=shards,
            api_key=run.endpoint.secret,
            connect_timeout_s=run.plan.connect_timeout_s,
            seconds=run.plan.level_seconds,
        )
        await run.progress(name, total, total)
        return samples
    done = 0

    async def count(_: RequestSample) -> None:
        nonlocal done
        done += 1
        await run.progress(name, done, total)

    with quiet_gc():
        return await run_streams(
            run.endpoint,
            run.stream_clients,
            streams,
            run.plan.max_tokens,
            count,
            seconds=run.plan.level_seconds,
        )


def ramp_stop_reason(level: ConcurrencyLevel, ttft_limit_ms: float | None) -> str | None:
    if level.errors:
        return f"errors at concurrency {level.concurrency}: {level.first_error}"
    if level.over_ttft_limit:
        return (
            f"p90 TTFT {level.ttft_ms.p90:.1f} ms at concurrency {level.concurrency} "
            f"exceeds the limit of {ttft_limit_ms:g} ms"
        )
    return None


def level_summary(
    level: int,
    samples: list[RequestSample],
    ttft_limit_ms: float | None,
    memory: MemoryReading | None,
    held: HeldConcurrency | None = None,
) -> ConcurrencyLevel:
    """Throughput over the level's wall time, next to the per-request latency spread, and
    the concurrency the level held (each sample its own stream when ``held`` is not
    given)."""
    held = held or held_concurrency([[sample] for sample in samples])
    good = [sample for sample in samples if sample.ok]
    starts = [sample.send_offset_ms for sample in samples]
    ends = [sample.send_offset_ms + (sample.end_ms or 0.0) for sample in samples]
    duration_s = (max(ends) - min(starts)) / 1000 if samples else 0.0
    output = sum(sample.output_tokens or 0 for sample in good)
    ttft = metrics.distribution(sample.ttft_ms for sample in good)
    over = ttft_limit_ms is not None and ttft.p90 is not None and ttft.p90 > ttft_limit_ms
    return ConcurrencyLevel(
        concurrency=level,
        requests=len(samples),
        errors=len(samples) - len(good),
        duration_s=round(duration_s, 4),
        held_concurrency=held,
        held_short=held is not None and held.mean < HELD_SHARE * level,
        decode_measurable=any(sample.decode_measurable for sample in good) if good else None,
        output_tps=metrics.throughput_per_second(output, duration_s),
        request_rate=metrics.throughput_per_second(len(good), duration_s),
        ttft_ms=ttft,
        tpot_ms=metrics.distribution(sample.tpot_ms for sample in good),
        e2e_ms=metrics.distribution(sample.e2e_ms for sample in good),
        decode_tps=metrics.distribution(sample.decode_tps for sample in good),
        over_ttft_limit=over,
        first_error=first_error(samples),
        samples=sorted(samples, key=lambda sample: sample.send_offset_ms),
        memory=memory,
    )


def stream_throughputs(by_stream: list[list[RequestSample]]) -> list[float]:
    """Each stream's output tokens over its own span (first send to last end), times the
    number of streams: what the level's throughput would be were every stream like it."""
    found = []
    for stream in by_stream:
        good = [s for s in stream if s.ok and s.output_tokens]
        if not stream or not good:
            continue
        span_s = (max(s.send_offset_ms + (s.end_ms or 0.0) for s in stream)
                  - min(s.send_offset_ms for s in stream)) / 1000  # fmt: skip
        if span_s > 0:
            tokens = sum(s.output_tokens or 0 for s in good)
            found.append(round(tokens / span_s * len(by_stream), 3))
    return found


# The briefest share of the steady span left out of the minimum: a stream's hand-over
# from one request to the next, when none is in flight on it.
HANDOVER_SHARE = 0.05


def held_concurrency(by_stream: list[list[RequestSample]]) -> HeldConcurrency | None:
    """Requests in flight over the level's steady span, from each request's send to its
    end (``[DONE]`` or the body's end).

    The steady span runs from the moment the last stream sent its first request to the
    moment the first stream to finish ended its last: there every stream should have a
    request in flight. Where streams never overlapped so (one waited for another), the
    whole level counts.
    """
    spans = [
        [(s.send_offset_ms, s.send_offset_ms + (s.end_ms or 0.0)) for s in stream]
        for stream in by_stream
        if stream
    ]
    if not spans:
        return None
    begin = max(stream[0][0] for stream in spans)
    end = min(stream[-1][1] for stream in spans)
    if end <= begin:
        begin = min(stream[0][0] for stream in spans)
        end = max(stream[-1][1] for stream in spans)
    if end <= begin:
        return HeldConcurrency(mean=float(len(spans)), min=len(spans))
    changes: list[tuple[float, int]] = []
    for stream in spans:
        for start, stop in stream:
            start, stop = max(start, begin), min(stop, end)
            if stop > start:
                changes += [(start, 1), (stop, -1)]
    changes.sort()
    at_count: dict[int, float] = {}
    count, previous = 0, begin
    for moment, step in changes:
        at_count[count] = at_count.get(count, 0.0) + (moment - previous)
        count, previous = count + step, moment
    at_count[count] = at_count.get(count, 0.0) + (end - previous)
    span = end - begin
    mean = sum(n * time for n, time in at_count.items()) / span
    fewest, left_out = 0, 0.0
    for n in sorted(at_count):
        left_out += at_count[n]
        fewest = n
        if left_out > HANDOVER_SHARE * span:
            break
    return HeldConcurrency(mean=round(mean, 3), min=fewest)


def _turn(prompt: SizedPrompt) -> Turn:
    return Turn(prompt.messages, prompt.target_tokens)
