"""One streaming chat-completions request, timed as bytes arrive, turned into a RequestSample.

Every piece of the body carries the ``perf_counter_ns`` time its bytes arrived: the
kernel's receive stamp on Linux, else the moment the event loop read them from the socket
(``app.bench.stamped_socket``), not when httpx handed them over, since with many streams a
piece may wait behind other streams' chunks in between. The events completed by a piece
carry its stamp. The body is serialised before the clock starts, so JSON encoding of a
long prompt is not counted as server time.
"""

from __future__ import annotations

import asyncio
import functools
import json
import socket
import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from time import perf_counter_ns
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from app.bench.metrics import decode_tokens_per_second, time_per_output_token_ms
from app.bench.result import ErrorKind, RequestError, RequestSample
from app.bench.sse import SSEEvent, SSEParser
from app.bench.stamped_socket import StampedStream
from app.bench.transport import StampingTransport, arrival_ns

MAX_KEPT_TEXT = 4000
MAX_ERROR_BODY = 64 * 1024
DONE_GRACE_S = 1.0
_CLOSED_STREAM = httpx.ByteStream(b"")
_NS_PER_MS = 1_000_000


def chat_completions_url(base_url: str) -> str:
    """``base_url`` may be the server root or already end in ``/v1``."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path = f"{path}/v1"
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/chat/completions", "", ""))


@functools.cache
def _shared_ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle costs milliseconds; every client of a run shares one context.
    return httpx.create_ssl_context()


def make_http_client(
    *,
    api_key: str | None,
    connect_timeout_s: float,
    request_timeout_s: float,
    max_connections: int = 1,
) -> httpx.AsyncClient:
    headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    limits = httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections
    )
    return httpx.AsyncClient(
        headers=headers,
        timeout=httpx.Timeout(request_timeout_s, connect=connect_timeout_s),
        transport=StampingTransport(verify=_shared_ssl_context(), limits=limits),
        # Proxy variables must not route a loopback-only benchmark elsewhere.
        trust_env=False,
        follow_redirects=False,
    )


class StreamClients:
    """One HTTP client, with one connection, per concurrent stream.

    httpcore's connection pool scans every connection on each request start and end, so a
    single pool shared by N streams costs O(N^2) CPU per round; at 64 streams that stole
    hundreds of milliseconds from the event loop and showed up as TTFT. Separate pools keep
    the per-request cost constant. Clients are kept across levels so connections stay warm.
    """

    def __init__(self, factory: Callable[[], httpx.AsyncClient], *, owned: bool = True) -> None:
        self._factory = factory
        self._owned = owned
        self._clients: list[httpx.AsyncClient] = []

    @classmethod
    def sharing(cls, http: httpx.AsyncClient) -> StreamClients:
        """Every stream uses the caller's client, which the caller closes."""
        return cls(lambda: http, owned=False)

    def get(self, index: int) -> httpx.AsyncClient:
        while len(self._clients) <= index:
            self._clients.append(self._factory())
        return self._clients[index]

    async def aclose(self) -> None:
        if self._owned:
            for client in self._clients:
                await client.aclose()
        self._clients.clear()


@dataclass
class ChatEndpoint:
    """Where and how to send chat requests; shared by every request of a run."""

    http: httpx.AsyncClient
    url: str
    model: str
    request_timeout_s: float
    origin_ns: int = field(default_factory=perf_counter_ns)
    include_usage: bool = True
    extra_body: dict[str, Any] = field(default_factory=dict)
    secret: str | None = None

    def body(self, messages: list[dict[str, str]], max_tokens: int) -> bytes:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": True,
        }
        if self.include_usage:
            payload["stream_options"] = {"include_usage": True}
        payload.update(self.extra_body)
        return json.dumps(payload, ensure_ascii=False).encode()

    def redact(self, text: str) -> str:
        if self.secret:
            return text.replace(self.secret, "***")
        return text

    def using(self, http: httpx.AsyncClient) -> ChatEndpoint:
        return replace(self, http=http)


