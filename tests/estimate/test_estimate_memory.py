"""Memory per GPU: weights, KV cache, prefill workspace and runtime reserve against usable."""

from dataclasses import replace

import pytest
from estimate_specs import (
    DEEPSEEK_V3,
    DEEPSEEK_V3_FP8,
    DGX_SPARK,
    GIB,
    GPT_OSS_120B,
    H100,
    H200_X8,
    L40S_X4_PCIE,
    LLAMA_8B,
    LLAMA_8B_Q4_K_M,
    LLAMA_70B,
    LLAMA_70B_BF16,
    LLAMA_CPP,
    MAC_STUDIO_256,
    MLX_LM,
    MOE_320B,
    MOE_320B_MLX_4BIT,
    MOE_320B_Q4_K_M,
    RTX_4090,
    SGLANG,
    VLLM,
    with_usable,
)

from app.estimate import ArtifactSpec, Basis, Plan, estimate, max_context
from app.estimate.memory.budget import sglang_reserved_mib
from app.estimate.messages import Code, message
from app.i18n.messages import english

MIB_IN_GB = 1024**2 / 1e9
LLAMA_70B_SAFETENSORS_Q4 = ArtifactSpec("llama-70b-awq", "safetensors", "awq", 4.16)
GPT_OSS_MXFP4 = ArtifactSpec("gpt-oss-120b", "safetensors", "mxfp4", 4.25, official=True)


def test_required_is_the_sum_of_the_parts_and_headroom_what_is_left():
    memory = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=8192)).memory
    parts = (memory.weights, memory.kv_cache, memory.prefill_workspace, memory.runtime_reserve)
    assert memory.required == pytest.approx(sum(part.value for part in parts))
    assert memory.headroom == pytest.approx(22.5 - memory.required)
    assert memory.fits


def test_llama_8b_q4_k_m_on_a_4090_at_8k():
    result = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=8192))
    assert result.weights_gb.value == pytest.approx(4.9128, abs=1e-3)
    assert result.kv_bytes_per_token == 131072
    assert result.memory.kv_cache.value == pytest.approx(GIB / 1e9)
    assert result.memory.runtime_reserve.value == pytest.approx(1.074)
    assert result.memory.prefill_workspace.value == pytest.approx(512 * 90112 / 1e9)


def test_kv_cache_scales_with_concurrency():
    single = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=8192))
    four = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(8192, concurrency=4))
    assert four.memory.kv_cache.value == pytest.approx(4 * single.memory.kv_cache.value)


def test_tensor_parallel_splits_weights_and_kv_heads():
    plan = Plan(context=32768)
    single = estimate(LLAMA_70B, LLAMA_70B_BF16, VLLM, replace(H200_X8, gpu_count=1), plan)
    split = estimate(LLAMA_70B, LLAMA_70B_BF16, VLLM, H200_X8, plan)
    assert split.tensor_parallel == 8
    assert split.memory.weights.value == pytest.approx(single.memory.weights.value / 8)
    assert split.kv_bytes_per_token_per_gpu == split.kv_bytes_per_token // 8
    assert split.memory.kv_cache.value == pytest.approx(single.memory.kv_cache.value / 8)


def test_mla_kv_is_replicated_on_every_gpu():
    result = estimate(DEEPSEEK_V3, DEEPSEEK_V3_FP8, VLLM, H200_X8, Plan(context=131072))
    assert result.kv_bytes_per_token == result.kv_bytes_per_token_per_gpu == 70272


def test_runtime_without_tensor_parallel_uses_one_gpu_and_says_so():
    result = estimate(
        LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, replace(RTX_4090, gpu_count=2), Plan(context=8192)
    )
    assert result.tensor_parallel == 1
    assert message(Code.IDLE_GPUS, used=1, count=2) in result.warnings


