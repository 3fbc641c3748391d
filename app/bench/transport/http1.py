"""One HTTP/1.1 exchange on a stamped connection: h11 for the head, the body read here.

h11 writes the request and parses the response's status line and headers, once per
request; a benchmark's streaming POST has its head written by h11 once per URL
(``PreparedPost``), each request adding its Content-Length and body. The response body is
then read segment by segment straight from the connection's inbox
and its framing undone by ``app.bench.transport.body``: a streamed answer of a thousand chunks costs
a thousand slices, not a thousand passes through h11's and httpcore's event machinery,
which took about half of a loaded client's CPU.

Errors are raised as httpx's, which is what ``app.bench.stream.request`` classifies: a broken head
or body is a ``RemoteProtocolError``, a connection closed before the body's end too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import h11
import httpcore
import httpx

from app.bench.transport.body import BodyDecoder, BodyFramingError, Chunked, Length, UntilClose
from app.bench.transport.stamped_stream import StampedStream

# Read at most this much per segment (the socket reads 64 KiB at a time).
READ_SIZE = 1 << 20
# A response head larger than this is not one an LLM server sends.
MAX_HEAD_BYTES = 64 * 1024

# Most specific first: the first match wins.
_HTTPX_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (h11.RemoteProtocolError, httpx.RemoteProtocolError),
    (h11.LocalProtocolError, httpx.LocalProtocolError),
    (BodyFramingError, httpx.RemoteProtocolError),
)


def httpx_error(error: Exception) -> Exception:
    """The httpx error for one of the stamped streams' httpcore errors, h11's or the body
    decoders'; any other error as it is."""
    for source, target in _HTTPX_ERRORS:
        if isinstance(error, source):
            converted = target(str(error) or type(error).__name__)
            converted.__cause__ = error
            return converted
    return error


@contextlib.contextmanager
def as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except httpx.HTTPError:
        raise
    except Exception as error:
        raise httpx_error(error) from error


@dataclass(frozen=True)
class PreparedPost:
    """A POST to one URL with fixed headers, checked and written by h11 once: each request
    adds its Content-Length and body (``Exchange.send_post``)."""

    url: httpx.URL
    head_start: bytes  # the request line and every header but Content-Length
    # The request as h11 is told it was sent, to read each answer against: the method and
    # the headers are what decide how the answer is framed; its Content-Length is a stand-in.
    event: h11.Request

    @classmethod
    def of(cls, url: httpx.URL, headers: list[tuple[bytes, bytes]]) -> PreparedPost:
        """``headers`` as httpx sends them (Host included), without Content-Length."""
        last = b"Content-Length: 0\r\n\r\n"
        with as_httpx_errors():
            event = h11.Request(
                method="POST", target=url.raw_path, headers=[*headers, (b"Content-Length", b"0")]
            )
            written = h11.Connection(h11.CLIENT).send(event)
        assert written is not None and written.endswith(last)
        return cls(url=url, head_start=written[: -len(last)], event=event)


class Exchange:
    """One request and its response on ``stream``; the body is read with :meth:`read`."""

    def __init__(self, stream: StampedStream, read_timeout: float | None) -> None:
        self.stream = stream
        self.read_timeout = read_timeout
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.reusable = False  # the connection may carry another request once the body ends
        self.eof = False
        self._decoder: BodyDecoder = UntilClose()
        self._leftover = b""  # body bytes that came in with the head

    @property
    def done(self) -> bool:
        return self._decoder.done

    async def send(self, request: httpx.Request, body: bytes, write_timeout: float | None) -> None:
        """Write the request and read the response head (1xx answers are skipped)."""
        connection = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        url = request.url
        with as_httpx_errors():
            data = connection.send(
                h11.Request(
                    method=request.method,
                    target=url.raw_path,
                    headers=request.headers.raw,
                )
            )
            data += connection.send(h11.Data(data=body)) if body else b""
            data += connection.send(h11.EndOfMessage())
        trace = request.extensions.get("trace")
        await self._exchange(
            connection, data, request.method, trace, {"request": request}, write_timeout
        )

    async def send_post(
        self, post: PreparedPost, body: bytes, trace: Any, write_timeout: float | None
    ):
        """``send`` for a POST prepared once for its URL: the same bytes, without building
        and checking the request's head again for every request."""
        connection = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        connection.send(post.event)  # what h11 reads the answer against
        data = b"%sContent-Length: %d\r\n\r\n%s" % (post.head_start, len(body), body)
        await self._exchange(connection, data, "POST", trace, {}, write_timeout)

    async def _exchange(
        self,
        connection: h11.Connection,
        data: bytes,
        method: str,
        trace: Any,
        trace_info: dict[str, Any],
        write_timeout: float | None,
    ) -> None:
        """Write ``data`` (the whole request) and read the response head."""
        with as_httpx_errors():
            if trace is not None:
                # The last moment before the bytes go out; no await between it and the write.
                await trace("http11.send_request_body.started", trace_info)
            await self.stream.write(data, timeout=write_timeout)
            await self._read_head(connection, method)

    async def _read_head(self, connection: h11.Connection, method: str) -> None:
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                data = await self.stream.read(READ_SIZE, self.read_timeout)
                connection.receive_data(data)  # b"": the server closed the connection
                continue
            if isinstance(event, h11.InformationalResponse):
                continue
            if isinstance(event, h11.Response):
                break
            if isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError("the server closed the connection unanswered")
            raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} before the head")
        self.status = event.status_code
        self.reason = event.reason
        self.headers = list(event.headers)
        self._leftover, _ = connection.trailing_data
        self._decoder = _decoder_for(self.status, method, self.headers)
        self.reusable = (
            event.http_version == b"1.1"
            and not isinstance(self._decoder, UntilClose)
            and not any(
                name == b"connection" and b"close" in value.lower() for name, value in self.headers
            )
        )

    async def read(self) -> bytes:
        """The next buffer of body bytes, framing removed; ``b""`` once the body has ended.

        Each buffer holds what one received segment completed, and ``stream.arrived_ns``
        says when that segment arrived.
        """
        decoder = self._decoder
        try:
            if self._leftover:
                data, self._leftover = self._leftover, b""
                body = decoder.feed(data)
                if body:
                    return body
            while not decoder.done:
                data = await self.stream.read(READ_SIZE, self.read_timeout)
                if not data:
                    self.eof = True
                    problem = decoder.at_eof()
                    if problem is not None:
                        raise httpx.RemoteProtocolError(problem)
                    break
                body = decoder.feed(data)
                if body:
                    return body
        except httpx.HTTPError:
            raise
        except Exception as error:
            raise httpx_error(error) from error
        if decoder.extra:
            self.reusable = False
        return b""


def _decoder_for(status: int, method: str, headers: list[tuple[bytes, bytes]]) -> BodyDecoder:
    """The body's framing, as h11 (which has checked these headers) reads it."""
    if method == "HEAD" or status in (204, 304):
        return Length(0)
    if any(name == b"transfer-encoding" for name, _ in headers):
        return Chunked()  # h11 accepts only "chunked" here
    for name, value in headers:
        if name == b"content-length":
            return Length(int(value))
    return UntilClose()
