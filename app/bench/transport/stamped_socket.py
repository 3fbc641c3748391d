"""A lean httpcore network backend that stamps received bytes with the time they arrived.

The TTFT error of a loaded client is the time between bytes reaching its socket and the
client stamping them. httpcore's default backend (anyio) stops reading a socket between
reads, so bytes waited in the kernel until the stream's task came round again, behind every
other stream's ready chunks, and were stamped after that; at 128 streams a process that
wait was most of the error. This backend stamps each segment as it is received instead,
and ``read`` hands httpx one segment at a time, so that every piece httpx yields carries
the stamp of the segment that completed it (h11 yields a body piece once its bytes are in,
and reads again only when it has nothing left to yield).

The stamp itself comes, for plain TCP on Linux, from the kernel (``SO_TIMESTAMPNS``): the
time the segment was queued on the socket, whether or not this process was running then.
On a machine whose cores are all busy (the server, the client's worker processes, anything
else), the process can wait several milliseconds for a core before it reads a socket; the
kernel's stamp leaves that wait out. It has one limit: segments still unread when the next
one arrives are merged into it, stamp included, so a socket left unread for longer than
one inter-token gap stamps its first token with the later chunk's arrival. A stamp is
therefore never earlier than the truth, and never later than the moment of the read, which
is what it is elsewhere, and over TLS (asyncio's SSL transport): ``perf_counter_ns`` when
the event loop reads the bytes, before any task runs.

Leaving out anyio's per-read cancel scope, exception mapping and extra scheduling round
cut the client's CPU per chunk too (with the SSE fast path, about 30 % per request).
"""

from __future__ import annotations

import asyncio
import platform
import socket
import ssl
import struct
import sys
import time
from collections.abc import Iterable
from time import perf_counter_ns
from typing import Any

import httpcore

from app.bench.transport.hosts import loopback_addresses
from app.bench.transport.stamped_stream import StampedStream, _Inbox
from app.bench.transport.stamped_tls import _InboxProtocol, _TransportStream

# Past this many unread bytes the socket stops being read until the reader catches up.
HIGH_WATER = 1 << 20
LOW_WATER = HIGH_WATER // 4
READ_SIZE = 1 << 16

# Linux's SO_TIMESTAMPNS, which Python's socket module does not name: each recvmsg returns,
# as ancillary data, the CLOCK_REALTIME time the last segment it read was queued, a struct
# timespec of two native longs. 35 where the kernel uses asm-generic/socket.h; the other
# architectures number it differently and get the event loop's stamps.
_GENERIC_SOCKET_H = {"x86_64", "aarch64", "arm64", "i386", "i686", "armv7l", "riscv64"}
_LINUX_GENERIC = sys.platform == "linux" and platform.machine() in _GENERIC_SOCKET_H
SO_TIMESTAMPNS = 35 if _LINUX_GENERIC else None
_TIMESPEC = struct.Struct("@ll")
_ANCILLARY_SIZE = socket.CMSG_SPACE(_TIMESPEC.size)


