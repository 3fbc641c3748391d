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

from dataclasses import dataclass

_LINE_BREAKS = (b"\n", b"\r")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str | None = None


class SSEParser:
    """Turns byte pieces into :class:`SSEEvent` objects; keeps state between pieces."""

    def __init__(self) -> None:
        self._pending = b""
        self._skip_leading_lf = False
        self._data_lines: list[str] = []
        self._event_name: str | None = None
        self.comments = 0

    def feed(self, piece: bytes) -> list[SSEEvent]:
        if not piece:
            return []
        at_event_start = not (self._pending or self._skip_leading_lf or self._data_lines)
        if at_event_start and self._event_name is None:
            event = _single_data_event(piece)
            if event is not None:
                return [event]
        if self._skip_leading_lf and piece[:1] == b"\n":
            piece = piece[1:]
        self._skip_leading_lf = False
        if not piece:
            return []
        buffer = self._pending + piece if self._pending else piece
        lines = buffer.splitlines(keepends=True)
        if not lines[-1].endswith(_LINE_BREAKS):
            self._pending = lines.pop()
        else:
            self._pending = b""
        if lines and lines[-1].endswith(b"\r"):
            # The matching LF of this CR may be the first byte of the next piece.
            self._skip_leading_lf = True
        events: list[SSEEvent] = []
        for raw_line in lines:
            event = self._take_line(raw_line.rstrip(b"\r\n"))
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[SSEEvent]:
        """Flush what is left when the stream ends without a trailing blank line."""
        events: list[SSEEvent] = []
        if self._pending:
            event = self._take_line(self._pending)
            self._pending = b""
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
            self._data_lines.append(value.decode("utf-8", errors="replace"))
        elif field == b"event":
            self._event_name = value.decode("utf-8", errors="replace")
        return None

    def _dispatch(self) -> SSEEvent | None:
        if not self._data_lines:
            self._event_name = None
            return None
        event = SSEEvent(data="\n".join(self._data_lines), event=self._event_name)
        self._data_lines = []
        self._event_name = None
        return event


def _single_data_event(piece: bytes) -> SSEEvent | None:
    """The event of a piece that is exactly ``data:<value>\\n\\n``, else None.

    That is how LLM servers write each chunk, usually one per socket read: this handles it
    with a few byte comparisons instead of the line-by-line parse, which cost more than
    decoding the chunk's JSON. Anything else (CR, several lines, other fields, a partial
    event) goes to the line parser, which gives the same event for this shape too.
    """
    if not (piece.startswith(b"data:") and piece.endswith(b"\n\n")):
        return None
    value = piece[5:-2]
    if b"\n" in value or b"\r" in value:
        return None
    if value[:1] == b" ":
        value = value[1:]
    return SSEEvent(data=value.decode("utf-8", errors="replace"))
