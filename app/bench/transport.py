"""The benchmark client's httpx transport: httpcore's connection pool on the stamping backend.

httpx's own ``AsyncHTTPTransport`` takes no network backend, so this is the same small
adapter written against the public APIs of both: an httpx request becomes an httpcore one,
the pool (``network_backend=StampingBackend()``) answers it, and httpcore's exceptions are
raised as httpx's, which is what ``app.bench.stream`` classifies.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterator

import httpcore
import httpx

from app.bench.stamped_socket import StampingBackend
from app.bench.stamped_stream import StampedStream

# Most specific first: the first match wins.
_HTTPX_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as error:
        for source, target in _HTTPX_ERRORS:
            if isinstance(error, source):
                raise target(str(error)) from error
        raise


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, pieces: AsyncIterable[bytes]) -> None:
        self._pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for piece in self._pieces:
                yield piece

    async def aclose(self) -> None:
        close = getattr(self._pieces, "aclose", None)
        if close is not None:
            with _as_httpx_errors():
                await close()


class StampingTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over :class:`StampingBackend`; no proxies (a benchmark goes direct)."""

    def __init__(self, *, verify: ssl.SSLContext, limits: httpx.Limits) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=verify,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=StampingBackend(),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def arrival_ns(response: httpx.Response) -> int | None:
    """When the bytes of the body piece httpx last handed over arrived; None if unknown."""
    stream = response.extensions.get("network_stream")
    return stream.arrived_ns if isinstance(stream, StampedStream) else None
