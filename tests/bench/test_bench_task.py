"""The task stage and the long length for the needle, against the fake server."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from bench_support import fake_plan, run_with_server
from fake_openai_server import FakeOpenAIServer

from app.bench import BenchResult, run_benchmark
from app.bench.plan import BenchPlan
from app.bench.quality.task_spec import TaskSpec
from app.bench.stages.long_length import long_length_for, served_context
from app.bench.stages.needle import repeat_depths
from app.bench.stages.task import MAX_ANSWER_CHARS, MAX_FAILURES_KEPT

SCRIPTED = "fake?answer=scripted&ttft_ms=5&itl_ms=1"


def task(*prompts: tuple[str, dict[str, Any]]) -> TaskSpec:
    return TaskSpec.model_validate(
        {"name": "t", "prompts": [{"prompt": p, "check": c} for p, c in prompts]}
    )


def run(model: str, *, server_context: int | None = None, **overrides: Any) -> BenchResult:
    async def body(server: FakeOpenAIServer) -> BenchResult:
        server.max_model_len = server_context
        return await run_benchmark(fake_plan(server, model, **overrides))

    return run_with_server(body)


def test_checks_score_answers_right_and_wrong_on_purpose() -> None:
    spec = task(
        ("Capital? [[reply: Paris]]", {"contains": "Paris"}),
        ("Sum? [[reply: 5]]", {"number": 4, "tolerance": 0.5}),
        (
            'JSON? [[reply: {"year": 1887}]]',
            {"json_schema": {"properties": {"year": {"const": 1887}}}},
        ),
        ("Code? [[reply: def f(x): return x]]", {"regex": r"def\s+g\("}),
        ("Town? [[reply: Kelsby]]", {"equals": "Kelsby"}),
    )
    result = run(SCRIPTED, task=spec, repeat=2)
    assert result.outcome == "ok"  # no minimum pass rate asked for: the score is reported
    scored = result.task
    assert scored is not None
    assert (scored.passed, scored.total, scored.pass_rate, scored.errors) == (6, 10, 0.6, 0)
    assert [p.passed for p in scored.prompts] == [2, 0, 2, 0, 2]
    assert [(f.prompt_index, f.repeat, f.answer) for f in scored.failures] == [
        (1, 0, "5"),
        (1, 1, "5"),
        (3, 0, "def f(x): return x"),
        (3, 1, "def f(x): return x"),
    ]
    assert scored.failures[0].reason == "5 is not within 0.5 of 4"
    # Speed measured on the task's own prompts, next to the synthetic lengths.
    assert all(p.ttft_ms is not None and p.ttft_ms >= 5 for p in scored.prompts)
    assert all(p.prompt_tokens for p in scored.prompts)
    assert scored.ttft_ms is not None and scored.ttft_ms >= 5
    assert result.steps[-1].name == "task:t" and result.steps[-1].status == "ok"
    dumped = result.model_dump(mode="json")["task"]
    assert {"pass_rate": 0.6, "passed": 6, "total": 10}.items() <= dumped.items()


def test_minimum_pass_rate_makes_a_low_score_a_wrong_answer() -> None:
    spec = task(("Sum? [[reply: 5]]", {"number": 4}), ("Name? [[reply: Ann]]", {"equals": "Ann"}))
    low = run(SCRIPTED, task=spec, repeat=1, task_min_pass_rate=0.75)
    assert low.outcome == "wrong_answer"
    assert low.outcome_error == "task 't' passed 1 of 2 (50%), below the required 75%"
    assert run(SCRIPTED, task=spec, repeat=1, task_min_pass_rate=0.5).outcome == "ok"


def test_failed_requests_count_as_failures_and_fail_the_step() -> None:
    too_long = "word " * 400 + "[[reply: Paris]]"
    spec = task(
        ("Capital? [[reply: Paris]]", {"contains": "Paris"}), (too_long, {"contains": "Paris"})
    )
    # Everything else fits the server's 350-token context; the second task prompt does not.
    result = run(SCRIPTED + "&max_context=350", task=spec, repeat=2, concurrency_levels=[1])
    scored = result.task
    assert scored is not None
    assert (scored.passed, scored.total, scored.errors) == (2, 4, 2)
    assert [(f.prompt_index, f.reason, f.answer) for f in scored.failures] == [
        (1, "no answer", ""),
        (1, "no answer", ""),
    ]
    assert "maximum context length is 350 tokens" in (scored.failures[0].error or "")
    step = result.steps[-1]
    assert (step.name, step.status) == ("task:t", "failed")
    assert "maximum context length" in (step.error or "")


def test_a_smoke_failure_skips_the_task() -> None:
    spec = task(("Capital? [[reply: Paris]]", {"contains": "Paris"}))
    result = run("fake?http_status=500", task=spec)
    assert result.outcome == "load_failure" and result.task is None
    assert (result.steps[-1].name, result.steps[-1].status) == ("task:t", "skipped")


def test_failures_and_answers_are_capped() -> None:
    long_reply = "x" * (MAX_ANSWER_CHARS + 100)
    spec = task(*[(f"Q{i} [[reply: {long_reply}]]", {"equals": "y"}) for i in range(30)])
    result = run(SCRIPTED + "&per_chunk=1", task=spec, repeat=2, max_tokens=16)
    scored = result.task
    assert scored is not None and scored.total == 60 and scored.passed == 0
    assert len(scored.failures) == MAX_FAILURES_KEPT and scored.failures_dropped == 10
    assert all(len(f.answer) <= MAX_ANSWER_CHARS for f in scored.failures)


def test_a_server_whose_context_allows_32k_gets_a_needle_length() -> None:
    result = run(
        SCRIPTED,
        server_context=40_000,
        lengths=[300],
        add_long_length=True,
        needle="auto",
        repeat=1,
    )
    assert [length.length for length in result.lengths] == [300, 32_768]
    assert [(n.length, n.accuracy, len(n.cells)) for n in result.needle] == [(32_768, 1.0, 3)]
    assert "length 32,768 added for the needle (the context allows 40,000 tokens)" in result.notes


@pytest.mark.parametrize(
    ("server_context", "note"),
    [
        (8192, "no needle ran: the context of 8,192 tokens allows no length past 16,384"),
        (None, "the context length is unknown (the server reported no max_model_len)"),
    ],
)
def test_without_room_for_a_needle_the_run_says_why(server_context: int | None, note: str) -> None:
    result = run(
        SCRIPTED, server_context=server_context, add_long_length=True, needle="auto", repeat=1
    )
    assert [length.length for length in result.lengths] == [300]
    assert result.needle == []
    assert any(note in text for text in result.notes), result.notes


def test_the_plans_own_context_wins_over_the_servers() -> None:
    result = run(
        SCRIPTED,
        server_context=8192,
        add_long_length=True,
        needle="auto",
        context_length=20_000,
        repeat=1,
        concurrency_levels=[1],
    )
    assert [length.length for length in result.lengths] == [300, 20_000]


def test_long_length_rules() -> None:
    plan = BenchPlan(base_url="http://127.0.0.1:1/v1", model="m", lengths=[1024, 4096])
    assert long_length_for(plan, 131_072)[0] == 32_768
    assert long_length_for(plan, 16_385)[0] == 16_385
    assert long_length_for(plan, 16_384)[0] is None
    asked_long = plan.model_copy(update={"lengths": [1024, 65_536]})
    assert long_length_for(asked_long, 131_072) == (None, "")
    no_needle = plan.model_copy(update={"needle": False})
    assert long_length_for(no_needle, 131_072) == (None, "")


def test_needle_repeats_move_every_depth_and_wrap() -> None:
    cells = repeat_depths([0.1, 0.5, 0.9], 3)
    assert [round_ for round_, _ in cells] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert [depth for _, depth in cells] == [
        0.1,
        0.5,
        0.9,
        0.2111,
        0.6111,
        0.0111,
        0.3222,
        0.7222,
        0.1222,
    ]
    assert repeat_depths([0.5], 1) == [(0, 0.5)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"data": [{"id": "m", "max_model_len": 65536}]}', 65536),
        (b'{"data": [{"id": "other", "max_model_len": 4096}]}', 4096),  # the only entry
        (b'{"data": [{"id": "a", "max_model_len": 1}, {"id": "b", "max_model_len": 2}]}', None),
        (b'{"data": [{"id": "m", "max_model_len": "65536"}]}', None),
        (b'{"data": [{"id": "m", "max_model_len": true}]}', None),
        (b'{"data": [{"id": "m", "max_model_len": -5}]}', None),
        (b'{"data": {"id": "m"}}', None),
        (b"[1, 2]", None),
        (b"not json", None),
    ],
)
def test_served_context_reads_only_a_plain_positive_max_model_len(
    body: bytes, expected: int | None
) -> None:
    async def main() -> int | None:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            writer.write(head.encode() + body)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            async with httpx.AsyncClient() as http:
                return await served_context(http, f"http://127.0.0.1:{port}/v1", "m")
        finally:
            server.close()

    assert asyncio.run(main()) == expected


def test_a_closed_port_gives_no_context() -> None:
    async def main() -> int | None:
        async with httpx.AsyncClient() as http:
            return await served_context(http, "http://127.0.0.1:9/v1", "m")

    assert asyncio.run(main()) is None
