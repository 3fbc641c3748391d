"""KV cache sizes against figures worked out from published configs."""

from dataclasses import replace

import pytest
from estimate_specs import DEEPSEEK_V3, GIB, GLM_45, GPT_OSS_120B, LLAMA_8B, LLAMA_70B, QWEN3_NEXT

from app.estimate import EstimateError, kv_cache_bytes
from app.estimate.memory.kv import kv_growth_bytes_per_token


def test_llama_8b_is_128_kib_per_token_and_1_gib_at_8k():
    assert kv_cache_bytes(LLAMA_8B, 1) == 131072
    assert kv_cache_bytes(LLAMA_8B, 8192) == 1 * GIB


def test_llama_70b_is_320_kib_per_token():
    assert kv_cache_bytes(LLAMA_70B, 1) == 327680


def test_glm_45_is_368_kib_per_token():
    assert kv_cache_bytes(GLM_45, 1) == 376832


def test_deepseek_v3_mla_caches_the_latent_only():
    assert kv_cache_bytes(DEEPSEEK_V3, 1) == 70272  # 61 x (512 + 64) x 2, ~68.6 KiB


def test_mla_is_replicated_not_split_under_tensor_parallel():
    assert kv_cache_bytes(DEEPSEEK_V3, 1024, tensor_parallel=8) == kv_cache_bytes(DEEPSEEK_V3, 1024)


def test_gqa_splits_kv_heads_across_gpus():
    assert kv_cache_bytes(LLAMA_70B, 1, tensor_parallel=2) == 327680 // 2
    assert kv_cache_bytes(LLAMA_70B, 1, tensor_parallel=8) == 327680 // 8


def test_kv_heads_per_gpu_never_drop_below_one():
    one_head_per_gpu = kv_cache_bytes(LLAMA_70B, 1, tensor_parallel=8)
    assert kv_cache_bytes(LLAMA_70B, 1, tensor_parallel=16) == one_head_per_gpu


def test_kv_heads_per_gpu_round_up():
    three_heads = replace(LLAMA_8B, num_kv_heads=3)
    assert kv_cache_bytes(three_heads, 1, tensor_parallel=2) == 32 * 2 * 2 * 128 * 2


def test_gpt_oss_growth_is_36_kib_with_capped_windows_and_72_without():
    assert kv_growth_bytes_per_token(GPT_OSS_120B, caps_sliding_window=True) == 36864
    assert kv_growth_bytes_per_token(GPT_OSS_120B, caps_sliding_window=False) == 73728


def test_gpt_oss_cache_within_the_window_is_the_same_either_way():
    capped = kv_cache_bytes(GPT_OSS_120B, 128, caps_sliding_window=True)
    assert capped == kv_cache_bytes(GPT_OSS_120B, 128, caps_sliding_window=False)
    assert capped == 128 * 73728


def test_gpt_oss_sliding_layers_stop_at_the_window():
    full_layers = 18 * 2 * 8 * 64 * 2
    sliding_layers = 18 * 2 * 8 * 64 * 2 * 128
    assert kv_cache_bytes(GPT_OSS_120B, 4096) == 4096 * full_layers + sliding_layers


def test_hybrid_linear_grows_only_on_full_attention_layers():
    state = QWEN3_NEXT.linear_state_bytes_per_seq
    assert kv_growth_bytes_per_token(QWEN3_NEXT) == 24576  # 2 x 12 x 2 x 256 x 2
    assert kv_cache_bytes(QWEN3_NEXT, 1000) == 1000 * 24576 + state


def test_hybrid_linear_state_is_split_under_tensor_parallel():
    state = QWEN3_NEXT.linear_state_bytes_per_seq
    assert kv_cache_bytes(QWEN3_NEXT, 1000, tensor_parallel=2) == 1000 * 12288 + state // 2


@pytest.mark.parametrize(
    ("kv_dtype", "per_token"),
    [
        ("auto", 131072),
        ("bf16", 131072),
        ("fp16", 131072),
        ("fp8", 65536),
        ("fp8_e4m3", 65536),
        ("fp8_e5m2", 65536),
        ("q8_0", 69632),
        ("q4_0", 36864),
    ],
)
def test_kv_dtype_bytes(kv_dtype, per_token):
    assert kv_cache_bytes(LLAMA_8B, 1, kv_dtype=kv_dtype) == per_token


@pytest.mark.parametrize(
    ("model", "missing"),
    [
        (replace(LLAMA_8B, num_layers=None), "num_layers"),
        (replace(LLAMA_8B, num_kv_heads=None), "num_kv_heads"),
        (replace(LLAMA_8B, head_dim=None), "head_dim"),
        (replace(DEEPSEEK_V3, kv_lora_rank=None), "kv_lora_rank"),
        (replace(DEEPSEEK_V3, qk_rope_head_dim=None), "qk_rope_head_dim"),
        (replace(QWEN3_NEXT, full_attention_layers=None), "full_attention_layers"),
        (replace(QWEN3_NEXT, linear_state_bytes_per_seq=None), "linear_state_bytes_per_seq"),
        (replace(GPT_OSS_120B, sliding_window=None), "sliding_window"),
    ],
)
def test_refuses_to_guess_missing_attention_data(model, missing):
    with pytest.raises(EstimateError, match=missing) as raised:
        kv_cache_bytes(model, 1024)
    assert raised.value.field == "model"


@pytest.mark.parametrize(
    "model",
    [
        replace(LLAMA_8B, attention="sparse"),
        replace(LLAMA_8B, head_dim=0),
        replace(GPT_OSS_120B, sliding_window_layers=40),
        replace(QWEN3_NEXT, full_attention_layers=60),
    ],
)
def test_refuses_contradictory_attention_data(model):
    with pytest.raises(EstimateError) as raised:
        kv_cache_bytes(model, 1024)
    assert raised.value.field == "model"


def test_refuses_an_unknown_kv_dtype():
    with pytest.raises(EstimateError) as raised:
        kv_cache_bytes(LLAMA_8B, 1024, kv_dtype="int3")
    assert raised.value.field == "kv_dtype"


@pytest.mark.parametrize(
    ("field", "kwargs"), [("context", {"context": 0}), ("tensor_parallel", {"tensor_parallel": 0})]
)
def test_refuses_counts_below_one(field, kwargs):
    arguments = {"context": 1024, **kwargs}
    with pytest.raises(EstimateError) as raised:
        kv_cache_bytes(LLAMA_8B, **arguments)
    assert raised.value.field == field
