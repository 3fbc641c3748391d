"""The step-time model's coefficients, per runtime family and platform, and its links.

llama.cpp-family coefficients (llama.cpp, Ollama, MLX) are the single-request constants of
`app/estimate/speed/llama_constants.py`, fitted on community llama-bench rows. Server
coefficients (vLLM, SGLang) are fitted by `python -m tests.accuracy.fit_server` on the
measurements of `tests/accuracy/servers.yaml` from the fitting publishers only; each value
below says so.
Link figures are the vendors' published per-direction bandwidths and commonly measured
small-message all-reduce latencies (sources in `seed_data/SOURCES.md`, "Links").
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from app.estimate.inputs.specs import HardwareSpec, family_of
from app.estimate.speed.llama_constants import (
    EFFICIENCY,
    LONG_CONTEXT_TOKENS,
    PER_LAYER_OVERHEAD_S,
    RUNTIME_FACTOR,
    platform_family,
)

SERVER_FAMILIES = frozenset({"vllm", "sglang"})


class Coefficients(msgspec.Struct, frozen=True):
    """What one runtime family reaches on one platform."""

    bandwidth_share_dense: float  # share of peak memory bandwidth the reads reach
    bandwidth_share_moe: float
    layer_s: float  # fixed time per layer per step, CUDA graphs on (or not applicable)
    layer_eager_s: float  # the same without CUDA graphs
    moe_layer_s: float  # routing and expert dispatch per MoE layer per step
    step_s: float  # per step: scheduler, sampling, detokenising
    step_per_request_s: float  # per request in the batch per step (bookkeeping, sampling)
    compute_share: float  # share of peak tensor FLOPs a decode step's math reaches
    prefill_utilisation: tuple[float, float]  # share of peak FLOPs in prefill (low, high)
    speed_factor: float = 1.0  # a runtime against llama.cpp on the same card (MLX)
    expert_s: float = 0.0  # per expert a token is routed to, per MoE layer per step
    # More per MoE layer whose routed experts are stored quantized (FP8, INT8, INT4, NVFP4,
    # and MXFP4 where no kernel was written for it): the scales' and the activations' own
    # kernels around every expert GEMM (`app/estimate/speed/model.py`, _quantized_experts).
    quantized_moe_layer_s: float = 0.0
    # Per request before its prefill and after its first step: admission, tokenising, the
    # scheduler's turn, the first token's way back (fitted on the first-token times).
    first_token_s: float = 0.0
    long_context_tokens: float = LONG_CONTEXT_TOKENS
    # Fitted on the user's own server (`servebook calibrate`, app/estimate/calibration.py):
    # the KV reads' time against the weights' at the same bandwidth (attention kernels
    # reach a share of their own), the communication time against the link's figures, and
    # the fit's error on its probe's points (None: not calibrated, the shipped figures).
    kv_read_factor: float = 1.0
    communication_scale: float = 1.0
    calibrated_error: float | None = None

    def long_context(self, depth: int) -> float:
        """Slowdown of the reads at long context beyond the KV bytes (attention kernels)."""
        return 1 + depth / self.long_context_tokens


class Link(msgspec.Struct, frozen=True):
    """How GPUs of one configuration reach each other."""

    name: str
    latency_s: float  # one small all-reduce (or all-to-all) step
    bandwidth_b_s: float  # per direction, per GPU


# Small-message all-reduce latency and per-direction bandwidth by interconnect. NVLink 4
# (H100/H200): 450 GB/s per direction; NVLink 5 (B200/B300/GB200): 900 GB/s; Infinity Fabric
# (MI300X/MI325X/MI355X): 7 links of 64 GB/s per direction; PCIe 4.0 x16: 32 GB/s, about 25
# reached. Latencies are those of one-shot custom all-reduce kernels as the runtimes' own
# benchmarks report them (single-digit microseconds on NVLink; tens over PCIe).
LINKS: dict[str, Link] = {
    "nvswitch": Link("nvswitch", 8e-6, 450e9),
    "nvlink": Link("nvlink", 8e-6, 450e9),
    "nvlink5": Link("nvlink5", 7e-6, 900e9),
    "xgmi": Link("xgmi", 12e-6, 448e9),
    "pcie": Link("pcie", 30e-6, 25e9),
    "none": Link("none", 30e-6, 25e9),
}
# Cards of NVLink 5's generation, told apart by their per-GPU memory bandwidth.
NVLINK5_BANDWIDTH_GB_S = 7000


def link_of(hardware: HardwareSpec) -> Link:
    link = hardware.interconnect
    if link in ("nvswitch", "nvlink") and (hardware.bandwidth_gb_s_per_gpu or 0) >= (
        NVLINK5_BANDWIDTH_GB_S
    ):
        return LINKS["nvlink5"]
    return LINKS.get(link, LINKS["pcie"])


# Share of peak FP16 FLOPs a llama.cpp-family prefill reaches, (low, high), by family and
# platform; elsewhere (0.3, 0.5), assumed. On Apple GPUs (FP16 at the FP32 rate, figures in
# seed_data/gpus.yaml) the published prefill rows of tests/accuracy/prefill.yaml reach
# 0.49-0.89 of it at the middle of the band (python -m tests.accuracy.prefill_check):
# llama.cpp's Metal back end 0.71 and 0.70 on two MoE models at 4,096 tokens on an M2 Ultra
# and 0.86 on Llama 3.3 70B on an M3 Ultra; MLX 0.80 on Mistral 7B at 34K tokens (M2 Ultra)
# and 0.89 on Qwen3-4B (M3 Pro). The bands take those: a Metal GPU keeps its matrix units
# busier in prefill than a CUDA card's tensor cores, whose peak is far above what the
# runtimes' kernels reach.
PREFILL_UTILISATION: dict[tuple[str, str], tuple[float, float]] = {
    ("llama.cpp", "metal"): (0.6, 0.85),
    ("mlx", "metal"): (0.7, 0.95),
}
DEFAULT_PREFILL_UTILISATION = (0.3, 0.5)


def _llama_family(platform: str, factor: float, family: str = "llama.cpp") -> Coefficients:
    """llama.cpp's single-request constants as step coefficients: no per-step or all-reduce
    terms. It splits by layer, not by tensor: over several cards the step reads each card's
    layers in turn at these shares, and adds one hand-over per card boundary over the link
    (`app/estimate/speed/step.py`), so the second card adds memory, not speed."""
    layer = PER_LAYER_OVERHEAD_S[platform]
    return Coefficients(
        bandwidth_share_dense=EFFICIENCY[(platform, False)],
        bandwidth_share_moe=EFFICIENCY[(platform, True)],
        layer_s=layer,
        layer_eager_s=layer,
        moe_layer_s=0.0,
        step_s=0.0,
        step_per_request_s=0.0,
        compute_share=0.5,
        prefill_utilisation=PREFILL_UTILISATION.get(
            (family, platform), DEFAULT_PREFILL_UTILISATION
        ),
        speed_factor=factor,
    )


# vLLM on CUDA and ROCm, fitted on its 43 fitting rows of tests/accuracy/servers.yaml (mean
# |log error| 0.149; `python -m tests.accuracy.fit_server`); without CUDA graphs each layer is
# assumed to cost 60 us more (a dozen kernel launches), not fitted. Its MoE layers cost
# 150 us more where the experts are stored quantized: its rows' BF16 MoE ran faster than one
# MoE-layer time allowed and its FP8 ones slower (docs/estimation.md).
_VLLM_CUDA = Coefficients(
    bandwidth_share_dense=0.93,
    bandwidth_share_moe=0.99,
    layer_s=40.87e-6,
    layer_eager_s=97e-6,
    moe_layer_s=40e-6,
    quantized_moe_layer_s=150e-6,
    step_s=0.86e-3,
    step_per_request_s=0.0,
    first_token_s=30e-3,
    compute_share=0.61,
    prefill_utilisation=(0.35, 0.55),
)
# On ROCm (MI300X, MI325X) the reads reach less of the card's bandwidth; the rest is shared.
_VLLM_ROCM = msgspec.structs.replace(_VLLM_CUDA, bandwidth_share_dense=0.5, bandwidth_share_moe=0.5)
# SGLang, fitted on its own 16 fitting rows (mean |log error| 0.12): the SGLang cookbook's
# 0.5.6-0.5.7 runs of four MoE models on 8 GPUs at 1 to 100 requests, and GPUStack's. Its
# recent releases spend far less per layer than vLLM's rows show, a time per expert each
# token is routed to (one request's experts are small reads, each more a latency than its
# bytes) and more per request in the batch. Its rows (MoE models up to 100 requests, CUDA
# graphs on) cannot set a compute share or the eager-mode cost: it keeps vLLM's share, and
# its layers without CUDA graphs cost 60 us more, as vLLM's. A quantized-expert time, fitted
# on its rows (45 us), read its checks worse (InferenceX's quantized DeepSeek-R1): none.
_SGLANG_CUDA = msgspec.structs.replace(
    _VLLM_CUDA,
    bandwidth_share_dense=0.8,
    bandwidth_share_moe=0.57,
    layer_s=14.85e-6,
    layer_eager_s=77e-6,
    moe_layer_s=0.0,
    quantized_moe_layer_s=0.0,
    expert_s=7.92e-6,
    step_s=0.268e-3,
    step_per_request_s=54.45e-6,
    first_token_s=30e-3,
)
_SGLANG_ROCM = msgspec.structs.replace(
    _SGLANG_CUDA, bandwidth_share_dense=0.5, bandwidth_share_moe=0.45
)
SERVER: dict[tuple[str, str], Coefficients] = {
    ("vllm", "cuda"): _VLLM_CUDA,
    ("sglang", "cuda"): _SGLANG_CUDA,
    ("vllm", "rocm/vulkan"): _VLLM_ROCM,
    ("sglang", "rocm/vulkan"): _SGLANG_ROCM,
}


@lru_cache(maxsize=256)
def coefficients_for(runtime: str, platform: str) -> Coefficients:
    """The coefficients of a runtime (slug) on a platform family."""
    family = family_of(runtime)
    if family in SERVER_FAMILIES:
        server_platform = platform if platform in ("cuda", "rocm/vulkan") else "cuda"
        found = SERVER[(family, server_platform)]
        if platform == "cuda-unified":  # a server engine on a unified-memory CUDA box
            llama = _llama_family(platform, 1.0)
            return msgspec.structs.replace(
                found,
                bandwidth_share_dense=llama.bandwidth_share_dense,
                bandwidth_share_moe=llama.bandwidth_share_moe,
            )
        return found
    return _llama_family(platform, RUNTIME_FACTOR.get(runtime, 1.0), family)


def coefficients(runtime: str, hardware: HardwareSpec) -> Coefficients:
    return coefficients_for(runtime, platform_family(hardware))
