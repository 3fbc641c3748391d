"""How an answer's tokens arrived, and whether its decode speed can be measured from that.

A decode speed is the time between tokens. It can only be read from a stream whose tokens
arrived apart: a whole answer sent at once (an overloaded server, a proxy that buffers), a
few bursts of many tokens (vLLM's ``--stream-interval``, speculative decoding) or most of
the answer in its last piece leave no inter-token time to read, and "tokens / (last -
first arrival)" then gives figures like 14,000 tok/s at a TPOT of 0.1 ms. Such an answer's
decode is *not measurable*: it has no decode speed and no TPOT, never an invented one.

Arrivals are token chunks that came apart: chunks that came in one received segment share
their stamp (``app.bench.transport.stamped_socket``), and chunks written back to back arrive within
microseconds, so a chunk that follows the previous one by at most ``SAME_ARRIVAL_NS`` is
part of its arrival. A proxy that merges the server's chunks, or a server that flushes
several at once, shows as fewer arrivals than chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.bench.result import BurstShape, RequestSample

# Chunks this close together came in one burst: no decode is that fast (4,000 tok/s per
# request), while chunks written back to back arrive a few microseconds apart.
SAME_ARRIVAL_NS = 250_000
# An answer needs this many arrivals (three gaps) to be timed at all.
MIN_ARRIVALS = 4
# More tokens than this per arrival, on average, is bursts: speculative decoding accepts
# two or three tokens a step on average, a stream interval of 5 or more sends more.
MAX_TOKENS_PER_ARRIVAL = 4.0
# More of the answer's text than this in its last arrival: the end came in one piece.
MAX_LAST_SHARE = 0.5
# A run where more than this share of its timed answers burst has no decode figures.
MAX_BURST_SHARE = 0.5


@dataclass(frozen=True)
class Arrival:
    """The arrival figures of one answer and the verdict on its decode."""

    arrivals: int
    tokens_per_chunk: float | None
    longest_gap_ms: float | None
    last_chunk_share: float | None
    burst: BurstShape | None

    @property
    def measurable(self) -> bool:
        return self.burst is None


def arrival_of(
    stamps: Sequence[int],
    output_tokens: int | None,
    text_chars: int,
    chars_before_last: int,
) -> Arrival:
    """``stamps``: each token chunk's arrival (ns); ``text_chars``: the answer's text
    received in all, ``chars_before_last`` before its last arrival."""
    chunks = len(stamps)
    arrivals = 0
    longest = 0
    previous: int | None = None
    for stamp in stamps:
        if previous is None or stamp - previous > SAME_ARRIVAL_NS:
            arrivals += 1
        if previous is not None and stamp - previous > longest:
            longest = stamp - previous
        previous = stamp
    tokens = output_tokens or 0
    per_chunk = round(tokens / chunks, 3) if chunks and output_tokens else None
    last_share = round((text_chars - chars_before_last) / text_chars, 4) if text_chars > 0 else None
    return Arrival(
        arrivals=arrivals,
        tokens_per_chunk=per_chunk,
        longest_gap_ms=round(longest / 1e6, 3) if chunks > 1 else None,
        last_chunk_share=last_share,
        burst=_burst(chunks, arrivals, tokens, last_share),
    )


def _burst(chunks: int, arrivals: int, tokens: int, last_share: float | None) -> BurstShape | None:
    if tokens < MIN_ARRIVALS and arrivals < MIN_ARRIVALS:
        return "short"
    if arrivals <= 1:
        return "one_piece"
    if last_share is not None and last_share > MAX_LAST_SHARE:
        return "last_piece"
    if arrivals < MIN_ARRIVALS or tokens / arrivals > MAX_TOKENS_PER_ARRIVAL:
        # Chunks the server sent apart that arrived together were merged on the way (or
        # read late); chunks that each carry many tokens were packed by the server.
        return "merged" if chunks >= 2 * arrivals else "packed"
    return None


# What each shape says about its cause, and what to try: the run's outcome_error.
BURST_CAUSES: dict[str, str] = {
    "one_piece": "whole answers arrived in one piece",
    "last_piece": "most of each answer arrived in its last piece",
    "merged": "the server's chunks arrived merged, a few bursts per answer",
    "packed": "each chunk carried several tokens",
}
BURST_ADVICE: dict[str, str] = {
    "one_piece": (
        "a buffering proxy between client and server, or a server too loaded to stream; "
        "measure the server directly, with fewer streams or on a quieter machine"
    ),
    "last_piece": (
        "a buffering proxy, or a server that falls behind and flushes at the end; "
        "measure the server directly, with fewer streams or on a quieter machine"
    ),
    "merged": (
        "a proxy that buffers the stream, or an overloaded server or client; measure the "
        "server directly, with proxy buffering off, or on a quieter machine"
    ),
    "packed": (
        "a stream interval above 1 (vLLM's --stream-interval) or speculative decoding; "
        "set --stream-interval 1, or measure without speculative decoding"
    ),
}


def timed_answers(samples: Sequence[RequestSample]) -> list[RequestSample]:
    """Answers that could show a decode speed: answered, and long enough to time."""
    return [s for s in samples if s.ok and s.decode_measurable is not None and s.burst != "short"]


def burst_verdict(samples: Sequence[RequestSample]) -> str | None:
    """Why the run's decode figures cannot stand, when most timed answers burst; else None."""
    timed = timed_answers(samples)
    burst = [s for s in timed if s.decode_measurable is False]
    if not timed or len(burst) <= MAX_BURST_SHARE * len(timed):
        return None
    shapes: dict[str, int] = {}
    for sample in burst:
        shapes[sample.burst or "one_piece"] = shapes.get(sample.burst or "one_piece", 0) + 1
    shape = max(shapes, key=lambda name: shapes[name])
    per_chunk = [s.tokens_per_chunk for s in burst if s.tokens_per_chunk is not None]
    most = max(per_chunk, default=0.0)
    most_per_chunk = f", up to {most:g} tokens per chunk" if most >= 1.5 else ""
    return (
        f"decode not measurable: {len(burst)} of {len(timed)} answers arrived in bursts "
        f"({BURST_CAUSES[shape]}{most_per_chunk}), so they hold no time between tokens; "
        f"likely cause: {BURST_ADVICE[shape]}"
    )
