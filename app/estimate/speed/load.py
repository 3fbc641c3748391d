"""Speed at a load: per-request decode, total throughput and time to first token, with the
share of step time per term, from the step-time model (`app/estimate/speed/step.py`).

An estimate carries a `SpeedModel` (what the step model needs of its job); any surface that
shows a speed at some concurrency asks `load_estimate` of it, so the fit table, the detail
page, the JSON, `POST /api/estimate` and the CLI show one figure.

Request shape: decode runs at `depth` tokens of KV per request: prompt + half the output.
A question that leaves a length blank is answered for the stated default request
(`RequestShape.filled`: a 1,024-token prompt and 256 output tokens, as the plan asks), never
for the server's largest context; only a shape with no lengths at all, which the
measurement checks use, runs at the plan's context. The first token waits for the prompt's
prefill and the runtime's own time per request (admission, tokenising, the way back).

Arrivals: the users' requests arrive independently, each user's next turn when the last is
answered, and a prompt waits for the prefills queued before it (`ttft_ms`); a burst, every
request at the same instant, is the named worst case (`ttft_burst_ms`). When the output
length is given, each request's decode also waits for the prefills of the requests that join
during it (continuous batching), as a serving benchmark measures; without it the figure is
the steady-state step.
"""

from __future__ import annotations

import msgspec

from app.estimate.ranges.classes import (
    RANGE_CLASSES,
    RangeClass,
    calibrated_range,
    range_class,
    ttft_range,
)
from app.estimate.ranges.from_records import RangeBook
from app.estimate.speed.coefficients import Coefficients
from app.estimate.speed.speculative import Method
from app.estimate.speed.step import StepInputs, StepTime, bytes_read, decode_step, prefill_seconds

MAX_CONCURRENCY = 4096


class Band(msgspec.Struct, frozen=True):
    """A low-high range of one figure."""

    low: float
    high: float

    @property
    def middle(self) -> float:
        return (self.low + self.high) / 2


class SpeedModel(msgspec.Struct, frozen=True):
    """What the step model needs of one estimate's job."""

    step: StepInputs
    family: str  # runtime family: vllm, sglang, llama.cpp, mlx
    platform: str  # platform family: cuda, cuda-unified, rocm/vulkan, metal, cpu
    gpus: int  # GPUs the route uses
    context: int  # the plan's context
    concurrency: int  # the plan's concurrency
    prefill_chunk: int
    speculative: Method | None  # the method the route's command would use
    # The range classes in effect: the shipped ones unless accepted records updated them
    # (`app/estimate/ranges/from_records.py`); the caller gathers the records and sets this.
    ranges: RangeBook | None = None

    @property
    def coefficients(self) -> Coefficients:
        return self.step.coefficients


# The request a question that leaves its lengths blank is answered for: a chat turn of a
# 1,024-token prompt and 256 output tokens. 1,024 is `vllm bench serve`'s random prompt
# (--random-input-len) and the plan's default; a request holds these tokens of KV, not the
# server's largest context, as the paged caches count it (`app/estimate/memory/capacity.py`).
DEFAULT_PROMPT_TOKENS = 1024
DEFAULT_OUTPUT_TOKENS = 256


