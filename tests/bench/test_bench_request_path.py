"""The streaming request's own path: the head prepared once per URL, the one-send write,
and each chunk's JSON read by msgspec with json's rules kept for whatever it refuses."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import h11
from hypothesis import given
from hypothesis import strategies as st

from app.bench.stream.request import stream_chat
from app.bench.stream.state import _json_object
from app.bench.transport.endpoint import ChatEndpoint, make_http_client

SSE_ANSWER = (
    b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
    b"data: [DONE]\n\n"
)


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One request as the server read it: its head and its body."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head, await reader.readexactly(length)


async def answer(writer: asyncio.StreamWriter) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
        % (len(SSE_ANSWER), SSE_ANSWER)
    )
    await writer.drain()


def test_a_prepared_post_writes_the_bytes_httpx_and_h11_write() -> None:
    """The head written once per URL is the one h11 writes for httpx's request, with each
    request's own Content-Length; the answer is read as before."""
    received: list[tuple[bytes, bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while not reader.at_eof():
            try:
                received.append(await read_request(reader))
            except asyncio.IncompleteReadError:
                return
            await answer(writer)

    async def main() -> None:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
        http = make_http_client(api_key="secret", connect_timeout_s=2, request_timeout_s=5)
        try:
            endpoint = ChatEndpoint(http=http, url=url, model="m", request_timeout_s=5)
            short = await stream_chat(endpoint, [{"role": "user", "content": "a"}], 4)
            long = await stream_chat(endpoint, [{"role": "user", "content": "é" * 300}], 4)
            assert short.ok and long.ok, (short.error, long.error)
            assert short.answer == long.answer == "hi"
            # The same request through httpx's own path and h11, for comparison.
            request = http.build_request(
                "POST",
                url,
                content=endpoint.body([{"role": "user", "content": "a"}], 4),
                headers={"Content-Type": "application/json"},
            )
            await (await http.send(request, stream=True)).aclose()
        finally:
            await http.aclose()
            server.close()

    asyncio.run(main())
    (short_head, short_body), (long_head, long_body), (httpx_head, httpx_body) = received
    assert short_head == httpx_head and short_body == httpx_body
    assert b"Content-Length: %d\r\n" % len(long_body) in long_head
    assert long_head.replace(b"%d" % len(long_body), b"%d" % len(short_body)) == short_head
    assert json.loads(long_body)["messages"][0]["content"] == "é" * 300
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(short_head + short_body)
    event = connection.next_event()
    assert isinstance(event, h11.Request) and event.method == b"POST"
    assert (b"authorization", b"Bearer secret") in list(event.headers)


def test_a_request_larger_than_the_socket_buffer_is_sent_whole() -> None:
    """What one send does not take goes out as the server reads, within the write timeout."""
    received: list[bytes] = []
    prompt = "word " * (2 << 20)  # 10 MiB: far past a loopback socket's send buffer

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.2)  # the client's first send fills the buffers and stops
        _, body = await read_request(reader)
        received.append(body)
        await answer(writer)

    async def main() -> None:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
        http = make_http_client(api_key=None, connect_timeout_s=2, request_timeout_s=20)
        try:
            endpoint = ChatEndpoint(http=http, url=url, model="m", request_timeout_s=20)
            sample = await stream_chat(endpoint, [{"role": "user", "content": prompt}], 4)
            assert sample.ok, sample.error
            assert sample.answer == "hi"
        finally:
            await http.aclose()
            server.close()

    asyncio.run(main())
    assert json.loads(received[0])["messages"][0]["content"] == prompt


# -- each chunk's JSON --------------------------------------------------------------------


def json_module_object(data: str) -> Any:
    """What the stream took a chunk to be before msgspec: json.loads's dict, else None."""
    try:
        value = json.loads(data.strip())
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def same(left: Any, right: Any) -> bool:
    """Equal, NaN included, and of the same types all the way down (1 is not 1.0)."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(same, left, right))
    return bool(left == right)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 70), max_value=1 << 70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
# Pieces that make text almost JSON: whitespace that strip() removes and JSON does not
# allow, JSON's own tokens, json's extensions (NaN, Infinity) and broken escapes.
FRAGMENTS = st.sampled_from(
    [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\xa0", "\u2028", "{", "}", "[", "]", ",", ":",
     '"', '"a"', "1", "-0", "1e400", "1.5", "NaN", "-Infinity", "true", "null", "\\ud800",
     '"\\ud800"', '"\\x41"', "\x00", "é", "[DONE]"]
)  # fmt: skip


@given(JSON_VALUES, st.sampled_from(["", " ", "\n\t", "\x0c", "\xa0"]), st.booleans())
def test_a_chunk_decodes_as_json_loads_decodes_it(value: Any, padding: str, ascii: bool) -> None:
    text = padding + json.dumps(value, ensure_ascii=ascii) + padding
    assert same(_json_object(text), json_module_object(text))


@given(st.lists(FRAGMENTS, max_size=12).map("".join))
def test_almost_json_is_refused_or_read_as_json_loads_reads_it(text: str) -> None:
    assert same(_json_object(text), json_module_object(text))


@given(st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=3), st.integers(0, 3))
def test_a_duplicated_key_keeps_its_last_value_as_json_loads_does(
    value: dict[str, Any], repeat: int
) -> None:
    text = json.dumps(value)
    for _ in range(repeat):
        text = text[:-1] + (", " if value else "") + json.dumps(value)[1:]
    assert same(_json_object(text), json_module_object(text))


def test_nan_infinity_and_lone_surrogates_are_read_by_json_rules() -> None:
    """msgspec refuses these; json reads them, and so did the stream before."""
    assert math.isnan(_json_object('{"a": NaN}')["a"])  # type: ignore[index]
    assert _json_object('{"a": 1e400}') == {"a": math.inf}
    assert _json_object('{"a": "\\ud800"}') == {"a": "\ud800"}
    assert _json_object("\x0c{}\xa0") == {}
    assert _json_object("[DONE]") is None
    assert _json_object('{"a": 1} {"b": 2}') is None
    assert _json_object("[" * 100_000 + "]" * 100_000) is None  # nested past any parser's depth


def test_a_header_h11_refuses_is_a_protocol_error_of_the_request() -> None:
    """Checked when the URL's head is prepared; the request fails as it did per request."""

    async def main() -> None:
        http = make_http_client(api_key="bad\nkey", connect_timeout_s=2, request_timeout_s=5)
        endpoint = ChatEndpoint(
            http=http, url="http://127.0.0.1:9/v1/chat/completions", model="m", request_timeout_s=5
        )
        try:
            for _ in range(2):  # nothing half-prepared is kept for the next request
                sample = await stream_chat(endpoint, [{"role": "user", "content": "a"}], 4)
                assert sample.error is not None and sample.error.kind == "protocol"
                assert "Illegal header value" in sample.error.message
        finally:
            await http.aclose()

    asyncio.run(main())
