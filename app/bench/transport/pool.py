"""The benchmark client's httpx transport: a small HTTP/1.1 pool on the stamping backend.

httpx builds the request and holds the response; this transport opens connections with
``StampingBackend`` (arrival stamps), runs each exchange with ``app.bench.transport.http1`` (h11
for the head, the body read segment by segment), and keeps idle connections for reuse.
``body_reader(response)`` hands a caller the exchange itself, so that a streamed answer is
read in whole received segments rather than through httpx's per-piece iterators.

Everything that gives a connection back or closes it is synchronous: a cancellation (a
request's overall timeout) can never land between taking a slot and returning it, so a
pool slot is never lost.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx

from app.bench.transport.http1 import Exchange, PreparedPost, as_httpx_errors
from app.bench.transport.stamped_socket import StampingBackend
from app.bench.transport.stamped_stream import StampedStream

_Origin = tuple[bytes, bytes, int]


class _Connection:
    def __init__(self, stream: StampedStream) -> None:
        self.stream = stream
        self.idle_since = 0.0

    def close(self) -> None:
        self.stream.close()


class _ResponseBody(httpx.AsyncByteStream):
    """The response body for httpx; gives the connection back once the body is over."""

    def __init__(self, exchange: Exchange, release: _Release) -> None:
        self.exchange = exchange
        self._release = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while data := await self.exchange.read():
                yield data
        finally:
            self.finish()

    async def aclose(self) -> None:
        self.finish()

    def finish(self) -> None:
        exchange = self.exchange
        self._release(keep=exchange.done and exchange.reusable and not exchange.eof)


class _Release:
    """Gives one slot of the pool back, once, keeping or closing its connection."""

    def __init__(self, transport: StampingTransport, origin: _Origin, connection: _Connection):
        self._transport = transport
        self._origin = origin
        self._connection: _Connection | None = connection

    def __call__(self, *, keep: bool) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self._transport._give_back(self._origin, connection, keep)


class StampingTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over :class:`StampingBackend`; no proxies (a benchmark goes direct)."""

    def __init__(self, *, verify: ssl.SSLContext, limits: httpx.Limits) -> None:
        self._ssl_context = verify
        self._slots = asyncio.Semaphore(limits.max_connections or 1 << 16)
        keep = limits.max_keepalive_connections
        self._keep_at_most = 1 << 16 if keep is None else keep
        self._keepalive_expiry = limits.keepalive_expiry
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._backend = StampingBackend()
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        body = await request.aread()

        def send(exchange: Exchange) -> Awaitable[None]:
            return exchange.send(request, body, timeouts.get("write"))

        return await self._exchange(request, timeouts, send)

    async def post(
        self,
        post: PreparedPost,
        body: bytes,
        trace: Any,
        timeouts: dict[str, float | None],
        request: httpx.Request,
    ) -> httpx.Response:
        """``post`` with ``body``, as ``handle_async_request`` sends a request; ``request``
        is the one the response reports (``post``'s URL and headers)."""

        def send(exchange: Exchange) -> Awaitable[None]:
            return exchange.send_post(post, body, trace, timeouts.get("write"))

        return await self._exchange(request, timeouts, send)

    async def _exchange(
        self,
        request: httpx.Request,
        timeouts: dict[str, float | None],
        send: Callable[[Exchange], Awaitable[None]],
    ) -> httpx.Response:
        """A pool slot and a connection for ``request``'s origin, ``send`` on it, and the
        response with its body left to read."""
        origin = (request.url.raw_scheme, request.url.raw_host, _port(request.url))
        if self._slots.locked():
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    await self._slots.acquire()
            except TimeoutError as error:
                raise httpx.PoolTimeout("no connection free within the pool timeout") from error
        else:
            await self._slots.acquire()  # a free slot: taken at once, no timer to set
        connection: _Connection | None = None
        try:
            connection = self._idle_connection(origin) or await self._connect(origin, timeouts)
            exchange = Exchange(connection.stream, timeouts.get("read"))
            await send(exchange)
        except BaseException:
            if connection is not None:
                connection.close()
            self._slots.release()
            raise
        release = _Release(self, origin, connection)
        response = httpx.Response(
            status_code=exchange.status,
            headers=exchange.headers,
            stream=_ResponseBody(exchange, release),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": exchange.reason,
                "network_stream": connection.stream,
                "exchange": exchange,
            },
        )
        response.request = request
        return response

    def _idle_connection(self, origin: _Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            expired = (
                self._keepalive_expiry is not None
                and now - connection.idle_since > self._keepalive_expiry
            )
            # Readable while idle: the server closed it, or sent something unasked.
            if expired or connection.stream.is_readable():
                connection.close()
                continue
            return connection
        return None

    async def _connect(self, origin: _Origin, timeouts: dict) -> _Connection:
        scheme, host, port = origin
        connect_timeout = timeouts.get("connect")
        with as_httpx_errors():
            stream = await self._backend.connect_tcp(host.decode("ascii"), port, connect_timeout)
            if scheme == b"https":
                stream = await stream.start_tls(
                    self._ssl_context, server_hostname=host.decode("ascii"), timeout=connect_timeout
                )
        assert isinstance(stream, StampedStream)
        return _Connection(stream)

    def _give_back(self, origin: _Origin, connection: _Connection, keep: bool) -> None:
        idle = self._idle.setdefault(origin, [])
        if keep and not self._closed and len(idle) < self._keep_at_most:
            connection.idle_since = time.monotonic()
            idle.append(connection)
        else:
            connection.close()
        self._slots.release()

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


def _port(url: httpx.URL) -> int:
    if url.port is not None:
        return url.port
    return 443 if url.raw_scheme == b"https" else 80


def arrival_ns(response: httpx.Response) -> int | None:
    """When the bytes of the body piece last read arrived; None if unknown."""
    stream = response.extensions.get("network_stream")
    return stream.arrived_ns if isinstance(stream, StampedStream) else None


def body_reader(response: httpx.Response) -> Exchange | None:
    """The exchange behind a response of this transport, to read its body segment by
    segment (``Exchange.read``); None for a response from elsewhere."""
    exchange = response.extensions.get("exchange")
    return exchange if isinstance(exchange, Exchange) else None
