"""The benchmark run: smoke, warm-up, per-length repeats, concurrency ramp, needle, verdict.

Steps run in that order and each keeps its outcome in the result. Lengths run from the
shortest up; once one fails (or the server truncates it) the longer ones are skipped, since
they cannot succeed and each failure may cost a full request timeout.

A target that nothing answers (no connection opened for the smoke request) gives no result
at all: ``TargetUnreachable`` is raised, since an absent server says nothing about a model.
A server that answers but cannot serve (an HTTP error, an error in the stream, no tokens)
gives a ``load_failure`` result, which is evidence worth keeping.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

import httpx

from app.bench import metrics
from app.bench.endpoint import ChatEndpoint, StreamClients, chat_completions_url, make_http_client
from app.bench.hosts import check_url_allowed, is_loopback
from app.bench.needle import accuracy, needle_found, needle_prompt
from app.bench.probes import MemoryProbe, default_probe
from app.bench.prompts import (
    QUESTION,
    PromptSizer,
    SizedPrompt,
    is_truncated,
    sized_prompt,
    stable_seed,
    user_messages,
)
from app.bench.result import (
    BenchPlan,
    BenchResult,
    ConcurrencyLevel,
    ConcurrencyRamp,
    LengthResult,
    MemoryReading,
    NeedleCell,
    NeedleLength,
    Outcome,
    RequestSample,
    SmokeResult,
    StepRecord,
)
from app.bench.shards import Turn, quiet_gc, run_sharded, run_streams, shard_count
from app.bench.stream import stream_chat

ProgressCallback = Callable[[str, int, int], Awaitable[None] | None]

SMOKE_MAX_TOKENS = 32
WARMUP_TARGET_TOKENS = 512


class TargetUnreachable(Exception):
    """Nothing answered at ``url``: the connection was refused, the name did not resolve or
    the connect timed out. Nothing was measured, so there is no result to keep."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"could not connect to {url}: {reason}")
        self.url = url
        self.reason = reason


def check_plan_hosts(plan: BenchPlan) -> None:
    """Raise HostNotAllowedError before any request if a URL leaves the allowed hosts."""
    check_url_allowed(plan.base_url, plan.allowed_hosts)
    if plan.metrics_url:
        check_url_allowed(plan.metrics_url, plan.allowed_hosts)


async def run_benchmark(
    plan: BenchPlan,
    *,
    probe: MemoryProbe | None = None,
    on_progress: ProgressCallback | None = None,
    http: httpx.AsyncClient | None = None,
) -> BenchResult:
    """Run the whole procedure against ``plan.base_url``.

    Raises ``HostNotAllowedError`` before any request for a host outside the allowed ones,
    and ``TargetUnreachable`` when no connection opens for the smoke request.

    ``http``, when given, carries every request (the caller closes it); by default each
    concurrent stream of the ramp gets a client of its own (see ``StreamClients``).
    """
    check_plan_hosts(plan)
    api_key = plan.api_key.get_secret_value() if plan.api_key else None

    def server_client() -> httpx.AsyncClient:
        return make_http_client(
            api_key=api_key,
            connect_timeout_s=plan.connect_timeout_s,
            request_timeout_s=plan.request_timeout_s,
        )

    # The probe has its own client: a scrape never waits for, or delays, a measured request,
    # and the API key is not sent to the metrics endpoint.
    probe_http = make_http_client(
        api_key=None, connect_timeout_s=plan.connect_timeout_s, request_timeout_s=10.0
    )
    owns_client = http is None
    http = http or server_client()
    stream_clients = StreamClients(server_client) if owns_client else StreamClients.sharing(http)
    try:
        if probe is None:
            probe = default_probe(
                metrics_url=plan.metrics_url,
                http=probe_http,
                local_server=_is_local(plan.base_url),
                interval_s=plan.probe_interval_s,
            )
        run = _Run(plan, http, stream_clients, probe, on_progress, shard=owns_client)
        return await run.execute()
    finally:
        await stream_clients.aclose()
        await probe_http.aclose()
        if owns_client:
            await http.aclose()


