"""Every input the estimator refuses names the input at fault."""

from dataclasses import replace

import pytest
from estimate_specs import (
    DEEPSEEK_V3,
    H200_X8,
    LLAMA_8B,
    LLAMA_8B_Q4_K_M,
    LLAMA_70B,
    LLAMA_CPP,
    MAC_STUDIO_256,
    QWEN3_NEXT,
    RTX_4090,
    SGLANG,
    VLLM,
)

from app.estimate import ArtifactSpec, BudgetRule, EstimateError, Plan, estimate, max_context

BF16 = ArtifactSpec("bf16", "safetensors", "bf16", 16.0, official=True)
FOUR_GPUS = replace(H200_X8, gpu_count=4)
PLAN_4K = Plan(4096)


def _field_of(
    model=LLAMA_8B, artifact=LLAMA_8B_Q4_K_M, runtime=LLAMA_CPP, hardware=RTX_4090, plan=PLAN_4K
):
    with pytest.raises(EstimateError) as raised:
        estimate(model, artifact, runtime, hardware, plan)
    return raised.value


@pytest.mark.parametrize(
    ("field", "hardware"),
    [
        ("memory_gb_per_gpu", replace(RTX_4090, memory_gb_per_gpu=0)),
        ("memory_gb_per_gpu", replace(RTX_4090, memory_gb_per_gpu=-24)),
        ("usable_gb_per_gpu", replace(RTX_4090, usable_gb_per_gpu=0)),
        ("usable_gb_per_gpu", replace(RTX_4090, usable_gb_per_gpu=25)),
        ("gpu_count", replace(RTX_4090, gpu_count=0)),
        ("bandwidth_gb_s_per_gpu", replace(RTX_4090, bandwidth_gb_s_per_gpu=0)),
        ("bf16_tflops_per_gpu", replace(RTX_4090, bf16_tflops_per_gpu=-1)),
    ],
)
def test_bad_hardware(field, hardware):
    assert _field_of(hardware=hardware).field == field


@pytest.mark.parametrize(
    ("field", "plan"),
    [
        ("context", Plan(context=0)),
        ("concurrency", Plan(context=4096, concurrency=0)),
        ("prefill_tokens", Plan(context=4096, prefill_tokens=0)),
        ("tensor_parallel", Plan(context=4096, tensor_parallel=0)),
    ],
)
def test_bad_plan(field, plan):
    assert _field_of(plan=plan).field == field


def test_unknown_kv_dtype():
    assert _field_of(plan=Plan(4096, kv_dtype="int3")).field == "kv_dtype"


def test_kv_dtype_the_runtime_does_not_accept():
    error = _field_of(
        model=LLAMA_70B,
        artifact=BF16,
        runtime=VLLM,
        hardware=H200_X8,
        plan=Plan(4096, kv_dtype="q4_0"),
    )
    assert error.field == "kv_dtype"
    assert "runtime vllm accepts KV dtypes auto, fp8" in str(error)


def test_runtime_not_on_the_platform():
    error = _field_of(
        runtime=replace(LLAMA_CPP, platforms=frozenset({"cuda"})), hardware=MAC_STUDIO_256
    )
    assert error.field == "runtime"
    assert "llama.cpp server does not run on metal" in str(error)


def test_format_the_runtime_cannot_load():
    error = _field_of(runtime=VLLM)
    assert error.field == "format"
    assert "cannot load gguf" in str(error)


def test_tensor_parallel_must_divide_the_attention_heads():
    error = _field_of(
        model=LLAMA_70B,
        artifact=BF16,
        runtime=VLLM,
        hardware=FOUR_GPUS,
        plan=Plan(4096, tensor_parallel=3),
    )
    assert error.field == "tensor_parallel"
    assert "64 attention heads" in str(error)
    assert "1, 2, 4" in str(error)


def test_tensor_parallel_needs_a_runtime_that_splits():
    error = _field_of(hardware=replace(RTX_4090, gpu_count=2), plan=Plan(4096, tensor_parallel=2))
    assert error.field == "runtime"


def test_tensor_parallel_cannot_exceed_the_gpus():
    error = _field_of(
        model=LLAMA_70B,
        artifact=BF16,
        runtime=VLLM,
        hardware=FOUR_GPUS,
        plan=Plan(4096, tensor_parallel=8),
    )
    assert error.field == "tensor_parallel"


@pytest.mark.parametrize(
    "model",
    [
        replace(LLAMA_8B, num_layers=None),
        replace(LLAMA_8B, num_kv_heads=None),
        replace(LLAMA_8B, head_dim=None),
        replace(DEEPSEEK_V3, kv_lora_rank=None, is_moe=False, params_active_b=671),
        replace(DEEPSEEK_V3, qk_rope_head_dim=None, is_moe=False, params_active_b=671),
        replace(QWEN3_NEXT, full_attention_layers=None, is_moe=False, params_active_b=80),
        replace(LLAMA_8B, params_total_b=0),
        replace(LLAMA_8B, params_active_b=9),
        replace(LLAMA_8B, native_context=0),
    ],
)
def test_model_data_that_cannot_support_an_estimate(model):
    artifact = replace(LLAMA_8B_Q4_K_M, size_bytes=10**9)
    assert _field_of(model=model, artifact=artifact).field == "model"


@pytest.mark.parametrize(
    "budget",
    [
        BudgetRule("percent"),
        BudgetRule("vllm_fraction"),
        BudgetRule("vllm_fraction", fraction=1.5),
        BudgetRule("fixed_margin", margin_gb=-1),
    ],
)
def test_budget_rules_that_make_no_sense(budget):
    runtime = replace(VLLM, budget=budget)
    assert (
        _field_of(model=LLAMA_70B, artifact=BF16, runtime=runtime, hardware=H200_X8).field
        == "runtime"
    )


def test_max_context_checks_its_inputs_too():
    with pytest.raises(EstimateError) as raised:
        max_context(LLAMA_8B, LLAMA_8B_Q4_K_M, SGLANG, RTX_4090, Plan(4096))
    assert raised.value.field == "format"


def test_errors_are_value_errors_with_a_message():
    error = _field_of(hardware=replace(RTX_4090, gpu_count=0))
    assert isinstance(error, ValueError)
    assert "rtx-4090" in str(error)
