"""A decode step from a probe's rounds, read so that bursty delivery does not move it.

A server under load does not hand each token over as it is made: its front end falls
behind and then writes several tokens per chunk, or a stall's worth of chunks at once,
sometimes a whole answer in one go. Gaps between chunks, and even the span from the first
chunk to the last, then say when the client was handed tokens, not when they were made;
the first token in particular can arrive long after it was made.

What stays true is when each request ends: its last token cannot arrive before it was made
and arrives soon after (the answer is finished, nothing is held back). So each round is
sent twice with the same prompts: once asking for few tokens and once for many. The time
to the last token of the long requests less that of the short ones is the decode of the
extra tokens (the server's usage counts say how many); the prompt's prefill, the queueing
and the front end's usual lag are in both and drop out. The median over requests and then
over rounds keeps one late flush from bending a point, and how far the rounds lie apart
tells a server whose timing is noise from one whose delivery is merely bursty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median, quantiles

from app.bench.result import RequestSample

SHORT_OUTPUT_TOKENS = 4  # tokens each request of a round's short twin is asked for
SPREAD_CAP = 999.0  # a point's spread as stored when its requests' steps run down to zero


def round_step_s(long: list[RequestSample], short: list[RequestSample]) -> float | None:
    """Seconds per decode step of one round: the extra time to the last token of the long
    requests over the short ones, per extra token, medians over each side's requests.
    None when the round cannot tell: a request failed, or the long requests made no more
    tokens than the short ones, or did not take longer (a contradiction, not a burst)."""
    if not _usable(long, short):
        return None
    extra_tokens = median(_tokens(s) for s in long) - median(_tokens(s) for s in short)
    extra_ms = median(_end_ms(s) for s in long) - median(_end_ms(s) for s in short)
    if extra_tokens < 1 or extra_ms <= 0:
        return None
    return extra_ms / extra_tokens / 1e3


def request_steps_s(long: list[RequestSample], short: list[RequestSample]) -> list[float]:
    """Each long request's own step against the short twins' median end: how far the
    requests of a round lie apart (a batch decoding together ends together). A request
    that made no more tokens, or ended no later, counts as a step of zero."""
    if not _usable(long, short):
        return []
    short_tokens = median(_tokens(s) for s in short)
    short_end_ms = median(_end_ms(s) for s in short)
    steps = []
    for sample in long:
        extra_tokens = _tokens(sample) - short_tokens
        extra_ms = _end_ms(sample) - short_end_ms
        steps.append(max(0.0, extra_ms / extra_tokens / 1e3) if extra_tokens >= 1 else 0.0)
    return steps


def _usable(long: list[RequestSample], short: list[RequestSample]) -> bool:
    return bool(long and short) and all(_ended(s) for s in (*long, *short))


def _ended(sample: RequestSample) -> bool:
    return sample.ok and sample.e2e_ms is not None and _tokens(sample) >= 1


def _tokens(sample: RequestSample) -> int:
    """Tokens made, as the server counts them (a chunk may carry several, or none)."""
    return sample.output_tokens or sample.token_chunks


def _end_ms(sample: RequestSample) -> float:
    return sample.e2e_ms or 0.0


@dataclass
class PointRounds:
    """The rounds at one batch size and depth: their steps, each request's own step, and
    the prompts they sent."""

    steps: list[float] = field(default_factory=list)
    request_steps: list[float] = field(default_factory=list)
    prompts: list[int] = field(default_factory=list)

    def add(self, long: list[RequestSample], short: list[RequestSample], prompt: int) -> None:
        step = round_step_s(long, short)
        if step is not None:
            self.steps.append(step)
            self.request_steps.extend(request_steps_s(long, short))
            self.prompts.append(prompt)

    @property
    def step_s(self) -> float:
        return median(self.steps)

    @property
    def spread(self) -> float:
        """The upper quartile of the requests' own steps over the lower (1: they agree),
        at most SPREAD_CAP. Quartiles, not the extremes: one late flush or one slow round
        of a busy machine is not noise; requests that disagree throughout are."""
        if len(self.request_steps) < 2:
            return 1.0
        low, _, high = quantiles(self.request_steps, n=4, method="inclusive")
        return min(SPREAD_CAP, high / low) if low > 0 else SPREAD_CAP
