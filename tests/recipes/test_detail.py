"""Profile detail: commands only for verified pairs, as the official ones read plus what the
profile relies on that the runtime's default would not give (16 requests at once)."""

import shlex

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

GLM = "glm-5.3-flash"
OFFICIAL_SGLANG = (
    "python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash --tp 8 "
    "--host 127.0.0.1 --port 8000 --context-length 16384 --max-running-requests 16"
)
OFFICIAL_VLLM = (
    "vllm serve zai-org/GLM-5.3-Flash --tensor-parallel-size 8 --host 127.0.0.1 "
    "--port 8000 --max-model-len 16384 --gpu-memory-utilization 0.90 --max-num-seqs 16"
)


def detail(client: TestClient, hardware: str, profile: str = "balanced", model: str = GLM) -> dict:
    response = client.get(f"/api/models/{model}/hardware/{hardware}/profiles/{profile}")
    assert response.status_code == 200, response.text
    return response.json()


def test_official_commands_on_8x_h200_balanced(client: TestClient) -> None:
    data = detail(client, "8x-h200-141gb")
    shells = {c["runtime"]: c["shell"] for c in data["commands"]}
    assert shells == {"sglang": OFFICIAL_SGLANG, "vllm": OFFICIAL_VLLM}
    assert data["estimate_only"] is False
    for command in data["commands"]:
        assert shlex.split(command["shell"]) == command["argv"]
        assert command["argv"][command["argv"].index("--host") + 1] == "127.0.0.1"


def test_other_8_gpu_nodes_get_official_commands_too(client: TestClient) -> None:
    for node in ("8x-b200-180gb", "8x-h100-80gb"):
        data = detail(client, node)
        assert {c["runtime"] for c in data["commands"]} == {"sglang", "vllm"}, node
        assert all(
            "--tp" in c["argv"] or "--tensor-parallel-size" in c["argv"] for c in data["commands"]
        )


def test_unverified_pair_shows_estimate_and_asks_for_a_record(client: TestClient) -> None:
    data = detail(client, "mac-studio-m5-ultra-512gb")
    assert data["verdict"] == "experimental"
    assert data["commands"] == [] and data["estimate_only"] is True
    assert data["memory"]["required_gb_per_gpu"] > 0
    assert "needs verification" in data["reason"]
    for key in (
        "model=glm-5.3-flash",
        "hardware=mac-studio-m5-ultra-512gb",
        "profile=balanced",
        "artifact=",
        "runtime=",
    ):
        assert key in data["record_url"]


def test_exceeding_hardware_never_gets_a_command(client: TestClient) -> None:
    data = detail(client, "rtx-4090-24gb")
    assert data["verdict"] == "exceeds_memory"
    assert data["commands"] == [] and data["estimate_only"] is True


def test_profiles_differ_where_they_should(client: TestClient) -> None:
    balanced = detail(client, "8x-h200-141gb", "balanced")["applied_values"]
    speed = detail(client, "8x-h200-141gb", "speed")["applied_values"]
    long = detail(client, "8x-h200-141gb", "long-context")["applied_values"]
    # Long context starts lowered (the stop condition) and aims for the largest that fits.
    assert long["context"] <= 16384
    steps = detail(client, "8x-h200-141gb", "long-context")["context_steps"]
    assert steps[0]["context"] > long["context"] and steps[-1]["context"] == 1048576
    assert long["kv_cache_dtype"] != "auto"
    assert speed["max_concurrency"] < balanced["max_concurrency"]
    assert speed["speculative_decoding"] and not balanced["speculative_decoding"]
    for values in (balanced, speed, long):
        assert values["tensor_parallel"] == 8
        assert values["memory_fraction"] is None or values["memory_fraction"] <= 0.90


def test_long_context_command_carries_its_context_and_kv_dtype(client: TestClient) -> None:
    data = detail(client, "8x-h200-141gb", "long-context")
    values = data["applied_values"]
    primary = next(c for c in data["commands"] if c["runtime"] == data["runtime"])
    argv = primary["argv"]
    assert argv[argv.index("--context-length") + 1] == str(values["context"])
    assert argv[argv.index("--kv-cache-dtype") + 1] == values["kv_cache_dtype"] == "fp8_e4m3"
    vllm = next(c for c in data["commands"] if c["runtime"] == "vllm")["argv"]
    assert vllm[vllm.index("--kv-cache-dtype") + 1] == "fp8"


def test_single_gpu_and_pcie_pairs(client: TestClient) -> None:
    llama = detail(client, "h100-80gb", model="llama-3.1-8b-instruct")
    assert llama["applied_values"]["tensor_parallel"] == 1
    assert llama["commands"] and all("--tp" not in c["argv"] for c in llama["commands"])
    pcie = detail(client, "2x-rtx-4090-pcie-48gb", model="llama-3.1-8b-instruct")
    assert pcie["applied_values"]["tensor_parallel"] == 2
    assert any("PCIe" in w or "pcie" in w.lower() for w in pcie["warnings"])


def test_detail_page_shows_sections_in_order(client: TestClient) -> None:
    html = client.get(f"/models/{GLM}/hardware/8x-h200-141gb/profiles/balanced").text
    page = BeautifulSoup(html, "html.parser")
    ids = [s.get("id") for s in page.select("main section[id]")]
    order = ["verdict", "applied-values", "launch", "check", "stop-conditions", "exposure"]
    assert [i for i in ids if i in order] == order
    copies = page.select("button[data-copy]")
    assert OFFICIAL_SGLANG in [b["data-copy"] for b in copies]
    assert page.select_one(".memory-chart") is not None


def test_detail_page_escapes_and_404s(client: TestClient) -> None:
    assert client.get(f"/models/{GLM}/hardware/nope/profiles/balanced").status_code == 404
    assert client.get(f"/models/{GLM}/hardware/8x-h200-141gb/profiles/nope").status_code == 404
    api = client.get(f"/api/models/{GLM}/hardware/8x-h200-141gb/profiles/nope")
    assert api.status_code == 404 and "balanced" in api.json()["detail"]


def test_unified_memory_machine_gets_single_device_values(client: TestClient) -> None:
    data = detail(client, "mac-studio-m5-ultra-256gb", model="llama-3.1-70b-instruct")
    values = data["applied_values"]
    assert values["tensor_parallel"] == 1 and values["split"] == "none"
    assert values["context"] == 4096
    assert data["memory"]["usable_gb_per_gpu"] == 236.0


def test_two_gpus_over_nvlink_split_by_tensor_parallelism(client: TestClient) -> None:
    data = detail(client, "2x-rtx-3090-nvlink-48gb", model="qwen3-30b-a3b")
    assert data["applied_values"]["tensor_parallel"] in (1, 2)
    if data["runtime"] in ("vllm", "sglang"):
        assert data["applied_values"]["tensor_parallel"] == 2
    assert data["memory"]["usable_gb_per_gpu"] == 22.5


def test_detail_page_links_a_prefilled_benchmark(client: TestClient) -> None:
    html = client.get(f"/models/{GLM}/hardware/8x-h200-141gb/profiles/balanced").text
    link = BeautifulSoup(html, "html.parser").select_one("#measure a")["href"]
    form = BeautifulSoup(client.get(link).text, "html.parser")
    assert form.select_one('input[name="served_model"]')["value"] == "zai-org/GLM-5.3-Flash"
    assert form.select_one('input[name="base_url"]')["value"] == "http://127.0.0.1:8000/v1"
    assert form.select_one('input[name="command"]')["value"] == OFFICIAL_SGLANG
    assert form.select_one('select[name="hardware"] option[selected]')["value"] == "8x-h200-141gb"
