"""Decode and prefill speed ranges from bandwidth and compute rooflines.

Decode at batch 1 reads every active weight and the whole KV cache once per token, so
time per token = bytes read / (efficiency x bandwidth) + layers x a per-layer overhead
(kernel launches, synchronisation), slowed further at long context by attention work the
byte count misses. The efficiencies, the overhead, the long-context constant and the range
around the point estimate are calibrated on the fitting half of the public measurements in
`tests/accuracy/calibration.yaml` (`python -m tests.accuracy.fit` prints them); the other
half checks them (`make accuracy`). Every constant below names what set it.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from app.estimate.basis import Basis
from app.estimate.messages import Code, Notes, message, plain
from app.estimate.specs import HardwareSpec

# Software stacks that share kernels and so share an efficiency: llama.cpp's ROCm (HIP)
# and Vulkan back ends run on the same AMD and Intel parts; CPU decode is not calibrated.
# A CUDA GPU that shares the system's memory (DGX Spark's GB10) is its own family
# ("cuda-unified", see `platform_family`): it has a per-layer overhead a discrete card
# does not show, and reaches more of its (lower) bandwidth.
PLATFORM_FAMILY: dict[str, str] = {
    "cuda": "cuda",
    "rocm": "rocm/vulkan",
    "vulkan": "rocm/vulkan",
    "metal": "metal",
    "cpu": "cpu",
}
# Share of peak bandwidth reached at batch 1 on the bytes each token reads, by family and
# dense/MoE: the median over the cell's llama.cpp fitting rows of the efficiency each row
# implies, given its family's overhead (llama.cpp fitting rows per cell: CUDA 2 dense / 2 MoE,
# CUDA unified 5 / 8, ROCm/Vulkan 3 / 1, Metal 3 / 1). An MoE reads scattered experts and
# reaches less on discrete cards. Metal MoE rests on one row (Qwen3-30B-A3B on an M2
# Ultra) and hits the cap of 1.0 there. CPU decode borrows ROCm/Vulkan: no CPU rows.
EFFICIENCY: dict[tuple[str, bool], float] = {
    ("cuda", False): 0.63,
    ("cuda", True): 0.38,
    ("cuda-unified", False): 0.96,
    ("cuda-unified", True): 0.84,
    ("rocm/vulkan", False): 0.55,
    ("rocm/vulkan", True): 0.43,
    ("metal", False): 0.91,
    ("metal", True): 1.00,
    ("cpu", False): 0.55,
    ("cpu", True): 0.43,
}
# Speed of a runtime relative to llama.cpp on the same hardware: the median of measured /
# llama.cpp estimate over its fitting rows (MLX 3 rows on M3 Ultra, vLLM 1 row on an RTX
# 4090). Ollama runs llama.cpp's kernels; SGLang has no fitting row and keeps 1.0.
RUNTIME_FACTOR: dict[str, float] = {
    "llama-cpp": 1.0,
    "ollama": 1.0,
    "mlx-lm": 1.33,
    "vllm": 0.99,
    "sglang": 1.0,
}
# Time per layer per decoded token that bandwidth does not explain (kernel launches and
# synchronisation), by family, fitted on a 0-200 us grid; it caps small models. A model
# whose layer count is unknown is taken to have DEFAULT_LAYERS (a 30B-70B class figure).
PER_LAYER_OVERHEAD_S: dict[str, float] = {
    "cuda": 0.000000,
    "cuda-unified": 0.000115,
    "rocm/vulkan": 0.000000,
    "metal": 0.000180,
    "cpu": 0.000000,
}
DEFAULT_LAYERS = 40
# Long-context slowdown beyond the KV bytes: speed x 1 / (1 + context / this), fitted on a
# grid with the rows above (DGX Spark rows at depths of 4K-32K tokens carry it): about 8%
# slower at 32K than the KV bytes alone say.
LONG_CONTEXT_TOKENS = 400_000
# The range around the point estimate: the 10th and 90th percentiles of measured/estimate
# over the 29 fitting rows, so it is meant to hold 80% of measurements (the checking rows
# test that; README, "Accuracy of the speed estimate").
RANGE = (0.91, 1.22)
RANGE_COVERS = "80%"
# Partial offload: the weights left in system memory are read by the CPU at this share of
# the host's bandwidth (assumed; one offloaded run checks it). A discrete card's host is
# assumed to be a desktop with two channels of DDR5-5600 (2 x 8 bytes x 5600 MT/s =
# 89.6 GB/s), the common current build; a unified-memory system never offloads.
HOST_BANDWIDTH_GB_S = 89.6
HOST_EFFICIENCY = 0.60
PREFILL_MFU = (0.3, 0.5)
TENSOR_PARALLEL_FACTOR = 0.9
PCIE_FACTOR = 0.8


class SpeedRange(msgspec.Struct, frozen=True):
    """A tokens-per-second range with its basis and how it was reached."""

    low: float
    high: float
    basis: Basis
    note: Notes


class DecodeLoad(msgspec.Struct, frozen=True):
    """What one decoded token costs: bytes read from GPU memory (per GPU) and, when part of
    the weights stay in system memory, bytes read from there by the CPU."""

    gpu_bytes: float
    layers: int | None = None
    host_bytes: float = 0.0
    context: int = 0
    is_moe: bool = False
    runtime: str = "llama-cpp"


def decode_range(
    load: DecodeLoad, hardware: HardwareSpec, tensor_parallel: int
) -> SpeedRange | None:
    """Decode tokens/s per request; None when the hardware's bandwidth is unknown."""
    bandwidth = hardware.bandwidth_gb_s_per_gpu
    if bandwidth is None:
        return None
    family = platform_family(hardware)
    eta = EFFICIENCY[(family, load.is_moe)]
    seconds = load.gpu_bytes / (eta * bandwidth * 1e9) + overhead_s(family, load.layers)
    if load.host_bytes:
        seconds += load.host_bytes / (HOST_EFFICIENCY * HOST_BANDWIDTH_GB_S * 1e9)
    center = long_context_factor(load.context) * multi_gpu_factor(hardware, tensor_parallel)
    center *= RUNTIME_FACTOR.get(load.runtime, 1.0) / seconds
    note = _decode_note(load, hardware, family, eta, tensor_parallel)
    return _speed_range(RANGE[0] * center, RANGE[1] * center, note)


