"""In a real browser at a phone's width and a laptop's: no page scrolls sideways.

Each page is loaded at 390 px and 1280 px wide, in each of the three languages (Korean and
Japanese labels are of other widths than English ones); the document must be no wider than the
window and no visible element may end past its right edge (a table that overflows inside
a scrolling box is fine: the box itself stays in view). Screenshots land in
test-output/pages/ (gitignored) so a person can look at what was checked.
"""

from pathlib import Path

import pytest

from app.config import PROJECT_ROOT
from tests.live_server import LiveServer

pytestmark = pytest.mark.browser
SHOTS = PROJECT_ROOT / "test-output" / "pages"
WIDTHS = (390, 1280)
LANGUAGES = ("en", "ko", "ja")
GLM = "glm-5.3-flash"

# Elements whose right edge lies past the window, skipping those clipped by a scrolling
# or hidden-overflow ancestor (they are inside the box, not past the page).
OVERFLOWING = """() => {
  const limit = window.innerWidth;
  const clipped = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip') return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.right > limit + 0.5 && !clipped(el)) {
      const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + el.className;
      out.push(`${name} right=${Math.round(box.right)}`);
    }
  }
  return out.slice(0, 10);
}"""


def check_fits(page, name: str, width: int) -> None:  # noqa: ANN001
    SHOTS.mkdir(parents=True, exist_ok=True)
    language = page.evaluate("() => document.documentElement.lang")
    name = f"{name}-{language}"
    page.screenshot(path=str(Path(SHOTS, f"{name}-{width}.png")), full_page=True)
    page.screenshot(path=str(Path(SHOTS, f"{name}-{width}-first-screen.png")))
    scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
    inner_width = page.evaluate("() => window.innerWidth")
    overflowing = page.evaluate(OVERFLOWING)
    assert scroll_width <= inner_width, f"{name} at {width}px is {scroll_width}px: {overflowing}"
    assert overflowing == [], f"{name} at {width}px"


def open_at(page, width: int, url: str, language: str = "en") -> None:  # noqa: ANN001
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{url}?lang={language}")
    page.wait_for_load_state("load")
    assert page.evaluate("() => document.documentElement.lang") == language


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("width", WIDTHS)
def test_fit_table_fits_the_window(
    page,
    live_server: LiveServer,
    width: int,
    language: str,  # noqa: ANN001
) -> None:
    open_at(page, width, live_server.url("catalog:model", slug=GLM), language)
    assert page.locator("#fit-table tbody tr").count() >= 16
    runtimes = page.locator('tr[data-hardware="8x-h200-141gb"] td').nth(2).inner_text()
    assert runtimes.startswith("SGLang / vLLM")  # runtimes by their names
    assert page.locator("#basis-notice").evaluate("el => el.tagName") == "DETAILS"
    check_fits(page, "fit-table", width)
    assert page.js_errors == []


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("width", WIDTHS)
def test_detail_page_fits_the_window(
    page,
    live_server: LiveServer,
    width: int,
    language: str,  # noqa: ANN001
) -> None:
    url = live_server.url("recipes:detail", model=GLM, hardware="8x-h200-141gb", profile="balanced")
    open_at(page, width, url, language)
    assert page.locator(".command-block").count() >= 1
    check_fits(page, "detail", width)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("width", WIDTHS)
def test_record_form_fits_the_window(
    page,
    live_server: LiveServer,
    width: int,
    language: str,  # noqa: ANN001
) -> None:
    open_at(page, width, live_server.url("records:new"), language)
    assert page.locator("#record-form").count() == 1
    check_fits(page, "record-form", width)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("width", WIDTHS)
def test_home_and_benchmark_pages_fit_the_window(
    page,
    live_server: LiveServer,
    width: int,
    language: str,  # noqa: ANN001
) -> None:
    for name, route in (("home", "catalog:index"), ("benchmarks", "benchmarks:index")):
        open_at(page, width, live_server.url(route), language)
        if name == "home":  # each row's count arrives on its own (see test_home_browser)
            page.wait_for_selector(".runs-on-count", timeout=90_000)
        check_fits(page, name, width)
