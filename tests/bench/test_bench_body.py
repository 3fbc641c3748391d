"""The body decoders: chunked and length framing undone the same however the bytes are split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.bench.transport.body import (
    MAX_CHUNK_LINE,
    MAX_TRAILER_BYTES,
    BodyDecoder,
    BodyFramingError,
    Chunked,
    Length,
    UntilClose,
)


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"


def decode(decoder: BodyDecoder, *pieces: bytes) -> bytes:
    return b"".join(decoder.feed(piece) for piece in pieces)


def test_chunks_in_one_piece_come_out_as_one_buffer() -> None:
    decoder = Chunked()
    assert decoder.feed(chunked(b"data: a\n\n", b"data: b\n\n")) == b"data: a\n\ndata: b\n\n"
    assert decoder.done and decoder.extra == b""


def test_a_piece_that_is_one_chunks_data_is_passed_through() -> None:
    decoder = Chunked()
    assert decoder.feed(b"5\r\n") == b""
    data = b"hello"
    assert decoder.feed(data) is data
    assert decoder.feed(b"\r\n0\r\n\r\n") == b"" and decoder.done


def test_chunk_extensions_are_ignored() -> None:
    body = b"5;name=value\r\nhello\r\n3 ; a=1;b\r\nabc\r\n0;last\r\n\r\n"
    decoder = Chunked()
    assert decoder.feed(body) == b"helloabc" and decoder.done


def test_trailers_are_read_and_dropped() -> None:
    decoder = Chunked()
    assert decoder.feed(b"2\r\nok\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\n") == b"ok"
    assert decoder.done and decoder.extra == b""


def test_bare_lf_line_endings_are_accepted() -> None:
    decoder = Chunked()
    assert decoder.feed(b"2\nok\n0\n\n") == b"ok" and decoder.done


def test_upper_and_lower_case_hex_sizes() -> None:
    data = b"x" * 0xAB
    assert Chunked().feed(b"AB\r\n" + data + b"\r\n0\r\n\r\n") == data
    assert Chunked().feed(b"ab\r\n" + data + b"\r\n0\r\n\r\n") == data


@pytest.mark.parametrize(
    "size_line",
    [b"zz", b"-5", b"+5", b"0x5", b"5_0", b"", b" ", b"1" * 17, b"5 5"],
)
def test_a_bad_chunk_size_is_refused(size_line: bytes) -> None:
    with pytest.raises(BodyFramingError, match="chunk size"):
        Chunked().feed(size_line + b"\r\nhello\r\n0\r\n\r\n")


def test_a_chunk_size_of_sixteen_hex_digits_is_a_size_not_an_overflow() -> None:
    decoder = Chunked()
    assert decoder.feed(b"ffffffffffffffff\r\nabc") == b"abc"
    assert not decoder.done
    assert "bytes before a chunk's end" in (decoder.at_eof() or "")


def test_a_chunk_size_line_too_long_is_refused_whole_or_in_pieces() -> None:
    line = b"5;" + b"x" * MAX_CHUNK_LINE
    with pytest.raises(BodyFramingError, match="chunk-size line longer than"):
        Chunked().feed(line + b"\r\nhello\r\n")
    decoder = Chunked()
    with pytest.raises(BodyFramingError, match="chunk-size line longer than"):
        for start in range(0, len(line), 512):  # never a line end: buffered up to the limit
            decoder.feed(line[start : start + 512])


def test_trailers_past_their_limit_are_refused() -> None:
    decoder = Chunked()
    decoder.feed(b"0\r\n")
    with pytest.raises(BodyFramingError, match="trailers longer than"):
        for _ in range(MAX_TRAILER_BYTES // 9 + 1):  # 7 bytes and a CRLF each
            decoder.feed(b"X-A: 12\r\n")


def test_data_not_followed_by_crlf_is_refused() -> None:
    with pytest.raises(BodyFramingError, match="not followed by CRLF"):
        Chunked().feed(b"2\r\nokEXTRA\r\n0\r\n\r\n")


@pytest.mark.parametrize(
    ("received", "says"),
    [
        (b"", "before the last chunk"),
        (b"5\r\nhel", "2 bytes before a chunk's end"),
        (b"5\r\nhello\r\n", "before the last chunk"),
        (b"5\r\nhello", "before the last chunk"),
        (b"5\r", "before the last chunk"),
        (b"0\r\nX-A: 1\r\n", "inside the body's trailers"),
    ],
)
def test_a_body_cut_short_says_where(received: bytes, says: str) -> None:
    decoder = Chunked()
    decoder.feed(received)
    assert not decoder.done
    assert says in (decoder.at_eof() or "")


def test_bytes_after_the_last_chunk_are_kept_apart() -> None:
    decoder = Chunked()
    assert decoder.feed(chunked(b"ok") + b"HTTP/1.1 200") == b"ok"
    assert decoder.done and decoder.extra == b"HTTP/1.1 200"
    assert decoder.feed(b" more") == b"" and decoder.extra == b"HTTP/1.1 200 more"


SIZES = st.lists(st.binary(min_size=1, max_size=40), max_size=8)


@given(pieces=SIZES, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_split_of_a_chunked_body_gives_the_same_bytes(
    pieces: list[bytes], cuts: list[int]
) -> None:
    """A chunk split across reads, its size line split, its CRLF split: same body."""
    raw = chunked(*pieces)
    bounds = sorted({0, len(raw), *(cut for cut in cuts if cut < len(raw))})
    decoder = Chunked()
    received = decode(decoder, *(raw[a:b] for a, b in zip(bounds, bounds[1:], strict=False)))
    assert received == b"".join(pieces)
    assert decoder.done and decoder.extra == b"" and decoder.at_eof() is None


def test_length_body_stops_at_its_length() -> None:
    decoder = Length(5)
    assert decode(decoder, b"he", b"llo!!") == b"hello"
    assert decoder.done and decoder.extra == b"!!"
    short = Length(5)
    short.feed(b"hel")
    assert short.at_eof() == "the server closed the connection 2 bytes before the body's end"
    assert Length(0).done


def test_until_close_body_ends_with_the_connection() -> None:
    decoder = UntilClose()
    assert decoder.feed(b"anything") == b"anything" and not decoder.done
    assert decoder.at_eof() is None and decoder.done
