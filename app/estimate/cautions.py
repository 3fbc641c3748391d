"""Warnings about a serving setup that fits on paper but may disappoint."""

from __future__ import annotations

from app.estimate.inputs.checked_plan import Setup
from app.estimate.inputs.specs import HardwareSpec, ModelSpec, RuntimeSpec
from app.estimate.messages import Code, Message, message

QUANTIZED_KV_QUALITY_LIMIT = 32768


def setup_warnings(
    model: ModelSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    setup: Setup,
) -> tuple[Message, ...]:
    """Every warning that applies to the setup."""
    found = (
        _heads_assumed_warning(model, setup),
        _pcie_warning(hardware, setup),
        _idle_gpus_warning(hardware, setup),
        _layer_split_warning(setup),
        _beyond_native_warning(model, setup),
        _uncapped_window_warning(model, runtime),
        _quantized_kv_warning(setup),
    )
    return tuple(warning for warning in found if warning)


def _heads_assumed_warning(model: ModelSpec, setup: Setup) -> Message | None:
    """A tensor-parallel split over attention heads nobody gave: assumed valid, said so."""
    if setup.tensor_parallel > 1 and model.num_attention_heads is None:
        return message(Code.TP_HEADS_ASSUMED, size=setup.tensor_parallel)
    return None


def _pcie_warning(hardware: HardwareSpec, setup: Setup) -> Message | None:
    """Tensor parallelism over plain PCIe: all-reduce traffic slows decode."""
    if setup.tensor_parallel > 1 and hardware.interconnect == "pcie":
        return message(Code.PCIE_TENSOR_PARALLEL)
    return None


def _idle_gpus_warning(hardware: HardwareSpec, setup: Setup) -> Message | None:
    """GPUs the estimate does not use."""
    if setup.cards < hardware.gpu_count:
        return message(Code.IDLE_GPUS, used=setup.cards, count=hardware.gpu_count)
    return None


def _layer_split_warning(setup: Setup) -> Message | None:
    """Layers split over cards: memory adds up, speed does not (the cards take turns)."""
    if setup.layer_split > 1:
        return message(Code.LAYER_SPLIT_IN_TURN, count=setup.layer_split)
    return None


def _beyond_native_warning(model: ModelSpec, setup: Setup) -> Message | None:
    """A context longer than the model was trained for."""
    if setup.context > model.native_context:
        return message(
            Code.BEYOND_NATIVE_CONTEXT,
            context=setup.context,
            model=model.slug,
            native=model.native_context,
        )
    return None


def _uncapped_window_warning(model: ModelSpec, runtime: RuntimeSpec) -> Message | None:
    """Sliding-window layers that the runtime caches at full length."""
    if model.sliding_window_layers and not runtime.caps_sliding_window:
        return message(
            Code.UNCAPPED_SLIDING_WINDOW, runtime=runtime.slug, layers=model.sliding_window_layers
        )
    return None


def _quantized_kv_warning(setup: Setup) -> Message | None:
    """A 4-bit KV cache at long context, where quality is known to drop."""
    if setup.kv_dtype == "q4_0" and setup.context > QUANTIZED_KV_QUALITY_LIMIT:
        return message(Code.Q4_KV_LONG_CONTEXT, tokens=QUANTIZED_KV_QUALITY_LIMIT)
    return None


def speculative_caution(mtp_layers: int, speculative_decoding: bool) -> Message | None:
    """A model with multi-token-prediction heads, or a plan with speculative decoding, can
    decode faster than the bandwidth bound: several tokens are accepted per weight read. The
    estimate is not multiplied by a guessed acceptance rate; it says so instead."""
    if mtp_layers and speculative_decoding:
        return message(Code.SPECULATIVE_WITH_MTP, layers=mtp_layers)
    if mtp_layers:
        return message(Code.MTP_LAYERS, layers=mtp_layers)
    if speculative_decoding:
        return message(Code.SPECULATIVE_ON)
    return None
