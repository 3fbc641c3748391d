"""An HTTP server on 127.0.0.1 that answers chat requests the way broken or hostile servers do.

Each request's ``model`` names a scenario in ``SCENARIOS``: a coroutine that writes raw
bytes (status line, headers, body) to the socket, so that anything a real server could send,
including what no HTTP library would produce, can be sent. Run as a script it serves until
killed and prints ``PORT <n>``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import zlib
from collections.abc import Awaitable, Callable

Writer = asyncio.StreamWriter
Scenario = Callable[[Writer], Awaitable[None]]

FOREVER_S = 3600.0
ANSWER = [" one", " two", " three", " four"]


def chunk(delta: dict[str, object] | None = None, **fields: object) -> bytes:
    body = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta or {}}]}
    body.update(fields)
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def token(text: str) -> bytes:
    return chunk({"content": text})


def usage(**counts: object) -> bytes:
    return b"data: " + json.dumps({"choices": [], "usage": counts}).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"


def answer(*extra: bytes) -> bytes:
    return b"".join(token(text) for text in ANSWER) + b"".join(extra)


async def send_body(writer: Writer, body: bytes, head: bytes = SSE_HEAD) -> None:
    writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()


async def start_chunked(writer: Writer, head: bytes = SSE_HEAD) -> None:
    writer.write(head + b"Transfer-Encoding: chunked\r\n\r\n")
    await writer.drain()


async def send_chunk(writer: Writer, data: bytes) -> None:
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
    await writer.drain()


async def end_chunked(writer: Writer) -> None:
    writer.write(b"0\r\n\r\n")
    await writer.drain()


async def stream(writer: Writer, pieces: list[bytes], gap_s: float = 0.0) -> None:
    await start_chunked(writer)
    for piece in pieces:
        await send_chunk(writer, piece)
        if gap_s:
            await asyncio.sleep(gap_s)
    await end_chunked(writer)


def usage_case(**counts: object) -> Scenario:
    return lambda w: stream(w, [answer(usage(**counts), DONE)])


def repeated(block: bytes) -> Scenario:
    """The same bytes, as fast as the client takes them, forever."""

    async def run(writer: Writer) -> None:
        await start_chunked(writer)
        data = block * max(1, (64 * 1024) // len(block))
        while True:
            await send_chunk(writer, data)

    return run


async def endless_line(writer: Writer) -> None:
    await start_chunked(writer)
    await send_chunk(writer, b"data: ")
    while True:
        await send_chunk(writer, b"a" * 65536)


async def endless_tokens_slowly(writer: Writer) -> None:
    """A token every millisecond, forever: the stream a runaway generation makes."""
    await start_chunked(writer)
    while True:
        await send_chunk(writer, token(" again") * 8)
        await asyncio.sleep(0.001)


async def endless_tool_calls_by_index(writer: Writer) -> None:
    """A new call at every index, each with a long name: what the client keeps is bounded."""
    await start_chunked(writer)
    index = 0
    while True:
        call = {"index": index, "function": {"name": "n" * 1000, "arguments": "x" * 10_000}}
        await send_chunk(writer, chunk({"tool_calls": [call]}))
        index += 1


async def endless_error_body(writer: Writer) -> None:
    writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n")
    await start_chunked(writer, b"")
    while True:
        await send_chunk(writer, b"x" * 65536)


async def held_open_after_done(writer: Writer) -> None:
    await start_chunked(writer)
    await send_chunk(writer, answer(usage(prompt_tokens=5, completion_tokens=4), DONE))
    await asyncio.sleep(1.0)
    await end_chunked(writer)


async def hang_before_headers(writer: Writer) -> None:
    await asyncio.sleep(FOREVER_S)


async def hang_after_headers(writer: Writer) -> None:
    await start_chunked(writer)
    await asyncio.sleep(FOREVER_S)


async def hang_mid_stream(writer: Writer) -> None:
    await start_chunked(writer)
    await send_chunk(writer, token(" one"))
    await asyncio.sleep(FOREVER_S)


async def slowloris(writer: Writer) -> None:
    await start_chunked(writer)
    for byte in answer(DONE) * 100:
        await send_chunk(writer, bytes([byte]))
        await asyncio.sleep(0.05)


async def cut_mid_stream(writer: Writer) -> None:
    await start_chunked(writer)
    await send_chunk(writer, token(" one") + token(" two"))
    writer.transport.abort()


async def cut_mid_chunk(writer: Writer) -> None:
    await start_chunked(writer)
    writer.write(b"400\r\n" + token(" one"))
    await writer.drain()
    writer.transport.abort()


async def garbage_instead_of_http(writer: Writer) -> None:
    writer.write(b"\x00\xffnot http at all\r\n\r\n")
    await writer.drain()


async def bad_chunk_size(writer: Writer) -> None:
    await start_chunked(writer)
    writer.write(b"zz\r\n" + token(" one") + b"\r\n")
    await writer.drain()


async def chunk_extensions(writer: Writer) -> None:
    await start_chunked(writer)
    for piece in (answer(), DONE):
        writer.write(b"%x;name=value; other\r\n%s\r\n" % (len(piece), piece))
    writer.write(b"0;last=1\r\n\r\n")
    await writer.drain()


async def trailers(writer: Writer) -> None:
    await start_chunked(writer)
    await send_chunk(writer, answer(DONE))
    writer.write(b"0\r\nX-Checksum: 1234\r\nX-Served-By: hostile\r\n\r\n")
    await writer.drain()


async def chunk_split_across_reads(writer: Writer) -> None:
    """One chunk written in parts, its size line and its closing CRLF cut too."""
    await start_chunked(writer)
    body = answer(DONE)
    framed = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    for cut in (1, 3, len(body) // 2, len(body) + 5, len(body) + 6):
        writer.write(framed[:cut])
        framed = framed[cut:]
        await writer.drain()
        await asyncio.sleep(0.02)
    writer.write(framed)
    await writer.drain()


async def last_chunk_missing(writer: Writer) -> None:
    """The answer and [DONE] in full, then the connection closed without the last chunk."""
    await start_chunked(writer)
    await send_chunk(writer, answer(DONE))


async def last_chunk_missing_before_done(writer: Writer) -> None:
    await start_chunked(writer)
    await send_chunk(writer, answer())


async def long_chunk_size_line(writer: Writer) -> None:
    await start_chunked(writer)
    writer.write(b"5;" + b"x" * 100_000 + b"\r\nhello\r\n")
    await writer.drain()
    await asyncio.sleep(FOREVER_S)


async def chunk_size_overflow(writer: Writer) -> None:
    await start_chunked(writer)
    writer.write(b"1" + b"0" * 40 + b"\r\n" + answer(DONE))
    await writer.drain()
    await asyncio.sleep(FOREVER_S)


async def chunk_without_crlf(writer: Writer) -> None:
    await start_chunked(writer)
    body = token(" one")
    writer.write(b"%x\r\n%sXX" % (len(body), body) + answer(DONE))
    await writer.drain()
    await asyncio.sleep(FOREVER_S)


async def body_shorter_than_length(writer: Writer) -> None:
    writer.write(SSE_HEAD + b"Content-Length: 100000\r\n\r\n" + answer())
    await writer.drain()


async def headers_then_close(writer: Writer) -> None:
    writer.write(SSE_HEAD + b"\r\n")
    await writer.drain()


async def encoded(writer: Writer, name: bytes, compress: Callable[[bytes], bytes]) -> None:
    body = compress(answer(usage(prompt_tokens=5, completion_tokens=4), DONE))
    await send_body(writer, body, SSE_HEAD + b"Content-Encoding: " + name + b"\r\n")


async def redirect(writer: Writer, status: bytes) -> None:
    head = b"HTTP/1.1 " + status + b"\r\nLocation: http://127.0.0.1:1/v1/chat/completions\r\n"
    await send_body(writer, b"", head)


async def rate_limited(writer: Writer) -> None:
    body = json.dumps({"error": {"message": "slow down", "type": "rate_limit"}}).encode()
    head = b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
    await send_body(writer, body, head)


async def json_not_stream(writer: Writer) -> None:
    body = json.dumps({"choices": [{"message": {"content": "one two"}}]}).encode()
    await send_body(writer, body, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")


async def html_page(writer: Writer) -> None:
    body = b"<html><body>login first</body></html>"
    await send_body(writer, body, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")


def deflate(data: bytes) -> bytes:
    return zlib.compress(data)


SCENARIOS: dict[str, Scenario] = {
    # Output that never ends, in every shape.
    "endless_tokens": repeated(token(" again")),
    "endless_tokens_slowly": endless_tokens_slowly,
    "endless_empty_deltas": repeated(chunk({"content": ""})),
    "endless_role_chunks": repeated(chunk({"role": "assistant"})),
    "endless_comments": repeated(b": keep-alive\n\n"),
    "endless_blank_lines": repeated(b"\n"),
    "endless_line": endless_line,
    "endless_event": repeated(b"data: more\n"),
    "endless_error_body": endless_error_body,
    "endless_tool_call": repeated(
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]})
    ),
    "endless_tool_calls_by_index": endless_tool_calls_by_index,
    # Usage figures that cannot be true.
    "negative_completion_tokens": usage_case(prompt_tokens=5, completion_tokens=-5),
    "negative_prompt_tokens": usage_case(prompt_tokens=-100, completion_tokens=4),
    "huge_completion_tokens": usage_case(prompt_tokens=5, completion_tokens=1e30),
    "boolean_completion_tokens": usage_case(prompt_tokens=5, completion_tokens=True),
    "string_completion_tokens": usage_case(prompt_tokens=5, completion_tokens="4"),
    "fractional_completion_tokens": usage_case(prompt_tokens=5, completion_tokens=3.5),
    "completion_tokens_over_max": usage_case(prompt_tokens=5, completion_tokens=100_000),
    "zero_completion_tokens": usage_case(prompt_tokens=5, completion_tokens=0),
    # Encodings and statuses.
    "gzip_stream": lambda w: encoded(w, b"gzip", gzip.compress),
    "deflate_stream": lambda w: encoded(w, b"deflate", deflate),
    "broken_gzip": lambda w: encoded(w, b"gzip", lambda data: b"\x1f\x8b" + data),
    "redirect_302": lambda w: redirect(w, b"302 Found"),
    "redirect_307": lambda w: redirect(w, b"307 Temporary Redirect"),
    "rate_limited": rate_limited,
    "json_not_stream": json_not_stream,
    "html_page": html_page,
    # Timing.
    "held_open_after_done": held_open_after_done,
    "hang_before_headers": hang_before_headers,
    "hang_after_headers": hang_after_headers,
    "hang_mid_stream": hang_mid_stream,
    "slowloris": slowloris,
    # Broken framing.
    "cut_mid_stream": cut_mid_stream,
    "cut_mid_chunk": cut_mid_chunk,
    "garbage_instead_of_http": garbage_instead_of_http,
    "bad_chunk_size": bad_chunk_size,
    "headers_then_close": headers_then_close,
    "chunk_size_line_too_long": long_chunk_size_line,
    "chunk_size_overflow": chunk_size_overflow,
    "chunk_without_crlf": chunk_without_crlf,
    "last_chunk_missing_before_done": last_chunk_missing_before_done,
    "body_shorter_than_length": body_shorter_than_length,
    # Chunked framing that is unusual but valid, or broken only after [DONE].
    "chunk_extensions": chunk_extensions,
    "trailers": trailers,
    "chunk_split_across_reads": chunk_split_across_reads,
    "last_chunk_missing": last_chunk_missing,
    # Odd but valid event streams.
    "error_inside_stream": lambda w: stream(
        w, [token(" one"), b'data: {"error": {"message": "out of memory"}}\n\n']
    ),
    "deeply_nested_event": lambda w: stream(
        w, [b"data: " + b"[" * 200_000 + b"\n\n", answer(DONE)]
    ),
    "huge_integer_usage": lambda w: stream(
        w, [answer(b'data: {"choices":[],"usage":{"completion_tokens":' + b"9" * 5000 + b"}}\n\n")]
    ),
    "nan_usage": lambda w: stream(
        w, [answer(b'data: {"choices":[],"usage":{"completion_tokens":NaN}}\n\n', DONE)]
    ),
    "invalid_utf8": lambda w: stream(
        w, [b'data: {"choices":[{"delta":{"content":"\xff\xfe"}}]}\n\n']
    ),
    "cr_line_endings": lambda w: stream(w, [answer(DONE).replace(b"\n", b"\r")]),
    "tokens_after_done": lambda w: stream(w, [answer(DONE), token(" five") * 50]),
    "one_byte_pieces": lambda w: stream(w, [bytes([b]) for b in answer(DONE)]),
}


async def _handle(reader: asyncio.StreamReader, writer: Writer) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = json.loads(await reader.readexactly(length))
        await SCENARIOS[body["model"]](writer)
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def serve(port: int) -> None:
    server = await asyncio.start_server(_handle, "127.0.0.1", port)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    asyncio.run(serve(parser.parse_args().port))
