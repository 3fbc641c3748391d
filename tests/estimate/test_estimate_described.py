"""Models from their description: configs of known models give the published parameter
counts and hand-computed KV sizes; the quant table sizes files by tensor kind; GGUF headers
give exact bytes; bad descriptions are refused by field."""

import json
from pathlib import Path

import pytest

from app.asking.described import described_model
from app.asking.model_sources import from_gguf, from_hf_config, from_numbers
from app.catalog.specs import model_spec
from app.estimate import EstimateError, Plan, estimate, kv_cache_bytes
from app.estimate.inputs.attention import kv_unknown
from app.estimate.inputs.hf_config import read_hf_config
from app.estimate.inputs.quants import UnknownQuant, lookup_quant, quant_names
from app.estimate.inputs.specs import UNKNOWN_ATTENTION, ModelSpec
from app.estimate.memory.kv import kv_growth_bytes_per_token
from app.estimate.memory.weights import weights_by_tensor_kind
from tests.estimate.estimate_specs import LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090
from tests.estimate.gguf_files import write_tiny_llama_gguf

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def spec_of(name: str) -> ModelSpec:
    """The estimator's spec of a config, through the same transient model the API builds."""
    return model_spec(described_model(from_hf_config(config(name), "BF16")))


# (config, published total, published active or None where the convention differs)
PUBLISHED = [
    ("llama-3.1-8b", 8.03, None),
    ("qwen2.5-7b-instruct", 7.61, None),
    ("qwen3-30b-a3b", 30.5, 3.3),
    ("mixtral-8x7b-instruct-v0.1", 46.7, 12.9),
    ("deepseek-v3", 671, 37),
    ("gemma-3-27b-it", 27, None),
    ("gpt-oss-20b", 20.9, None),  # its 3.6B active leaves the embedding tables out
    ("qwen3-next-80b-a3b-instruct", 80, None),  # "3B active" is rounded down from 3.9
]


@pytest.mark.parametrize(("name", "total_b", "active_b"), PUBLISHED)
def test_parameter_counts_from_shapes_match_published_counts(name, total_b, active_b) -> None:
    shape = read_hf_config(config(name))
    assert shape.params_total / 1e9 == pytest.approx(total_b, rel=0.02)
    if active_b is not None:
        assert shape.params_active / 1e9 == pytest.approx(active_b, rel=0.02)
    assert shape.is_moe == (active_b is not None or name.startswith(("gpt-oss", "qwen3-next")))


# Hand-computed: bytes per token at bf16 = 2 bytes x elements per layer x layers that grow.
KV_GROWTH = {
    "llama-3.1-8b": 2 * (2 * 8 * 128) * 32,  # GQA: K and V, 8 KV heads x 128, 32 layers
    "qwen2.5-7b-instruct": 2 * (2 * 4 * 128) * 28,  # its sliding window is switched off
    "deepseek-v3": 2 * (512 + 64) * 61,  # MLA: latent 512 + rope key 64, 61 layers
    "gemma-3-27b-it": 2 * (2 * 16 * 128) * 10,  # past 1024 tokens only 10 of 62 layers grow
    "gpt-oss-20b": 2 * (2 * 8 * 64) * 12,  # 12 full-attention layers, 12 slide over 128
    "qwen3-next-80b-a3b-instruct": 2 * (2 * 2 * 256) * 12,  # 12 of 48 layers keep a cache
}


@pytest.mark.parametrize(("name", "expected"), sorted(KV_GROWTH.items()))
def test_kv_bytes_per_token_match_hand_computed_values(name: str, expected: int) -> None:
    assert kv_growth_bytes_per_token(spec_of(name)) == expected


def test_sliding_window_and_linear_state_sizes_at_a_context() -> None:
    gemma = spec_of("gemma-3-27b-it")
    per_layer_token = 2 * 16 * 128 * 2
    # 10 global layers hold 4096 tokens, 52 sliding layers hold their 1024-token window.
    assert kv_cache_bytes(gemma, 4096) == per_layer_token * (10 * 4096 + 52 * 1024)
    qwen_next = spec_of("qwen3-next-80b-a3b-instruct")
    # 36 Gated DeltaNet layers: 32 value heads x 128 x 128 fp32 state + conv 3 x 8192 x 2.
    state = 36 * (32 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 32 * 128) * 2)
    assert qwen_next.linear_state_bytes_per_seq == state == 77_266_944
    assert kv_cache_bytes(qwen_next, 1000) == 2 * 2 * 2 * 256 * 12 * 1000 + state


def test_quant_table_rows_have_sources_and_block_rates_are_exact() -> None:
    assert lookup_quant("q4_k").bits == 144 * 8 / 256
    assert lookup_quant("Q8_0").bits == pytest.approx(8.5, abs=0.001)
    assert lookup_quant("iq2_xxs").name == "IQ2_XXS"
    assert lookup_quant("mlx-4bit").bits == 4.5 and lookup_quant("MLX 8bit").format == "mlx"
    assert lookup_quant("UD-Q4_K_XL").basis == "assumed"
    assert lookup_quant("w4a16").name == "GPTQ-INT4" and lookup_quant("nf4").name == "BNB-NF4"
    for name in ("F16", "BF16", "FP8", "INT8", "AWQ", "NVFP4", "MXFP4", "Q3_K_M", "IQ4_XS"):
        row = lookup_quant(name)
        assert row.source and row.note and row.bits > 0, name
    assert len(quant_names()) > 60


