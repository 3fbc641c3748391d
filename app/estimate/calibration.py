"""Coefficients fitted on the user's own server: from a short probe's timings to the step
model's coefficients for that hardware and runtime (`servebook calibrate`).

The probe measures decode steps (the time between tokens of requests decoding together) at
a few batch sizes and KV depths, and first-token times over a sweep of prompt lengths. The
step model (`app/estimate/speed/step.py`) says a decode step of batch B at depth d takes

    slow(d) * (u * W + k * B * KV(d) + v * F(B) + w * B)

where W and KV(d) are the weights and one request's KV cache read at the datasheet
bandwidth, F(B) the shipped fixed and communication time, and slow(d) the long-context
slowdown. u (one over the share of the bandwidth reached), k (the KV reads' own), v (a scale
on the fixed and communication time) and w (time per request in the batch) are fitted by
least squares on the relative error, each within its physical bounds (u >= 1, the others
>= 0); the long-context length is chosen from a short list. Prefill utilisation and the
first token's time per request are then the share of peak FLOPs and the time left at every
prompt length that best match the first-token times.

The fit's error is the mean relative error of the fitted model on the probe's own points.
A probe whose points do not fit (error over MAX_ERROR), whose rounds at the same point
disagree like noise (MAX_SPREAD_OF_ROUNDS), or whose timings contradict each other (a
request decoding alone slower than each request of a larger batch, beyond NOISE and the
points' own scatter), is refused with the reason; its coefficients are never used.
"""

from __future__ import annotations

import itertools
import math

import msgspec
import numpy as np

from app.estimate.speed.coefficients import Coefficients
from app.estimate.speed.step import (
    StepInputs,
    communication_s,
    decode_step,
    experts_touched,
    prefill_seconds,
    step_fixed_s,
)

MAX_ERROR = 0.25  # mean relative error above which a probe's points do not fit the model
NOISE = 0.25  # how much slower a smaller batch's step may be before it contradicts a larger
# The typical point's spread (its requests' steps, upper quartile over lower) beyond which
# the timings are noise: a steady server's requests agree within a few tens of percent even
# when its delivery is bursty or its machine busy; twice as slow is not one server's step.
MAX_SPREAD_OF_ROUNDS = 2.0
MIN_DECODE_POINTS = 3
# The pull towards the shipped coefficients, against one point's squared relative error.
PRIOR_WEIGHT = 1e-3
# Long-context lengths tried (tokens): the shipped one, and none (the KV term alone).
NO_SLOWDOWN_TOKENS = 1e12
UTILISATIONS = tuple(float(u) for u in np.geomspace(0.01, 1.0, 200))


class DecodePoint(msgspec.Struct, frozen=True):
    """The median time between tokens of `batch` requests decoding together at `depth`."""

    batch: int
    depth: int  # KV tokens per request, midway through the timed tokens
    step_s: float
    spread: float = 1.0  # its requests' steps, upper quartile over lower (1: they agree)


class PrefillPoint(msgspec.Struct, frozen=True):
    """The median first-token time of a prompt of `prompt` tokens, sent alone."""

    prompt: int
    ttft_s: float


class Refusal(msgspec.Struct, frozen=True):
    """Why a probe's points cannot calibrate: a kind and the figures that show it."""

    kind: str  # too_few_points | noisy | contradictory | poor_fit
    figures: dict[str, float] = {}


class CalibrationFit(msgspec.Struct, frozen=True):
    coefficients: Coefficients  # with `calibrated_error` set
    error: float  # mean relative error on the decode points
    prefill_error: float | None  # the same on the first-token times (None: none probed)
    refusal: Refusal | None = None

    @property
    def ok(self) -> bool:
        return self.refusal is None