@dataclass
class _StreamState:
    """What the events of one stream said, with the arrival stamp of each."""

    first_event_ns: int | None = None
    token_ns: list[int] = field(default_factory=list)
    first_content_ns: int | None = None
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    finish_reason: str | None = None
    error: RequestError | None = None
    done: bool = False

    def take(self, event: SSEEvent, arrived_ns: int) -> None:
        if self.first_event_ns is None:
            self.first_event_ns = arrived_ns
        data = event.data.strip()
        if data == "[DONE]":
            self.done = True
            return
        try:
            payload = json.loads(data)
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        if payload.get("error") or payload.get("object") == "error":
            self.error = RequestError(kind="stream_error", message=error_message(payload))
            return
        usage = payload.get("usage")
        if usage:  # most chunks carry none, or null
            self._take_usage(usage)
        if self._take_choices(payload.get("choices"), arrived_ns):
            self.token_ns.append(arrived_ns)

    def _take_usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        if isinstance(usage.get("completion_tokens"), int):
            self.completion_tokens = usage["completion_tokens"]
        if isinstance(usage.get("prompt_tokens"), int):
            self.prompt_tokens = usage["prompt_tokens"]

    def _take_choices(self, choices: object, arrived_ns: int) -> bool:
        """Record the deltas; True when one carries a token (content, reasoning, tool call)."""
        if not isinstance(choices, list):
            return False
        carries_token = False
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
            content = delta.get("content") or choice.get("text")
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(content, str) and content:
                self.content.append(content)
                if self.first_content_ns is None:
                    self.first_content_ns = arrived_ns
                carries_token = True
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.append(reasoning)
                carries_token = True
            if delta.get("tool_calls"):
                carries_token = True
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return carries_token


def error_message(payload: object) -> str:
    """The human-readable message of an OpenAI-style, FastAPI-style or plain error body."""
    if isinstance(payload, dict):
        inner = payload.get("error")
        if isinstance(inner, dict):
            return str(inner.get("message") or inner.get("detail") or json.dumps(inner))
        if isinstance(inner, str) and inner:
            return inner
        for key in ("message", "detail"):
            if payload.get(key):
                value = payload[key]
                return value if isinstance(value, str) else json.dumps(value)
    return json.dumps(payload)


def _http_error_text(status: int, body: bytes) -> str:
    text = body[:MAX_ERROR_BODY].decode("utf-8", errors="replace").strip()
    try:
        message = error_message(json.loads(text))
    except ValueError:
        message = text or "(empty body)"
    return f"HTTP {status}: {message}"


def _ms(start_ns: int, end_ns: int | None) -> float | None:
    if end_ns is None:
        return None
    return round((end_ns - start_ns) / _NS_PER_MS, 3)


async def stream_chat(
    endpoint: ChatEndpoint,
    messages: list[dict[str, str]],
    max_tokens: int,
    *,
    prompt_tokens_target: int | None = None,
) -> RequestSample:
    """Send one streaming request and measure it; never raises for server misbehaviour.

    The clock starts as the request body is handed to the socket: httpcore's trace event
    just before that write, which follows it with no await in between (the event after
    the write comes only once the event loop has run every other ready task). Waiting for
    a connection, a TCP connect and the client's own scheduling are not server time; they
    are kept as ``client_wait_ms``. Under many concurrent streams the event loop runs the
    other streams between a request's start and its write, which would otherwise count
    as TTFT.
    """
    sent_at: list[int] = []

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event.endswith("send_request_body.started"):
            sent_at.append(perf_counter_ns())

    request = endpoint.http.build_request(
        "POST",
        endpoint.url,
        content=endpoint.body(messages, max_tokens),
        headers={"Content-Type": "application/json"},
        extensions={"trace": trace},
    )
    state = _StreamState()
    headers_ns: int | None = None
    parser = SSEParser()
    called_ns = perf_counter_ns()
    try:
        async with asyncio.timeout(endpoint.request_timeout_s):
            response = await endpoint.http.send(request, stream=True)
            try:
                headers_ns = arrival_ns(response) or perf_counter_ns()
                if response.status_code >= 400:
                    body = await response.aread()
                    text = _http_error_text(response.status_code, body)
                    state.error = RequestError(
                        kind="http", message=text, http_status=response.status_code
                    )
                else:
                    await _read_events(response, parser, state)
            finally:
                await response.aclose()
                # httpx's response and its stream refer to each other; without that cycle
                # everything the request made is freed at once, not by the garbage
                # collector, which is off while a level runs (see shards.quiet_gc).
                response.stream = _CLOSED_STREAM
    except TimeoutError:
        state.error = _failure(
            "timeout", f"no complete answer within {endpoint.request_timeout_s:g} s"
        )
    except httpx.HTTPError as exc:
        kind = _transport_error_kind(exc)
        message = connect_failure_reason(exc) if kind == "connect" else _describe(exc)
        state.error = _failure(kind, message)
    end_ns = perf_counter_ns()
    sent_ns = sent_at[0] if sent_at else called_ns
    sample = _to_sample(state, parser, sent_ns, headers_ns, end_ns, endpoint, prompt_tokens_target)
    sample.client_wait_ms = _ms(called_ns, sent_ns) if sent_at else None
    if sample.error is not None:
        sample.error.message = endpoint.redact(sample.error.message)
    return sample


