"""What one stream's events said, kept within stated bounds whatever the server sends.

A server may send tokens forever, report usage that cannot be true, or answer in shapes no
client expects. The state keeps every timing it needs (one stamp per token-bearing chunk,
up to a limit the request itself sets), at most ``MAX_KEPT_TEXT`` characters of text, and
usage figures only when they are plausible for what arrived.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field
from json.scanner import make_scanner

import msgspec

from app.bench.result import RequestError
from app.bench.stream.arrival import SAME_ARRIVAL_NS
from app.bench.stream.sse import SSEEvent

MAX_KEPT_TEXT = 4000
# A token-bearing chunk carries at least one token, so a server that sends more chunks
# than max_tokens allows is not following the request; the slack covers servers that
# split one token's text over two chunks.
CHUNKS_PER_TOKEN_ALLOWED = 2
CHUNK_SLACK = 16
# No model reads or writes this many tokens in one request; larger numbers are not counts.
MAX_PLAUSIBLE_TOKENS = 100_000_000
# Each chunk is decoded by msgspec (strict RFC 8259 JSON, about four times faster than
# json's scanner on a chunk's 150 bytes: a fifth of a client's CPU per token at one stream).
# What msgspec refuses is decoded again by json's scanner, so that the values and the
# refusals are exactly json.loads's (it also reads NaN, Infinity, 1e400 and lone
# surrogates). The scanner is called directly: the chunk is already stripped, so what
# json.loads adds per call is the same check as "the value ends where the data ends".
_decode_json = msgspec.json.Decoder().decode
_scan_json = make_scanner(json.JSONDecoder())
_NO_DELTA: dict = {}


def chunk_limit(max_tokens: int) -> int:
    """The most token-bearing chunks a request for ``max_tokens`` tokens may receive."""
    return CHUNKS_PER_TOKEN_ALLOWED * max_tokens + CHUNK_SLACK


class OutputOverrun(Exception):
    """The server sent more than the request allowed; the stream is stopped."""


@dataclass
class _KeptText:
    """The first ``MAX_KEPT_TEXT`` characters of a text, and how many arrived in all."""

    parts: list[str] = field(default_factory=list)
    kept: int = 0
    received: int = 0

    def add(self, text: str) -> None:
        self.received += len(text)
        room = MAX_KEPT_TEXT - self.kept
        if room > 0:  # past the limit only the count goes on
            piece = text[:room]
            self.parts.append(piece)
            self.kept += len(piece)

    def text(self) -> str:
        return "".join(self.parts)


MAX_TOOL_CALLS = 8


@dataclass
class _ToolCalls:
    """The function calls the deltas build, by their index: a name and argument text, at
    most ``MAX_TOOL_CALLS`` calls and ``MAX_KEPT_TEXT`` characters of arguments each."""

    names: dict[int, str] = field(default_factory=dict)
    arguments: dict[int, _KeptText] = field(default_factory=dict)

    def add(self, calls: object) -> None:
        if not isinstance(calls, list):
            return
        for position, call in enumerate(calls):
            if not isinstance(call, dict):
                continue
            index = call.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool):
                continue
            if index not in self.names and len(self.names) >= MAX_TOOL_CALLS:
                continue
            function = call.get("function")
            function = function if isinstance(function, dict) else _NO_DELTA
            name = function.get("name")
            self.names.setdefault(index, "")
            if isinstance(name, str) and name:
                self.names[index] = (self.names[index] + name)[:200]
            arguments = function.get("arguments")
            if isinstance(arguments, str) and arguments:
                self.arguments.setdefault(index, _KeptText()).add(arguments)

    def calls(self) -> list[tuple[str, str]]:
        """(name, arguments) of each call, in index order."""
        return [
            (self.names[index], self.arguments[index].text() if index in self.arguments else "")
            for index in sorted(self.names)
        ]


@dataclass
class StreamState:
    """What the events of one stream said, with the arrival stamp of each."""

    max_tokens: int
    first_event_ns: int | None = None
    # One 8-byte stamp per token-bearing chunk, at most chunk_limit(max_tokens) of them.
    token_ns: array[int] = field(default_factory=lambda: array("q"))
    first_content_ns: int | None = None
    content: _KeptText = field(default_factory=_KeptText)
    reasoning: _KeptText = field(default_factory=_KeptText)
    tool_calls: _ToolCalls = field(default_factory=_ToolCalls)
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    usage_ignored: str | None = None
    finish_reason: str | None = None
    error: RequestError | None = None
    done: bool = False
    done_ns: int | None = None
    # The answer's text received before its last arrival (app.bench.stream.arrival).
    chars_before_last: int = 0
    # chunk_limit(max_tokens), read for every token chunk.
    most_chunks: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.most_chunks = chunk_limit(self.max_tokens)

    def take(self, event: SSEEvent, arrived_ns: int) -> None:
        if self.first_event_ns is None:
            self.first_event_ns = arrived_ns
        payload = _json_object(event.data)
        if payload is None:
            if event.data.strip() == "[DONE]":
                self.done = True
                self.done_ns = arrived_ns
            return
        if payload.get("error") or payload.get("object") == "error":
            self.error = RequestError(kind="stream_error", message=error_message(payload))
            return
        usage = payload.get("usage")
        if usage:  # most chunks carry none, or null
            self._take_usage(usage)
        before = self.content.received + self.reasoning.received
        if self._take_choices(payload.get("choices"), arrived_ns):
            token_ns = self.token_ns
            if not token_ns or arrived_ns - token_ns[-1] > SAME_ARRIVAL_NS:
                self.chars_before_last = before
            if len(token_ns) >= self.most_chunks:
                raise OutputOverrun(
                    f"more than {self.most_chunks} token chunks for "
                    f"max_tokens={self.max_tokens}; the stream was stopped"
                )
            token_ns.append(arrived_ns)
        if usage and self.finish_reason is not None and self.completion_tokens is not None:
            # The usage that comes with or after the finish reason: the answer is whole,
            # and the stream is not held open for [DONE].
            self.done = True
            self.done_ns = arrived_ns

    @property
    def text_chars(self) -> int:
        return self.content.received + self.reasoning.received

    def checked_completion_tokens(self) -> int | None:
        """The usage's completion tokens if they fit what arrived, else None (and why)."""
        reported = self.completion_tokens
        if reported is None:
            return None
        chunks = len(self.token_ns)
        problem = None
        if chunks and reported < 1:
            problem = f"usage reported {reported} completion tokens for {chunks} token chunks"
        elif reported > self.max_tokens:
            problem = (
                f"usage reported {reported} completion tokens, over the "
                f"max_tokens={self.max_tokens} asked for"
            )
        if problem is None:
            return reported
        self.usage_ignored = f"{problem}; tokens counted from chunks instead"
        return None

    def _take_usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        for name in ("completion_tokens", "prompt_tokens"):
            count = _count(usage.get(name))
            if isinstance(count, str):
                self.usage_ignored = f"{name} {count}"
            elif count is not None and name == "completion_tokens":
                self.completion_tokens = count
            elif count is not None:
                self.prompt_tokens = count

    def _take_choices(self, choices: object, arrived_ns: int) -> bool:
        """Record the deltas; True when one carries a token (content, reasoning, tool call)."""
        if not isinstance(choices, list):
            return False
        carries_token = False
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                delta = _NO_DELTA
            content = delta.get("content") or choice.get("text")
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(content, str) and content:
                self.content.add(content)
                if self.first_content_ns is None:
                    self.first_content_ns = arrived_ns
                carries_token = True
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.add(reasoning)
                carries_token = True
            calls = delta.get("tool_calls")
            if calls:
                self.tool_calls.add(calls)
                carries_token = True
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])[:64]
        return carries_token


