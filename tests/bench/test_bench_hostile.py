"""Hostile and broken servers: every request ends within its timeout, classified, in bounded memory.

The server (``hostile_server.py``) runs in its own process on 127.0.0.1 and writes raw bytes,
so each case is what the client would meet on the wire.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile_server import SCENARIOS

from app.bench.result import RequestSample
from app.bench.stream.request import stream_chat
from app.bench.transport.endpoint import ChatEndpoint, chat_completions_url, make_http_client

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TIMEOUT_S = 3.0
# Time to start, connect and close around the request's own timeout.
ENDS_WITHIN_S = TIMEOUT_S + 2.0
MAX_TOKENS = 16
MESSAGES = [{"role": "user", "content": "count to four"}]
ANSWER = " one two three four"


@dataclass(frozen=True)
class Expect:
    kind: str | None  # None: the request is ok
    says: str = ""  # in the error message, or in usage_ignored for an ok request
    tokens_from: str | None = None  # "usage" or "chunks" for an ok request
    answer: str | None = ANSWER


EXPECTED: dict[str, Expect] = {
    "endless_tokens": Expect("protocol", "token chunks for max_tokens=16"),
    "endless_tokens_slowly": Expect("protocol", "token chunks for max_tokens=16"),
    "endless_empty_deltas": Expect("protocol", "MiB of body"),
    "endless_role_chunks": Expect("protocol", "MiB of body"),
    "endless_comments": Expect("protocol", "MiB of body"),
    "endless_blank_lines": Expect("protocol", "MiB of body"),
    "endless_line": Expect("protocol", "MiB of body"),
    "endless_event": Expect("protocol", "MiB of body"),
    "endless_error_body": Expect("http", "HTTP 500: xxx"),
    "endless_tool_call": Expect("protocol", "token chunks for max_tokens=16"),
    "endless_tool_calls_by_index": Expect("protocol", "token chunks for max_tokens=16"),
    "negative_completion_tokens": Expect(None, "completion_tokens -5 is negative", "chunks"),
    "negative_prompt_tokens": Expect(None, "prompt_tokens -100 is negative", "usage"),
    "huge_completion_tokens": Expect(None, "1e+30 is implausibly large", "chunks"),
    "boolean_completion_tokens": Expect(None, "'True' is not a number", "chunks"),
    "string_completion_tokens": Expect(None, "'4' is not a number", "chunks"),
    "fractional_completion_tokens": Expect(None, "3.5 is not a whole number", "chunks"),
    "completion_tokens_over_max": Expect(None, "over the max_tokens=16", "chunks"),
    "zero_completion_tokens": Expect(None, "0 completion tokens for 4 token chunks", "chunks"),
    "gzip_stream": Expect(None, tokens_from="usage"),
    "deflate_stream": Expect(None, tokens_from="usage"),
    "broken_gzip": Expect("protocol", "could not decode the gzip body"),
    "redirect_302": Expect("http", "HTTP 302: redirected to http://127.0.0.1:1/v1/chat"),
    "redirect_307": Expect("http", "HTTP 307: redirected to"),
    "rate_limited": Expect("http", "HTTP 429: slow down"),
    "json_not_stream": Expect("protocol", "answered with application/json, not an event stream"),
    "html_page": Expect("protocol", "answered with text/html, not an event stream"),
    "held_open_after_done": Expect(None, tokens_from="usage"),
    "hang_before_headers": Expect("timeout", "no complete answer within 3 s"),
    "hang_after_headers": Expect("timeout", "no complete answer within 3 s"),
    "hang_mid_stream": Expect("timeout", "no complete answer within 3 s"),
    "slowloris": Expect("timeout", "no complete answer within 3 s"),
    "cut_mid_stream": Expect("connection_cut"),
    "cut_mid_chunk": Expect("connection_cut"),
    "garbage_instead_of_http": Expect("connection_cut"),
    "bad_chunk_size": Expect("connection_cut"),
    "headers_then_close": Expect("no_output", "without any content"),
    "chunk_size_line_too_long": Expect("connection_cut", "chunk-size line longer than"),
    "chunk_size_overflow": Expect("connection_cut", "not a hex number of 1-16 digits"),
    "chunk_without_crlf": Expect("connection_cut", "not followed by CRLF"),
    "last_chunk_missing_before_done": Expect("connection_cut", "before the last chunk"),
    "body_shorter_than_length": Expect("connection_cut", "bytes before the body's end"),
    "chunk_extensions": Expect(None, tokens_from="chunks"),
    "trailers": Expect(None, tokens_from="chunks"),
    "chunk_split_across_reads": Expect(None, tokens_from="chunks"),
    # Everything up to [DONE] arrived: the answer is whole, the connection is not reused.
    "last_chunk_missing": Expect(None, tokens_from="chunks"),
    "error_inside_stream": Expect("stream_error", "out of memory"),
    "deeply_nested_event": Expect(None, tokens_from="chunks"),
    "huge_integer_usage": Expect(None, tokens_from="chunks"),
    "nan_usage": Expect(None, "nan is not a whole number", "chunks"),
    "invalid_utf8": Expect(None, tokens_from="chunks", answer="\ufffd\ufffd"),
    "cr_line_endings": Expect(None, tokens_from="chunks"),
    "tokens_after_done": Expect(None, tokens_from="chunks"),
    "one_byte_pieces": Expect(None, tokens_from="chunks"),
}


@pytest.fixture(scope="module")
def hostile_url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(HERE / "hostile_server.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{line.split()[1]}"
    finally:
        process.kill()
        process.wait()


def measure(base_url: str, scenario: str) -> tuple[RequestSample, float]:
    async def run() -> RequestSample:
        async with make_http_client(
            api_key=None, connect_timeout_s=TIMEOUT_S, request_timeout_s=TIMEOUT_S
        ) as http:
            endpoint = ChatEndpoint(
                http=http,
                url=chat_completions_url(base_url),
                model=scenario,
                request_timeout_s=TIMEOUT_S,
            )
            return await stream_chat(endpoint, MESSAGES, MAX_TOKENS)

    started = time.monotonic()
    sample = asyncio.run(run())
    return sample, time.monotonic() - started


def test_the_corpus_is_large_and_every_case_has_an_expectation() -> None:
    assert len(SCENARIOS) >= 30
    assert set(SCENARIOS) == set(EXPECTED)


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_hostile_stream_ends_in_time_and_is_classified(hostile_url: str, scenario: str) -> None:
    expect = EXPECTED[scenario]
    sample, elapsed_s = measure(hostile_url, scenario)
    assert elapsed_s < ENDS_WITHIN_S, f"{scenario} took {elapsed_s:.1f} s"
    if expect.kind is None:
        assert sample.ok, sample.error
        assert sample.token_count_source == expect.tokens_from
        assert expect.says in (sample.usage_ignored or ""), sample.usage_ignored
        if not expect.says:
            assert sample.usage_ignored is None
        assert sample.answer == expect.answer
        # Counted from what arrived when usage is not believed: never negative or huge.
        assert sample.output_tokens is not None and 1 <= sample.output_tokens <= MAX_TOKENS
        assert sample.decode_tps is None or sample.decode_tps < 1e7
    else:
        assert not sample.ok
        assert sample.error is not None
        assert sample.error.kind == expect.kind, sample.error
        assert expect.says in sample.error.message, sample.error.message
        assert len(sample.error.message) < 70 * 1024
    # What a result keeps is bounded whatever arrived.
    assert len(sample.answer) <= 4000 and len(sample.itl_ms) <= 2048
    assert len(sample.model_dump_json()) < 200 * 1024


def test_a_body_held_open_after_done_does_not_count_as_request_time(hostile_url: str) -> None:
    sample, elapsed_s = measure(hostile_url, "held_open_after_done")
    assert sample.ok and sample.output_tokens == 4
    # The server holds the body for 1 s after [DONE]: neither the request's time nor the
    # client's wait includes it.
    assert sample.end_ms is not None and sample.end_ms < 500, sample
    assert elapsed_s < 0.9


def test_a_redirect_names_its_target_and_is_not_followed(hostile_url: str) -> None:
    sample, _ = measure(hostile_url, "redirect_307")
    assert sample.error is not None and sample.error.http_status == 307
    assert "does not follow redirects" in sample.error.message


ENDLESS_CLIENT = """
import asyncio, json, re, sys
from pathlib import Path
sys.path.insert(0, {here!r})
from app.bench.transport.endpoint import ChatEndpoint, chat_completions_url, make_http_client
from app.bench.stream.request import stream_chat

