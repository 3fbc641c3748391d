"""TLS for the stamping backend: asyncio's SSL transport feeding an inbox.

Over TLS the kernel's receive stamps describe encrypted records, not the bytes httpx gets,
so the stamps are the event loop's: ``perf_counter_ns`` when the loop hands over the
decrypted data, before any task runs.
"""

from __future__ import annotations

import asyncio
import ssl
from time import perf_counter_ns
from typing import Any

import httpcore

from app.bench.transport.stamped_stream import StampedStream, _Inbox, _wait


class _InboxProtocol(asyncio.Protocol):
    """Feeds an inbox from an asyncio transport (TLS); stamps are the loop's."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.inbox = _Inbox(self._pause_reading, self._resume_reading)
        self.writing_paused = False
        self.drain_waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.inbox.put(perf_counter_ns(), data)

    def eof_received(self) -> bool:
        self.inbox.close()
        return False  # let the transport close

    def connection_lost(self, exc: Exception | None) -> None:
        self.inbox.close(exc)
        self.resume_writing()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        waiter, self.drain_waiter = self.drain_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _pause_reading(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()

    def _resume_reading(self) -> None:
        if self.transport is not None:
            self.transport.resume_reading()


class _TransportStream(StampedStream):
    def __init__(self, transport: asyncio.Transport, protocol: _InboxProtocol) -> None:
        super().__init__(protocol.inbox)
        self._transport = transport
        self._protocol = protocol

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.read_deadline = None  # a new request on this connection
        if self.inbox.closed:
            raise httpcore.WriteError("connection closed")
        self._transport.write(buffer)
        if self._protocol.writing_paused:
            waiter = asyncio.get_running_loop().create_future()
            self._protocol.drain_waiter = waiter
            await _wait(waiter, timeout, httpcore.WriteTimeout)
            if self.inbox.error is not None:
                raise httpcore.WriteError(str(self.inbox.error)) from self.inbox.error

    def close(self) -> None:
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("TLS inside TLS (an HTTPS proxy) is not supported")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return self.is_readable()
        name = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        return self._transport.get_extra_info(name)
