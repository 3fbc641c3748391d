"""A job's speed model: what the step-time model needs of the model, its file, the runtime
and the hardware, worked out once per estimate, and the decode range at the plan's load."""

from __future__ import annotations

import math

import msgspec

from app.estimate.basis import Basis
from app.estimate.inputs.quants import BF16_BITS, SAFETENSORS, is_quant
from app.estimate.inputs.specs import family_of
from app.estimate.memory.breakdown import Job
from app.estimate.memory.kv import KvShape, kv_shape
from app.estimate.memory.weights import active_params, active_weight_bytes
from app.estimate.messages import Code, Notes, message
from app.estimate.ranges.classes import MIN_PUBLISHERS, RANGE_CLASSES
from app.estimate.speed.coefficients import Coefficients, coefficients, link_of
from app.estimate.speed.llama_constants import (
    DEFAULT_LAYERS,
    HOST_BANDWIDTH_GB_S,
    HOST_EFFICIENCY,
    HOST_LINK_GB_S,
    SpeedRange,
    platform_family,
)
from app.estimate.speed.load import LoadEstimate, SpeedModel, load_estimate
from app.estimate.speed.offload import OffloadPlan
from app.estimate.speed.speculative import method_for
from app.estimate.speed.step import ASSUMED_EXPERTS, StepInputs
from app.estimate.units import GB

TERM_CODES = {
    "weights": Code.TERM_WEIGHTS,
    "kv_cache": Code.TERM_KV_CACHE,
    "compute": Code.TERM_COMPUTE,
    "communication": Code.TERM_COMMUNICATION,
    "fixed": Code.TERM_FIXED,
    "offload": Code.TERM_OFFLOAD,
}


def speed_model(job: Job) -> SpeedModel | None:
    """The step model's view of a job; None when the hardware's bandwidth is unknown."""
    hardware, model, setup = job.hardware, job.model, job.setup
    if hardware.bandwidth_gb_s_per_gpu is None:
        return None
    tp = setup.tensor_parallel
    split = setup.layer_split
    dense, experts_bytes = _weight_split(job)
    layers = model.num_layers or DEFAULT_LAYERS
    experts, active = _expert_counts(job)
    params = active_params(model)
    hidden = model.hidden_size or _hidden_from_params(params, layers)
    heads = model.num_attention_heads
    width = heads * model.head_dim if heads and model.head_dim else hidden
    step = StepInputs(
        dense_bytes=dense / tp,
        expert_bytes=experts_bytes / tp,
        experts=experts,
        active_experts=active,
        # Under a layer split the cards read their layers in turn: the whole model's cache.
        kv=job.kv if split == 1 else _whole_kv(job),
        active_params=params,
        attention_width=width,
        layers=layers,
        moe_layers=(model.moe_layers or layers) if model.is_moe else 0,
        hidden_size=hidden,
        tensor_parallel=tp,
        expert_parallel=1,
        bandwidth_b_s=hardware.bandwidth_gb_s_per_gpu * 1e9,
        flops=hardware.bf16_tflops_per_gpu * 1e12 if hardware.bf16_tflops_per_gpu else None,
        host_bytes=0.0,
        host_bandwidth_b_s=HOST_EFFICIENCY * HOST_BANDWIDTH_GB_S * 1e9,
        cuda_graphs=setup.cuda_graphs or hardware.platform != "cuda",
        coefficients=runtime_coefficients(job),
        link=link_of(hardware),
        layer_split=split,
        quantized_experts=_quantized_experts(job),
    )
    platform = platform_family(hardware)
    speculative = method_for(model.mtp_layers) if job.runtime.slug in ("vllm", "sglang") else None
    return SpeedModel(
        step=step,
        family=family_of(job.runtime.slug),
        platform=platform,
        gpus=setup.cards,
        context=setup.context,
        concurrency=setup.concurrency,
        prefill_chunk=setup.prefill_tokens,
        speculative=speculative,
    )


def runtime_coefficients(job: Job) -> Coefficients:
    """The runtime's coefficients on the job's hardware: those fitted on that hardware
    (`servebook calibrate`) where there are, else the shipped ones of its family."""
    found = job.hardware.calibrated.get(job.runtime.slug)
    return found if found is not None else coefficients(job.runtime.slug, job.hardware)


def _whole_kv(job: Job) -> KvShape:
    """One sequence's cache over every layer, as the cards of a layer split read it in turn."""
    setup = job.setup
    return kv_shape(job.model, setup.kv_dtype, setup.caps_sliding_window, setup.tensor_parallel)


def split_speed(speed: SpeedModel, split: OffloadPlan) -> SpeedModel:
    """The speed model of an offload split (`app/estimate/speed/offload.py`): what each token reads
    on the GPU and from system memory, and the weights kept there."""
    return offloaded(speed, split.gpu_read_bytes, split.host_read_bytes, split.host_weights_gb * GB)


def offloaded(
    speed: SpeedModel,
    gpu_read_bytes: float,
    host_read_bytes: float,
    host_resident_bytes: float = 0.0,
) -> SpeedModel:
    """The speed model of a split that leaves part of the weights in system memory: a token
    reads `gpu_read_bytes` of weights on the GPU and `host_read_bytes` from system memory,
    and a prefill chunk copies what it routes to of the `host_resident_bytes` kept there
    over the host link (`HOST_LINK_GB_S`)."""
    step = msgspec.structs.replace(
        speed.step,
        dense_bytes=gpu_read_bytes,
        expert_bytes=0.0,
        host_bytes=host_read_bytes,
        host_resident_bytes=host_resident_bytes,
        host_link_b_s=HOST_LINK_GB_S * 1e9,
    )
    return msgspec.structs.replace(speed, step=step, concurrency=1)