def fit_calibration(
    inputs: StepInputs,
    decode: list[DecodePoint],
    prefill: list[PrefillPoint],
    prefill_chunk: int,
) -> CalibrationFit:
    """Fit the coefficients of `inputs`' hardware and runtime (its coefficients are the
    shipped ones, the fit's starting point) on a probe's points."""
    prior = inputs.coefficients
    batches = {p.batch for p in decode}
    if len(decode) < MIN_DECODE_POINTS or len(batches) < 2:
        refusal = Refusal("too_few_points", {"points": len(decode), "batches": len(batches)})
        return CalibrationFit(prior, math.inf, None, refusal)
    contradiction = _noise(decode) or _contradiction(decode)
    best: tuple[float, Coefficients] | None = None
    for tokens in (prior.long_context_tokens, NO_SLOWDOWN_TOKENS):
        fitted = _fit_decode(inputs, decode, tokens)
        error = decode_error(_with(inputs, fitted), decode)
        if best is None or error < best[0]:
            best = (error, fitted)
    assert best is not None
    error, fitted = best
    utilisation, per_request, prefill_error = _fit_prefill(
        _with(inputs, fitted), prefill, prefill_chunk
    )
    spread = (round(utilisation * 0.9, 4), round(min(1.0, utilisation * 1.1), 4))
    fitted = msgspec.structs.replace(
        fitted,
        prefill_utilisation=spread,
        first_token_s=round(per_request, 4),
        calibrated_error=round(error, 4),
    )
    refusal = contradiction
    if refusal is None and error > MAX_ERROR:
        refusal = Refusal("poor_fit", {"error": round(100 * error, 1), "limit": 100 * MAX_ERROR})
    return CalibrationFit(fitted, error, prefill_error, refusal)


def decode_error(inputs: StepInputs, points: list[DecodePoint]) -> float:
    """Mean |predicted / measured - 1| of the step model over decode points."""
    errors = [abs(decode_step(inputs, p.batch, p.depth).total / p.step_s - 1) for p in points]
    return sum(errors) / len(errors)


def _with(inputs: StepInputs, coefficients: Coefficients) -> StepInputs:
    return msgspec.structs.replace(inputs, coefficients=coefficients)


def _noise(points: list[DecodePoint]) -> Refusal | None:
    """Rounds at the same point that disagree, at the typical point, beyond what a steady
    server's rounds do: the step a point gives is then a draw, not the server's."""
    typical = float(np.median([p.spread for p in points]))
    if typical > MAX_SPREAD_OF_ROUNDS:
        return Refusal("noisy", {"spread": round(typical, 1), "limit": MAX_SPREAD_OF_ROUNDS})
    return None


def _contradiction(points: list[DecodePoint]) -> Refusal | None:
    """A smaller batch's step slower than a larger one's at about the same depth, beyond
    noise: one request alone cannot take longer per token than each of eight together.
    Beyond NOISE and beyond the two points' own scatter: where a busy machine spreads a
    point's requests, its median moves with them, and that is not a contradiction."""
    for small, large in itertools.combinations(sorted(points, key=lambda p: p.batch), 2):
        near = abs(small.depth - large.depth) <= 0.25 * max(small.depth, large.depth, 1)
        allowed = (1 + NOISE) * math.sqrt(small.spread * large.spread)
        if near and large.batch > small.batch and small.step_s > large.step_s * allowed:
            return Refusal(
                "contradictory",
                {
                    "small_batch": small.batch,
                    "small_ms": round(small.step_s * 1e3, 2),
                    "large_batch": large.batch,
                    "large_ms": round(large.step_s * 1e3, 2),
                },
            )
    return None


def _fit_decode(inputs: StepInputs, points: list[DecodePoint], tokens: float) -> Coefficients:
    """Least squares on the relative error, u >= 1 and k, v, w >= 0, at one long-context
    length: every choice of bound variables is tried, and the best feasible kept.

    One model's probe cannot always tell terms apart (the weights' reads and the fixed
    time are both the same at every batch of a dense model): a light pull towards the
    shipped values (PRIOR_WEIGHT) settles what the points leave open in their shipped
    proportion, and moves nothing the points decide."""
    prior = inputs.coefficients
    at_prior = _with(inputs, msgspec.structs.replace(prior, long_context_tokens=tokens))
    rows = []
    for p in points:
        slow = 1 + p.depth / tokens
        weights, kv, fixed = _terms(at_prior, p.batch, p.depth)
        rows.append([slow * weights / p.step_s, slow * kv / p.step_s, slow * fixed / p.step_s])
        rows[-1].append(slow * p.batch / p.step_s)
    share = prior.bandwidth_share_moe if inputs.experts > 1 else prior.bandwidth_share_dense
    shipped = np.array([1 / share, 1 / share, 1.0, max(prior.step_per_request_s, 1e-5)])
    pull = math.sqrt(PRIOR_WEIGHT * len(points))
    design = np.vstack([np.array(rows), np.diag(pull / shipped)])
    target = np.concatenate([np.ones(len(points)), np.full(4, pull)])
    lower = np.array([1.0, 0.0, 0.0, 0.0])
    best: tuple[float, np.ndarray] | None = None
    for pinned in itertools.product((False, True), repeat=4):
        values = lower.copy()
        free = [i for i in range(4) if not pinned[i]]
        bound = [i for i in range(4) if pinned[i]]
        rest = target - design[:, bound] @ lower[bound]
        if free:
            solved, *_ = np.linalg.lstsq(design[:, free], rest, rcond=None)
            if np.any(solved < lower[free] - 1e-12):
                continue
            values[free] = solved
        residual = float(np.sum((design @ values - target) ** 2))
        if best is None or residual < best[0]:
            best = (residual, values)
    assert best is not None  # every variable pinned at its bound is always feasible
    u, k, v, w = (float(x) for x in best[1])
    return _coefficients(inputs, prior, tokens, u, k, v, w)


