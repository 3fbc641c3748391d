"""In a real browser, in each language: the detail page draws the load curve with
Chart.js, and a price per GPU-hour typed on the page (kept in a cookie) gives each point
its cost per million output tokens, the same figure the JSON gives at that price."""

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect

from tests.live_server import LiveServer

pytestmark = pytest.mark.browser

GLM, H200 = "glm-5.3-flash", "8x-h200-141gb"
HEADINGS = {
    "en": "Speed per user against total throughput",
    "ko": "전체 처리량에 따른 사용자당 속도",
    "ja": "総スループットに対するユーザーあたりの速度",
}
PRICE_LABELS = {"en": "Price per GPU-hour", "ko": "GPU 시간당 가격", "ja": "GPU 1 時間あたりの価格"}


@pytest.mark.parametrize("locale", sorted(HEADINGS))
def test_the_curve_is_drawn_and_costed_at_the_price_typed(
    page, live_server: LiveServer, client: TestClient, locale: str
) -> None:  # noqa: ANN001
    url = live_server.url("recipes:detail", model=GLM, hardware=H200, profile="balanced")
    page.goto(f"{url}?lang={locale}")
    section = page.locator("#load-curve")
    expect(section).to_have_attribute("data-chart-ready", "true")
    expect(section.locator("h2")).to_have_text(HEADINGS[locale])
    expect(section.locator("label[for=gpu-price]")).to_have_text(PRICE_LABELS[locale])
    # The chart holds the band's two ends over the five concurrencies, and the records' dots.
    sizes = page.evaluate(
        "() => Chart.getChart('load-curve-chart').data.datasets.map((d) => d.data.length)"
    )
    assert sizes == [5, 5, 0]
    rows = section.locator("tr.curve-point")
    expect(rows).to_have_count(5)
    expect(rows.locator("td.cost")).to_have_text(["—"] * 5)

    section.locator("#gpu-price").fill("2.5")
    section.locator("#gpu-price-set").click()
    expected = client.get(
        f"/api/models/{GLM}/hardware/{H200}/profiles/balanced",
        params={"price_per_gpu_hour": 2.5},
    ).json()["load_curve"]["estimated"]
    row = section.locator('tr.curve-point[data-concurrency="16"]')
    expect(row).to_have_attribute("data-cost", str(expected[-1]["cost_per_million_output_tokens"]))
    shown = float(row.locator("td.cost").inner_text().replace(",", ""))
    assert shown == pytest.approx(expected[-1]["cost_per_million_output_tokens"], abs=0.006)
    assert {c["name"]: c["value"] for c in page.context.cookies()}["servebook_gpu_price"] == "2.5"

    # The price stays in the browser: the page, loaded again, costs the points with it.
    page.reload()
    expect(section).to_have_attribute("data-chart-ready", "true")
    expect(section.locator("#gpu-price")).to_have_value("2.5")
    for point, cell in zip(expected, section.locator("tr.curve-point td.cost").all(), strict=True):
        assert float(cell.inner_text().replace(",", "")) == pytest.approx(
            point["cost_per_million_output_tokens"], abs=0.006
        )
    assert page.js_errors == []
