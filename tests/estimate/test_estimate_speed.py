"""Decode and prefill speed ranges."""

from dataclasses import replace

import pytest
from estimate_specs import (
    H100,
    H200_X8,
    L40S_X4_PCIE,
    LLAMA_8B,
    LLAMA_8B_Q4_K_M,
    LLAMA_70B,
    LLAMA_CPP,
    MAC_STUDIO_256,
    MLX_LM,
    MOE_320B,
    MOE_320B_MLX_4BIT,
    RTX_4090,
    VLLM,
)

from app.estimate import ArtifactSpec, Basis, Plan, estimate, kv_cache_bytes

LLAMA_70B_AWQ = ArtifactSpec("llama-70b-awq", "safetensors", "awq", 4.16)


def _decode(model, artifact, runtime, hardware, plan):
    return estimate(model, artifact, runtime, hardware, plan).decode_tokens_per_s


def test_dense_decode_uses_all_weights_and_the_dense_band():
    speed = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=4096))
    bytes_per_token = 8.03e9 * 4.8944 / 8 + kv_cache_bytes(LLAMA_8B, 4096)
    assert speed.low == round(0.51 * 1008e9 / bytes_per_token, 1)
    assert speed.high == round(0.73 * 1008e9 / bytes_per_token, 1)
    assert speed.basis == Basis.ASSUMED
    assert "0.51-0.73" in speed.note


def test_moe_decode_uses_active_params_and_the_moe_band():
    speed = _decode(MOE_320B, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, Plan(context=4096))
    bytes_per_token = 18e9 * 4.5 / 8 + kv_cache_bytes(MOE_320B, 4096)
    assert speed.low == round(0.21 * 819e9 / bytes_per_token, 1)
    assert speed.high == round(0.33 * 819e9 / bytes_per_token, 1)
    assert "MoE" in speed.note


def test_dense_and_moe_bands_differ_for_the_same_bytes():
    dense_twin = replace(MOE_320B, is_moe=False, params_total_b=18, params_active_b=18)
    plan = Plan(context=4096)
    moe = _decode(MOE_320B, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, plan)
    dense = _decode(dense_twin, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, plan)
    assert dense.low / moe.low == pytest.approx(0.51 / 0.21, rel=1e-2)
    assert dense.high / moe.high == pytest.approx(0.73 / 0.33, rel=1e-2)


def test_longer_context_reads_more_kv_and_decodes_slower():
    short = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=1024))
    long = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=32768))
    assert long.high < short.high


def test_concurrency_reports_the_slower_per_request_rate():
    one = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, H100, Plan(context=8192))
    eight = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, H100, Plan(context=8192, concurrency=8))
    bytes_per_token = 8.03e9 * 4.8944 / 8 + 8 * kv_cache_bytes(LLAMA_8B, 8192)
    assert eight.high == round(0.73 * 3350e9 / bytes_per_token, 1)
    assert eight.high < one.high


def test_tensor_parallel_costs_ten_percent_and_pcie_twenty_more():
    plan = Plan(context=4096)
    nvswitch = replace(
        H200_X8,
        gpu_count=4,
        memory_gb_per_gpu=48,
        usable_gb_per_gpu=43.2,
        bandwidth_gb_s_per_gpu=864,
    )
    fast = _decode(LLAMA_70B, LLAMA_70B_AWQ, VLLM, nvswitch, plan)
    slow = _decode(LLAMA_70B, LLAMA_70B_AWQ, VLLM, L40S_X4_PCIE, plan)
    bytes_per_gpu = 70.55e9 * 4.16 / 8 / 4 + kv_cache_bytes(LLAMA_70B, 4096, tensor_parallel=4)
    assert fast.high == round(0.73 * 864e9 / bytes_per_gpu * 0.9, 1)
    assert slow.high == round(0.73 * 864e9 / bytes_per_gpu * 0.9 * 0.8, 1)


def test_no_decode_range_without_bandwidth():
    hardware = replace(RTX_4090, bandwidth_gb_s_per_gpu=None)
    assert _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, hardware, Plan(4096)) is None


def test_prefill_from_bf16_compute_on_active_params():
    speed = estimate(
        MOE_320B, ArtifactSpec("m", "safetensors", "bf16", 16), VLLM, H200_X8, Plan(4096)
    ).prefill_tokens_per_s
    assert speed.low == round(8 * 989e12 * 0.3 / (2 * 18e9), 1)
    assert speed.high == round(8 * 989e12 * 0.5 / (2 * 18e9), 1)


def test_dense_prefill_uses_total_params():
    speed = estimate(
        LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(4096)
    ).prefill_tokens_per_s
    assert speed.high == round(165.2e12 * 0.5 / (2 * 8.03e9), 1)


def test_no_prefill_range_without_compute_figure():
    result = estimate(MOE_320B, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, Plan(4096))
    assert result.prefill_tokens_per_s is None
