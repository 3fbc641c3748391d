"""A ramp level run for a time (`level_seconds`): each stream sends requests until the
time is up, in this event loop and over worker processes alike; bad values are refused
by their field and their flag."""

from __future__ import annotations

from typing import Any

import pytest
from bench_support import fake_plan, run_with_server
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer
from pydantic import ValidationError

from app.bench import BenchResult, run_benchmark
from app.bench.plan import MAX_LEVEL_REQUESTS, BenchPlan
from app.bench.stages.ramp import QUICKEST_REQUEST_S, level_turns
from app.cli import main
from tests.bench.test_bench_shards import two_per_process  # noqa: F401 (fixture)

# About 20 + 8 x 5 = 60 ms a request at one stream, more at two.
MODEL = "fake?ttft_ms=20&itl_ms=5&tokens=8"
SECONDS = 1.0
ONE_REQUEST_MS = 150


def timed_run(**overrides: Any) -> BenchResult:
    async def body(server: FakeOpenAIServer) -> BenchResult:
        plan = fake_plan(server, MODEL, level_seconds=SECONDS, **overrides)
        return await run_benchmark(plan)

    return run_with_server(body)


def check_level_ran_for_its_time(result: BenchResult, streams: int) -> None:
    assert result.outcome == "ok", result.outcome_error
    assert result.concurrency is not None
    level = next(lv for lv in result.concurrency.levels if lv.concurrency == streams)
    start = min(s.send_offset_ms for s in level.samples)
    sends = sorted(s.send_offset_ms - start for s in level.samples)
    # Far more requests than the plan's rounds (1 per stream), as many as the time allows:
    # every stream keeps sending until the second is up, and none starts after it.
    assert len(level.samples) >= streams * 5, len(level.samples)
    assert sends[-1] < SECONDS * 1000, sends[-1]
    # And the streams stopped only when the time was up: the last answer ended less than
    # one request (60-100 ms here) before it (the time runs from the streams' start, a
    # little before the first send).
    ends = [s.send_offset_ms + (s.end_ms or 0) - start for s in level.samples]
    assert max(ends) >= SECONDS * 1000 - ONE_REQUEST_MS, max(ends)


def test_each_stream_sends_until_the_time_is_up() -> None:
    result = timed_run(concurrency_levels=[1, 2])
    for streams in (1, 2):
        check_level_ran_for_its_time(result, streams)


def test_a_level_over_worker_processes_stops_at_its_time_too(
    two_per_process: list[int],  # noqa: F811
) -> None:
    result = timed_run(concurrency_levels=[4])
    assert two_per_process == [2]  # the level of four ran over two processes
    check_level_ran_for_its_time(result, 4)


def test_the_requests_prepared_cover_the_time_at_the_quickest_request() -> None:
    plan = BenchPlan(base_url="http://127.0.0.1:1/v1", model="m", level_seconds=10)
    # 100 ms at one stream: at most a hundred in ten seconds, and one more.
    assert level_turns(plan, 4, quickest_ms=100.0) == 101
    # No request timed: prepared for the quickest the client assumes.
    assert level_turns(plan, 1, quickest_ms=None) == round(10 / QUICKEST_REQUEST_S) + 1
    # However quick the server, a level prepares at most MAX_LEVEL_REQUESTS.
    assert level_turns(plan, 256, quickest_ms=0.01) * 256 <= MAX_LEVEL_REQUESTS
    # A level run for a number of requests keeps its rounds.
    rounds = BenchPlan(base_url="http://127.0.0.1:1/v1", model="m", requests_per_stream=3)
    assert level_turns(rounds, 4, quickest_ms=100.0) == 3


@pytest.mark.parametrize("seconds", [0.5, 0, -1, 3601, float("inf"), float("nan")])
def test_a_time_out_of_bounds_is_refused_by_its_field(seconds: float) -> None:
    with pytest.raises(ValidationError) as refused:
        BenchPlan(base_url="http://127.0.0.1:1/v1", model="m", level_seconds=seconds)
    assert [error["loc"] for error in refused.value.errors()] == [("level_seconds",)]


def test_the_cli_refuses_a_time_out_of_bounds_by_its_flag() -> None:
    args = ["bench", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"]
    result = CliRunner().invoke(main, [*args, "--level-seconds", "0.5"])
    assert result.exit_code == 2, result.output
    assert "--level-seconds" in result.output and "1<=x<=3600" in result.output
