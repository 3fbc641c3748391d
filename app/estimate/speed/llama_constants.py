"""The llama.cpp-family constants of the step model (`app/estimate/speed/step.py`), with the
platform families they are kept by, and the tokens-per-second range every decode figure is
given as.

A llama.cpp-family decode step reads every active weight and the KV cache once per token:
time per token = bytes read / (efficiency x bandwidth) + layers x a per-layer overhead
(kernel launches, synchronisation), slowed further at long context by attention work the
byte count misses. The efficiencies, the overhead and the long-context constant are
calibrated on the fitting half of the public measurements in
`tests/accuracy/calibration.yaml` (`python -m tests.accuracy.fit` prints them); the other
half checks them (`make accuracy`). `app/estimate/speed/coefficients.py` turns them into the step
model's coefficients: no figure is computed here. Every constant below names what set it.
"""

from __future__ import annotations

import msgspec

from app.estimate.basis import Basis
from app.estimate.inputs.specs import HardwareSpec
from app.estimate.messages import Notes

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
# Partial offload: the weights left in system memory are read by the CPU at this share of
# the host's bandwidth (assumed; one offloaded run checks it). A discrete card's host is
# assumed to be a desktop with two channels of DDR5-5600 (2 x 8 bytes x 5600 MT/s =
# 89.6 GB/s), the common current build; a unified-memory system never offloads.
HOST_BANDWIDTH_GB_S = 89.6
HOST_EFFICIENCY = 0.60
# Partial offload's prefill: llama.cpp copies the weights kept in system memory to the GPU
# for every micro-batch (`--ubatch-size`, 512 tokens by default) and computes there
# (`app/estimate/speed/step.py`, host_chunk_s). The card is assumed on PCIe 4.0 x16, 32 GB/s per
# direction (16 GT/s x 16 lanes, 128b/130b), of which 25 GB/s is reached (assumed, as the
# PCIe link of `app/estimate/speed/coefficients.py`). One published run checks it: gpt-oss-120b
# with 27 layers' experts in system memory on an RTX 3090 prefills 246 tokens/s at 5,500
# tokens; this figure gives 269 (`tests/accuracy/prefill.yaml`, python -m
# tests.accuracy.prefill_check).
HOST_LINK_GB_S = 25.0


class SpeedRange(msgspec.Struct, frozen=True):
    """A tokens-per-second range with its basis and how it was reached."""

    low: float
    high: float
    basis: Basis
    note: Notes


def platform_family(hardware: HardwareSpec) -> str:
    """The calibration family of a hardware's software stack."""
    family = PLATFORM_FAMILY.get(hardware.platform, "cpu")
    return "cuda-unified" if family == "cuda" and hardware.unified_memory else family
