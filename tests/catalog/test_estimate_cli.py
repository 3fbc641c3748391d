"""`servebook estimate` prints the estimate as text or JSON, and refuses unknown slugs."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main

KEYS = {
    "weights_gb",
    "kv_bytes_per_token",
    "required_gb_per_gpu",
    "usable_gb_per_gpu",
    "verdict",
    "max_context",
    "decode_tokens_per_s",
    "basis",
}


@pytest.fixture(autouse=True)
def _commands_read_the_test_database(cli_database: Path) -> None:
    """Every test here runs the console script against its own database."""


def invoke(*args: str):
    return CliRunner().invoke(main, ["estimate", *args])


def test_json_has_the_documented_keys() -> None:
    result = invoke(
        "--model",
        "llama-3.1-8b-instruct",
        "--hardware",
        "rtx-4090-24gb",
        "--artifact",
        "llama-3.1-8b-instruct-q4-k-m",
        "--runtime",
        "llama-cpp",
        "--context",
        "8192",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert KEYS <= data.keys()
    assert data["kv_bytes_per_token"] == 131072
    assert data["verdict"] in ("fits", "experimental")
    assert data["decode_tokens_per_s"]["low"] < data["decode_tokens_per_s"]["high"]
    assert data["basis"] in ("exact", "published", "derived", "assumed")


def test_best_route_without_artifact_or_runtime() -> None:
    result = invoke("--model", "glm-5.3-flash", "--hardware", "8x-h200-141gb", "--json")
    data = json.loads(result.output)
    assert data["verdict"] == "fits" and data["runtime"] in ("sglang", "vllm")
    text = invoke("--model", "glm-5.3-flash", "--hardware", "rtx-4090-24gb")
    assert "exceeds memory" in text.output and "GB short" in text.output
    assert "token generation" not in text.output  # no speed for what does not fit


def test_unknown_slugs_are_refused_with_choices() -> None:
    result = invoke("--model", "glm-5.3-flash", "--hardware", "nope")
    assert result.exit_code != 0 and "rtx-4090-24gb" in result.output
    result = invoke("--model", "glm-5.3-flash", "--hardware", "rtx-4090-24gb", "--runtime", "x")
    assert result.exit_code != 0 and "sglang" in result.output


def test_described_hardware_resolves_like_the_selector(client) -> None:  # noqa: ANN001
    args = [
        "--model",
        "glm-5.3-flash",
        "--memory-gb-per-gpu",
        "96",
        "--bandwidth-gb-s",
        "1792",
        "--gpu-count",
        "4",
        "--platform",
        "cuda",
    ]
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    cli = json.loads(result.output)
    api = client.post(
        "/api/estimate",
        json={
            "model": "glm-5.3-flash",
            "memory_gb_per_gpu": 96,
            "bandwidth_gb_s_per_gpu": 1792,
            "gpu_count": 4,
            "platform": "cuda",
        },
    ).json()
    for key in (
        "verdict",
        "required_gb_per_gpu",
        "usable_gb_per_gpu",
        "headroom_gb_per_gpu",
        "max_context",
        "decode_tokens_per_s",
        "artifact",
        "runtime",
        "commands",
    ):
        assert cli[key] == api[key], key
    assert cli["hardware"] == "custom" and cli["usable_gb_per_gpu"] == 86.4  # 90% of 96 GB
    assert cli["tensor_parallel"] == 4 and cli["decode_tokens_per_s"]["basis"] == "estimated"


def test_hardware_must_be_named_or_described_once() -> None:
    neither = invoke("--model", "glm-5.3-flash")
    both = invoke(
        "--model", "glm-5.3-flash", "--hardware", "h100-80gb", "--memory-gb-per-gpu", "80"
    )
    for result in (neither, both):
        assert result.exit_code == 2 and "--memory-gb-per-gpu" in result.output
    bad = invoke(
        "--model", "glm-5.3-flash", "--memory-gb-per-gpu", "80", "--usable-memory-gb", "100"
    )
    assert bad.exit_code == 1 and "usable_memory_gb" in bad.output
