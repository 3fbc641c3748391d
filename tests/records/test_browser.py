"""A record submitted through the form in a real browser verifies a route on the detail page."""

import re

import pytest

from tests.live_server import LiveServer
from tests.records.conftest import GLM, MAC_512

pytestmark = pytest.mark.browser


def test_submit_fix_accept_and_see_the_command(page, live_server: LiveServer) -> None:
    from playwright.sync_api import expect

    detail_url = live_server.url("recipes:detail", model=GLM, hardware=MAC_512, profile="balanced")
    page.goto(detail_url)
    expect(page.locator("#estimate-only")).to_be_visible()
    expect(page.locator("#launch .command-block")).to_have_count(0)
    page.click("#submit-record")
    expect(page).to_have_url(re.compile(r"/records/new\?"))
    expect(page.locator("select[name=hardware]")).to_have_value(MAC_512)

    page.fill("input[name=runtime_version]", "0.31.2")
    page.fill("textarea[name=notes]", "M5 Ultra, <b>first</b> try")
    page.fill("input[name='measurements.0.context_length']", "4096")
    page.fill("input[name='measurements.0.ttft_ms']", "-5")  # the one wrong field
    page.fill("input[name='measurements.0.decode_tokens_per_s']", "38.5")
    page.fill("input[name='measurements.0.peak_memory_gb_per_gpu']", "352")
    page.click("#add-row")
    expect(page.locator("tr.measurement-row")).to_have_count(4)
    page.fill("input[name='measurements.3.context_length']", "16384")
    page.fill("input[name='measurements.3.decode_tokens_per_s']", "35.0")
    page.click("#submit-record")

    error = page.locator("#error-measurements-0-ttft_ms")
    expect(error).to_be_visible()
    expect(error).to_contain_text("greater than or equal to 0")
    expect(page).to_have_url(re.compile(r"/records/new\?"))  # swapped in place, nothing saved
    expect(page.locator("input[name='measurements.0.ttft_ms']")).to_have_value("-5")
    expect(page.locator("input[name='measurements.0.decode_tokens_per_s']")).to_have_value("38.5")
    expect(page.locator("input[name='measurements.3.context_length']")).to_have_value("16384")
    expect(page.locator("textarea[name=notes]")).to_have_value("M5 Ultra, <b>first</b> try")
    expect(page.locator("input[name=runtime_version]")).to_have_value("0.31.2")

    page.fill("input[name='measurements.0.ttft_ms']", "950")
    page.click("#submit-record")
    expect(page).to_have_url(re.compile(r"/records/\d+$"))
    expect(page.locator(".lede .review")).to_have_text("pending")
    expect(page.locator("#notes")).to_have_text("M5 Ultra, <b>first</b> try")

    page.click("#review-accept")
    expect(page.locator(".lede .review")).to_have_text("accepted")
    expect(page.locator("#history")).to_contain_text("accepted")

    page.goto(detail_url)
    expect(page.locator("#estimate-only")).to_have_count(0)
    expect(page.locator("#launch .command-block")).to_have_count(1)
    expect(page.locator("#launch pre.command")).to_contain_text("--host 127.0.0.1")
    expect(page.locator("#token-generation .basis-measured")).to_be_visible()
    expect(page.locator("#measured-points tbody tr")).to_have_count(2)
    expect(page.locator("#known-good")).to_contain_text("0.31.2")

    page.goto(live_server.url("catalog:model", slug=GLM))
    speed = page.locator(f"tr[data-hardware='{MAC_512}'] td.num").last
    expect(speed.locator(".basis")).to_have_text("measured")
    expect(speed).to_contain_text("1 accepted record")
    assert page.js_errors == []


def test_a_flagged_record_shows_its_consequences_and_needs_confirming(
    page, live_server: LiveServer, valid: dict
) -> None:
    from playwright.sync_api import expect

    valid["runtime_version"] = "0.5.8"  # older than SGLang's min_version: flagged
    created = page.request.post(live_server.url("api:records_create"), data=valid)
    assert created.ok and created.json()["flags"]
    page.goto(live_server.url("records:detail", record_id=created.json()["id"]))
    status = page.locator(
        f"#acceptance-changes tr[data-hardware='{valid['hardware']}'][data-what='status']"
    )
    expect(status.locator(".after")).to_have_text("verified")

    page.fill("#review-accept >> xpath=ancestor::form >> input[name=reason]", "backport checked")
    page.click("#review-accept")  # the unticked confirmation stops the browser from sending
    assert page.locator("#confirm-flags").evaluate("box => box.validity.valueMissing")
    expect(page.locator(".lede .review")).to_have_text("pending")

    page.check("#confirm-flags")
    page.click("#review-accept")
    expect(page.locator(".lede .review")).to_have_text("accepted")
    expect(page.locator("#history")).to_contain_text("backport checked")
    assert page.js_errors == []


def test_the_review_queue_pages_older_and_back(
    page, live_server: LiveServer, session, h200: str
) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    from tests.records.bulk import insert_records, target
    from tests.records.conftest import GLM_FP8

    done = insert_records(
        session, target(session, GLM, GLM_FP8, "sglang", h200), 5, accepted_share=0.0
    )
    newest_first = [str(r["id"]) for r in reversed(done.records)]
    rows = page.locator("#records-table tr[data-record]")
    page.goto(live_server.url("records:index") + "?state=pending&limit=2")
    expect(rows).to_have_count(2)
    for start in (0, 2, 4):
        shown = newest_first[start : start + 2]
        expect(rows).to_have_count(len(shown))
        assert [rows.nth(i).get_attribute("data-record") for i in range(len(shown))] == shown
        if start < 4:
            page.click("#older-page")
    expect(page.locator("#older-page")).to_have_count(0)
    page.click("#newest-page")
    expect(rows.first).to_have_attribute("data-record", newest_first[0])
    expect(page.locator("select[name=state]")).to_have_value("pending")