class RequestShape(msgspec.Struct, frozen=True):
    """The requests a load is made of; None lengths: see `filled` and the module."""

    prompt_tokens: int | None = None
    output_tokens: int | None = None

    def filled(self, context: int) -> RequestShape:
        """This shape with each blank length at its stated default, the defaults cut to fit
        `context` (a prompt and its output never pass what the server holds)."""
        output = self.output_tokens
        if output is None:
            output = max(1, min(DEFAULT_OUTPUT_TOKENS, context // 5))
        prompt = self.prompt_tokens
        if prompt is None:
            prompt = max(1, min(DEFAULT_PROMPT_TOKENS, context - output))
        return RequestShape(prompt, output)


class LoadEstimate(msgspec.Struct, frozen=True):
    """Speed at one concurrency: each request's decode, the total, and the first token."""

    concurrency: int  # requests asked for
    running: int  # requests decoding together: the asked, or as many as memory holds
    gpus: int
    prompt_tokens: int
    output_tokens: int | None
    depth: int
    read_bytes: float  # one step's reads on each GPU
    host_bytes: float  # one step's reads from system memory (partial offload)
    decode: Band  # tokens/s per request
    # tokens/s per request before its class's spread (and before speculative decoding): what
    # a measurement is divided by to score the class (`app/estimate/ranges/classes.py`)
    decode_point: float
    throughput: Band  # output tokens/s, all requests together
    ttft_ms: Band  # requests arriving independently (the stated arrival model)
    ttft_burst_ms: Band  # the worst case: every request arriving at the same instant
    step: StepTime  # one decode step at the point estimate, by term
    range: RangeClass
    speculative: str | None = None  # the method counted, when one is
    speculative_speedup: Band | None = None
    pooled: RangeClass | None = None  # the family's class a borrowed range was widened from
    # The fit's error on its own probe, where the coefficients were fitted on this hardware
    # (`servebook calibrate`): the figures are then "calibrated", not "estimated".
    calibrated_error: float | None = None
    layer_split: int = 1  # cards that read their layers in turn (read_bytes is their sum)

    def shares(self) -> dict[str, float]:
        return self.step.shares()


def load_estimate(
    model: SpeedModel,
    concurrency: int | None = None,
    shape: RequestShape | None = None,
    speculative: bool = False,
    slots: int | None = None,
) -> LoadEstimate:
    """The figures at a concurrency (the plan's by default) and request shape.

    With `slots` below the concurrency (as many requests as memory holds), the server runs
    that many at once and the rest wait in its queue: decode and throughput are those of
    the running batch, and the first token also waits for the queue to reach it."""
    asked = concurrency or model.concurrency
    batch = min(asked, slots) if slots else asked
    shape = shape or RequestShape()
    prompt = shape.prompt_tokens or model.context
    output = shape.output_tokens
    depth = prompt + (output or 0) // 2 if shape.prompt_tokens else model.context
    step = decode_step(model.step, batch, depth)
    factor = model.coefficients.speed_factor
    seconds = step.total / factor
    c = model.coefficients
    slow, fast = c.prefill_utilisation
    prefill = (  # the slower prefill with the lower utilisation
        prefill_seconds(model.step, prompt, model.prefill_chunk, slow),
        prefill_seconds(model.step, prompt, model.prefill_chunk, fast),
    )
    center = _per_request(seconds, batch, output, sum(prefill) / 2)
    method, speedup = None, None
    if speculative and model.speculative is not None:
        method = model.speculative
        speedup = _speculative_speedup(model, method, batch, depth)
    book = model.ranges.classes if model.ranges is not None else None
    found = _range(model, batch, book)
    low, high = center * found.low, center * found.high
    if batch > 1:
        # A request never decodes faster beside others than alone. One request and many
        # are separate classes whose spreads come from different checks; where the many's
        # top reaches above the one's, the one's bounds it.
        alone = factor / decode_step(model.step, 1, depth).total
        one = _range(model, 1, book)  # either end: the low edge rises no more than the top
        low, high = min(low, alone * one.low), min(high, alone * one.high)
        alone_first_s = sum(prefill) / 2 + 1 / alone + c.first_token_s
        # Nor do many requests together put out less than one alone would.
        floor_total = _throughput(1, output, alone_first_s, alone * one.low, alone * one.high)
    else:
        floor_total = Band(0.0, 0.0)
    if speedup is not None:
        low, high = low * speedup.low, high * speedup.high
    # A burst, every request at once, is prefilled packed into chunks: on average a
    # request's first token waits for the prompts up to its own, (B + 1) / 2 of them.
    queue = (batch + 1) / 2
    burst = tuple(
        prefill_seconds(model.step, prompt, model.prefill_chunk, u, prompts=queue)
        for u in (slow, fast)
    )
    first_step = seconds + c.first_token_s
    # Requests that arrive independently, as the users' turns produce them, wait only for
    # the prefills already queued when they come (see `_arrival_prefill`).
    arriving = tuple(
        _arrival_prefill(batch, output, one, burst_s, first_step, center)
        for one, burst_s in zip(prefill, burst, strict=True)
    )
    waiting = _queue_wait(asked, batch, output or depth, low, high)
    spread = _one_request_spread(model) if batch == 1 else ttft_range(batch)

    # A request never gets its first token sooner beside others than alone. One request
    # and many are separate classes, as for decode: the one's band bounds each end below.
    floor = Band(0.0, 0.0)
    if batch > 1:
        one = _one_request_spread(model)
        alone_step = decode_step(model.step, 1, depth).total / factor + c.first_token_s
        floor = Band((prefill[1] + alone_step) * one.low, (prefill[0] + alone_step) * one.high)

    def first_token(queued: tuple[float, float]) -> Band:
        return Band(
            round(
                1e3 * max((queued[1] + first_step) * spread.low, floor.low) + 1e3 * waiting.low, 1
            ),
            round(
                1e3 * max((queued[0] + first_step) * spread.high, floor.high) + 1e3 * waiting.high,
                1,
            ),
        )

    ttft = first_token(arriving)
    return LoadEstimate(
        concurrency=asked,
        running=batch,
        gpus=model.gpus,
        prompt_tokens=prompt,
        output_tokens=output,
        depth=depth,
        read_bytes=bytes_read(model.step, batch, depth),
        host_bytes=model.step.host_bytes,
        decode=Band(round(low, 1), round(high, 1)),
        decode_point=center,
        throughput=_at_least(
            _throughput(batch, output, sum(prefill) / 2 + first_step, low, high), floor_total
        ),
        ttft_ms=ttft,
        ttft_burst_ms=first_token(burst),
        step=step,
        range=found,
        speculative=method.name if method else None,
        speculative_speedup=speedup,
        pooled=(book or RANGE_CLASSES).get(found.family or "") if found.borrowed else None,
        calibrated_error=c.calibrated_error,
        layer_split=model.step.layer_split,
    )


def _throughput(batch: int, output: int | None, first_s: float, low: float, high: float) -> Band:
    """Output tokens/s of all running requests. With the output length known, each request
    also spends its own prefill before its first token, as a closed-loop serving benchmark
    measures (throughput = batch x output / (time to first token + output / decode))."""
    if not output:
        return Band(round(low * batch, 1), round(high * batch, 1))
    return Band(
        round(batch * output / (first_s + output / low), 1),
        round(batch * output / (first_s + output / high), 1),
    )


def _at_least(band: Band, floor: Band) -> Band:
    return Band(max(band.low, floor.low), max(band.high, floor.high))


def _range(model: SpeedModel, batch: int, book: dict[str, RangeClass] | None) -> RangeClass:
    """The range class's spread (as accepted records updated it, given their `book`), or,
    for coefficients fitted on this hardware, the spread their fit's own error sets."""
    error = model.coefficients.calibrated_error
    if error is not None:
        return calibrated_range(model.family, model.platform, model.gpus, batch, error)
    return range_class(model.family, model.platform, model.gpus, batch, book)


def _one_request_spread(model: SpeedModel) -> RangeClass:
    """One request's first-token spread: the fit's own where the coefficients were fitted
    on this server's timings (as decode's), else the shipped class's. Under load the
    arrivals, not the server, set the spread."""
    c = model.coefficients
    if c.calibrated_error is not None:
        return calibrated_range(model.family, model.platform, model.gpus, 1, c.calibrated_error)
    return ttft_range(1)


def _arrival_prefill(
    batch: int,
    output: int | None,
    one_s: float,
    burst_s: float,
    first_step_s: float,
    decode_tps: float,
) -> float:
    """Seconds from a request's arrival to its prompt's prefill done, where the requests
    arrive independently: each of the `batch` users sends its next turn when the last is
    answered, so requests come at `batch` over a turn's time (first token plus output at
    the decode speed), and a prompt waits for those queued before it. The prefills are
    served one after another (chunked beside the decode steps), a queue of random arrivals
    and fixed service (M/D/1: wait = rho x S / 2(1 - rho)). Never more than a burst's wait,
    where every request came at once; without an output length there are no turns to
    count, and the burst is the answer."""
    if batch == 1:
        return one_s
    if not output:
        return burst_s
    turn_s = one_s + first_step_s + output / decode_tps
    rho = batch * one_s / turn_s
    if rho >= 1:
        return burst_s
    return min(burst_s, one_s + rho * one_s / (2 * (1 - rho)))


def _queue_wait(asked: int, running: int, output: int, low: float, high: float) -> Band:
    """Seconds a request waits for a slot when more are asked than run: each round of
    `running` requests takes one request's output time, and a request waits for the rounds
    ahead of it, (asked / running - 1) of them on average."""
    if asked <= running:
        return Band(0.0, 0.0)
    rounds = asked / running - 1
    return Band(rounds * output / high, rounds * output / low)


def _per_request(step_s: float, batch: int, output: int | None, prefill_s: float) -> float:
    """Tokens/s each request sees: one token per step, less the time that the prefills of
    the other requests joining during its output take from its steps."""
    if not output or batch == 1:
        return 1 / step_s
    return 1 / (step_s + (batch - 1) * prefill_s / output)


def _speculative_speedup(model: SpeedModel, method: Method, batch: int, depth: int) -> Band:
    """Accepted tokens per step over the verifying step's cost (see `app/estimate/speculative`)."""
    plain = decode_step(model.step, batch, depth).total
    verify = decode_step(model.step, batch, depth, verify_tokens=method.draft_tokens + 1).total
    cost = plain / (verify + method.draft_cost * plain)
    low, high = method.accepted
    return Band(round(low * cost, 2), round(high * cost, 2))


def with_ranges(model: SpeedModel, book: RangeBook | None) -> SpeedModel:
    """The same speed model with its ranges taken from `book` (None: the shipped ones)."""
    if book is None or model.ranges is book:
        return model
    return msgspec.structs.replace(model, ranges=book)
