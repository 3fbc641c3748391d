"""The whole procedure against the fake server: steps, ramp, needle, classification, safety."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from typing import Any

import httpx
import pytest
from bench_support import fake_plan, run_with_server
from fake_openai_server import FakeOpenAIServer

from app.bench import (
    BenchResult,
    HostNotAllowedError,
    TargetUnreachable,
    check_url_allowed,
    run_benchmark,
    run_benchmark_sync,
)
from app.bench.plan import BenchPlan

VLLM_METRICS = 'vllm:kv_cache_usage_perc{{engine="0",model_name="m"}} {kv}\n'


def benchmark(model: str, **overrides: Any) -> tuple[BenchResult, list[tuple[str, int, int]]]:
    progress: list[tuple[str, int, int]] = []

    async def body(server: FakeOpenAIServer) -> BenchResult:
        server.metrics_texts = [VLLM_METRICS.format(kv=kv) for kv in (0.1, 0.6, 0.2)]
        plan = fake_plan(server, model, **overrides)
        return await run_benchmark(plan, on_progress=lambda *event: progress.append(event))

    return run_with_server(body), progress


def test_full_run_measures_every_step_in_order() -> None:
    result, progress = benchmark_with_metrics(
        "fake?ttft_ms=15&itl_ms=2&tokens=10&answer=needle", lengths=[300, 800], needle=True
    )
    assert result.outcome == "ok", result.outcome_error
    assert [step.name for step in result.steps] == [
        "smoke",
        "warmup",
        "length:300",
        "length:800",
        "concurrency:1",
        "concurrency:2",
        "needle:300",
        "needle:800",
    ]
    assert all(step.status == "ok" for step in result.steps)
    assert result.smoke is not None and result.smoke.streamed
    assert result.token_count_source == "usage"
    for length in result.lengths:
        assert length.status == "ok"
        assert len(length.samples) == 3
        assert length.truncated is False
        assert length.prompt_tokens_reported is not None
        assert (
            0.97 * length.prompt_tokens_target
            <= length.prompt_tokens_reported
            <= length.prompt_tokens_target
        )
        # Exact timing is checked in test_bench_stream; here only that it is the median TTFT.
        assert length.ttft_ms is not None and 15 <= length.ttft_ms < 40
        assert length.decode_tps is not None
        assert length.memory is not None and length.memory.kv_cache_usage_peak is not None
    assert [needle.accuracy for needle in result.needle] == [1.0, 1.0]
    # Three repeats of three depths: the first at the plan's depths, the others shifted.
    cells = result.needle[0].cells
    assert [cell.depth for cell in cells[:3]] == [0.1, 0.5, 0.9]
    assert len(cells) == 9 and len({cell.depth for cell in cells}) == 9
    assert len({cell.passkey for cell in cells}) == 9
    assert result.needle[0].memory is not None and result.needle[0].memory.measured
    steps_seen = list(dict.fromkeys(name for name, _, _ in progress))
    assert steps_seen == [step.name for step in result.steps]
    assert ("length:300", 3, 3) in progress
    assert BenchResult.model_validate_json(result.model_dump_json()) == result


def benchmark_with_metrics(
    model: str, **overrides: Any
) -> tuple[BenchResult, list[tuple[str, int, int]]]:
    progress: list[tuple[str, int, int]] = []

    async def body(server: FakeOpenAIServer) -> BenchResult:
        server.metrics_texts = [VLLM_METRICS.format(kv=kv) for kv in (0.1, 0.6, 0.2)]
        plan = fake_plan(
            server,
            model,
            metrics_url=server.root_url + "/metrics",
            probe_interval_s=0.02,
            **overrides,
        )

        async def on_progress(step: str, done: int, total: int) -> None:
            progress.append((step, done, total))

        return await run_benchmark(plan, on_progress=on_progress)

    return run_with_server(body), progress


def test_concurrency_levels_report_throughput_and_latency_side_by_side() -> None:
    result, _ = benchmark("fake?ttft_ms=20&itl_ms=5&tokens=10", concurrency_levels=[1, 2, 4])
    assert result.concurrency is not None
    levels = result.concurrency.levels
    assert [level.concurrency for level in levels] == [1, 2, 4]
    assert result.concurrency.stopped_reason is None
    for level in levels:
        assert level.requests == level.concurrency
        assert level.errors == 0
        assert (
            level.ttft_ms.p50 is not None
            and level.ttft_ms.p90 is not None
            and level.ttft_ms.p99 is not None
        )
        assert level.tpot_ms.p50 is not None
        assert level.output_tps is not None
    # Fixed per-request timing: four streams deliver about four times the tokens per second.
    assert 2.5 * levels[0].output_tps < levels[2].output_tps < 4.5 * levels[0].output_tps


def test_ramp_stops_when_p90_ttft_passes_the_limit() -> None:
    result, _ = benchmark(
        "fake?ttft_ms=20&itl_ms=5&tokens=4&ttft_per_inflight_ms=30",
        concurrency_levels=[1, 2, 4, 8],
        ttft_limit_ms=55,
    )
    ramp = result.concurrency
    assert ramp is not None
    assert [level.concurrency for level in ramp.levels] == [1, 2, 4]
    assert [level.over_ttft_limit for level in ramp.levels] == [False, False, True]
    assert ramp.stopped_reason is not None and "exceeds the limit of 55 ms" in ramp.stopped_reason
    skipped = [step for step in result.steps if step.name == "concurrency:8"]
    assert skipped[0].status == "skipped"
    assert result.outcome == "ok"


def test_ramp_stops_when_errors_appear() -> None:
    result, _ = benchmark(
        "fake?ttft_ms=10&itl_ms=1&tokens=4&max_inflight=2", concurrency_levels=[1, 2, 4, 8]
    )
    ramp = result.concurrency
    assert ramp is not None
    assert [level.concurrency for level in ramp.levels] == [1, 2, 4]
    assert ramp.levels[-1].errors == 2
    assert ramp.stopped_reason == (
        "errors at concurrency 4: HTTP 503: server busy: more than 2 requests in flight"
    )
    # Half the requests at 4 failed: past the 10% a run may lose, so not ok.
    assert result.outcome == "load_failure"
    assert "failed at concurrency 4" in (result.outcome_error or "")


def test_silent_truncation_is_caught_and_flagged() -> None:
    result, _ = benchmark(
        "fake?ttft_ms=5&itl_ms=1&tokens=4&max_context=500&overflow=truncate",
        lengths=[300, 1000, 2000],
        needle=True,
    )
    assert result.outcome == "long_context_failure"
    short, truncated, skipped = result.lengths
    assert short.status == "ok" and short.truncated is False
    assert truncated.status == "failed" and truncated.truncated is True
    assert truncated.prompt_tokens_reported == 500
    assert truncated.error is not None and "truncated" in truncated.error
    assert skipped.status == "skipped"
    assert result.outcome_error == truncated.error
    assert [needle.length for needle in result.needle] == [300, 1000, 2000]
    assert result.needle[1].cells == [] and result.needle[1].accuracy is None


def test_long_input_refused_by_the_server_is_a_long_context_failure() -> None:
    result, _ = benchmark("fake?ttft_ms=5&itl_ms=1&tokens=4&max_context=500", lengths=[300, 1000])
    assert result.outcome == "long_context_failure"
    assert result.outcome_error is not None
    assert result.outcome_error.startswith(
        "HTTP 400: This model's maximum context length is 500 tokens"
    )
    assert result.lengths[1].samples[0].error is not None
    assert result.lengths[1].samples[0].error.http_status == 400


def test_missed_needle_is_a_wrong_answer() -> None:
    result, _ = benchmark("fake?ttft_ms=5&itl_ms=1&tokens=6", needle=True)
    assert result.outcome == "wrong_answer"
    assert result.needle[0].accuracy == 0.0
    assert result.outcome_error is not None and "missed at length 300" in result.outcome_error


def test_needle_runs_automatically_only_above_16k() -> None:
    plan = BenchPlan(base_url="http://127.0.0.1:1", model="m", lengths=[4096, 16384, 32768])
    assert plan.needle_lengths() == [32768]
    assert plan.model_copy(update={"needle": True}).needle_lengths() == [4096, 16384, 32768]
    assert plan.model_copy(update={"needle": False}).needle_lengths() == []


def closed_port() -> int:
    """A port that nothing listens on: bound to learn a free number, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unreachable_server_is_not_a_result() -> None:
    port = closed_port()
    progress: list[tuple[str, int, int]] = []

    async def body(server: FakeOpenAIServer) -> TargetUnreachable:
        plan = fake_plan(server, "fake").model_copy(update={"base_url": f"http://127.0.0.1:{port}"})
        with pytest.raises(TargetUnreachable) as caught:
            await run_benchmark(plan, on_progress=lambda *event: progress.append(event))
        return caught.value

    error = run_with_server(body)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    assert str(error) == f"could not connect to {url}: connection refused"
    assert (error.url, error.reason) == (url, "connection refused")
    # It gave up after the smoke request: no step past it was attempted, and the smoke
    # test itself is not drawn as finished (a bar at "smoke 1/1" before the error).
    assert progress == [("smoke", 0, 1)]


