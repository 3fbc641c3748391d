"""Where a benchmark sends its requests: the chat endpoint and the HTTP clients behind it."""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from time import perf_counter_ns
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from app.bench.transport.http1 import PreparedPost
from app.bench.transport.pool import StampingTransport


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


class StampingClient(httpx.AsyncClient):
    """httpx's client over :class:`StampingTransport`, with a lean way to open a stream.

    ``open_stream`` sends a benchmark request straight to the transport: per request,
    httpx's client merges the URL and headers, runs auth, cookie and redirect handling and
    wraps the body stream, which cost about as much CPU as reading a 200-token answer.
    A benchmark request needs none of that beyond the merged headers, which are kept.
    """

    def __init__(self, *, transport: StampingTransport, **options: Any) -> None:
        super().__init__(transport=transport, **options)
        self.stamping = transport
        self._prepared: dict[str, tuple[PreparedPost, httpx.Request]] = {}
        self._timeouts = self.timeout.as_dict()

    async def open_stream(self, url: str, body: bytes, trace: Any) -> httpx.Response:
        """POST ``body`` as JSON and return the answer's head; its body is left to read.

        What ``send(build_request(...), stream=True)`` returns, and raises, for a
        benchmark request; ``trace`` is httpx's trace extension. The request's head is
        made once per URL (``PreparedPost``); the response's ``request`` is a request
        with that head and no body.
        """
        prepared = self._prepared.get(url)
        if prepared is None:
            prepared = self._prepared[url] = self._prepare(url)
        post, request = prepared
        return await self.stamping.post(post, body, trace, self._timeouts, request)

    def _prepare(self, url: str) -> tuple[PreparedPost, httpx.Request]:
        # The client's headers merged as httpx does for every request, Host included.
        request = self.build_request("POST", url, headers={"Content-Type": "application/json"})
        headers = [
            (name, value)
            for name, value in request.headers.raw
            if name.lower() != b"content-length"
        ]
        return PreparedPost.of(request.url, headers), request


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
    return StampingClient(
        headers=headers,
        timeout=httpx.Timeout(request_timeout_s, connect=connect_timeout_s),
        transport=StampingTransport(verify=_shared_ssl_context(), limits=limits),
        # Proxy variables must not route a loopback-only benchmark elsewhere.
        trust_env=False,
        follow_redirects=False,
    )


class StreamClients:
    """One HTTP client, with one connection, per concurrent stream.

    No stream waits for another's connection slot, and each request's cost stays constant
    however many streams run. Clients are kept across levels so connections stay warm.
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

    def body(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        *,
        tools: list[dict[str, Any]] | None = None,
    ) -> bytes:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": True,
        }
        if tools:
            payload["tools"] = tools
            payload["tool_choice"] = "auto"
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
