"""A network stream whose reads remember when their bytes arrived, and the buffer behind it.

``_Inbox`` holds received segments with their arrival stamps until the exchange reads them;
the socket backend (``stamped_socket``) and the TLS stream (``stamped_tls``) fill it.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable

import httpcore

# Past this many unread bytes the socket stops being read until the reader catches up.
HIGH_WATER = 1 << 20
LOW_WATER = HIGH_WATER // 4


class _Inbox:
    """Bytes received and not read yet, each segment with the time it arrived."""

    def __init__(self, pause: Callable[[], object], resume: Callable[[], object]) -> None:
        self.segments: deque[tuple[int, bytes]] = deque()
        self.closed = False
        self.error: BaseException | None = None
        self._buffered = 0
        self._paused = False
        self._pause = pause  # stop reading the socket
        self._resume = resume
        self._waiter: asyncio.Future[None] | None = None

    def put(self, stamp: int, data: bytes) -> None:
        self.segments.append((stamp, data))
        self._buffered += len(data)
        if self._buffered > HIGH_WATER and not self._paused:
            self._paused = True
            self._pause()
        self._wake()

    def close(self, error: BaseException | None = None) -> None:
        self.closed = True
        self.error = self.error or error
        self._wake()

    async def take(self, max_bytes: int, timeout: float | None) -> tuple[int, bytes] | None:
        """The next segment, at most ``max_bytes`` of it; None at the end of the stream."""
        while not self.segments:
            if self.closed:
                if self.error is not None:
                    raise httpcore.ReadError(str(self.error)) from self.error
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            await _wait(self._waiter, timeout, httpcore.ReadTimeout)
        stamp, data = self.segments.popleft()
        if len(data) > max_bytes:
            self.segments.appendleft((stamp, data[max_bytes:]))
            data = data[:max_bytes]
        self._buffered -= len(data)
        if self._paused and self._buffered < LOW_WATER and not self.closed:
            self._paused = False
            self._resume()
        return stamp, data

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


def _expire(waiter: asyncio.Future[None], error: type[Exception]) -> None:
    if not waiter.done():
        waiter.set_exception(error("timed out"))


async def _wait(
    waiter: asyncio.Future[None], timeout: float | None, error: type[Exception]
) -> None:
    """``await waiter``, failing with ``error`` after ``timeout`` seconds.

    A bare timer handle rather than ``asyncio.timeout``: this runs for every chunk that
    has to wait, and costs one C-level timer.
    """
    if timeout is None:
        await waiter
        return
    timer = asyncio.get_running_loop().call_later(timeout, _expire, waiter, error)
    try:
        await waiter
    finally:
        timer.cancel()


class StampedStream(httpcore.AsyncNetworkStream, ABC):
    """A connection whose reads remember when the bytes they return arrived."""

    def __init__(self, inbox: _Inbox) -> None:
        self.inbox = inbox
        self.arrived_ns: int | None = None  # when the bytes the last read returned came in
        self.read_deadline: float | None = None  # event-loop time; see end_reads_by

    def end_reads_by(self, deadline: float) -> None:
        """Reads of the current response fail with ReadTimeout past ``deadline``.

        The way to bound what is left of a response (the body's end after ``[DONE]``)
        without cancelling the reading task: a read timeout ends the body's read with an
        error the reader handles, and the connection is closed rather than reused. The
        next request's write clears the deadline.
        """
        self.read_deadline = deadline

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self.read_deadline is not None:
            left = max(0.0, self.read_deadline - asyncio.get_running_loop().time())
            timeout = left if timeout is None else min(timeout, left)
        segment = await self.inbox.take(max_bytes, timeout)
        if segment is None:
            return b""
        self.arrived_ns, data = segment
        return data

    def is_readable(self) -> bool:
        """Asked of an idle keep-alive connection: readable means the server closed it (or
        sent something unasked), so it is not reused."""
        return bool(self.inbox.segments) or self.inbox.closed

    @abstractmethod
    def close(self) -> None:
        """Closes the connection at once (no await: safe where a cancellation may land)."""

    async def aclose(self) -> None:
        self.close()