@pytest.mark.parametrize(
    ("model", "error"),
    [
        ("fake?http_status=404", "HTTP 404: injected failure with status 404"),
        ("fake?http_status=500", "HTTP 500: injected failure with status 500"),
        ("fake?http_status=503", "HTTP 503: injected failure with status 503"),
        ("fake?error_after=0", "injected engine failure"),
        ("fake?tokens=0", "the stream ended without any content, reasoning or tool-call delta"),
    ],
)
def test_server_that_answers_but_cannot_serve_is_a_load_failure(model: str, error: str) -> None:
    result, _ = benchmark(model)
    assert result.outcome == "load_failure"
    assert result.outcome_error == error
    assert result.steps[0].name == "smoke" and result.steps[0].status == "failed"
    assert {step.status for step in result.steps[1:]} == {"skipped"}
    assert result.lengths == [] and result.concurrency is None


def test_server_rejecting_stream_options_falls_back_to_chunk_counts() -> None:
    result, _ = benchmark("fake?ttft_ms=5&itl_ms=5&tokens=6&reject_stream_options=1&usage=none")
    assert result.outcome == "ok", result.outcome_error
    assert result.token_count_source == "chunks"
    assert any("stream_options" in note for note in result.notes)
    assert any("prompt lengths are estimates" in note for note in result.notes)
    assert result.lengths[0].truncated is None


