"""In a real browser: the header's language link switches the page, <html lang> follows,
and the choice is kept in a cookie for the next page."""

import re

import pytest
from playwright.sync_api import expect

from tests.live_server import LiveServer

pytestmark = pytest.mark.browser


def test_switching_language_from_the_header(page, live_server: LiveServer) -> None:  # noqa: ANN001
    page.goto(live_server.url("catalog:model", slug="glm-5.3-flash"))
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.locator("nav.languages").get_by_role("link", name="日本語").click()
    page.wait_for_url(re.compile(r"[?&]lang=ja"))
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    expect(page.locator("table.fit thead")).to_contain_text("適合度")
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    assert cookies.get("lang") == "ja"
    # The next page, reached by a plain link, stays in Japanese.
    page.locator("header.site-header nav a", has_text="記録").click()
    page.wait_for_url(re.compile(r"/records$"))
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    expect(page.locator("h1")).to_have_text("再現記録")
    page.locator("nav.languages").get_by_role("link", name="한국어").click()
    expect(page.locator("html")).to_have_attribute("lang", "ko")
    expect(page.locator("h1")).to_have_text("재현 기록")
    assert {c["name"]: c["value"] for c in page.context.cookies()}.get("lang") == "ko"


def test_copy_button_speaks_the_page_language(page, live_server: LiveServer) -> None:  # noqa: ANN001
    """copy.js takes its words from the button (rendered through the catalogs)."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    url = live_server.url(
        "recipes:detail", model="glm-5.3-flash", hardware="8x-h200-141gb", profile="balanced"
    )
    page.goto(f"{url}?lang=ko")
    block = page.locator('.command-block[data-runtime="sglang"]')
    button = block.get_by_role("button", name="복사")
    command = block.locator("code").inner_text()
    button.click()
    expect(button).to_have_text("복사됨")
    assert page.evaluate("() => navigator.clipboard.readText()") == command
    expect(block.locator("button")).to_have_text("복사")  # back to its own label
    assert page.js_errors == []
