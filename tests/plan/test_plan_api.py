"""`POST /api/plan`: for the reference model, 32 users at 20 tok/s or more each with a first
token within 3 s at a 2,048-token prompt, every option's figures are `/api/estimate`'s at
that hardware and concurrency, its cost is the contract's formula, and bad input is a 422
naming the field."""

import re

import pytest
from fastapi.testclient import TestClient

GLM = "glm-5.3-flash"
REFERENCE = {
    "model": GLM,
    "users": 32,
    "min_decode_tokens_per_s": 20,
    "max_ttft_ms": 3000,
    "prompt_tokens": 2048,
    "output_tokens": 2048,
}
FIGURES = ("decode_tokens_per_s", "ttft_ms")


def plan(client: TestClient, **asked: object) -> dict:
    response = client.post("/api/plan", json={**REFERENCE, **asked})
    assert response.status_code == 200, response.text
    return response.json()


def test_each_options_figures_are_the_estimates_at_that_hardware_and_concurrency(
    client: TestClient,
) -> None:
    answer = plan(client, price_per_gpu_hour=2.5)
    assert answer["options"] and answer["cheapest"] is not None
    for option in answer["options"]:
        estimate = client.post(
            "/api/estimate",
            json={
                "model": GLM,
                "hardware": option["hardware"],
                "concurrency": option["concurrency_per_replica"],
                "prompt_tokens": 2048,
                "output_tokens": 2048,
            },
        ).json()
        for figure in FIGURES:
            asked = {k: estimate[figure][k] for k in ("low", "high", "basis")}
            assert option[figure] == asked, (option["hardware"], figure)
        for end in ("low", "high"):  # every replica's total, together
            each = estimate["throughput_tokens_per_s"][end]
            assert option["throughput_tokens_per_s"][end] == round(each * option["replicas"], 1)
        assert option["profile"] == estimate["profile"] == "balanced"
        applied = option["applied_values"]["max_concurrency"]
        assert applied == estimate["applied_values"]["max_concurrency"]
        assert applied == option["concurrency_per_replica"]
        shells = [command["shell"] for command in estimate["commands"]]
        assert option["command"] == (shells[0] if shells else None)
        assert option["gpus"] == option["gpus_per_replica"] * option["replicas"]


def test_the_cost_per_million_tokens_is_the_hours_cost_over_the_hours_tokens(
    client: TestClient,
) -> None:
    answer = plan(client, price_per_gpu_hour=2.5)
    for option in answer["options"]:
        assert option["cost_per_hour"] == pytest.approx(2.5 * option["gpus"])
        total = option["throughput_tokens_per_s"]
        middle = (total["low"] + total["high"]) / 2
        expected = option["cost_per_hour"] / (middle * 3600) * 1e6
        assert option["cost_per_million_output_tokens"] == pytest.approx(expected, rel=1e-12)
    # Those that meet first, verified before experimental, each group by cost.
    order = [(not o["meets"], o["experimental"], o["cost_per_hour"]) for o in answer["options"]]
    assert order == sorted(order)
    named = [o["cost_per_hour"] for o in answer["options"] if o["meets"] and not o["experimental"]]
    assert answer["options"][answer["cheapest"]]["cost_per_hour"] == min(named)
    assert not answer["options"][answer["cheapest"]]["experimental"]


def test_named_cards_and_prices_keyed_by_hardware(client: TestClient) -> None:
    answer = plan(
        client,
        hardware=[{"gpu": "H100", "count": 8}, "8x-h200-141gb"],
        price_per_gpu_hour={"H100": 2.0, "8x-h200-141gb": 3.0},
    )
    by_name = {option["hardware"]: option for option in answer["options"]}
    assert set(by_name) == {"8x H100", "8x-h200-141gb"}
    assert by_name["8x H100"]["cost_per_hour"] == pytest.approx(
        16.0 * by_name["8x H100"]["replicas"]
    )
    named = by_name["8x H100"]
    estimate = client.post(
        "/api/estimate",
        json={
            "model": GLM,
            "hardware": {"gpu": "H100", "count": 8},
            "concurrency": named["concurrency_per_replica"],
            "prompt_tokens": 2048,
            "output_tokens": 2048,
        },
    ).json()
    assert named["decode_tokens_per_s"]["low"] == estimate["decode_tokens_per_s"]["low"]


