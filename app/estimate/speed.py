"""Decode and prefill speed ranges from bandwidth and compute rooflines."""

from __future__ import annotations

from dataclasses import dataclass

from app.estimate.basis import Basis
from app.estimate.specs import HardwareSpec

# Share of peak bandwidth reached at batch 1, p25-p75 of community llama.cpp measurements;
# an MoE reaches less of it per active byte (expert routing, scattered reads).
DENSE_EFFICIENCY = (0.51, 0.73)
MOE_EFFICIENCY = (0.21, 0.33)
PREFILL_MFU = (0.3, 0.5)
TENSOR_PARALLEL_FACTOR = 0.9
PCIE_FACTOR = 0.8


@dataclass(frozen=True)
class SpeedRange:
    """A tokens-per-second range with its basis and how it was reached."""

    low: float
    high: float
    basis: Basis
    note: str


def decode_range(
    bytes_per_token: float,
    hardware: HardwareSpec,
    is_moe: bool,
    tensor_parallel: int,
) -> SpeedRange | None:
    """Decode tokens/s per request from the bytes each GPU reads per token; None if no bandwidth."""
    bandwidth = hardware.bandwidth_gb_s_per_gpu
    if bandwidth is None:
        return None
    low_eta, high_eta = MOE_EFFICIENCY if is_moe else DENSE_EFFICIENCY
    roofline = bandwidth * 1e9 / bytes_per_token * multi_gpu_factor(hardware, tensor_parallel)
    kind = "MoE, on active weights" if is_moe else "dense"
    note = (
        f"{low_eta}-{high_eta} of {bandwidth:g} GB/s ({kind}); "
        f"{bytes_per_token / 1e9:.2f} GB read per token per GPU"
    )
    note += _multi_gpu_note(hardware, tensor_parallel)
    return _speed_range(low_eta * roofline, high_eta * roofline, note)


def multi_gpu_factor(hardware: HardwareSpec, tensor_parallel: int) -> float:
    """Slowdown from all-reduce traffic between tensor-parallel GPUs."""
    if tensor_parallel == 1:
        return 1.0
    return TENSOR_PARALLEL_FACTOR * (PCIE_FACTOR if hardware.interconnect == "pcie" else 1.0)


def _multi_gpu_note(hardware: HardwareSpec, tensor_parallel: int) -> str:
    """Say which multi-GPU factor was applied."""
    if tensor_parallel == 1:
        return ""
    factor = multi_gpu_factor(hardware, tensor_parallel)
    return f"; x{factor:g} for tensor parallel {tensor_parallel}"


def prefill_range(
    active_params: float,
    hardware: HardwareSpec,
    tensor_parallel: int,
) -> SpeedRange | None:
    """Prefill tokens/s from BF16 tensor compute; None when it is unknown."""
    tflops = hardware.bf16_tflops_per_gpu
    if tflops is None:
        return None
    low_mfu, high_mfu = PREFILL_MFU
    roofline = tensor_parallel * tflops * 1e12 / (2 * active_params)
    note = (
        f"MFU {low_mfu}-{high_mfu} of {tensor_parallel} x {tflops:g} BF16 TFLOPS; "
        "attention FLOPs not counted"
    )
    return _speed_range(low_mfu * roofline, high_mfu * roofline, note)


def _speed_range(low: float, high: float, note: str) -> SpeedRange:
    """A speed range rounded to one decimal; the efficiency bands are assumptions."""
    return SpeedRange(round(low, 1), round(high, 1), Basis.ASSUMED, note)