def _terms(inputs: StepInputs, batch: int, depth: int) -> tuple[float, float, float]:
    """A step's weights and KV reads at the datasheet bandwidth, and its shipped fixed and
    communication time without the per-request part, in seconds."""
    touched = experts_touched(inputs.experts, inputs.active_experts, batch)
    weights = (inputs.dense_bytes + inputs.expert_bytes * touched) / inputs.bandwidth_b_s
    kv = batch * inputs.kv.bytes_at(depth) / inputs.bandwidth_b_s
    fixed = step_fixed_s(inputs, eager=not inputs.cuda_graphs)
    if fixed <= 0:  # a family with no fixed terms shipped: the per-layer time alone
        fixed = inputs.layers * 1e-6
    return weights, kv, fixed + communication_s(inputs, batch)


def _coefficients(
    inputs: StepInputs, prior: Coefficients, tokens: float, u: float, k: float, v: float, w: float
) -> Coefficients:
    """The fitted values as coefficients: the probed model's kind of bandwidth share is
    fitted and the other kind keeps the shipped ratio to it."""
    share = 1 / u
    ratio = prior.bandwidth_share_moe / prior.bandwidth_share_dense
    dense, moe = (min(1.0, share / ratio), share) if inputs.experts > 1 else (share, share * ratio)
    layer, eager = prior.layer_s, prior.layer_eager_s
    if layer <= 0 and prior.step_s <= 0:  # the per-layer stand-in of `_terms`
        layer = eager = 1e-6
    return msgspec.structs.replace(
        prior,
        bandwidth_share_dense=round(dense, 4),
        bandwidth_share_moe=round(min(1.0, moe), 4),
        layer_s=layer * v,
        layer_eager_s=eager * v,
        moe_layer_s=prior.moe_layer_s * v,
        expert_s=prior.expert_s * v,
        step_s=prior.step_s * v,
        step_per_request_s=w,
        long_context_tokens=tokens,
        kv_read_factor=round(k / u, 4),
        communication_scale=round(v, 4),
    )


def _fit_prefill(
    inputs: StepInputs, points: list[PrefillPoint], chunk: int
) -> tuple[float, float, float | None]:
    """The prefill utilisation and the first token's time per request (admission, the way
    back) that best match the first-token times, and their error. A first token alone is
    its prefill, one decode step and that time per request, as the estimate counts it: the
    utilisation sets how the time grows with the prompt, the time per request what is left
    at every length (the median, at least 0)."""
    prior = inputs.coefficients
    steps = [decode_step(inputs, 1, p.prompt).total for p in points]
    if not points or inputs.flops is None:
        u = sum(prior.prefill_utilisation) / 2
        return (
            u,
            prior.first_token_s,
            _prefill_error(inputs, points, steps, chunk, u, prior.first_token_s),
        )

    def per_request(u: float) -> float:
        left = [
            p.ttft_s - prefill_seconds(inputs, p.prompt, chunk, u) - step
            for p, step in zip(points, steps, strict=True)
        ]
        return max(0.0, float(np.median(left)))

    def error(u: float) -> float:
        return _prefill_error(inputs, points, steps, chunk, u, per_request(u)) or 0.0

    best = min(UTILISATIONS, key=error)
    return best, per_request(best), error(best)


def _prefill_error(
    inputs: StepInputs,
    points: list[PrefillPoint],
    steps: list[float],
    chunk: int,
    utilisation: float,
    per_request_s: float,
) -> float | None:
    """Mean |predicted / measured - 1| of the first tokens alone, given each point's first
    decode step."""
    if not points:
        return None
    errors = [
        abs(
            (prefill_seconds(inputs, p.prompt, chunk, utilisation) + step + per_request_s)
            / p.ttft_s
            - 1
        )
        for p, step in zip(points, steps, strict=True)
    ]
    return sum(errors) / len(errors)
