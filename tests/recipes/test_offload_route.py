"""The offload route and the speculative caution on every surface that shows a recipe."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.resolve.commands import Command, with_offload

DETAIL = "/api/models/{model}/hardware/{hardware}/profiles/balanced"


def test_a_model_too_big_for_one_card_runs_with_offload_on_a_discrete_gpu(
    client: TestClient,
) -> None:
    data = client.get(DETAIL.format(model="gpt-oss-120b", hardware="rtx-4090-24gb")).json()
    assert data["verdict"] == "fits_with_offload"
    assert data["verdict_label"] == "fits with offload to system memory"
    assert "GB in system memory (experts of" in data["reason"]
    memory = data["memory"]
    assert memory["basis"] == "estimated"
    assert memory["required_gb_per_gpu"] <= memory["usable_gb_per_gpu"]
    # The breakdown holds the GPU's share of the weights, so its parts add up.
    parts = sum(part["gb"] for part in memory["breakdown"].values())
    assert round(parts, 1) == memory["required_gb_per_gpu"]
    assert "GB of it in system memory" in memory["breakdown"]["weights"]["note"]
    speed = data["token_generation"]
    assert speed["basis"] == "estimated" and 0 < speed["low"] < speed["high"]
    assert "from system memory" in speed["note"]
    assert any("system memory" in w for w in data["warnings"])
    page = client.get("/models/gpt-oss-120b/hardware/rtx-4090-24gb/profiles/balanced").text
    verdict = BeautifulSoup(page, "html.parser").select_one("#verdict .verdict")
    assert verdict.text.strip() == "fits with offload to system memory"


def test_unified_memory_never_offloads(client: TestClient) -> None:
    data = client.get(DETAIL.format(model="qwen3-235b-a22b", hardware="dgx-spark-128gb")).json()
    assert data["verdict"] in ("exceeds_memory", "fits", "fits_reduced_context", "experimental")
    assert data["verdict"] != "fits_with_offload"


def test_a_model_with_mtp_layers_carries_the_speculative_caution(client: TestClient) -> None:
    data = client.get(DETAIL.format(model="glm-5.3-flash", hardware="8x-h200-141gb")).json()
    assert any("MTP layer" in w and "speed profile" in w for w in data["warnings"])


def test_the_offload_flags_replace_the_all_on_gpu_layers() -> None:
    argv = ["llama-server", "-hf", "r:Q4", "--n-gpu-layers", "999", "--flash-attn", "on"]
    command = Command("llama-cpp", "a", argv)
    moe = with_offload(command, ["--n-gpu-layers", "999", "--n-cpu-moe", "7"])
    assert moe.argv == [
        "llama-server", "-hf", "r:Q4", "--n-gpu-layers", "999", "--n-cpu-moe", "7",
        "--flash-attn", "on",
    ]  # fmt: skip
    dense = with_offload(command, ["--n-gpu-layers", "40"])
    assert dense.shell == "llama-server -hf r:Q4 --n-gpu-layers 40 --flash-attn on"
    ollama = Command("ollama", "a", ["env", "ollama", "serve"])
    assert with_offload(ollama, ["--n-gpu-layers", "40"]) == ollama
