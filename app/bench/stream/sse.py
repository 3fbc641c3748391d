"""Incremental Server-Sent Events parser.

Fed raw bytes as they arrive from the socket, in arbitrary pieces, it returns the events
completed by each piece. It follows the WHATWG event-stream rules that matter for LLM
servers: LF, CRLF and lone CR line endings (a CRLF split across two pieces is one line
ending, not two), comment lines starting with ``:`` (keep-alives), several ``data:`` lines
joined with ``\\n``, one optional space after the colon, and an event dispatched on a
blank line. It is lenient where servers are sloppy: a final event that is not followed by a
blank line is still delivered by :meth:`SSEParser.close`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One line ending: CRLF, or a lone CR or LF.
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
# An LLM server's event is a JSON chunk of a few hundred bytes; a line or an event past
# these sizes is not one, and buffering it would let a server fill the client's memory.
MAX_LINE_BYTES = 1 << 20
MAX_EVENT_BYTES = 4 << 20


class SSEOverflow(ValueError):
    """A line or an event longer than the parser keeps."""


# Not frozen: a frozen dataclass sets each field through object.__setattr__, and one event
# is made per chunk.
@dataclass(slots=True)
class SSEEvent:
    data: str
    event: str | None = None


class SSEParser:
    """Turns byte pieces into :class:`SSEEvent` objects; keeps state between pieces.

    Linear in the bytes fed, however they are split: a partial line is kept in a
    ``bytearray`` that each piece extends, and only the new piece is searched for line
    endings.
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._skip_leading_lf = False
        self._data_lines: list[str] = []
        self._data_bytes = 0
        self._event_name: str | None = None
        self.comments = 0

    def feed(self, piece: bytes) -> list[SSEEvent]:
        if not piece:
            return []
        at_event_start = not (self._pending or self._skip_leading_lf or self._data_lines)
        if at_event_start and self._event_name is None:
            leading = _leading_data_events(piece)
            if leading is not None:
                events, end = leading
                if end < len(piece):
                    events += self._feed_lines(piece[end:])
                return events
        return self._feed_lines(piece)

    def _feed_lines(self, piece: bytes) -> list[SSEEvent]:
        if self._pending and b"\n" not in piece and b"\r" not in piece:
            return self._keep_partial_line(piece)  # a long line goes on: no regex scan
        start = 0
        if self._skip_leading_lf and piece[:1] == b"\n":
            start = 1
        self._skip_leading_lf = False
        if not (self._pending or self._data_lines):
            # Blank lines between events dispatch nothing (they only forget an event
            # name): a run of them is skipped at once, not line by line.
            rest = len(piece) - start - len(piece[start:].lstrip(b"\r\n"))
            if rest:
                start += rest
                self._event_name = None
                self._data_bytes = 0
        events: list[SSEEvent] = []
        for line_break in _LINE_BREAK.finditer(piece, start):
            line = piece[start : line_break.start()]
            if self._pending:
                self._pending += line
                line = bytes(self._pending)
                self._pending.clear()
            start = line_break.end()
            event = self._take_line(line)
            if event is not None:
                events.append(event)
        if start < len(piece):
            self._keep_partial_line(piece[start:])
        elif piece.endswith(b"\r"):
            # The matching LF of this CR may be the first byte of the next piece.
            self._skip_leading_lf = True
        return events

    def _keep_partial_line(self, part: bytes) -> list[SSEEvent]:
        self._pending += part
        if len(self._pending) > MAX_LINE_BYTES:
            raise SSEOverflow(f"an event-stream line longer than {MAX_LINE_BYTES} bytes")
        return []

    def close(self) -> list[SSEEvent]:
        """Flush what is left when the stream ends without a trailing blank line."""
        events: list[SSEEvent] = []
        if self._pending:
            event = self._take_line(bytes(self._pending))
            self._pending.clear()
            if event is not None:
                events.append(event)
        final = self._dispatch()
        if final is not None:
            events.append(final)
        return events

    def _take_line(self, line: bytes) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line[:1] == b":":
            self.comments += 1
            return None
        field, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if field == b"data":
            self._data_bytes += len(value)
            if self._data_bytes > MAX_EVENT_BYTES:
                raise SSEOverflow(f"an event longer than {MAX_EVENT_BYTES} bytes")
            self._data_lines.append(value.decode("utf-8", errors="replace"))
        elif field == b"event":
            self._event_name = value.decode("utf-8", errors="replace")
        return None

    def _dispatch(self) -> SSEEvent | None:
        if not self._data_lines:
            self._event_name = None
            self._data_bytes = 0
            return None
        event = SSEEvent(data="\n".join(self._data_lines), event=self._event_name)
        self._data_lines = []
        self._data_bytes = 0
        self._event_name = None
        return event


def _leading_data_events(piece: bytes) -> tuple[list[SSEEvent], int] | None:
    """The events of a piece that starts with whole ``data:<value>\\n\\n`` events and
    nothing else, with where they end; None if it does not.

    That is how LLM servers write each chunk, and a socket read holds one or dozens of
    them: this takes them with one split and a few byte comparisons each instead of the
    line-by-line parse, which cost more than decoding the chunks' JSON. Anything else (CR,
    several lines, other fields, comments) goes to the line parser, which gives the same
    events for this shape too; so does what follows the last complete event.
    """
    if b"\r" in piece:
        return None
    end = piece.rfind(b"\n\n")
    if end == -1:
        return None
    events = []
    for part in piece[:end].split(b"\n\n"):
        if not part.startswith(b"data:") or b"\n" in part:
            return None
        value = part[5:]
        if value[:1] == b" ":
            value = value[1:]
        events.append(SSEEvent(value.decode("utf-8", "replace")))
    return events, end + 2