def platform_family(hardware: HardwareSpec) -> str:
    """The calibration family of a hardware's software stack."""
    family = PLATFORM_FAMILY.get(hardware.platform, "cpu")
    return "cuda-unified" if family == "cuda" and hardware.unified_memory else family


def overhead_s(family: str, layers: int | None) -> float:
    """Fixed time per token: the family's per-layer overhead times the layers."""
    return PER_LAYER_OVERHEAD_S[family] * (layers or DEFAULT_LAYERS)


def long_context_factor(context: int) -> float:
    """Slowdown at long context beyond the KV bytes already counted."""
    return 1 / (1 + context / LONG_CONTEXT_TOKENS)


def multi_gpu_factor(hardware: HardwareSpec, tensor_parallel: int) -> float:
    """Slowdown from all-reduce traffic between tensor-parallel GPUs."""
    if tensor_parallel == 1:
        return 1.0
    return TENSOR_PARALLEL_FACTOR * (PCIE_FACTOR if hardware.interconnect == "pcie" else 1.0)


def _decode_note(
    load: DecodeLoad, hardware: HardwareSpec, family: str, eta: float, tensor_parallel: int
) -> Notes:
    """How the decode range was reached, clause by clause."""
    read = message(Code.DECODE_READ, gb=round(load.gpu_bytes / 1e9, 2), tokens=load.context)
    slowdown = long_context_factor(load.context)
    parallel = plain(multi_gpu_factor(hardware, tensor_parallel)) if tensor_parallel > 1 else None
    rest = _decode_clauses(
        load.is_moe,
        eta,
        hardware.bandwidth_gb_s_per_gpu,
        family,
        load.layers,
        load.host_bytes,
        round(slowdown, 2) if slowdown < 0.995 else None,
        parallel,
        load.runtime,
    )
    return (read, *rest)


@lru_cache(maxsize=1024, typed=True)
def _decode_clauses(
    is_moe: bool,
    eta: float,
    bandwidth: float,
    family: str,
    layers: int | None,
    host_bytes: float,
    slowdown: float | None,
    parallel: float | None,
    runtime: str,
) -> Notes:
    """The clauses after the bytes read: they depend on the card, the model and the runtime,
    which most estimates of a catalog pass share, so each distinct set is kept."""
    note: Notes = (
        message(
            Code.DECODE_BANDWIDTH_MOE if is_moe else Code.DECODE_BANDWIDTH_DENSE,
            share=round(eta, 2),
            bandwidth=plain(bandwidth),
            family=family,
            overhead=round(overhead_s(family, layers) * 1e3, 2),
        ),
    )
    if layers is None:
        note += (message(Code.DECODE_LAYERS_ASSUMED, layers=DEFAULT_LAYERS),)
    if host_bytes:
        host = message(
            Code.DECODE_FROM_SYSTEM_MEMORY,
            gb=round(host_bytes / 1e9, 2),
            share=plain(HOST_EFFICIENCY),
            bandwidth=plain(HOST_BANDWIDTH_GB_S),
        )
        note += (host,)
    if slowdown is not None:
        note += (message(Code.DECODE_LONG_CONTEXT, factor=slowdown),)
    if parallel is not None:
        note += (message(Code.DECODE_TENSOR_PARALLEL, factor=parallel),)
    factor = RUNTIME_FACTOR.get(runtime, 1.0)
    if factor != 1.0:
        note += (message(Code.DECODE_RUNTIME_FACTOR, factor=plain(factor), runtime=runtime),)
    return (*note, message(Code.DECODE_RANGE_COVERS, share=RANGE_COVERS))


def prefill_range(
    active_params: float,
    hardware: HardwareSpec,
    tensor_parallel: int,
) -> SpeedRange | None:
    """Prefill tokens/s from BF16 tensor compute; None when it is unknown."""
    tflops = hardware.bf16_tflops_per_gpu
    if tflops is None:
        return None
    return _prefill_range(active_params, tflops, tensor_parallel)


@lru_cache(maxsize=1024, typed=True)
def _prefill_range(active_params: float, tflops: float, tensor_parallel: int) -> SpeedRange:
    """`prefill_range` of known compute: the same for every estimate of a model on a card,
    so each distinct answer is kept."""
    low_mfu, high_mfu = PREFILL_MFU
    roofline = tensor_parallel * tflops * 1e12 / (2 * active_params)
    note = (
        message(
            Code.PREFILL_MFU, low=low_mfu, high=high_mfu, gpus=tensor_parallel, tflops=plain(tflops)
        ),
        message(Code.PREFILL_ATTENTION_NOT_COUNTED),
    )
    return _speed_range(low_mfu * roofline, high_mfu * roofline, note)


def _speed_range(low: float, high: float, note: Notes) -> SpeedRange:
    """A speed range rounded to one decimal; the efficiencies are calibrated assumptions."""
    return SpeedRange(round(low, 1), round(high, 1), Basis.ASSUMED, note)
