"""The described path through `POST /api/estimate` and `servebook estimate`: bare numbers
fit on their weights with the KV cache marked unknown, several GPUs assume the split and
say so, a case that cannot be estimated has its own verdict, cards and quants are found
by the names people use, Llama 4's interleaved experts are sized as they are, and a config
without a context is answered at the context asked."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from app.asking.ask import parse_request, run_estimate
from app.cli import main
from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.recipes.estimate_answer import answer_out
from app.recipes.estimate_page import shape_description
from app.recipes.estimate_text import format_estimate
from app.resolve import RecipeService

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
NVFP4_NUMBERS = {"params_b": 32, "active_params_b": 3, "quant": "NVFP4"}


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def answer(client: TestClient, **body: object) -> dict:
    response = client.post("/api/estimate", json=body)
    assert response.status_code == 200, response.json()
    return response.json()


def codes(messages: list[dict]) -> list[str]:
    return [m["code"] for m in messages]


@pytest.mark.parametrize("runtime", [None, "vllm", "sglang"])
def test_bare_numbers_fit_on_their_weights_with_the_kv_cache_unknown(
    client: TestClient, runtime: str | None
) -> None:
    body = {"model": NVFP4_NUMBERS, "hardware": {"gpu": "RTX 5090"}, "context": 4096}
    data = answer(client, **body, **({"runtime": runtime} if runtime else {}))
    assert data["verdict"] == "experimental", data["reason"]
    assert data["required_gb_per_gpu"] <= data["usable_gb_per_gpu"]
    # 32B at NVFP4's 4.5 bits per weight: the weights alone are what is counted.
    assert data["weights_gb"] == pytest.approx(18.0, abs=0.01)
    assert data["kv_cache"] == "unknown" and data["max_context"] is None
    assert codes(data["warning_messages"])[0] == "kv_unknown"
    assert "assumed_kv_cache" in codes(data["assumed_messages"])
    assert data["decode_tokens_per_s"]["low"] > 0


@pytest.mark.parametrize(
    ("gpu", "count"), [("H100", 8), ("B200", 4), ("MI300X", 2), ("H20", 8), ("NVIDIA H20", 8)]
)
def test_several_gpus_assume_the_split_over_unknown_heads_and_say_so(
    client: TestClient, gpu: str, count: int
) -> None:
    model = {"params_b": 235, "active_params_b": 22, "quant": "FP8"}
    data = answer(client, model=model, hardware={"gpu": gpu, "count": count}, runtime="vllm")
    assert data["verdict"] == "experimental", data["reason"]
    assert data["tensor_parallel"] == count
    assert "tp_heads_assumed" in codes(data["warning_messages"])
    assert f"tensor parallel {count} assumed valid" in " ".join(data["warnings"])
    weights = data["memory"]["breakdown"]["weights"]["gb"]
    assert weights == pytest.approx(data["weights_gb"] / count, abs=0.01)


@pytest.mark.parametrize(("gpu", "card"), [("H20", "H20 96 GB"), ("H200", "H200 141 GB")])
def test_the_h20_is_answered_as_itself_not_as_the_h200(
    client: TestClient, gpu: str, card: str
) -> None:
    model = {"params_b": 235, "active_params_b": 22, "quant": "FP8"}
    data = answer(client, model=model, hardware={"gpu": gpu, "count": 8}, runtime="vllm")
    assert data["gpu"]["card"] == card and data["gpu"]["others"] == []


# A hybrid-attention shape without its linear-attention layers: no KV size can be made.
UNSIZABLE_SHAPE = {
    "name": "hybrid-model",
    "attention": "hybrid_linear",
    "model_type": "qwen3_next",
    "num_layers": "48",
    "num_attention_heads": "16",
    "num_kv_heads": "2",
    "head_dim": "256",
    "hidden_size": "2048",
    "vocab_size": "151936",
    "embedding_params": "622329856",
    "linear_params": "3000000000",
    "native_context": "262144",
    "quant": "BF16",
}


def test_a_case_that_cannot_be_estimated_has_its_own_verdict(settings: Settings) -> None:
    description = shape_description(UNSIZABLE_SHAPE)
    parsed = parse_request({"model": "shape", "hardware": "8x-h200-141gb", "runtime": "vllm"})
    engine = make_engine(settings)
    with make_sessionmaker(engine)() as session:
        found = run_estimate(RecipeService(session), parsed, settings, description)
        out = answer_out(found)
    engine.dispose()
    assert out["verdict"] == "cannot_estimate" and out["verdict_label"] == "cannot estimate"
    (reason,) = out["reason_messages"]
    assert reason["code"] == "cannot_estimate"
    assert reason["params"]["why"]["code"] == "kv_fields_missing"
    assert out["required_gb_per_gpu"] is None and out["decode_tokens_per_s"] is None
    text = format_estimate(out)
    assert "cannot estimate" in text and "exceeds memory" not in text
    assert "max context      not estimated" in text


def test_the_estimate_page_shows_a_case_that_cannot_be_estimated(client: TestClient) -> None:
    query = {**UNSIZABLE_SHAPE, "hardware": "8x-h200-141gb", "runtime": "vllm"}
    page = client.get("/estimate", params=query).text
    assert 'class="verdict verdict-cannot_estimate"' in page
    assert "exceeds memory" not in page and "not estimated" in page


@pytest.mark.parametrize("gpu", ["B300", "GB200", "GB300", "MI325X", "MI350X", "MI355X"])
def test_new_datacenter_cards_are_answered_by_name(client: TestClient, gpu: str) -> None:
    data = answer(
        client, model={"hf_config": config("qwen3-30b-a3b")}, hardware={"gpu": gpu, "count": 2}
    )
    assert data["verdict"] in ("experimental", "fits"), data["reason"]
    assert data["hardware_name"] == f"2x {gpu}" and data["gpu"]["others"] == []
    assert data["usable_gb_per_gpu"] > 150


def test_a_named_card_carries_its_bf16_figure_into_the_estimate(settings: Settings) -> None:
    body = {"model": NVFP4_NUMBERS, "hardware": {"gpu": "H100", "count": 2}, "runtime": "vllm"}
    engine = make_engine(settings)
    with make_sessionmaker(engine)() as session:
        found = run_estimate(RecipeService(session), parse_request(body), settings)
    engine.dispose()
    recipe = found.result.recipe
    assert recipe.hardware.bf16_tflops_per_gpu == 989
    # The step model's prefill and compute roofline run at that peak per card.
    assert recipe.estimate.speed_model.step.flops == 989e12


def test_a100_answers_with_the_80_gb_card_marked_assumed(client: TestClient) -> None:
    data = answer(client, model=NVFP4_NUMBERS, hardware={"gpu": "A100", "count": 2})
    assert data["gpu"] == {"name": "A100", "card": "A100 SXM 80 GB", "others": ["A100 SXM 40 GB"]}
    assert data["usable_gb_per_gpu"] == 72.0
    assumed = [m for m in data["assumed_messages"] if m["code"] == "gpu_size_assumed"]
    assert (
        assumed[0]["text"] == "A100 taken as the common A100 SXM 80 GB; also sold as A100 SXM 40 GB"
    )
    named = answer(client, model=NVFP4_NUMBERS, hardware={"gpu": "A100 40GB"})
    assert "gpu_size_assumed" not in codes(named["assumed_messages"])
    assert named["usable_gb_per_gpu"] == 36.0


@pytest.mark.parametrize(
    ("quant", "row"), [("INT4-AWQ", "AWQ"), ("AWQ-INT4", "AWQ"), ("W4A16", "GPTQ-INT4")]
)
def test_quant_names_people_write_are_accepted(client: TestClient, quant: str, row: str) -> None:
    model = {"params_b": 32, "quant": quant}
    data = answer(client, model=model, hardware={"gpu": "H100"}, runtime="vllm")
    assert data["described"]["quant"] == row and data["verdict"] == "experimental"


def test_maverick_in_bf16_on_eight_h200_needs_about_100_gb_per_gpu(client: TestClient) -> None:
    model = {"hf_config": config("llama-4-maverick-17b-128e-instruct"), "quant": "BF16"}
    data = answer(client, model=model, hardware={"gpu": "H200", "count": 8}, context=8192)
    assert data["described"]["params_total_b"] == pytest.approx(400, rel=0.01)
    assert data["weights_gb"] == pytest.approx(801, rel=0.01)
    assert data["memory"]["breakdown"]["weights"]["gb"] == pytest.approx(100, rel=0.01)
    assert data["verdict"] in ("experimental", "fits") and data["tensor_parallel"] == 8
    assert data["required_gb_per_gpu"] < 127


def test_a_config_without_a_context_is_answered_at_the_context_asked(client: TestClient) -> None:
    raw = {k: v for k, v in config("llama-3.1-8b").items() if k != "max_position_embeddings"}
    asked = answer(client, model={"hf_config": raw}, hardware="h100-80gb", context=32768)
    assert asked["context"] == 32768 and asked["max_context"] == 32768
    assumed = [m for m in asked["assumed_messages"] if m["code"] == "assumed_native_context"]
    assert assumed[0]["params"] == {"tokens": 32768}
    default = answer(client, model={"hf_config": raw}, hardware="h100-80gb")
    assert default["context"] == 4096 and "assumed_native_context" in codes(
        default["assumed_messages"]
    )


def invoke(*args: str):
    return CliRunner().invoke(main, ["estimate", *args])


@pytest.fixture
def cli(cli_database: Path) -> None:
    """The console script reads the test's database."""


def test_cli_answers_nvfp4_numbers_on_an_rtx_5090(cli: None) -> None:
    args = ["--params-b", "32", "--active-params-b", "3", "--quant", "NVFP4", "--gpu", "RTX 5090"]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "experimental" in result.output and "exceeds memory" not in result.output
    assert "KV cache         unknown" in result.output


def test_cli_sizes_maverick_and_says_what_a_name_assumed(cli: None) -> None:
    path = str(CONFIGS / "llama-4-maverick-17b-128e-instruct.json")
    result = invoke("--hf-config", path, "--gpu", "A100", "--gpu-count", "8", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["weights_gb"] == pytest.approx(801, rel=0.01)
    assert data["gpu"]["card"] == "A100 SXM 80 GB"
    text = invoke("--hf-config", path, "--gpu", "B300", "--gpu-count", "8", "--context", "8192")
    assert text.exit_code == 0, text.output
    assert "8x B300" in text.output and "exceeds memory" not in text.output
    several = invoke(
        "--params-b", "32", "--quant", "NVFP4", "--gpu", "H100", "--gpu-count", "4"
    ).output
    assert "tensor parallel 4 assumed valid" in several