def test_single_chunk_answer_is_reported_as_not_streamed() -> None:
    result, _ = benchmark("fake?ttft_ms=5&tokens=6&per_chunk=6")
    assert result.smoke is not None
    assert result.smoke.ok and not result.smoke.streamed
    assert result.smoke.note == "the answer arrived in a single chunk: the server did not stream"


def test_api_key_is_sent_but_never_serialised() -> None:
    secret = "sk-secret-value-123"

    async def body(server: FakeOpenAIServer) -> tuple[BenchResult, FakeOpenAIServer]:
        plan = fake_plan(server, "fake?ttft_ms=2&itl_ms=1&tokens=4", api_key=secret)
        return await run_benchmark(plan), server

    result, server = run_with_server(body)
    chat_requests = [
        request for request in server.requests if request.path.endswith("/chat/completions")
    ]
    assert chat_requests
    assert all(request.headers["authorization"] == f"Bearer {secret}" for request in chat_requests)
    assert secret not in result.model_dump_json()
    assert secret not in repr(result)
    assert "api_key" not in result.model_dump(mode="json")["plan"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://127.8.9.10:8000",
        "http://localhost:8000/v1",
        "http://[::1]:8000/v1",
        "http://[::ffff:127.0.0.1]:8000/v1",
        "https://LOCALHOST./v1",
    ],
)
def test_loopback_hosts_are_allowed(url: str) -> None:
    check_url_allowed(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5:8000/v1",
        "http://192.168.1.20:8000/v1",
        "http://0.0.0.0:8000/v1",
        "http://example.com/v1",
        "http://localhost.example.com/v1",
        "http://[2001:db8::1]:8000/v1",
        "ftp://127.0.0.1/v1",
        "127.0.0.1:8000",
    ],
)
def test_other_hosts_are_refused_with_a_clear_error(url: str) -> None:
    with pytest.raises(HostNotAllowedError):
        check_url_allowed(url)


def test_refused_before_any_request_and_allowed_when_listed() -> None:
    async def body(server: FakeOpenAIServer) -> None:
        for overrides in (
            {"base_url": "http://203.0.113.7:8000/v1"},
            {"metrics_url": "http://203.0.113.7:9400/metrics"},
        ):
            plan = fake_plan(server, "fake").model_copy(update=overrides)
            with pytest.raises(
                HostNotAllowedError, match="refusing to benchmark '203.0.113.7'.*ALLOWED_HOSTS"
            ):
                await run_benchmark(plan)
        assert server.requests == []

    run_with_server(body)
    check_url_allowed("http://gpu-box.internal:8000/v1", ["gpu-box.internal"])


def test_plan_validation() -> None:
    with pytest.raises(ValueError, match="must exceed the output tokens per request \\(128\\)"):
        BenchPlan(base_url="http://127.0.0.1:1", model="m", lengths=[100], max_tokens=128)
    plan = BenchPlan(
        base_url="http://127.0.0.1:1",
        model="m",
        lengths=[4096, 1024, 4096],
        concurrency_levels=[4, 1],
    )
    assert plan.lengths == [1024, 4096]
    assert plan.concurrency_levels == [1, 4]


def test_a_caller_supplied_client_carries_every_request() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        words = sum(len(message["content"].split()) for message in body["messages"])
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant"}}]},
            {"choices": [{"index": 0, "delta": {"content": "Hello"}}]},
            {"choices": [{"index": 0, "delta": {"content": " there"}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": words + 3, "completion_tokens": 2}},
        ]
        text = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
        return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})

    async def body() -> BenchResult:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
            plan = BenchPlan(
                base_url="http://127.0.0.1:9/v1",
                model="m",
                lengths=[300],
                max_tokens=16,
                concurrency_levels=[1, 4],
                requests_per_stream=2,
            )
            return await run_benchmark(plan, http=http)

    result = asyncio.run(body())
    # Two-token answers are too short to time: no decode, and no verdict on bursts either.
    assert result.outcome == "ok", result.outcome_error
    assert {s.burst for s in result.lengths[0].samples} == {"short"}
    assert result.concurrency is not None
    assert [level.requests for level in result.concurrency.levels] == [2, 8]
    assert result.lengths[0].prompt_tokens_reported is not None
    assert result.smoke is not None and result.smoke.sample.answer == "Hello there"


def test_sync_entry_point_for_callers_without_an_event_loop() -> None:
    loop = asyncio.new_event_loop()
    server = FakeOpenAIServer()
    loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        result = run_benchmark_sync(fake_plan(server, "fake?ttft_ms=5&itl_ms=5&tokens=6"))
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
    assert result.outcome == "ok", result.outcome_error
    assert result.lengths[0].ttft_ms is not None