async def _read_events(response: httpx.Response, parser: SSEParser, state: _StreamState) -> None:
    # After [DONE] the body is still read to its end, so the connection goes back to the pool
    # and the next request's TTFT does not include a new TCP connect; a server that keeps the
    # body open after [DONE] gets DONE_GRACE_S.
    after_done = asyncio.timeout(None)
    # Stamped when the bytes arrived (see app.bench.stamped_socket), not when httpx hands them
    # over after the other streams' ready chunks.
    stream = response.extensions.get("network_stream")
    stamped = stream if isinstance(stream, StampedStream) else None
    try:
        async with after_done:
            async for piece in _raw_pieces(response):
                if state.done:
                    continue
                arrived_ns = (stamped.arrived_ns if stamped else None) or perf_counter_ns()
                for event in parser.feed(piece):
                    state.take(event, arrived_ns)
                    if state.error is not None:
                        return
                    if state.done:
                        after_done.reschedule(asyncio.get_running_loop().time() + DONE_GRACE_S)
                        break
    except TimeoutError:
        if not after_done.expired():
            raise
    if state.done:
        return
    closed_ns = perf_counter_ns()
    for event in parser.close():
        state.take(event, closed_ns)


def _raw_pieces(response: httpx.Response) -> AsyncIterator[bytes]:
    # httpx's own iterator, not wrapped in another generator: one layer less on every chunk.
    if response.is_stream_consumed:  # a transport that hands over a body already read
        return _whole(response.content)
    return response.aiter_raw()


async def _whole(content: bytes) -> AsyncIterator[bytes]:
    yield content


def _failure(kind: ErrorKind, message: str) -> RequestError:
    return RequestError(kind=kind, message=message)


def _transport_error_kind(exc: httpx.HTTPError) -> ErrorKind:
    # A connect timeout is a connection that never opened, like a refusal: nothing answered.
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return "connect"
    if isinstance(exc, httpx.PoolTimeout | httpx.ReadTimeout | httpx.WriteTimeout):
        return "timeout"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return "connection_cut"
    return "protocol"


def connect_failure_reason(exc: httpx.HTTPError) -> str:
    """Why no connection opened, in a few words: "connection refused", "connect timed out".

    httpx reports a refusal as "All connection attempts failed"; the OS error that says what
    happened sits at the bottom of the exception chain.
    """
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timed out"
    cause = _innermost_os_error(exc)
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, socket.gaierror):
        return f"host name not resolved ({cause.strerror})"
    if cause is not None and cause.strerror:
        return cause.strerror
    return _describe(exc)


def _innermost_os_error(exc: BaseException) -> OSError | None:
    found = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno is not None:
            found = current
        current = current.__cause__ or current.__context__
    return found


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def _to_sample(
    state: _StreamState,
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
    if output_tokens is not None and first_ns is not None and last_ns is not None:
        decode_tps = decode_tokens_per_second(output_tokens, first_ns, last_ns)
        tpot_ms = time_per_output_token_ms(output_tokens, ttft_ms or 0.0, e2e_ms or 0.0)
    offsets = [round((stamp - sent_ns) / _NS_PER_MS, 3) for stamp in state.token_ns]
    return RequestSample(
        ok=error is None,
        error=error,
        send_offset_ms=round((sent_ns - endpoint.origin_ns) / _NS_PER_MS, 3),
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
        token_chunks=len(state.token_ns),
        chunk_offsets_ms=offsets,
        itl_ms=[
            round((later - earlier) / _NS_PER_MS, 3)
            for earlier, later in zip(state.token_ns, state.token_ns[1:], strict=False)
        ],
        sse_comments=parser.comments,
        answer="".join(state.content)[:MAX_KEPT_TEXT],
        reasoning="".join(state.reasoning)[:MAX_KEPT_TEXT],
    )


def _output_tokens(state: _StreamState) -> tuple[int | None, str | None]:
    if state.completion_tokens is not None:
        return state.completion_tokens, "usage"
    if state.token_ns:
        return len(state.token_ns), "chunks"
    return None, None
