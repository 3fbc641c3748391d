"""Device selector: catalog cards answer as the table does; described machines resolve the
same way; every bad field gets its own message."""

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
HTMX = {"HX-Request": "true"}


def post(client: TestClient, **changes: object):
    return client.post("/api/estimate", json={**BASE, **changes})


def fit_row(client: TestClient, hardware: str) -> dict:
    rows = client.get(f"/api/models/{GLM}/fit").json()["rows"]
    return next(row for row in rows if row["hardware"] == hardware)


def test_more_memory_turns_the_verdict(client: TestClient) -> None:
    small = post(client, memory_gb_per_gpu=128, usable_memory_gb=110).json()
    large = post(
        client, memory_gb_per_gpu=256, usable_memory_gb=236, bandwidth_gb_s_per_gpu=819
    ).json()
    assert small["verdict"] == "exceeds_memory" and large["verdict"] == "experimental"
    # What does not fit shows estimated memory only: no speed, no largest context.
    assert small["decode_tokens_per_s"] is None and small["max_context"] is None
    assert small["required_gb_per_gpu"] > small["usable_gb_per_gpu"]
    assert large["max_context"] >= 4096 and large["estimate_only"] is True
    assert large["decode_tokens_per_s"]["low"] > 0


def test_catalog_card_answers_as_its_table_row(client: TestClient) -> None:
    for hardware in ("8x-h200-141gb", "mac-studio-m5-ultra-256gb", "rtx-4090-24gb"):
        data = client.post("/api/estimate", json={"model": GLM, "hardware": hardware}).json()
        row = fit_row(client, hardware)
        assert data["verdict"] == row["verdict"], hardware
        assert data["required_gb_per_gpu"] == row["memory"]["required_gb_per_gpu"], hardware
        assert data["start_context"] == row["start_context"], hardware
        assert data["token_generation"] == row["token_generation"], hardware


def test_a_verified_pair_shows_its_command(client: TestClient) -> None:
    data = client.post(
        "/api/estimate",
        json={
            "model": GLM,
            "hardware": "8x-h200-141gb",
            "artifact": "glm-5.3-flash-fp8",
            "runtime": "vllm",
            "context": 16384,
        },
    ).json()
    assert data["verdict"] == "fits" and data["verified_pair"] is True
    assert data["tensor_parallel"] == 8
    assert data["commands"][0]["argv"][:3] == ["vllm", "serve", "zai-org/GLM-5.3-Flash"]


def test_invalid_input_names_the_field(client: TestClient) -> None:
    """422 for a value the schema refuses; 409 for values it accepts each of that contradict
    each other (more usable memory than the cards have, a runtime not for this platform, a
    file of another model)."""
    cases = {
        "memory_gb_per_gpu": (dict(memory_gb_per_gpu=0), 422),
        "usable_memory_gb": (dict(memory_gb_per_gpu=64, usable_memory_gb=80), 409),
        "runtime": (dict(memory_gb_per_gpu=80, platform="cuda", runtime="mlx-lm"), 409),
        "artifact": (dict(memory_gb_per_gpu=80, artifact="nope"), 422),
        "hardware": (dict(hardware="nope"), 422),
        "profile": (dict(memory_gb_per_gpu=80, profile="nope"), 422),
    }
    for field, (changes, status) in cases.items():
        response = post(client, **changes)
        assert response.status_code == status, field
        assert field in response.json()["errors"], (field, response.json())


def test_heads_that_do_not_split_use_the_largest_size_that_does(client: TestClient) -> None:
    data = post(
        client,
        memory_gb_per_gpu=141,
        gpu_count=6,
        platform="cuda",
        artifact="glm-5.3-flash-fp8",
        runtime="vllm",
        unified_memory=False,
        bandwidth_gb_s_per_gpu=4800,
    ).json()
    assert data["verdict"] == "fits" and data["tensor_parallel"] == 4
    assert "do not split over 6 cards" in data["applied_values"]["why"]["tensor_parallel"]
    why = data["applied_values"]["why_messages"]["tensor_parallel"]
    assert why["code"] == "tp_heads_do_not_split" and why["params"]["count"] == 6


def test_wrong_format_for_runtime_is_a_field_error(client: TestClient) -> None:
    response = post(client, memory_gb_per_gpu=512, runtime="vllm", platform="cuda")
    assert response.status_code == 409
    assert "cannot load mlx" in response.json()["errors"]["runtime"]


def test_htmx_selector_fragment(client: TestClient) -> None:
    form = {k: str(v) for k, v in BASE.items() if k != "model"}
    form.update(hardware="custom", memory_gb_per_gpu="-4")
    response = client.post(f"/models/{GLM}/selector", data=form, headers=HTMX)
    assert response.status_code == 200
    fragment = BeautifulSoup(response.text, "html.parser")
    assert fragment.select_one("#selector-result") is not None
    assert fragment.select_one("#selector-form") is None  # only the answer is swapped
    assert fragment.select_one('[data-field="memory_gb_per_gpu"]') is not None
    form.update(memory_gb_per_gpu="512", usable_memory_gb="480")
    ok = BeautifulSoup(
        client.post(f"/models/{GLM}/selector", data=form, headers=HTMX).text, "html.parser"
    )
    assert ok.select_one("#selector-verdict").text.strip() == "experimental"
    assert ok.select_one("#selector-estimate-only") is not None


def test_picking_a_catalog_card_fills_its_figures_and_the_tables_route(
    client: TestClient,
) -> None:
    form = {
        "hardware": "8x-h200-141gb",
        "artifact": "glm-5.3-flash-bf16",
        "runtime": "vllm",
        "memory_gb_per_gpu": "",
        "profile": "balanced",
    }
    html = client.post(f"/models/{GLM}/selector?fill=true", data=form, headers=HTMX).text
    section = BeautifulSoup(html, "html.parser")
    assert section.select_one("#device-selector") is not None  # the whole form comes back
    assert section.select_one("#selector-memory")["value"] == "141.0"
    assert section.select_one("#selector-bandwidth")["value"] == "4800.0"
    assert section.select_one("#selector-count")["value"] == "8"
    interconnect = section.select_one("#selector-interconnect option[selected]").text
    assert interconnect == "nvswitch"
    row = fit_row(client, "8x-h200-141gb")
    artifact = section.select_one("#selector-artifact option[selected]")["value"]
    runtime = section.select_one("#selector-runtime option[selected]")["value"]
    assert (artifact, runtime) == (row["recommended_artifact"], row["recommended_runtime"])
    commands = [b["data-copy"] for b in section.select("#selector-result button[data-copy]")]
    assert commands and commands[0].startswith("python -m sglang.launch_server")
