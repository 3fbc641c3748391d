"""The accuracy page in every language: the classes with their figures, a record's class
moved by accepting it, and the detail page's link landing on its class."""

import re

import pytest
from sqlalchemy.orm import Session

from app.estimate.ranges.accuracy_table import CHECK_RATIOS, HELD_OUT_HISTORY
from app.estimate.version import ESTIMATOR_VERSION
from app.i18n.catalogs import gettext, reset_locale, set_locale
from app.records.review.steps import review_record
from app.records.storage.service import submit_record
from tests.live_server import LiveServer
from tests.records.conftest import GLM, h200, valid  # noqa: F401 (fixtures)

CLASS_ROW = "#class-sglang-cuda-multi-c1"
SHIPPED_CHECKS = len(CHECK_RATIOS["sglang/cuda/multi/c1"])
[(HELD_OUT, PUBLISHERS)] = [
    (row[2], row[6])
    for row in HELD_OUT_HISTORY
    if row[:2] == (ESTIMATOR_VERSION, "sglang/cuda/multi/c1")
]


def words(language: str, english: str) -> str:
    token = set_locale(language)
    try:
        return gettext(english)
    finally:
        reset_locale(token)


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "ko", "ja"])
def test_the_page_shows_each_class_in_the_readers_language(
    page,
    live_server: LiveServer,
    session: Session,
    valid: dict,  # noqa: F811
    language: str,
) -> None:
    found = submit_record(session, valid, provenance="api", submitted_by="ana")
    review_record(session, found.record.id, {"action": "accept", "reason": "ok"}, "maintainer")
    session.commit()
    page.goto(f"/accuracy?lang={language}")
    title = words(language, "Accuracy of the speed estimate")
    assert page.locator("h1").inner_text() == title
    assert page.locator("#accuracy-classes tbody tr").count() >= 10
    row = page.locator(CLASS_ROW)
    cells = row.locator("td.num")
    # Each group's count, median error, share within 30% and share held: with each
    # publisher left out (its count over how many publishers), the shipped checks, then the
    # accepted record's two timed points.
    count, publishers = cells.nth(0).inner_text().split("\n")
    assert count == str(HELD_OUT) and re.search(rf"(?<!\d){PUBLISHERS}(?!\d)", publishers)
    assert cells.nth(4).inner_text() == str(SHIPPED_CHECKS)
    assert cells.nth(8).inner_text() == "2"
    # A class that no accepted record reached says so in the reader's language.
    untouched = page.locator("#class-llama-cpp-metal-single-c1 td.num")
    assert untouched.last.inner_text() == words(language, "none yet")
    assert (
        words(language, "Apple M-series")
        in page.locator("#class-llama-cpp-metal-single-c1").inner_text()
    )
    if language != "en":
        body = page.locator("main").inner_text()
        english = ("Accepted records", "Shipped checks", "left out", "median error", "none yet")
        assert not [words for words in english if words in body]
    assert page.js_errors == []


@pytest.mark.browser
def test_the_detail_page_links_to_its_class(
    page,
    live_server: LiveServer,
    h200: str,  # noqa: F811
) -> None:
    page.goto(f"/models/{GLM}/hardware/{h200}/profiles/balanced")
    link = page.locator("#load-accuracy")
    link.click()
    page.wait_for_url(re.compile(r".*/accuracy\?class=[^#]+#class-.+"))
    anchor = page.url.split("#", 1)[1]
    assert page.locator(f"#{anchor}").count() == 1
    assert page.js_errors == []
