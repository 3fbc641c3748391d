"""Input checks, and the plan with every default resolved."""

from __future__ import annotations

import msgspec

from app.estimate.errors import EstimateError
from app.estimate.inputs.attention import check_attention_data, kv_dtype_bytes
from app.estimate.inputs.specs import (
    ArtifactSpec,
    HardwareSpec,
    ModelSpec,
    Plan,
    RuntimeSpec,
    Serving,
)
from app.estimate.messages import Code, message


class Setup(msgspec.Struct, frozen=True):
    """A plan with every default resolved against the runtime and the hardware."""

    context: int
    concurrency: int
    kv_dtype: str
    prefill_tokens: int
    tensor_parallel: int
    cuda_graphs: bool
    caps_sliding_window: bool
    memory_fraction: float | None = None
    # Cards the layers are spread over (a layer split, see `resolve_layer_split`); 1 when
    # the model sits on one card or is split by tensors.
    layer_split: int = 1

    @property
    def cards(self) -> int:
        """Cards the plan uses: its tensor-parallel size or its layer split."""
        return max(self.tensor_parallel, self.layer_split)


def resolve_setup(serving: Serving) -> Setup:
    """Check every input and fill in the plan's defaults."""
    check_model(serving.model)
    check_hardware(serving.hardware)
    return resolve_checked_setup(serving)


def resolve_checked_setup(serving: Serving) -> Setup:
    """`resolve_setup` for a model and hardware already checked."""
    model, artifact, runtime, hardware, plan = serving
    check_plan(plan)
    check_runtime_runs(runtime, hardware, artifact)
    check_kv_dtype(runtime, plan.kv_dtype)
    tensor_parallel = resolve_tensor_parallel(plan, runtime, hardware, model)
    check_tensor_parallel(model, runtime, hardware, tensor_parallel)
    return Setup(
        context=plan.context,
        concurrency=plan.concurrency,
        kv_dtype=plan.kv_dtype,
        prefill_tokens=_resolve_prefill_tokens(plan, runtime),
        tensor_parallel=tensor_parallel,
        cuda_graphs=runtime.cuda_graphs if plan.cuda_graphs is None else plan.cuda_graphs,
        caps_sliding_window=runtime.caps_sliding_window,
        memory_fraction=plan.memory_fraction,
        layer_split=resolve_layer_split(runtime, hardware, tensor_parallel),
    )


def resolve_layer_split(runtime: RuntimeSpec, hardware: HardwareSpec, tensor_parallel: int) -> int:
    """Cards a layer-splitting runtime spreads the model over: every card of a machine with
    several discrete cards, as llama.cpp does by default (`--split-mode layer`, the layers
    shared in proportion to each card's free memory: evenly on identical cards)."""
    if (
        not runtime.layer_split
        or tensor_parallel > 1
        or hardware.unified_memory
        or hardware.gpu_count < 2
    ):
        return 1
    return hardware.gpu_count


def check_model(model: ModelSpec) -> None:
    """Refuse parameter counts and contexts that cannot be right, and unsizable attention."""
    if model.params_total_b <= 0:
        raise _model_error(model, "params_total_b", "must be positive")
    if not 0 < model.params_active_b <= model.params_total_b:
        raise _model_error(model, "params_active_b", "must be in (0, total]")
    if model.native_context < 1:
        raise _model_error(model, "native_context", "must be positive")
    check_attention_data(model)


def _model_error(model: ModelSpec, name: str, rule: str) -> EstimateError:
    reason = message(Code.MODEL_COUNTS_INVALID, model=model.slug, field=name)
    return EstimateError("model", f"{model.slug}: {name} {rule}", reason)


def check_hardware(hardware: HardwareSpec) -> None:
    """Refuse memory, count and speed figures that cannot be right."""
    if hardware.memory_gb_per_gpu <= 0:
        raise EstimateError("memory_gb_per_gpu", f"{hardware.slug}: memory must be positive")
    if not 0 < hardware.usable_gb_per_gpu <= hardware.memory_gb_per_gpu:
        raise EstimateError(
            "usable_gb_per_gpu",
            f"{hardware.slug}: usable memory must be positive and no more than the memory per GPU",
        )
    if hardware.gpu_count < 1:
        raise EstimateError("gpu_count", f"{hardware.slug}: gpu_count must be at least 1")
    for name in ("bandwidth_gb_s_per_gpu", "bf16_tflops_per_gpu"):
        value = getattr(hardware, name)
        if value is not None and value <= 0:
            raise EstimateError(name, f"{hardware.slug}: {name} must be positive when given")


def check_plan(plan: Plan) -> None:
    """Refuse plan counts below one."""
    for name in ("context", "concurrency", "prefill_tokens", "tensor_parallel"):
        value = getattr(plan, name)
        if value is not None and value < 1:
            raise EstimateError(name, f"{name} must be at least 1, got {value}")
    fraction = plan.memory_fraction
    if fraction is not None and not 0 < fraction <= 1:
        raise EstimateError("memory_fraction", f"memory_fraction must be in (0, 1], got {fraction}")


