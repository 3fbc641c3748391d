"""Helpers for the benchmark client tests: a fake OpenAI-compatible server per test."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fake_openai_server import FakeOpenAIServer

from app.bench.result import BenchPlan

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
