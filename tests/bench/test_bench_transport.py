"""The stamping network backend under httpx: arrival stamps, keep-alive, flow control, TLS."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from time import perf_counter_ns

import httpx
import pytest

from app.bench.transport import stamped_socket, stamped_stream
from app.bench.transport.pool import StampingTransport, arrival_ns, body_reader

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
Run = Callable[[Awaitable[None]], None]


@pytest.fixture(params=["asyncio", "uvloop"])
def run(request: pytest.FixtureRequest) -> Run:
    """Runs a coroutine on each loop the client may use (uvloop in the benchmark)."""
    factory = None
    if request.param == "uvloop":
        factory = pytest.importorskip("uvloop").new_event_loop

    def run_on_loop(main: Awaitable[None]) -> None:
        with asyncio.Runner(loop_factory=factory) as runner:
            runner.run(main)  # type: ignore[arg-type]

    return run_on_loop


async def read_head(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


CHUNKED_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def client(verify: ssl.SSLContext | None = None, read_timeout_s: float = 5.0) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    return httpx.AsyncClient(
        transport=StampingTransport(verify=verify or ssl.create_default_context(), limits=limits),
        timeout=httpx.Timeout(read_timeout_s, connect=2.0),
    )


async def serving(handler: Handler, body: Callable[[str], Awaitable[None]], **tls: object) -> None:
    server = await asyncio.start_server(handler, "127.0.0.1", 0, **tls)  # type: ignore[arg-type]
    port = server.sockets[0].getsockname()[1]
    try:
        await body(f"127.0.0.1:{port}")
    finally:
        server.close()


@pytest.fixture(params=["kernel", "loop"])
def stamps(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """With the kernel's arrival stamps (Linux) and with the event loop's."""
    if request.param == "loop":
        monkeypatch.setattr(stamped_socket, "SO_TIMESTAMPNS", None)
    elif stamped_socket.SO_TIMESTAMPNS is None:
        pytest.skip("no kernel receive timestamps on this platform")
    return str(request.param)


def test_pieces_carry_the_time_their_bytes_arrived_not_when_they_were_read(
    run: Run, stamps: str
) -> None:
    """Bytes that wait in the client while its task is busy keep their arrival stamp."""
    written: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(CHUNKED_HEAD)
        await writer.drain()
        await asyncio.sleep(0.02)
        written.append(perf_counter_ns())
        writer.write(chunk(b"data: first\n\n"))
        await writer.drain()
        await asyncio.sleep(0.02)
        written.append(perf_counter_ns())
        writer.write(chunk(b"data: second\n\n") + b"0\r\n\r\n")
        await writer.drain()

    async def body(host: str) -> None:
        async with client() as http:
            request = http.build_request("GET", f"http://{host}/")
            response = await http.send(request, stream=True)
            await asyncio.sleep(0.1)  # both chunks arrive while nobody reads
            read_at = perf_counter_ns()
            stamps = []
            async for piece in response.aiter_raw():
                stamps.append((piece, arrival_ns(response)))
            await response.aclose()
        assert [piece for piece, _ in stamps] == [b"data: first\n\n", b"data: second\n\n"]
        for (_, stamp), sent in zip(stamps, written, strict=True):
            assert stamp is not None
            assert sent <= stamp < sent + 15_000_000  # within 15 ms of the write
            assert read_at - stamp > 40_000_000  # long before the task read it

    run(serving(handler, body))


def test_kernel_stamps_leave_out_the_time_the_event_loop_was_blocked(run: Run) -> None:
    """The loop cannot read while it is blocked; the kernel still notes when bytes came."""
    if stamped_socket.SO_TIMESTAMPNS is None:
        pytest.skip("no kernel receive timestamps on this platform")
    listener = socket.create_server(("127.0.0.1", 0))
    written: list[int] = []

    def serve() -> None:  # a thread, so that it writes while the client's loop is blocked
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(CHUNKED_HEAD)
            time.sleep(0.05)
            written.append(perf_counter_ns())
            connection.sendall(chunk(b"data: first\n\n") + b"0\r\n\r\n")
            time.sleep(0.2)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    async def body() -> None:
        async with client() as http:
            url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
            response = await http.send(http.build_request("GET", url), stream=True)
            time.sleep(0.15)  # blocks the event loop across the write
            pieces = [arrival_ns(response) async for _ in response.aiter_raw()]
            await response.aclose()
        (stamp,) = pieces
        assert stamp is not None
        assert written[0] <= stamp < written[0] + 5_000_000  # not ~100 ms later

    try:
        run(body())
    finally:
        thread.join(timeout=5)
        listener.close()


def test_kernel_stamp_is_moved_onto_the_monotonic_clock_and_never_in_the_future() -> None:
    if stamped_socket.SO_TIMESTAMPNS is None:
        pytest.skip("no kernel receive timestamps on this platform")
    level, kind = socket.SOL_SOCKET, stamped_socket.SO_TIMESTAMPNS

    def ancillary(wall_ns: int) -> list[tuple[int, int, bytes]]:
        timespec = struct.pack("@ll", *divmod(wall_ns, 1_000_000_000))
        return [(socket.IPPROTO_IP, 1, b"other"), (level, kind, timespec)]

    now = perf_counter_ns()
    stamp = stamped_socket._kernel_stamp(ancillary(time.time_ns() - 20_000_000), now)
    assert stamp is not None and abs(stamp - (now - 20_000_000)) < 2_000_000
    now = perf_counter_ns()
    assert stamped_socket._kernel_stamp(ancillary(time.time_ns() + 10**9), now) == now  # a step
    assert stamped_socket._kernel_stamp([], now) is None


def test_keep_alive_is_reused_and_a_server_closed_idle_connection_is_replaced(run: Run) -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        for _ in range(2):
            await read_head(reader)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()
        writer.close()  # an idle keep-alive connection the server drops

    async def body(host: str) -> None:
        async with client() as http:
            for _ in range(2):
                assert (await http.get(f"http://{host}/")).text == "ok"
            assert connections == 1
            await asyncio.sleep(0.05)  # the close reaches the client
            assert (await http.get(f"http://{host}/")).text == "ok"
            assert connections == 2

    run(serving(handler, body))


def test_a_body_larger_than_the_buffer_arrives_whole(
    monkeypatch: pytest.MonkeyPatch, run: Run
) -> None:
    monkeypatch.setattr(stamped_stream, "HIGH_WATER", 64 * 1024)
    monkeypatch.setattr(stamped_stream, "LOW_WATER", 16 * 1024)
    payload = bytes(range(256)) * 8 * 1024  # 2 MiB

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(payload))
        writer.write(payload)
        await writer.drain()

    async def body(host: str) -> None:
        async with client() as http:
            response = await http.send(http.build_request("GET", f"http://{host}/"), stream=True)
            await asyncio.sleep(0.1)  # the client stops reading the socket past HIGH_WATER
            assert response.extensions["network_stream"].inbox._paused
            received = b"".join([piece async for piece in response.aiter_raw()])
            await response.aclose()
        assert received == payload

    run(serving(handler, body))


def test_a_server_that_goes_quiet_is_a_read_timeout(run: Run) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(CHUNKED_HEAD + chunk(b"data: one\n\n"))
        await writer.drain()
        await asyncio.sleep(2)

    async def body(host: str) -> None:
        async with client(read_timeout_s=0.2) as http:
            response = await http.send(http.build_request("GET", f"http://{host}/"), stream=True)
            with pytest.raises(httpx.ReadTimeout):
                async for _ in response.aiter_raw():
                    pass
            await response.aclose()

    run(serving(handler, body))


def test_a_connection_cut_mid_body_is_a_read_error(run: Run) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(CHUNKED_HEAD + chunk(b"data: one\n\n"))
        await writer.drain()
        writer.transport.abort()

    async def body(host: str) -> None:
        async with client() as http:
            response = await http.send(http.build_request("GET", f"http://{host}/"), stream=True)
            with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
                async for _ in response.aiter_raw():
                    pass
            await response.aclose()

    run(serving(handler, body))


def self_signed(folder: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def test_https_goes_through_start_tls_and_keeps_the_stamps(tmp_path: Path, run: Run) -> None:
    cert, key = self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    client_tls = ssl.create_default_context(cafile=str(cert))

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(CHUNKED_HEAD + chunk(b"data: secure\n\n") + b"0\r\n\r\n")
        await writer.drain()

    async def body(host: str) -> None:
        async with client(verify=client_tls) as http:
            response = await http.send(http.build_request("GET", f"https://{host}/"), stream=True)
            pieces = [(piece, arrival_ns(response)) async for piece in response.aiter_raw()]
            await response.aclose()
        assert [piece for piece, _ in pieces] == [b"data: secure\n\n"]
        assert all(stamp is not None for _, stamp in pieces)

    run(serving(handler, body, ssl=server_tls))


def test_an_untrusted_certificate_is_a_connect_error(tmp_path: Path, run: Run) -> None:
    cert, key = self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async def body(host: str) -> None:
        async with client() as http:  # the system's CAs, which do not know this certificate
            with pytest.raises(httpx.ConnectError):
                await http.get(f"https://{host}/")

    run(serving(handler, body, ssl=server_tls))


def test_a_request_cancelled_before_its_answer_gives_its_connection_slot_back(run: Run) -> None:
    """The overall timeout of a request lands while it waits for the head: the one slot
    of the pool is free again at once and the hung connection is not reused."""
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        head = await read_head(reader)
        if b"/hang" in head:
            await asyncio.sleep(5)
            return
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()

    async def body(host: str) -> None:
        async with client() as http:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await http.get(f"http://{host}/hang")
            response = await http.get(f"http://{host}/", timeout=httpx.Timeout(2.0, pool=0.5))
            assert response.text == "ok"
            assert connections == 2

    run(serving(handler, body))


def test_a_busy_pool_is_a_pool_timeout_and_a_body_left_unread_is_not_reused(run: Run) -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while True:
            try:
                await read_head(reader)
            except asyncio.IncompleteReadError:
                return
            writer.write(CHUNKED_HEAD + chunk(b"data: one\n\n"))
            await writer.drain()  # the body's end never comes

    async def body(host: str) -> None:
        async with client() as http:
            first = await http.send(http.build_request("GET", f"http://{host}/"), stream=True)
            with pytest.raises(httpx.PoolTimeout):
                await http.get(f"http://{host}/", timeout=httpx.Timeout(2.0, pool=0.1))
            await first.aclose()  # mid-body: closed, not given back
            second = await http.send(http.build_request("GET", f"http://{host}/"), stream=True)
            await second.aclose()
            assert connections == 2

    run(serving(handler, body))


def test_a_response_that_says_connection_close_is_not_reused(run: Run) -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()

    async def body(host: str) -> None:
        async with client() as http:
            for _ in range(2):
                assert (await http.get(f"http://{host}/")).text == "ok"
        assert connections == 2

    run(serving(handler, body))


def test_a_body_split_across_reads_keeps_each_reads_stamp(run: Run) -> None:
    """The segment that completes a chunk stamps it; one read's chunks come out as one."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        first, second = chunk(b"data: a\n\n") + chunk(b"data: b\n\n"), chunk(b"data: c\n\n")
        writer.write(CHUNKED_HEAD + first + second[:4])
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(second[4:] + b"0\r\n\r\n")
        await writer.drain()

    async def body(host: str) -> None:
        async with client() as http:
            response = await http.send(http.build_request("GET", f"http://{host}/"), stream=True)
            exchange = body_reader(response)
            assert exchange is not None
            buffers = []
            while data := await exchange.read():
                buffers.append((data, exchange.stream.arrived_ns))
            await response.aclose()
        assert [data for data, _ in buffers] == [b"data: a\n\ndata: b\n\nd", b"ata: c\n\n"]
        (_, early), (_, late) = buffers
        assert early is not None and late is not None and late - early > 30_000_000

    run(serving(handler, body))
