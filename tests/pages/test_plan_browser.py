"""In a real browser, in English, Korean and Japanese: the plan page asks for a load and
shows the API's own options, and the fit table's load filter says which rows carry it,
what limits the others and how many replicas would."""

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.live_server import LiveServer
from tests.pages.test_layout_browser import WIDTHS, check_fits

pytestmark = pytest.mark.browser
GLM = "glm-5.3-flash"
LOAD = {
    "model": GLM,
    "users": 32,
    "min_decode_tokens_per_s": 20,
    "max_ttft_ms": 3000,
    "prompt_tokens": 2048,
    "output_tokens": 2048,
    "price_per_gpu_hour": 2.5,
}
# The words each language shows: the replicas column, "meets", and "N replicas would".
WORDS = {
    "en": ("Replicas", "meets", "{n} replicas would"),
    "ko": ("복제본", "충족", "복제본 {n}개면 됩니다"),
    "ja": ("レプリカ", "満たす", "レプリカ {n} 台なら足ります"),
}


@pytest.mark.parametrize("language", WORDS)
def test_the_plan_page_shows_the_apis_options(
    page,  # noqa: ANN001
    live_server: LiveServer,
    client: TestClient,
    language: str,
) -> None:
    page.goto(f"{live_server.url('plan:page')}?lang={language}")
    assert page.evaluate("() => document.documentElement.lang") == language
    page.select_option("#plan-model", GLM)
    for field, value in (
        ("#plan-users", "32"),
        ("#plan-speed", "20"),
        ("#plan-ttft", "3000"),
        ("#plan-prompt", "2048"),
        ("#plan-output", "2048"),
        ("#plan-price", "2.5"),
    ):
        page.fill(field, value)
    page.click("#plan-submit")
    page.wait_for_selector("#plan-options tbody tr.plan-option")
    assert "users=32" in page.url  # the URL is the question
    replicas_header, meets, _ = WORDS[language]
    assert replicas_header in page.locator("#plan-options thead").inner_text()
    api = client.post("/api/plan", json=LOAD).json()
    rows = page.locator("#plan-options tr.plan-option")
    assert rows.count() == len(api["options"])
    for index, option in enumerate(api["options"]):
        row = rows.nth(index)
        assert row.get_attribute("data-hardware") == option["hardware"]
        assert row.get_attribute("data-replicas") == str(option["replicas"])
        decode = row.locator(".plan-decode")
        assert float(decode.get_attribute("data-low")) == option["decode_tokens_per_s"]["low"]
        if option["meets"]:
            assert row.locator(".plan-meets").inner_text() == meets
    cheapest = api["options"][api["cheapest"]]
    assert cheapest["hardware_name"] in page.locator("#plan-cheapest").inner_text()
    assert page.js_errors == []


@pytest.mark.parametrize("language", WORDS)
def test_the_plan_page_names_a_bad_field(
    page,  # noqa: ANN001
    live_server: LiveServer,
    language: str,
) -> None:
    page.goto(
        f"{live_server.url('plan:page')}?lang={language}&model={GLM}&users=32"
        "&min_decode_tokens_per_s=20&max_ttft_ms=1&prompt_tokens=2048"
    )
    error = page.locator('#plan-errors [data-field="max_ttft_ms"]')
    assert error.count() == 1
    text = error.inner_text()
    assert "2,048" in text and ("first token" in text) == (language == "en")


@pytest.mark.parametrize("language", WORDS)
def test_the_fit_table_filter_for_a_load(
    page,  # noqa: ANN001
    live_server: LiveServer,
    language: str,
) -> None:
    page.goto(f"{live_server.url('catalog:model', slug=GLM)}?lang={language}")
    assert page.locator(".load-fit").count() == 0
    page.fill("#fit-users", "32")
    page.fill("#fit-speed", "20")
    page.locator("#fit-speed").dispatch_event("change")
    page.wait_for_selector(".load-fit")
    assert "users=32" in page.url
    carried = page.locator('tr[data-hardware="8x-h200-141gb"] .load-fit')
    assert carried.get_attribute("data-carries") == "true"
    # A Mac Studio runs the model but not 32 users at 20 tok/s each: the row says decode
    # stops it and how many replicas would, as the fit JSON says.
    fit = httpx.get(
        f"{live_server.base_url}/api/models/{GLM}/fit",
        params={"users": 32, "min_decode_tokens_per_s": 20},
    ).json()
    slug = "mac-studio-m5-ultra-256gb"
    answer = next(row["load"] for row in fit["rows"] if _slug(row) == slug)
    assert answer["carries"] is False and answer["limited_by"] == "decode"
    short = page.locator(f'tr[data-hardware="{slug}"] .load-fit')
    assert short.get_attribute("data-carries") == "false"
    assert short.get_attribute("data-limit") == "decode"
    assert short.get_attribute("data-replicas") == str(answer["replicas"])
    assert WORDS[language][2].format(n=answer["replicas"]) in short.inner_text()
    none = page.locator('tr[data-hardware="rtx-4090-24gb"] .load-fit')
    assert none.get_attribute("data-limit") == "memory"
    assert none.get_attribute("data-replicas") == ""
    assert page.js_errors == []


@pytest.mark.parametrize("language", WORDS)
@pytest.mark.parametrize("width", WIDTHS)
def test_the_plan_and_the_filtered_fit_table_fit_the_window(
    page,  # noqa: ANN001
    live_server: LiveServer,
    width: int,
    language: str,
) -> None:
    asked = "&".join(f"{key}={value}" for key, value in LOAD.items())
    for name, url in (
        ("plan", f"{live_server.url('plan:page')}?{asked}&lang={language}"),
        (
            "fit-table-load",
            f"{live_server.url('catalog:model', slug=GLM)}"
            f"?users=32&min_decode_tokens_per_s=20&lang={language}",
        ),
    ):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(url)
        page.wait_for_load_state("load")
        assert page.evaluate("() => document.documentElement.lang") == language
        check_fits(page, name, width)


def _slug(row: dict) -> str:
    hardware = row["hardware"]
    return hardware if isinstance(hardware, str) else hardware["slug"]
