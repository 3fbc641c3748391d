"""Invariants of the numbers, drawn at random through the public API: `POST /api/estimate`
and `POST /api/plan` as a client sends them, on a real seeded database.

The suite draws a bounded number of examples (SERVEBOOK_PROPERTY_EXAMPLES, 12 by default);
`make properties` draws many more."""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.config import PROJECT_ROOT
from app.errors import FIELD_CONFLICTS, said_codes
from app.main import create_app
from tests.conftest import database_settings

EXAMPLES = int(os.environ.get("SERVEBOOK_PROPERTY_EXAMPLES", "12"))
DRAWN = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
RUNS = {"fits", "fits_reduced_context", "fits_with_offload", "experimental"}

CATALOG_MODELS = ["glm-5.3-flash", "gpt-oss-120b", "llama-3.1-8b-instruct", "qwen3-30b-a3b"]
CATALOG_HARDWARE = [
    "rtx-4090-24gb",
    "rtx-pro-6000-96gb",
    "h100-80gb",
    "8x-h100-80gb",
    "8x-h200-141gb",
    "mac-studio-m5-ultra-512gb",
]
CARDS = ["RTX 4090", "RTX 3090", "H100", "H200", "A100", "L40S", "RTX PRO 6000 Blackwell"]
QUANTS = ["Q4_K_M", "Q8_0", "FP8", "BF16", "AWQ"]


