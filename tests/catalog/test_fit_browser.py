"""In a real browser: the GLM-5.3-Flash fit table, a filter, a detail page and the selector."""

import re

import pytest

from tests.live_server import LiveServer

pytestmark = pytest.mark.browser
GLM = "glm-5.3-flash"


def test_filter_updates_the_table_and_the_url(page, live_server: LiveServer) -> None:
    page.goto(live_server.url("catalog:model", slug=GLM))
    rows = page.locator("#fit-table tbody tr")
    total = rows.count()
    assert total >= 16
    studio = page.locator('tr[data-hardware="mac-studio-m5-ultra-256gb"]')
    assert "experimental" in studio.inner_text() and "81.3 ~ 90.3" in studio.inner_text()
    marker = page.evaluate("() => { window.notReloaded = true; return true; }")
    assert marker
    page.select_option('select[name="platform"]', "metal")
    page.wait_for_url(re.compile(r"platform=metal"))
    page.wait_for_function(
        f"() => document.querySelectorAll('#fit-table tbody tr').length < {total}"
    )
    platforms = page.eval_on_selector_all(
        "#fit-table tbody tr", "rows => rows.map(r => r.dataset.platform)"
    )
    assert platforms and set(platforms) == {"metal"}
    assert page.evaluate("() => window.notReloaded") is True  # swapped by htmx, no reload
    page.select_option('select[name="verdict"]', "experimental")
    page.wait_for_url(re.compile(r"verdict=experimental"))
    page.wait_for_function("() => document.querySelectorAll('#fit-table tbody tr').length === 2")
    page.reload()  # the URL keeps the filter, so the shared link shows the same table
    assert page.locator("#fit-table tbody tr").count() == 2
    assert page.js_errors == []


def test_detail_page_from_the_table_copy_and_selector(page, live_server: LiveServer) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(live_server.url("catalog:model", slug=GLM))
    row = page.locator('tr[data-hardware="8x-h200-141gb"]')
    row.get_by_role("link", name="Balanced").click()
    page.wait_for_url(re.compile(r"/hardware/8x-h200-141gb/profiles/balanced$"))
    block = page.locator('.command-block[data-runtime="sglang"]')
    command = block.locator("code").inner_text()
    assert command.startswith("python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash")
    block.get_by_role("button", name="Copy").click()
    page.wait_for_function(
        "() => document.querySelector('.command-block button').textContent === 'Copied'"
    )
    assert page.evaluate("() => navigator.clipboard.readText()") == command

    page.goto(live_server.url("catalog:model", slug=GLM))
    form = page.locator("#selector-form")
    form.locator('select[name="hardware"]').select_option("custom")
    form.locator('select[name="platform"]').select_option("metal")
    form.locator('select[name="artifact"]').select_option("glm-5.3-flash-mlx-4bit")
    form.locator('select[name="runtime"]').select_option("mlx-lm")
    form.locator('input[name="memory_gb_per_gpu"]').fill("128")
    form.locator('input[name="usable_memory_gb"]').fill("110")
    page.wait_for_selector("#selector-verdict")
    assert page.locator("#selector-verdict").inner_text() == "exceeds memory (unsupported)"
    assert page.locator("#selector-speed").count() == 0  # no speed for what does not fit
    form.locator('input[name="memory_gb_per_gpu"]').fill("256")
    form.locator('input[name="usable_memory_gb"]').fill("236")
    page.wait_for_function(
        "() => document.querySelector('#selector-verdict')?.textContent.trim() === 'experimental'"
    )
    form.locator('input[name="memory_gb_per_gpu"]').fill("-1")
    page.wait_for_selector('[data-field="memory_gb_per_gpu"]')
    assert page.js_errors == []
