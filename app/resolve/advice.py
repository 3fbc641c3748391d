"""The one change most likely to help a recipe's speed, with what it does to the step.

Each candidate change is the same step model asked again with one input changed (a struct
replace on the `SpeedModel` or its `StepInputs`), at the profile's own concurrency:
- tensor parallel halved, when the weights (and the KV cache, where its heads split) at
  twice the share per GPU still fit the usable memory;
- half the concurrent requests, or twice as many where their KV cache fits;
- speculative decoding, where the profile leaves it off and the route has a method;
- CUDA graphs, where the command runs without them;
- an FP8 KV cache, where SGLang or vLLM keeps a 16-bit one.

The change that raises each request's decode the most (by at least `MIN_GAIN`) is the
advice, preferring one that costs the total nothing over one that trades it away (fewer
requests at once). When none raises decode, doubling the requests is offered if it nearly
doubles the total at little cost to each request. The range's class is kept for every
candidate, so the factor compares point estimates, not two classes' ranges.

Pure: nothing here reads the database; the detail page and its JSON ask for it when shown.
"""

from __future__ import annotations

import msgspec

from app.estimate.memory.breakdown import MemoryBreakdown
from app.estimate.messages import Code, Message, message
from app.estimate.speed.load import (
    MAX_CONCURRENCY,
    LoadEstimate,
    RequestShape,
    SpeedModel,
    load_estimate,
)
from app.resolve.applied import AppliedValues
from app.resolve.resolved import ResolvedRecipe

MIN_GAIN = 1.05  # a change that raises decode less than this is not worth the advice
MORE_TOTAL = 1.5  # doubling the requests must raise the total at least this much...
EACH_KEPT = 0.9  # ...and keep each request at this share of its speed or more
SIXTEEN_BIT_KV = ("auto", "bf16", "fp16")
FP8_KV_FAMILIES = ("vllm", "sglang")


class Advice(msgspec.Struct, frozen=True):
    """One change, what it does to each request and to the total, and its sentence."""

    change: str  # tensor_parallel, concurrency, speculative, cuda_graphs, kv_fp8
    decode_factor: float  # each request's decode after the change over before
    throughput_factor: float  # total output after over before
    message: Message


class AdviceInputs(msgspec.Struct, frozen=True):
    """What the candidates need of a recipe: its step model, its values and its memory."""

    model: SpeedModel
    applied: AppliedValues
    memory: MemoryBreakdown
    kv_splits: bool  # the KV heads split across TP ranks (GQA); an MLA cache is replicated
    shape: RequestShape = RequestShape()


def recipe_advice(recipe: ResolvedRecipe) -> Advice | None:
    """The advice for a resolved recipe; None where the step model's figures are not shown
    (no speed estimated, or weights offloaded, which the step model does not count) or where
    nothing helps."""
    estimate, applied = recipe.estimate, recipe.applied
    if estimate is None or applied is None or estimate.speed_model is None or recipe.load is None:
        return None
    model = recipe.model
    splits = model.attention != "mla" and (model.num_kv_heads or 0) >= applied.tensor_parallel
    found = AdviceInputs(estimate.speed_model, applied, estimate.memory, splits, recipe.shape)
    return best_change(found)


def best_change(inputs: AdviceInputs) -> Advice | None:
    """The candidate that raises decode most (one that keeps the total first), else a cheap
    doubling of the total, else None."""
    base = _at(inputs, inputs.model, inputs.applied.speculative_decoding)
    faster = [advice for advice in candidates(inputs, base) if advice.decode_factor >= MIN_GAIN]
    free = [advice for advice in faster if advice.throughput_factor >= 1]
    if faster:
        return max(free or faster, key=lambda advice: advice.decode_factor)
    doubled = _double_concurrency(inputs, base)
    if doubled and doubled.throughput_factor >= MORE_TOTAL and doubled.decode_factor >= EACH_KEPT:
        return doubled
    return None


def candidates(inputs: AdviceInputs, base: LoadEstimate) -> list[Advice]:
    """Every change that applies to this recipe, with its effect against `base`."""
    found = (
        _half_tensor_parallel(inputs, base),
        _half_concurrency(inputs, base),
        _speculative(inputs, base),
        _cuda_graphs(inputs, base),
        _kv_fp8(inputs, base),
    )
    return [advice for advice in found if advice is not None]


def _at(
    inputs: AdviceInputs,
    model: SpeedModel,
    speculative: bool,
    concurrency: int | None = None,
) -> LoadEstimate:
    return load_estimate(model, concurrency or inputs.model.concurrency, inputs.shape, speculative)


def _factors(before: LoadEstimate, after: LoadEstimate) -> tuple[float, float]:
    decode = after.decode.middle / before.decode.middle
    total = after.throughput.middle / before.throughput.middle
    return round(decode, 2), round(total, 2)


