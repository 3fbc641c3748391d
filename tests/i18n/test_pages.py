"""Pages in Korean and Japanese: chosen by ?lang= (kept in a cookie) or Accept-Language,
declared in <html lang>, cached per language; JSON stays in codes whatever the language."""

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

MODEL_PAGE = "/models/qwen3-30b-a3b"


def soup(response) -> BeautifulSoup:
    assert response.status_code == 200, response.text[:500]
    return BeautifulSoup(response.text, "html.parser")


def nav_labels(page: BeautifulSoup) -> list[str]:
    return [a.get_text(strip=True) for a in page.select("header.site-header nav a")][:4]


@pytest.mark.parametrize(
    ("lang", "labels"),
    [
        ("en", ["Models", "Records", "Benchmarks", "Estimate a model"]),
        ("ko", ["모델", "기록", "벤치마크", "모델 추정하기"]),
        ("ja", ["モデル", "記録", "ベンチマーク", "モデルを見積もる"]),
    ],
)
def test_lang_query_chooses_the_language_and_remembers_it(
    client: TestClient, lang: str, labels: list[str]
) -> None:
    response = client.get("/", params={"lang": lang})
    page = soup(response)
    assert page.html["lang"] == lang
    assert nav_labels(page) == labels
    assert f"lang={lang}" in response.headers["set-cookie"]
    # The next page, with no ?lang=, keeps the choice from the cookie.
    again = soup(client.get("/records"))
    assert again.html["lang"] == lang


def test_accept_language_by_quality_when_nothing_was_chosen(client: TestClient) -> None:
    page = soup(client.get("/", headers={"Accept-Language": "en;q=0.4, ko;q=0.6, ja;q=0.5"}))
    assert page.html["lang"] == "ko"
    page = soup(client.get("/", headers={"Accept-Language": "fr, de;q=0.9"}))
    assert page.html["lang"] == "en"


def test_an_unknown_lang_is_ignored_and_sets_no_cookie(client: TestClient) -> None:
    response = client.get("/", params={"lang": "xx"}, headers={"Accept-Language": "ja"})
    assert soup(response).html["lang"] == "ja"
    assert "set-cookie" not in response.headers or "lang=" not in response.headers["set-cookie"]


def test_the_switcher_links_to_this_page_in_each_language(client: TestClient) -> None:
    page = soup(client.get(MODEL_PAGE, params={"lang": "ja", "page": 1}))
    links = {a["data-lang"]: a for a in page.select("nav.languages a")}
    assert set(links) == {"en", "ko", "ja"}
    assert links["ko"]["href"].startswith(f"http://testserver{MODEL_PAGE}?")
    assert "lang=ko" in links["ko"]["href"] and "page=1" in links["ko"]["href"]
    assert links["ja"].get("aria-current") == "true" and not links["en"].get("aria-current")


def test_cached_pages_are_kept_per_language(client: TestClient) -> None:
    english = client.get(MODEL_PAGE, headers={"Accept-Language": "en"})
    korean = client.get(MODEL_PAGE, headers={"Accept-Language": "ko"})
    assert soup(english).html["lang"] == "en" and soup(korean).html["lang"] == "ko"
    assert english.headers["etag"] != korean.headers["etag"]
    assert "Accept-Language" in korean.headers["vary"] and "Cookie" in korean.headers["vary"]
    # The Korean tag does not revalidate the English page.
    crossed = client.get(
        MODEL_PAGE, headers={"Accept-Language": "en", "If-None-Match": korean.headers["etag"]}
    )
    assert crossed.status_code == 200 and soup(crossed).html["lang"] == "en"
    same = client.get(
        MODEL_PAGE, headers={"Accept-Language": "ko", "If-None-Match": korean.headers["etag"]}
    )
    assert same.status_code == 304


def test_json_answers_the_same_codes_in_every_language(client: TestClient) -> None:
    url = "/api/models/qwen3-30b-a3b/fit"
    english = client.get(url, headers={"Accept-Language": "en"}).json()
    for lang in ("ko", "ja"):
        other = client.get(url, params={"lang": lang}, headers={"Accept-Language": lang})
        assert other.json() == english
        assert "set-cookie" not in other.headers or "lang=" not in other.headers["set-cookie"]


