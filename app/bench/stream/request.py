"""One streaming chat-completions request, timed as bytes arrive, turned into a RequestSample.

Every piece of the body carries the ``perf_counter_ns`` time its bytes arrived: the
kernel's receive stamp on Linux, else the moment the event loop read them from the socket
(``app.bench.transport.stamped_socket``), not when httpx handed them over, since with many streams a
piece may wait behind other streams' chunks in between. The events completed by a piece
carry its stamp. The body is serialised before the clock starts, so JSON encoding of a
long prompt is not counted as server time.

Whatever the server sends, a request ends within its timeout and keeps bounded memory: the
body is read up to a size that the request's ``max_tokens`` sets, the event stream up to
``chunk_limit`` token chunks (``stream_state``), text up to ``MAX_KEPT_TEXT`` characters,
and an error body up to ``MAX_ERROR_BODY`` bytes.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from time import perf_counter_ns
from typing import Any

import httpx

from app.bench.metrics import decode_tokens_per_second, time_per_output_token_ms
from app.bench.result import ErrorKind, RequestError, RequestSample, ToolCallSeen
from app.bench.stream.arrival import arrival_of
from app.bench.stream.failures import transport_failure
from app.bench.stream.sse import SSEOverflow, SSEParser
from app.bench.stream.state import OutputOverrun, StreamState, error_message
from app.bench.transport.endpoint import ChatEndpoint, StampingClient
from app.bench.transport.pool import arrival_ns, body_reader
from app.bench.transport.stamped_stream import StampedStream

MAX_ERROR_BODY = 64 * 1024
# A sample stores the offsets and gaps of its first chunks only (every figure is computed
# from the counts and the first and last stamps), so a result stays small whatever the
# length of the answer.
MAX_STORED_CHUNKS = 2048
# The body of a stream may hold this much per requested token (a chunk with logprobs is a
# few kilobytes) and at least MIN_BODY_BYTES; past that the server is not answering this
# request and the stream is stopped.
BODY_BYTES_PER_TOKEN = 64 * 1024
MIN_BODY_BYTES = 1 << 20
# Once the answer is whole ([DONE], or the final usage chunk after the finish reason), the
# stream is not held open: the body's end is taken only if it has already arrived, so the
# connection goes back to the pool; else the connection is closed at once. Waiting for it
# (50 ms before, or a server's own delay in closing the response) kept the stream's next
# request from going out, and a level held fewer requests in flight than it asked for.
DONE_GRACE_S = 0.0
_CLOSED_STREAM = httpx.ByteStream(b"")
_NS_PER_US = 1000


def body_limit(max_tokens: int) -> int:
    return max(MIN_BODY_BYTES, BODY_BYTES_PER_TOKEN * max_tokens)


async def stream_chat(
    endpoint: ChatEndpoint,
    messages: list[dict[str, str]],
    max_tokens: int,
    *,
    prompt_tokens_target: int | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> RequestSample:
    """Send one streaming request and measure it; never raises for server misbehaviour.

    The clock starts as the request is handed to the socket: the transport's trace event
    just before that write, which follows it with no await in between (the event after
    the write comes only once the event loop has run every other ready task). Waiting for
    a connection, a TCP connect and the client's own scheduling are not server time; they
    are kept as ``client_wait_ms``. Under many concurrent streams the event loop runs the
    other streams between a request's start and its write, which would otherwise count
    as TTFT. The clock stops at ``[DONE]``, or at the body's end without one.
    """
    sent_at: list[int] = []

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event.endswith("send_request_body.started"):
            sent_at.append(perf_counter_ns())

    body = endpoint.body(messages, max_tokens, tools=tools)
    state = StreamState(max_tokens=max_tokens)
    headers_ns: int | None = None
    parser = SSEParser()
    called_ns = perf_counter_ns()
    response: httpx.Response | None = None
    try:
        try:
            async with asyncio.timeout(endpoint.request_timeout_s):
                response = await _open(endpoint.http, endpoint.url, body, trace)
                headers_ns = arrival_ns(response) or perf_counter_ns()
                state.error = await _status_error(response)
                if state.error is None:
                    await _read_events(response, parser, state)
                    state.error = state.error or _not_a_stream(response, state)
        finally:
            # Outside the timeout: the body's end is given back to the pool (or the
            # connection closed) whatever cut the request short.
            if response is not None:
                await response.aclose()
                # httpx's response and its stream refer to each other; without that cycle
                # everything the request made is freed at once, not by the garbage
                # collector, which is off while a level runs (see shards.quiet_gc).
                response.stream = _CLOSED_STREAM
    except TimeoutError:
        state.error = _failure(
            "timeout", f"no complete answer within {endpoint.request_timeout_s:g} s"
        )
    except httpx.DecodingError as exc:
        encoding = response.headers.get("content-encoding", "") if response else ""
        state.error = _failure("protocol", f"could not decode the {encoding} body: {exc}")
    except httpx.HTTPError as exc:
        state.error = transport_failure(exc)
    end_ns = state.done_ns or perf_counter_ns()
    sent_ns = sent_at[0] if sent_at else called_ns
    sample = _to_sample(state, parser, sent_ns, headers_ns, end_ns, endpoint, prompt_tokens_target)
    sample.client_wait_ms = _ms(called_ns, sent_ns) if sent_at else None
    if sample.error is not None:
        sample.error.message = endpoint.redact(sample.error.message)
    return sample


async def _open(http: httpx.AsyncClient, url: str, body: bytes, trace: Any) -> httpx.Response:
    if isinstance(http, StampingClient):
        return await http.open_stream(url, body, trace)
    request = http.build_request(
        "POST",
        url,
        content=body,
        headers={"Content-Type": "application/json"},
        extensions={"trace": trace},
    )
    return await http.send(request, stream=True)


async def _status_error(response: httpx.Response) -> RequestError | None:
    status = response.status_code
    if 300 <= status < 400:
        location = response.headers.get("location", "")[:200] or "no Location header"
        return RequestError(
            kind="http",
            message=(
                f"HTTP {status}: redirected to {location}; the benchmark does not follow "
                "redirects, give it the final URL"
            ),
            http_status=status,
        )
    if status >= 400 or status < 200:
        body = await _read_at_most(response, MAX_ERROR_BODY)
        return RequestError(kind="http", message=_http_error_text(status, body), http_status=status)
    return None


async def _read_at_most(response: httpx.Response, limit: int) -> bytes:
    body = bytearray()
    async for piece in response.aiter_raw():
        body += piece[: limit - len(body)]
        if len(body) >= limit:
            break
    return bytes(body)


def _http_error_text(status: int, body: bytes) -> str:
    text = body.decode("utf-8", errors="replace").strip()
    try:
        message = error_message(json.loads(text))
    except (ValueError, RecursionError):
        message = text or "(empty body)"
    return f"HTTP {status}: {message}"


def _not_a_stream(response: httpx.Response, state: StreamState) -> RequestError | None:
    """Why a 200 answer held no tokens, when its content type says it."""
    content_type = response.headers.get("content-type", "")
    if state.token_ns or state.first_event_ns is not None or "event-stream" in content_type:
        return None
    if not content_type:
        return None
    return _failure(
        "protocol",
        f"the server answered with {content_type[:80]}, not an event stream "
        "(does it support stream: true at this URL?)",
    )


def _ms(start_ns: int, end_ns: int | None) -> float | None:
    if end_ns is None:
        return None
    return _whole_us_in_ms(end_ns - start_ns)


def _whole_us_in_ms(ns: int) -> float:
    """``ns`` in milliseconds to the microsecond: the value of ``round(ns / 1e6, 3)``
    (but for an exact half microsecond, rounded to even), at half its cost; a sample
    holds one per token chunk, twice."""
    return round(ns / _NS_PER_US) / 1000


async def _read_events(response: httpx.Response, parser: SSEParser, state: StreamState) -> None:
    # Stamped when the bytes arrived (see app.bench.transport.stamped_socket), not when they are
    # parsed after the other streams' ready chunks.
    stream = response.extensions.get("network_stream")
    stamped = stream if isinstance(stream, StampedStream) else None
    read = _body_reads(response)
    limit = body_limit(state.max_tokens)
    received = 0
    try:
        while piece := await read():
            if state.done:
                continue
            received += len(piece)
            if received > limit:
                state.error = _failure(
                    "protocol",
                    f"more than {limit >> 20} MiB of body for max_tokens="
                    f"{state.max_tokens}; the stream was stopped",
                )
                return
            arrived_ns = (stamped.arrived_ns if stamped else None) or perf_counter_ns()
            for event in parser.feed(piece):
                state.take(event, arrived_ns)
                if state.error is not None:
                    return
                if state.done:
                    # The body's end is taken if it is already here, so the connection goes
                    # back to the pool; a server that has not closed the response yet gets
                    # DONE_GRACE_S (none), then the connection is closed.
                    if stamped is not None:
                        stamped.end_reads_by(asyncio.get_running_loop().time() + DONE_GRACE_S)
                    break
    except httpx.TransportError:
        # After [DONE] the answer is whole: a body's end held open or cut short costs
        # only the connection, which is closed rather than reused.
        if not state.done:
            raise
    except (SSEOverflow, OutputOverrun) as overrun:
        state.error = _failure("protocol", str(overrun))
        return
    if state.done:
        return
    closed_ns = perf_counter_ns()
    try:
        for event in parser.close():
            state.take(event, closed_ns)
    except OutputOverrun as overrun:
        state.error = _failure("protocol", str(overrun))


def _body_reads(response: httpx.Response) -> Callable[[], Awaitable[bytes]]:
    """What to await for the body's next buffer; ``b""`` at its end.

    An identity body from the stamping transport is read straight from its exchange, one
    buffer per received segment (every chunk that segment completed); anything else goes
    through httpx's iterators.
    """
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    identity = encoding in ("", "identity")
    exchange = body_reader(response)
    if exchange is not None and identity and not response.is_stream_consumed:
        return exchange.read
    if response.is_stream_consumed:  # a transport that hands over a body already read
        pieces: AsyncIterator[bytes] = _whole(response.content)
    elif identity:
        pieces = response.aiter_raw()
    else:
        # Asked for identity, sent compressed anyway: decoded piece by piece.
        pieces = response.aiter_bytes()
    return functools.partial(anext, pieces, b"")


async def _whole(content: bytes) -> AsyncIterator[bytes]:
    yield content


def _failure(kind: ErrorKind, message: str) -> RequestError:
    return RequestError(kind=kind, message=message)


def _to_sample(
    state: StreamState,
    parser: SSEParser,
    sent_ns: int,
    headers_ns: int | None,
    end_ns: int,
    endpoint: ChatEndpoint,
    prompt_tokens_target: int | None,
) -> RequestSample:
    error = state.error
    if error is None and not state.token_ns:
        error = _failure(
            "no_output", "the stream ended without any content, reasoning or tool-call delta"
        )
    first_ns = state.token_ns[0] if state.token_ns else None
    last_ns = state.token_ns[-1] if state.token_ns else None
    output_tokens, source = _output_tokens(state)
    ttft_ms = _ms(sent_ns, first_ns)
    e2e_ms = _ms(sent_ns, last_ns)
    tpot_ms = None
    decode_tps = None
    arrival = arrival_of(state.token_ns, output_tokens, state.text_chars, state.chars_before_last)
    measurable = arrival.measurable if error is None else None
    # An answer that arrived in bursts holds no time between tokens: no decode speed.
    if measurable and output_tokens is not None and first_ns is not None and last_ns is not None:
        decode_tps = decode_tokens_per_second(output_tokens, first_ns, last_ns)
        tpot_ms = time_per_output_token_ms(output_tokens, ttft_ms or 0.0, e2e_ms or 0.0)
    stored = state.token_ns[: MAX_STORED_CHUNKS + 1]  # the rest is in the counts above
    # _whole_us_in_ms inlined: two per token chunk.
    offsets = [round((stamp - sent_ns) / _NS_PER_US) / 1000 for stamp in stored]
    return RequestSample(
        ok=error is None,
        error=error,
        send_offset_ms=_whole_us_in_ms(sent_ns - endpoint.origin_ns),
        prompt_tokens_target=prompt_tokens_target,
        prompt_tokens=state.prompt_tokens,
        output_tokens=output_tokens,
        token_count_source=source,
        finish_reason=state.finish_reason,
        headers_ms=_ms(sent_ns, headers_ns),
        first_chunk_ms=_ms(sent_ns, state.first_event_ns),
        ttft_ms=ttft_ms,
        first_content_ms=_ms(sent_ns, state.first_content_ns),
        e2e_ms=e2e_ms,
        end_ms=_ms(sent_ns, end_ns),
        decode_tps=decode_tps,
        tpot_ms=tpot_ms,
        decode_measurable=measurable,
        burst=arrival.burst if error is None else None,
        token_chunks=len(state.token_ns),
        arrivals=arrival.arrivals,
        tokens_per_chunk=arrival.tokens_per_chunk,
        longest_gap_ms=arrival.longest_gap_ms,
        last_chunk_share=arrival.last_chunk_share,
        chunk_offsets_ms=offsets,
        itl_ms=[
            round((later - earlier) / _NS_PER_US) / 1000
            for earlier, later in zip(stored, stored[1:], strict=False)
        ],
        sse_comments=parser.comments,
        answer=state.content.text(),
        reasoning=state.reasoning.text(),
        tool_calls=[
            ToolCallSeen(name=name, arguments=arguments)
            for name, arguments in state.tool_calls.calls()
        ],
        usage_ignored=state.usage_ignored,
    )


def _output_tokens(state: StreamState) -> tuple[int | None, str | None]:
    completion_tokens = state.checked_completion_tokens()
    if completion_tokens is not None:
        return completion_tokens, "usage"
    if state.token_ns:
        return len(state.token_ns), "chunks"
    return None, None