def _percent(load: LoadEstimate, term: str) -> int:
    return round(100 * load.shares()[term])


def _with_step(inputs: AdviceInputs, **changes: object) -> SpeedModel:
    step = msgspec.structs.replace(inputs.model.step, **changes)
    return msgspec.structs.replace(inputs.model, step=step)


def _half_tensor_parallel(inputs: AdviceInputs, base: LoadEstimate) -> Advice | None:
    """Half the GPUs per replica: each holds twice the weights, and twice the KV where the
    heads split, but the all-reduces cross fewer ranks."""
    step, memory = inputs.model.step, inputs.memory
    tp = step.tensor_parallel
    if tp < 2 or tp % 2:
        return None
    kv_scale = 2 if inputs.kv_splits else 1
    needed = (
        2 * memory.weights.value
        + kv_scale * memory.kv_cache.value
        + memory.prefill_workspace.value
        + memory.runtime_reserve.value
    )
    if needed > memory.usable.value:
        return None
    kv = msgspec.structs.replace(
        step.kv,
        per_layer=step.kv.per_layer * kv_scale,
        linear_state=step.kv.linear_state * kv_scale,
    )
    halved = _with_step(
        inputs,
        tensor_parallel=tp // 2,
        dense_bytes=2 * step.dense_bytes,
        expert_bytes=2 * step.expert_bytes,
        kv=kv,
    )
    after = _at(inputs, halved, inputs.applied.speculative_decoding)
    decode, total = _factors(base, after)
    total = round(2 * total, 2)  # the same GPUs hold two replicas of half the size
    said = message(
        Code.ADVICE_TENSOR_PARALLEL,
        now=tp,
        then=tp // 2,
        before=_percent(base, "communication"),
        after=_percent(after, "communication"),
        factor=decode,
    )
    return Advice("tensor_parallel", decode, total, said)


def _half_concurrency(inputs: AdviceInputs, base: LoadEstimate) -> Advice | None:
    now = inputs.model.concurrency
    if now < 2:
        return None
    return _concurrency(inputs, base, now // 2)


def _double_concurrency(inputs: AdviceInputs, base: LoadEstimate) -> Advice | None:
    """Twice the requests, where their KV cache fits beside what is there."""
    now, memory = inputs.model.concurrency, inputs.memory
    if 2 * now > MAX_CONCURRENCY or memory.required + memory.kv_cache.value > memory.usable.value:
        return None
    return _concurrency(inputs, base, 2 * now)


def _concurrency(inputs: AdviceInputs, base: LoadEstimate, then: int) -> Advice:
    after = _at(inputs, inputs.model, inputs.applied.speculative_decoding, then)
    decode, total = _factors(base, after)
    said = message(
        Code.ADVICE_CONCURRENCY,
        now=inputs.model.concurrency,
        then=then,
        factor=decode,
        total=total,
    )
    return Advice("concurrency", decode, total, said)


def _speculative(inputs: AdviceInputs, base: LoadEstimate) -> Advice | None:
    method = inputs.model.speculative
    if inputs.applied.speculative_decoding or method is None:
        return None
    after = _at(inputs, inputs.model, True)
    speedup = after.speculative_speedup
    if speedup is None:
        return None
    decode, total = _factors(base, after)
    said = message(Code.ADVICE_SPECULATIVE, method=method.name, low=speedup.low, high=speedup.high)
    return Advice("speculative", decode, total, said)


def _cuda_graphs(inputs: AdviceInputs, base: LoadEstimate) -> Advice | None:
    if inputs.model.step.cuda_graphs:
        return None
    after = _at(inputs, _with_step(inputs, cuda_graphs=True), inputs.applied.speculative_decoding)
    decode, total = _factors(base, after)
    said = message(
        Code.ADVICE_CUDA_GRAPHS,
        before=_percent(base, "fixed"),
        after=_percent(after, "fixed"),
        factor=decode,
    )
    return Advice("cuda_graphs", decode, total, said)


def _kv_fp8(inputs: AdviceInputs, base: LoadEstimate) -> Advice | None:
    """An 8-bit KV cache halves the KV reads, where the runtime offers one."""
    kv = inputs.model.step.kv
    if (
        inputs.model.family not in FP8_KV_FAMILIES
        or inputs.applied.kv_cache_dtype not in SIXTEEN_BIT_KV
        or kv.numerator != 2 * kv.denominator
    ):
        return None
    eight_bit = msgspec.structs.replace(kv, numerator=1, denominator=1)
    after = _at(inputs, _with_step(inputs, kv=eight_bit), inputs.applied.speculative_decoding)
    decode, total = _factors(base, after)
    said = message(
        Code.ADVICE_KV_FP8,
        before=_percent(base, "kv_cache"),
        after=_percent(after, "kv_cache"),
        factor=decode,
    )
    return Advice("kv_fp8", decode, total, said)