def test_a_load_nothing_can_serve_is_answered_with_every_limit(client: TestClient) -> None:
    # A speed one request reaches alone somewhere is met there, one request per replica; a
    # speed none reaches is a contradiction (a 422, below). What no replica carries is memory.
    memory = plan(client, hardware=["rtx-4090-24gb"])
    assert memory["options"][0]["limited_by"] == "memory"
    assert memory["options"][0]["command"] is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"users": 0}, "users"),
        ({"users": -3}, "users"),
        ({"min_decode_tokens_per_s": 0}, "min_decode_tokens_per_s"),
        ({"min_decode_tokens_per_s": -1}, "min_decode_tokens_per_s"),
        ({"max_ttft_ms": 0}, "max_ttft_ms"),
        ({"users": 0}, "users"),
        ({"price_per_gpu_hour": 0}, "price_per_gpu_hour"),
        ({"price_per_gpu_hour": -2.5}, "price_per_gpu_hour"),
        # Past the digits a decimal rounds: echoed in the refusal all the same.
        ({"price_per_gpu_hour": -2.925123827246204e55}, "price_per_gpu_hour"),
        ({"price_per_gpu_hour": {"8x-h100-80gb": -1e30}}, "price_per_gpu_hour"),
        ({"price_per_gpu_hour": {"8x-h100-80gb": -1}}, "price_per_gpu_hour"),
        ({"price_per_gpu_hour": {"no-such-box": 2}}, "price_per_gpu_hour.no-such-box"),
        ({"hardware": ["no-such-box"]}, "hardware.0"),
        ({"hardware": ["8x-h100-80gb", {"gpu": "RTX 9999"}]}, "hardware.1.gpu"),
        ({"model": "no-such-model"}, "model"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_input_is_refused_naming_the_field(
    client: TestClient, change: dict, field: str
) -> None:
    response = client.post("/api/plan", json={**REFERENCE, **change})
    assert response.status_code == 422, response.text
    assert set(response.json()["errors"]) == {field}


def test_a_measured_speed_stands_for_one_request_per_replica(client: TestClient) -> None:
    """An accepted record's single-request decode takes precedence over the estimate, marked
    measured, exactly where `/api/estimate` uses it; beyond one request it is estimated."""
    from tests.recipes.test_consistency import H200, submit_and_accept

    before = plan(client, users=1, min_decode_tokens_per_s=10, hardware=[H200])["options"][0]
    assert before["decode_tokens_per_s"]["basis"] != "measured"
    submit_and_accept(client)  # measured at one request, balanced, on 8x H200
    one = plan(client, users=1, min_decode_tokens_per_s=10, hardware=[H200])["options"][0]
    estimate = client.post(
        "/api/estimate",
        json={
            "model": GLM,
            "hardware": H200,
            "concurrency": 1,
            "prompt_tokens": 2048,
            "output_tokens": 2048,
        },
    ).json()
    assert one["decode_tokens_per_s"]["basis"] == "measured"
    assert one["decode_tokens_per_s"]["low"] == estimate["decode_tokens_per_s"]["low"]
    many = plan(client, hardware=[H200])["options"][0]
    assert many["concurrency_per_replica"] > 1
    assert many["decode_tokens_per_s"]["basis"] == "estimated"


def test_a_described_model_on_a_named_card_is_planned_as_it_is_estimated(
    client: TestClient,
) -> None:
    model = {"params_b": 8, "quant": "Q4_K_M", "name": "my-8b"}
    answer = plan(
        client,
        model=model,
        users=6,
        min_decode_tokens_per_s=30,
        max_ttft_ms=None,
        hardware=[{"gpu": "RTX 4090"}],
    )
    option = answer["options"][0]
    estimate = client.post(
        "/api/estimate",
        json={
            "model": model,
            "hardware": {"gpu": "RTX 4090"},
            "concurrency": option["concurrency_per_replica"],
            "prompt_tokens": 2048,
            "output_tokens": 2048,
        },
    ).json()
    for figure in FIGURES:
        assert option[figure]["low"] == estimate[figure]["low"], figure
    assert option["command"] is None  # a described model has no verified pair


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"max_ttft_ms": 2}, "max_ttft_ms"),  # below any single request's first token
        # above what one request reaches alone anywhere: no replica count helps
        ({"min_decode_tokens_per_s": 50_000}, "min_decode_tokens_per_s"),
    ],
)
def test_a_target_no_hardware_reaches_is_a_conflict_naming_the_field(
    client: TestClient, change: dict, field: str
) -> None:
    """The schema accepts the figure; the catalog's hardware cannot reach it: 409."""
    response = client.post("/api/plan", json={**REFERENCE, **change})
    assert response.status_code == 409, response.text
    assert set(response.json()["errors"]) == {field}


