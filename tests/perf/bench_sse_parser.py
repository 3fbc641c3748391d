"""The SSE parser's cost on long lines fed in 64 KiB pieces: linear, so MB/s stays flat.

The parser refuses lines past ``MAX_LINE_BYTES``; here the limits are lifted to show the
cost of the parse itself at sizes a hostile server could send.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.bench.stream import sse  # noqa: E402

PIECE = 64 * 1024


def seconds_to_parse(megabytes: int) -> float:
    parser = sse.SSEParser()
    piece = b"a" * PIECE
    pieces = megabytes * (1 << 20) // PIECE
    started = time.perf_counter()
    parser.feed(b"data: ")
    for _ in range(pieces):
        parser.feed(piece)
    events = parser.feed(b"\n\n")
    elapsed = time.perf_counter() - started
    assert len(events) == 1 and len(events[0].data) == pieces * PIECE
    return elapsed


def main() -> None:
    sse.MAX_LINE_BYTES = sse.MAX_EVENT_BYTES = 1 << 40
    print(f"{'one line of':>12} {'parse time':>11} {'MB/s':>8}")
    for megabytes in (5, 20, 50):
        elapsed = seconds_to_parse(megabytes)
        print(f"{megabytes:>9} MB {elapsed * 1000:>8.0f} ms {megabytes / elapsed:>8.0f}")


if __name__ == "__main__":
    main()
