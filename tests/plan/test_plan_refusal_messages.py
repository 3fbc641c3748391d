"""A refused estimate or plan names every field at fault in one answer, each in `errors`
(field -> text) and in `error_messages` (field -> code, params and English text)."""

from fastapi.testclient import TestClient

MODEL = {"params_b": 8, "quant": "bf16"}


def test_a_plan_reports_an_unknown_gpu_and_a_negative_price_together(client: TestClient) -> None:
    body = {
        "model": MODEL,
        "users": 4,
        "min_decode_tokens_per_s": 10,
        "hardware": [{"gpu": "No Such GPU", "count": 1}],
        "price_per_gpu_hour": -1,
    }
    answer = client.post("/api/plan", json=body)
    assert answer.status_code == 422, answer.text
    document = answer.json()
    fields = set(document["errors"])
    assert "price_per_gpu_hour" in fields
    assert any(field.startswith("hardware") for field in fields), document
    price = document["error_messages"]["price_per_gpu_hour"]
    assert price["code"] == "plan.price_not_positive"
    assert price["params"] == {"price": -1}
    assert price["text"] == "a price per GPU-hour must be greater than 0, not -1"
    assert set(document["error_messages"]) == fields
    for message in document["error_messages"].values():
        assert set(message) == {"code", "params", "text"}


def test_an_estimate_refusal_carries_error_messages(client: TestClient) -> None:
    answer = client.post("/api/estimate", json={"model": MODEL, "gpu_count": 0, "x": 1})
    assert answer.status_code == 422, answer.text
    document = answer.json()
    assert set(document["errors"]) == set(document["error_messages"]) >= {"gpu_count", "x"}
    assert document["error_messages"]["x"]["code"] == "input.extra_forbidden"
    assert document["error_messages"]["gpu_count"]["params"]