def test_sliding_window_growth_follows_the_runtime():
    plan = Plan(context=65536)
    capped = estimate(GPT_OSS_120B, GPT_OSS_MXFP4, VLLM, H100, plan)
    full = estimate(
        GPT_OSS_120B, GPT_OSS_MXFP4, replace(VLLM, caps_sliding_window=False), H100, plan
    )
    assert capped.kv_bytes_per_token == 36864
    assert full.kv_bytes_per_token == 73728
    assert Code.UNCAPPED_SLIDING_WINDOW in {warning.code for warning in full.warnings}
    assert Code.UNCAPPED_SLIDING_WINDOW not in {warning.code for warning in capped.warnings}


class TestVllmReserve:
    def test_nothing_beyond_usable_when_usable_is_already_the_fraction(self):
        plan = Plan(context=4096, cuda_graphs=False)
        reserve = estimate(LLAMA_70B, LLAMA_70B_BF16, VLLM, H200_X8, plan).memory.runtime_reserve
        assert reserve.value == pytest.approx(0.27)
        assert reserve.basis == Basis.ASSUMED

    def test_cuda_graphs_add_their_memory(self):
        reserve = estimate(
            LLAMA_70B, LLAMA_70B_BF16, VLLM, H200_X8, Plan(context=4096)
        ).memory.runtime_reserve
        assert reserve.value == pytest.approx(0.27 + 0.54)
        assert "CUDA graphs" in english(reserve.note)

    def test_the_free_fraction_counts_when_usable_is_the_whole_gpu(self):
        whole_gpu = with_usable(H100, 80)
        reserve = estimate(
            LLAMA_8B,
            ArtifactSpec("l8", "safetensors", "bf16", 16),
            VLLM,
            whole_gpu,
            Plan(context=4096, cuda_graphs=False),
        ).memory.runtime_reserve
        assert reserve.value == pytest.approx(8.0 + 0.27)


class TestSglangReserve:
    def test_h100_reserves_13440_mib(self):
        assert sglang_reserved_mib(80, prefill_tokens=8192, tensor_parallel=1) == 13440

    def test_rtx_4090_reserves_about_3_7_gib(self):
        assert sglang_reserved_mib(24, prefill_tokens=2048, tensor_parallel=1) == 3760

    def test_large_gpus_reserve_at_least_10_gib(self):
        assert sglang_reserved_mib(80, prefill_tokens=2048, tensor_parallel=1) == 10240

    def test_small_gpus_have_no_floor(self):
        assert sglang_reserved_mib(16, prefill_tokens=2048, tensor_parallel=1) == 3728

    def test_reserve_counts_only_what_usable_does_not_already_leave_out(self):
        memory = estimate(
            LLAMA_70B, LLAMA_70B_SAFETENSORS_Q4, SGLANG, H100, Plan(context=4096)
        ).memory
        assert memory.runtime_reserve.value == pytest.approx(13440 * MIB_IN_GB - 8)

    def test_prefill_workspace_is_part_of_the_reserve(self):
        memory = estimate(
            LLAMA_70B, LLAMA_70B_SAFETENSORS_Q4, SGLANG, H100, Plan(context=4096)
        ).memory
        assert memory.prefill_workspace.value == 0
        assert "SGLang" in english(memory.prefill_workspace.note)


class TestPrefillWorkspace:
    def test_scales_with_prefill_tokens(self):
        small = estimate(
            LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(4096, prefill_tokens=512)
        )
        large = estimate(
            LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(4096, prefill_tokens=2048)
        )
        ratio = large.memory.prefill_workspace.value / small.memory.prefill_workspace.value
        assert ratio == pytest.approx(4)

    def test_assumes_half_a_gb_without_a_hidden_size(self):
        model = replace(LLAMA_8B, hidden_size=None)
        workspace = estimate(
            model, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(4096)
        ).memory.prefill_workspace
        assert workspace.value == 0.5
        assert workspace.basis == Basis.ASSUMED


