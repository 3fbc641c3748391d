"""Warnings about a serving setup that fits on paper but may disappoint."""

from __future__ import annotations

from app.estimate.setup import Setup
from app.estimate.specs import HardwareSpec, ModelSpec, RuntimeSpec

QUANTIZED_KV_QUALITY_LIMIT = 32768


def setup_warnings(
    model: ModelSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    setup: Setup,
) -> tuple[str, ...]:
    """Every warning that applies to the setup."""
    found = (
        _pcie_warning(hardware, setup),
        _idle_gpus_warning(hardware, setup),
        _beyond_native_warning(model, setup),
        _uncapped_window_warning(model, runtime),
        _quantized_kv_warning(setup),
    )
    return tuple(warning for warning in found if warning)


def _pcie_warning(hardware: HardwareSpec, setup: Setup) -> str | None:
    """Tensor parallelism over plain PCIe."""
    if setup.tensor_parallel > 1 and hardware.interconnect == "pcie":
        return "tensor parallel over PCIe: all-reduce traffic slows decode"
    return None


def _idle_gpus_warning(hardware: HardwareSpec, setup: Setup) -> str | None:
    """GPUs the estimate does not use."""
    if setup.tensor_parallel < hardware.gpu_count:
        return (
            f"estimate uses {setup.tensor_parallel} of {hardware.gpu_count} GPUs; "
            "the others are not counted"
        )
    return None


def _beyond_native_warning(model: ModelSpec, setup: Setup) -> str | None:
    """A context longer than the model was trained for."""
    if setup.context > model.native_context:
        return (
            f"context {setup.context} exceeds the native context of {model.slug} "
            f"({model.native_context})"
        )
    return None


def _uncapped_window_warning(model: ModelSpec, runtime: RuntimeSpec) -> str | None:
    """Sliding-window layers that the runtime caches at full length."""
    if model.sliding_window_layers and not runtime.caps_sliding_window:
        return (
            f"{runtime.slug} caches the {model.sliding_window_layers} sliding-window layers "
            "at full context length"
        )
    return None


def _quantized_kv_warning(setup: Setup) -> str | None:
    """A 4-bit KV cache at long context, where quality is known to drop."""
    if setup.kv_dtype == "q4_0" and setup.context > QUANTIZED_KV_QUALITY_LIMIT:
        return "a q4_0 KV cache above 32K tokens is known to hurt recall and tool calls"
    return None


def speculative_caution(mtp_layers: int, speculative_decoding: bool) -> str | None:
    """A model with multi-token-prediction heads, or a plan with speculative decoding, can
    decode faster than the bandwidth bound: several tokens are accepted per weight read. The
    estimate is not multiplied by a guessed acceptance rate; it says so instead."""
    if mtp_layers and speculative_decoding:
        return (
            f"speculative decoding with the model's {mtp_layers} MTP layer"
            f"{'s' if mtp_layers != 1 else ''} is on: measured decode may exceed this "
            "bandwidth-bound estimate, by the share of draft tokens accepted"
        )
    if mtp_layers:
        return (
            f"the model has {mtp_layers} MTP layer{'s' if mtp_layers != 1 else ''}: with "
            "speculative decoding on, measured decode may exceed this bandwidth-bound estimate"
        )
    if speculative_decoding:
        return (
            "speculative decoding is on: measured decode may exceed this bandwidth-bound "
            "estimate, by the share of draft tokens accepted"
        )
    return None
