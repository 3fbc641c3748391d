"""`servebook estimate` prints the estimate as text or JSON, and refuses unknown slugs."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main
from app.config import get_settings

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
def database(db_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


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
