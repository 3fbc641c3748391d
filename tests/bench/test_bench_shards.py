"""Wide ramp levels spread over worker processes: same samples, same result, same timing."""

from __future__ import annotations

from typing import Any

import pytest
from bench_support import fake_plan, run_with_server
from fake_openai_server import FakeOpenAIServer

from app.bench import BenchResult, run_benchmark, shards
from app.bench.result import ConcurrencyLevel
from app.bench.shards import Turn, run_sharded, shard_count
from app.bench.transport.endpoint import ChatEndpoint, chat_completions_url

TTFT_MS = 40
MODEL = f"fake?ttft_ms={TTFT_MS}&itl_ms=2&tokens=6"
SECRET = "sk-shard-secret-456"


@pytest.fixture
def two_per_process(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Levels above 2 streams are sharded, over up to 3 processes whatever the machine."""
    monkeypatch.setattr(shards, "STREAMS_PER_PROCESS", 2)
    monkeypatch.setattr(shards, "PROCESSES_PER_CPU", 1)
    monkeypatch.setattr(shards, "usable_cpus", lambda: 3)
    calls: list[int] = []
    original = shards.run_sharded

    async def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["shards"])
        return await original(*args, **kwargs)

    monkeypatch.setattr("app.bench.stages.ramp.run_sharded", spy)
    return calls


def ramp_run(**overrides: Any) -> tuple[BenchResult, FakeOpenAIServer]:
    async def body(server: FakeOpenAIServer) -> tuple[BenchResult, FakeOpenAIServer]:
        plan = fake_plan(server, MODEL, api_key=SECRET, **overrides)
        return await run_benchmark(plan), server

    return run_with_server(body)


def test_shard_count_keeps_narrow_levels_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "usable_cpus", lambda: 4)
    assert shard_count(1, per_process=32) == 1
    assert shard_count(32, per_process=32) == 1
    assert shard_count(33, per_process=32) == 2
    assert shard_count(256, per_process=32) == 8
    assert shard_count(1024, per_process=32) == 8  # at most two processes per CPU
    monkeypatch.setattr(shards, "usable_cpus", lambda: 1)
    assert shard_count(256, per_process=32) == 2


def test_sharded_level_returns_every_sample_with_true_ttft(two_per_process: list[int]) -> None:
    result, server = ramp_run(concurrency_levels=[1, 6], requests_per_stream=2)
    assert result.outcome == "ok", result.outcome_error
    assert two_per_process == [3]  # only the 6-stream level left this process
    ramp = result.concurrency
    assert ramp is not None and ramp.stopped_reason is None
    wide = ramp.levels[1]
    assert (wide.concurrency, wide.requests, wide.errors) == (6, 12, 0)
    assert len(wide.samples) == 12
    assert [s.send_offset_ms for s in wide.samples] == sorted(
        s.send_offset_ms for s in wide.samples
    )
    for sample in wide.samples:
        assert sample.ok and sample.output_tokens == 6
        assert sample.ttft_ms is not None and TTFT_MS - 1 <= sample.ttft_ms < TTFT_MS + 60
    # Offsets share the parent's origin: the wide level starts after the 1-stream one ended.
    narrow_end = max(s.send_offset_ms + (s.end_ms or 0) for s in ramp.levels[0].samples)
    assert min(s.send_offset_ms for s in wide.samples) > narrow_end
    assert wide.duration_s < 2.0
    # The workers sent the API key (passed in memory) and it is in no result.
    chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in chat)
    assert SECRET not in result.model_dump_json()


def test_sharded_level_has_the_shape_of_an_unsharded_one(
    two_per_process: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    sharded, _ = ramp_run(concurrency_levels=[4], requests_per_stream=2)
    monkeypatch.setattr(shards, "STREAMS_PER_PROCESS", 64)
    plain, _ = ramp_run(concurrency_levels=[4], requests_per_stream=2)
    assert two_per_process == [2]
    assert sharded.concurrency is not None and plain.concurrency is not None
    a, b = sharded.concurrency.levels[0], plain.concurrency.levels[0]
    assert set(a.model_dump()) == set(b.model_dump()) == set(ConcurrencyLevel.model_fields)
    assert (a.requests, a.errors) == (b.requests, b.errors) == (8, 0)
    for level in (a, b):
        assert level.ttft_ms.p50 is not None and TTFT_MS - 1 <= level.ttft_ms.p50 < TTFT_MS + 40
        assert level.output_tps and level.request_rate
    assert [s.name for s in sharded.steps] == [s.name for s in plain.steps]
    assert {s.status for s in sharded.steps} == {"ok"}


def test_run_sharded_stamps_against_the_callers_origin() -> None:
    async def body(server: FakeOpenAIServer) -> list[Any]:
        endpoint = ChatEndpoint(
            http=None,  # type: ignore[arg-type]
            url=chat_completions_url(server.base_url),
            model=MODEL,
            request_timeout_s=5,
        )
        streams = [[Turn([{"role": "user", "content": f"stream {i}"}])] for i in range(5)]
        return await run_sharded(endpoint, streams, 8, shards=2, api_key=None, connect_timeout_s=2)

    by_stream = run_with_server(body)
    assert [len(stream) for stream in by_stream] == [1] * 5
    samples = [sample for stream in by_stream for sample in stream]
    assert len(samples) == 5 and all(sample.ok for sample in samples)
    # Spawned workers take a while to start but leave the barrier together; the bound is
    # loose because two cores may also be running other tests and the server.
    offsets = sorted(sample.send_offset_ms for sample in samples)
    assert offsets[0] > 0 and offsets[-1] - offsets[0] < 200
