"""In a real browser: a record accepted from its page becomes the known-good configuration;
its command copies, it starts a record and a benchmark, and a later run is compared with it."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.live_server import LiveServer
from tests.records.conftest import GLM

pytestmark = pytest.mark.browser


def test_known_good_block_copy_and_compare(page, live_server: LiveServer, valid: dict) -> None:
    from playwright.sync_api import expect

    page.context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=live_server.base_url
    )
    created = page.request.post(live_server.url("api:records_create"), data=valid)
    assert created.ok, created.text()
    good = created.json()["id"]
    page.goto(live_server.url("records:detail", record_id=good))
    page.click("#review-accept")  # the maintainer's review form
    expect(page.locator(".lede .review")).to_have_text("accepted")
    expect(page.locator("#is-known-good")).to_be_visible()

    detail_url = live_server.url(
        "recipes:detail", model=GLM, hardware=valid["hardware"], profile="balanced"
    )
    page.goto(detail_url)
    block = page.locator("#known-good")
    expect(block.locator("#known-good-runtime")).to_contain_text("0.5.10")
    expect(block.locator("#known-good-command pre")).to_have_text(valid["command"])
    copy = block.locator("#known-good-command button.copy")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == valid["command"]

    bench = block.locator("#known-good-benchmark").get_attribute("href")
    assert parse_qs(urlsplit(bench).query)["runtime_version"] == ["0.5.10"]
    block.locator("#known-good-new-record").click()
    expect(page).to_have_url(re.compile(rf"/records/new\?from_record={good}$"))
    expect(page.locator("textarea[name=command]")).to_have_value(valid["command"])
    expect(page.locator("input[name=runtime_version]")).to_have_value("0.5.10")

    # A later run that changed three things at once.
    changed = dict(
        valid,
        runtime_version="0.5.11",
        command=valid["command"] + " --mem-fraction-static 0.85",
        environment={**valid["environment"], "driver": "590.10"},
    )
    other = page.request.post(live_server.url("api:records_create"), data=changed).json()["id"]
    page.goto(live_server.url("records:detail", record_id=other))
    page.click("#compare-known-good")
    expect(page).to_have_url(re.compile(rf"/records/compare\?a={good}&b={other}$"))
    callout = page.locator("#attribution")
    expect(callout).to_contain_text("3 settings changed: the effect cannot be attributed")
    expect(page.locator("#setting-changes tbody tr")).to_have_count(3)
    expect(
        page.locator("#setting-changes tr[data-setting='--mem-fraction-static']")
    ).to_contain_text("0.85")
    assert page.js_errors == []


def test_one_setting_changed_is_named(page, live_server: LiveServer, valid: dict) -> None:
    from playwright.sync_api import expect

    a = page.request.post(live_server.url("api:records_create"), data=valid).json()["id"]
    changed = dict(
        valid,
        command=valid["command"] + " --context-length 32768",
        applied_values={**valid["applied_values"], "context": 32768},
    )
    b = page.request.post(live_server.url("api:records_create"), data=changed).json()["id"]
    page.goto(live_server.url("records:compare") + f"?a={a}&b={b}")
    expect(page.locator("#attribution")).to_have_text(
        "1 setting changed: --context-length (context)"
    )
    expect(page.locator("#effects tbody tr")).to_have_count(6)
    expect(page.locator("#effects tr[data-verdict='noise unknown']").first).to_contain_text(
        "single figure"
    )
    assert page.js_errors == []