def test_a_320b_moe_at_4_5_bpw_exceeds_116_gb_but_fits_236_gb():
    plan = Plan(context=32768)
    spark = estimate(MOE_320B, MOE_320B_Q4_K_M, LLAMA_CPP, DGX_SPARK, plan)
    studio = estimate(MOE_320B, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, plan)
    assert spark.weights_gb.value == pytest.approx(180)
    assert not spark.memory.fits
    assert spark.max_context is None
    assert studio.memory.fits
    assert studio.memory.usable.value == 236


def test_unified_memory_uses_the_usable_figure_not_total_ram():
    usable = estimate(MOE_320B, MOE_320B_MLX_4BIT, MLX_LM, MAC_STUDIO_256, Plan(4096)).memory.usable
    assert usable.value == 236
    assert "unified" in english(usable.note)


class TestMaxContext:
    def test_is_a_multiple_of_256_that_fits_while_the_next_step_does_not(self):
        plan = Plan(context=131072)
        found = max_context(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, plan)
        assert found % 256 == 0
        assert estimate(
            LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=found)
        ).memory.fits
        assert not estimate(
            LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=found + 256)
        ).memory.fits

    def test_stops_at_the_native_context(self):
        result = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, H100, Plan(context=8192))
        assert result.max_context == LLAMA_8B.native_context

    def test_is_none_when_not_even_256_tokens_fit(self):
        assert max_context(MOE_320B, MOE_320B_Q4_K_M, LLAMA_CPP, DGX_SPARK, Plan(4096)) is None

    def test_shrinks_with_concurrency(self):
        one = max_context(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(4096))
        four = max_context(
            LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(4096, concurrency=4)
        )
        assert four < one

    def test_matches_the_estimate(self):
        plan = Plan(context=4096)
        result = estimate(LLAMA_70B, LLAMA_70B_BF16, VLLM, replace(H100, gpu_count=2), plan)
        assert result.max_context == max_context(
            LLAMA_70B, LLAMA_70B_BF16, VLLM, replace(H100, gpu_count=2), plan
        )


class TestBasis:
    def test_published_inputs_give_a_derived_estimate(self):
        result = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(4096))
        assert result.basis == Basis.DERIVED

    def test_an_assumed_usable_figure_weakens_the_estimate(self):
        hardware = replace(RTX_4090, basis={"usable_memory_gb": Basis.ASSUMED})
        result = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, hardware, Plan(4096))
        assert result.memory.usable.basis == Basis.ASSUMED
        assert result.basis == Basis.ASSUMED

    def test_an_assumed_layer_count_weakens_the_kv_cache(self):
        model = replace(LLAMA_8B, basis={"num_layers": Basis.ASSUMED})
        result = estimate(model, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(4096))
        assert result.memory.kv_cache.basis == Basis.ASSUMED
        assert result.basis == Basis.ASSUMED


class TestWarnings:
    def test_tensor_parallel_over_pcie(self):
        result = estimate(LLAMA_70B, LLAMA_70B_SAFETENSORS_Q4, VLLM, L40S_X4_PCIE, Plan(8192))
        assert message(Code.PCIE_TENSOR_PARALLEL) in result.warnings

    def test_none_over_nvswitch(self):
        result = estimate(LLAMA_70B, LLAMA_70B_BF16, VLLM, H200_X8, Plan(8192))
        assert result.warnings == ()

    def test_context_beyond_native(self):
        result = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, H100, Plan(context=262144))
        native = message(
            Code.BEYOND_NATIVE_CONTEXT,
            context=262144,
            model=LLAMA_8B.slug,
            native=LLAMA_8B.native_context,
        )
        assert native in result.warnings

    def test_q4_kv_cache_at_long_context(self):
        result = estimate(
            LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, H100, Plan(context=65536, kv_dtype="q4_0")
        )
        assert message(Code.Q4_KV_LONG_CONTEXT, tokens=32768) in result.warnings