def check_runtime_runs(
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    artifact: ArtifactSpec,
) -> None:
    """Refuse a runtime that does not run on the hardware or cannot load the artifact."""
    if hardware.platform not in runtime.platforms:
        runs_on = ", ".join(sorted(runtime.platforms))
        raise EstimateError(
            "runtime", f"{runtime.slug} does not run on {hardware.platform} (runs on {runs_on})"
        )
    if artifact.format not in runtime.formats:
        loads = ", ".join(sorted(runtime.formats))
        raise EstimateError(
            "format", f"{runtime.slug} cannot load {artifact.format} files (loads {loads})"
        )


def check_kv_dtype(runtime: RuntimeSpec, kv_dtype: str) -> None:
    """Refuse a KV dtype that is unknown or that the runtime does not accept."""
    kv_dtype_bytes(kv_dtype)
    if kv_dtype not in runtime.kv_dtypes:
        accepted = ", ".join(runtime.kv_dtypes)
        raise EstimateError(
            "kv_dtype",
            f"runtime {runtime.slug} accepts KV dtypes {accepted}, not {kv_dtype}",
            message(Code.KV_DTYPE_NOT_ACCEPTED, runtime=runtime.slug, kv_dtype=kv_dtype),
        )


def resolve_tensor_parallel(
    plan: Plan, runtime: RuntimeSpec, hardware: HardwareSpec, model: ModelSpec
) -> int:
    """Tensor-parallel size: the plan's; else, when the runtime can split, the most GPUs
    whose count divides the attention heads (when the heads are unknown, see
    `assumed_tensor_parallel`: the split is assumed valid, and the warnings say so); else
    one."""
    if plan.tensor_parallel is not None:
        return plan.tensor_parallel
    if not runtime.tensor_parallel:
        return 1
    heads = model.num_attention_heads
    if heads is None:
        return assumed_tensor_parallel(hardware.gpu_count)
    return max(size for size in range(1, hardware.gpu_count + 1) if heads % size == 0)


def assumed_tensor_parallel(gpu_count: int) -> int:
    """The split assumed over attention heads nobody gave: the largest power of two the
    cards allow. Published models' head counts (32, 40, 64, 96, 128 ...) divide by 2, 4 and
    8 but seldom by 3, 5 or 6, so six cards are assumed to split four ways."""
    return 1 << (gpu_count.bit_length() - 1)


def check_tensor_parallel(
    model: ModelSpec,
    runtime: RuntimeSpec,
    hardware: HardwareSpec,
    tensor_parallel: int,
) -> None:
    """Refuse a tensor-parallel size the hardware, runtime or model cannot support."""
    if tensor_parallel > hardware.gpu_count:
        raise EstimateError(
            "tensor_parallel",
            f"tensor parallel {tensor_parallel} needs "
            f"{tensor_parallel} GPUs; {hardware.slug} has "
            f"{hardware.gpu_count}",
            message(
                Code.TOO_FEW_GPUS,
                size=tensor_parallel,
                hardware=hardware.slug,
                count=hardware.gpu_count,
            ),
        )
    if tensor_parallel == 1:
        return
    if not runtime.tensor_parallel:
        raise EstimateError(
            "runtime",
            f"{runtime.slug} cannot split a model across GPUs by tensor parallelism",
            message(Code.NO_TENSOR_PARALLEL, runtime=runtime.slug),
        )
    _check_heads_divisible(model, hardware, tensor_parallel)


def _check_heads_divisible(model: ModelSpec, hardware: HardwareSpec, tensor_parallel: int) -> None:
    """Refuse a tensor-parallel size that does not divide the attention heads. Heads that
    are unknown (a model described by its parameter counts) cannot refuse it: the split is
    assumed valid, as it is for every published model on 2, 4 or 8 cards, and the
    estimate's warnings say it was assumed (see `cautions.py`)."""
    heads = model.num_attention_heads
    if heads is None:
        return
    if heads % tensor_parallel:
        valid = [size for size in range(1, hardware.gpu_count + 1) if heads % size == 0]
        sizes = ", ".join(map(str, valid))
        raise EstimateError(
            "tensor_parallel",
            f"tensor parallel {tensor_parallel} does not divide "
            f"the {heads} attention heads of {model.slug}; "
            f"valid sizes on {hardware.gpu_count} GPUs: {sizes}",
            message(Code.HEADS_NOT_DIVISIBLE, size=tensor_parallel, heads=heads, model=model.slug),
        )


def _resolve_prefill_tokens(plan: Plan, runtime: RuntimeSpec) -> int:
    """Prefill chunk size: the plan's, else the runtime's default."""
    tokens = runtime.default_prefill_tokens if plan.prefill_tokens is None else plan.prefill_tokens
    if tokens < 1:
        raise EstimateError("runtime", f"{runtime.slug}: default_prefill_tokens must be positive")
    return tokens