def _json_object(data: str) -> dict | None:
    """The JSON object that is all of ``data`` but surrounding whitespace, else None: what
    ``json.loads(data.strip())`` returns when it is a dict."""
    try:
        # msgspec skips JSON's whitespace around the value itself; anything it refuses
        # (other whitespace that strip() removes included) goes to json's rules.
        payload = _decode_json(data)
    except (msgspec.DecodeError, RecursionError):
        return _json_module_object(data.strip())
    return payload if isinstance(payload, dict) else None


def _json_module_object(data: str) -> dict | None:
    """``_json_object`` by json's own rules, for stripped ``data`` that msgspec refuses."""
    try:
        payload, end = _scan_json(data, 0)
    except StopIteration:  # no JSON value starts here
        return None
    except (ValueError, RecursionError):  # malformed, or nested past the parser's depth
        return None
    if end != len(data) or not isinstance(payload, dict):
        return None
    return payload


def _count(value: object) -> int | str | None:
    """A token count as an int; a description of what is wrong with it; None if absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{str(value)[:40]!r} is not a number"
    if isinstance(value, float) and not value.is_integer():
        return f"{value!r} is not a whole number"
    if value < 0:
        return f"{value!r} is negative"
    if value > MAX_PLAUSIBLE_TOKENS:
        return f"{value:.3g} is implausibly large"
    return int(value)


def error_message(payload: object) -> str:
    """The human-readable message of an OpenAI-style, FastAPI-style or plain error body."""
    if isinstance(payload, dict):
        inner = payload.get("error")
        if isinstance(inner, dict):
            return str(inner.get("message") or inner.get("detail") or json.dumps(inner))
        if isinstance(inner, str) and inner:
            return inner
        for key in ("message", "detail"):
            if payload.get(key):
                value = payload[key]
                return value if isinstance(value, str) else json.dumps(value)
    return json.dumps(payload)