def test_every_contradiction_in_the_load_is_named_with_the_figure_it_can_reach(
    client: TestClient,
) -> None:
    response = client.post(
        "/api/plan", json={**REFERENCE, "min_decode_tokens_per_s": 50_000, "max_ttft_ms": 2}
    )
    assert response.status_code == 409, response.text
    errors = response.json()["errors"]
    assert set(errors) == {"min_decode_tokens_per_s", "max_ttft_ms"}
    assert "50,000 tok/s per request" in errors["min_decode_tokens_per_s"]
    assert "at most" in errors["min_decode_tokens_per_s"]
    # The reachable figure is the best single request's: asking just below it is planned.
    most = float(errors["min_decode_tokens_per_s"].split("at most ")[1].split(" tok/s")[0])
    answer = plan(client, min_decode_tokens_per_s=most, max_ttft_ms=None, users=1)
    assert any(option["meets"] for option in answer["options"])
    page = client.get(
        "/plan",
        params={"model": GLM, "users": 32, "min_decode_tokens_per_s": 50_000, "lang": "ko"},
    )
    assert "요청당 50,000 tok/s" in page.text  # the page words it in the reader's language


def test_the_rule_for_meets_is_stated_and_experimental_routes_are_not_named(
    client: TestClient,
) -> None:
    answer = plan(client, price_per_gpu_hour=2.5)
    rule = answer["meets_rule"]
    assert rule["code"] == "plan.meets_rule" and "middle" in rule["text"]
    experimental = [o for o in answer["options"] if o["experimental"]]
    assert experimental, "the reference load weighs the unverified Mac routes"
    assert all(not o["verified_pair"] for o in experimental)
    for key in ("cheapest", "smallest"):
        assert not answer["options"][answer[key]]["experimental"]
    included = plan(client, price_per_gpu_hour=2.5, include_experimental=True)
    meeting = [o for o in included["options"] if o["meets"]]
    cheapest = min(o["cost_per_hour"] for o in meeting)
    assert included["options"][included["cheapest"]]["cost_per_hour"] == cheapest


def test_a_blank_request_shape_is_the_stated_default(client: TestClient) -> None:
    asked = {k: v for k, v in REFERENCE.items() if k not in ("prompt_tokens", "output_tokens")}
    response = client.post("/api/plan", json=asked)
    assert response.status_code == 200, response.text
    shape = response.json()["request_shape"]
    assert (shape["prompt_tokens"], shape["output_tokens"]) == (1024, 256)
    assert shape["defaulted"] == ["output_tokens", "prompt_tokens"]
    option = response.json()["options"][0]
    estimate = client.post(
        "/api/estimate",
        json={
            "model": GLM,
            "hardware": option["hardware"],
            "concurrency": option["concurrency_per_replica"],
            "prompt_tokens": 1024,
            "output_tokens": 256,
        },
    ).json()
    assert option["decode_tokens_per_s"]["low"] == estimate["decode_tokens_per_s"]["low"]
    assert estimate["request_shape"]["prompt_tokens"] == 1024


