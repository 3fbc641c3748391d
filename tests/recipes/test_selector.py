"""Device selector: custom machines, live estimates and clear field errors."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

GLM = "glm-5.3-flash"
BASE = {
    "model": GLM,
    "artifact": "glm-5.3-flash-mlx-4bit",
    "runtime": "mlx-lm",
    "platform": "metal",
    "unified_memory": True,
    "gpu_count": 1,
    "context": 4096,
}


def post(client: TestClient, **changes: object):
    return client.post("/api/estimate", json={**BASE, **changes})


def test_more_memory_turns_the_verdict(client: TestClient) -> None:
    small = post(client, memory_gb_per_gpu=128, usable_memory_gb=110).json()
    large = post(
        client, memory_gb_per_gpu=256, usable_memory_gb=236, bandwidth_gb_s_per_gpu=819
    ).json()
    assert small["verdict"] == "exceeds_memory" and large["verdict"] == "fits"
    assert large["max_context"] >= 4096 and large["estimate_only"] is True
    assert large["decode_tokens_per_s"]["low"] > 0


def test_catalog_hardware_by_slug(client: TestClient) -> None:
    data = client.post(
        "/api/estimate",
        json={
            "model": GLM,
            "hardware": "8x-h200-141gb",
            "artifact": "glm-5.3-flash-bf16",
            "runtime": "vllm",
            "context": 16384,
        },
    ).json()
    assert data["verdict"] == "fits" and data["verified_pair"] is True
    assert data["tensor_parallel"] == 8


def test_invalid_input_names_the_field(client: TestClient) -> None:
    cases = {
        "memory_gb_per_gpu": dict(memory_gb_per_gpu=0),
        "gpu_count": dict(
            memory_gb_per_gpu=80,
            gpu_count=3,
            platform="cuda",
            artifact="glm-5.3-flash-bf16",
            runtime="vllm",
            unified_memory=False,
        ),
        "runtime": dict(memory_gb_per_gpu=80, platform="cuda", runtime="mlx-lm"),
    }
    for field, changes in cases.items():
        response = post(client, **changes)
        assert response.status_code == 422, field
        assert field in response.json()["errors"], (field, response.json())


def test_wrong_format_for_runtime_is_a_field_error(client: TestClient) -> None:
    response = post(client, memory_gb_per_gpu=512, runtime="vllm", platform="cuda")
    assert response.status_code == 422
    assert "runtime" in response.json()["errors"]


def test_htmx_selector_fragment(client: TestClient) -> None:
    form = {k: str(v) for k, v in BASE.items() if k != "model"}
    form.update(hardware="custom", memory_gb_per_gpu="-4")
    response = client.post(f"/models/{GLM}/selector", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 200
    fragment = BeautifulSoup(response.text, "html.parser")
    assert fragment.select_one("#selector-result") is not None
    assert fragment.select_one('[data-field="memory_gb_per_gpu"]') is not None
    form.update(memory_gb_per_gpu="512", usable_memory_gb="480")
    ok = BeautifulSoup(
        client.post(f"/models/{GLM}/selector", data=form, headers={"HX-Request": "true"}).text,
        "html.parser",
    )
    assert ok.select_one("#selector-verdict").text.strip() == "fits"
