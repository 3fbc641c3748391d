"""Turn catalog rows into the estimator's plain specs."""

from typing import Any

import msgspec

from app.estimate import (
    ArtifactSpec,
    Basis,
    BudgetRule,
    HardwareSpec,
    ModelSpec,
    RuntimeSpec,
)
from app.estimate.messages import Code, Notes, message
from app.estimate.speed.coefficients import Coefficients
from app.models import Artifact, Hardware, LlmModel, Runtime


def basis_map(basis: dict[str, Any]) -> dict[str, Basis]:
    return {name: Basis(entry["basis"]) for name, entry in basis.items()}


def model_spec(model: LlmModel) -> ModelSpec:
    return ModelSpec(
        slug=model.slug,
        params_total_b=model.params_total_b,
        params_active_b=model.params_active_b,
        is_moe=model.is_moe,
        native_context=model.native_context,
        num_layers=model.num_layers,
        num_attention_heads=model.num_attention_heads,
        num_kv_heads=model.num_kv_heads,
        head_dim=model.head_dim,
        hidden_size=model.hidden_size,
        intermediate_size=model.intermediate_size,
        attention=model.attention,
        kv_lora_rank=model.kv_lora_rank,
        qk_rope_head_dim=model.qk_rope_head_dim,
        sliding_window=model.sliding_window,
        sliding_window_layers=model.sliding_window_layers,
        full_attention_layers=model.full_attention_layers,
        linear_state_bytes_per_seq=model.linear_state_bytes_per_seq,
        mtp_layers=model.mtp_layers or 0,
        experts=model.experts,
        active_experts=model.active_experts,
        moe_layers=model.moe_layers,
        basis=basis_map(model.basis),
    )


def recorded_size_note(recorded: str | Notes | None) -> Notes:
    """The note of a recorded size: the catalog's words for it, or a described model's own."""
    if isinstance(recorded, tuple):  # a described model's weights, read from its files
        return recorded
    if recorded:
        return (message(Code.WEIGHTS_RECORDED, note=recorded),)
    return (message(Code.WEIGHTS_RECORDED_FILE),)


def artifact_spec(artifact: Artifact) -> ArtifactSpec:
    size_basis = artifact.basis.get("size_bytes", {}).get("basis", "exact")
    size_note = recorded_size_note(artifact.basis.get("size_bytes", {}).get("note"))
    return ArtifactSpec(
        slug=artifact.slug,
        format=artifact.format,
        quant=artifact.quant,
        bits_per_weight=artifact.bits_per_weight,
        size_bytes=artifact.size_bytes,
        size_basis=Basis(size_basis),
        size_note=size_note,
        official=artifact.is_official,
    )


def runtime_spec(runtime: Runtime) -> RuntimeSpec:
    budget = runtime.budget
    return RuntimeSpec(
        slug=runtime.slug,
        platforms=frozenset(runtime.platforms),
        formats=frozenset(runtime.formats),
        budget=BudgetRule(
            kind=budget["kind"],
            fraction=budget.get("fraction"),
            margin_gb=budget.get("margin_gb") or 0.0,
        ),
        tensor_parallel=runtime.tensor_parallel,
        layer_split=runtime.split == "layer",
        kv_dtypes=tuple(runtime.kv_dtypes),
        caps_sliding_window=runtime.caps_sliding_window,
        cuda_graphs=runtime.cuda_graphs,
        default_prefill_tokens=runtime.default_prefill_tokens,
    )


def hardware_spec(hardware: Hardware) -> HardwareSpec:
    return HardwareSpec(
        slug=hardware.slug,
        platform=hardware.platform,
        unified_memory=hardware.unified_memory,
        gpu_count=hardware.gpu_count,
        memory_gb_per_gpu=hardware.memory_gb_per_gpu,
        usable_gb_per_gpu=hardware.usable_gb_per_gpu,
        bandwidth_gb_s_per_gpu=hardware.bandwidth_gb_s_per_gpu,
        bf16_tflops_per_gpu=hardware.bf16_tflops_per_gpu,
        interconnect=hardware.interconnect,
        basis=basis_map(hardware.basis),
        calibrated=calibrated_coefficients(hardware),
    )


def calibrated_coefficients(hardware: Hardware) -> dict[str, Coefficients]:
    """The newest coefficients fitted on this hardware, by runtime slug (none for
    hardware described by numbers, which has no stored profiles)."""
    if hardware.id is None:
        return {}
    return {
        profile.runtime: msgspec.convert(profile.coefficients, Coefficients)
        for profile in hardware.calibrations
    }
