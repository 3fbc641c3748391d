"""Helpers for the benchmark client tests: a fake OpenAI-compatible server per test."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from fake_openai_server import FakeOpenAIServer

from app.bench.plan import BenchPlan

T = TypeVar("T")
ServerTest = Callable[[FakeOpenAIServer], Awaitable[T]]


def run_with_server(body: ServerTest[T]) -> T:
    """Run ``body(server)`` in a fresh event loop with a fake server listening on 127.0.0.1."""

    async def main() -> T:
        async with FakeOpenAIServer() as server:
            return await body(server)

    return asyncio.run(main())


def fake_plan(server: FakeOpenAIServer, model: str = "fake", **overrides: Any) -> BenchPlan:
    """A small, fast plan against the fake server."""
    settings: dict[str, Any] = {
        "base_url": server.base_url,
        "model": model,
        "lengths": [300],
        "repeat": 3,
        "max_tokens": 16,
        "concurrency_levels": [1, 2],
        "requests_per_stream": 1,
        "needle": False,
        "request_timeout_s": 5,
        "connect_timeout_s": 2,
    }
    settings.update(overrides)
    return BenchPlan(**settings)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hold: bool) -> None:
    """Copy ``reader`` to ``writer``; ``hold`` keeps every byte until the answer's
    ``[DONE]``, as a proxy that buffers whole responses does."""
    kept = b""
    try:
        while data := await reader.read(65536):
            if not hold:
                writer.write(data)
                await writer.drain()
                continue
            kept += data
            if b"[DONE]" in kept and kept.endswith(b"0\r\n\r\n"):
                writer.write(kept)
                await writer.drain()
                kept = b""
    except ConnectionError:
        pass
    finally:
        with contextlib.suppress(ConnectionError):
            writer.close()


@contextlib.asynccontextmanager
async def buffering_proxy(upstream_port: int) -> AsyncIterator[int]:
    """A proxy on 127.0.0.1 in front of ``upstream_port`` that holds each answer until it
    is whole; yields its port."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
        await asyncio.gather(_pump(reader, up_writer, False), _pump(up_reader, writer, True))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
