"""`POST /api/estimate` at a concurrency: per-request decode, total throughput, first token,
where the time goes and what the range held; the estimator alone on request; a strict body."""

import pytest
from fastapi.testclient import TestClient

from tests.recipes.test_consistency import GLM, H200, submit_and_accept

TERMS = {"weights", "kv_cache", "compute", "communication", "fixed", "offload"}


def estimate(client: TestClient, **body: object) -> dict:
    response = client.post("/api/estimate", json={"model": GLM, "hardware": H200, **body})
    assert response.status_code == 200, response.text
    return response.json()


def test_more_concurrent_requests_each_run_slower_and_together_faster(client: TestClient) -> None:
    one = estimate(client)
    sixteen = estimate(client, concurrency=16)
    assert one["concurrency"] == 1 and sixteen["concurrency"] == 16
    assert sixteen["decode_tokens_per_s"]["high"] < one["decode_tokens_per_s"]["high"]
    assert sixteen["throughput_tokens_per_s"]["low"] > one["throughput_tokens_per_s"]["high"]
    # Total throughput is sixteen requests' outputs over each one's turn: at most sixteen
    # at the per-request speed, and no less than with a burst's first token in every turn.
    output = sixteen["request_shape"]["output_tokens"]
    for end in ("low", "high"):
        per_request = sixteen["decode_tokens_per_s"][end]
        total = sixteen["throughput_tokens_per_s"][end]
        worst_turn_s = sixteen["ttft_burst_ms"]["high"] / 1e3 + output / per_request
        assert 16 * output / worst_turn_s <= total <= 16 * per_request + 0.1
    assert sixteen["ttft_ms"]["low"] > one["ttft_ms"]["low"]
    for answer in (one, sixteen):
        assert set(answer["breakdown"]) == TERMS
        assert sum(answer["breakdown"].values()) == pytest.approx(1, abs=0.01)
        coverage = answer["coverage"]
        assert coverage["stated"] == 0.8 and coverage["segment"].startswith("sglang/cuda/multi/")
        assert coverage["checks"] >= 0 and isinstance(coverage["widened"], bool)


def test_the_profiles_own_line_is_the_answer_at_its_concurrency(client: TestClient) -> None:
    detail = client.get(f"/api/models/{GLM}/hardware/{H200}/profiles/balanced").json()
    line = detail["at_profile_concurrency"]
    asked = estimate(client, concurrency=line["concurrency"])
    assert line["concurrency"] == detail["applied_values"]["max_concurrency"] > 1
    for figure in ("decode_tokens_per_s", "throughput_tokens_per_s", "ttft_ms"):
        low, high = line[figure]["low"], line[figure]["high"]
        assert (asked[figure]["low"], asked[figure]["high"]) == (low, high), figure
    assert asked["breakdown"] == line["breakdown"]
    single = detail["single_request"]["decode_tokens_per_s"]
    assert (single["low"], single["high"]) == (
        detail["token_generation"]["low"],
        detail["token_generation"]["high"],
    )


def test_the_speed_profile_counts_its_speculative_decoding(client: TestClient) -> None:
    balanced = estimate(client)
    speed = estimate(client, profile="speed")
    speedup = speed["speculative"]["speedup"]
    assert speed["speculative"]["method"] == "mtp"  # GLM-5.3-Flash ships an MTP layer
    assert 1 < speedup["low"] <= speedup["high"]
    assert speed["decode_tokens_per_s"]["high"] > balanced["decode_tokens_per_s"]["high"]
    assert balanced["speculative"] is None


def test_a_request_shape_sets_the_depth_and_the_first_tokens_prompt(client: TestClient) -> None:
    short = estimate(client, concurrency=8, prompt_tokens=1000, output_tokens=1000)
    long = estimate(client, concurrency=8, prompt_tokens=30000, output_tokens=1000)
    assert short["request_shape"] == {
        "prompt_tokens": 1000,
        "output_tokens": 1000,
        "depth_tokens": 1500,
        "defaulted": [],
    }
    assert long["ttft_ms"]["low"] > short["ttft_ms"]["low"]
    assert long["decode_tokens_per_s"]["high"] < short["decode_tokens_per_s"]["high"]


