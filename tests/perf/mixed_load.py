"""Readers beside writers, for bench_mixed_load.py: closed-loop GET clients on raw HTTP/1.1
keep-alive connections (as lean as ingest_load's writers), and a run of readers and writers
at once, each in a process of its own so the two loads do not share one core's event loop.
"""

import asyncio
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from tests.perf.ingest_load import Connection, ConnectionLost, Tally, run_load

try:  # uvicorn[standard] installs it; the client runs on the plain loop without
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None


@dataclass
class Reads:
    latencies_ms: list[float] = field(default_factory=list)
    failures: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return len(self.latencies_ms) / self.seconds if self.seconds else 0.0


def share(latencies_ms: list[float], part: float) -> float:
    ordered = sorted(latencies_ms)
    return ordered[min(len(ordered) - 1, int(part * len(ordered)))] if ordered else 0.0


async def read_loop(
    connection: Connection, payload: bytes, deadline: float, reads: Reads, expected: int
) -> None:
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        try:
            status, _ = await connection.request(payload)
        except ConnectionLost:
            reads.failures += 1
            continue
        if status != expected:
            reads.failures += 1
            continue
        reads.latencies_ms.append((time.perf_counter() - start) * 1000)
    connection.close()


async def read(port: int, paths: list[str], clients: int, seconds: float, expected: int) -> Reads:
    """`clients` readers, each going round `paths` (one path: the same URL again)."""
    reads = Reads()
    heads = [
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/html\r\n\r\n".encode()
        for path in paths
    ]
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()

    async def client(number: int) -> None:
        connection = Connection("127.0.0.1", port)
        if len(heads) == 1:
            await read_loop(connection, heads[0], deadline, reads, expected)
            return
        for index in range(number, len(heads), clients):  # each path once, spread out
            if time.perf_counter() >= deadline:
                break
            start = time.perf_counter()
            try:
                status, _ = await connection.request(heads[index])
            except ConnectionLost:
                reads.failures += 1
                continue
            if status == expected:
                reads.latencies_ms.append((time.perf_counter() - start) * 1000)
            else:
                reads.failures += 1
        connection.close()

    await asyncio.gather(*(client(n) for n in range(clients)))
    reads.seconds = time.perf_counter() - started
    return reads


def run_reads(
    port: int, paths: list[str], clients: int, seconds: float, expected: int = 200
) -> Reads:
    coroutine = read(port, paths, clients, seconds, expected)
    if uvloop is None:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


def timed_writes(
    port: int, body: dict[str, Any], run: str, clients: int, seconds: float
) -> tuple[Tally, float]:
    start = time.perf_counter()
    tally = run_load(port, body, run, clients, seconds)
    return tally, time.perf_counter() - start


def side_by_side(
    port: int,
    path: str | None,
    readers: int,
    body: dict[str, Any] | None,
    writers: int,
    seconds: float,
    run: str,
) -> tuple[Reads | None, tuple[Tally, float] | None]:
    """Readers of `path` and writers of `body` at once, each load in its own process."""
    with ProcessPoolExecutor(2) as pool:
        reading = pool.submit(run_reads, port, [path], readers, seconds) if path else None
        writing = pool.submit(timed_writes, port, body, run, writers, seconds) if body else None
        return (
            reading.result() if reading else None,
            writing.result() if writing else None,
        )
