"""Measurements of single streamed requests against injected timings and server quirks.

Timing tolerance: a measured interval may not be shorter than the injected one (the fake
server sleeps at least that long) and may exceed it by at most 5 ms or 5 %, whichever is
larger: loopback, request parsing and the event loop's 1 ms timer granularity.

The CPUs are shared with whatever else runs on the machine, and a process descheduled for
a few milliseconds adds them to whatever it was timing. Such delays only ever add time, so
a timing check gets up to three attempts and one clean attempt passes it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
from collections.abc import Callable

import httpx
import pytest
from bench_support import run_with_server
from fake_openai_server import FakeOpenAIServer

from app.bench.result import RequestSample
from app.bench.stream.request import stream_chat
from app.bench.stream.sse import SSEParser
from app.bench.stream.state import StreamState
from app.bench.transport.endpoint import ChatEndpoint, chat_completions_url, make_http_client

MESSAGES = [{"role": "user", "content": "one two three four five"}]


def within(measured: float | None, injected: float) -> bool:
    assert measured is not None
    slack = max(5.0, 0.05 * injected)
    return injected - 0.5 <= measured <= injected + slack


def close_to(measured: float | None, expected: float, fraction: float = 0.05) -> bool:
    assert measured is not None
    return abs(measured - expected) <= fraction * expected


async def measure(
    server: FakeOpenAIServer,
    model: str,
    *,
    timeout_s: float = 5.0,
    api_key: str | None = None,
    base_url: str | None = None,
    warm: bool = True,
) -> RequestSample:
    http = make_http_client(
        api_key=api_key, connect_timeout_s=2, request_timeout_s=timeout_s, max_connections=4
    )
    endpoint = ChatEndpoint(
        http=http,
        url=chat_completions_url(base_url or server.base_url),
        model=model,
        request_timeout_s=timeout_s,
        secret=api_key,
    )
    try:
        if warm:  # the first request on a fresh client pays for connection setup
            await stream_chat(endpoint, MESSAGES, 4)
            endpoint.model = model
        return await stream_chat(endpoint, MESSAGES, 16)
    finally:
        await http.aclose()


def sample_for(model: str, **options: object) -> RequestSample:
    return run_with_server(lambda server: measure(server, model, **options))  # type: ignore[arg-type]


def timed_sample(
    model: str, timings_hold: Callable[[RequestSample], bool], attempts: int = 3
) -> RequestSample:
    """The first of up to ``attempts`` samples whose timings hold (else the last one)."""
    for _ in range(attempts):
        sample = sample_for(model)
        if timings_hold(sample):
            return sample
    return sample


def test_ttft_decode_and_tpot_match_injected_timings() -> None:
    def timings_hold(sample: RequestSample) -> bool:
        return (
            within(sample.ttft_ms, 60)
            and within(sample.e2e_ms, 60 + 10 * 10)
            and close_to(sample.tpot_ms, 10.0)
            and close_to(sample.decode_tps, 100.0)
            # One gap can be short by as much as the previous chunk was late.
            and all(abs(gap - 10) <= 5 for gap in sample.itl_ms)
        )

    sample = timed_sample("fake?ttft_ms=60&itl_ms=10&tokens=11", timings_hold)
    assert sample.ok, sample.error
    assert timings_hold(sample), sample
    assert sample.output_tokens == 11
    assert sample.token_count_source == "usage"
    assert len(sample.itl_ms) == 10
    assert len(sample.chunk_offsets_ms) == sample.token_chunks == 11
    assert sample.prompt_tokens == 5 + 3


def test_role_only_first_chunk_is_not_a_token() -> None:
    def timings_hold(sample: RequestSample) -> bool:
        return within(sample.ttft_ms, 80) and within(sample.first_content_ms, 80)

    sample = timed_sample("fake?ttft_ms=80&itl_ms=5&tokens=4&role=first&role_ms=0", timings_hold)
    assert sample.first_chunk_ms is not None and sample.first_chunk_ms < 20
    assert timings_hold(sample), sample


def test_several_tokens_per_chunk_are_counted_from_usage() -> None:
    def timings_hold(sample: RequestSample) -> bool:
        # 14 tokens after the first one over the 80 ms between the first and last chunk
        # (gaps long enough that a millisecond of scheduling is within the 5 %).
        return close_to(sample.decode_tps, 14 / 0.080) and close_to(sample.tpot_ms, 80 / 14)

    sample = timed_sample("fake?ttft_ms=40&itl_ms=20&tokens=15&per_chunk=3", timings_hold)
    assert sample.token_chunks == 5
    assert sample.output_tokens == 15
    assert sample.token_count_source == "usage"
    assert timings_hold(sample), sample


def test_without_usage_tokens_are_counted_from_chunks_and_say_so() -> None:
    sample = sample_for("fake?ttft_ms=20&itl_ms=5&tokens=12&per_chunk=3&usage=none")
    assert sample.ok
    assert sample.output_tokens == 4
    assert sample.token_count_source == "chunks"
    assert sample.prompt_tokens is None


@pytest.mark.parametrize("channel", ["reasoning_content", "reasoning", "tool_calls"])
def test_reasoning_and_tool_call_deltas_count_as_first_token(channel: str) -> None:
    sample = timed_sample(
        f"fake?ttft_ms=50&itl_ms=5&tokens=6&channel={channel}", lambda s: within(s.ttft_ms, 50)
    )
    assert sample.ok, sample.error
    assert within(sample.ttft_ms, 50)
    assert sample.first_content_ms is None
    if channel != "tool_calls":
        assert sample.reasoning.startswith(" t0")


def test_first_content_after_reasoning_is_recorded_separately() -> None:
    def timings_hold(sample: RequestSample) -> bool:
        return within(sample.ttft_ms, 40) and within(sample.first_content_ms, 40 + 4 * 10)

    sample = timed_sample("fake?ttft_ms=40&itl_ms=10&tokens=8&reasoning_tokens=4", timings_hold)
    assert timings_hold(sample), sample
    assert sample.reasoning == " t0é t1é t2é t3é"
    assert sample.answer == " t4é t5é t6é t7é"


QUIRKS = [
    "done=0",
    "usage=finish&done=0",
    "usage=every",
    "comments=1",
    "crlf=1",
    "multiline=1",
    "split=1&crlf=1",
    "split=1&multiline=1&comments=1&done=0&usage=finish",
    "role=with_token",
    "role=none",
]


@pytest.mark.parametrize("quirk", QUIRKS)
def test_stream_quirks_give_the_same_answer_and_counts(quirk: str) -> None:
    sample = sample_for(f"fake?ttft_ms=10&itl_ms=2&tokens=8&{quirk}")
    assert sample.ok, sample.error
    assert sample.output_tokens == 8
    assert sample.token_count_source == "usage"
    assert sample.token_chunks == 8
    assert sample.answer == "".join(f" t{i}é" for i in range(8))
    assert sample.finish_reason == "length"
    assert sample.prompt_tokens == 8
    if "comments=1" in quirk:
        assert sample.sse_comments >= 8


def test_error_object_inside_a_200_stream_fails_the_request() -> None:
    sample = sample_for("fake?ttft_ms=10&itl_ms=2&tokens=8&error_after=3")
    assert not sample.ok
    assert sample.error is not None
    assert sample.error.kind == "stream_error"
    assert sample.error.message == "injected engine failure"
    assert sample.token_chunks == 3


def test_http_error_keeps_the_json_message_and_status() -> None:
    sample = sample_for("fake?http_status=500")
    assert not sample.ok
    assert sample.error is not None
    assert sample.error.kind == "http"
    assert sample.error.http_status == 500
    assert sample.error.message == "HTTP 500: injected failure with status 500"


def test_connection_cut_mid_stream_is_classified() -> None:
    sample = sample_for("fake?ttft_ms=10&itl_ms=2&tokens=8&cut_after=3&done=0")
    assert not sample.ok
    assert sample.error is not None
    assert sample.error.kind == "connection_cut"
    assert sample.token_chunks == 3


def test_server_that_never_answers_times_out_at_the_deadline() -> None:
    sample = sample_for("fake?hang=1", timeout_s=0.3)
    assert not sample.ok
    assert sample.error is not None
    assert sample.error.kind == "timeout"
    assert sample.end_ms is not None
    # The deadline covers the whole call, including the wait before the request was sent.
    assert 299 <= (sample.client_wait_ms or 0.0) + sample.end_ms < 1000


def test_unreachable_server_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    sample = sample_for("fake", base_url=f"http://127.0.0.1:{closed_port}/v1", warm=False)
    assert not sample.ok
    assert sample.error is not None
    assert sample.error.kind == "connect"
    assert sample.error.message == "connection refused"


def name_not_resolved() -> httpx.ConnectError:
    error = httpx.ConnectError("[Errno -2] Name or service not known")
    error.__cause__ = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return error


@pytest.mark.parametrize(
    ("make_error", "message"),
    [
        (name_not_resolved, "host name not resolved (Name or service not known)"),
        (lambda: httpx.ConnectTimeout("timed out"), "connect timed out"),
    ],
)
def test_connection_that_never_opens_is_a_connect_error(
    make_error: Callable[[], Exception], message: str
) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise make_error()

    async def ask() -> RequestSample:
        async with httpx.AsyncClient(transport=httpx.MockTransport(fail)) as http:
            endpoint = ChatEndpoint(
                http=http,
                url="http://gpu-box:8000/v1/chat/completions",
                model="m",
                request_timeout_s=5,
            )
            return await stream_chat(endpoint, MESSAGES, 4)

    sample = asyncio.run(ask())
    assert sample.error is not None
    assert (sample.error.kind, sample.error.message) == ("connect", message)


def test_stream_that_ends_without_tokens_is_no_output() -> None:
    sample = sample_for("fake?tokens=0")
    assert not sample.ok
    assert sample.error is not None
    assert sample.error.kind == "no_output"


def test_api_key_is_sent_as_bearer_header() -> None:
    async def body(server: FakeOpenAIServer) -> None:
        await measure(server, "fake", api_key="sk-test-123", warm=False)
        assert server.requests[-1].headers["authorization"] == "Bearer sk-test-123"
        sent = server.requests[-1].json()
        assert sent["temperature"] == 0
        assert sent["stream"] is True
        assert sent["stream_options"] == {"include_usage": True}

    run_with_server(body)


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://[::1]:9/proxy/v1", "http://[::1]:9/proxy/v1/chat/completions"),
    ],
)
def test_chat_url_from_base_url(base_url: str, expected: str) -> None:
    assert chat_completions_url(base_url) == expected


# -- what the events of a stream say, piece by piece, against arrival stamps ---------------


def chunk(delta: dict[str, object] | None = None, **fields: object) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta or {}}], **fields}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def taken(pieces: list[bytes], max_tokens: int = 16) -> StreamState:
    """Each piece stamped with its position (1, 2, ...), as _read_events stamps them."""
    parser, state = SSEParser(), StreamState(max_tokens=max_tokens)
    for stamp, piece in enumerate(pieces, start=1):
        for event in parser.feed(piece):
            state.take(event, stamp)
    for event in parser.close():
        state.take(event, len(pieces) + 1)
    return state


ROLE_ONLY = chunk({"role": "assistant", "content": ""})
USAGE = b'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}\n\n'


@pytest.mark.parametrize(
    ("first", "answer", "reasoning"),
    [
        (chunk({"content": "hi"}), "hi", ""),
        (chunk({"reasoning_content": "hm"}), "", "hm"),
        (chunk({"reasoning": "hm"}), "", "hm"),
        (chunk({"tool_calls": [{"index": 0, "function": {"name": "f"}}]}), "", ""),
        (b'data:{"choices":[{"delta":{"content":"hi"}}]}\n\n', "hi", ""),  # no space
        (b'data: {"choices":[{"text":"hi"}]}\n\n', "hi", ""),  # completions style
    ],
)
def test_first_token_is_the_first_content_reasoning_or_tool_delta(
    first: bytes, answer: str, reasoning: str
) -> None:
    empty = [ROLE_ONLY, chunk({"content": ""}), chunk({"content": None}), chunk()]
    state = taken([*empty, first, chunk({"content": "!"}), USAGE, b"data: [DONE]\n\n"])
    assert state.first_event_ns == 1
    assert list(state.token_ns) == [5, 6]  # neither the role-only nor an empty delta counts
    assert state.first_content_ns == (5 if answer else 6)
    assert state.content.text() == answer + "!"
    assert state.reasoning.text() == reasoning
    assert (state.prompt_tokens, state.completion_tokens, state.done) == (7, 3, True)


def test_a_token_chunk_split_across_reads_is_stamped_when_complete() -> None:
    token = chunk({"content": "hi"})
    for cut in range(1, len(token)):
        state = taken([ROLE_ONLY, token[:cut], token[cut:]])
        assert list(state.token_ns) == [3], cut


def test_events_arriving_in_one_read_share_its_stamp() -> None:
    state = taken([ROLE_ONLY + chunk({"content": "a"}) + chunk({"content": "b"})])
    assert state.first_event_ns == 1
    assert list(state.token_ns) == [1, 1]


def test_an_error_object_in_the_stream_is_taken_as_an_error() -> None:
    state = taken([chunk({"content": "a"}), b'data: {"error": {"message": "boom"}}\n\n'])
    assert state.error is not None
    assert (state.error.kind, state.error.message) == ("stream_error", "boom")


def test_a_request_leaves_no_cyclic_garbage() -> None:
    """Levels run with the garbage collector off (shards.quiet_gc); memory must not grow."""

    async def body(server: FakeOpenAIServer) -> int:
        http = make_http_client(api_key=None, connect_timeout_s=2, request_timeout_s=5)
        endpoint = ChatEndpoint(
            http=http, url=chat_completions_url(server.base_url), model="fake", request_timeout_s=5
        )
        try:
            await stream_chat(endpoint, MESSAGES, 4)  # opens the connection
            gc.collect()
            gc.disable()
            try:
                for _ in range(5):
                    assert (await stream_chat(endpoint, MESSAGES, 8)).ok
                return gc.collect()
            finally:
                gc.enable()
        finally:
            await http.aclose()

    assert run_with_server(body) == 0
