"""Absurd config numbers get a 422 naming the number, on the API and on the page, never a
500 from the arithmetic or the formatting that would follow."""

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

CONFIG = json.loads(
    (Path(__file__).parents[1] / "data" / "hf_configs" / "llama-3.1-8b.json").read_text()
)
ABSURD = [
    ("num_hidden_layers", 1e308, "2,147,483,647"),
    ("hidden_size", 4611686018427387904, "2,147,483,647"),
    ("vocab_size", -(2**40), "minimum of 1"),
]


@pytest.mark.parametrize(("key", "value", "bound"), ABSURD)
def test_api_refuses_an_absurd_config_number(
    client: TestClient, key: str, value: float, bound: str
) -> None:
    body = {
        "model": {"hf_config": {**CONFIG, key: value}, "quant": "BF16"},
        "hardware": "h100-80gb",
    }
    response = client.post("/api/estimate", json=body)
    assert response.status_code == 422, response.text
    message = response.json()["errors"]["model.hf_config"]
    assert key in message and bound in message


def test_a_nested_number_is_bounded_too(client: TestClient) -> None:
    config = {**CONFIG, "text_config": {"hidden_size": 2**62}}
    response = client.post(
        "/api/estimate", json={"model": {"hf_config": config}, "hardware": "h100-80gb"}
    )
    assert response.status_code == 422
    assert "text_config.hidden_size" in response.json()["errors"]["model.hf_config"]


@pytest.mark.parametrize(("key", "value", "bound"), ABSURD)
def test_page_refuses_an_absurd_config_number(
    client: TestClient, key: str, value: float, bound: str
) -> None:
    config = json.dumps({**CONFIG, key: value})
    response = client.get(
        "/estimate", params={"config": config, "quant": "BF16", "hardware": "h100-80gb"}
    )
    assert response.status_code == 422
    assert key in response.text


def test_the_largest_accepted_number_still_answers(client: TestClient) -> None:
    body = {
        "model": {"hf_config": {**CONFIG, "hidden_size": 2**31 - 1}, "quant": "BF16"},
        "hardware": "h100-80gb",
    }
    response = client.post("/api/estimate", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["verdict"] == "exceeds_memory"
