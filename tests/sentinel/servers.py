"""Fake OpenAI-compatible servers for the sentinel: each with its own timings, whatever
model name a client asks for, and optionally a runtime version at vLLM's ``/version``."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.bench.fake_openai_server import FakeOpenAIServer, ReceivedRequest, _send_json

BASELINE_TIMING = "ttft_ms=30&itl_ms=10&tokens=16"
SLOW_DECODE_TIMING = "ttft_ms=30&itl_ms=30&tokens=16"


class TimedServer(FakeOpenAIServer):
    """``version`` answers at vLLM's ``/version``; ``answers`` at any other path."""

    def __init__(
        self,
        timing: str,
        version: dict[str, Any] | None = None,
        answers: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        super().__init__()
        self.timing = timing
        self.answers = dict(answers or {})
        if version is not None:
            self.answers["/version"] = version

    async def _route(
        self, request: ReceivedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        if request.method == "GET" and request.path in self.answers:
            await _send_json(writer, 200, self.answers[request.path])
            return True
        if request.method == "POST" and request.path.endswith("/chat/completions"):
            body = json.loads(request.body)
            body["model"] = f"fake?{self.timing}"
            request.body = json.dumps(body).encode()
        return await super()._route(request, reader, writer)


@contextmanager
def timed_server(
    timing: str,
    version: dict[str, Any] | None = None,
    answers: dict[str, dict[str, Any]] | None = None,
) -> Iterator[TimedServer]:
    """A server on 127.0.0.1 on a thread of its own (the CLI under test runs synchronously)."""
    loop = asyncio.new_event_loop()
    server = TimedServer(timing, version, answers)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
