"""The detail page's curve: each request's decode against the total throughput over
concurrency 1 up to the profile's largest, estimated as a band through the page's own
"Speed at load" figures, with the records' measured medians on top and a cost per million
output tokens at a price per GPU-hour."""

import copy

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.estimate.costs import cost_per_million_tokens
from tests.records.conftest import VALID, accept, post_record

GLM = "glm-5.3-flash"
H200 = "8x-h200-141gb"
DETAIL = f"/models/{GLM}/hardware/{H200}/profiles/balanced"


def ends(figure: dict) -> tuple[float, float]:
    return figure["low"], figure["high"]


def middle(band: dict) -> float:
    return (band["low"] + band["high"]) / 2


def test_the_band_passes_through_the_lines_and_the_estimate(client: TestClient) -> None:
    detail = client.get("/api" + DETAIL).json()
    curve = detail["load_curve"]
    by_level = {p["concurrency"]: p for p in curve["estimated"]}
    assert list(by_level) == [1, 2, 4, 8, 16]  # 1 to the profile's 16, doubling
    assert curve["max_concurrency"] == curve["profile_concurrency"] == 16
    for level, line in ((1, detail["single_request"]), (16, detail["at_profile_concurrency"])):
        for name in ("decode_tokens_per_s", "throughput_tokens_per_s", "ttft_ms"):
            assert ends(by_level[level][name]) == ends(line[name]), (level, name)
    # Between them, the figures POST /api/estimate gives at that concurrency.
    asked = {"model": GLM, "hardware": H200, "profile": "balanced", "concurrency": 4}
    estimate = client.post("/api/estimate", json=asked).json()
    for name in ("decode_tokens_per_s", "throughput_tokens_per_s"):
        assert ends(by_level[4][name]) == ends(estimate[name])
    # More requests at once: each one slower, all of them together faster. (The middles: one
    # request's class has few checks and borrows a wider range than the many's.)
    decode = [middle(p["decode_tokens_per_s"]) for p in curve["estimated"]]
    total = [middle(p["throughput_tokens_per_s"]) for p in curve["estimated"]]
    assert decode == sorted(decode, reverse=True) and total == sorted(total)
    tops = [p["decode_tokens_per_s"]["high"] for p in curve["estimated"]]
    assert tops == sorted(tops, reverse=True)  # never faster beside others than alone
    assert all(p["cost_per_million_output_tokens"] is None for p in curve["estimated"])


def test_a_price_gives_each_point_its_cost_per_million_tokens(client: TestClient) -> None:
    curve = client.get("/api" + DETAIL, params={"price_per_gpu_hour": 2.5}).json()["load_curve"]
    assert curve["price_per_gpu_hour"] == 2.5 and curve["gpus"] == 8
    for point in curve["estimated"]:
        throughput = point["throughput_tokens_per_s"]
        middle = (throughput["low"] + throughput["high"]) / 2
        expected = 2.5 * 8 / (middle * 3600) * 1e6
        assert point["cost_per_million_output_tokens"] == round(expected, 4)
        assert point["cost_per_million_output_tokens"] == cost_per_million_tokens(2.5, 8, middle)
        assert abs(point["gpu_hours_per_million_output_tokens"] * 2.5 - expected) < 1e-4
    refused = client.get("/api" + DETAIL, params={"price_per_gpu_hour": 0})
    assert refused.status_code == 422
    assert [e["field"] for e in refused.json()["errors"]] == ["price_per_gpu_hour"]


def test_measured_points_are_the_accepted_records_medians(client: TestClient) -> None:
    body = copy.deepcopy(VALID) | {"hardware": H200}
    body["measurements"] += [
        {
            "context_length": 4096,
            "concurrency": level,
            "repetitions": level,
            "ttft_ms": 300.0 + level,
            "decode_tokens_per_s": decode,
            "throughput_tokens_per_s": total,
            "details": {"ramp": True},
        }
        for level, decode, total in ((4, 80.0, 310.0), (8, 70.0, 540.0))
    ]
    response = post_record(client, body)
    assert response.status_code == 201, response.text
    accept(client, response.json()["id"])
    curve = client.get("/api" + DETAIL, params={"price_per_gpu_hour": 2}).json()["load_curve"]
    measured = {p["concurrency"]: p for p in curve["measured"]}
    assert list(measured) == [1, 4, 8]
    # One request at a time (4,096 and 16,384 tokens, 95 and 88 tok/s): its total is its speed.
    assert measured[1]["decode_tokens_per_s"]["median"] == 91.5
    assert measured[1]["throughput_tokens_per_s"] == measured[1]["decode_tokens_per_s"]
    # The band stays the estimate where the one-request line now shows the measurement.
    detail = client.get("/api" + DETAIL).json()
    assert detail["single_request"]["decode_tokens_per_s"]["basis"] == "measured"
    assert curve["estimated"][0]["decode_tokens_per_s"]["basis"] == "estimated"
    assert measured[8]["decode_tokens_per_s"]["median"] == 70.0
    assert measured[8]["throughput_tokens_per_s"]["median"] == 540.0
    assert measured[8]["basis"] == "measured" and measured[8]["records"] == 1
    assert measured[8]["cost_per_million_output_tokens"] == cost_per_million_tokens(2, 8, 540.0)
    # The page draws the same points, in its table and its chart's data.
    page = BeautifulSoup(client.get(DETAIL).text, "html.parser")
    rows = page.select("#load-curve-points tr.curve-point")
    kinds = [(row["data-kind"], int(row["data-concurrency"])) for row in rows]
    assert kinds == [("estimated", c) for c in (1, 2, 4, 8, 16)] + [
        ("measured", 1),
        ("measured", 4),
        ("measured", 8),
    ]
    estimated = {p["concurrency"]: p for p in curve["estimated"]}
    for row in rows[:5]:
        point = estimated[int(row["data-concurrency"])]
        assert float(row["data-decode-low"]) == point["decode_tokens_per_s"]["low"]
        assert float(row["data-gpu-hours"]) == point["gpu_hours_per_million_output_tokens"]
    assert page.select_one("#load-curve-data") is not None
