"""How much load one benchmark-client process sustains, and how exact its TTFT stays.

Run from the repository root:  .venv/bin/python tests/perf/bench_client_overhead.py [--quick]

The fake OpenAI-compatible server runs in its own process (its own core on a 2-core
machine), the client in this one, both on 127.0.0.1. Three measurements:

1. Flat out: N streams, the server sending tokens with no delay; output tokens/s, the CPU
   each side spent (as a share of the wall time, which says whether the client is the
   bottleneck), the client's CPU seconds and its output tokens per client CPU second. The
   last is the client's own cost, steady however loaded the machine is; tokens/s is what
   the machine sustained, the server included (it shares the cores). ``--runs 3`` repeats
   this table, to show that every cell completes every request run after run.
2. Paced: N streams at a fixed 10 ms inter-token gap, three requests each; achieved vs
   ideal tokens/s (no time between requests, an upper bound) and how far the measured gaps
   drift from 10 ms. The client keeps up while tokens/s stays near ideal and the gap
   error stays small; a p50 gap error near -10 ms means chunks arrive in clumps.
3. TTFT error: N streams started at once against a known 100 ms first-token delay. The
   server notes when it wrote each first token (CLOCK_MONOTONIC, shared by both processes),
   so the client's own error (its TTFT minus the true one) is told apart from the server's
   delay (the true TTFT minus 100 ms: one Python process reading N requests at once).

Targets: client TTFT error under 2 ms (p50) at 64 concurrent streams, and at least 30,000
output tokens/s flat out from one client process at every stream count. The machine's load
average is printed first: other processes on the same cores show up in every figure. Every
cell prints ``failed: N`` with the kinds of failure: a request that does not complete is
counted and classified, never left out of an average, and ``slowest_s`` says how long the
longest request took (its timeout is 120 s).
The client runs on uvloop when installed, as ``run_benchmark_sync`` does (``--asyncio``
for the stdlib loop).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

import httpx  # noqa: E402

from app.bench.metrics import percentile  # noqa: E402
from app.bench.procedure import fastest_event_loop_factory  # noqa: E402
from app.bench.result import RequestSample  # noqa: E402
from app.bench.shards import quiet_gc  # noqa: E402
from app.bench.stream.request import stream_chat  # noqa: E402
from app.bench.transport.endpoint import (  # noqa: E402
    ChatEndpoint,
    StreamClients,
    chat_completions_url,
    make_http_client,
)

MESSAGES = [{"role": "user", "content": "one two three four"}]
TTFT_TARGET_MS = 2.0
TOKENS_PER_S_TARGET = 30_000


@dataclass
class FakeServerProcess:
    process: subprocess.Popen[str]
    root_url: str

    @classmethod
    def start(cls) -> FakeServerProcess:
        script = ROOT / "tests" / "bench" / "fake_openai_server.py"
        process = subprocess.Popen(
            [sys.executable, str(script), "--port", "0"], stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("PORT "):
            process.kill()
            raise RuntimeError(f"fake server did not start: {line!r}")
        return cls(process, f"http://127.0.0.1:{line.split()[1]}")

    def stats(self, reset: bool = False) -> dict[str, float]:
        path = "/stats/reset" if reset else "/stats"
        return httpx.get(self.root_url + path, trust_env=False).json()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@contextlib.asynccontextmanager
async def stream_endpoints(
    server: FakeServerProcess, model: str, streams: int
) -> AsyncIterator[list[ChatEndpoint]]:
    """One endpoint per stream, each with its own client, as the concurrency ramp does."""
    clients = StreamClients(
        lambda: make_http_client(api_key=None, connect_timeout_s=10, request_timeout_s=120)
    )
    url = chat_completions_url(server.root_url)
    try:
        yield [
            ChatEndpoint(http=clients.get(index), url=url, model=model, request_timeout_s=120)
            for index in range(streams)
        ]
    finally:
        await clients.aclose()


async def streams_until(
    endpoints: list[ChatEndpoint], seconds: float, max_tokens: int
) -> tuple[list[RequestSample], float]:
    deadline = time.perf_counter() + seconds
    samples: list[RequestSample] = []

    async def one_stream(endpoint: ChatEndpoint) -> None:
        while time.perf_counter() < deadline:
            samples.append(await stream_chat(endpoint, MESSAGES, max_tokens))

    started = time.perf_counter()
    await asyncio.gather(*(one_stream(endpoint) for endpoint in endpoints))
    return samples, time.perf_counter() - started


async def requests_in_turn(
    endpoint: ChatEndpoint, count: int, max_tokens: int
) -> list[RequestSample]:
    return [await stream_chat(endpoint, MESSAGES, max_tokens) for _ in range(count)]


async def flat_out(
    server: FakeServerProcess, streams: int, seconds: float
) -> dict[str, float | str]:
    async with stream_endpoints(server, "fake?ttft_ms=0&itl_ms=0&tokens=200", streams) as endpoints:
        await streams_until(endpoints, 0.3, 200)  # open the connections
        server_cpu = server.stats()["cpu_s"]
        client_cpu = time.process_time()
        samples, wall = await streams_until(endpoints, seconds, 200)
        client_cpu = time.process_time() - client_cpu
        server_cpu = server.stats()["cpu_s"] - server_cpu
    ok = [sample for sample in samples if sample.ok]
    tokens = sum(sample.output_tokens or 0 for sample in ok)
    report_errors(f"flat out, {streams} streams", samples)
    return {
        "streams": streams,
        "requests": len(samples),
        "failed": len(samples) - len(ok),
        "slowest_s": max((sample.end_ms or 0.0) for sample in samples) / 1000,
        "tokens_per_s": tokens / wall,
        "client_cpu_s": client_cpu,
        "tokens_per_cpu_s": tokens / client_cpu if client_cpu > 0 else 0.0,
        "server_tokens_per_cpu_s": tokens / server_cpu if server_cpu > 0 else 0.0,
        "client_cpu_pct": 100 * client_cpu / wall,
        "server_cpu_pct": 100 * server_cpu / wall,
        # The side that spends more CPU per token sets the pace: the other one waits.
        "limit": "server" if server_cpu > client_cpu else "client",
    }


def report_errors(cell: str, samples: list[RequestSample]) -> None:
    """Every failed request is counted and classified, never lost in an average."""
    kinds = Counter(
        f"{sample.error.kind}: {sample.error.message[:100]}" for sample in samples if sample.error
    )
    print(f"   {cell}: failed: {sum(kinds.values())}", flush=True)
    for what, count in kinds.most_common(3):
        print(f"   {cell}: {count} x {what}", flush=True)


async def paced(server: FakeServerProcess, streams: int, seconds: float) -> dict[str, float]:
    itl_ms, tokens = 10.0, 100
    model = f"fake?ttft_ms=5&itl_ms={itl_ms:g}&tokens={tokens}"
    rounds = max(round(seconds), 1)  # each request lasts about one second
    async with stream_endpoints(server, model, streams) as endpoints:
        await streams_until(endpoints, 0.01, 4)
        client_cpu = time.process_time()
        started = time.perf_counter()
        batches = await asyncio.gather(
            *(requests_in_turn(endpoint, rounds, tokens) for endpoint in endpoints)
        )
        wall = time.perf_counter() - started
        client_cpu = time.process_time() - client_cpu
    samples = [sample for batch in batches for sample in batch]
    ok = [sample for sample in samples if sample.ok]
    report_errors(f"paced, {streams} streams", samples)
    gaps = [gap - itl_ms for sample in ok for gap in sample.itl_ms]
    produced = sum(sample.output_tokens or 0 for sample in ok)
    return {
        "streams": streams,
        "failed": len(samples) - len(ok),
        "tokens_per_s": produced / wall,
        # Each request: 5 ms to the first token, then 99 gaps of 10 ms.
        "ideal_per_s": streams * tokens / ((5 + (tokens - 1) * itl_ms) / 1000),
        "gap_err_p50_ms": percentile(gaps, 0.5) or 0.0,
        "gap_err_p99_ms": percentile(gaps, 0.99) or 0.0,
        "client_cpu_pct": 100 * client_cpu / wall,
    }


async def ttft_error(server: FakeServerProcess, streams: int, rounds: int) -> dict[str, float]:
    """Measured TTFT against the server's own clock, both CLOCK_MONOTONIC.

    ``client error`` = measured TTFT - (server wrote first token - client wrote request):
    what the client adds by stamping late. ``server delay`` = the latter minus the injected
    100 ms: a single-process fake server reading 256 requests at once queues them too.
    """
    injected_ms = 100.0
    model = f"fake?ttft_ms={injected_ms:g}&itl_ms=20&tokens=16"
    measured: list[tuple[str, ChatEndpoint, RequestSample]] = []
    async with stream_endpoints(server, model, streams) as endpoints:
        await asyncio.gather(*(stream_chat(endpoint, MESSAGES, 4) for endpoint in endpoints))
        server.stats(reset=True)
        for turn in range(rounds):
            rids = [f"{turn}-{index}" for index in range(streams)]
            for endpoint, rid in zip(endpoints, rids, strict=True):
                endpoint.model = f"{model}&rid={rid}"
            batch = await asyncio.gather(
                *(stream_chat(endpoint, MESSAGES, 16) for endpoint in endpoints)
            )
            measured += list(zip(rids, endpoints, batch, strict=True))
    written = server.stats()["first_token_written_ns"]
    report_errors(f"TTFT error, {streams} streams", [sample for _, _, sample in measured])
    client_errors: list[float] = []
    server_delays: list[float] = []
    for rid, endpoint, sample in measured:
        if sample.ttft_ms is None or rid not in written:
            continue
        sent_ns = endpoint.origin_ns + sample.send_offset_ms * 1e6
        true_ttft_ms = (written[rid] - sent_ns) / 1e6
        client_errors.append(sample.ttft_ms - true_ttft_ms)
        server_delays.append(true_ttft_ms - injected_ms)
    return {
        "streams": streams,
        "samples": len(client_errors),
        "failed": sum(not sample.ok for _, _, sample in measured),
        "client_err_p50_ms": percentile(client_errors, 0.5) or 0.0,
        "client_err_p90_ms": percentile(client_errors, 0.9) or 0.0,
        "client_err_p99_ms": percentile(client_errors, 0.99) or 0.0,
        "client_err_max_ms": max(client_errors, default=0.0),
        "server_delay_p50_ms": percentile(server_delays, 0.5) or 0.0,
        "server_delay_p99_ms": percentile(server_delays, 0.99) or 0.0,
    }


def print_table(title: str, rows: list[dict[str, float | str]]) -> None:
    print(f"\n{title}")
    columns = list(rows[0])
    widths = [max(len(column), 10) for column in columns]
    print("  ".join(column.rjust(width) for column, width in zip(columns, widths, strict=True)))
    for row in rows:
        cells = [_format(row[column]) for column in columns]
        print("  ".join(cell.rjust(width) for cell, width in zip(cells, widths, strict=True)))


def _format(value: float | str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value)}"
    return f"{value:.2f}"


LOOP_FACTORY: Callable[[], asyncio.AbstractEventLoop] | None = None


def run(experiment: Callable[..., Awaitable[dict[str, Any]]], *args: object) -> dict[str, Any]:
    # As the procedure runs a ramp level: the garbage collector quiet meanwhile.
    with asyncio.Runner(loop_factory=LOOP_FACTORY) as runner, quiet_gc():
        return runner.run(experiment(*args))


def main() -> int:
    parser = argparse.ArgumentParser(description="benchmark-client overhead on this machine")
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    parser.add_argument(
        "--asyncio", action="store_true", help="use the stdlib event loop, not uvloop"
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="repeat the flat-out table this many times"
    )
    parser.add_argument(
        "--flat-only", action="store_true", help="only the flat-out table (with --runs)"
    )
    options = parser.parse_args()
    global LOOP_FACTORY
    # The same choice as run_benchmark_sync makes.
    LOOP_FACTORY = None if options.asyncio else fastest_event_loop_factory()
    seconds = 1.5 if options.quick else 3.0
    rounds = 2 if options.quick else 5
    loop = "asyncio" if LOOP_FACTORY is None else "uvloop"
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}, "
        f"{loop} client; fake server in its own process"
    )
    server = FakeServerProcess.start()
    try:
        flat_rows: list[dict[str, Any]] = []
        for number in range(1, options.runs + 1):
            rows = [run(flat_out, server, streams, seconds) for streams in (1, 16, 64, 256)]
            title = "1. flat out (server sends 200 tokens with no delay)"
            print_table(title + (f", run {number}" if options.runs > 1 else ""), rows)
            flat_rows += rows
        if options.flat_only:
            print_flat_verdict(flat_rows)
            return 0
        print_table(
            "2. paced streams (10 ms between tokens, 100 tokens/s each)",
            [run(paced, server, streams, seconds) for streams in (16, 64, 256, 512)],
        )
        ttft_rows = [run(ttft_error, server, streams, rounds) for streams in (1, 64, 256)]
        print_table("3. TTFT error vs an injected 100 ms (streams started together)", ttft_rows)
    finally:
        server.stop()
    at_64 = next(row for row in ttft_rows if row["streams"] == 64)
    p50, p99 = at_64["client_err_p50_ms"], at_64["client_err_p99_ms"]
    verdict = "met" if p50 < TTFT_TARGET_MS else "NOT met"
    print(
        f"\ntarget: client TTFT error < {TTFT_TARGET_MS:g} ms at 64 streams: {verdict} "
        f"(p50 {p50:.2f} ms, p99 {p99:.2f} ms)"
    )
    print_flat_verdict(flat_rows)
    return 0


def print_flat_verdict(flat_rows: list[dict[str, Any]]) -> None:
    """Two verdicts: the tokens/s this machine sustained, server included, and the
    client's own capacity (output tokens per client CPU second), which is what one client
    process could sustain with a core to itself; and which side was the limit."""
    slowest = min(row["tokens_per_s"] for row in flat_rows)
    least_per_cpu = min(row["tokens_per_cpu_s"] for row in flat_rows)
    verdict = "met" if slowest >= TOKENS_PER_S_TARGET else "NOT met"
    print(
        f"target: one client process sustains >= {TOKENS_PER_S_TARGET:,} tokens/s flat out "
        f"at every stream count: {verdict} (slowest {slowest:,.0f} tokens/s)"
    )
    capacity = "met" if least_per_cpu >= TOKENS_PER_S_TARGET else "NOT met"
    print(
        f"client capacity >= {TOKENS_PER_S_TARGET:,} tokens per client CPU second at every "
        f"stream count: {capacity} (least {least_per_cpu:,.0f})"
    )
    for streams in sorted({int(row["streams"]) for row in flat_rows}):
        cells = [row for row in flat_rows if row["streams"] == streams]
        server_bound = sum(row["limit"] == "server" for row in cells)
        client_us = 1e6 / statistics.median(row["tokens_per_cpu_s"] for row in cells)
        server_us = 1e6 / statistics.median(row["server_tokens_per_cpu_s"] for row in cells)
        print(
            f"{streams:>4} streams: client {client_us:.1f} us CPU per token, fake server "
            f"{server_us:.1f} us; the limit was the "
            + ("server" if 2 * server_bound > len(cells) else "client")
            + f" ({server_bound} of {len(cells)} runs server-bound)"
        )
    failed = sum(int(row["failed"]) for row in flat_rows)
    print(f"flat out, every cell of every run: failed: {failed}")


if __name__ == "__main__":
    raise SystemExit(main())