GLM = "glm-5.3-flash"
PAGES = [
    "/",
    f"/models/{GLM}",
    f"/models/{GLM}/hardware/8x-h200-141gb/profiles/balanced",
    f"/models/{GLM}/hardware/rtx-4090-24gb/profiles/balanced",
    "/records",
    "/records/new",
    "/benchmarks",
    "/estimate?model=llama-3.1-8b-instruct&hardware=rtx-4090-24gb",
]
# Words of the interface as English pages show them: none may be left on a translated page.
UI_LABELS = {
    "Models",
    "Records",
    "Benchmarks",
    "Estimate a model",
    "Verdict:",
    "Launch command",
    "Copy",
    "Applied values",
    "Reproduction records",
    "Hardware",
    "Profile",
    "Runtime",
    "Fit",
    "Starting context",
    "Token generation",
    "Recommended runtime",
    "verified pair",
    "unverified pair",
    "Memory per GPU",
    "Weights",
    "KV cache",
    "Headroom",
    "Submit a record",
    "Model file",
    "Outcome",
    "Notes",
    "Measurements",
    "Run a benchmark",
    "Recent jobs",
    "Stop conditions",
    "Measurement order",
    "Shared setup",
    "fits",
    "exceeds memory",
    "experimental",
    "verification pending",
    "measured",
    "estimated",
    "tokens",
    "how",
    "Estimate",
    "Filter",
    "any",
    "none",
    "Context",
    "Check these fields:",
    "Submit record",
    "Add a row",
    "Tensor-parallel size",
    "on",
    "off",
    "Device selector",
}


def visible_texts(page: BeautifulSoup) -> set[str]:
    for hidden in page.select("script, style, code, pre"):
        hidden.decompose()
    texts = {" ".join(t.split()) for t in page.stripped_strings}
    for attribute in ("title", "placeholder", "aria-label"):
        texts |= {" ".join(el[attribute].split()) for el in page.select(f"[{attribute}]")}
    return texts


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_translated_pages_leave_no_interface_english(client: TestClient, lang: str) -> None:
    client.get("/", params={"lang": lang})
    leftover = {}
    for url in PAGES:
        page = soup(client.get(url))
        assert page.html["lang"] == lang, url
        english = visible_texts(page) & UI_LABELS
        if english:
            leftover[url] = sorted(english)
    assert leftover == {}


def test_the_checker_sees_english_on_english_pages(client: TestClient) -> None:
    page = soup(
        client.get(
            f"/models/{GLM}/hardware/8x-h200-141gb/profiles/balanced",
            headers={"Accept-Language": "en"},
        )
    )
    assert {"Launch command", "Copy", "Applied values"} <= visible_texts(page)


@pytest.mark.parametrize(
    ("lang", "terms"),
    [
        ("ja", ["適合度", "開始文脈", "トークン生成", "メモリ超過（非対応）"]),
        ("ko", ["적합도", "시작 컨텍스트", "토큰 생성", "메모리 초과(미지원)"]),
    ],
)
def test_the_recipe_terms_are_used(client: TestClient, lang: str, terms: list[str]) -> None:
    text = client.get(f"/models/{GLM}", params={"lang": lang}).text
    assert [term for term in terms if term not in text] == []


def test_api_requests_are_answered_in_english_whatever_the_reader_asks(
    client: TestClient,
) -> None:
    from app.i18n.labels import VERDICTS

    # A lazy label is read in the locale of the request that shows it: none under /api/.
    seen = {}

    @client.app.get("/api/_i18n_probe")
    def probe() -> dict:
        return {"label": str(VERDICTS["exceeds_memory"])}

    @client.app.get("/_i18n_probe")
    def page_probe() -> dict:
        seen["page"] = str(VERDICTS["exceeds_memory"])
        return {}

    body = client.get("/api/_i18n_probe", headers={"Accept-Language": "ja"}).json()
    assert body == {"label": "exceeds memory (unsupported)"}
    client.get("/_i18n_probe", headers={"Accept-Language": "ja"})
    assert seen == {"page": "メモリ超過（非対応）"}
