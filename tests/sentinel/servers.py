"""Fake OpenAI-compatible servers for the sentinel: each with its own timings, whatever
model name a client asks for, and optionally a runtime version at vLLM's ``/version``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.bench.fake_openai_server import FakeOpenAIServer, ReceivedRequest, _send_json

PROJECT_ROOT = Path(__file__).resolve().parents[2]
BASELINE_TIMING = "ttft_ms=60&itl_ms=20&tokens=16"
SLOW_DECODE_TIMING = "ttft_ms=60&itl_ms=60&tokens=16"


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


@dataclass(frozen=True)
class RunningServer:
    base_url: str
    root_url: str


@contextmanager
def timed_server(
    timing: str,
    version: dict[str, Any] | None = None,
    answers: dict[str, dict[str, Any]] | None = None,
) -> Iterator[RunningServer]:
    """A server on 127.0.0.1 in a process of its own, so that its timings do not share an
    interpreter (and its lock) with the client measuring them."""
    spec = json.dumps({"timing": timing, "version": version, "answers": answers or {}})
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.sentinel.servers", spec],
        stdout=subprocess.PIPE,
        text=True,
        cwd=PROJECT_ROOT,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), line
        root = f"http://127.0.0.1:{int(line.split()[1])}"
        yield RunningServer(f"{root}/v1", root)
    finally:
        process.terminate()
        process.wait(timeout=10)


async def _serve(spec: dict[str, Any]) -> None:
    server = TimedServer(spec["timing"], spec.get("version"), spec.get("answers"))
    server.record_requests = False
    await server.start()
    print(f"PORT {server.port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.close()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(json.loads(sys.argv[1])))
