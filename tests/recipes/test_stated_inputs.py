"""What `POST /api/estimate` and `POST /api/plan` state of a described model and hardware is
what the server reads: every quant and GPU name the schema lists is one the tables answer
(as the format and sizes it says), every real config.json beside the tests passes the
config's schema and reads, and what the schema refuses the server refuses by name.
(tests/api/test_openapi_contract.py generates requests from the schema for the rest.)"""

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.asking.gpu_table import lookup_gpu, match_gpu, stated_gpu_names
from app.asking.model_sources import safetensors_index_bytes
from app.asking.request import QUANT_FORMATS, STATED_QUANTS
from app.estimate.inputs.hf_config import read_hf_config
from app.estimate.inputs.hf_config_schema import config_fault
from app.estimate.inputs.quants import lookup_quant
from app.plan.text import format_plan

CONFIGS = Path(__file__).parents[1] / "data" / "hf_configs"
LLAMA = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
SMALL = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100}


def estimate(client: TestClient, model: Any, **rest: Any) -> Any:
    return client.post("/api/estimate", json={"model": model, "hardware": "h100-80gb", **rest})


def test_every_stated_quant_name_is_read_as_the_format_stated() -> None:
    assert len(STATED_QUANTS) > 70
    for name in STATED_QUANTS:
        assert lookup_quant(name).format == QUANT_FORMATS[name], name


def test_every_stated_gpu_name_is_read_in_every_size_stated() -> None:
    names = stated_gpu_names()
    assert {"H100", "A100", "B300", "Instinct MI355X", "GeForce RTX 4090"} <= set(names)
    for name, card in names.items():
        for size in card.sizes:
            assert match_gpu(name, size).entry.memory_gb == size, name
        if card.unified:
            with pytest.raises(ValueError, match="count must be 1"):
                lookup_gpu(name, 2)


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda path: path.stem)
def test_every_real_config_passes_its_schema_and_reads(path: Path) -> None:
    config = json.loads(path.read_text())
    for declared in (True, False):
        assert config_fault(config, declared) is None
    assert read_hf_config(config).num_layers > 0


# A field that needs others the config lacks keeps the schema, which states such rules in
# `x-together` only: a conflict between the fields (409). Any other fault breaks the schema.
@pytest.mark.parametrize(
    ("change", "named", "status"),
    [
        ({"num_local_experts": 8}, "num_experts_per_tok", 409),
        ({"kv_lora_rank": 512, "qk_rope_head_dim": 64}, "qk_nope_head_dim", 409),
        ({"full_attention_interval": 4}, "linear_num_key_heads", 409),
        ({"layer_types": "full_attention"}, "layer_types", 422),
        ({"head_dim": 0}, "head_dim", 422),
        ({"max_position_embeddings": 0}, "max_position_embeddings", 422),
        ({"architectures": {"0": "LlamaForCausalLM"}}, "architectures", 422),
        ({"mlp_only_layers": 3}, "mlp_only_layers", 422),
        ({"text_config": 5}, "text_config", 422),
        ({"quantization_config": {"quant_method": "bogus"}}, "quant_method", 422),
    ],
)
def test_a_config_the_estimate_cannot_read_is_refused_by_name(
    client: TestClient, change: dict[str, Any], named: str, status: int
) -> None:
    response = estimate(client, {"hf_config": {**SMALL, **change}})
    assert response.status_code == status, response.text
    assert named in response.json()["errors"]["model.hf_config"]


def test_a_config_refusal_is_worded_in_the_readers_language(client: TestClient) -> None:
    config = json.dumps({**SMALL, "num_local_experts": 8})
    page = client.get("/estimate", params={"config": config, "hardware": "h100-80gb", "lang": "ko"})
    assert page.status_code == 422
    assert "config에 num_experts_per_tok" in page.text


def test_a_named_quant_frees_the_configs_own_quantization(client: TestClient) -> None:
    config = {**LLAMA, "quantization_config": {"quant_method": "hqq", "nbits": 4}}
    assert estimate(client, {"hf_config": config}).status_code == 422
    named = estimate(client, {"hf_config": config, "quant": "Q4_K_M"})
    assert named.status_code == 200, named.text


@pytest.mark.parametrize(
    ("declared", "quant"),
    [
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}},
            },
            "FP8",
        ),
        ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, "NVFP4"),
        ({"quant_method": "gptq", "bits": 4}, "GPTQ-INT4"),
    ],
)
def test_a_configs_declared_quantization_is_read(
    client: TestClient, declared: dict[str, Any], quant: str
) -> None:
    config = {**LLAMA, "quantization_config": declared}
    response = estimate(client, {"hf_config": config})
    assert response.status_code == 200, response.text
    assert response.json()["described"]["quant"] == quant


def test_a_declared_quantization_it_cannot_read_is_refused_by_name(client: TestClient) -> None:
    """`config_groups` as a list reached `.values()` (a 500) before the schema was checked."""
    declared = {"quant_method": "compressed-tensors", "config_groups": [{"weights": {}}]}
    response = estimate(client, {"hf_config": {**LLAMA, "quantization_config": declared}})
    assert response.status_code == 422
    assert "quantization_config" in response.json()["errors"]["model.hf_config"]


def test_a_null_leaves_the_model_types_default(client: TestClient) -> None:
    """gemma3_text fills in vocab_size, as the schema says: a null there is none given, so
    the default stands (it was read as no vocab_size, a 422 for a body the schema admits)."""
    config = {**SMALL, "model_type": "gemma3_text", "vocab_size": None}
    response = estimate(client, {"hf_config": config, "quant": "BF16"})
    assert response.status_code == 200, response.text


