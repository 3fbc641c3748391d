"""The safe context ceiling on the profile page and its JSON: measured by an accepted
record's needle grid, beside the memory ceiling, with which one limits; in three languages
in a real browser."""

import asyncio
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.bench import BenchResult, run_benchmark
from app.bench.plan import BenchPlan
from app.jobs.to_record import record_from_result
from tests.bench.fake_openai_server import FakeOpenAIServer
from tests.live_server import LiveServer, outside_browser_loop
from tests.records.conftest import GLM, GLM_FP8, accept, post_record

PROFILE = "long-context"


@pytest.fixture(scope="module")
def grid_run() -> BenchResult:
    """A server that finds the needle up to 9,000 tokens, measured up to 16,384."""

    async def main() -> BenchResult:
        async with FakeOpenAIServer(tokenize=True) as server:
            plan = BenchPlan(
                base_url=server.base_url,
                model="fake?answer=needle&needle_cutoff=9000&itl_ms=0&ttft_ms=0",
                max_tokens=16,
                repeat=2,
                needle_grid=True,
                measure_speed=False,
                context_length=16384,
                request_timeout_s=10,
            )
            return await run_benchmark(plan)

    with outside_browser_loop():
        return asyncio.run(main())


def grid_record(result: BenchResult, hardware: str) -> dict[str, Any]:
    target = {
        "model": GLM,
        "artifact": GLM_FP8,
        "runtime": "sglang",
        "runtime_version": "0.5.10",
        "hardware": hardware,
        "gpu_count": 8,
        "profile": PROFILE,
        "command": "python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash --tp 8",
    }
    return record_from_result(result, target)


def detail_json(client: TestClient, hardware: str) -> dict:
    response = client.get(f"/api/models/{GLM}/hardware/{hardware}/profiles/{PROFILE}")
    assert response.status_code == 200, response.text
    return response.json()


def test_not_measured_until_an_accepted_record_ran_the_grid(
    client: TestClient, h200: str, grid_run: BenchResult
) -> None:
    assert detail_json(client, h200)["safe_context"] is None
    page = client.get(f"/models/{GLM}/hardware/{h200}/profiles/{PROFILE}")
    soup = BeautifulSoup(page.text, "html.parser")
    assert soup.select_one("#safe-ceiling")["data-limited-by"] == "not-measured"
    assert soup.select_one("#safe-ceiling-none") is not None
    pending = post_record(client, grid_record(grid_run, h200)).json()["id"]
    assert detail_json(client, h200)["safe_context"] is None  # pending records do not count
    accept(client, pending)
    assert detail_json(client, h200)["safe_context"]["record"] == pending


def test_the_measured_ceiling_stands_beside_the_memory_ceiling(
    client: TestClient, h200: str, grid_run: BenchResult
) -> None:
    record = post_record(client, grid_record(grid_run, h200)).json()["id"]
    accept(client, record)
    data = detail_json(client, h200)
    safe = data["safe_context"]
    assert safe["safe_context_tokens"] == 8192 and safe["basis"] == "measured"
    assert safe["tested_up_to"] == 16384 and safe["token_counting"] == "server_tokenizer"
    assert safe["memory_context_tokens"] == data["max_context"] > 16384
    assert safe["limited_by"] == "quality"
    page = client.get(f"/models/{GLM}/hardware/{h200}/profiles/{PROFILE}")
    soup = BeautifulSoup(page.text, "html.parser")
    block = soup.select_one("#safe-ceiling")
    assert block["data-limited-by"] == "quality" and block["data-safe"] == "8192"
    assert "8,192" in block.select_one("#safe-ceiling-line").get_text()
    assert f"#{record}" in block.select_one("#safe-ceiling-line").get_text()
    memory = f"{data['max_context']:,}"
    assert memory in block.select_one("#memory-ceiling-line").get_text()
    limit = " ".join(block.select_one("#ceiling-limit").get_text().split())
    assert limit == (
        "Quality limits first: past 8,192 tokens the needle was not found reliably, "
        f"although memory fits {memory} tokens."
    )


def test_the_fit_table_starting_context_links_to_the_ceiling(client: TestClient, h200: str) -> None:
    soup = BeautifulSoup(client.get(f"/models/{GLM}").text, "html.parser")
    row = soup.select_one(f'tr[data-hardware="{h200}"]')
    link = row.select_one("a.safe-ceiling-link")
    assert link["href"].endswith(f"/models/{GLM}/hardware/{h200}/profiles/{PROFILE}#safe-ceiling")


HEADINGS = {
    "en": "Safe context ceiling",
    "ko": "안전한 컨텍스트 상한",
    "ja": "安全なコンテキストの上限",
}
LIMIT_WORDS = {
    "en": "Quality limits first",
    "ko": "품질이 먼저 제한합니다",
    "ja": "先に制約となるのは品質です",
}


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "ko", "ja"])
def test_the_ceiling_in_three_languages(
    page, live_server: LiveServer, valid: dict, grid_run: BenchResult, language: str
) -> None:
    from playwright.sync_api import expect

    hardware = valid["hardware"]
    created = page.request.post(
        live_server.url("api:records_create"), data=grid_record(grid_run, hardware)
    )
    assert created.ok, created.text()
    record = created.json()["id"]
    reviewed = page.request.post(
        live_server.url("api:records_review", record_id=record),
        data={"action": "accept", "reason": "reproduced"},
    )
    assert reviewed.ok, reviewed.text()
    page.goto(live_server.url("catalog:model", slug=GLM) + f"?lang={language}")
    link = page.locator(f'tr[data-hardware="{hardware}"] a.safe-ceiling-link')
    link.click()
    detail = live_server.url("recipes:detail", model=GLM, hardware=hardware, profile=PROFILE)
    expect(page).to_have_url(f"{detail}#safe-ceiling")
    block = page.locator("#safe-ceiling")
    expect(block).to_be_visible()
    expect(block.locator("h3")).to_have_text(HEADINGS[language])
    expect(block.locator("#safe-ceiling-line strong")).to_have_text("8,192")
    expect(block.locator("#ceiling-limit")).to_contain_text(LIMIT_WORDS[language])
    expect(block.locator("#ceiling-limit")).to_contain_text("8,192")