def run_benchmark_sync(
    plan: BenchPlan,
    *,
    probe: MemoryProbe | None = None,
    on_progress: ProgressCallback | None = None,
) -> BenchResult:
    """For callers without an event loop (a CLI command, a worker thread).

    Runs on uvloop when it is installed: its cheaper per-event cost is the client's own
    share of TTFT when many streams deliver their first tokens at once.
    """
    with asyncio.Runner(loop_factory=fastest_event_loop_factory()) as runner:
        return runner.run(run_benchmark(plan, probe=probe, on_progress=on_progress))


def fastest_event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory when importable, else None (asyncio's default loop)."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _is_local(url: str) -> bool:
    host = httpx.URL(url).host
    return is_loopback(host)


class _Run:
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
        self.steps: list[StepRecord] = []
        self.notes: list[str] = []
        self.started_at = datetime.now(UTC)
        self.started = time.perf_counter()

    async def execute(self) -> BenchResult:
        smoke = await self._smoke()
        failure = smoke.sample.error
        if failure is not None and failure.kind == "connect":
            raise TargetUnreachable(self.endpoint.url, failure.message)
        if not smoke.ok:  # the server answered, but could not serve the model
            self._skip_all_after_smoke()
            error = failure.message if failure else "smoke request failed"
            return self._result("load_failure", error, smoke=smoke)
        warmup = await self._warmup()
        lengths = await self._lengths()
        ramp = await self._concurrency(lengths)
        needles = await self._needles(lengths)
        outcome, error = classify(smoke, lengths, needles)
        return self._result(
            outcome, error, smoke=smoke, warmup=warmup, lengths=lengths, ramp=ramp, needles=needles
        )

    # -- steps ---------------------------------------------------------------------------

    async def _smoke(self) -> SmokeResult:
        started = time.perf_counter()
        await self._progress("smoke", 0, 1)
        sample = await self._ask(
            user_messages(QUESTION), min(SMOKE_MAX_TOKENS, self.plan.max_tokens)
        )
        if not sample.ok and _rejects_stream_options(sample):
            # Some servers answer 400 to stream_options; fall back to counting chunks.
            self.endpoint.include_usage = False
            self.notes.append(
                "server rejected stream_options.include_usage; token counts from chunks"
            )
            sample = await self._ask(
                user_messages(QUESTION), min(SMOKE_MAX_TOKENS, self.plan.max_tokens)
            )
        await self._progress("smoke", 1, 1)
        note = None
        if sample.ok and not sample.streamed:
            note = "the answer arrived in a single chunk: the server did not stream"
        self.sizer.observe(0, sample.prompt_tokens)
        self._record("smoke", started, sample.error.message if sample.error else None)
        return SmokeResult(ok=sample.ok, streamed=sample.streamed, sample=sample, note=note)

    async def _warmup(self) -> RequestSample:
        started = time.perf_counter()
        await self._progress("warmup", 0, 1)
        target = min(WARMUP_TARGET_TOKENS, self._prompt_target(min(self.plan.lengths)))
        prompt = sized_prompt(self.sizer, target, stable_seed(self.plan.seed, "warmup"))
        sample = await self._ask(prompt.messages, self.plan.max_tokens, prompt)
        self.sizer.observe(prompt.words, sample.prompt_tokens)
        await self._progress("warmup", 1, 1)
        self._record("warmup", started, sample.error.message if sample.error else None)
        return sample

    async def _lengths(self) -> list[LengthResult]:
        results: list[LengthResult] = []
        blocked_by: str | None = None
        for length in self.plan.lengths:
            name = f"length:{length}"
            if blocked_by is not None:
                results.append(self._skipped_length(length, blocked_by))
                self.steps.append(StepRecord(name=name, status="skipped", error=blocked_by))
                continue
            result = await self._one_length(length)
            results.append(result)
            if result.status == "failed":
                blocked_by = f"skipped: length {length} failed"
        return results

    async def _one_length(self, length: int) -> LengthResult:
        started = time.perf_counter()
        prompt = sized_prompt(
            self.sizer, self._prompt_target(length), stable_seed(self.plan.seed, "length", length)
        )
        samples: list[RequestSample] = []
        async with self.probe.window() as window:
            for done in range(self.plan.repeat):
                await self._progress(f"length:{length}", done, self.plan.repeat)
                samples.append(await self._ask(prompt.messages, self.plan.max_tokens, prompt))
            await self._progress(f"length:{length}", self.plan.repeat, self.plan.repeat)
        result = self._length_result(length, prompt, samples, window.reading)
        if result.status == "ok":
            self.sizer.observe(prompt.words, result.prompt_tokens_reported)
        self._record(f"length:{length}", started, result.error, failed=result.status == "failed")
        return result

    def _length_result(
        self,
        length: int,
        prompt: SizedPrompt,
        samples: list[RequestSample],
        memory: MemoryReading | None,
    ) -> LengthResult:
        good = [sample for sample in samples if sample.ok]
        reported = next((s.prompt_tokens for s in samples if s.prompt_tokens is not None), None)
        truncated = is_truncated(reported, prompt.expected_tokens, self.plan.truncation_tolerance)
        error = _first_error(samples)
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
            e2e_ms=metrics.median(metrics.present(s.e2e_ms for s in good)),
            output_tokens=metrics.median(metrics.present(s.output_tokens for s in good)),
            samples=samples,
            memory=memory,
        )

    def _skipped_length(self, length: int, reason: str) -> LengthResult:
        return LengthResult(
            length=length,
            status="skipped",
            error=reason,
            prompt_tokens_target=self._prompt_target(length),
        )

    async def _concurrency(self, lengths: list[LengthResult]) -> ConcurrencyRamp | None:
        ramp_length = self.plan.ramp_length()
        target = self._prompt_target(ramp_length)
        ramp = ConcurrencyRamp(length=ramp_length, prompt_tokens_target=target)
        same_length = next((result for result in lengths if result.length == ramp_length), None)
        levels = list(self.plan.concurrency_levels)
        if lengths[0].status != "ok" or (same_length is not None and same_length.status != "ok"):
            ramp.stopped_reason = "skipped: the single-request step failed"
            self._skip_levels(levels, ramp.stopped_reason)
            return ramp
        while levels:
            result = await self._one_level(levels.pop(0), target)
            ramp.levels.append(result)
            stop = self._ramp_stop_reason(result)
            if stop is not None:
                ramp.stopped_reason = stop
                self._skip_levels(levels, f"skipped: {stop}")
                break
        return ramp

    def _skip_levels(self, levels: Sequence[int], reason: str) -> None:
        self.steps.extend(
            StepRecord(name=f"concurrency:{level}", status="skipped", error=reason)
            for level in levels
        )

    async def _one_level(self, level: int, target: int) -> ConcurrencyLevel:
        started = time.perf_counter()
        rounds = self.plan.requests_per_stream
        total = level * rounds
        streams = [
            [
                _turn(
                    sized_prompt(
                        self.sizer, target, stable_seed(self.plan.seed, "ramp", level, stream, turn)
                    )
                )
                for turn in range(rounds)
            ]
            for stream in range(level)
        ]
        name = f"concurrency:{level}"
        await self._progress(name, 0, total)
        async with self.probe.window() as window:
            by_stream = await self._level_samples(name, streams, total)
        samples = [sample for stream in by_stream for sample in stream]
        result = level_summary(level, samples, self.plan.ttft_limit_ms, window.reading)
        self._record(name, started, result.first_error, failed=result.errors > 0)
        return result

    async def _level_samples(
        self, name: str, streams: list[list[Turn]], total: int
    ) -> list[list[RequestSample]]:
        """The level's streams, in this event loop or, when wide, over worker processes."""
        shards = shard_count(len(streams)) if self.shard else 1
        if shards > 1:
            samples = await run_sharded(
                self.endpoint,
                streams,
                self.plan.max_tokens,
                shards=shards,
                api_key=self.endpoint.secret,
                connect_timeout_s=self.plan.connect_timeout_s,
            )
            await self._progress(name, total, total)
            return samples
        done = 0

        async def count(_: RequestSample) -> None:
            nonlocal done
            done += 1
            await self._progress(name, done, total)

        with quiet_gc():
            return await run_streams(
                self.endpoint, self.stream_clients, streams, self.plan.max_tokens, count
            )

    def _ramp_stop_reason(self, level: ConcurrencyLevel) -> str | None:
        if level.errors:
            return f"errors at concurrency {level.concurrency}: {level.first_error}"
        if level.over_ttft_limit:
            return (
                f"p90 TTFT {level.ttft_ms.p90:.1f} ms at concurrency {level.concurrency} "
                f"exceeds the limit of {self.plan.ttft_limit_ms:g} ms"
            )
        return None

    async def _needles(self, lengths: list[LengthResult]) -> list[NeedleLength]:
        status = {result.length: result for result in lengths}
        results: list[NeedleLength] = []
        for length in self.plan.needle_lengths():
            if status[length].status != "ok":
                results.append(NeedleLength(length=length, accuracy=None))
                self.steps.append(
                    StepRecord(
                        name=f"needle:{length}", status="skipped", error=status[length].error
                    )
                )
                continue
            results.append(await self._one_needle_length(length))
        return results

    async def _one_needle_length(self, length: int) -> NeedleLength:
        started = time.perf_counter()
        name = f"needle:{length}"
        depths = self.plan.needle_depths
        cells: list[NeedleCell] = []
        async with self.probe.window() as window:
            for done, depth in enumerate(depths):
                await self._progress(name, done, len(depths))
                prompt = needle_prompt(
                    self.sizer, self._prompt_target(length), depth, self.plan.seed
                )
                sample = await self._ask(prompt.messages, self.plan.max_tokens, prompt)
                truncated = is_truncated(
                    sample.prompt_tokens, prompt.expected_tokens, self.plan.truncation_tolerance
                )
                cells.append(
                    NeedleCell(
                        length=length,
                        depth=depth,
                        passkey=prompt.passkey,
                        found=sample.ok and needle_found(sample.answer, prompt.passkey),
                        truncated=truncated,
                        sample=sample,
                    )
                )
            await self._progress(name, len(depths), len(depths))
        failed = [cell for cell in cells if not cell.sample.ok or cell.truncated]
        error = _needle_error(failed)
        self._record(name, started, error, failed=bool(failed))
        return NeedleLength(
            length=length,
            accuracy=accuracy([cell.found for cell in cells]),
            cells=cells,
            memory=window.reading,
        )

    # -- helpers -------------------------------------------------------------------------

    def _prompt_target(self, length: int) -> int:
        # The context holds the prompt and the answer, as in RULER's length fitting.
        return length - self.plan.max_tokens

    async def _ask(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        prompt: SizedPrompt | None = None,
    ) -> RequestSample:
        target = prompt.target_tokens if prompt is not None else None
        return await stream_chat(self.endpoint, messages, max_tokens, prompt_tokens_target=target)

    async def _progress(self, step: str, done: int, total: int) -> None:
        if self.on_progress is None:
            return
        outcome = self.on_progress(step, done, total)
        if inspect.isawaitable(outcome):
            await outcome

    def _record(
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

    def _calibration_note(self, smoke: SmokeResult) -> list[str]:
        if not smoke.ok or self.sizer.calibrated:
            return []
        return [
            "the server reported no prompt token counts: prompt lengths are estimates "
            f"({self.sizer.default_tokens_per_word} tokens per word) and truncation was not checked"
        ]

    def _skip_all_after_smoke(self) -> None:
        reason = "skipped: the smoke request failed"
        names = ["warmup", *(f"length:{length}" for length in self.plan.lengths)]
        names += [f"concurrency:{level}" for level in self.plan.concurrency_levels]
        names += [f"needle:{length}" for length in self.plan.needle_lengths()]
        self.steps.extend(StepRecord(name=name, status="skipped", error=reason) for name in names)

    def _result(
        self,
        outcome: Outcome,
        error: str | None,
        *,
        smoke: SmokeResult,
        warmup: RequestSample | None = None,
        lengths: list[LengthResult] | None = None,
        ramp: ConcurrencyRamp | None = None,
        needles: list[NeedleLength] | None = None,
    ) -> BenchResult:
        every_sample = _all_samples(smoke, warmup, lengths or [], ramp, needles or [])
        return BenchResult(
            plan=self.plan,
            started_at=self.started_at,
            finished_at=datetime.now(UTC),
            duration_s=round(time.perf_counter() - self.started, 3),
            outcome=outcome,
            outcome_error=error,
            token_count_source=token_count_source(every_sample),
            steps=self.steps,
            smoke=smoke,
            warmup=warmup,
            lengths=lengths or [],
            concurrency=ramp,
            needle=needles or [],
            notes=self.notes + self._calibration_note(smoke) + _prefix_cache_note(self.plan),
        )


def level_summary(
    level: int,
    samples: list[RequestSample],
    ttft_limit_ms: float | None,
    memory: MemoryReading | None,
) -> ConcurrencyLevel:
    """Throughput over the level's wall time, next to the per-request latency spread."""
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
        output_tps=metrics.throughput_per_second(output, duration_s),
        request_rate=metrics.throughput_per_second(len(good), duration_s),
        ttft_ms=ttft,
        tpot_ms=metrics.distribution(sample.tpot_ms for sample in good),
        e2e_ms=metrics.distribution(sample.e2e_ms for sample in good),
        decode_tps=metrics.distribution(sample.decode_tps for sample in good),
        over_ttft_limit=over,
        first_error=_first_error(samples),
        samples=sorted(samples, key=lambda sample: sample.send_offset_ms),
        memory=memory,
    )


