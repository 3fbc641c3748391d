"""A deterministic fake OpenAI-compatible streaming server, in pure asyncio.

Each request's behaviour comes from the ``model`` name, written like a URL query:
``fake?ttft_ms=50&itl_ms=10&tokens=20&per_chunk=3&usage=finish&done=0``. See
:class:`Scenario` for every knob. ``answer=scripted`` answers the text a prompt holds
between ``[[reply:`` and ``]]``, so a test decides whether a task's check passes or fails;
with ``alternate=1`` it answers what ``[[alt:`` ... ``]]`` holds instead, where a prompt
has one, as a second model answering the same task differently would.
``/v1/models`` reports ``max_model_len`` (as vLLM does) when the server is given one, or
when the base URL holds ``/ctx/N/``, e.g. ``http://127.0.0.1:P/ctx/32768/v1``. It counts
prompts at ``POST /tokenize`` (as vLLM does) when given ``tokenize=True`` or when the URL
holds ``/tok/``, by the same rule as its usage figures.

Quality knobs: ``needle_cutoff=N`` finds the needle only in prompts of at most N tokens;
``echo=1`` answers a needle by repeating its sentence and the question; a request with
``tools`` gets one call of the tool its prompt names ("Call the function X"), with
arguments built from that tool's schema, except that ``tool_text=1`` writes the call as
plain answer text and ``malformed_share=F`` breaks the JSON of that share of the calls.

The server schedules each chunk at an absolute time after it has read the request (no
drift), so a client's measurements can be checked against the injected values.

Prompt tokens follow a fixed rule, :func:`count_prompt_tokens`: one token per
whitespace-separated word of every message, plus ``PER_MESSAGE_TOKENS`` per message.

Run as a script (``python fake_openai_server.py --port 0``) it serves until killed and
prints ``PORT <n>`` once listening; ``GET /stats`` reports how late it wrote first tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import re
import time
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import parse_qsl

import msgspec

PER_MESSAGE_TOKENS = 3
_PASSKEY = re.compile(r"passkey(?: of the \w+ \w+)? is (\d+)")
_NEEDLE_SENTENCE = re.compile(r"[^.]*passkey(?: of the \w+ \w+)? is \d+[^.]*\.")
_TOOL_ASKED = re.compile(r"Call the function (\w+)")
_SCRIPTED = re.compile(r"\[\[reply:(.*?)\]\]", re.DOTALL)
_ALTERNATE = re.compile(r"\[\[alt:(.*?)\]\]", re.DOTALL)
_CONTEXT_IN_PATH = re.compile(r"/ctx/(\d+)/")
# Compact UTF-8 JSON, as vLLM writes its chunks (and what multiline=1 splits on); msgspec
# writes it in a third of json.dumps's time, and a flat-out stream's server is the limit.
_ENCODE_CHUNK = msgspec.json.encode


@dataclass
class Scenario:
    ttft_ms: float = 20.0  # request read -> first token chunk
    itl_ms: float = 5.0  # between token chunks
    tokens: int = 8  # output tokens (filler answers)
    per_chunk: int = 1  # tokens carried by each chunk
    # > 1: chunks are made every itl_ms but held back and written N at a time, when the
    # last of them is made (a front end that falls behind, then floods); the answer still
    # ends when its last token is made
    burst: int = 0
    role: str = "first"  # first: role-only chunk at role_ms | with_token | none
    role_ms: float = 0.0
    channel: str = "content"  # content | reasoning_content | reasoning | tool_calls
    reasoning_tokens: int = 0  # the first N tokens go to reasoning_content, the rest to content
    usage: str = (
        "final"  # final (own chunk, empty choices) | finish (on finish chunk) | every | none
    )
    done: bool = True  # send data: [DONE]
    comments: bool = False  # ": keep-alive" comments before and between chunks
    crlf: bool = False
    multiline: bool = False  # each JSON payload over two data: lines
    split: bool = False  # each event written in several TCP pieces
    error_after: int = -1  # >= 0: an error object inside the 200 stream after N token chunks
    http_status: int = 0  # > 0: answer with this status and a JSON error body
    cut_after: int = -1  # >= 0: close the connection mid-stream after N token chunks
    hang: bool = False  # never answer
    max_context: int = 0  # > 0: a context limit in prompt tokens
    overflow: str = "reject"  # reject (HTTP 400) | truncate (silently keep the last tokens)
    answer: str = "filler"  # filler | needle (find "passkey is N") | scripted ([[reply: X]])
    alternate: bool = False  # scripted: answer [[alt: X]] where a prompt holds one (another model)
    ttft_per_inflight_ms: float = 0.0  # added to ttft per other request in flight
    max_inflight: int = 0  # > 0: more concurrent requests than this get HTTP 503
    reject_stream_options: bool = False
    finish_reason: str = "length"
    needle_cutoff: int = 0  # > 0: the needle is missed in prompts longer than this
    echo: bool = False  # answer a needle prompt by repeating it
    tool_text: bool = False  # tool calls written as plain text
    malformed_share: float = 0.0  # this share of tool calls get arguments that are not JSON
    rid: str = ""  # a request id; the server records when it wrote that request's first token
    # After the answer's usage: wait this long before [DONE], then before ending the body
    done_delay_ms: float = 0.0
    linger_ms: float = 0.0
    # > 1: each request's gaps and first-token time are scaled by a factor drawn
    # log-uniformly in [1/noise, noise] (seeded per server): timing that is noise
    noise: float = 0.0

    @classmethod
    def from_model(cls, model: str) -> Scenario:
        _, _, query = model.partition("?")
        scenario = cls()
        types = {item.name: item.type for item in fields(cls)}
        for key, raw in parse_qsl(query):
            if key not in types:
                raise ValueError(f"unknown scenario key {key!r}")
            setattr(scenario, key, _convert(raw, str(types[key])))
        return scenario


def _convert(raw: str, type_name: str) -> Any:
    if type_name == "bool":
        return raw.lower() in ("1", "true", "yes")
    if type_name == "int":
        return int(raw)
    if type_name == "float":
        return float(raw)
    return raw


def count_prompt_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(
        len(str(message.get("content", "")).split()) + PER_MESSAGE_TOKENS for message in messages
    )


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class ServerStats:
    first_token_lateness_ms: list[float] = field(default_factory=list)
    # perf_counter_ns is CLOCK_MONOTONIC on Linux, so a client process can compare these.
    first_token_written_ns: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        late = sorted(self.first_token_lateness_ms)
        summary: dict[str, Any] = {
            "cpu_s": time.process_time(),
            "count": len(late),
            "first_token_written_ns": self.first_token_written_ns,
        }
        if late:
            summary.update(
                mean_ms=sum(late) / len(late), p50_ms=late[len(late) // 2], max_ms=late[-1]
            )
        return summary


class FakeOpenAIServer:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        record_requests: bool = True,
        max_model_len: int | None = None,
        tokenize: bool = False,
    ) -> None:
        self.max_model_len = max_model_len
        self.tokenize = tokenize
        self.tool_requests = 0
        self.host = host
        self.port = port
        self.record_requests = record_requests
        self.requests: list[ReceivedRequest] = []
        self.metrics_texts: list[str] = []
        self.metrics_scrapes = 0
        self.inflight = 0
        self.stats = ServerStats()
        self.rng = random.Random(0)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> FakeOpenAIServer:
        self._server = await asyncio.start_server(self._serve_connection, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        # Aborting the transports ends every handler through EOF; cancelling the handler
        # tasks instead makes asyncio log a spurious error on Python 3.11.
        for writer in list(self._writers):
            writer.transport.abort()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2)

    async def __aenter__(self) -> FakeOpenAIServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- HTTP ------------------------------------------------------------------------------

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self._writers.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                if self.record_requests:
                    self.requests.append(request)
                keep_open = await self._route(request, reader, writer)
                if not keep_open:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            if task is not None:
                self._tasks.discard(task)
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _route(
        self, request: ReceivedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        if request.method == "POST" and request.path.endswith("/chat/completions"):
            return await self._chat(request, reader, writer)
        if request.method == "POST" and request.path.endswith("/tokenize"):
            if not (self.tokenize or "/tok/" in request.path):
                await _send_json(writer, 404, {"detail": "Not Found"})
                return True
            count = count_prompt_tokens(request.json().get("messages", []))
            await _send_json(writer, 200, {"count": count, "tokens": list(range(count))})
            return True
        if request.path == "/metrics":
            self.metrics_scrapes += 1
            text = self.metrics_texts[0] if self.metrics_texts else ""
            if len(self.metrics_texts) > 1:
                self.metrics_texts.pop(0)
            await _send_plain(writer, 200, text.encode(), "text/plain; version=0.0.4")
        elif request.path.endswith("/models"):
            entry: dict[str, Any] = {"id": "fake", "object": "model"}
            in_path = _CONTEXT_IN_PATH.search(request.path)
            context = int(in_path.group(1)) if in_path else self.max_model_len
            if context:
                entry["max_model_len"] = context
            await _send_json(writer, 200, {"object": "list", "data": [entry]})
        elif request.path == "/stats":
            await _send_json(writer, 200, self.stats.summary())
        elif request.path == "/stats/reset":
            self.stats = ServerStats()
            await _send_json(writer, 200, {"ok": True})
        else:
            await _send_json(writer, 404, {"error": {"message": f"no route {request.path}"}})
        return True

    async def _chat(
        self, request: ReceivedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        received = asyncio.get_running_loop().time()
        body = request.json()
        scenario = Scenario.from_model(body.get("model", ""))
        self.inflight += 1
        try:
            return await _Reply(self, scenario, body, received, reader, writer).run()
        finally:
            self.inflight -= 1


class _Reply:
    """One chat request's streamed answer, following its scenario."""

    def __init__(
        self,
        server: FakeOpenAIServer,
        scenario: Scenario,
        body: dict[str, Any],
        received: float,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.server = server
        self.scenario = scenario
        self.body = body
        self.received = received
        self.reader = reader
        self.writer = writer
        self.loop = asyncio.get_running_loop()
        self.newline = "\r\n" if scenario.crlf else "\n"
        self.prompt_tokens, self.visible_text = self._prompt()
        self.tool_name = "f"
        self.channel = scenario.channel
        calls = body.get("tools") and scenario.channel != "tool_calls"
        self.pieces = self._tool_pieces() if calls else self._answer_pieces()

    def _prompt(self) -> tuple[int, str]:
        messages = self.body.get("messages", [])
        count = count_prompt_tokens(messages)
        text = " ".join(str(message.get("content", "")) for message in messages)
        limit = self.scenario.max_context
        if limit and count > limit and self.scenario.overflow == "truncate":
            keep = max(limit - PER_MESSAGE_TOKENS * len(messages), 0)
            text = " ".join(text.split()[-keep:]) if keep else ""
            count = limit
        return count, text

    async def run(self) -> bool:
        scenario = self.scenario
        if scenario.hang:
            await self.reader.read()  # until the client gives up and closes
            return False
        error = self._refusal()
        if error is not None:
            status, message = error
            await _send_json(self.writer, status, {"error": {"message": message, "code": status}})
            return True
        await _send_head(self.writer)
        return await self._stream()

    def _refusal(self) -> tuple[int, str] | None:
        scenario = self.scenario
        if scenario.http_status:
            return scenario.http_status, f"injected failure with status {scenario.http_status}"
        if scenario.reject_stream_options and "stream_options" in self.body:
            return 400, "stream_options: unrecognized request argument"
        if scenario.max_inflight and self.server.inflight > scenario.max_inflight:
            return 503, f"server busy: more than {scenario.max_inflight} requests in flight"
        limit = scenario.max_context
        if limit and self.prompt_tokens > limit and scenario.overflow == "reject":
            return 400, (
                f"This model's maximum context length is {limit} tokens. However, you requested "
                f"{self.prompt_tokens} tokens in the messages. Please reduce the length."
            )
        return None

    async def _stream(self) -> bool:
        scenario = self.scenario
        pieces = self.pieces
        ttft_s = (
            scenario.ttft_ms + scenario.ttft_per_inflight_ms * (self.server.inflight - 1)
        ) / 1000
        itl_s = scenario.itl_ms / 1000
        if scenario.noise > 1:
            spread = math.log(scenario.noise)
            itl_s *= math.exp(self.server.rng.uniform(-spread, spread))
            ttft_s *= math.exp(self.server.rng.uniform(-spread, spread))
        if scenario.comments:
            await self._write_raw(f": keep-alive{self.newline}{self.newline}")
        if scenario.role == "first":
            await self._sleep_until(self.received + scenario.role_ms / 1000)
            await self._event(
                self._chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}}])
            )
        for index, piece in enumerate(pieces):
            if index == scenario.cut_after:
                return False  # closing without the final chunk of the chunked body
            if index == scenario.error_after:
                await self._event({"error": {"message": "injected engine failure", "code": 500}})
                await self._finish(done=True)
                return True
            if scenario.comments and index > 0:
                await self._write_raw(f": ping{self.newline}{self.newline}")
            due = self.received + ttft_s + self._written_with(index, len(pieces)) * itl_s
            await self._sleep_until(due)
            chunk = self._token_chunk(index, piece, len(pieces))
            if index == 0:
                lateness = (self.loop.time() - due) * 1000
                self.server.stats.first_token_lateness_ms.append(lateness)
                if scenario.rid:
                    self.server.stats.first_token_written_ns[scenario.rid] = time.perf_counter_ns()
            await self._event(chunk)
        finish: dict[str, Any] = self._chunk(
            [{"index": 0, "delta": {}, "finish_reason": scenario.finish_reason}]
        )
        if scenario.usage == "finish":
            finish["usage"] = self._usage()
        await self._event(finish)
        if scenario.usage == "final":
            await self._event(self._chunk([], usage=self._usage()))
        await asyncio.sleep(scenario.done_delay_ms / 1000)
        await self._finish(done=scenario.done)
        return True

    def _written_with(self, index: int, count: int) -> int:
        """The chunk whose making releases chunk `index`: itself, or the last of its burst."""
        burst = self.scenario.burst
        return index if burst <= 1 else min(count - 1, (index // burst + 1) * burst - 1)

    def _tool_pieces(self) -> list[tuple[str, int]]:
        """A call of the tool the prompt names, as tool_calls deltas or as plain text."""
        asked = _TOOL_ASKED.search(self.visible_text)
        tools = {
            tool["function"]["name"]: tool["function"].get("parameters", {})
            for tool in self.body["tools"]
        }
        name = asked.group(1) if asked and asked.group(1) in tools else next(iter(tools))
        arguments = json.dumps(_example(tools[name]))
        server = self.server
        server.tool_requests += 1
        share = self.scenario.malformed_share
        if int(server.tool_requests * share) != int((server.tool_requests - 1) * share):
            arguments = arguments[: len(arguments) // 2]  # cut mid-object: not JSON
        if self.scenario.tool_text:
            text = json.dumps({"name": name, "arguments": arguments})
            return [(text[i : i + 8], 1) for i in range(0, len(text), 8)]
        self.channel, self.tool_name = "tool_calls", name
        return [(arguments[i : i + 8], 1) for i in range(0, len(arguments), 8)]

    def _needle_words(self) -> list[str]:
        found = _PASSKEY.search(self.visible_text)
        cutoff = self.scenario.needle_cutoff
        if cutoff and self.prompt_tokens > cutoff:
            found = None
        if self.scenario.echo:
            sentence = _NEEDLE_SENTENCE.search(self.visible_text)
            echoed = (sentence.group(0) if sentence else "") + " " + self.visible_text[-200:]
            return echoed.split()
        return (found.group(1) if found else "I do not know.").split()

    def _answer_pieces(self) -> list[tuple[str, int]]:
        """(text, tokens) of each chunk."""
        scenario = self.scenario
        if scenario.answer == "needle":
            words = self._needle_words()
            tokens = [word if i == 0 else f" {word}" for i, word in enumerate(words)]
        elif scenario.answer == "scripted":
            # Without a script (a needle prompt) it finds the passkey, as answer=needle does.
            other = _ALTERNATE.search(self.visible_text) if scenario.alternate else None
            scripted = (
                other or _SCRIPTED.search(self.visible_text) or _PASSKEY.search(self.visible_text)
            )
            words = (scripted.group(1).strip() if scripted else "no script").split(" ")
            tokens = [word if i == 0 else f" {word}" for i, word in enumerate(words)]
        else:
            tokens = [f" t{i}é" for i in range(scenario.tokens)]
        max_tokens = self.body.get("max_tokens")
        if isinstance(max_tokens, int) and max_tokens > 0:
            tokens = tokens[:max_tokens]  # as a real server stops at max_tokens
        size = max(scenario.per_chunk, 1)
        return [
            ("".join(tokens[i : i + size]), len(tokens[i : i + size]))
            for i in range(0, len(tokens), size)
        ]

    def _token_chunk(self, index: int, piece: tuple[str, int], total: int) -> dict[str, Any]:
        text, _ = piece
        scenario = self.scenario
        delta: dict[str, Any] = {}
        tokens_before = index * max(scenario.per_chunk, 1)
        if index == 0 and scenario.role == "with_token":
            delta["role"] = "assistant"
        if self.channel == "tool_calls":
            call = {"index": 0, "function": {"arguments": text}}
            if index == 0:
                call.update(
                    {
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": self.tool_name, "arguments": text},
                    }
                )
            delta["tool_calls"] = [call]
        elif scenario.channel != "content" or tokens_before < scenario.reasoning_tokens:
            channel = "reasoning_content" if scenario.channel == "content" else scenario.channel
            delta[channel] = text
        else:
            delta["content"] = text
        chunk = self._chunk([{"index": 0, "delta": delta, "finish_reason": None}])
        if scenario.usage == "every":
            produced = min(tokens_before + max(scenario.per_chunk, 1), self._output_tokens())
            chunk["usage"] = self._usage(produced)
        return chunk

    def _output_tokens(self) -> int:
        return sum(tokens for _, tokens in self.pieces)

    def _usage(self, completion: int | None = None) -> dict[str, int]:
        completion = self._output_tokens() if completion is None else completion
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": self.prompt_tokens + completion,
        }

    def _chunk(
        self, choices: list[dict[str, Any]], usage: dict[str, int] | None = None
    ) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake",
            "choices": choices,
        }
        if usage is not None:
            chunk["usage"] = usage
        return chunk

    async def _event(self, payload: dict[str, Any]) -> None:
        data = _ENCODE_CHUNK(payload)
        nl = self.newline.encode()
        if not self.scenario.multiline:
            await self._write_bytes(b"data: %s%s%s" % (data, nl, nl))
            return
        # A newline is JSON whitespace, so the two data: lines rejoin into valid JSON.
        head, sep, tail = data.partition(b',"object"')
        lines = [head + b",", b'"object"' + tail] if sep else [data]
        await self._write_bytes(b"".join(b"data: %s%s" % (line, nl) for line in lines) + nl)

    async def _finish(self, *, done: bool) -> None:
        if done:
            await self._write_raw(f"data: [DONE]{self.newline}{self.newline}")
        if self.scenario.linger_ms:
            await self.writer.drain()
            await asyncio.sleep(self.scenario.linger_ms / 1000)
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()

    async def _write_raw(self, text: str) -> None:
        await self._write_bytes(text.encode())

    async def _write_bytes(self, data: bytes) -> None:
        if not self.scenario.split:
            await _write_chunk(self.writer, data)
            return
        cuts = sorted({3, len(data) // 2, len(data) - 3, len(data) - 1} - {0, len(data)})
        start = 0
        for cut in [*cuts, len(data)]:
            if cut <= start:
                continue
            await _write_chunk(self.writer, data[start:cut])
            await asyncio.sleep(0.001)
            start = cut

    async def _sleep_until(self, when: float) -> None:
        delay = when - self.loop.time()
        if delay > 0:
            await asyncio.sleep(delay)


def _example(schema: dict[str, Any]) -> Any:
    """A value that validates against ``schema`` (the subset the tool-call check uses)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {key: _example(properties[key]) for key in schema.get("required", properties)}
    if kind == "array":
        return [_example(schema.get("items", {}))]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return 12.5
    if "pattern" in schema:
        return "2026-03-12"
    return "value"


async def _read_request(reader: asyncio.StreamReader) -> ReceivedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return ReceivedRequest(method, path.split("?", 1)[0], headers, body)


async def _send_head(writer: asyncio.StreamWriter) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    await writer.drain()


async def _write_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
    await writer.drain()


async def _send_plain(
    writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str
) -> None:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 503: "Service Unavailable"}.get(
        status, "Error"
    )
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\n"
        f"content-length: {len(body)}\r\n\r\n".encode()
        + body
    )
    await writer.drain()


async def _send_json(writer: asyncio.StreamWriter, status: int, payload: Any) -> None:
    await _send_plain(writer, status, json.dumps(payload).encode(), "application/json")


async def _serve_forever(host: str, port: int) -> None:
    server = await FakeOpenAIServer(host, port, record_requests=False).start()
    print(f"PORT {server.port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(args.host, args.port))


if __name__ == "__main__":
    main()
