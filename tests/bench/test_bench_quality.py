"""The quality checks against the fake server: needle grid, safe ceiling, tool calls."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import httpx
import pytest
from bench_support import fake_plan, run_with_server
from fake_openai_server import FakeOpenAIServer

from app.bench import BenchResult, run_benchmark
from app.bench.probes import NotMeasuredProbe
from app.bench.quality.needle_grid import GRID_DEPTHS, grid_lengths, grid_prompt, judge_answer
from app.bench.quality.stats import wilson_interval
from app.bench.stages.context import RunContext
from app.bench.stages.quality_context import AUTO_GRID_MAX, decide_quality_context
from app.bench.stream.state import MAX_KEPT_TEXT, MAX_TOOL_CALLS, StreamState
from app.bench.stream.tokenize import ServerTokenizer
from app.bench.transport.endpoint import StreamClients


def quality_run(model: str, *, tokenize: bool = True, **overrides: Any) -> BenchResult:
    async def body(server: FakeOpenAIServer) -> BenchResult:
        server.tokenize = tokenize
        settings: dict[str, Any] = {
            "needle_grid": True,
            "measure_speed": False,
            "context_length": 16384,
            "repeat": 2,
        }
        settings.update(overrides)
        return await run_benchmark(fake_plan(server, model, **settings))

    return run_with_server(body)


def test_grid_lengths_double_from_4096_and_end_at_the_context() -> None:
    assert grid_lengths(65536) == [4096, 8192, 16384, 32768, 65536]
    assert grid_lengths(40000) == [4096, 8192, 16384, 32768, 40000]
    assert grid_lengths(4096) == [4096]
    assert grid_lengths(3000) == [3000]


@pytest.mark.parametrize(
    "depths", [list(GRID_DEPTHS), [0.0, 1.0], [0.5], [0.2, 0.4, 0.6, 0.8, 1.0]]
)
def test_a_server_that_misses_above_a_length_gets_that_ceiling_at_every_depth_layout(
    depths: list[float],
) -> None:
    result = quality_run("fake?answer=needle&needle_cutoff=9000", grid_depths=depths)
    grid = result.needle_grid
    assert grid is not None
    assert grid.lengths == [4096, 8192, 16384]
    assert grid.token_counting == "server_tokenizer"
    assert grid.safe_context_tokens == 8192
    assert {cell.depth for cell in grid.cells} == set(depths)
    for cell in grid.cells:
        assert cell.repeats == 2
        assert cell.found == (2 if cell.length <= 8192 else 0), cell
        for trial in cell.trials:
            # Counted by the server's tokenizer: within the sizing margin of the length.
            assert trial.prompt_tokens is not None
            assert 0.95 * (cell.length - 16) <= trial.prompt_tokens <= cell.length - 16
    assert grid.confidence is not None
    assert grid.confidence.trials == 2 * 2 * len(depths)
    assert 0 < grid.confidence.accuracy_low < 1
    assert result.outcome == "ok", result.outcome_error


def test_a_server_that_never_finds_it_has_no_ceiling() -> None:
    grid = quality_run("fake?answer=needle&needle_cutoff=100", context_length=8192).needle_grid
    assert grid is not None and grid.safe_context_tokens is None and grid.confidence is None
    assert all(cell.found == 0 for cell in grid.cells)
    assert grid.cells[0].trials[0].reason.startswith("missed")


def test_every_trial_has_its_own_needle_and_filler_and_the_same_seed_repeats_them() -> None:
    first = quality_run("fake?answer=needle", context_length=8192).needle_grid
    again = quality_run("fake?answer=needle", context_length=8192).needle_grid
    other = quality_run("fake?answer=needle", context_length=8192, seed=7).needle_grid
    assert first and again and other
    keys = [t.passkey for c in first.cells for t in c.trials]
    assert len(set(keys)) == len(keys)
    assert keys == [t.passkey for c in again.cells for t in c.trials]
    assert keys != [t.passkey for c in other.cells for t in c.trials]
    one, two = grid_prompt(1, 300, 0.5), grid_prompt(2, 300, 0.5)
    assert one.text != two.text and one.needle != two.needle


def test_without_a_tokenize_endpoint_lengths_are_estimated_and_said_so() -> None:
    result = quality_run("fake?answer=needle", tokenize=False, context_length=8192)
    assert result.needle_grid is not None
    assert result.needle_grid.token_counting == "estimated"
    assert any("estimated" in note and "/tokenize" in note for note in result.notes)


def test_a_server_echoing_the_needle_prompt_fails_with_the_reason() -> None:
    result = quality_run("fake?answer=needle&echo=1", context_length=8192, max_tokens=64)
    grid = result.needle_grid
    assert grid is not None and grid.safe_context_tokens is None
    assert all(t.reason and t.reason.startswith("echo") for c in grid.cells for t in c.trials)
    assert result.outcome == "wrong_answer"
    assert "echoed the needle prompt" in (result.outcome_error or "")


def test_an_answer_quoting_the_needle_is_an_echo_even_with_the_passkey() -> None:
    prompt = grid_prompt(3, 200, 0.5)
    assert judge_answer(prompt.passkey, prompt) == (True, None)
    assert judge_answer(f"The passkey is {prompt.passkey}.", prompt) == (True, None)
    found, reason = judge_answer(prompt.needle, prompt)
    assert not found and reason and reason.startswith("echo")


def tool_run(model: str, **overrides: Any) -> BenchResult:
    settings: dict[str, Any] = {"needle_grid": False, "tool_calls": True, "context_length": 8192}
    settings.update(overrides)
    return quality_run(model, **settings)


def test_valid_tool_calls_at_short_and_long_context() -> None:
    result = tool_run("fake")
    check = result.tool_calls
    assert check is not None
    assert (check.valid, check.total, check.valid_rate) == (40, 40, 1.0)
    assert {(t.schema_name, t.context) for t in check.trials} == {
        (name, context)
        for name in ("flat", "nested", "enum", "multi")
        for context in ("short", "long")
    }
    long_tokens = [t.prompt_tokens for t in check.trials if t.context == "long"]
    assert all(tokens and tokens > 3000 for tokens in long_tokens)
    assert check.band is not None and check.band.high == 1.0 and check.band.low > 0.9
    assert result.outcome == "ok"


def test_thirty_percent_malformed_calls_give_seventy_percent_within_the_band() -> None:
    check = tool_run("fake?malformed_share=0.3").tool_calls
    assert check is not None and check.total == 40
    assert check.valid_rate == pytest.approx(0.7, abs=0.001)
    assert check.band is not None
    assert check.band.low < 0.7 < check.band.high
    assert (check.band.low, check.band.high) == pytest.approx(wilson_interval(28, 40), abs=1e-4)
    reasons = {t.reason for t in check.trials if not t.valid}
    assert reasons == {"malformed: the arguments are not JSON"}


def test_tool_calls_written_as_plain_text_fail_with_the_reason() -> None:
    result = tool_run("fake?tool_text=1")
    check = result.tool_calls
    assert check is not None and check.valid == 0
    assert all(t.reason and t.reason.startswith("plain text") for t in check.trials)
    assert result.outcome == "wrong_answer"
    assert "plain text" in (result.outcome_error or "")


def test_tool_calls_kept_from_a_stream_stay_bounded() -> None:
    state = StreamState(max_tokens=16)
    for index in range(100):
        call = {"index": index, "function": {"name": "n" * 1000, "arguments": "x" * 10_000}}
        state.tool_calls.add([call])
    calls = state.tool_calls.calls()
    assert len(calls) == MAX_TOOL_CALLS
    assert all(len(name) <= 200 and len(arguments) == MAX_KEPT_TEXT for name, arguments in calls)


def test_the_default_plan_runs_the_grid_only_past_the_needle_threshold() -> None:
    short = quality_run("fake?answer=needle", needle_grid="auto", context_length=16384)
    assert short.needle_grid is None
    long = quality_run("fake?answer=needle", needle_grid="auto", context_length=20000, repeat=1)
    assert long.needle_grid is not None
    assert long.needle_grid.lengths == [4096, 8192, 16384, 20000]
    assert [step.name for step in long.steps] == ["smoke", "needle_grid"]


def test_the_default_plan_stops_the_grid_at_64k_and_says_so() -> None:
    async def body(server: FakeOpenAIServer) -> list[str]:
        plan = fake_plan(server, "fake", needle_grid="auto", context_length=1_000_000)
        async with httpx.AsyncClient() as http:
            probe = NotMeasuredProbe("not asked")
            run = RunContext(plan, http, StreamClients.sharing(http), probe, None)
            await decide_quality_context(run)
        assert run.grid_context == AUTO_GRID_MAX
        return run.notes

    notes = run_with_server(body)
    assert any("stopped at 65,536 tokens" in note for note in notes)


def test_a_tokenize_endpoint_that_drips_or_floods_is_given_up_on() -> None:
    async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        flood = b"flood" in (await reader.read(200))
        with contextlib.suppress(ConnectionError):
            while True:
                data = b"9" * 65536 if flood else b"9"
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
                await asyncio.sleep(0 if flood else 0.2)

    async def main() -> tuple[int | None, int | None, bool | None, float]:
        server = await asyncio.start_server(drip, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with httpx.AsyncClient() as http:
            started = time.monotonic()
            slow = ServerTokenizer(http, f"http://127.0.0.1:{port}/v1", "m", timeout_s=1.0)
            dripped = await slow.count([{"role": "user", "content": "drip"}])
            big = ServerTokenizer(http, f"http://127.0.0.1:{port}/v1", "flood", timeout_s=30.0)
            flooded = await big.count([{"role": "user", "content": "flood"}])
            took = time.monotonic() - started
        server.close()
        return dripped, flooded, slow.available, took

    dripped, flooded, available, took = asyncio.run(main())
    assert dripped is None and flooded is None and available is False
    assert took < 20