@pytest.fixture(scope="module")
def api(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    path = tmp_path_factory.mktemp("invariants") / "servebook.db"
    shutil.copyfile(seeded_template, path)
    with TestClient(create_app(database_settings(f"sqlite:///{path}"))) as client:
        yield client


def _catalog(api: TestClient) -> set[str]:
    return {m["slug"] for m in api.get("/api/models").json()}


models = st.one_of(
    st.sampled_from(CATALOG_MODELS),
    st.builds(
        lambda params, quant: {"params_b": params, "quant": quant},
        st.floats(0.5, 120, allow_nan=False),
        st.sampled_from(QUANTS),
    ),
)
hardware = st.one_of(
    st.sampled_from(CATALOG_HARDWARE),
    st.builds(
        lambda gpu, count: {"gpu": gpu, "count": count},
        st.sampled_from(CARDS),
        st.sampled_from([1, 2, 4, 8]),
    ),
)


def _estimate(api: TestClient, body: dict) -> tuple[int, dict]:
    response = api.post("/api/estimate", json=body)
    assert_refusal_status(response)
    return response.status_code, response.json()


def assert_refusal_status(response: Any) -> None:
    """An answer, or a refusal with every field at fault: 409 exactly where each is a
    conflict between fields the schema accepts (app.errors.FIELD_CONFLICTS), else 422."""
    assert response.status_code in (200, 409, 422), response.text
    if response.status_code == 200:
        return
    said = response.json()["error_messages"]
    assert said and set(said) == set(response.json()["errors"])
    conflicts = all(
        code in FIELD_CONFLICTS for message in said.values() for code in said_codes(message)
    )
    assert (response.status_code == 409) == conflicts, response.text


def _middle(band: dict) -> float:
    return (band["low"] + band["high"]) / 2


@DRAWN
@given(
    model=models,
    machine=hardware,
    context=st.integers(256, 200_000),
    concurrency=st.integers(1, 256),
)
def test_an_answer_is_a_200_or_a_refusal_and_its_verdict_matches_its_figures(
    api: TestClient, model, machine, context: int, concurrency: int
) -> None:
    status, answer = _estimate(
        api, {"model": model, "hardware": machine, "context": context, "concurrency": concurrency}
    )
    if status != 200:
        assert answer["errors"]
        return
    verdict = answer["verdict"]
    if verdict == "exceeds_memory":
        required, usable = answer["required_gb_per_gpu"], answer["usable_gb_per_gpu"]
        largest = answer["max_context"]
        shown = (required is not None and usable is not None and required > usable) or (
            largest is not None and largest < answer["context"]
        )
        assert shown, ("exceeds memory without showing it", answer["reason"])
    if verdict in RUNS:
        assert answer["decode_tokens_per_s"] is not None, (verdict, answer["reason"])


@DRAWN
@given(
    model=models,
    machine=hardware,
    longer=st.integers(512, 131_072),
    share=st.floats(0.05, 1.0),
)
def test_a_shorter_context_never_does_worse(
    api: TestClient, model, machine, longer: int, share: float
) -> None:
    shorter = max(256, int(longer * share))
    status, long_answer = _estimate(api, {"model": model, "hardware": machine, "context": longer})
    if status != 200 or long_answer["verdict"] not in RUNS:
        return
    _, short_answer = _estimate(api, {"model": model, "hardware": machine, "context": shorter})
    assert short_answer["verdict"] in RUNS, (longer, shorter, short_answer["reason"])


@DRAWN
@given(
    model=st.sampled_from(CATALOG_MODELS),
    machine=hardware,
    low=st.integers(1, 64),
    factor=st.integers(2, 8),
    prompt=st.sampled_from([128, 1024, 4096]),
    output=st.sampled_from([64, 256, 1024]),
)
def test_more_requests_at_once_never_speed_each_one_up(
    api: TestClient, model: str, machine, low: int, factor: int, prompt: int, output: int
) -> None:
    shape = {"prompt_tokens": prompt, "output_tokens": output}
    body = {"model": model, "hardware": machine, **shape}
    status, fewer = _estimate(api, {**body, "concurrency": low})
    if status != 200 or fewer["verdict"] not in RUNS or fewer["verdict"] == "fits_with_offload":
        return
    _, more = _estimate(api, {**body, "concurrency": low * factor})
    if more["verdict"] not in RUNS:
        return
    a, b = fewer["decode_tokens_per_s"], more["decode_tokens_per_s"]
    if a["basis"] != "estimated" or b["basis"] != "estimated":
        return  # a measured single request is a record's figure, not the model's
    assert _middle(b) <= _middle(a) + 0.1
    assert b["high"] <= a["high"] + 0.1
    assert more["ttft_ms"]["low"] >= fewer["ttft_ms"]["low"] - 0.1
    assert more["ttft_ms"]["high"] >= fewer["ttft_ms"]["high"] - 0.1
    total_a, total_b = fewer["throughput_tokens_per_s"], more["throughput_tokens_per_s"]
    assert _middle(total_b) >= _middle(total_a) * 0.999


@DRAWN
@given(
    model=models,
    machine=hardware,
    context=st.integers(1280, 200_000),
    concurrency=st.integers(1, 256),
    blank=st.sampled_from(["prompt_tokens", "output_tokens", "both"]),
)
def test_a_blank_length_is_the_stated_default_request(
    api: TestClient, model, machine, context: int, concurrency: int, blank: str
) -> None:
    body = {"model": model, "hardware": machine, "context": context, "concurrency": concurrency}
    stated = {"prompt_tokens": 1024, "output_tokens": 256}
    left = ["output_tokens", "prompt_tokens"] if blank == "both" else [blank]
    asked = {name: value for name, value in stated.items() if name not in left}
    status, blank_answer = _estimate(api, {**body, **asked})
    if status != 200 or blank_answer["verdict"] not in RUNS:
        return
    _, given_answer = _estimate(api, {**body, **stated})
    shape = blank_answer["request_shape"]
    assert shape["defaulted"] == left
    assert {name: shape[name] for name in stated} == stated
    for figure in ("verdict", "decode_tokens_per_s", "throughput_tokens_per_s", "ttft_ms"):
        assert blank_answer[figure] == given_answer[figure], figure


@DRAWN
@given(model=st.sampled_from(CATALOG_MODELS), machine=st.sampled_from(CATALOG_HARDWARE))
def test_the_load_curve_at_one_request_is_the_single_request_line(
    api: TestClient, model: str, machine: str
) -> None:
    response = api.get(f"/api/models/{model}/hardware/{machine}/profiles/balanced")
    assert response.status_code in (200, 404)
    if response.status_code != 200:
        return
    detail = response.json()
    curve, single = detail.get("load_curve"), detail.get("single_request")
    if not curve or not single:
        return
    first = curve["estimated"][0]
    assert first["concurrency"] == 1
    line = single["decode_tokens_per_s"]
    if line["basis"] == "estimated":
        assert first["decode_tokens_per_s"]["low"] == line["low"]
        assert first["decode_tokens_per_s"]["high"] == line["high"]


@DRAWN
@given(
    model=st.sampled_from(CATALOG_MODELS),
    users=st.integers(1, 600),
    speed=st.floats(1, 80),
    ttft=st.none() | st.floats(200, 60_000),
    cards=st.lists(
        st.builds(
            lambda gpu, count: {"gpu": gpu, "count": count},
            st.sampled_from(CARDS),
            st.sampled_from([1, 2, 4, 8]),
        ),
        min_size=1,
        max_size=2,
    ),
)
def test_an_option_that_meets_satisfies_the_stated_rule(
    api: TestClient, model: str, users: int, speed: float, ttft, cards: list
) -> None:
    body = {"model": model, "users": users, "min_decode_tokens_per_s": speed, "hardware": cards}
    if ttft is not None:
        body["max_ttft_ms"] = ttft
    response = api.post("/api/plan", json=body)
    assert_refusal_status(response)
    if response.status_code != 200:
        return
    plan = response.json()
    assert plan["meets_rule"]["text"]
    assert plan["options"][0]["hardware_name"] == cards[0]["gpu"] or len(plan["options"]) > 0
    seen_failing = False
    for option in plan["options"]:
        if not option["meets"]:
            seen_failing = True
            assert option["limited_by"] in ("memory", "decode", "ttft")
            continue
        assert not seen_failing, "an option that meets comes after one that does not"
        assert _middle(option["decode_tokens_per_s"]) >= speed - 1e-6
        if ttft is not None:
            assert _middle(option["ttft_ms"]) <= ttft + 1e-6
        assert option["replicas"] * option["concurrency_per_replica"] >= users
    for key in ("cheapest", "smallest"):
        if plan[key] is not None:
            named = plan["options"][plan[key]]
            assert named["meets"] and not named["experimental"]


def _discrete_hardware() -> list[dict]:
    catalog = yaml.safe_load((PROJECT_ROOT / "seed_data" / "hardware.yaml").read_text())
    return [h for h in catalog["hardware"] if not h.get("unified_memory")]


@DRAWN
@given(
    model=st.sampled_from(CATALOG_MODELS),
    machine=st.sampled_from(_discrete_hardware()),
    context=st.none() | st.integers(1024, 131_072),
)
def test_the_same_hardware_by_slug_or_by_card_name_gets_the_same_answer(
    api: TestClient, model: str, machine: dict, context
) -> None:
    asked = {"model": model} | ({"context": context} if context else {})
    _, by_slug = _estimate(api, {**asked, "hardware": machine["slug"]})
    by_card = {"gpu": machine["device"], "count": machine["gpu_count"]}
    _, by_name = _estimate(api, {**asked, "hardware": by_card})
    assert by_name["verdict"] == by_slug["verdict"], (machine["slug"], by_card)
    assert by_name["max_context"] == by_slug["max_context"]
