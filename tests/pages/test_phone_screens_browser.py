"""At a phone's width (390 px), in each language: the fit table, a profile page, and both
forms sent with errors, screenshotted (test-output/pages/phone/, gitignored) so a person can
look at them; a form's errors must be in the window after the submit, not below or beside it.
"""

import contextlib
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.config import PROJECT_ROOT
from tests.live_server import LiveServer

pytestmark = pytest.mark.browser
SHOTS = PROJECT_ROOT / "test-output" / "pages" / "phone"
WIDTH, HEIGHT = 390, 844
LANGUAGES = ("en", "ko", "ja")
GLM = "glm-5.3-flash"

# The element's box against the window: in view when its top is on screen and it starts
# within the window's width (not in a part of a table scrolled off to the side).
IN_VIEW = """(el) => {
  const box = el.getBoundingClientRect();
  return {top: box.top, left: box.left, bottom: box.bottom,
          inView: box.top >= -1 && box.top < window.innerHeight && box.left >= 0
                  && box.left < window.innerWidth && box.height > 0};
}"""


def shoot(page, name: str, language: str) -> None:  # noqa: ANN001
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(SHOTS, f"{name}-{language}-{WIDTH}.png")))
    page.screenshot(path=str(Path(SHOTS, f"{name}-{language}-{WIDTH}-full.png")), full_page=True)


def open_page(page, url: str, language: str) -> None:  # noqa: ANN001
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(f"{url}?lang={language}")
    page.wait_for_load_state("load")
    assert page.evaluate("() => document.documentElement.lang") == language


def assert_in_view(page, selector: str, name: str) -> None:  # noqa: ANN001
    """The page scrolls to the errors once htmx has settled the swapped form, a moment
    after the errors exist: wait for that (up to 5 s), then judge the box where it is."""
    element = page.locator(selector).first
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(
            f"(el) => ({IN_VIEW})(el).inView", arg=element.element_handle(), timeout=5000
        )
    box = element.evaluate(IN_VIEW)
    assert box["inView"], f"{name}: {selector} is not in the window: {box}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_fit_table_and_profile_page_on_a_phone(
    page,
    live_server: LiveServer,
    language: str,  # noqa: ANN001
) -> None:
    open_page(page, live_server.url("catalog:model", slug=GLM), language)
    assert page.locator("#fit-legend").is_visible()
    shoot(page, "fit-table", language)
    url = live_server.url("recipes:detail", model=GLM, hardware="8x-h200-141gb", profile="balanced")
    open_page(page, url, language)
    assert page.locator(".command-block").count() >= 1
    shoot(page, "profile", language)
    assert page.js_errors == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_estimate_form_errors_are_in_view_on_a_phone(
    page,
    live_server: LiveServer,
    language: str,  # noqa: ANN001
) -> None:
    open_page(page, live_server.url("recipes:estimate"), language)
    page.locator("#estimate-submit").scroll_into_view_if_needed()
    page.click("#estimate-submit")  # nothing filled in: no model, no card
    page.wait_for_selector("#estimate-errors")
    fields = page.locator("#estimate-errors [data-field]")
    assert fields.count() == 2
    text = page.locator("#estimate-errors").inner_text()
    assert "hardware.gpu" not in text and "String should" not in text
    assert_in_view(page, "#estimate-errors", f"estimate form, {language}")
    shoot(page, "estimate-errors", language)
    assert page.js_errors == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_record_form_errors_are_in_view_on_a_phone(
    page,
    live_server: LiveServer,
    language: str,  # noqa: ANN001
) -> None:
    open_page(page, live_server.url("records:new"), language)
    page.select_option("select[name=model]", GLM)
    page.fill("input[name='measurements.0.context_length']", "4096")
    page.fill("input[name='measurements.0.decode_tokens_per_s']", "-3")  # a row's error
    page.locator("#submit-record").scroll_into_view_if_needed()
    page.click("#submit-record")  # through htmx: the form is swapped where it stands
    page.wait_for_selector("#form-errors #error-summary")
    row_error = page.locator('#error-summary [data-field="measurements.0.decode_tokens_per_s"]')
    assert row_error.count() == 1
    assert_in_view(page, "#form-errors", f"record form, {language}")
    assert_in_view(page, '#error-summary [data-field="measurements.0.decode_tokens_per_s"]', "row")
    shoot(page, "record-errors", language)
    assert page.js_errors == []
