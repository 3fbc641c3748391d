from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.bench.stream.sse import (
    MAX_EVENT_BYTES,
    MAX_LINE_BYTES,
    SSEEvent,
    SSEOverflow,
    SSEParser,
    _leading_data_events,
)


def feed_all(pieces: list[bytes]) -> list[SSEEvent]:
    parser = SSEParser()
    events = [event for piece in pieces for event in parser.feed(piece)]
    return events + parser.close()


def test_plain_events_and_done() -> None:
    events = feed_all([b'data: {"a":1}\n\ndata: [DONE]\n\n'])
    assert [event.data for event in events] == ['{"a":1}', "[DONE]"]


def test_comments_and_keepalives_are_skipped_and_counted() -> None:
    parser = SSEParser()
    events = parser.feed(b": keep-alive\n\n:ping\ndata: x\n\n: bye\n\n")
    assert [event.data for event in events] == ["x"]
    assert parser.comments == 3


def test_multi_line_data_is_joined_with_newline() -> None:
    events = feed_all([b'data: {"a":\ndata: 1}\n\n'])
    assert events == [SSEEvent(data='{"a":\n1}')]


def test_crlf_and_lone_cr_line_endings() -> None:
    assert [e.data for e in feed_all([b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"])] == ["a", "b", "c"]


def test_crlf_split_between_pieces_is_one_line_ending() -> None:
    events = feed_all([b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"])
    assert [event.data for event in events] == ["a", "b"]


def test_empty_piece_between_cr_and_lf_changes_nothing() -> None:
    events = feed_all([b"data: a\r", b"", b"\n\r\n"])
    assert [event.data for event in events] == ["a"]


def test_event_split_inside_a_multibyte_character() -> None:
    raw = 'data: {"content": "café ✓"}\n\n'.encode()
    cut = raw.index("✓".encode()) + 1
    events = feed_all([raw[:cut], raw[cut:]])
    assert events == [SSEEvent(data='{"content": "café ✓"}')]


def test_optional_space_after_colon_and_event_field() -> None:
    events = feed_all([b"event: error\ndata:no-space\n\n"])
    assert events == [SSEEvent(data="no-space", event="error")]


def test_final_event_without_blank_line_is_flushed_on_close() -> None:
    parser = SSEParser()
    assert parser.feed(b'data: {"last": true}') == []
    assert parser.close() == [SSEEvent(data='{"last": true}')]


def test_blank_lines_without_data_dispatch_nothing() -> None:
    assert feed_all([b"\n\n\n", b"id: 3\n\n"]) == []


STREAM = (
    b": keep-alive\r\n\r\n"
    b'data: {"choices":[{"delta":{"role":"assistant"}}]}\r\n\r\n'
    b'data: {"choices":\r\ndata: [{"delta":{"content":"h\xc3\xa9"}}]}\r\n\r\n'
    b"data: [DONE]\r\n\r\n"
)


# As most servers write it: LF only, one event per write, so whole pieces take the fast path.
LF_STREAM = (
    b'data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n'
    b'data:{"choices":[{"delta":{"content":"h\xc3\xa9"}}]}\n\n'
    b"event: note\ndata: x\n\n"
    b": ping\n\n"
    b'data: {"choices":[],"usage":{"completion_tokens":1}}\n\n'
    b"data: [DONE]\n\n"
)


@given(
    st.sampled_from([STREAM, LF_STREAM]),
    st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12),
)
def test_any_split_of_a_stream_gives_the_same_events(stream: bytes, cuts: list[int]) -> None:
    bounds = [0, *sorted(cut for cut in cuts if cut <= len(stream)), len(stream)]
    pieces = [stream[start:end] for start, end in zip(bounds, bounds[1:], strict=False)]
    assert feed_all(pieces) == feed_all([stream])
    assert len(feed_all([stream])) == (3 if stream is STREAM else 5)


def test_one_event_per_piece_gives_the_same_events_as_one_piece() -> None:
    events = [event + b"\n\n" for event in LF_STREAM.split(b"\n\n") if event]
    assert feed_all(events) == feed_all([LF_STREAM])


def bytewise(piece: bytes) -> list[SSEEvent]:
    """The line parser alone: a one-byte piece never takes the whole-event fast path."""
    return feed_all([piece[index : index + 1] for index in range(len(piece))])


@given(
    st.sampled_from([b"data:", b"data: ", b"data:  ", b"event: e\ndata: ", b": c\ndata: ", b"dat"]),
    st.binary(max_size=24) | st.sampled_from([b'{"a": 1}', b"[DONE]", b"caf\xc3", b"a\rb"]),
    st.sampled_from([b"\n\n", b"\r\n\r\n", b"\n", b"\n\ndata: more\n\n", b""]),
)
def test_fast_path_gives_what_the_line_parser_gives(head: bytes, value: bytes, tail: bytes) -> None:
    assert feed_all([head + value + tail]) == bytewise(head + value + tail)


def test_fast_path_takes_only_whole_data_events() -> None:
    def fast(piece: bytes) -> tuple[list[str], int] | None:
        leading = _leading_data_events(piece)
        return None if leading is None else ([event.data for event in leading[0]], leading[1])

    assert fast(b'data: {"a":1}\n\n') == (['{"a":1}'], 15)
    assert fast(b"data:x\n\n") == (["x"], 8)
    assert fast(b"data:  x\n\n") == ([" x"], 10)  # one space is dropped
    assert fast(b"data:\n\n") == ([""], 7)
    assert fast(b"data: a\n\ndata:b\n\n") == (["a", "b"], 17)
    # What follows the last whole event is left to the line parser.
    assert fast(b"data: a\n\ndata: b\n") == (["a"], 9)
    for other in (
        b"data: a\n",
        b"data: a\r\n\r\n",
        b"data: a\ndata: b\n\n",
        b": c\n\n",
        b"data: a\n\n: c\n\n",
        b"data: a\n\n\ndata: b\n\n",
        b"event: e\ndata: a\n\n",
    ):
        assert _leading_data_events(other) is None


def test_a_buffer_of_whole_events_and_a_partial_one_parses_as_bytewise() -> None:
    raw = b"data: one\n\ndata: two\n\ndata: thr"
    parser = SSEParser()
    assert [event.data for event in parser.feed(raw)] == ["one", "two"]
    assert [event.data for event in parser.feed(b"ee\n\ndata: [DONE]\n\n")] == ["three", "[DONE]"]


def test_fast_path_is_not_taken_inside_an_event() -> None:
    parser = SSEParser()
    assert parser.feed(b"event: error\n") == []
    assert parser.feed(b"data: x\n\n") == [SSEEvent(data="x", event="error")]
    assert parser.feed(b"data: a\n") == []
    assert parser.feed(b"data: b\n\n") == [SSEEvent(data="a\nb")]


def test_a_line_past_the_limit_is_refused_not_buffered() -> None:
    parser = SSEParser()
    parser.feed(b"data: ")
    piece = b"a" * 65536
    with pytest.raises(SSEOverflow, match="line longer than"):
        for _ in range(MAX_LINE_BYTES // len(piece) + 1):
            parser.feed(piece)


def test_an_event_past_the_limit_is_refused_not_buffered() -> None:
    parser = SSEParser()
    line = b"data: " + b"b" * 1000 + b"\n"
    with pytest.raises(SSEOverflow, match="event longer than"):
        for _ in range(MAX_EVENT_BYTES // 1000 + 1):
            parser.feed(line)


def test_a_long_line_in_many_pieces_is_one_event() -> None:
    value = bytes(range(97, 123)) * 20_000  # 520 kB, under the line limit
    parser = SSEParser()
    events = []
    for start in range(0, len(value), 4096):
        events += parser.feed((b"data: " if start == 0 else b"") + value[start : start + 4096])
    events += parser.feed(b"\r")
    events += parser.feed(b"\n\n")
    assert events == [SSEEvent(data=value.decode())]
