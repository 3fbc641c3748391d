from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.bench.sse import SSEEvent, SSEParser


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


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_of_a_stream_gives_the_same_events(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(STREAM)]
    pieces = [STREAM[start:end] for start, end in zip(bounds, bounds[1:], strict=False)]
    assert feed_all(pieces) == feed_all([STREAM])
    assert len(feed_all([STREAM])) == 3