async def run():
    async with make_http_client(api_key=None, connect_timeout_s=5, request_timeout_s=12) as http:
        endpoint = ChatEndpoint(http=http, url=chat_completions_url({url!r}),
                                model="endless_tokens", request_timeout_s=12)
        return await stream_chat(endpoint, [{{"role": "user", "content": "go"}}], 10_000_000)

sample = asyncio.run(run())
# This process's own high-water mark (ru_maxrss would include the parent it forked from).
status = Path("/proc/self/status").read_text()
peak_kib = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
print(json.dumps({{"kind": sample.error.kind if sample.error else None,
                  "chunks": sample.token_chunks, "peak_mib": peak_kib / 1024,
                  "result_bytes": len(sample.model_dump_json())}}))
"""


def test_an_endless_stream_keeps_the_clients_memory_bounded(hostile_url: str) -> None:
    """Tokens as fast as the client reads them, for 12 s, with a max_tokens that never stops
    them: the client's peak memory stays under 200 MB and the result stays small."""
    script = ENDLESS_CLIENT.format(here=str(REPO), url=hostile_url)
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"\nendless stream: {report}")
    assert report["kind"] == "timeout"
    assert report["chunks"] > 10_000  # it did read a lot
    assert report["peak_mib"] < 200
    assert report["result_bytes"] < 200 * 1024