def test_blank_lengths_are_the_stated_default_request_everywhere(client: TestClient) -> None:
    blank = estimate(client, concurrency=16)
    shape = blank["request_shape"]
    assert shape["defaulted"] == ["output_tokens", "prompt_tokens"]
    # The default request, never the server's whole context.
    assert (shape["prompt_tokens"], shape["output_tokens"]) == (1024, 256)
    assert shape["prompt_tokens"] < blank["context"]
    # The verdict's sentence says what each of the paged pool's requests holds: the default
    # request, block-rounded, not the whole context.
    [fits] = [m for m in blank["reason_messages"] if m["code"] == "fits_with_paged_requests"]
    assert fits["params"] == {"tokens": blank["context"], "requests": 16, "held": 1024 + 256}
    assert fits["text"] in blank["reason"]
    [said] = [m for m in blank["assumed_messages"] if m["code"] == "lengths_defaulted"]
    assert said["params"] == {"prompt": 1024, "output": 256}
    assert said["text"] in blank["assumed"]
    # A blank length answers as the same length given: one figure for one request.
    given = estimate(client, concurrency=16, prompt_tokens=1024, output_tokens=256)
    assert given["request_shape"]["defaulted"] == []
    assert all(m["code"] != "lengths_defaulted" for m in given["assumed_messages"])
    for figure in ("decode_tokens_per_s", "ttft_ms", "throughput_tokens_per_s"):
        assert given[figure] == blank[figure], figure
    # Only the blank one is named and stated.
    half = estimate(client, concurrency=16, prompt_tokens=4000)
    assert half["request_shape"]["defaulted"] == ["output_tokens"]
    assert (half["request_shape"]["prompt_tokens"], half["request_shape"]["output_tokens"]) == (
        4000,
        256,
    )
    # One request is the recipe's own line, for the same default request.
    one = estimate(client)
    assert one["request_shape"]["prompt_tokens"] == 1024
    assert any(m["code"] == "lengths_defaulted" for m in one["assumed_messages"])
    # The estimate page states it in the reader's language.
    page = client.get(
        "/estimate", params={"model": GLM, "hardware": H200, "concurrency": 16, "lang": "ko"}
    )
    assert page.status_code == 200, page.text
    assert "요청 길이가 모두 주어지지 않음" in page.text
    # The page takes the lengths the sentence asks for, and answers as the API does.
    shaped = {"model": GLM, "hardware": H200, "concurrency": 16, "prompt_tokens": 1024}
    page = client.get("/estimate", params={**shaped, "output_tokens": 256})
    assert page.status_code == 200, page.text
    assert 'name="prompt_tokens" id="estimate-prompt" value="1024"' in page.text
    assert "request lengths not all given" not in page.text
    each, first = given["decode_tokens_per_s"], given["ttft_ms"]
    assert f'data-decode-low="{each["low"]}" data-decode-high="{each["high"]}"' in page.text
    assert f'data-ttft-low="{first["low"]}" data-ttft-high="{first["high"]}"' in page.text


def test_evidence_ignore_gives_the_estimators_figures_even_with_records(
    client: TestClient,
) -> None:
    submit_and_accept(client)  # measured 172 tok/s at one request, balanced, official route
    measured = estimate(client)
    ignored = estimate(client, evidence="ignore")
    assert measured["decode_tokens_per_s"]["basis"] == "measured"
    assert measured["decode_tokens_per_s"]["low"] == 172.0
    assert ignored["decode_tokens_per_s"]["basis"] == "estimated"
    assert ignored["decode_tokens_per_s"]["low"] != 172.0
    assert ignored["status"] == "verification_pending"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"concurrency": 0}, "concurrency"),
        ({"concurrency": 4097}, "concurrency"),
        ({"concurrency": "many"}, "concurrency"),
        ({"prompt_tokens": 0}, "prompt_tokens"),
        ({"evidence": "sometimes"}, "evidence"),
        ({"concurency": 8}, "concurency"),  # a misspelt field is named, not ignored
    ],
)
def test_bad_load_fields_are_refused_by_name(client: TestClient, body: dict, field: str) -> None:
    response = client.post("/api/estimate", json={"model": GLM, "hardware": H200, **body})
    assert response.status_code == 422
    assert field in response.json()["errors"]


def test_more_requests_than_memory_holds_run_in_batches_and_wait(client: TestClient) -> None:
    answer = estimate(client, concurrency=4096)
    running = answer["running"]
    assert answer["concurrency"] == 4096 and 1 < running < 4096
    at_slots = estimate(client, concurrency=running)
    # The running batch decodes as it would alone; the rest wait for their turn.
    assert answer["decode_tokens_per_s"] == at_slots["decode_tokens_per_s"]
    assert answer["throughput_tokens_per_s"] == at_slots["throughput_tokens_per_s"]
    assert answer["ttft_ms"]["low"] > 10 * at_slots["ttft_ms"]["low"]
