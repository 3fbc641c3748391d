"""The framing of an HTTP/1.1 response body, undone one received segment at a time.

A streamed answer arrives as many small chunks, often dozens in one socket read. Each
decoder turns one received segment into one buffer of body bytes (every chunk it completes,
joined once), so the event-stream parser sees whole buffers rather than one piece per
chunk, and the cost per chunk is a few slices. Whatever a server sends, the decoders keep
bounded state: a chunk-size or trailer line has a length limit, a chunk size has at most
16 hex digits, and trailers have a total size limit.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

# A chunk-size line is a hex number and, rarely, a few extensions; no server needs more.
MAX_CHUNK_LINE = 4096
# Trailer fields after the last chunk are read and dropped, up to this many bytes in all.
MAX_TRAILER_BYTES = 16 * 1024
_HEX_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
# A whole chunk-size line of the usual shape, for the fast path; anything else (a line
# split across pieces, spaces before the size, a CR inside an extension, an error) is
# left to the line-by-line path, which accepts or refuses it.
_SIZE_LINE = re.compile(
    rb"([0-9A-Fa-f]{1,16})[ \t]{0,16}(?:;[^\r\n]{0,%d})?\r?\n" % (MAX_CHUNK_LINE - 40)
)


class BodyFramingError(ValueError):
    """The body breaks its framing: a bad chunk size, a missing CRLF, an oversized line."""


class BodyDecoder(ABC):
    """Undoes a body's framing; ``done`` once the whole body has been read."""

    done = False
    # Bytes received past the end of the body: nothing a response may hold, so a
    # connection that got some is not used again.
    extra = b""

    @abstractmethod
    def feed(self, data: bytes) -> bytes:
        """The body bytes in ``data``, in order; ``b""`` if it only held framing."""

    def at_eof(self) -> str | None:
        """Why the connection closing now cuts the body short; None when that ends it."""
        return None


class UntilClose(BodyDecoder):
    """No length given: the body is everything until the server closes the connection."""

    def feed(self, data: bytes) -> bytes:
        return data

    def at_eof(self) -> str | None:
        self.done = True
        return None


class Length(BodyDecoder):
    """A body of ``Content-Length`` bytes."""

    def __init__(self, length: int) -> None:
        self.left = length
        self.done = length == 0

    def feed(self, data: bytes) -> bytes:
        if self.done:
            self.extra += data
            return b""
        if len(data) <= self.left:
            self.left -= len(data)
            self.done = self.left == 0
            return data
        body, self.extra = data[: self.left], data[self.left :]
        self.left = 0
        self.done = True
        return body

    def at_eof(self) -> str | None:
        if self.done:
            return None
        return f"the server closed the connection {self.left} bytes before the body's end"


_SIZE, _DATA, _DATA_END, _TRAILER = range(4)


class Chunked(BodyDecoder):
    """``Transfer-Encoding: chunked``, fed in pieces split anywhere.

    Chunk extensions are ignored, trailers are read and dropped. A line may end in CRLF
    or a bare LF, as lenient HTTP clients accept.
    """

    def __init__(self) -> None:
        self._state = _SIZE
        self._line = b""  # the start of a line that the previous piece did not finish
        self._left = 0  # bytes of the current chunk still to come
        self._trailer_bytes = 0

    def feed(self, data: bytes) -> bytes:
        if self.done:
            self.extra += data
            return b""
        view = memoryview(data)
        parts: list[memoryview] = []
        position, end = 0, len(data)
        while position < end and not self.done:
            if self._state == _SIZE and not self._line:
                size_line = _SIZE_LINE.match(data, position)
                if size_line is not None:
                    size = int(size_line[1], 16)
                    position = size_line.end()
                    if size == 0:
                        self._state = _TRAILER
                        continue
                    data_end = position + size
                    if data[data_end : data_end + 2] == b"\r\n":  # the whole chunk is here
                        parts.append(view[position:data_end])
                        position = data_end + 2
                    else:
                        self._state, self._left = _DATA, size
                    continue
            if self._state == _DATA:
                taken = min(self._left, end - position)
                parts.append(view[position : position + taken])
                position += taken
                self._left -= taken
                if self._left == 0:
                    self._state = _DATA_END
                continue
            line, position = self._next_line(data, position)
            if line is None:
                break
            self._take_line(line)
        if self.done and position < end:
            self.extra += data[position:]
        if len(parts) == 1 and len(parts[0]) == end:
            return data  # the whole piece was one chunk's data
        return b"".join(parts)

    def _next_line(self, data: bytes, position: int) -> tuple[bytes | None, int]:
        """The line starting at ``position`` without its ending, and where the next begins;
        (None, end) when the line goes on past this piece (its start is kept)."""
        limit = MAX_CHUNK_LINE if self._state != _TRAILER else MAX_TRAILER_BYTES
        newline = data.find(b"\n", position)
        if newline == -1:
            self._line += data[position:]
            if len(self._line) > limit:
                raise BodyFramingError(self._too_long(limit))
            return None, len(data)
        line = data[position:newline]
        if self._line:
            line, self._line = self._line + line, b""
        if len(line) > limit:
            raise BodyFramingError(self._too_long(limit))
        if line.endswith(b"\r"):
            line = line[:-1]
        return line, newline + 1

    def _take_line(self, line: bytes) -> None:
        if self._state == _SIZE:
            size = _chunk_size(line)
            if size == 0:
                self._state = _TRAILER
            else:
                self._left = size
                self._state = _DATA
        elif self._state == _DATA_END:
            if line:
                raise BodyFramingError("a chunk's data is not followed by CRLF")
            self._state = _SIZE
        else:  # a trailer field, or the blank line that ends the body
            self._trailer_bytes += len(line) + 2
            if self._trailer_bytes > MAX_TRAILER_BYTES:
                raise BodyFramingError(f"trailers longer than {MAX_TRAILER_BYTES} bytes")
            if not line:
                self.done = True

    def _too_long(self, limit: int) -> str:
        what = "trailer" if self._state == _TRAILER else "chunk-size"
        return f"a {what} line longer than {limit} bytes"

    def at_eof(self) -> str | None:
        if self.done:
            return None
        if self._state == _TRAILER:
            return "the server closed the connection inside the body's trailers"
        if self._state == _DATA:
            return f"the server closed the connection {self._left} bytes before a chunk's end"
        return "the server closed the connection before the last chunk"


def _chunk_size(line: bytes) -> int:
    size_text = line.split(b";", 1)[0].strip(b" \t")
    if not _HEX_SIZE.fullmatch(size_text):
        shown = size_text[:20].decode("ascii", "replace")
        raise BodyFramingError(f"a chunk size that is not a hex number of 1-16 digits: {shown!r}")
    return int(size_text, 16)
