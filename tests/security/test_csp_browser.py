"""The pages work under their Content-Security-Policy: no violation reported while loading
and using the home page, a fit table, a detail page, the record form, a record page with
charts and the benchmark pages."""

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.jobs.test_bench_jobs import job_body
from tests.live_server import LiveServer
from tests.records.conftest import GLM, h200, valid  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

# Playwright's init scripts run outside the page's policy: this one only listens.
LISTEN = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI} ${e.lineNumber}`));
"""


def watch(page: Any) -> list[str]:
    console: list[str] = []
    page.add_init_script(LISTEN)
    page.on("console", lambda message: console.append(message.text))
    return console


def violations(page: Any, console: list[str]) -> list[str]:
    reported = page.evaluate("() => window.cspViolations")
    return reported + [text for text in console if "Content Security Policy" in text]


def test_pages_work_under_the_policy(page: Any, live_server: LiveServer, valid: dict) -> None:  # noqa: F811
    console = watch(page)
    base = live_server.base_url
    record = httpx.post(f"{base}/api/records", json=valid).json()["id"]
    job = httpx.post(f"{base}/api/benchmarks", json=job_body("http://127.0.0.1:9/v1")).json()

    page.goto("/")
    assert violations(page, console) == []

    page.goto(live_server.url("catalog:model", slug=GLM))
    page.select_option('select[name="platform"]', "metal")  # htmx swap under the policy
    page.wait_for_url(re.compile(r"platform=metal"))
    form = page.locator("#selector-form")
    form.locator('select[name="hardware"]').select_option("custom")
    form.locator('input[name="memory_gb_per_gpu"]').fill("256")
    form.locator('input[name="usable_memory_gb"]').fill("236")
    page.wait_for_selector("#selector-verdict")
    assert violations(page, console) == []

    page.goto(
        live_server.url("recipes:detail", model=GLM, hardware="8x-h200-141gb", profile="balanced")
    )
    bar = page.locator(".memory-chart .seg").first
    assert bar.evaluate("el => el.style.width").endswith("%")  # sized by the static script
    assert violations(page, console) == []

    page.goto(live_server.url("records:new"))
    page.click("#add-row")
    expect(page.locator("tr.measurement-row")).to_have_count(4)
    assert violations(page, console) == []

    page.goto(live_server.url("records:detail", record_id=record))
    expect(page.locator("body")).to_have_attribute("data-charts-ready", "true")
    assert violations(page, console) == []

    page.goto(live_server.url("benchmarks:index"))
    page.goto(live_server.url("benchmarks:detail", job_id=job["id"]))
    page.wait_for_timeout(1500)  # one htmx poll of the job's status
    assert violations(page, console) == []
    assert page.js_errors == []


def test_a_violation_would_be_seen(page: Any, live_server: LiveServer) -> None:
    """The listener reports what the policy blocks, so the test above can fail."""
    console = watch(page)
    page.goto("/")
    page.evaluate("""() => { const s = document.createElement("script");
        s.textContent = "window.ran = true"; document.body.append(s); }""")
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.ran") is None
    assert any("script-src" in v for v in violations(page, console))