class _SocketStream(StampedStream):
    """Plain TCP, read with recvmsg by this class to get the kernel's arrival stamps."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._fd = sock.fileno()
        self._loop = asyncio.get_running_loop()
        self._kernel_stamps = _enable_timestamps(sock)
        self._last_read_ns = perf_counter_ns()
        super().__init__(_Inbox(self._stop_reading, self._start_reading))
        self._start_reading()

    def _start_reading(self) -> None:
        self._loop.add_reader(self._fd, self._on_readable)

    def _stop_reading(self) -> None:
        self._loop.remove_reader(self._fd)

    def _on_readable(self) -> None:
        try:
            data, ancillary, _, _ = self._sock.recvmsg(READ_SIZE, _ANCILLARY_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            self._stop_reading()
            self.inbox.close(error)
            return
        if not data:
            self._stop_reading()
            self.inbox.close()
            return
        now = perf_counter_ns()
        stamp = (_kernel_stamp(ancillary, now) if self._kernel_stamps else None) or now
        # Not before the previous read either, which would have returned these bytes had
        # they been there: a clock step cannot move a stamp out of that window.
        self.inbox.put(max(stamp, self._last_read_ns), data)
        self._last_read_ns = now

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.read_deadline = None  # a new request on this connection
        if self.inbox.closed:
            raise httpcore.WriteError("connection closed")
        # A request nearly always fits the socket's buffer: sent at once, with no timeout
        # scope to set up; what does not fit is sent as the socket drains.
        try:
            sent = self._sock.send(buffer)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as error:
            raise httpcore.WriteError(str(error)) from error
        if sent == len(buffer):
            return
        try:
            async with asyncio.timeout(timeout):
                await self._loop.sock_sendall(self._sock, memoryview(buffer)[sent:])
        except TimeoutError as error:
            raise httpcore.WriteTimeout("timed out") from error
        except OSError as error:
            raise httpcore.WriteError(str(error)) from error

    def close(self) -> None:
        if self._sock.fileno() != -1:
            self._stop_reading()
            self._sock.close()
        self.inbox.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """The socket handed to asyncio's SSL transport; stamps from then on are the loop's."""
        self._stop_reading()
        try:
            transport, protocol = await self._loop.create_connection(
                _InboxProtocol,
                sock=self._sock,
                ssl=ssl_context,
                server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )
        except TimeoutError as error:
            self._sock.close()
            raise httpcore.ConnectTimeout("TLS handshake timed out") from error
        except (OSError, ssl.SSLError) as error:
            self._sock.close()
            raise httpcore.ConnectError(str(error)) from error
        return _TransportStream(transport, protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return self.is_readable()
        if info == "socket":
            return self._sock
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        return None


def _enable_timestamps(sock: socket.socket) -> bool:
    if SO_TIMESTAMPNS is None:
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    return True


def _kernel_stamp(ancillary: list[tuple[int, int, bytes]], now: int) -> int | None:
    """The kernel's arrival time on the ``perf_counter_ns`` clock, at most ``now``."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= _TIMESPEC.size:
            seconds, nanoseconds = _TIMESPEC.unpack_from(data)
            # Moved from CLOCK_REALTIME with the offset between the two clocks read now.
            wall_minus_monotonic = time.time_ns() - perf_counter_ns()
            return min(seconds * 1_000_000_000 + nanoseconds - wall_minus_monotonic, now)
    return None


class StampingBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                sock = await _connect_first(host, port, local_address)
        except TimeoutError as error:
            raise httpcore.ConnectTimeout("connect timed out") from error
        except OSError as error:
            raise httpcore.ConnectError(str(error)) from error
        for option in socket_options or ():
            sock.setsockopt(*option)
        return _SocketStream(sock)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not supported by the benchmark client")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _numeric_infos(addresses: tuple[str, ...], port: int) -> list[Any]:
    """Socket addresses for literal IPs only (AI_NUMERICHOST: no lookup of any kind); one
    this machine cannot use (no IPv6) is skipped."""
    infos: list[Any] = []
    for address in addresses:
        # Built here rather than asked of getaddrinfo, which asyncio runs on a thread: on a
        # loaded machine that hop cost a new connection up to 0.2 s before its request.
        try:
            packed = socket.inet_pton(
                socket.AF_INET6 if ":" in address else socket.AF_INET, address
            )
        except OSError:
            continue
        if len(packed) == 16:
            if not socket.has_ipv6:
                continue
            infos.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
        else:
            infos.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
    return infos


async def _connect_first(host: str, port: int, local_address: str | None) -> socket.socket:
    """Each resolved address in turn; the first one's OS error if none answers.

    (asyncio's create_connection merges several failed addresses into one OSError without
    an errno, which would hide a plain "connection refused" from the error message.)
    """
    loop = asyncio.get_running_loop()
    local = loopback_addresses(host)
    literal = _numeric_infos((host.strip("[]"),), port)
    if local:  # this machine's names are never resolved (app.bench.transport.hosts says why)
        infos = _numeric_infos(local, port)
    elif literal:  # an address, connected to as written
        infos = literal
    else:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    first_error: OSError | None = None
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if local_address:
                sock.bind((local_address, 0))
            await loop.sock_connect(sock, address)
            return sock
        except OSError as error:
            sock.close()
            first_error = first_error or error
        except BaseException:
            sock.close()
            raise
    raise first_error or OSError(f"no address found for {host}")
