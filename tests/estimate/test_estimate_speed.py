"""Decode speed ranges, worked by hand from the calibrated constants.

Each expected figure is the llama.cpp step of the step model written out: bytes read per
token / (efficiency x bandwidth) + layers x per-layer overhead, times the long-context
factor, times the range bounds. The constants are read from the module (the accuracy
benchmark sets and checks their values); the arithmetic here is independent of it.
"""

from dataclasses import replace

import pytest
from estimate_specs import (
    DGX_SPARK,
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
from app.estimate.ranges.classes import range_class
from app.estimate.speed.coefficients import LINKS
from app.estimate.speed.llama_constants import (
    EFFICIENCY,
    LONG_CONTEXT_TOKENS,
    PER_LAYER_OVERHEAD_S,
    RUNTIME_FACTOR,
    platform_family,
)
from app.estimate.speed.step import decode_step
from app.i18n.messages import english

LLAMA_70B_AWQ = ArtifactSpec("llama-70b-awq", "safetensors", "awq", 4.16)
LLAMA_8B_WEIGHTS = 8.03e9 * 4.8944 / 8  # 4,912,754,000 bytes


def _decode(model, artifact, runtime, hardware, plan):
    return estimate(model, artifact, runtime, hardware, plan).decode_tokens_per_s


def _by_hand(bytes_per_token, bandwidth_gb_s, family, moe, layers, context, factor=1.0):
    """The decode range written out: llama.cpp's step at one request, and the range its
    class's checking measurements set."""
    seconds = bytes_per_token / (EFFICIENCY[(family, moe)] * bandwidth_gb_s * 1e9)
    seconds += PER_LAYER_OVERHEAD_S[family] * layers
    center = factor / (1 + context / LONG_CONTEXT_TOKENS) / seconds
    runtime = "mlx" if factor == RUNTIME_FACTOR["mlx-lm"] else "llama.cpp"
    found = range_class(runtime, family, 1, 1)
    return round(found.low * center, 1), round(found.high * center, 1)


def test_dense_decode_reads_all_weights_and_the_kv_cache_at_the_context():
    speed = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=4096))
    # 32 layers x 2 (K, V) x 8 KV heads x 128 dims x 2 bytes = 131,072 bytes per token.
    assert kv_cache_bytes(LLAMA_8B, 4096) == 131_072 * 4096
    bytes_per_token = LLAMA_8B_WEIGHTS + 131_072 * 4096
    assert (speed.low, speed.high) == _by_hand(bytes_per_token, 1008, "cuda", False, 32, 4096)
    assert speed.basis == Basis.ASSUMED
    assert "5.45 GB read per token" in english(speed.note)
    assert "reading weights takes" in english(speed.note)


def test_moe_decode_reads_active_weights_at_the_moe_efficiency():
    speed = _decode(MOE_320B, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, Plan(context=4096))
    bytes_per_token = 18e9 * 4.5 / 8 + kv_cache_bytes(MOE_320B, 4096)
    by_hand = _by_hand(bytes_per_token, 819, "metal", True, 64, 4096)
    assert (speed.low, speed.high) == pytest.approx(by_hand, abs=0.11)


def test_a_dense_twin_of_the_same_bytes_is_read_at_the_dense_efficiency():
    dense_twin = replace(MOE_320B, is_moe=False, params_total_b=18, params_active_b=18)
    plan = Plan(context=4096)
    moe = _decode(MOE_320B, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, plan)
    dense = _decode(dense_twin, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, plan)
    assert EFFICIENCY[("metal", False)] != EFFICIENCY[("metal", True)]
    bytes_per_token = 18e9 * 4.5 / 8 + kv_cache_bytes(MOE_320B, 4096)
    by_hand = _by_hand(bytes_per_token, 819, "metal", False, 64, 4096)
    assert (dense.low, dense.high) == pytest.approx(by_hand, abs=0.11)
    assert dense.high != moe.high


def test_long_context_slows_decode_by_the_kv_bytes_and_the_empirical_factor():
    short = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=1024))
    long = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=32768))
    # At 32K the KV cache (4.29 GB) is almost as large as the weights (4.91 GB).
    assert (long.low, long.high) == _by_hand(
        LLAMA_8B_WEIGHTS + 131_072 * 32768, 1008, "cuda", False, 32, 32768
    )
    assert long.high < short.high * LLAMA_8B_WEIGHTS / (LLAMA_8B_WEIGHTS + 131_072 * 32768) * 1.01


def test_concurrency_reports_the_slower_per_request_rate():
    one = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, H100, Plan(context=8192))
    eight = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, H100, Plan(context=8192, concurrency=8))
    bytes_per_token = LLAMA_8B_WEIGHTS + 8 * kv_cache_bytes(LLAMA_8B, 8192)
    assert (eight.low, eight.high) == _by_hand(bytes_per_token, 3350, "cuda", False, 32, 8192)
    assert eight.high < one.high


def test_tensor_parallel_pays_two_all_reduces_per_layer_and_pcie_pays_more():
    plan = Plan(context=4096)
    nvswitch = replace(
        H200_X8,
        gpu_count=4,
        memory_gb_per_gpu=48,
        usable_gb_per_gpu=43.2,
        bandwidth_gb_s_per_gpu=864,
    )
    fast = estimate(LLAMA_70B, LLAMA_70B_AWQ, VLLM, nvswitch, plan).speed_model
    slow = estimate(LLAMA_70B, LLAMA_70B_AWQ, VLLM, L40S_X4_PCIE, plan).speed_model
    fast_step, slow_step = decode_step(fast.step, 1, 4096), decode_step(slow.step, 1, 4096)
    # 80 layers x 2 all-reduces, each the link's latency plus 3/2 of an 8,192-wide message.
    message = 8192 * 2 * 2 * 3 / 4
    for step, link in ((fast_step, LINKS["nvswitch"]), (slow_step, LINKS["pcie"])):
        by_hand = 80 * 2 * (link.latency_s + message / link.bandwidth_b_s) * (1 + 4096 / 400_000)
        assert step.communication == pytest.approx(by_hand)
    assert slow_step.communication > 3 * fast_step.communication
    assert slow_step.weights == pytest.approx(fast_step.weights)


def test_rocm_and_vulkan_share_a_family_and_a_unified_cuda_gpu_has_its_own():
    assert platform_family(replace(RTX_4090, platform="rocm")) == "rocm/vulkan"
    assert platform_family(replace(RTX_4090, platform="vulkan")) == "rocm/vulkan"
    assert platform_family(RTX_4090) == "cuda"
    assert platform_family(DGX_SPARK) == "cuda-unified"
    assert platform_family(MAC_STUDIO_256) == "metal"


def test_the_note_states_what_the_range_held_on_its_checking_measurements():
    speed = _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=4096))
    found = range_class("llama.cpp", "cuda", 1, 1)
    if found.borrowed:
        assert f"only {found.checks} checking measurements for" in english(speed.note)
    else:
        assert f"of {found.checks} checking measurements for" in english(speed.note)
    assert found.low < 1 < found.high


def test_no_decode_range_without_bandwidth():
    hardware = replace(RTX_4090, bandwidth_gb_s_per_gpu=None)
    assert _decode(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, hardware, Plan(4096)) is None