def test_a_null_text_config_holds_none_of_the_counts(client: TestClient) -> None:
    config = {"text_config": None, "d_model": 17, "n_embd": 26}
    response = estimate(client, {"hf_config": config, "quant": "AWQ"})
    assert response.status_code == 422, response.text
    said = response.json()["error_messages"]["model.hf_config"]
    # refused by the schema, as the document says (not by the reader, past a valid body)
    assert said["code"] == "estimate.config_lacks" and "num_hidden_layers" in said["text"]


def test_a_null_in_text_config_leaves_the_top_levels_field(client: TestClient) -> None:
    config = {**SMALL, "text_config": {"vocab_size": None, "hidden_size": 128}}
    response = estimate(client, {"hf_config": config, "quant": "BF16"})
    assert response.status_code == 200, response.text


# A header whose tensors span no bytes keeps the schema (offsets are two counts each), which
# states the span in `x-spans-bytes` only: a conflict between its fields, 409.
@pytest.mark.parametrize(
    ("header", "named", "status"),
    [
        ({"w": {"dtype": "BF16", "shape": [4], "data_offsets": ["0", "8"]}}, "'w'", 422),
        ({"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8], "x": 1}}, "'w'", 422),
        (
            {
                "__metadata__": {"format": 1},
                "w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]},
            },
            "__metadata__",
            422,
        ),
        ({"w": {"dtype": "BF16", "shape": [4], "data_offsets": [8, 8]}}, "span no bytes", 409),
    ],
)
def test_a_safetensors_header_is_read_as_stated(
    client: TestClient, header: dict[str, Any], named: str, status: int
) -> None:
    response = estimate(client, {"safetensors_header": header})
    assert response.status_code == status, response.text
    assert named in response.json()["errors"]["model.safetensors_header"]


def test_a_safetensors_index_is_read_as_stated_and_the_hubs_for_its_total() -> None:
    index = {"metadata": {"total_size": 16, "format": "pt"}, "weight_map": {"w": "a.bin"}}
    with pytest.raises(ValueError, match="metadata"):
        safetensors_index_bytes(index)
    assert safetensors_index_bytes(index, stated=False) == 16
    with pytest.raises(ValueError, match="weight_map"):
        safetensors_index_bytes({"metadata": {"total_size": 16}, "weight_map": {"w": 1}})


def test_both_safetensors_files_at_once_are_refused(client: TestClient) -> None:
    header = {"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}
    index = {"metadata": {"total_size": 8}, "weight_map": {"w": "a.safetensors"}}
    response = estimate(client, {"safetensors_header": header, "safetensors_index": index})
    assert response.status_code == 422
    assert "one of them" in response.json()["errors"]["model"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": {"params_b": 1e-300, "quant": "Q4_K_M"}}, "model.params_b"),
        (
            {
                "model": "llama-3.1-8b-instruct",
                "memory_gb_per_gpu": 24,
                "bandwidth_gb_s_per_gpu": 1e-300,
            },
            "bandwidth_gb_s_per_gpu",
        ),
    ],
)
def test_figures_too_small_to_describe_anything_are_refused(
    client: TestClient, body: dict[str, Any], field: str
) -> None:
    """1e-300 billion parameters made a step take no time (a division by zero), and 1e-300
    GB/s an infinite one (NaN shares): 500s, before these bounds."""
    response = client.post("/api/estimate", json={"hardware": "custom", **body})
    assert response.status_code == 422, response.text
    assert field in response.json()["errors"]


def test_a_plan_says_the_least_first_token_target_and_refuses_below_it(
    client: TestClient,
) -> None:
    body = {"model": "llama-3.1-8b-instruct", "users": 4, "min_decode_tokens_per_s": 5}
    plan = client.post("/api/plan", json=body).json()
    least = plan["least_ttft"]
    assert least["ms"] > 0 and least["basis"] in {"estimated", "measured", "reported"}
    assert least["hardware"] in {option["hardware"] for option in plan["options"]}
    below = client.post("/api/plan", json={**body, "max_ttft_ms": least["ms"] * 0.99})
    # A target the schema accepts that no hardware weighed reaches: a conflict, 409.
    assert below.status_code == 409 and "max_ttft_ms" in below.json()["errors"]
    at = client.post("/api/plan", json={**body, "max_ttft_ms": least["ms"]})
    assert at.status_code == 200, at.text
    # The same figure on the page and in the CLI's text, as the 409 words it (whole ms).
    shown = f"{least['ms']:,.0f} ms"
    page = client.get("/plan", params={k: str(v) for k, v in body.items()})
    assert page.status_code == 200
    assert shown in page.text.split('id="plan-least-ttft"')[1].split("</p>")[0]
    assert least["hardware_name"] in page.text
    assert f"least first token {shown} ({least['basis']}, on" in format_plan(plan)
    assert f"at least {least['ms']:,.0f} ms" in below.json()["errors"]["max_ttft_ms"]


def test_a_plans_prices_are_bounded_and_keyed_by_catalog_hardware(client: TestClient) -> None:
    body = {"model": "llama-3.1-8b-instruct", "users": 4, "min_decode_tokens_per_s": 5}
    dear = client.post("/api/plan", json={**body, "price_per_gpu_hour": 2_000_000})
    assert dear.status_code == 422 and "1,000,000" in dear.json()["errors"]["price_per_gpu_hour"]
    keyed = client.post("/api/plan", json={**body, "price_per_gpu_hour": {"h100-80gb": 2.5}})
    assert keyed.status_code == 200, keyed.text
    schema = client.get("/openapi.json").json()["paths"]["/api/plan"]["post"]
    price = schema["requestBody"]["content"]["application/json"]["schema"]["properties"][
        "price_per_gpu_hour"
    ]
    keyed_branch = next(b for b in price["anyOf"] if b.get("type") == "object")
    assert "h100-80gb" in keyed_branch["propertyNames"]["enum"]
