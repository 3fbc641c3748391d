"""Answers that arrive in bursts have no decode speed, and a ramp level says what load it
held: each burst shape against the fake server (one chunk, several tokens per chunk,
chunks flushed together, a buffering proxy in between), a level whose server is slow to
close out its answers, and one whose server holds the stream open after the answer.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bench_support import buffering_proxy, fake_plan, run_with_server
from fake_openai_server import FakeOpenAIServer

from app.bench import BenchResult, RequestSample, run_benchmark
from app.bench.plan import MIN_LEVEL_ROUNDS, BenchPlan
from app.bench.result import ConcurrencyRamp
from app.bench.stages.ramp import held_concurrency, level_summary, stream_throughputs
from app.bench.stages.verdict import held_notes
from app.bench.stream.arrival import arrival_of
from app.jobs.to_record import level_point


def bench(model: str, **overrides: Any) -> BenchResult:
    async def body(server: FakeOpenAIServer) -> BenchResult:
        return await run_benchmark(fake_plan(server, model, **overrides))

    return run_with_server(body)


def timed_samples(result: BenchResult) -> list[RequestSample]:
    samples = [s for length in result.lengths for s in length.samples]
    assert result.concurrency is not None
    return samples + [s for level in result.concurrency.levels for s in level.samples]


def contract(result: BenchResult) -> dict[str, Any]:
    """The result as `servebook bench --json` writes it."""
    return json.loads(result.model_dump_json())


def test_a_steady_stream_is_timed_and_its_levels_held() -> None:
    result = bench("fake?tokens=16&itl_ms=3", max_tokens=16)
    assert result.outcome == "ok", result.outcome_error
    for sample in timed_samples(result):
        assert sample.decode_measurable is True and sample.burst is None
        assert sample.decode_tps is not None and sample.tpot_ms is not None
        # A loaded machine can read two chunks at once now and then; not most of them.
        assert sample.token_chunks == 16 and sample.arrivals >= 12
        assert sample.tokens_per_chunk == 1.0
        assert sample.last_chunk_share is not None and sample.last_chunk_share < 0.2
    body = contract(result)
    for level in body["concurrency"]["levels"]:
        held = level["held_concurrency"]
        assert set(held) == {"mean", "min"} and held["min"] >= 1
        assert level["decode_measurable"] is True


def assert_not_measurable(result: BenchResult, shape: str, says: str) -> None:
    for sample in timed_samples(result):
        assert sample.decode_tps is None and sample.tpot_ms is None, sample
        assert sample.decode_measurable is False and sample.burst == shape, sample
    assert result.outcome == "inconclusive"
    assert result.outcome_error is not None and says in result.outcome_error, result.outcome_error
    body = contract(result)
    assert body["outcome"] == "inconclusive"
    for length in body["lengths"]:
        assert length["decode_tps"] is None and length["decode_measurable"] is False
        for sample in length["samples"]:
            assert sample["decode_tps"] is None and sample["decode_measurable"] is False
    for level in body["concurrency"]["levels"]:
        assert level["decode_tps"]["count"] == 0 and level["decode_measurable"] is False


def test_a_whole_answer_in_one_chunk_has_no_decode() -> None:
    result = bench("fake?tokens=16&per_chunk=16", max_tokens=16)
    assert_not_measurable(result, "one_piece", "in one piece")
    sample = result.lengths[0].samples[0]
    assert sample.token_chunks == sample.arrivals == 1
    assert sample.tokens_per_chunk == 16.0 and sample.last_chunk_share == 1.0


def test_several_tokens_per_chunk_is_named_as_a_stream_interval() -> None:
    result = bench("fake?tokens=32&per_chunk=8&itl_ms=10", max_tokens=32)
    assert_not_measurable(result, "packed", "--stream-interval")
    sample = result.lengths[0].samples[0]
    # A client read late can take two of them at once; never more arrivals than chunks.
    assert sample.token_chunks == 4 and 3 <= sample.arrivals <= 4
    assert sample.tokens_per_chunk == 8.0
    assert sample.longest_gap_ms is not None and sample.longest_gap_ms > 0


def test_chunks_flushed_together_are_one_arrival() -> None:
    # The server makes a chunk every 10 ms but writes them 8 at a time.
    result = bench("fake?tokens=32&burst=8&itl_ms=10", max_tokens=32)
    assert_not_measurable(result, "merged", "proxy")
    sample = result.lengths[0].samples[0]
    assert sample.token_chunks == 32 and sample.arrivals <= 4


def test_a_buffering_proxy_between_client_and_server_is_detected() -> None:
    async def body(server: FakeOpenAIServer) -> BenchResult:
        async with buffering_proxy(server.port) as port:
            plan = fake_plan(server, "fake?tokens=16&itl_ms=5", max_tokens=16)
            plan = plan.model_copy(update={"base_url": f"http://127.0.0.1:{port}/v1"})
            return await run_benchmark(plan)

    result = run_with_server(body)
    assert_not_measurable(result, "one_piece", "buffering proxy")


def test_a_level_whose_client_cannot_keep_its_streams_busy_says_so() -> None:
    # Each finished request stalls the client's event loop for 150 ms (a progress report
    # that blocks): both streams wait, and the level holds far fewer than two in flight.
    def slow_report(step: str, done: int, total: int) -> None:
        if step.startswith("concurrency") and done:
            time.sleep(0.15)

    async def body(server: FakeOpenAIServer) -> BenchResult:
        plan = fake_plan(
            server,
            "fake?tokens=8&itl_ms=2&ttft_ms=10",
            concurrency_levels=[2],
            requests_per_stream=4,
        )
        return await run_benchmark(plan, on_progress=slow_report)

    result = run_with_server(body)
    assert result.concurrency is not None
    (level,) = result.concurrency.levels
    assert level.held_concurrency is not None
    assert level.held_concurrency.mean < 1.8 and level.held_short is True
    assert any(note.startswith("concurrency 2 held") for note in result.notes), result.notes
    body = contract(result)["concurrency"]["levels"][0]
    assert body["held_short"] is True and body["held_concurrency"]["mean"] < 1.8


def test_a_stream_is_not_held_open_after_the_answer() -> None:
    # The server sends [DONE] 300 ms after the usage and closes the body 300 ms after that:
    # the client ends each request at the usage chunk and sends the next one at once.
    result = bench(
        "fake?tokens=16&itl_ms=5&done_delay_ms=300&linger_ms=300",
        concurrency_levels=[2],
        requests_per_stream=3,
    )
    assert result.outcome == "ok", result.outcome_error
    assert result.concurrency is not None
    (level,) = result.concurrency.levels
    assert level.held_concurrency is not None and not level.held_short
    assert level.held_concurrency.mean >= 1.8
    by_send = sorted(level.samples, key=lambda s: s.send_offset_ms)
    for sample in by_send:
        assert sample.end_ms is not None and sample.e2e_ms is not None
        assert sample.end_ms - sample.e2e_ms < 300, sample
    # Six requests on two streams took far less than the 600 ms each would have held.
    assert level.duration_s < 3 * 0.6


def span(start: float, end: float) -> RequestSample:
    return RequestSample(ok=True, send_offset_ms=start, end_ms=end - start, ttft_ms=10.0)


def test_held_concurrency_of_streams_that_waited_for_each_other() -> None:
    # Two streams asked; the second sent only once the first had finished.
    waited = held_concurrency([[span(0, 100), span(100, 200)], [span(200, 300)]])
    assert waited is not None and waited.mean == 1.0 and waited.min == 1
    # Two streams side by side, each handing over between requests in no time.
    side = held_concurrency([[span(0, 100), span(100, 200)], [span(0, 150), span(150, 200)]])
    assert side is not None and side.mean == 2.0 and side.min == 2
    # One stream idle for half of the steady span.
    idle = held_concurrency([[span(0, 400)], [span(0, 100), span(300, 400)]])
    assert idle is not None and idle.mean == 1.5 and idle.min == 1


def test_a_level_that_did_not_hold_is_marked_in_the_result_and_record() -> None:
    samples = [[span(0, 100), span(100, 200)], [span(200, 300)]]
    level = level_summary(
        2, [s for stream in samples for s in stream], None, None, held=held_concurrency(samples)
    )
    assert level.held_short is True
    ramp = ConcurrencyRamp(length=300, prompt_tokens_target=200, levels=[level])
    (note,) = held_notes(ramp)
    assert "concurrency 2 held 1.00" in note
    point = level_point(300, level)
    assert point is not None
    assert point["details"]["held_short"] is True
    assert point["details"]["held_concurrency"] == {"mean": 1.0, "min": 1}


def test_burst_shapes_from_stamps() -> None:
    ms = 1_000_000
    steady = arrival_of([i * 5 * ms for i in range(10)], 10, 100, 90)
    assert steady.measurable and steady.arrivals == 10 and steady.longest_gap_ms == 5.0
    flushed_at_end = arrival_of([0, 5 * ms, 10 * ms, 15 * ms], 40, 400, 100)
    assert flushed_at_end.burst == "last_piece" and flushed_at_end.last_chunk_share == 0.75
    short = arrival_of([0, 5 * ms], 2, 10, 5)
    assert short.burst == "short" and not short.measurable


def test_ramp_levels_send_enough_requests_for_a_band() -> None:
    plan = BenchPlan(base_url="http://127.0.0.1:1/v1", model="m", lengths=[300], max_tokens=16)
    assert plan.level_rounds() == MIN_LEVEL_ROUNDS == 8
    assert plan.model_copy(update={"repeat": 12}).level_rounds() == 12
    assert plan.model_copy(update={"requests_per_stream": 2}).level_rounds() == 2


def test_each_stream_gives_its_view_of_the_level_throughput() -> None:
    def answered(start: float, end: float, tokens: int) -> RequestSample:
        return RequestSample(
            ok=True, send_offset_ms=start, end_ms=end - start, output_tokens=tokens
        )

    fast = [answered(0, 500, 50), answered(500, 1000, 50)]
    slow = [answered(0, 1000, 50), answered(1000, 2000, 50)]
    assert stream_throughputs([fast, slow]) == [200.0, 100.0]
