"""In a real browser: the table, a verified and an unsupported detail page, and the selector
after a catalog card is chosen all show the same resolved figures."""

import re

import pytest
from playwright.sync_api import expect

from tests.live_server import LiveServer

pytestmark = pytest.mark.browser
GLM = "glm-5.3-flash"
H200 = "8x-h200-141gb"


def memory_of(locator) -> tuple[str, str, str]:  # noqa: ANN001
    memory = locator.locator(".memory").first
    return (
        memory.get_attribute("data-required"),
        memory.get_attribute("data-usable"),
        memory.get_attribute("data-headroom"),
    )


def test_table_and_verified_detail_page_agree(page, live_server: LiveServer) -> None:
    page.goto(live_server.url("catalog:model", slug=GLM))
    expect(page.locator("#fit-table > p.sub")).to_contain_text("Balanced")
    row = page.locator(f'tr[data-hardware="{H200}"]')
    expect(row).to_have_attribute("data-profile", "balanced")
    table_memory = memory_of(row)
    table_speed = row.locator(".speed").inner_text()
    row.get_by_role("link", name="Balanced").click()
    page.wait_for_url(re.compile(rf"/hardware/{H200}/profiles/balanced$"))
    verdict = page.locator("#verdict")
    assert memory_of(verdict) == table_memory
    assert verdict.locator(".speed").inner_text() == table_speed
    expect(page.locator("#route")).to_contain_text("verified pair")
    expect(page.locator('.command-block[data-runtime="sglang"] code')).to_have_text(
        "python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash --tp 8 "
        "--host 127.0.0.1 --port 8000 --context-length 16384 --max-running-requests 16"
    )
    concurrency = page.locator('dd[data-knob="max_concurrency"]')
    expect(concurrency).to_contain_text("set by --max-running-requests 16")
    expect(page.locator("#measure")).to_be_visible()
    assert page.js_errors == []


def test_unsupported_detail_page_shows_estimated_memory_only(page, live_server: LiveServer) -> None:
    page.goto(
        live_server.url("recipes:detail", model=GLM, hardware="rtx-4090-24gb", profile="balanced")
    )
    expect(page.locator("#verdict .verdict")).to_have_text("exceeds memory (unsupported)")
    expect(page.locator("#verdict .memory")).to_contain_text("GB short")
    expect(page.locator(".speed")).to_have_count(0)
    expect(page.locator("#launch .command-block")).to_have_count(0)
    expect(page.locator("#measure")).to_have_count(0)
    expect(page.locator("#applied-values")).to_have_count(0)
    expect(page.locator("#estimate-only")).to_contain_text("only the estimated memory")
    assert page.js_errors == []


def test_selector_after_choosing_a_catalog_card(page, live_server: LiveServer) -> None:
    page.goto(live_server.url("catalog:model", slug=GLM))
    table_memory = memory_of(page.locator(f'tr[data-hardware="{H200}"]'))
    page.locator("#selector-hardware").select_option(H200)
    expect(page.locator("#selector-memory")).to_have_value("141.0")
    expect(page.locator("#selector-bandwidth")).to_have_value("4800.0")
    expect(page.locator("#selector-count")).to_have_value("8")
    expect(page.locator("#selector-memory")).to_have_attribute("readonly", "")
    expect(page.locator("#selector-runtime")).to_have_value("sglang")
    expect(page.locator("#selector-artifact")).to_have_value("glm-5.3-flash-fp8")
    expect(page.locator("#selector-verdict")).to_have_text("fits")
    assert memory_of(page.locator("#selector-result")) == table_memory
    expect(page.locator('#selector-result .command-block[data-runtime="sglang"]')).to_be_visible()
    page.locator("#selector-profile").select_option("long-context")
    expect(page.locator("#selector-result h2")).to_contain_text("Long context")
    expect(
        page.locator('#selector-result .command-block[data-runtime="sglang"] code')
    ).to_contain_text("--kv-cache-dtype fp8_e4m3")
    page.locator("#selector-hardware").select_option("custom")
    expect(page.locator("#selector-memory")).not_to_have_attribute("readonly", "")
    expect(page.locator("#selector-memory")).to_have_value("141.0")  # kept, now editable
    assert page.js_errors == []