def test_a_replica_holds_as_many_requests_as_its_paged_pool_holds(client: TestClient) -> None:
    """gpt-oss-120b on one H100 with vLLM: the weights leave a few GB of KV pool; a request
    of 1,024 + 512 tokens holds 1,536 tokens of it, not the 16,384-token context, so one
    card carries tens of requests where full-context slots would carry a handful."""
    response = client.post(
        "/api/plan",
        json={
            "model": "gpt-oss-120b",
            "users": 500,
            "min_decode_tokens_per_s": 30,
            "prompt_tokens": 1024,
            "output_tokens": 512,
            "hardware": [{"gpu": "H100", "count": 1}],
        },
    )
    assert response.status_code == 200, response.text
    option = response.json()["options"][0]
    assert option["runtime"] == "vllm"
    assert option["concurrency_per_replica"] >= 32
    assert option["replicas"] * option["concurrency_per_replica"] >= 500
    assert f"--max-num-seqs {option['concurrency_per_replica']}" in option["command"]


def test_a_plan_on_one_runtime_weighs_only_that_runtime(client: TestClient) -> None:
    answer = plan(
        client,
        model="qwen3-30b-a3b",
        users=10,
        min_decode_tokens_per_s=20,
        max_ttft_ms=None,
        runtime="vllm",
    )
    assert answer["options"]
    assert {option["runtime"] for option in answer["options"]} == {"vllm"}
    refused = client.post("/api/plan", json={**REFERENCE, "runtime": "no-such-runtime"})
    assert refused.status_code == 422
    assert set(refused.json()["errors"]) == {"runtime"}


def test_the_plan_page_states_the_request_shape_it_planned_for(client: TestClient) -> None:
    asked = {"model": GLM, "users": 32, "min_decode_tokens_per_s": 20}
    page = client.get("/plan", params=asked).text
    assert "Each request: 1,024 prompt tokens and 256 output tokens." in page
    assert "A length left blank takes this default." in page
    stated = client.get("/plan", params={**asked, "prompt_tokens": 2048, "output_tokens": 512})
    assert "Each request: 2,048 prompt tokens and 512 output tokens." in stated.text
    assert "A length left blank takes this default." not in stated.text


def test_every_refusal_carries_its_code_beside_the_english(client: TestClient) -> None:
    response = client.post(
        "/api/plan",
        json={**REFERENCE, "hardware": [{"gpu": "RTX 4095"}], "price_per_gpu_hour": -1},
    )
    assert response.status_code == 422
    body = response.json()
    assert (
        set(body["errors"])
        == set(body["error_messages"])
        == {
            "hardware.0.gpu",
            "price_per_gpu_hour",
        }
    )
    card = body["error_messages"]["hardware.0.gpu"]
    assert card["code"] == "estimate.close_matches"
    assert card["params"]["problem"]["params"]["name"] == "RTX 4095"
    assert card["text"] == body["errors"]["hardware.0.gpu"]
    beyond = client.post("/api/plan", json={**REFERENCE, "min_decode_tokens_per_s": 50_000})
    said = beyond.json()["error_messages"]["min_decode_tokens_per_s"]
    assert said["code"] == "plan.decode_above_one_request"
    assert said["params"]["asked"] == 50_000


def test_the_plan_page_asks_for_a_runtime_as_the_api_does(client: TestClient) -> None:
    asked = {"model": GLM, "users": 32, "min_decode_tokens_per_s": 20}
    every = client.get("/plan", params=asked).text
    assert '<select name="runtime" id="plan-runtime">' in every
    weighed = set(re.findall(r'class="plan-runtime" data-runtime="([^"]+)"', every))
    assert len(weighed) > 1  # blank: every runtime the routes weigh
    pinned = client.get("/plan", params={**asked, "runtime": "vllm"}).text
    assert set(re.findall(r'class="plan-runtime" data-runtime="([^"]+)"', pinned)) == {"vllm"}
    assert '<option value="vllm" selected>' in pinned
    api = client.post("/api/plan", json={**asked, "runtime": "vllm"}).json()
    page_rows = re.findall(r'class="plan-runtime" data-runtime="([^"]+)"', pinned)
    assert len(page_rows) == len(api["options"])
    refused = client.get("/plan", params={**asked, "runtime": "no-such-runtime"})
    assert refused.status_code == 422
    assert 'data-field="runtime"' in refused.text
