"""How much memory the benchmark client takes at 1,024 concurrent streams.

Run from the repository root:  .venv/bin/python tests/perf/bench_client_memory.py [--quick]

The fake OpenAI-compatible server runs in its own process, the client in this one, both on
127.0.0.1, as in bench_client_overhead.py (whose server and per-stream clients this reuses:
one HTTP client per stream, as the concurrency ramp opens them). Every stream sends its
requests in turn, each answered at a fixed 10 ms inter-token gap, so all 1,024 are open at
once for the whole run (connecting with a longer timeout than the ramp's, so that a loaded
machine's slow accepts do not drop streams from the count). Two passes, because tracing
allocations slows the client:

1. RSS: the client's resident memory before the streams open, its peak while they run
   (sampled every 50 ms) and the kernel's high-water mark for the process; the growth over
   the baseline, in all and per stream.
2. tracemalloc: the peak of the Python heap the streams allocated (the traced peak over the
   traced size before they opened), in all and per stream; RSS also holds the interpreter,
   the event loop's and sockets' native buffers, which tracemalloc does not see.

Every pass prints ``failed: N`` with the kinds of failure: a stream that did not complete
is counted, never left out. No target is asserted: the figures are printed for the record.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_client_overhead import (  # noqa: E402
    FakeServerProcess,
    report_errors,
    requests_in_turn,
)

from app.bench.procedure import fastest_event_loop_factory  # noqa: E402
from app.bench.result import RequestSample  # noqa: E402
from app.bench.shards import quiet_gc  # noqa: E402
from app.bench.transport.endpoint import (  # noqa: E402
    ChatEndpoint,
    StreamClients,
    chat_completions_url,
    make_http_client,
)

STREAMS = 1024
ITL_MS = 10
MIB = 1024 * 1024
# 1,024 connections opened at once on a loaded two-core machine (and slower still while
# tracemalloc traces every allocation) take longer than the ramp's 10 s to all connect.
CONNECT_TIMEOUT_S = 120


@contextlib.asynccontextmanager
async def stream_endpoints(
    server: FakeServerProcess, model: str, streams: int
) -> AsyncIterator[list[ChatEndpoint]]:
    """One endpoint per stream, each with its own client, as the concurrency ramp does."""
    clients = StreamClients(
        lambda: make_http_client(
            api_key=None, connect_timeout_s=CONNECT_TIMEOUT_S, request_timeout_s=300
        )
    )
    url = chat_completions_url(server.root_url)
    try:
        yield [
            ChatEndpoint(http=clients.get(index), url=url, model=model, request_timeout_s=300)
            for index in range(streams)
        ]
    finally:
        await clients.aclose()


def raise_file_limit(needed: int) -> None:
    """Each stream holds a socket: the soft limit goes up to the hard one when it is short."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


class RssSampler:
    """The process's resident memory, sampled on the event loop while the streams run."""

    def __init__(self) -> None:
        self.process = psutil.Process()
        self.peak = self.process.memory_info().rss
        self.task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        while True:
            self.peak = max(self.peak, self.process.memory_info().rss)
            await asyncio.sleep(0.05)

    def start(self) -> None:
        self.task = asyncio.create_task(self._sample())

    async def stop(self) -> None:
        assert self.task is not None
        self.peak = max(self.peak, self.process.memory_info().rss)
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def all_streams(
    server: FakeServerProcess, streams: int, rounds: int, tokens: int, on_open: Callable[[], Any]
) -> tuple[list[RequestSample], float]:
    """`streams` endpoints each sending `rounds` requests in turn; `on_open` runs once the
    streams' clients exist, before the first request."""
    model = f"fake?ttft_ms=5&itl_ms={ITL_MS}&tokens={tokens}"
    async with stream_endpoints(server, model, streams) as endpoints:
        on_open()
        started = time.perf_counter()
        batches = await asyncio.gather(
            *(requests_in_turn(endpoint, rounds, tokens) for endpoint in endpoints)
        )
        wall = time.perf_counter() - started
    return [sample for batch in batches for sample in batch], wall


async def rss_pass(server: FakeServerProcess, streams: int, rounds: int, tokens: int) -> dict:
    gc.collect()
    baseline = psutil.Process().memory_info().rss
    sampler = RssSampler()
    samples, wall = await all_streams(server, streams, rounds, tokens, sampler.start)
    await sampler.stop()
    report_errors(f"RSS pass, {streams} streams", samples)
    # ru_maxrss is in KiB on Linux: the high-water mark since the process started.
    high_water = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    grown = sampler.peak - baseline
    return {
        "streams": streams,
        "requests": len(samples),
        "failed": sum(not sample.ok for sample in samples),
        "wall_s": wall,
        "rss_before_mib": baseline / MIB,
        "rss_peak_mib": sampler.peak / MIB,
        "rss_high_water_mib": high_water / MIB,
        "rss_grown_mib": grown / MIB,
        "rss_per_stream_kib": grown / streams / 1024,
    }


async def traced_pass(server: FakeServerProcess, streams: int, rounds: int, tokens: int) -> dict:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    samples, wall = await all_streams(server, streams, rounds, tokens, lambda: None)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    report_errors(f"tracemalloc pass, {streams} streams", samples)
    grown = peak - before
    return {
        "streams": streams,
        "requests": len(samples),
        "failed": sum(not sample.ok for sample in samples),
        "wall_s": wall,
        "traced_peak_mib": grown / MIB,
        "traced_per_stream_kib": grown / streams / 1024,
    }


def run(
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None,
    experiment: Callable[..., Awaitable[dict[str, Any]]],
    *args: object,
) -> dict[str, Any]:
    # As the procedure runs a ramp level: the garbage collector quiet meanwhile.
    with asyncio.Runner(loop_factory=loop_factory) as runner, quiet_gc():
        return runner.run(experiment(*args))


def print_row(title: str, row: dict[str, Any]) -> None:
    cells = ", ".join(
        f"{key} {value:,.1f}" if isinstance(value, float) else f"{key} {value:,}"
        for key, value in row.items()
    )
    print(f"{title}: {cells}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description="benchmark-client memory at many streams")
    parser.add_argument("--quick", action="store_true", help="one request per stream")
    parser.add_argument("--streams", type=int, default=STREAMS)
    parser.add_argument("--asyncio", action="store_true", help="the stdlib event loop")
    options = parser.parse_args()
    loop_factory = None if options.asyncio else fastest_event_loop_factory()
    rounds, tokens = (1, 100) if options.quick else (3, 100)
    raise_file_limit(options.streams * 2 + 256)
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    loop = "asyncio" if loop_factory is None else "uvloop"
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}, {loop}; "
        f"{options.streams} streams x {rounds} requests of {tokens} tokens at {ITL_MS} ms",
        flush=True,
    )
    server = FakeServerProcess.start()
    try:
        print_row("RSS", run(loop_factory, rss_pass, server, options.streams, rounds, tokens))
        traced = run(loop_factory, traced_pass, server, options.streams, rounds, tokens)
        print_row("tracemalloc", traced)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