def test_unknown_quant_lists_close_matches() -> None:
    with pytest.raises(UnknownQuant) as raised:
        lookup_quant("Q4_K_N")
    assert raised.value.field == "quant"
    assert "Q4_K_M" in raised.value.close_matches and "Q4_K_M" in raised.value.message


def test_moe_files_are_sized_by_tensor_kind() -> None:
    deepseek = read_hf_config(config("deepseek-v3"))
    # Published GGUF sizes: Q4_K_M 377 GB, Q8_0 712 GB (unsloth/DeepSeek-V3-GGUF).
    assert weights_by_tensor_kind(deepseek, lookup_quant("Q4_K_M")).value / 1e9 == (
        pytest.approx(377, rel=0.01)
    )
    assert weights_by_tensor_kind(deepseek, lookup_quant("Q8_0")).value / 1e9 == (
        pytest.approx(712, rel=0.01)
    )
    # gpt-oss-20b: MXFP4 experts, BF16 for the rest; its published checkpoint is 13.8 GB.
    gpt_oss = read_hf_config(config("gpt-oss-20b"))
    mxfp4 = weights_by_tensor_kind(gpt_oss, lookup_quant("MXFP4"))
    assert mxfp4.value / 1e9 == pytest.approx(13.8, rel=0.02)
    # Sized with one rate for every weight the file would come out 2.6 GB too small.
    assert mxfp4.value - gpt_oss.params_total * 4.25 / 8 > 2.5e9


def test_a_config_declaring_its_quantization_is_sized_by_it() -> None:
    assert from_hf_config(config("gpt-oss-20b")).quant.name == "MXFP4"
    assert from_hf_config(config("deepseek-v3")).quant.name == "FP8"
    assert from_hf_config(config("llama-3.1-8b")).quant.name == "BF16"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"num_hidden_layers": None}, "num_hidden_layers"),
        ({"num_hidden_layers": "32"}, "num_hidden_layers"),
        ({"vocab_size": 1.5}, "vocab_size"),
        ({"max_position_embeddings": "long"}, "max_position_embeddings"),
        ({"layer_types": ["full_attention"] * 3}, "layer_types"),
        ({"num_experts_per_tok": 9, "num_local_experts": 8}, "experts per token"),
    ],
)
def test_malformed_configs_are_refused_naming_the_field(change: dict, message: str) -> None:
    raw = config("llama-3.1-8b") | change
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(EstimateError) as raised:
        read_hf_config(raw)
    assert raised.value.field == "hf_config" and message in raised.value.message


def test_bare_numbers_leave_the_kv_cache_unknown_not_zero() -> None:
    described = from_numbers(32, 3, "Q4_K_M")
    model = described_model(described, context=8192)
    assert described.shape is None and model.attention == "unknown" and model.is_moe
    spec = ModelSpec("m", 32, 3, True, 8192, attention=model.attention)
    assert kv_unknown(spec)
    with pytest.raises(EstimateError) as raised:
        from_numbers(3, 32, "Q4_K_M")
    assert raised.value.field == "active_params_b"


def test_gguf_header_gives_exact_bytes_and_shapes(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    written = write_tiny_llama_gguf(path)
    described = from_gguf(path)
    assert described.weights is not None and described.weights.basis == "exact"
    assert described.weights.value == written["bytes"]
    assert described.params_total_b * 1e9 == written["elements"]
    assert described.quant.name == "Q8_0" and described.shape.num_kv_heads == 2
    assert described.shape.head_dim == 16 and described.shape.native_context == 2048
    not_gguf = tmp_path / "x.gguf"
    not_gguf.write_bytes(b"not a gguf file at all")
    with pytest.raises(EstimateError) as raised:
        from_gguf(not_gguf)
    assert raised.value.field == "gguf"


def test_weights_only_estimate_marks_the_kv_cache_assumed_and_unknown() -> None:
    weights_only = ModelSpec("8b", 8.03, 8.03, False, 4096, attention=UNKNOWN_ATTENTION)
    known = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=4096))
    answer = estimate(weights_only, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, Plan(context=4096))
    kv = answer.memory.kv_cache
    assert kv.value == 0 and kv.basis == "assumed" and kv.note[0].code == "kv_not_counted"
    assert answer.kv_bytes_per_token == 0 and answer.basis == "assumed"
    # The same weights: only the KV term differs, and the known model's is not zero.
    assert answer.weights_gb.value == known.weights_gb.value
    assert known.memory.kv_cache.value > 0 and known.memory.kv_cache.basis != "assumed"
