"""Paired verdicts between two benchmark records that asked the same prompts: the compare
page and its JSON, and the known-good gate that a significant quality drop closes."""

import asyncio
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.bench import BenchResult, run_benchmark
from app.bench.plan import BenchPlan
from app.bench.quality.stats import mcnemar_exact, pairs_needed
from app.jobs.to_record import record_from_result
from tests.bench.fake_openai_server import FakeOpenAIServer
from tests.live_server import outside_browser_loop
from tests.records.conftest import GLM, GLM_FP8, accept, post_record

CONTEXT = 65536


def measure(model: str) -> BenchResult:
    async def main() -> BenchResult:
        async with FakeOpenAIServer(tokenize=True) as server:
            plan = BenchPlan(
                base_url=server.base_url,
                model=model,
                max_tokens=16,
                repeat=2,
                needle_grid=True,
                measure_speed=False,
                context_length=CONTEXT,
                tool_calls=True,
                tool_call_repeat=2,
                request_timeout_s=10,
            )
            return await run_benchmark(plan)

    with outside_browser_loop():
        return asyncio.run(main())


@pytest.fixture(scope="module")
def runs() -> dict[str, BenchResult]:
    """One server measured three times: twice as it is, once with a drop above 32K."""
    clean = "fake?answer=needle&itl_ms=0&ttft_ms=0"
    return {
        "clean": measure(clean),
        "again": measure(clean),
        "dropped": measure(clean + "&needle_cutoff=33000"),
    }


def store(client: TestClient, result: BenchResult, h200: str, **changes: Any) -> int:
    target = {
        "model": GLM,
        "artifact": GLM_FP8,
        "runtime": "sglang",
        "runtime_version": "0.5.10",
        "hardware": h200,
        "gpu_count": 8,
        "profile": "balanced",
        "command": "python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash --tp 8",
        **changes,
    }
    response = post_record(client, record_from_result(result, target))
    assert response.status_code == 201, response.text
    return response.json()["id"]


def compare_json(client: TestClient, a: int, b: int) -> dict:
    response = client.get("/api/records/compare", params={"a": a, "b": b})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_drop_above_32k_is_a_significant_paired_verdict(
    client: TestClient, h200: str, runs: dict[str, BenchResult]
) -> None:
    before = store(client, runs["clean"], h200)
    after = store(client, runs["dropped"], h200, runtime_version="0.5.11")
    quality = {v["kind"]: v for v in compare_json(client, before, after)["quality"]}
    needle = quality["needle"]
    # 4K to 64K at 5 depths, 2 repeats: only the 64K length lies above the drop.
    assert needle["pairs"] == 50 and needle["lost"] == 10 and needle["gained"] == 0
    assert needle["p_value"] == pytest.approx(mcnemar_exact(10, 0), abs=1e-6)
    assert needle["significant"] and needle["dropped"]
    assert needle["change_band"]["high"] < 0
    assert quality["tool_calls"]["lost"] == 0 and not quality["tool_calls"]["significant"]
    page = client.get("/records/compare", params={"a": before, "b": after})
    soup = BeautifulSoup(page.text, "html.parser")
    said = soup.select_one('#paired-verdicts li[data-kind="needle"]').get_text(" ", strip=True)
    assert "quality changed: 10 of 50 needle cells lost at 64K+, p = 0.002" in said


def test_identical_runs_get_no_change_detected(
    client: TestClient, h200: str, runs: dict[str, BenchResult]
) -> None:
    one, two = store(client, runs["clean"], h200), store(client, runs["again"], h200)
    quality = {v["kind"]: v for v in compare_json(client, one, two)["quality"]}
    assert quality["needle"]["lost"] == quality["needle"]["gained"] == 0
    assert not quality["needle"]["significant"]
    more = pairs_needed(0.10) - 50
    page = client.get("/records/compare", params={"a": one, "b": two})
    said = BeautifulSoup(page.text, "html.parser").select_one("#paired-verdicts").get_text(" ")
    assert (
        f"no change detected in 50 needle cells (would need {more} more prompts to see a "
        "10-point drop)" in " ".join(said.split())
    )


def test_records_without_the_same_seeds_have_no_paired_verdict(
    client: TestClient, h200: str, valid: dict
) -> None:
    a = post_record(client, valid).json()["id"]
    b = post_record(client, {**valid, "runtime_version": "0.5.11"}).json()["id"]
    assert compare_json(client, a, b)["quality"] == []
    page = client.get("/records/compare", params={"a": a, "b": b})
    assert BeautifulSoup(page.text, "html.parser").select_one("#no-paired") is not None


def test_a_quality_drop_blocks_known_good_until_the_reviewer_confirms(
    client: TestClient, h200: str, runs: dict[str, BenchResult]
) -> None:
    good = store(client, runs["clean"], h200)
    accept(client, good)
    worse = store(client, runs["dropped"], h200, runtime_version="0.5.11")
    acceptance = client.get(f"/api/records/{worse}/acceptance").json()
    assert acceptance["needs_confirmation"]
    assert acceptance["quality_drop"]["baseline"] == good
    refused = client.post(
        f"/api/records/{worse}/review", json={"action": "accept", "reason": "looks fine"}
    )
    assert refused.status_code == 422, refused.text
    assert "quality dropped against the known-good record" in refused.text
    page = BeautifulSoup(client.get(f"/records/{worse}").text, "html.parser")
    notice = page.select_one("#quality-drop")
    assert notice is not None and notice["data-baseline"] == str(good)
    confirmed = client.post(
        f"/api/records/{worse}/review",
        json={"action": "accept", "reason": "drop checked: fp8 cache", "confirm_flags": True},
    )
    assert confirmed.status_code == 200, confirmed.text
    # An identical run raises no drop: accepted by a single click.
    same = store(client, runs["again"], h200, runtime_version="0.5.10")
    client.post(f"/api/records/{worse}/review", json={"action": "retract", "reason": "drop"})
    assert client.get(f"/api/records/{same}/acceptance").json()["quality_drop"] is None
    accept(client, same)