def classify(
    smoke: SmokeResult, lengths: list[LengthResult], needles: list[NeedleLength]
) -> tuple[Outcome, str | None]:
    """load_failure > long_context_failure > wrong_answer > ok, with the first error text.

    Only for a server that answered: an unreachable one raised ``TargetUnreachable`` first.
    """
    if not smoke.ok:
        return "load_failure", smoke.sample.error.message if smoke.sample.error else None
    for result in lengths:
        if result.status == "failed":
            return "long_context_failure", result.error
    for needle in needles:
        failed = [cell for cell in needle.cells if not cell.sample.ok or cell.truncated]
        if failed:
            return "long_context_failure", _needle_error(failed)
    for needle in needles:
        for cell in needle.cells:
            if not cell.found:
                answer = cell.sample.answer.strip()[:200]
                return "wrong_answer", (
                    f"needle {cell.passkey} missed at length {cell.length}, depth {cell.depth:g}: "
                    f"answered {answer!r}"
                )
    return "ok", None


def truncation_message(reported: int | None, sent: int) -> str:
    return (
        f"the server counted {reported} prompt tokens of about {sent} sent: "
        "the prompt was truncated (context limit smaller than requested?)"
    )


def token_count_source(samples: Sequence[RequestSample]) -> str | None:
    sources = {sample.token_count_source for sample in samples if sample.token_count_source}
    if not sources:
        return None
    return sources.pop() if len(sources) == 1 else "mixed"


def _needle_error(failed: Sequence[NeedleCell]) -> str | None:
    if not failed:
        return None
    cell = failed[0]
    if cell.sample.error is not None:
        return cell.sample.error.message
    return truncation_message(cell.sample.prompt_tokens, cell.sample.prompt_tokens_target or 0)


def _turn(prompt: SizedPrompt) -> Turn:
    return Turn(prompt.messages, prompt.target_tokens)


def _first_error(samples: Sequence[RequestSample]) -> str | None:
    return next((sample.error.message for sample in samples if sample.error is not None), None)


def _rejects_stream_options(sample: RequestSample) -> bool:
    error = sample.error
    return (
        error is not None
        and error.kind == "http"
        and error.http_status in (400, 422)
        and "stream_options" in error.message
    )


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
