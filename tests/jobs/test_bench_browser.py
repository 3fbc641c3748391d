"""In a real browser: queue a benchmark from the page, watch it finish, see the charts."""

import re
import threading

import pytest

from app.db import make_engine, make_sessionmaker
from app.jobs.worker import Worker
from tests.live_server import LiveServer

pytestmark = pytest.mark.browser


def test_run_a_benchmark_page_end_to_end(page, live_server: LiveServer, fake_server: str) -> None:
    query = "?model=llama-3.1-8b-instruct&hardware=rtx-4090-24gb&runtime=llama-cpp"
    page.goto(live_server.url("benchmarks:index") + query)
    form = page.locator("#job-form")
    form.locator('input[name="base_url"]').fill(fake_server)
    form.locator('input[name="served_model"]').fill(
        "fake?ttft_ms=20&itl_ms=3&tokens=24&per_chunk=2"
    )
    form.locator('input[name="lengths"]').fill("512, 1024")
    form.locator('input[name="concurrency"]').fill("1, 2, 4")
    form.locator('input[name="max_tokens"]').fill("16")
    form.locator('select[name="artifact"]').select_option("llama-3.1-8b-instruct-q4-k-m")
    form.locator('input[name="runtime_version"]').fill("b6100")
    form.locator('select[name="profile"]').select_option("balanced")
    form.get_by_role("button", name="Queue the benchmark").click()
    page.wait_for_url(re.compile(r"/benchmarks/\d+$"))
    assert page.locator("#job-status").get_attribute("data-status") == "queued"

    sessions = make_sessionmaker(make_engine(live_server.settings))
    runner = threading.Thread(target=Worker(sessions, poll_s=0.05).run_once)
    runner.start()
    page.wait_for_selector("#job-record", timeout=60_000)  # htmx polling picked up the end
    runner.join()
    page.locator("#job-record").click()
    page.wait_for_selector("body[data-charts-ready='true']")
    assert page.locator("#chart-context").is_visible() and page.locator("#chart-ramp").is_visible()
    assert page.locator("#provenance").inner_text().count("benchmark client") == 1
    assert page.js_errors == []