def _expert_counts(job: Job) -> tuple[int, float]:
    """Routed experts and experts per token; an MoE without them takes the common layout,
    routing no larger a share than its active parameters allow (the dense part >= 0)."""
    model = job.model
    if not model.is_moe:
        return 1, 1
    if model.experts and model.active_experts:
        return model.experts, model.active_experts
    experts, active = ASSUMED_EXPERTS
    share = min(active / experts, model.params_active_b / model.params_total_b)
    return experts, experts * share


# gpt-oss's MXFP4 experts have MoE kernels written for them on Hopper and datacenter
# Blackwell (Triton's matmul_ogs, FlashInfer's MXFP4 MoE; vLLM's gpt-oss announcement,
# https://blog.vllm.ai/2025/08/05/gpt-oss.html) and on MI300-class cards; elsewhere they
# take the general dequantizing path (Marlin). Those cards are told apart by their dense
# BF16 throughput, as no earlier or consumer card reaches it.
MXFP4_KERNEL_MIN_BF16_TFLOPS = 700


def _quantized_experts(job: Job) -> bool:
    """Whether the MoE layers carry the cost of quantized experts
    (`Coefficients.quantized_moe_layer_s`): a safetensors file below 16 bits, except MXFP4
    on cards with gpt-oss's own kernels."""
    artifact, hardware = job.artifact, job.hardware
    if not job.model.is_moe or artifact.format != SAFETENSORS:
        return False
    if artifact.bits_per_weight >= BF16_BITS:
        return False
    tflops = hardware.bf16_tflops_per_gpu or 0
    return not (is_quant(artifact.quant, "MXFP4") and tflops >= MXFP4_KERNEL_MIN_BF16_TFLOPS)


def _weight_split(job: Job) -> tuple[float, float]:
    """Bytes read every step (dense part) and routed-expert bytes, of the whole model.

    With W the whole file, A the bytes one token reads and k/E the routed share a token
    uses: W = D + X and A = D + X·k/E, so X = (W − A) / (1 − k/E)."""
    total = job.weights.value
    if not job.model.is_moe:
        return total, 0.0
    active = active_weight_bytes(job.model, job.artifact, job.weights)
    experts, per_token = _expert_counts(job)
    routed = (total - active) / (1 - per_token / experts)
    routed = min(max(routed, 0.0), total)
    return total - routed, routed


def _hidden_from_params(params: float, layers: int) -> int:
    """A transformer of P parameters in L layers has a width of about sqrt(P / 12L)."""
    return max(256, int(math.sqrt(params / (12 * layers))))


def decode_at_plan(speed: SpeedModel | None) -> SpeedRange | None:
    """Decode tokens/s per request at the plan's context and concurrency."""
    if speed is None:
        return None
    found = load_estimate(speed)
    return SpeedRange(found.decode.low, found.decode.high, Basis.ASSUMED, decode_notes(found))


def decode_notes(found: LoadEstimate) -> Notes:
    """How the decode figure was reached: the step and what its range held."""
    step = found.step
    shares = step.shares()
    biggest = max(shares, key=shares.get)
    read_gb = round(found.read_bytes / 1e9, 2)
    read = (
        message(Code.DECODE_READ, gb=read_gb, tokens=found.depth)
        if found.layer_split == 1
        else message(
            Code.DECODE_READ_IN_TURN, gb=read_gb, count=found.layer_split, tokens=found.depth
        )
    )
    notes: Notes = (
        read,
        message(
            Code.DECODE_STEP,
            ms=round(step.total * 1e3, 2),
            requests=found.concurrency,
            tokens=found.depth,
            gpus=found.gpus,
            term=message(TERM_CODES[biggest]),
            share=round(100 * shares[biggest]),
        ),
    )
    if found.host_bytes:
        host = message(
            Code.DECODE_FROM_SYSTEM_MEMORY,
            gb=round(found.host_bytes / 1e9, 2),
            share=HOST_EFFICIENCY,
            bandwidth=HOST_BANDWIDTH_GB_S,
        )
        notes += (host,)
    held = found.range
    if found.calibrated_error is not None:
        error, spread = round(100 * found.calibrated_error, 1), round(100 * (held.high - 1))
        notes += (message(Code.DECODE_CALIBRATED, error=error, spread=spread),)
    elif held.records and not held.borrowed:
        notes += (
            message(
                Code.DECODE_RANGE_CALIBRATED,
                held=round(100 * (held.held or 0)),
                checks=held.checks,
                records=held.records,
                segment=held.key,
            ),
        )
    elif held.borrowed:
        pooled = found.pooled or RANGE_CLASSES.get(held.family or "")
        few_publishers = held.too_few_publishers
        notes += (
            message(
                Code.DECODE_RANGE_FEW_PUBLISHERS if few_publishers else Code.DECODE_RANGE_BORROWED,
                checks=held.checks,
                segment=held.key,
                family=held.family,
                held=round(100 * (pooled.held or 0)) if pooled else 0,
                family_checks=pooled.checks if pooled else 0,
                **(
                    {"publishers": held.publishers, "needed": MIN_PUBLISHERS}
                    if few_publishers
                    else {}
                ),
            ),
        )
    elif held.held is not None:
        notes += (
            message(
                Code.DECODE_RANGE_HELD,
                held=round(100 * held.held),
                checks=held.checks,
                segment=held.key,
            ),
        )
    if found.speculative_speedup is not None:
        speedup = found.speculative_speedup
        notes += (
            message(
                Code.SPECULATIVE_SPEEDUP,
                method=found.speculative,
                low=speedup.low,
                high=speedup.high,
            ),
        )
    return notes
